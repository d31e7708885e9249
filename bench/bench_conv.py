"""Side-by-side convolution benchmark: samebits.conv2d (fast and exact, 1 thread
and all threads) against torch.nn.functional.conv2d and ONNX Runtime's Conv on
every distinct convolution of ResNet-50 and MobileNetV3-large (224 x 224),
at batch 1 and 8 (--batch), in one process, one run.

    python bench/bench_conv.py [--quick] [--models RE] [--layers RE] [--batch 1,8] [--out bench/results]

Method (bench/README.md): per cell, two warm-up calls, then calls repeated for
at least 80 ms and averaged; the median of three such means. Inputs, weights
and outputs are allocated outside the timing. Each library holds its weights as
a model would: samebits gets them prepacked once by samebits.pack_conv2d
(outside the timing), ONNX Runtime as initializers of a one-node Conv model
(prepacked by ORT when the session is made), torch as a plain tensor. The cells
of one layer are timed one after the other (samebits fast, exact, torch, ORT at
one thread count, then the next thread count) so that a disturbance on a shared
machine falls on all of them alike; every measurement starts after
SETTLE_SECONDS idle. Every layer is timed at each batch size N, input
(N, C, H, W), the same for every library. Every library's output is checked
against the others. Model rows sum count x time over the distinct layers of a
model, per batch size and thread count. No bias and no activation: the
convolution alone.
"""
from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import re
import sys
import time
from pathlib import Path

# numpy only checks outputs here; one OpenBLAS thread keeps its workers from
# spinning beside the libraries being timed (set before numpy loads it).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

import samebits  # noqa: E402
from samebits.bench import time_call_spread  # noqa: E402
from samebits.shapes import CONV_MODELS, ConvShape  # noqa: E402

from _machine import (cpu_model, cpu_ticks, free_stem, load_note, load_sample,  # noqa: E402
                      others_share, stolen_share)

# --quick: one layer of each kind (stem, 3x3, strided 3x3, 1x1, strided 1x1,
# depthwise 3x3 and 5x5), short timing, nothing written unless --out is given
QUICK_LAYERS = {
    "ResNet-50": ("stem7x7", "l2.0.conv2", "l3.1-5.conv2", "l3.1-5.conv1", "l4.0.down"),
    "MobileNetV3-large": ("b1.dw3x3", "b13.dw5x5+b14.dw5x5", "b11.expand+b12.expand"),
}


SETTLE_SECONDS = 0.2   # idle time before each measurement


def have_conv() -> bool:
    return hasattr(samebits, "conv2d") and hasattr(samebits, "pack_conv2d")


class Baselines:
    """torch.nn.functional.conv2d and ONNX Runtime's Conv for one layer."""

    def __init__(self) -> None:
        try:
            import torch
            self.torch = torch
        except ImportError:
            self.torch = None
        try:
            import onnx
            import onnxruntime
            self.ort, self.onnx = onnxruntime, onnx
        except ImportError:
            self.ort = self.onnx = None

    def set_threads(self, threads: int) -> None:
        """Applied outside the timed calls."""
        if self.torch is not None:
            self.torch.set_num_threads(threads)

    def torch_conv(self, s: ConvShape, x, w):
        """torch's conv2d has no out= argument: the output is allocated in each call."""
        if self.torch is None:
            return None, None
        torch = self.torch
        tx, tw = torch.from_numpy(x), torch.from_numpy(w)
        f = torch.nn.functional.conv2d

        def run():
            return f(tx, tw, None, s.stride, s.padding, 1, s.groups)
        with torch.inference_mode():
            return run, run().numpy()

    def ort_conv(self, s: ConvShape, x, w, out, threads: int):
        """A one-node Conv model, W an initializer; output bound to `out`."""
        if self.ort is None:
            return None, None
        h, f = self.onnx.helper, self.onnx.TensorProto.FLOAT
        node = h.make_node("Conv", ["X", "W"], ["Y"], kernel_shape=[s.kh, s.kw],
                           strides=[s.stride, s.stride], pads=[s.padding] * 4,
                           dilations=[1, 1], group=s.groups)
        graph = h.make_graph([node], "conv", [h.make_tensor_value_info("X", f, list(x.shape))],
                             [h.make_tensor_value_info("Y", f, list(out.shape))],
                             initializer=[self.onnx.numpy_helper.from_array(w, "W")])
        model = h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])
        model.ir_version = 8
        opts = self.ort.SessionOptions()
        opts.intra_op_num_threads = threads
        opts.inter_op_num_threads = 1
        opts.execution_mode = self.ort.ExecutionMode.ORT_SEQUENTIAL
        session = self.ort.InferenceSession(model.SerializeToString(), opts,
                                            providers=["CPUExecutionProvider"])
        binding = session.io_binding()
        binding.bind_cpu_input("X", x)
        binding.bind_output("Y", "cpu", element_type=np.float32, shape=out.shape,
                            buffer_ptr=out.ctypes.data)

        def run():
            session.run_with_iobinding(binding)
        run()
        return run, out.copy()


def macs(s: ConvShape) -> int:
    return s.macs


def shape_label(s: ConvShape) -> str:
    kind = "dw " if s.groups == s.c and s.groups > 1 else ""
    return (f"{s.c}x{s.h}x{s.w} -> {s.cout}x{s.out_h}x{s.out_w}, {kind}{s.kh}x{s.kw}"
            f"/{s.stride}" + (f" p{s.padding}" if s.padding else ""))


def check(name: str, got: np.ndarray, ref: np.ndarray, s: ConvShape) -> str | None:
    """Within 1e-3 * sqrt(taps) of the reference (standard normal inputs and weights)."""
    taps = (s.c // s.groups) * s.kh * s.kw
    err = float(np.abs(got.astype(np.float64) - ref).max()) if got.size else 0.0
    tol = 1e-3 * math.sqrt(taps)
    return None if err <= tol else f"{name}: max |diff| {err:.3g} > {tol:.3g}"


def layer_row(model: str, s: ConvShape, batch: int, w, packed, rng, base: Baselines,
              thread_counts: list[int], timer) -> dict:
    """Every cell of one layer at one batch size, the libraries one after the
    other at each thread count; the outputs checked against each other."""
    conv = packed is not None
    x = rng.standard_normal((batch, s.c, s.h, s.w), dtype=np.float32)
    out = np.empty((batch, s.cout, s.out_h, s.out_w), dtype=np.float32)
    ort_out = np.empty_like(out)
    row = {"model": model, "name": s.name, "batch": batch, "shape": shape_label(s),
           "conv": {k: getattr(s, k) for k in ("c", "h", "w", "cout", "kh", "kw", "stride",
                                               "padding", "groups")},
           "count": s.count, "macs": macs(s) * batch, "cells": {}, "spread": {}, "check": []}

    def put(key: str, fn) -> None:
        """Times fn: the median in cells, (lowest, highest) in spread."""
        median, low, high = timer(fn)
        row["cells"][key], row["spread"][key] = median, [low, high]
    ticks, load = cpu_ticks(), load_sample()
    outputs = {}
    torch_fn, outputs["torch"] = base.torch_conv(s, x, w)
    if conv:
        for mode in ("fast", "exact"):
            outputs[f"samebits {mode}"] = samebits.conv2d(
                x, packed, stride=s.stride, padding=s.padding, groups=s.groups,
                mode=mode).copy()
    ref = outputs.get("samebits exact", outputs["torch"])
    for threads in thread_counts:
        samebits_threads = 1 if threads == 1 else None     # None: every core
        base.set_threads(threads)
        if conv:
            for mode in ("fast", "exact"):
                def call(mode=mode):
                    samebits.conv2d(x, packed, stride=s.stride, padding=s.padding,
                                    groups=s.groups, mode=mode, out=out,
                                    threads=samebits_threads)
                put(f"samebits {mode} t{threads}", call)
                outputs[f"samebits {mode} out= t{threads}"] = out.copy()
        if torch_fn is not None:
            with base.torch.inference_mode():
                put(f"torch t{threads}", torch_fn)
        ort_fn, outputs[f"onnxruntime t{threads}"] = base.ort_conv(s, x, w, ort_out, threads)
        if ort_fn is not None:
            put(f"onnxruntime t{threads}", ort_fn)
    if ref is not None:
        ref = ref.astype(np.float64)
        for name, got in outputs.items():
            if got is not None:
                problem = check(name, got, ref, s)
                if problem:
                    row["check"].append(problem)
    row["stolen_share"] = stolen_share(ticks, cpu_ticks())
    row["others_share"] = others_share(load, load_sample())
    return row


def measure(args) -> dict:
    ticks_at_start, load_at_start = cpu_ticks(), load_sample()
    rng = np.random.default_rng(0)
    cores = samebits.info()["threads"]
    thread_counts = [1] if cores == 1 else [1, cores]
    base = Baselines()
    conv = have_conv()
    if not conv:
        print("samebits has no conv2d yet: timing torch and ONNX Runtime only", flush=True)
    measure_once = (lambda fn: time_call_spread(fn, min_seconds=0.01, repeats=1, warmup=1)) \
        if args.quick else time_call_spread

    def timer(fn):
        # Let the previous measurement's spinning workers (ONNX Runtime's and
        # OpenMP's spin after each run; numpy's OpenBLAS after the output
        # checks) go to sleep first: on a 2-core machine they would share
        # the cores with the next library timed.
        time.sleep(SETTLE_SECONDS)
        return measure_once(fn)
    results, failures = [], []
    for model, layers in CONV_MODELS.items():
        if args.models and not re.search(args.models, model):
            continue
        for s in layers:
            if args.quick and s.name not in QUICK_LAYERS.get(model, ()):
                continue
            if args.layers and not re.search(args.layers, s.name):
                continue
            w = rng.standard_normal((s.cout, s.c // s.groups, s.kh, s.kw), dtype=np.float32)
            packed = samebits.pack_conv2d(w, groups=s.groups) if conv else None
            for batch in args.batch:
                row = layer_row(model, s, batch, w, packed, rng, base, thread_counts, timer)
                failures += [f"{model} {s.name} batch {batch}: {p}" for p in row["check"]]
                flop = 2.0 * row["macs"]
                print(f"{model:18s} {s.name:32s} b{batch:<3d} " + "  ".join(
                    f"{key}={v * 1e3:.3f}ms ({flop / v / 1e9:.1f})"
                    for key, v in row["cells"].items()), flush=True)
                results.append(row)
    ort = base.ort
    return {"results": results, "threads": thread_counts, "cores": cores,
            "batches": args.batch, "settle_seconds": SETTLE_SECONDS,
            "stolen_share": stolen_share(ticks_at_start, cpu_ticks()),
            "others_share": others_share(load_at_start, load_sample()),
            "samebits_conv": conv, "quick": bool(args.quick),
            "layers_in_model": {m: len(v) for m, v in CONV_MODELS.items()},
            "torch": getattr(base.torch, "__version__", None),
            "torch_mkldnn": bool(base.torch and base.torch.backends.mkldnn.is_available()),
            "onnxruntime": getattr(ort, "__version__", None),
            "numpy": np.__version__, "samebits": samebits.info(), "cpu": cpu_model(),
            "date": datetime.date.today().isoformat(), "failures": failures}


def ms(v) -> str:
    return f"{v * 1e3:.3f}" if v else "-"


def ms_spread(row: dict, key: str) -> str:
    """A layer cell's median ms with its lowest and highest repetition."""
    v, lo_hi = row["cells"].get(key), row.get("spread", {}).get(key)
    if not v:
        return "-"
    return f"{v * 1e3:.3f} ({lo_hi[0] * 1e3:.3f}-{lo_hi[1] * 1e3:.3f})" if lo_hi else ms(v)


def speed(peer, mine) -> str:
    """Speed ratio (>1: `mine` faster)."""
    return f"{peer / mine:.2f}" if peer and mine else "-"


def threads_label(t: int) -> str:
    return f"{t} thread{'s' if t > 1 else ''}"


def header(data: dict) -> list[str]:
    batches = ", ".join(str(b) for b in data["batches"])
    return [f"# samebits convolution benchmark, {data['date']}" + (" (--quick)" if data["quick"] else ""),
            "",
            f"CPU: {data['cpu']}; threads: {data['threads']}; batch sizes: {batches}; samebits "
            f"{data['samebits']['version']} path {data['samebits']['path']} "
            f"({data['samebits']['compiler']}); torch {data['torch']} "
            f"(oneDNN {'on' if data['torch_mkldnn'] else 'off'}); onnxruntime {data['onnxruntime']}."
            + load_note(data.get("stolen_share"), data.get("others_share")),
            "",
            ("Times (--quick, a smoke test): one repetition of calls run for at least 10 ms "
             "after 1 warm-up call" if data["quick"] else
             "Times are medians over 3 repetitions of the mean of calls run for at least 80 ms "
             "after 2 warm-up calls, shown as median (lowest-highest repetition)")
            + f", each started after {SETTLE_SECONDS} s idle (so that no "
            "library's spinning worker threads from the previous measurement share the cores)"
            f". Batch sizes N = {batches}: every layer's input is (N, C, H, W), NCHW "
            "(224 x 224 at the stem), the same for every library; no bias, no activation. "
            "samebits: "
            "`conv2d(x, pack_conv2d(w), out=...)` "
            "with the weights prepacked once outside the timing, `threads=1` / `threads=None` "
            "(every core); torch: `torch.nn.functional.conv2d` (no `out=`: it allocates its "
            "output in each call) under `torch.set_num_threads` and `torch.inference_mode()`; "
            "ONNX Runtime: a one-node Conv model with the weights as an initializer, default "
            "graph optimizations, "
            "`intra_op_num_threads` 1 / all, sequential execution, output bound to a "
            "preallocated array. MMAC and GFLOP/s count the whole batch; GFLOP/s = "
            "2 x multiply-adds / time. Ratios are speed ratios "
            "(>1: samebits faster); exact/fast is the exact mode's speed relative to fast.", ""]


def layer_table(model: str, batch: int, t: int, rows: list[dict]) -> list[str]:
    lines = [f"## {model}, batch {batch}, {threads_label(t)}", "",
             "| layer | shape | count | MMAC | fast ms | fast GFLOP/s | exact ms | "
             "exact GFLOP/s | exact/fast | torch ms | torch GFLOP/s | ORT ms | ORT GFLOP/s | "
             "fast vs torch | exact vs torch | fast vs ORT | exact vs ORT |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for row in rows:
        c = row["cells"]
        fast, exact = c.get(f"samebits fast t{t}"), c.get(f"samebits exact t{t}")
        tor, ort = c.get(f"torch t{t}"), c.get(f"onnxruntime t{t}")
        flop = 2.0 * row["macs"]

        def gf(v):
            return f"{flop / v / 1e9:.1f}" if v else "-"
        lines.append(
            f"| {row['name']} | {row['shape']} | {row['count']} | {row['macs'] / 1e6:.1f} | "
            f"{ms_spread(row, f'samebits fast t{t}')} | {gf(fast)} | "
            f"{ms_spread(row, f'samebits exact t{t}')} | {gf(exact)} | {speed(fast, exact)} | "
            f"{ms_spread(row, f'torch t{t}')} | {gf(tor)} | {ms_spread(row, f'onnxruntime t{t}')} | "
            f"{gf(ort)} | {speed(tor, fast)} | "
            f"{speed(tor, exact)} | {speed(ort, fast)} | {speed(ort, exact)} |")
    return lines + [""]


def model_totals(data: dict, groups: dict) -> dict:
    """(model, batch, threads) -> each library's chain time: the sum over the
    model's distinct layers of count x time (None where a cell is missing)."""
    totals = {}
    for (model, batch), rows in groups.items():
        for t in data["threads"]:
            def total(key):
                if any(key not in r["cells"] for r in rows):
                    return None
                return sum(r["count"] * r["cells"][key] for r in rows)
            totals[(model, batch, t)] = {
                "fast": total(f"samebits fast t{t}"), "exact": total(f"samebits exact t{t}"),
                "torch": total(f"torch t{t}"), "onnxruntime": total(f"onnxruntime t{t}")}
    return totals


def model_table(data: dict, groups: dict, totals: dict) -> list[str]:
    lines = ["## Model rows: sum over distinct layers of count x time", ""]
    if any(len(rows) < data["layers_in_model"][m] for (m, _), rows in groups.items()):
        lines += ["Only the layers timed in this run (see the layers column); not a whole model.", ""]
    lines += ["| model | batch | threads | layers | GMAC | fast ms | exact ms | exact/fast | torch ms | "
              "ORT ms | fast vs torch | exact vs torch | fast vs ORT | exact vs ORT |",
              "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    fmt = lambda x: f"{x * 1e3:.1f}" if x else "-"  # noqa: E731
    for (model, batch), rows in groups.items():
        gmac = sum(r["count"] * r["macs"] for r in rows) / 1e9
        for t in data["threads"]:
            v = totals[(model, batch, t)]
            fast, exact, tor, ort = v["fast"], v["exact"], v["torch"], v["onnxruntime"]
            lines.append(f"| {model} | {batch} | {t} | {len(rows)}/{data['layers_in_model'][model]} | "
                         f"{gmac:.3f} | {fmt(fast)} | {fmt(exact)} | {speed(fast, exact)} | "
                         f"{fmt(tor)} | {fmt(ort)} | {speed(tor, fast)} | {speed(tor, exact)} | "
                         f"{speed(ort, fast)} | {speed(ort, exact)} |")
    return lines + [""]


LIBRARIES = ("fast", "exact", "torch", "onnxruntime")
LIBRARY_COLUMNS = "samebits fast | samebits exact | torch | ORT |"


def scaling_tables(data: dict, groups: dict, totals: dict) -> list[str]:
    """Thread scaling (model time at 1 thread / at all) and, with batch 1 and
    larger batches, batch scaling (time per image at batch 1 / at batch N)."""
    lines = []
    threads, batches = data["threads"], data["batches"]
    if len(threads) > 1:
        t = threads[-1]
        lines += [f"### Thread scaling: model time at 1 thread / at {t} threads", "",
                  f"| model | batch | {LIBRARY_COLUMNS}", "|---|---|---|---|---|---|"]
        for model, batch in groups:
            one, many = totals[(model, batch, 1)], totals[(model, batch, t)]
            lines.append(f"| {model} | {batch} | "
                         + " | ".join(speed(one[k], many[k]) for k in LIBRARIES) + " |")
        lines.append("")
    if 1 in batches and len(batches) > 1:
        lines += ["### Batch scaling: time per image at batch 1 / at batch N", "",
                  f"| model | batch | threads | {LIBRARY_COLUMNS}", "|---|---|---|---|---|---|---|"]
        for model, batch in groups:
            if batch == 1 or (model, 1) not in groups:
                continue
            for t in threads:
                one, many = totals[(model, 1, t)], totals[(model, batch, t)]
                lines.append(f"| {model} | {batch} | {t} | " + " | ".join(
                    speed(one[k] and one[k] * batch, many[k]) for k in LIBRARIES) + " |")
        lines.append("")
    return lines


def write_report(data: dict, out_dir: Path | None) -> str:
    lines = header(data)
    if not data["samebits_conv"]:
        lines += ["**samebits had no conv2d in this run: only torch and ONNX Runtime were timed.**", ""]
    groups: dict = {}                       # (model, batch) -> rows, in the order timed
    for row in sorted(data["results"], key=lambda r: r["batch"]):
        groups.setdefault((row["model"], row["batch"]), []).append(row)
    for batch in data["batches"]:
        for t in data["threads"]:
            for (model, b), rows in groups.items():
                if b == batch:
                    lines += layer_table(model, batch, t, rows)
    totals = model_totals(data, groups)
    lines += model_table(data, groups, totals)
    lines += scaling_tables(data, groups, totals)
    data["model_rows"] = [{"model": m, "batch": b, "threads": t, **v}
                          for (m, b, t), v in totals.items()]
    if data["failures"]:
        lines += ["## Output check failures", ""] + [f"- {f}" for f in data["failures"]] + [""]
    text = "\n".join(lines)
    if out_dir is not None:
        out_dir.mkdir(parents=True, exist_ok=True)
        stem = free_stem(out_dir, f"conv-{data['date']}", (".md", ".json", ".png"))
        (out_dir / f"{stem}.json").write_text(json.dumps(data, indent=1))
        (out_dir / f"{stem}.md").write_text(text)
        plotted = plot(data, groups, out_dir / f"{stem}.png")
        text += f"\nwritten: {out_dir / stem}.md and .json" + (" and .png" if plotted else "") + "\n"
    return text


def plot(data: dict, groups: dict, path: Path) -> bool:
    """GFLOP/s per layer, one panel per network at batch 1 and one thread, each
    library a bar; False where matplotlib is missing (make bench installs it)."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    libraries = [("samebits fast", "samebits fast"), ("samebits exact", "samebits exact"),
                 ("torch (oneDNN)", "torch"), ("ONNX Runtime", "onnxruntime")]
    panels = [(model, rows) for (model, batch), rows in groups.items() if batch == 1]
    if not panels:
        return False
    fig, axes = plt.subplots(len(panels), 1, figsize=(15, 4.5 * len(panels)), squeeze=False)
    for ax, (model, rows) in zip(axes[:, 0], panels):
        width = 0.8 / len(libraries)
        for i, (label, key) in enumerate(libraries):
            vals = [2.0 * r["macs"] / r["cells"][f"{key} t1"] / 1e9
                    if r["cells"].get(f"{key} t1") else 0 for r in rows]
            ax.bar([x + i * width for x in range(len(rows))], vals, width, label=label)
        ax.set_xticks([x + 0.4 for x in range(len(rows))], [r["name"] for r in rows],
                      rotation=70, ha="right", fontsize=6)
        ax.set_ylabel("GFLOP/s")
        ax.set_title(f"{model}, batch 1, 1 thread ({data['cpu']}, {data['samebits']['path']})")
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return True


def batch_list(text: str) -> list[int]:
    batches = [int(v) for v in text.split(",") if v.strip()]
    if not batches or min(batches) < 1:
        raise argparse.ArgumentTypeError("batch sizes are integers >= 1, comma separated")
    return batches


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="a few layers of each kind, short timing; writes nothing unless --out")
    parser.add_argument("--models", default="", help="only models whose name matches this regex")
    parser.add_argument("--layers", default="", help="only layers whose name matches this regex")
    parser.add_argument("--batch", type=batch_list, default=[1, 8],
                        help="batch sizes N, comma separated; every layer is timed at each "
                        "(default: 1,8)")
    parser.add_argument("--out", type=Path, default=None,
                        help="results folder (default: bench/results, or nothing with --quick)")
    args = parser.parse_args()
    out_dir = args.out if args.out is not None else (
        None if args.quick else Path(__file__).parent / "results")
    data = measure(args)
    print(write_report(data, out_dir))
    if data["failures"]:
        print("output check failed:\n  " + "\n  ".join(data["failures"]), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
