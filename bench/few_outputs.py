"""Two builds side by side on products and convolutions with few outputs per
row or column: a matrix times 1 to 4 vectors, 2 to 4 rows times a matrix,
and convolutions with 1 to 4 output channels (image, mask and depth heads).

    python bench/few_outputs.py OLD.so NEW.so [--rounds 5] [--out PATH]

Each round runs every case in one process per build, alternating the builds,
and keeps a case's fastest of --calls calls (one thread); the table gives the
median over rounds of those minima for each build, the ratio old/new and its
spread over rounds, and numpy (OpenBLAS, one thread) for the products.
Writes Markdown to --out (default: stdout).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

CASES = [
    # (kind, shape...)
    ("matmul", 240, 960, 1), ("matmul", 1000, 1000, 1), ("matmul", 4096, 1024, 1),
    ("matmul", 240, 960, 2), ("matmul", 240, 960, 4), ("matmul", 1500, 64, 3),
    ("matmul", 2, 768, 3072), ("matmul", 4, 768, 768), ("matmul", 3, 1024, 4096),
    ("conv", 32, 3, 3, 256), ("conv", 16, 3, 9, 128), ("conv", 64, 2, 1, 256),
    ("conv", 64, 4, 3, 128), ("conv", 64, 1, 3, 128), ("conv", 48, 3, 3, 192),
]

RUN = r'''
import json, sys, time, numpy as np, samebits
from threadpoolctl import threadpool_limits
threadpool_limits(1)
cases, calls, with_numpy = json.loads(sys.argv[1]), int(sys.argv[2]), sys.argv[3] == "1"
rng = np.random.default_rng(0)
def best(f):
    f()
    ts = []
    for _ in range(calls):
        t = time.perf_counter(); f(); ts.append(time.perf_counter() - t)
    return min(ts) * 1e6
out = []
for case in cases:
    row = {}
    if case[0] == "matmul":
        _, m, k, n = case
        a = rng.standard_normal((m, k), dtype=np.float32)
        b = rng.standard_normal((k, n), dtype=np.float32)
        for mode in ("fast", "exact"):
            row[mode] = best(lambda: samebits.matmul(a, b, mode=mode, threads=1))
        if with_numpy:
            row["numpy"] = best(lambda: a @ b)
    else:
        _, cin, cout, k, h = case
        x = rng.standard_normal((1, cin, h, h), dtype=np.float32)
        w = rng.standard_normal((cout, cin, k, k), dtype=np.float32)
        for mode in ("fast", "exact"):
            row[mode] = best(lambda: samebits.conv2d(x, w, None, padding=k // 2, mode=mode,
                                                     threads=1))
    out.append(row)
print(json.dumps(out))
'''


def label(case) -> str:
    if case[0] == "matmul":
        return f"matmul {case[1]}x{case[2]}x{case[3]}"
    return f"conv {case[1]}->{case[2]} {case[3]}x{case[3]} at {case[4]}x{case[4]}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("old")
    parser.add_argument("new")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--calls", type=int, default=15)
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    times = {"old": [], "new": []}
    numpy_times = []
    for r in range(args.rounds):
        for name in ("old", "new"):
            env = dict(os.environ, SAMEBITS_LIBRARY=getattr(args, name),
                       PYTHONPATH=os.path.join(root, "py"))
            proc = subprocess.run([sys.executable, "-c", RUN, json.dumps(CASES), str(args.calls),
                                   "1" if name == "new" else "0"],
                                  env=env, capture_output=True, text=True, check=True)
            rows = json.loads(proc.stdout.strip().splitlines()[-1])
            times[name].append(rows)
            if name == "new":
                numpy_times.append([row.get("numpy") for row in rows])
        print(f"round {r + 1} of {args.rounds}", file=sys.stderr)
    lines = ["| case | mode | old us | new us | old/new [spread] | numpy us | new/numpy speed |",
             "|---|---|---:|---:|---:|---:|---:|"]
    for i, case in enumerate(CASES):
        for mode in ("fast", "exact"):
            old = [run[i][mode] for run in times["old"]]
            new = [run[i][mode] for run in times["new"]]
            ratios = [o / n for o, n in zip(old, new)]
            np_col, speed = "", ""
            if numpy_times[0][i] is not None:
                np_med = statistics.median(t[i] for t in numpy_times)
                np_col = f"{np_med:.1f}"
                speed = f"{np_med / statistics.median(new):.2f}x"
            lines.append(f"| {label(case)} | {mode} | {statistics.median(old):.1f} | "
                         f"{statistics.median(new):.1f} | {statistics.median(ratios):.2f} "
                         f"[{min(ratios):.2f}-{max(ratios):.2f}] | {np_col} | {speed} |")
    text = "\n".join(lines) + "\n"
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    print(text)


if __name__ == "__main__":
    main()
