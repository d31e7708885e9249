"""Exact elementwise functions of every float32 input, on every path this
machine runs, against the written recipe (docs/exact-ops.md): a path's own
route (the fast routes of sin, cos, exp, sigmoid and log; avx512's Erf and
Gelu, with their table lookup as register permutes, and avx2's, as
transposes) must give the recipe's
bits for all 2^32 inputs.

    python bench/exhaustive_identical.py [--functions sin,cos,erf,gelu] [--paths scalar,avx2]

Builds bench/exhaustive_identical.c against the installed library (the
recipe compiled into the harness as scalar code, -ffp-contract=off), runs it
on two threads, and writes bench/results/identical-DATE.{md,json} (or
--out PATH), adding -2, -3... rather than overwrite a table already there.
About 3.5 minutes per function for four paths on two cores.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time

import samebits
from samebits._binding import lib as _lib

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
import _machine  # noqa: E402


def build_harness(out: pathlib.Path) -> None:
    libdir = str(pathlib.Path(_lib.LIBRARY_PATH).parent)
    subprocess.run(["cc", "-O2", "-std=gnu11", "-ffp-contract=off", "-I", str(ROOT / "csrc"),
                    str(ROOT / "bench" / "exhaustive_identical.c"), "-o", str(out),
                    f"-Wl,-rpath,{libdir}", str(_lib.LIBRARY_PATH), "-lm", "-pthread"],
                   check=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--functions", default="sin,cos,erf,gelu")
    parser.add_argument("--paths", default=None, help="default: every supported path")
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--out", type=pathlib.Path, default=None,
                        help="results path without suffix (default bench/results/identical-DATE; "
                             "an existing table is never overwritten: -2, -3... are added)")
    args = parser.parse_args()
    paths = args.paths.split(",") if args.paths else list(samebits.paths())
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        harness = pathlib.Path(tmp) / "exhaustive_identical"
        build_harness(harness)
        for name in args.functions.split(","):
            start = time.perf_counter()
            proc = subprocess.run([str(harness), name, ",".join(paths), str(args.threads)],
                                  capture_output=True, text=True)
            if proc.returncode not in (0, 1):
                raise SystemExit(proc.stdout + proc.stderr)
            seconds = time.perf_counter() - start
            for line in proc.stdout.splitlines():
                fields = line.split()
                rows.append({"function": fields[0], "path": fields[1], "inputs": int(fields[3]),
                             "differ": int(fields[5]), "first": fields[6:], "seconds": seconds})
                print(line, flush=True)
    day = datetime.date.today().isoformat()
    out = args.out or ROOT / "bench" / "results" / f"identical-{day}"
    base, n = out, 2
    while out.with_suffix(".md").exists() or out.with_suffix(".json").exists():
        out, n = base.with_name(f"{base.name}-{n}"), n + 1   # a day's earlier table stays
    machine = f"{_machine.cpu_model()}, samebits {samebits.__version__}, {args.threads} threads"
    out.with_suffix(".json").write_text(json.dumps({"machine": machine, "rows": rows}, indent=1))
    names = ", ".join(sorted({r["function"] for r in rows}))
    lines = [f"# Exact {names} against their recipe, every float32 input, {day}", "",
             f"{machine}. `python bench/exhaustive_identical.py`: the library's exact kernels on "
             "each path against the recipe of docs/exact-ops.md compiled as scalar code.", "",
             "| function | path | inputs | differing |", "|---|---|---|---|"]
    lines += [f"| {r['function']} | {r['path']} | {r['inputs']:,} | {r['differ']} |" for r in rows]
    out.with_suffix(".md").write_text("\n".join(lines) + "\n")
    print(f"written: {out}.{{md,json}}")
    if any(r["differ"] for r in rows):
        raise SystemExit("some path differs from the recipe")


if __name__ == "__main__":
    main()
