"""One library's session in a process of its own, timed on request: the
worker behind bench_models.py --isolated.

    python3 bench/_cell_worker.py LIBRARY MODEL.onnx FEEDS.npz THREADS OUTPUT.npy

LIBRARY is "samebits exact", "samebits fast" or "onnxruntime". The worker
loads MODEL, runs it once on FEEDS, saves the first output to OUTPUT.npy and
prints "ready"; then for each line "time SECONDS" on stdin it prints the mean
seconds per call of calls repeated for at least SECONDS (bench_matmul's
mean_time), and it exits at "quit" or the end of its input. Why a process:
two runtimes' thread pools in one process share its two cores, and ONNX
Runtime's intra-op threads spin after each call; at 2 threads the in-process
cells measured samebits' ResNet-50 at 26.4 ms where it ran 23.7 ms alone.
"""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_matmul import mean_time  # noqa: E402


def session(library: str, data: bytes, threads: int):
    """(run, first output) for the library's session of the model."""
    if library.startswith("samebits "):
        import samebits.onnx as so
        sess = so.load(data, mode=library.split()[1], threads=threads)
        return lambda feeds: sess.run(feeds), lambda out: list(out.values())[0]
    if library == "onnxruntime":
        import onnxruntime as ort
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = threads
        opts.inter_op_num_threads = 1
        ort_sess = ort.InferenceSession(data, opts, providers=["CPUExecutionProvider"])
        return lambda feeds: ort_sess.run(None, feeds), lambda out: out[0]
    raise SystemExit(f"_cell_worker: unknown library {library!r}")


def main() -> int:
    library, model, feeds_file, threads, output = sys.argv[1:6]
    with np.load(feeds_file) as f:
        feeds = {k: f[k] for k in f.files}
    run, first = session(library, Path(model).read_bytes(), int(threads))
    np.save(output, np.asarray(first(run(feeds))))
    print("ready", flush=True)
    for line in sys.stdin:
        words = line.split()
        if not words or words[0] == "quit":
            break
        if words[0] == "time":
            print(json.dumps(mean_time(lambda: run(feeds), float(words[1]))), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
