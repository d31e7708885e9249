"""Calibration of the thread estimate (csrc/framework/tiling.c, csrc/framework/threads.c).

    python bench/calibrate_threads.py

Prints, for the record in bench/results/threads-calibration.md:
1. the cost of one pool job on 1 and 2 threads, cold (workers asleep) and warm
   (workers still spinning after the previous job);
2. each path's single-thread multiply-add rate in both modes (the `muladds_per_ns`
   of the path table);
3. square products around the wake-up threshold: one thread against all
   threads, with the pool's own decision.
"""
from __future__ import annotations

import time

import numpy as np

import samebits
from samebits._binding import lib as _lib
from samebits.bench import time_call


def pool_costs() -> None:
    lib = _lib.lib
    for threads in (1, 2):
        warm = lib.sb_threads_wake_ns(threads, 2000)
        cold = []
        for _ in range(20):
            time.sleep(0.005)          # let the workers fall asleep
            cold.append(lib.sb_threads_wake_ns(threads, 1))
        print(f"pool job on {threads} thread(s): warm {warm / 1e3:.2f} us, "
              f"cold median {sorted(cold)[len(cold) // 2] / 1e3:.2f} us")


def path_rates() -> None:
    rng = np.random.default_rng(0)
    s = 512
    a = rng.standard_normal((s, s), dtype=np.float32)
    b = rng.standard_normal((s, s), dtype=np.float32)
    out = np.empty((s, s), np.float32)
    for path in samebits.paths():
        with samebits.use_path(path):
            for mode in ("fast", "exact"):
                t = time_call(lambda: samebits.matmul(a, b, mode=mode, out=out, threads=1))
                print(f"{path:7s} {mode:5s} 1 thread, {s}^3: {s ** 3 / t / 1e9:.1f} multiply-adds/ns")


def threshold() -> None:
    rng = np.random.default_rng(1)
    threads = samebits.info()["threads"]
    print(f"square products, 1 thread vs {threads} (the pool decides how many wake):")
    for s in (32, 48, 64, 96, 128, 160, 192, 256, 384):
        a = rng.standard_normal((s, s), dtype=np.float32)
        b = rng.standard_normal((s, s), dtype=np.float32)
        out = np.empty((s, s), np.float32)
        one = time_call(lambda: samebits.matmul(a, b, out=out, threads=1))
        many = time_call(lambda: samebits.matmul(a, b, out=out, threads=threads))
        print(f"  {s:4d}^3: {one * 1e6:8.1f} us vs {many * 1e6:8.1f} us  speed-up {one / many:.2f}")


if __name__ == "__main__":
    print(samebits.info()["paths"], samebits.path())
    pool_costs()
    path_rates()
    threshold()
