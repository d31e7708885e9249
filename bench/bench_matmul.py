"""Side-by-side matrix-product benchmark: samebits (every path, fast and exact,
1 thread and all threads) against numpy (OpenBLAS), torch.matmul and ONNX
Runtime's MatMul, in one process, one run.

    python bench/bench_matmul.py [--quick] [--out bench/results]

Method (docs/design.md): per cell, two warm-up calls, then calls repeated for
at least 80 ms and averaged; the median of three such means. Inputs and
outputs are allocated outside the timing; samebits packs B inside it.
OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE are removed from this process's
environment (the script re-executes itself without them) so that OpenBLAS
picks its kernel from the CPU; the kernel it reports is printed.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import sys
from pathlib import Path

if os.environ.get("OPENBLAS_CORETYPE") or os.environ.get("OPENBLAS_L2_SIZE"):
    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")}
    os.execve(sys.executable, [sys.executable, *sys.argv], env)

import numpy as np  # noqa: E402

import samebits  # noqa: E402
from samebits.bench import time_call  # noqa: E402
from samebits.shapes import MODELS  # noqa: E402

from _machine import cpu_model  # noqa: E402

SQUARES = [64, 128, 256, 512, 1024, 2048]
SLOW_PATH_FLOP_LIMIT = 2.2e9   # slower paths are timed only up to about 1024^3


def shapes() -> list[tuple[str, int, int, int, str | None, int]]:
    """(label, m, n, k, model or None, count in the model)."""
    out = [(f"{s}^3", s, s, s, None, 0) for s in SQUARES]
    bert128 = [(p._replace(m=128 if p.m == 4096 else p.m)) for p in MODELS["bert-base-32x128"]]
    models = dict(MODELS)
    models["bert-base-128"] = [p._replace(count=p.count // 32 if p.name in ("scores", "context")
                                          else p.count) for p in bert128]
    for model, products in models.items():
        for p in products:
            out.append((f"{model} {p.name}", p.m, p.n, p.k, model, p.count))
    out.append(("m=1 k=n=768", 1, 768, 768, None, 0))
    out.append(("m=32 k=n=768", 32, 768, 768, None, 0))
    return out


class Baselines:
    """numpy, torch and ONNX Runtime, each with a thread setting."""

    def __init__(self) -> None:
        from threadpoolctl import threadpool_info, threadpool_limits
        self._limits = threadpool_limits
        self.openblas = [i for i in threadpool_info() if i.get("internal_api") == "openblas"]
        try:
            import torch
            self.torch = torch
        except ImportError:
            self.torch = None
        try:
            import onnxruntime
            import onnx
            self.ort, self.onnx = onnxruntime, onnx
        except ImportError:
            self.ort = self.onnx = None
        self._sessions: dict = {}

    def threads(self, threads: int):
        """Thread settings of every baseline, applied outside the timed calls."""
        if self.torch is not None:
            self.torch.set_num_threads(threads)
        return self._limits(limits=threads, user_api="blas")

    def numpy(self, a, b, out, threads):
        return lambda: np.matmul(a, b, out=out)

    def torch_matmul(self, a, b, out, threads):
        if self.torch is None:
            return None
        ta, tb, to = (self.torch.from_numpy(x) for x in (a, b, out))
        torch = self.torch
        return lambda: torch.matmul(ta, tb, out=to)

    def ort_matmul(self, a, b, out, threads):
        if self.ort is None:
            return None
        key = (a.shape, b.shape, threads)
        if key not in self._sessions:
            h = self.onnx.helper
            f = self.onnx.TensorProto.FLOAT
            graph = h.make_graph([h.make_node("MatMul", ["A", "B"], ["C"])], "matmul",
                                 [h.make_tensor_value_info("A", f, list(a.shape)),
                                  h.make_tensor_value_info("B", f, list(b.shape))],
                                 [h.make_tensor_value_info("C", f, [a.shape[0], b.shape[1]])])
            model = h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])
            model.ir_version = 8
            opts = self.ort.SessionOptions()
            opts.intra_op_num_threads = threads
            opts.inter_op_num_threads = 1
            self._sessions[key] = self.ort.InferenceSession(model.SerializeToString(), opts,
                                                            providers=["CPUExecutionProvider"])
        session = self._sessions[key]
        binding = session.io_binding()
        binding.bind_cpu_input("A", a)
        binding.bind_cpu_input("B", b)
        binding.bind_output("C", "cpu", element_type=np.float32, shape=out.shape,
                            buffer_ptr=out.ctypes.data)

        def run():
            session.run_with_iobinding(binding)
        return run


def nominal_peak_gflops(path: str, threads: int, ghz: float) -> float:
    """Fused multiply-add rate: GHz x FMA ports x lanes x 2 per core (a ceiling
    for orientation, not a measurement). Assumes two FMA ports per core."""
    lanes = {"scalar": 1, "vec4": 4, "avx2": 8, "avx512": 16, "neon": 4}[path]
    return ghz * 2 * lanes * 2 * threads


def measure(args) -> dict:
    rng = np.random.default_rng(0)
    cores = samebits.info()["threads"]
    thread_counts = [1] if cores == 1 else [1, cores]
    base = Baselines()
    results = []
    best = samebits.paths()[-1]
    for label, m, n, k, model, count in shapes():
        flop = 2.0 * m * n * k
        if args.quick and flop > 1.2e9 and model is None:
            continue
        if args.shapes and not re.search(args.shapes, label):
            continue
        a = rng.standard_normal((m, k), dtype=np.float32)
        b = rng.standard_normal((k, n), dtype=np.float32)
        out = np.empty((m, n), dtype=np.float32)
        row = {"label": label, "m": m, "n": n, "k": k, "model": model, "count": count, "cells": {}}
        for threads in thread_counts:
            for path in samebits.paths():
                if path != best and flop > SLOW_PATH_FLOP_LIMIT:
                    continue
                with samebits.use_path(path):
                    for mode in ("fast", "exact"):
                        t = time_call(lambda: samebits.matmul(a, b, mode=mode, out=out,
                                                              threads=threads))
                        row["cells"][f"samebits {path} {mode} t{threads}"] = t
            with base.threads(threads):
                for name, maker in (("numpy", base.numpy), ("torch", base.torch_matmul),
                                    ("onnxruntime", base.ort_matmul)):
                    fn = maker(a, b, out, threads)
                    if fn is not None:
                        row["cells"][f"{name} t{threads}"] = time_call(fn)
        print(f"{label:32s} " + "  ".join(f"{key}={v * 1e3:.3f}ms"
                                           for key, v in row["cells"].items()
                                           if key.startswith(("samebits " + best, "numpy"))),
              flush=True)
        results.append(row)
    return {"results": results, "threads": thread_counts, "best_path": best,
            "openblas": base.openblas,
            "torch": getattr(base.torch, "__version__", None),
            "onnxruntime": getattr(base.ort, "__version__", None),
            "numpy": np.__version__, "samebits": samebits.info(), "cpu": cpu_model(),
            "date": datetime.date.today().isoformat()}


def write_report(data: dict, out_dir: Path, ghz: float) -> Path:
    best, threads = data["best_path"], data["threads"]
    lines = [f"# samebits matrix-product benchmark, {data['date']}", "",
             f"CPU: {data['cpu']}; threads: {threads}; samebits {data['samebits']['version']} "
             f"({data['samebits']['compiler']}); numpy {data['numpy']} with OpenBLAS "
             + ", ".join(f"{o.get('version')} kernel {o.get('architecture')}"
                         for o in data["openblas"])
             + f"; torch {data['torch']}; onnxruntime {data['onnxruntime']}.", "",
             "Times are medians over 3 repetitions of the mean of calls run for at least "
             "80 ms after 2 warm-up calls. GFLOP/s = 2mnk / time. % peak divides by "
             f"{ghz} GHz x 2 FMA ports x lanes x 2 x threads (nominal, for orientation). "
             "Ratios are speed ratios (>1: samebits faster).", ""]
    for t in threads:
        lines += [f"## {best}, {t} thread{'s' if t > 1 else ''}", "",
                  "| shape | fast ms | fast GFLOP/s | % peak | exact ms | exact GFLOP/s | "
                  "exact/fast | fast vs numpy | exact vs numpy | fast vs torch | fast vs ORT |",
                  "|---|---|---|---|---|---|---|---|---|---|---|"]
        for row in data["results"]:
            c = row["cells"]
            fast, exact = c.get(f"samebits {best} fast t{t}"), c.get(f"samebits {best} exact t{t}")
            if fast is None:
                continue
            flop = 2.0 * row["m"] * row["n"] * row["k"]

            def ratio(key, mine=fast):
                return f"{c[key] / mine:.2f}" if key in c else "-"
            lines.append(
                f"| {row['label']} | {fast * 1e3:.3f} | {flop / fast / 1e9:.1f} | "
                f"{100 * flop / fast / 1e9 / nominal_peak_gflops(best, t, ghz):.0f} | "
                f"{exact * 1e3:.3f} | {flop / exact / 1e9:.1f} | {fast / exact:.2f} | "
                f"{ratio(f'numpy t{t}')} | {ratio(f'numpy t{t}', exact)} | "
                f"{ratio(f'torch t{t}')} | {ratio(f'onnxruntime t{t}')} |")
        lines += ["", f"### Model rows ({best}, {t} thread{'s' if t > 1 else ''}): "
                  "sum over distinct products of count x time", "",
                  "| model | fast ms | exact ms | exact/fast | numpy ms | torch ms | ORT ms | "
                  "fast vs numpy | fast vs torch | fast vs ORT |", "|---|---|---|---|---|---|---|---|---|---|"]
        models: dict = {}
        for row in data["results"]:
            if row["model"]:
                models.setdefault(row["model"], []).append(row)
        for model, rows in models.items():
            def total(key):
                if any(key not in r["cells"] for r in rows):
                    return None
                return sum(r["count"] * r["cells"][key] for r in rows)
            fast, exact = total(f"samebits {best} fast t{t}"), total(f"samebits {best} exact t{t}")
            peers = [total(f"{name} t{t}") for name in ("numpy", "torch", "onnxruntime")]
            if fast is None:
                continue
            fmt = lambda x: f"{x * 1e3:.1f}" if x else "-"  # noqa: E731
            lines.append(f"| {model} | {fmt(fast)} | {fmt(exact)} | {fast / exact:.2f} | "
                         + " | ".join(fmt(p) for p in peers) + " | "
                         + " | ".join(f"{p / fast:.2f}" if p else "-" for p in peers) + " |")
        lines.append("")
    others = [p for p in data["samebits"]["paths"] if p != best]
    if others:
        lines += ["## Every path (shapes up to about 1024^3), GFLOP/s", "",
                  "| shape | " + " | ".join(f"{p} {mo} t{t}" for t in threads for p in data["samebits"]["paths"]
                                           for mo in ("fast", "exact")) + " |",
                  "|---|" + "---|" * (len(threads) * len(data["samebits"]["paths"]) * 2)]
        for row in data["results"]:
            flop = 2.0 * row["m"] * row["n"] * row["k"]
            cells = []
            for t in threads:
                for p in data["samebits"]["paths"]:
                    for mo in ("fast", "exact"):
                        v = row["cells"].get(f"samebits {p} {mo} t{t}")
                        cells.append(f"{flop / v / 1e9:.1f}" if v else "-")
            lines.append(f"| {row['label']} | " + " | ".join(cells) + " |")
        lines.append("")
    out_dir.mkdir(parents=True, exist_ok=True)
    stem = f"matmul-{data['date']}"
    (out_dir / f"{stem}.json").write_text(json.dumps(data, indent=1))
    report = out_dir / f"{stem}.md"
    report.write_text("\n".join(lines))
    plot(data, out_dir / f"{stem}.png")
    return report


def plot(data: dict, path: Path) -> None:
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    best = data["best_path"]
    rows = [r for r in data["results"] if f"samebits {best} fast t1" in r["cells"]]
    labels = [r["label"] for r in rows]
    fig, axes = plt.subplots(len(data["threads"]), 1, figsize=(14, 5 * len(data["threads"])),
                             squeeze=False)
    for ax, t in zip(axes[:, 0], data["threads"]):
        series = [(f"samebits {best} fast", f"samebits {best} fast t{t}"),
                  (f"samebits {best} exact", f"samebits {best} exact t{t}"),
                  ("numpy/OpenBLAS", f"numpy t{t}"), ("torch", f"torch t{t}"),
                  ("onnxruntime", f"onnxruntime t{t}")]
        width = 0.8 / len(series)
        for i, (name, key) in enumerate(series):
            vals = [2.0 * r["m"] * r["n"] * r["k"] / r["cells"][key] / 1e9 if key in r["cells"] else 0
                    for r in rows]
            ax.bar([x + i * width for x in range(len(rows))], vals, width, label=name)
        ax.set_xticks([x + 0.4 for x in range(len(rows))], labels, rotation=60, ha="right",
                      fontsize=7)
        ax.set_ylabel("GFLOP/s")
        ax.set_title(f"{data['cpu']}, {t} thread{'s' if t > 1 else ''}")
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=90)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="squares up to 512 and the model shapes")
    parser.add_argument("--shapes", default="", help="only shapes whose label matches this regex")
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results")
    parser.add_argument("--ghz", type=float, default=2.45,
                        help="nominal clock for the %% of peak column (default: 2.45)")
    args = parser.parse_args()
    data = measure(args)
    report = write_report(data, args.out, args.ghz)
    print(report.read_text())
    print(f"written: {report}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
