"""Node by node against ONNX Runtime: where a network's time goes in samebits
(Session.node_profile) and what ONNX Runtime spends on the same nodes (its
own profile, enable_profiling), the slowest first.

    python3 bench/node_profile.py MODEL.onnx [--feeds FILE.feeds] [--mode fast]
                                  [--threads 1] [--runs 30] [--top 25] [--no-ort]

Both runtimes fuse, differently: samebits keeps a Conv that absorbed its
BatchNormalization, Add and activation under the Conv's name; ONNX Runtime
names a fused or re-laid-out node after one of its nodes or one of its output
values (`relu_5_nchwc`). Each ONNX Runtime kernel is matched to a node of the
file by name or output name (suffixes such as `_nchwc` dropped), and a file
node samebits absorbed is charged to the node that absorbed it (the producer
of its first input, followed up until a node samebits kept). ONNX Runtime
kernels that match no node of the file (its layout reorders) are listed
apart. Times are the mean per run over `runs` runs after 3 warm-up runs,
each runtime at `threads` threads; inputs are the feeds file's (the models
suite's .feeds) or portable test values.
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "py"))
import samebits.onnx as so  # noqa: E402
from samebits.testing import portable_values  # noqa: E402

SUFFIXES = re.compile(r"(_nchwc|_fused|_token_\d+|_output_\d+)+$")


def feeds_for(session: so.Session, feeds_file: str | None) -> dict[str, Any]:
    if feeds_file:
        from samebits.onnx import suite
        return {k: np.asarray(v) for k, v in
                suite.unpack_feeds(Path(feeds_file).read_bytes()).items()}
    feeds = {}
    for k, info in enumerate(session.inputs):
        shape = tuple(d if isinstance(d, int) and d >= 0 else 1 for d in info.shape or ())
        feeds[info.name] = (portable_values(shape, k) if info.dtype == "float32"
                            else np.zeros(shape, dtype=info.dtype))
    return feeds


def samebits_nodes(data: bytes, feeds: dict, mode: str, threads: int, runs: int
                   ) -> list[so.NodeTime]:
    s = so.load(data, mode=mode, threads=threads)
    for _ in range(3):
        s.run(feeds)
    for _ in range(runs):
        s.run(feeds, profile=True)
    return s.node_profile


def ort_kernels(data: bytes, feeds: dict, threads: int, runs: int
                ) -> list[tuple[str, str, float]]:
    """(name, op, seconds per run) of each ONNX Runtime kernel."""
    import onnxruntime as ort
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    with tempfile.TemporaryDirectory() as tmp:
        warm = ort.InferenceSession(data, opts, providers=["CPUExecutionProvider"])
        for _ in range(3):
            warm.run(None, feeds)
        opts.enable_profiling = True
        opts.profile_file_prefix = os.path.join(tmp, "ort")
        sess = ort.InferenceSession(data, opts, providers=["CPUExecutionProvider"])
        for _ in range(3):   # (warm-up runs are in the profile too: skipped below)
            sess.run(None, feeds)
        for _ in range(runs):
            sess.run(None, feeds)
        events = json.loads(Path(sess.end_profiling()).read_text())
    kernels = [e for e in events if e.get("cat") == "Node" and e["name"].endswith("_kernel_time")]
    per_run = len(kernels) // (runs + 3)
    total: dict[str, list] = collections.OrderedDict()
    for e in kernels[3 * per_run:]:
        name = e["name"][:-len("_kernel_time")]
        entry = total.setdefault(name, [e["args"].get("op_name", "?"), 0.0])
        entry[1] += e["dur"] * 1e-6
    return [(name, op, seconds / runs) for name, (op, seconds) in total.items()]


def owner_of_file_nodes(model: Any, kept: set[int]) -> dict[int, int]:
    """Each file node's position -> the position of the samebits node that
    runs it (itself, or the node that absorbed it)."""
    producer = {}
    for k, n in enumerate(model.graph.node):
        for v in n.output:
            producer[v] = k
    owner = {}
    for k, n in enumerate(model.graph.node):
        at, seen = k, set()
        while at not in kept and at not in seen:
            seen.add(at)
            inputs = [v for v in model.graph.node[at].input if v in producer]
            if not inputs:
                break
            at = producer[inputs[0]]
        if at in kept:
            owner[k] = at
    return owner


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model")
    ap.add_argument("--feeds")
    ap.add_argument("--mode", choices=("fast", "exact"), default="fast")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--no-ort", action="store_true")
    args = ap.parse_args()
    data = Path(args.model).read_bytes()
    feeds = feeds_for(so.load(data), args.feeds)
    nodes = samebits_nodes(data, feeds, args.mode, args.threads, args.runs)
    ort_by_node: dict[int, float] = collections.defaultdict(float)
    ort_apart: list[tuple[str, str, float]] = []
    ort_total = 0.0
    if not args.no_ort:
        import onnx
        model = onnx.load_from_string(data)
        by_name = {}
        for k, n in enumerate(model.graph.node):
            for key in (n.name, *n.output):
                if key:
                    by_name.setdefault(key.lower(), k)
        owner = owner_of_file_nodes(model, {t.index for t in nodes})
        for name, op, seconds in ort_kernels(data, feeds, args.threads, args.runs):
            ort_total += seconds
            k = by_name.get(name.lower(), by_name.get(SUFFIXES.sub("", name).lower()))
            if k is not None and k in owner:
                ort_by_node[owner[k]] += seconds
            else:
                ort_apart.append((name, op, seconds))
    sb_total = sum(t.seconds for t in nodes) / args.runs
    print(f"{Path(args.model).name}: mode={args.mode} threads={args.threads}, mean of "
          f"{args.runs} runs; samebits nodes {sb_total * 1e3:.3f} ms"
          + ("" if args.no_ort else f", ONNX Runtime kernels {ort_total * 1e3:.3f} ms"))
    print(f"{'samebits us':>12} {'ORT us':>9} {'ORT/sb':>7}  op  name")
    for t in sorted(nodes, key=lambda t: -t.seconds)[:args.top]:
        mine = t.seconds / args.runs * 1e6
        theirs = ort_by_node.get(t.index, 0.0) * 1e6
        ratio = f"{theirs / mine:7.2f}" if theirs and mine else f"{'-':>7}"
        print(f"{mine:12.1f} {theirs:9.1f} {ratio}  {t.op}  {t.name or '(unnamed)'} "
              f"(node {t.index})")
    if ort_apart:
        apart = sum(s for _, _, s in ort_apart)
        print(f"ONNX Runtime kernels matching no node of the file: {apart * 1e6:.1f} us in "
              f"{len(ort_apart)} (slowest: " + ", ".join(
                  f"{n} {op} {s * 1e6:.1f}" for n, op, s in
                  sorted(ort_apart, key=lambda e: -e[2])[:5]) + ")")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
