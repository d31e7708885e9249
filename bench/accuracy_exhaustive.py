"""Exhaustive accuracy of the exact elementwise functions: all 2**32 float32
inputs of exp, log, tanh, erf and sigmoid (the default set), or of sin and
cos, against a correctly rounded reference.

    python bench/accuracy_exhaustive.py [--functions exp,log] [--path avx512]
    python bench/accuracy_exhaustive.py --functions sin,cos

The C harness (bench/accuracy_exhaustive.c, built here against the installed
library) runs samebits' exact kernels over every input and compares with x86
long double libm; the few inputs whose long double value lies too near a
rounding midpoint are settled here with mpmath at 128 bits. Results go to
bench/results/accuracy-DATE.{md,json}. About 2-4 minutes per function on two
cores. Needs an x86-64 machine (long double with a 64-bit significand), a C
compiler and mpmath.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import pathlib
import platform
import struct
import subprocess
import sys
import tempfile
import time

import mpmath as mp
import numpy as np

import samebits
from samebits._binding import lib as _lib

ROOT = pathlib.Path(__file__).resolve().parent.parent
FUNCTIONS = ("exp", "log", "tanh", "erf", "sigmoid")
mp.mp.prec = 128

_MP = {"exp": mp.exp, "log": mp.log, "tanh": mp.tanh, "erf": mp.erf, "sin": mp.sin, "cos": mp.cos,
       "sigmoid": lambda x: 1 / (1 + mp.exp(-x))}


def _f32(bits: int) -> float:
    return struct.unpack("<f", struct.pack("<I", bits))[0]


def _bits(value: float) -> int:
    return struct.unpack("<I", struct.pack("<f", value))[0]


def _neighbours(bits: int) -> list[int]:
    """bits and the float32 values next to it (same sign side, finite)."""
    out = [bits]
    magnitude, sign = bits & 0x7FFFFFFF, bits & 0x80000000
    if magnitude < 0x7F800000:
        out.append(sign | (magnitude + 1))
    if magnitude > 0:
        out.append(sign | (magnitude - 1))
    elif magnitude == 0:
        out.append(0x80000001 if not sign else 0x00000001)
    return out


def correctly_rounded(name: str, x_bits: int) -> int:
    """float32 bits of f(x) rounded to nearest (ties to even), by mpmath."""
    v = _MP[name](mp.mpf(_f32(x_bits)))
    largest = mp.mpf(2) ** 128 - mp.mpf(2) ** 103      # halfway past FLT_MAX
    if abs(v) >= largest:
        return 0x7F800000 | (0x80000000 if v < 0 else 0)
    guess = float(v)
    try:
        start = _bits(guess)
    except OverflowError:
        start = 0x7F7FFFFF | (0x80000000 if v < 0 else 0)
    best = None
    for cand in _neighbours(start):
        dist = abs(mp.mpf(_f32(cand)) - v)
        key = (dist, cand & 1)                 # nearest, then even
        if best is None or key < best[0]:
            best = (key, cand)
    return best[1]


def build_harness(out: pathlib.Path) -> None:
    libdir = str(pathlib.Path(_lib.LIBRARY_PATH).parent)
    cmd = ["cc", "-O2", "-std=gnu11", "-I", str(ROOT / "csrc"),
           str(ROOT / "bench" / "accuracy_exhaustive.c"), "-o", str(out),
           f"-Wl,-rpath,{libdir}", str(_lib.LIBRARY_PATH), "-lm", "-pthread"]
    subprocess.run(cmd, check=True)


def run(name: str, path: str, threads: int, harness: pathlib.Path, tmp: pathlib.Path,
        mode: str = "exact") -> dict:
    hard_file = tmp / f"hard-{name}.txt"
    start = time.perf_counter()
    extra = ["fast"] if mode == "fast" else []
    proc = subprocess.run([str(harness), name, path, str(threads), str(hard_file), *extra],
                          capture_output=True, text=True, check=True)
    result = json.loads(proc.stdout)
    result["seconds"] = round(time.perf_counter() - start, 1)
    hard_right = hard_wrong = 0
    hard_wrong_inputs = []
    for line in hard_file.read_text().split("\n"):
        if not line:
            continue
        x_hex, got_hex = line.split()
        if correctly_rounded(name, int(x_hex, 16)) == int(got_hex, 16):
            hard_right += 1
        else:
            hard_wrong += 1
            hard_wrong_inputs.append(x_hex)
    result["hard_correct"], result["hard_wrong"] = hard_right, hard_wrong
    result["hard_wrong_inputs"] = hard_wrong_inputs[:8]
    result["not_correctly_rounded"] = result["off_by_one"] + result["worse"] + hard_wrong
    # the first wrong inputs, checked again with mpmath (the long double
    # reference could itself be off there)
    rechecks = []
    for x_hex in result["first_wrong"]:
        x = int(x_hex, 16)
        got = int(getattr(samebits, name)(np.array([_f32(x)], np.float32),
                                          mode=mode).view(np.uint32)[0])
        rechecks.append({"x": x_hex, "got": f"{got:08x}",
                         "correctly_rounded": f"{correctly_rounded(name, x):08x}"})
    result["first_wrong_rechecked"] = rechecks
    return result


def write_results(results: list[dict], path: str, elapsed: float,
                  mode: str = "exact") -> pathlib.Path:
    day = datetime.date.today().isoformat()
    # fast mode's bits depend on the path: one file per path
    stem = f"accuracy-{day}" if mode == "exact" else f"accuracy-{mode}-{path}-{day}"
    names = tuple(r["function"] for r in results)
    if names != FUNCTIONS:                 # another set of functions: a file of its own
        stem = stem.replace("accuracy-", f"accuracy-{'-'.join(names)}-", 1)
    out_dir = ROOT / "bench" / "results"
    machine = platform.processor() or platform.machine()
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                machine = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    doc = {"date": day, "samebits": samebits.__version__, "mode": mode, "path": path,
           "cpu": machine,
           "reference": "x86 long double libm (glibc), mpmath at 128 bits near midpoints",
           "seconds": round(elapsed, 1), "results": results}
    (out_dir / f"{stem}.json").write_text(json.dumps(doc, indent=1) + "\n")
    paths_note = ("every path gives the same bits" if mode == "exact" else
                  "fast mode's bits depend on the path: fused multiply-add where it has one")
    lines = [f"# Exhaustive accuracy of the {mode} elementwise functions, {day}", "",
             f"samebits {samebits.__version__}, {mode} mode on the {path} path ({paths_note}), "
             "every float32 input except NaNs (4,278,190,082 per function), "
             f"on {machine}. Reference: glibc's x86 long double functions, and mpmath at 128 "
             "bits for the inputs whose long double value lies within 2^-56 (relative) of a "
             "rounding midpoint. Run by `python bench/accuracy_exhaustive.py` in "
             f"{elapsed / 60:.0f} min.", "",
             "| function | inputs | correctly rounded | not correctly rounded | of them off by 1 ulp "
             "| worse | max error (ulp) | near-midpoint inputs (all settled by mpmath) |",
             "|---|---|---|---|---|---|---|---|"]
    for r in results:
        lines.append(f"| {r['function']} | {r['checked']:,} | {r['correct'] + r['hard_correct']:,} "
                     f"| {r['not_correctly_rounded']:,} | {r['off_by_one']:,} | {r['worse']:,} "
                     f"| {r['max_ulps']:.3f} | {r['hard']:,} |")
    lines += ["", "Max error is |result - reference| in float32 ulps of the reference, over the "
              "results that are not correctly rounded (0 when all are). The JSON file lists the "
              "first such inputs, each rechecked with mpmath.", ""]
    md = out_dir / f"{stem}.md"
    md.write_text("\n".join(lines))
    return md


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--functions", default=",".join(FUNCTIONS))
    parser.add_argument("--path", default=samebits.paths()[-1])
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--mode", choices=("exact", "fast"), default="exact")
    args = parser.parse_args()
    if platform.machine() not in ("x86_64", "AMD64"):
        raise SystemExit("accuracy_exhaustive.py needs x86-64 (long double with a 64-bit significand)")
    names = [n for n in args.functions.split(",") if n]
    start = time.perf_counter()
    results = []
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = pathlib.Path(tmp_name)
        harness = tmp / "accuracy_exhaustive"
        build_harness(harness)
        for name in names:
            r = run(name, args.path, args.threads, harness, tmp, args.mode)
            print(json.dumps(r), flush=True)
            results.append(r)
    md = write_results(results, args.path, time.perf_counter() - start, args.mode)
    print(md.read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
