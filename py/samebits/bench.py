"""Timing helpers and the short speed line of the main job.

The method (docs/design.md): two warm-up calls, then calls repeated for at least
80 ms and averaged; the median of three such means is reported. Inputs and
outputs are allocated outside the timing; packing happens inside it.
"""
from __future__ import annotations

import statistics
import time
from typing import Callable


def time_call(fn: Callable[[], object], min_seconds: float = 0.08, repeats: int = 3,
              warmup: int = 2) -> float:
    """Median over `repeats` of the mean seconds per call of `fn`."""
    return time_call_spread(fn, min_seconds, repeats, warmup)[0]


def time_call_spread(fn: Callable[[], object], min_seconds: float = 0.08, repeats: int = 3,
                     warmup: int = 2) -> tuple[float, float, float]:
    """(median, lowest, highest) over `repeats` of the mean seconds per call of `fn`."""
    for _ in range(warmup):
        fn()
    means = []
    for _ in range(repeats):
        calls, start = 0, time.perf_counter()
        while True:
            fn()
            calls += 1
            elapsed = time.perf_counter() - start
            if elapsed >= min_seconds:
                break
        means.append(elapsed / calls)
    return statistics.median(means), min(means), max(means)


def speed_line(size: int = 1024, threads: int | None = None) -> str:
    """One line: samebits fast and exact against numpy on a size^3 product."""
    import numpy as np

    from . import matmul, path
    from ._binding.threads import default_threads

    threads = threads or default_threads()
    rng = np.random.default_rng(0)
    a = rng.standard_normal((size, size), dtype=np.float32)
    b = rng.standard_normal((size, size), dtype=np.float32)
    out = np.empty((size, size), np.float32)
    flops = 2.0 * size ** 3
    fast = time_call(lambda: matmul(a, b, out=out, threads=threads))
    exact = time_call(lambda: matmul(a, b, mode="exact", out=out, threads=threads))
    ref = time_call(lambda: np.matmul(a, b, out=out))
    return (f"{size}^3 on {path()} with {threads} threads: "
            f"fast {fast * 1e3:.2f} ms ({flops / fast / 1e9:.1f} GFLOP/s), "
            f"exact {exact * 1e3:.2f} ms ({flops / exact / 1e9:.1f} GFLOP/s), "
            f"numpy {ref * 1e3:.2f} ms ({flops / ref / 1e9:.1f} GFLOP/s); "
            f"fast/numpy speed {ref / fast:.2f}x, exact/numpy {ref / exact:.2f}x")
