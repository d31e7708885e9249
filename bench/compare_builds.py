"""Two builds of the library side by side on the convolutions of
samebits.shapes.CONV_MODELS: which kernel change is faster, measured on a
shared machine.

    python3 bench/compare_builds.py OLD.so NEW.so [--layers REGEX] [--modes fast,exact]
                                    [--rounds 6] [--seconds 0.4] [--out FILE.md]

Each (layer, mode) is timed in `rounds` rounds; in each round every build
runs once, in its own process (SAMEBITS_LIBRARY names the build), in turn, so
that a burst of load from another tenant falls on both alike. A run calls
`conv2d(x, pack_conv2d(w), out=...)` at `--threads` threads (default 1) until
`seconds` have passed and reports the time per call: process CPU time at one
thread (the time the convolution actually ran, on a shared machine), wall
time at more. The table gives each build's median
and lowest time and the per-round speed ratio OLD / NEW (>1: NEW faster),
median [lowest-highest]. Every build must give the same exact-mode bits; the
worker prints a digest of its output and a mismatch is reported.

    python3 bench/compare_builds.py OLD.so NEW.so --networks DIR [--models REGEX]

times whole networks instead: every DIR/NAME.onnx with its DIR/NAME.feeds
(the models hash suite's files, e.g. web/out/models), one `Session.run` per
call, in the same alternation.
"""
from __future__ import annotations

import argparse
import hashlib
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

WORKER = r"""
import hashlib, sys, time
import numpy as np
import samebits
from samebits.shapes import CONV_MODELS
model, name, mode, seconds = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
threads = int(sys.argv[5])
clock = time.process_time if threads == 1 else time.perf_counter
s = next(s for s in CONV_MODELS[model] if s.name == name)
rng = np.random.default_rng(0)
x = rng.standard_normal((1, s.c, s.h, s.w), dtype=np.float32)
w = (rng.standard_normal((s.cout, s.c // s.groups, s.kh, s.kw), dtype=np.float32) * 0.05)
packed = samebits.pack_conv2d(w, groups=s.groups)
out = np.empty((1, s.cout, s.out_h, s.out_w), np.float32)
def call():
    samebits.conv2d(x, packed, stride=s.stride, padding=s.padding, groups=s.groups, out=out,
                    threads=threads, mode=mode)
call()
start, calls = clock(), 0
while clock() - start < seconds:
    call()
    calls += 1
print((clock() - start) / calls, hashlib.sha256(out.tobytes()).hexdigest()[:16])
"""


NETWORK_WORKER = r"""
import sys, time
import samebits.onnx as so
from samebits.onnx import suite
model, mode, seconds, threads = sys.argv[1], sys.argv[3], float(sys.argv[4]), int(sys.argv[5])
clock = time.process_time if threads == 1 else time.perf_counter
with open(model[:-len(".onnx")] + ".feeds", "rb") as f:
    feeds = suite.unpack_feeds(f.read())
s = so.load(model, mode=mode, threads=threads)
def call():
    return s.run(feeds)
out = call()
start, calls = clock(), 0
while clock() - start < seconds or calls < 2:
    call()
    calls += 1
print((clock() - start) / calls, suite.output_digest(out)[:16])
"""


def run_once(library: str, model: str, name: str, mode: str, seconds: float,
             threads: int) -> tuple[float, str]:
    # one OpenBLAS thread: the worker imports numpy, whose idle workers would
    # otherwise spin beside the build being timed (1-2% of the samples)
    env = dict(os.environ, SAMEBITS_LIBRARY=library, OPENBLAS_NUM_THREADS="1")
    worker = NETWORK_WORKER if model.endswith(".onnx") else WORKER
    got = subprocess.run([sys.executable, "-c", worker, model, name, mode, str(seconds),
                          str(threads)],
                         env=env, capture_output=True, text=True, check=True).stdout.split()
    return float(got[0]), got[1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("old")
    parser.add_argument("new")
    parser.add_argument("--layers", default="", help="only layers whose name matches this regex")
    parser.add_argument("--models", default="", help="only models whose name matches this regex")
    parser.add_argument("--modes", default="fast,exact")
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--seconds", type=float, default=0.4)
    parser.add_argument("--threads", type=int, default=1,
                        help="threads per call; above 1 the worker times wall-clock seconds")
    parser.add_argument("--out", type=Path, default=None, help="write the table here (markdown)")
    parser.add_argument("--networks", type=Path, default=None,
                        help="time the whole networks of this folder (NAME.onnx + NAME.feeds)")
    args = parser.parse_args()
    os.environ.setdefault("SAMEBITS_LIBRARY", args.old)   # the layer list imports samebits
    from samebits.shapes import CONV_MODELS

    lines = [f"Builds: OLD = `{args.old}`, NEW = `{args.new}`; {args.rounds} rounds of "
             f"{args.seconds} s per build, {args.threads} thread(s) (CPU time at 1 "
             f"thread, wall time above); ratio = OLD / NEW per round "
             f"(>1: NEW faster), median [lowest-highest].", "",
             "| model | layer | mode | OLD ms median (lowest) | NEW ms median (lowest) | ratio |",
             "|---|---|---|---|---|---|"]
    print("\n".join(lines), flush=True)
    started = time.time()
    if args.networks:   # (model, [(layer name, the model's file)])
        jobs = [(p.stem, [("whole", str(p))]) for p in sorted(args.networks.glob("*.onnx"))]
    else:
        jobs = [(model, [(s.name, s.name) for s in shapes]) for model, shapes in CONV_MODELS.items()]
    for model, layers in jobs:
        if not re.search(args.models, model):
            continue
        for name, target in layers:
            if not re.search(args.layers, name):
                continue
            for mode in args.modes.split(","):
                times: dict[str, list[float]] = {"old": [], "new": []}
                digests: dict[str, set[str]] = {"old": set(), "new": set()}
                for _ in range(args.rounds):
                    for key in ("old", "new"):
                        t, digest = run_once(getattr(args, key),
                                             target if args.networks else model, target, mode,
                                             args.seconds, args.threads)
                        times[key].append(t)
                        digests[key].add(digest)
                ratios = sorted(o / n for o, n in zip(times["old"], times["new"]))
                note = ""
                if mode == "exact" and digests["old"] != digests["new"]:
                    note = " **exact bits differ**"
                cells = [f"{statistics.median(times[k]) * 1e3:.3f} ({min(times[k]) * 1e3:.3f})"
                         for k in ("old", "new")]
                line = (f"| {model} | {name} | {mode} | {cells[0]} | {cells[1]} | "
                        f"{statistics.median(ratios):.2f} [{ratios[0]:.2f}-{ratios[-1]:.2f}]{note} |")
                lines.append(line)
                print(line, flush=True)
    lines.append("")
    lines.append(f"Run took {time.time() - started:.0f} s.")
    if args.out:
        args.out.write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
