"""The per-run cost of a node, for two builds of samebits side by side (issue 38).

    python bench/node_cost.py --library before=/tmp/before/libsamebits.so \
        [--library after=...] [--rounds 7] [--threads 1] [--out FILE.md]

Each library (and ONNX Runtime) runs in a worker process of its own
(SAMEBITS_LIBRARY names the library; the Python package is this checkout's),
and the parent interleaves them: in each round every model runs in every
worker in turn, each timed as the mean of as many runs as fit in --seconds.
The figures are the median over rounds, with the lowest and highest round.

Models (every weight an initializer, float32):
- conv_chain50: 50 chained Conv 3x3 (16 -> 16 channels, pad 1, bias) on 1 x 16 x 8 x 8;
- add_chain1000: 1,000 chained Adds of a constant on 16 floats (bench_models.py's chain);
- vad_small, squeezenet_small, onehot_classifier: samebits.onnx.reference's small networks.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
MODELS = ("conv_chain50", "add_chain1000", "vad_small", "squeezenet_small", "onehot_classifier")


def build(name: str) -> tuple[bytes, dict]:
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper
    from samebits.onnx import reference
    if name == "conv_chain50":
        rng = np.random.default_rng(0)
        inits, nodes, prev = [], [], "x"
        for i in range(50):
            w = (rng.standard_normal((16, 16, 3, 3)) * 0.1).astype(np.float32)
            b = (rng.standard_normal(16) * 0.01).astype(np.float32)
            inits += [numpy_helper.from_array(w, f"w{i}"), numpy_helper.from_array(b, f"b{i}")]
            out = "y" if i == 49 else f"t{i}"
            nodes.append(helper.make_node("Conv", [prev, f"w{i}", f"b{i}"], [out], pads=[1, 1, 1, 1]))
            prev = out
        g = helper.make_graph(nodes, "conv_chain50",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16, 8, 8])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16, 8, 8])], inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
        m.ir_version = 8
        return m.SerializeToString(), {"x": rng.standard_normal((1, 16, 8, 8)).astype(np.float32)}
    if name == "add_chain1000":
        sys.path.insert(0, str(HERE))
        import bench_models
        return bench_models.chain_model(1000), {
            "x": reference.uniform("chain.x", (bench_models.CHAIN_WIDTH,), 1.0)}
    return reference.build(name), reference.inputs(name, 1)


def worker(lib: str, threads: int) -> None:
    """Reads "name mode seconds" lines; answers the mean seconds per run."""
    sessions = {}
    for name in MODELS:
        data, feeds = build(name)
        for mode in ("exact", "fast"):
            if lib == "onnxruntime":
                if mode == "exact":
                    continue
                import onnxruntime as ort
                opts = ort.SessionOptions()
                opts.intra_op_num_threads = threads
                opts.inter_op_num_threads = 1
                s = ort.InferenceSession(data, opts, providers=["CPUExecutionProvider"])
                fn = (lambda s=s, f=feeds: s.run(None, f))
                nodes = None
            else:
                import samebits.onnx as so
                s = so.load(data, mode=mode, threads=threads)
                fn = (lambda s=s, f=feeds: s.run(f))
                nodes = s.node_count
            fn()
            sessions[(name, mode)] = (fn, nodes)
    print(json.dumps({"ready": {f"{n} {m}": v[1] for (n, m), v in sessions.items()}}), flush=True)
    for line in sys.stdin:
        name, mode, seconds = line.split()
        if (name, mode) not in sessions:
            print(json.dumps(None), flush=True)
            continue
        fn = sessions[(name, mode)][0]
        count, start = 0, time.perf_counter()
        while True:
            fn()
            count += 1
            elapsed = time.perf_counter() - start
            if elapsed >= float(seconds):
                break
        print(json.dumps(elapsed / count), flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--library", action="append", default=[], metavar="NAME=PATH",
                    help="a samebits build to measure (default: the installed one, as 'installed')")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--seconds", type=float, default=0.3)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--out", type=Path)
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        worker(args.worker, args.threads)
        return
    libs = [tuple(spec.split("=", 1)) for spec in args.library] or [("installed", "")]
    workers = {}
    for name, path in libs + [("onnxruntime", "")]:
        env = dict(os.environ)
        if path:
            env["SAMEBITS_LIBRARY"] = path
        p = subprocess.Popen([sys.executable, __file__, "--worker", "onnxruntime" if name == "onnxruntime" else name,
                              "--threads", str(args.threads)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             text=True, env=env)
        ready = json.loads(p.stdout.readline())["ready"]
        workers[name] = (p, ready)
    times: dict = {}
    for _ in range(args.rounds):
        for model in MODELS:
            for mode in ("exact", "fast"):
                for name, (p, _) in workers.items():
                    p.stdin.write(f"{model} {mode} {args.seconds}\n")
                    p.stdin.flush()
                    t = json.loads(p.stdout.readline())
                    if t is not None:
                        times.setdefault((model, mode, name), []).append(t)
    for p, _ in workers.values():
        p.stdin.close()
        p.wait()
    nodes = {name: ready for name, (_, ready) in workers.items()}
    lines = [f"# The per-run cost of a node: {', '.join(n for n, _ in libs)} and ONNX Runtime",
             "", f"bench/node_cost.py, {args.threads} thread(s), {args.rounds} interleaved rounds of "
             f"{args.seconds} s per cell; median per run (lowest - highest round). Per node: the "
             "run divided by the nodes samebits runs after loading.", "",
             "| model | mode | " + " | ".join(f"{n} ms" for n in workers) + " | " +
             " | ".join(f"{n} us/node" for n, _ in libs) + " |",
             "| --- | --- | " + " | ".join("---" for _ in workers) + " | " + " | ".join("---" for _ in libs) + " |"]
    for model in MODELS:
        for mode in ("exact", "fast"):
            cells, per_node = [], []
            for name in workers:
                r = times.get((model, mode, name))
                cells.append("-" if not r else f"{1e3 * statistics.median(r):.3f} ({1e3 * min(r):.3f} - "
                             f"{1e3 * max(r):.3f})")
            for name, _ in libs:
                r = times.get((model, mode, name))
                n = nodes[name].get(f"{model} {mode}")
                per_node.append("-" if not r or not n else f"{1e6 * statistics.median(r) / n:.3f}")
            lines.append(f"| {model} | {mode} | " + " | ".join(cells) + " | " + " | ".join(per_node) + " |")
    lines += ["", "Nodes after loading: " + "; ".join(
        f"{m} {nodes[libs[0][0]].get(f'{m} exact')}" for m in MODELS)]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        args.out.write_text(text)


if __name__ == "__main__":
    main()
