"""Command line: samebits hashes | info | bench."""
from __future__ import annotations

import argparse
import json
import sys

from . import _paths, hashes
from ._info import info


def _csv(value: str) -> list[str]:
    return [v for v in value.split(",") if v]


def _cmd_hashes(args: argparse.Namespace) -> int:
    modes = _csv(args.modes)
    paths = _csv(args.paths) if args.paths else _paths.paths()
    threads = [int(t) for t in _csv(args.threads)] if args.threads else None
    groups = _csv(args.groups)
    suites = _csv(args.suites)
    unknown = [s for s in suites if s not in hashes.SUITES]
    if unknown:
        raise SystemExit(f"samebits hashes: unknown suite(s) {unknown}; known: "
                         f"{','.join(hashes.SUITES)}")
    for suite in [s for s in hashes.SUITES if s in suites]:
        print(hashes.header(groups, suite), flush=True)
        for mode in modes:
            for path in paths:
                timings: list[float] = []
                lines = hashes.hash_lines([mode], [path], threads, groups, timings, suite=suite)
                for line, seconds in zip(lines, timings):
                    print(line + (f"  # {seconds:.1f} s" if args.timing else ""), flush=True)
    return 0


def _cmd_info(args: argparse.Namespace) -> int:
    print(json.dumps(info(), indent=2))
    return 0


def _cmd_bench(args: argparse.Namespace) -> int:
    from .bench import speed_line
    print(speed_line(args.size))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="samebits", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    h = sub.add_parser("hashes", help="print the hash suite's lines, one per mode, path, threads")
    h.add_argument("--modes", default="exact,fast", help="comma-separated (default exact,fast)")
    h.add_argument("--paths", default="", help="comma-separated (default: every path this CPU runs)")
    h.add_argument("--threads", default="", help="comma-separated (default: 1 and every core)")
    h.add_argument("--suites", default="gemm,conv,ops",
                   help="comma-separated suites: gemm (matrix products), conv (convolutions), "
                        "ops (elementwise functions); default all three")
    h.add_argument("--groups", default="sweep,random,models",
                   help="groups of the gemm suite to include")
    h.add_argument("--timing", action="store_true", help="append each line's seconds as a comment")
    h.set_defaults(run=_cmd_hashes)
    i = sub.add_parser("info", help="print the build and machine description as JSON")
    i.set_defaults(run=_cmd_info)
    b = sub.add_parser("bench", help="time one square product against numpy")
    b.add_argument("--size", type=int, default=1024)
    b.set_defaults(run=_cmd_bench)
    args = parser.parse_args(argv)
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
