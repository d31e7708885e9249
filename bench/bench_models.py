"""Whole networks, side by side in one run: samebits.onnx (exact and fast)
against ONNX Runtime and torch eager on the same ONNX files.

    python bench/bench_models.py [--networks resnet50,...] [--batches 1,8]
                                 [--threads 1,2] [--rounds 3] [--quick]

The networks are samebits' reference networks (samebits.onnx.reference):
ResNet-50, MobileNetV3-large, the BERT-base encoder (sequence 128) and the
Whisper-small encoder. ONNX Runtime runs the file with its default graph
optimizations (it fuses BatchNormalization into Conv and more), one inter-op
thread and `threads` intra-op threads. torch runs the same graph node by node
in eager mode (bench/_torch_onnx.py) with torch.set_num_threads(threads).
Before timing, every library's output is checked against samebits exact
mode.

Timing: in each round every cell runs once, in turn (a cell of less than
0.3 s repeats until 0.3 s have passed and is averaged); with several threads
each cell starts after 0.3 s idle, so that other libraries' spinning worker
threads have stopped. Medians over the rounds; ratios are per-round speed
ratios (peer time / samebits time), median [lowest-highest]. Each network's
exact and fast time at batch 1 and 1 thread is also broken down by operator
type (samebits.onnx's profile), so that the slowest operator is visible.
Results: bench/results/models-DATE.{md,json,png}.
"""
from __future__ import annotations

import argparse
import datetime
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _machine  # noqa: E402
from bench_matmul import mean_time  # noqa: E402  (calls repeated for a minimum time)

import samebits  # noqa: E402
import samebits.onnx as so  # noqa: E402
from samebits.onnx import reference  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
NETWORKS = ("resnet50", "mobilenet_v3_large", "bert_base", "whisper_small_encoder")
MIN_SECONDS = 0.3
SETTLE_SECONDS = 0.3


def cells_for(network: str, data: bytes, feeds: dict, threads: int, model) -> tuple[list, dict]:
    """[(library, fn)] and {library: output} for one network, batch, thread count."""
    import onnxruntime as ort
    cells, outputs = [], {}
    for mode in ("exact", "fast"):
        sess = so.load(data, mode=mode, threads=threads)
        outputs[f"samebits {mode}"] = list(sess.run(feeds).values())[0]
        cells.append((f"samebits {mode}", lambda s=sess: s.run(feeds)))
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    sess = ort.InferenceSession(data, opts, providers=["CPUExecutionProvider"])
    outputs["onnxruntime"] = sess.run(None, feeds)[0]
    cells.append(("onnxruntime", lambda s=sess: s.run(None, feeds)))
    try:
        import torch
        from _torch_onnx import TorchGraph
        torch.set_num_threads(threads)
        graph = TorchGraph(model)
        outputs["torch"] = graph(feeds)[0]
        cells.append(("torch", lambda g=graph: g(feeds)))
    except ImportError:
        pass
    return cells, outputs


def check(outputs: dict) -> list[str]:
    ref = outputs["samebits exact"].astype(np.float64)
    scale = float(np.abs(ref).max())
    problems = []
    for lib, y in outputs.items():
        err = float(np.abs(y.astype(np.float64) - ref).max())
        if not err <= 1e-4 * max(scale, 1.0):
            problems.append(f"{lib}: max |diff| {err:.3g} from samebits exact (scale {scale:.3g})")
    return problems


def measure(args) -> dict:
    rows, profiles, problems = [], {}, []
    import onnx
    for network in args.networks:
        data = reference.build(network)
        model = onnx.load_from_string(data)
        for batch in args.batches:
            feeds = reference.inputs(network, batch)
            for threads in args.threads:
                cells, outputs = cells_for(network, data, feeds, threads, model)
                problems += [f"{network} b{batch} t{threads}: {p}" for p in check(outputs)]
                rounds = 1 if network == "whisper_small_encoder" and batch > 1 else args.rounds
                for _, fn in cells:
                    fn()
                times: dict = {lib: [] for lib, _ in cells}
                for _ in range(rounds):
                    for lib, fn in cells:
                        if threads > 1:
                            time.sleep(SETTLE_SECONDS)
                        times[lib].append(mean_time(fn, MIN_SECONDS))
                row = {"network": network, "batch": batch, "threads": threads,
                       "rounds": rounds, "times": times,
                       "median_ms": {k: 1e3 * statistics.median(v) for k, v in times.items()}}
                rows.append(row)
                print(f"{network:22s} b{batch} t{threads}  " + "  ".join(
                    f"{k}={v:.1f}ms" for k, v in row["median_ms"].items()), flush=True)
        for mode in ("exact", "fast"):
            sess = so.load(data, mode=mode, threads=1)
            feeds = reference.inputs(network, 1)
            sess.run(feeds)
            prof: dict = {}
            start = time.perf_counter()
            sess.run(feeds, profile=prof)
            total = time.perf_counter() - start
            profiles[f"{network} {mode}"] = {"total_s": total, "ops": {
                k: {"s": v[0], "count": v[1]} for k, v in prof.items()}}
    return {"rows": rows, "profiles": profiles, "problems": problems}


def ratio_text(row: dict, peer: str, mine: str) -> str:
    if peer not in row["times"] or mine not in row["times"]:
        return "-"
    r = [p / m for p, m in zip(row["times"][peer], row["times"][mine])]
    return f"{statistics.median(r):.2f} [{min(r):.2f}-{max(r):.2f}]"


def write(data: dict, out_dir: Path) -> Path:
    day = datetime.date.today().isoformat()
    info = samebits.info()
    try:
        import onnxruntime
        ort_version = onnxruntime.__version__
    except ImportError:
        ort_version = "-"
    try:
        import torch
        torch_version = torch.__version__
    except ImportError:
        torch_version = "-"
    lines = [f"# samebits.onnx: whole networks, {day}", "",
             f"CPU: {_machine.cpu_model()}; samebits {info['version']} on {info['path']}; ONNX "
             f"Runtime {ort_version}; torch {torch_version} (eager, the same ONNX graph node by "
             "node: bench/_torch_onnx.py). Medians over interleaved rounds (Whisper at batch 8: "
             "one round); ratios are speed ratios, peer time / samebits time (>1: samebits "
             "faster), median [lowest-highest] of the per-round ratios. Targets: fast >= 1.0x "
             "ONNX Runtime, exact >= 0.7x.", "",
             "| network | batch | threads | exact ms | fast ms | ORT ms | torch ms | "
             "fast vs ORT | exact vs ORT | fast vs torch | exact vs torch |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in data["rows"]:
        m = r["median_ms"]
        lines.append(
            f"| {r['network']} | {r['batch']} | {r['threads']} | {m['samebits exact']:.1f} | "
            f"{m['samebits fast']:.1f} | {m['onnxruntime']:.1f} | "
            f"{m.get('torch', float('nan')):.1f} | "
            f"{ratio_text(r, 'onnxruntime', 'samebits fast')} | "
            f"{ratio_text(r, 'onnxruntime', 'samebits exact')} | "
            f"{ratio_text(r, 'torch', 'samebits fast')} | "
            f"{ratio_text(r, 'torch', 'samebits exact')} |")
    lines += ["", "## Where the time goes (batch 1, 1 thread)", "",
              "samebits.onnx's profile: seconds per operator type over one run, the five "
              "largest (a fused node is named by what it absorbed).", ""]
    for key, p in data["profiles"].items():
        top = sorted(p["ops"].items(), key=lambda kv: -kv[1]["s"])[:5]
        parts = ", ".join(f"{k} {v['s'] * 1e3:.1f} ms ({100 * v['s'] / p['total_s']:.0f}%, "
                          f"{v['count']} nodes)" for k, v in top)
        lines.append(f"- **{key}** ({p['total_s'] * 1e3:.1f} ms): {parts}")
    if data["problems"]:
        lines += ["", "Problems: " + "; ".join(data["problems"])]
    out_dir.mkdir(parents=True, exist_ok=True)
    md = out_dir / f"models-{day}.md"
    md.write_text("\n".join(lines) + "\n")
    (out_dir / f"models-{day}.json").write_text(json.dumps(data, indent=1) + "\n")
    try:
        plot(data, out_dir / f"models-{day}.png")
    except ImportError:
        pass
    return md


def plot(data: dict, path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    rows = data["rows"]
    labels = [f"{r['network'].split('_')[0]}\nb{r['batch']} t{r['threads']}" for r in rows]
    fig, ax = plt.subplots(figsize=(max(8, 0.9 * len(rows)), 4.5))
    width = 0.27
    for i, (lib, color) in enumerate((("samebits fast", "#1f77b4"), ("samebits exact", "#ff7f0e"),
                                      ("torch", "#2ca02c"))):
        vals = [r["median_ms"]["onnxruntime"] / r["median_ms"][lib] if lib in r["median_ms"]
                else 0 for r in rows]
        ax.bar([x + (i - 1) * width for x in range(len(rows))], vals, width, label=lib,
               color=color)
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_xticks(range(len(rows)), labels, fontsize=7)
    ax.set_ylabel("speed relative to ONNX Runtime")
    ax.legend()
    ax.set_title("samebits.onnx vs ONNX Runtime and torch (eager), same ONNX graphs")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--networks", default=",".join(NETWORKS))
    parser.add_argument("--batches", default="1,8")
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="batch 1, 1 thread, 1 round")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results")
    args = parser.parse_args()
    args.networks = [n for n in args.networks.split(",") if n]
    args.batches = [int(b) for b in args.batches.split(",")]
    args.threads = [int(t) for t in args.threads.split(",")]
    if args.quick:
        args.batches, args.threads, args.rounds = [1], [1], 1
    data = measure(args)
    md = write(data, args.out)
    print(md.read_text())
    return 1 if data["problems"] else 0


if __name__ == "__main__":
    sys.exit(main())
