"""Command line: samebits run | hashes | info | bench | digest."""
from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any, NoReturn, Optional

from . import hashes
from ._binding import paths as _paths
from ._binding.info import info
from ._version import __version__


class _Parser(argparse.ArgumentParser):
    """Errors as one line (no usage block): what was wrong and with which option."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _csv(value: str) -> list[str]:
    return [v for v in value.split(",") if v]


class _Progress:
    """Where a long run is: one line rewritten in place with an estimate of
    the time left on a terminal, plain '#' lines when stderr is piped."""

    def __init__(self, total: int) -> None:
        self.total, self.done, self.start = total, 0, time.perf_counter()
        self.tty = sys.stderr.isatty()

    def begin(self, what: str) -> None:
        elapsed = time.perf_counter() - self.start
        eta = ""
        if self.done:
            eta = f", about {elapsed / self.done * (self.total - self.done):.0f} s left"
        text = f"[{self.done + 1}/{self.total}] {what} ({elapsed:.0f} s elapsed{eta})"
        if self.tty:
            sys.stderr.write("\r\033[K" + text)
        else:
            sys.stderr.write(f"# {text}\n")
        sys.stderr.flush()

    def end(self) -> None:
        """The step is done: on a terminal its line is cleared for the result."""
        self.done += 1
        if self.tty:
            sys.stderr.write("\r\033[K")
            sys.stderr.flush()


def _hashes_plan(args: argparse.Namespace, parser: argparse.ArgumentParser
                 ) -> tuple[list[str], list[str], Optional[list[int]], list[str], list[str]]:
    """The validated options of `samebits hashes`; a one-line error otherwise."""
    modes = _csv(args.modes)
    bad = [m for m in modes if m not in ("exact", "fast")]
    if bad or not modes:
        parser.error(f"--modes: {','.join(bad) or '(none)'} is not exact or fast")
    runnable = _paths.paths()
    paths = _csv(args.paths) if args.paths else runnable
    bad = [p for p in paths if p not in runnable]
    if bad:
        parser.error(f"--paths: {','.join(bad)} cannot run on this machine (it runs "
                     f"{','.join(runnable)})")
    threads: Optional[list[int]] = None
    if args.threads:
        try:
            threads = [int(t) for t in _csv(args.threads)]
        except ValueError:
            parser.error(f"--threads: {args.threads!r} is not a comma-separated list of integers")
        if any(t < 1 for t in threads):
            parser.error(f"--threads: {args.threads!r} must be at least 1")
    groups = _csv(args.groups)
    bad = [g for g in groups if g not in hashes.GROUPS]
    if bad or not groups:
        parser.error(f"--groups: {','.join(bad) or '(none)'} is not one of "
                     f"{','.join(hashes.GROUPS)}")
    suites = _csv(args.suites)
    bad = [s for s in suites if s not in hashes.SUITES]
    if bad or not suites:
        parser.error(f"--suites: {','.join(bad) or '(none)'} is not one of "
                     f"{','.join(hashes.SUITES)}")
    return modes, paths, threads, groups, suites


def _cmd_hashes(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    modes, paths, threads, groups, suites = _hashes_plan(args, parser)
    if threads is None:
        threads = hashes.default_thread_counts()
    order = [s for s in hashes.SUITES if s in suites]
    progress = _Progress(len(order) * len(modes) * len(paths) * len(threads))
    for suite in order:
        print(hashes.header(groups, suite), flush=True)
        for mode in modes:
            for path in paths:
                for t in threads:
                    progress.begin(f"{suite} {mode} {path} threads={t}")
                    timings: list[float] = []
                    line = hashes.hash_lines([mode], [path], [t], groups, timings, suite=suite)[0]
                    progress.end()
                    print(line + (f"  # {timings[0]:.1f} s" if args.timing else ""), flush=True)
    return 0


def _cmd_digest(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    try:
        import numpy as np
    except ImportError:
        parser.error("digest: reading .npy files needs numpy")
    from .testing import digest
    status = 0
    for name in args.files:
        try:
            array = np.load(name, allow_pickle=False)
            line = f"{digest(array, canonical_nan=not args.raw_nan)}  {name}"
        except (OSError, ValueError, TypeError) as e:
            print(f"samebits digest: {name}: {e}", file=sys.stderr)
            status = 1
            continue
        print(line, flush=True)
    return status


def _cmd_info(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    print(json.dumps(info(), indent=2))
    return 0


def _cmd_bench(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from .bench import speed_line
    print(speed_line(args.size))
    return 0


def _made_input(info: Any, index: int, np: Any) -> Any:
    """Portable test values for a declared input (stream = its position);
    integer and bool inputs get zeros; an unknown dimension is 1."""
    from .testing import portable_values
    if info.shape is None:
        raise ValueError(f"run: input {info.name!r} has no declared shape; give it with "
                         f"--input {info.name}=FILE.npy")
    shape = tuple(d if isinstance(d, int) and d >= 0 else 1 for d in info.shape)
    if info.dtype == "float32":
        return portable_values(shape, index)
    if info.dtype in ("int64", "int32", "int16", "int8", "uint8", "uint16", "uint32", "uint64",
                      "bool"):
        return np.zeros(shape, dtype=info.dtype)
    raise ValueError(f"run: input {info.name!r} is {info.dtype}; give it with "
                     f"--input {info.name}=FILE.npy")


def _cmd_run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    try:
        import numpy as np
    except ImportError:
        parser.error("run: reading and making inputs needs numpy")
    from . import onnx as sonnx
    from .testing import digest
    if args.runs < 1:
        parser.error(f"--runs: {args.runs} must be at least 1")
    if args.threads is not None and args.threads < 1:
        parser.error(f"--threads: {args.threads} must be at least 1")
    if args.profile is not None and args.profile < 1:
        parser.error(f"--profile: {args.profile} must be at least 1")
    given: dict[str, Any] = {}
    for item in args.input:
        name, sep, file = item.partition("=")
        if not sep or not name or not file:
            parser.error(f"--input: {item!r} is not NAME=FILE.npy")
        try:
            given[name] = np.load(file, allow_pickle=False)
        except (OSError, ValueError) as e:
            parser.error(f"--input: {file}: {e}")
    session = sonnx.load(args.model, mode=args.mode, threads=args.threads)
    names = [i.name for i in session.inputs]
    unknown = [n for n in given if n not in names]
    if unknown:
        parser.error(f"--input: {unknown[0]!r} is not an input of the model (inputs: "
                     f"{', '.join(names)})")
    feeds = {i.name: given[i.name] if i.name in given else _made_input(i, k, np)
             for k, i in enumerate(session.inputs)}
    for i in session.inputs:
        origin = "given" if i.name in given else "portable test values" \
            if feeds[i.name].dtype == np.float32 else "zeros"
        print(f"input  {i.name} {feeds[i.name].dtype} {tuple(feeds[i.name].shape)} ({origin})")
    times = []
    outputs: dict[str, Any] = {}
    # the profile leaves out the first run (it plans and packs) when there are more
    profiled = args.runs - 1 if args.runs > 1 else 1
    for k in range(args.runs):
        start = time.perf_counter()
        outputs = session.run(feeds, profile=args.profile is not None and
                              (k > 0 or args.runs == 1))
        times.append(time.perf_counter() - start)
    for name, value in outputs.items():
        print(f"output {name} {value.dtype} {tuple(value.shape)} digest={digest(value)}")
    times.sort()
    median = times[len(times) // 2]
    print(f"time   {median * 1e3:.3f} ms per run (median of {len(times)}, mode={args.mode}, "
          f"path={session.path}, threads={args.threads or 'default'})")
    if args.profile is not None:
        _print_profile(session, profiled, args.profile)
    return 0


def _print_profile(session: Any, runs: int, top: int) -> None:
    """Per operator type, then the `top` slowest nodes: milliseconds per run
    (the mean over `runs` profiled runs) and their share of all nodes' time."""
    nodes = session.node_profile
    total = sum(t.seconds for t in nodes) or 1.0
    by_op: dict[str, list[float]] = {}
    for t in nodes:
        entry = by_op.setdefault(t.op, [0.0, 0])
        entry[0] += t.seconds
        entry[1] += 1
    width = max([len("operator")] + [len(op) for op in by_op])
    print(f"profile: ms per run (mean of {runs} run{'s' if runs > 1 else ''}"
          f"{' after the first' if runs > 1 else ''}), share of the nodes' time")
    print(f"  {'operator':<{width}} {'ms':>9} {'share':>6} {'nodes':>5}")
    for op, (seconds, count) in sorted(by_op.items(), key=lambda kv: -kv[1][0]):
        print(f"  {op:<{width}} {seconds / runs * 1e3:9.3f} {seconds / total:6.1%} {count:5d}")
    print(f"slowest {min(top, len(nodes))} of {len(nodes)} nodes:")
    for t in sorted(nodes, key=lambda t: -t.seconds)[:top]:
        name = t.name or "(unnamed)"
        print(f"  {t.seconds / runs * 1e3:9.3f} ms {t.seconds / total:6.1%}  {t.op}  {name} "
              f"(node {t.index} of the file)")


def main(argv: list[str] | None = None) -> int:
    parser = _Parser(prog="samebits", description=__doc__)
    parser.add_argument("--version", action="version", version=f"samebits {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="run an ONNX model; print each output's shape and digest "
                                   "and the time per run")
    r.add_argument("model", metavar="MODEL.onnx")
    r.add_argument("--input", action="append", default=[], metavar="NAME=FILE.npy",
                   help="an input from a .npy file (repeat per input); inputs not given get "
                        "portable test values (float32) or zeros (integers)")
    r.add_argument("--mode", choices=("exact", "fast"), default="exact")
    r.add_argument("--threads", type=int, default=None)
    r.add_argument("--runs", type=int, default=3, help="runs to time (default 3; the median)")
    r.add_argument("--profile", type=int, nargs="?", const=10, default=None, metavar="N",
                   help="print the time per operator type and the N slowest nodes "
                        "(default 10): the mean of the runs after the first")
    r.set_defaults(run=_cmd_run, parser=r)
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
    h.set_defaults(run=_cmd_hashes, parser=h)
    i = sub.add_parser("info", help="print the build and machine description as JSON")
    i.set_defaults(run=_cmd_info, parser=i)
    b = sub.add_parser("bench", help="time one square product against numpy")
    b.add_argument("--size", type=int, default=1024)
    b.set_defaults(run=_cmd_bench, parser=b)
    d = sub.add_parser("digest", help="print samebits.testing.digest of .npy files, one line each")
    d.add_argument("files", nargs="+", metavar="FILE.npy")
    d.add_argument("--raw-nan", action="store_true",
                   help="hash NaN payloads as they are (default: every NaN as the canonical one)")
    d.set_defaults(run=_cmd_digest, parser=d)
    args = parser.parse_args(argv)
    try:
        status: int = args.run(args, args.parser)
        return status
    except (ValueError, TypeError) as e:   # the library's own, already worded for people
        args.parser.error(str(e))
        return 2


if __name__ == "__main__":
    sys.exit(main())
