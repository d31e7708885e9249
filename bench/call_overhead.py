"""Per-call cost of samebits.matmul on small products, side by side with numpy's a @ b.

    python bench/call_overhead.py [--rounds 11]

For each shape, both calls are timed in turns in one process (best of 3
timeit repeats per turn), and the median over the rounds of the time and of
the samebits/numpy ratio is printed; the machine may be shared, so only the
ratios measured side by side mean much. The floors show what any ctypes
binding pays here: an empty ctypes call with one pointer argument, and the
C library's sb_matmul on a prebuilt argument structure (the C work of a 16^3
product plus that call).
"""
from __future__ import annotations

import argparse
import statistics
import sys
import timeit

import numpy as np

import samebits
from samebits._binding import abi as _abi, lib as _lib, paths as _paths

SHAPES = [(16, 16, 16), (64, 64, 64), (1, 768, 768)]


def _per_call(fn, number: int) -> float:
    return min(timeit.repeat(fn, number=number, repeat=3)) / number


def _number(m: int, k: int, n: int) -> int:
    return max(200, min(20000, int(2e8 // (m * k * n + 20000))))


def compare(m: int, k: int, n: int, rounds: int) -> tuple[float, float, float]:
    rng = np.random.default_rng(0)
    a = rng.standard_normal((m, k), dtype=np.float32)
    b = rng.standard_normal((k, n), dtype=np.float32)
    number = _number(m, k, n)
    t_np, t_sb, ratio = [], [], []
    for _ in range(rounds):
        x = _per_call(lambda: a @ b, number)
        y = _per_call(lambda: samebits.matmul(a, b), number)
        t_np.append(x), t_sb.append(y), ratio.append(y / x)
    return statistics.median(t_np), statistics.median(t_sb), statistics.median(ratio)


def floors(rounds: int) -> dict[str, float]:
    a = np.ones((16, 16), np.float32)
    c = np.empty((16, 16), np.float32)
    call = _lib.lib.sb_matmul
    packed = _abi.packer(_abi.MatmulArgs)(
        _paths.active_path_index(), _lib.MODE_FAST, 1, 16, 16, 16, a.ctypes.data, 16, 1,
        a.ctypes.data, 16, 1, 0, c.ctypes.data, 16, 0, 0, 0)
    tests = {
        "empty ctypes call, one pointer argument (sb_matmul(NULL))": lambda: call(None),
        "sb_matmul on prebuilt arguments, 16^3, one thread": lambda: call(packed),
        "numpy a @ b, 16^3": lambda: a @ a,
    }
    return {name: statistics.median(_per_call(f, 50000) for _ in range(rounds))
            for name, f in tests.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=11)
    rounds = parser.parse_args().rounds
    print(f"python {sys.version.split()[0]}, numpy {np.__version__}, samebits path "
          f"{samebits.path()}, threads {samebits.info()['threads']}")
    for name, t in floors(rounds).items():
        print(f"  {name:64s} {t * 1e6:6.2f} us")
    print("| m x k x n | numpy a @ b (us) | samebits.matmul (us) | samebits / numpy |")
    print("|---|---|---|---|")
    for m, k, n in SHAPES:
        t_np, t_sb, ratio = compare(m, k, n, rounds)
        print(f"| {m} x {k} x {n} | {t_np * 1e6:.2f} | {t_sb * 1e6:.2f} | {ratio:.2f} |")


if __name__ == "__main__":
    main()
