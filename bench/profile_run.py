"""One product, repeated for a few seconds of CPU time: the workload to run under a profiler.

    python3 bench/profile_run.py samebits|numpy M K N SECONDS
    perf record -e cpu-clock -F 4000 -o out.data -- python3 bench/profile_run.py ...

Runs `samebits.matmul(a, b, out=c)` (fast mode) or numpy's `np.matmul(a, b,
out=c)` on random float32 operands until SECONDS of process CPU time have
passed, then prints the calls made and the rate. Rates use CPU time
(time.process_time), not wall time: on a shared machine, with one thread
(SAMEBITS_THREADS=1, OPENBLAS_NUM_THREADS=1), CPU time is the time the product
actually ran. bench/results/profile-2026-11-29.md shows what it was used for.
"""
from __future__ import annotations

import sys
import time

import numpy as np

import samebits


def main() -> None:
    if len(sys.argv) != 6 or sys.argv[1] not in ("samebits", "numpy"):
        raise SystemExit(__doc__)
    which = sys.argv[1]
    m, k, n = (int(x) for x in sys.argv[2:5])
    seconds = float(sys.argv[5])
    rng = np.random.default_rng(0)
    a = rng.standard_normal((m, k), dtype=np.float32)
    b = rng.standard_normal((k, n), dtype=np.float32)
    c = np.empty((m, n), np.float32)
    if which == "samebits":
        def run():
            samebits.matmul(a, b, out=c)
    else:
        def run():
            np.matmul(a, b, out=c)
    run()   # warm-up: workspace, page faults
    calls, start = 0, time.process_time()
    while time.process_time() - start < seconds:
        run()
        calls += 1
    cpu = time.process_time() - start
    if calls == 0:
        print(f"{which} {m}x{k}x{n}: warm-up call only")
        return
    print(f"{which} {m}x{k}x{n}: path {samebits.path()}, samebits threads "
          f"{samebits.info()['threads']}, {calls} calls (+1 warm-up), "
          f"{cpu / calls * 1e3:.3f} CPU-ms per call, {2 * m * n * k * calls / cpu / 1e9:.1f} GFLOP/s")


if __name__ == "__main__":
    main()
