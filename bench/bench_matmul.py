"""Side-by-side matrix-product benchmark: samebits (every path, fast and exact,
1 thread and all threads) against numpy (OpenBLAS), torch.matmul and ONNX
Runtime's MatMul, in one process, one run; plus BERT-base's batched attention
products (4-D operands, one call per batch) against the same three.

    python bench/bench_matmul.py [--quick] [--shapes RE] [--batches 1,8] [--out bench/results]

Method (bench/README.md): per shape and thread count, every cell (samebits on
each path and mode, numpy, torch, ORT) gets two warm-up calls, then ROUNDS
rounds in which each cell in turn is timed as the mean of calls repeated for
at least ROUND_SECONDS; a cell's time is the median over the rounds, and a
speed ratio the median of the per-round ratios (with the lowest and highest
round), so that a burst of load on a shared machine falls on all libraries
alike. With several threads each cell starts after SETTLE_SECONDS idle.
Inputs and outputs are allocated outside the timing; samebits packs B inside
it. OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE are removed from this
process's environment (the script re-executes itself without them) so that
OpenBLAS picks its kernel from the CPU; the kernel it reports is printed.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import statistics
import sys
import time
from pathlib import Path

if os.environ.get("OPENBLAS_CORETYPE") or os.environ.get("OPENBLAS_L2_SIZE"):
    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")}
    os.execve(sys.executable, [sys.executable, *sys.argv], env)

import numpy as np  # noqa: E402

import samebits  # noqa: E402
from samebits.shapes import MODELS  # noqa: E402

from _machine import (cpu_model, cpu_ticks, load_note, load_sample, measured_ghz, others_share,  # noqa: E402
                      stolen_share)

SQUARES = [64, 128, 256, 512, 1024, 2048]
SLOW_PATH_FLOP_LIMIT = 2.2e9   # slower paths are timed only up to about 1024^3
SETTLE_SECONDS = 0.2           # idle time before each measurement
HEADS, TOKENS, HEAD_WIDTH = 12, 128, 64   # BERT-base attention at 128 tokens


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
    out.append(("128x128x64 (scores head)", 128, 128, 64, None, 0))
    out.append(("128x64x128 (context head)", 128, 64, 128, None, 0))
    return out


def attention_shapes(batches: list[int]) -> list[tuple[str, str, int, tuple, tuple]]:
    """(label, product, batch, A's shape, B's shape): the two batched products
    of one BERT-base attention layer, every head in one call. K^T is a
    contiguous (batch, heads, 64, tokens) array, the same memory for every
    library."""
    out = []
    for batch in batches:
        out.append((f"attention scores b{batch}", "scores", batch,
                    (batch, HEADS, TOKENS, HEAD_WIDTH), (batch, HEADS, HEAD_WIDTH, TOKENS)))
        out.append((f"attention context b{batch}", "context", batch,
                    (batch, HEADS, TOKENS, TOKENS), (batch, HEADS, TOKENS, HEAD_WIDTH)))
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
        """A one-node MatMul model on inputs of a's and b's shapes (2-D or
        batched), the output bound to `out`."""
        if self.ort is None:
            return None
        key = (a.shape, b.shape, threads)
        if key not in self._sessions:
            h = self.onnx.helper
            f = self.onnx.TensorProto.FLOAT
            graph = h.make_graph([h.make_node("MatMul", ["A", "B"], ["C"])], "matmul",
                                 [h.make_tensor_value_info("A", f, list(a.shape)),
                                  h.make_tensor_value_info("B", f, list(b.shape))],
                                 [h.make_tensor_value_info("C", f, list(out.shape))])
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
    for orientation: the clock is measured, the two FMA ports per core assumed)."""
    lanes = {"scalar": 1, "vec4": 4, "avx2": 8, "avx512": 16, "neon": 4}.get(path)
    if lanes is None:   # sme: an outer-product unit, no per-port lane count to assume
        return float("nan")
    return ghz * 2 * lanes * 2 * threads


ROUNDS = 5            # timing rounds per shape and thread count
ROUND_SECONDS = 0.04  # calls repeated for at least this long per cell and round


def mean_time(fn, seconds: float = ROUND_SECONDS) -> float:
    calls, start = 0, time.perf_counter()
    while True:
        fn()
        calls += 1
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            return elapsed / calls


def interleaved(cells: list, threads: int) -> dict:
    """{key: [seconds per call, one per round]}: in each of ROUNDS rounds every
    cell is timed once, in turn, so that a burst of load on the shared machine
    falls on every library alike. With several threads each cell starts after
    SETTLE_SECONDS idle: numpy's OpenBLAS workers, ONNX Runtime's and torch's
    OpenMP threads spin for about 0.1 s after each call and on a 2-core
    machine took a core from whichever library was timed next (samebits at 2
    threads looked 2x slower right after numpy)."""
    for _, fn in cells:   # two warm-up calls each
        fn(), fn()
    rounds: dict = {key: [] for key, _ in cells}
    for _ in range(ROUNDS):
        for key, fn in cells:
            if threads > 1:
                time.sleep(SETTLE_SECONDS)
            rounds[key].append(mean_time(fn))
    return rounds


def time_cells(a, b, out, threads: int, paths: list[str], base: Baselines,
               ref=None) -> tuple[dict, dict, list[str]]:
    """Every library's cells for one shape at one thread count, timed in
    interleaved rounds: (median seconds per cell, every round's seconds per
    cell, problems). With `ref`, each library's output is first compared with
    it (within 1e-3 sqrt(k) for standard normal inputs)."""
    problems = []

    def clear():
        if ref is not None:
            out.fill(np.nan)          # so that a library that wrote nothing fails the check

    def checked(name):
        if ref is None:
            return
        err = float(np.abs(out.astype(np.float64) - ref).max())
        tol = 1e-3 * np.sqrt(a.shape[-1])
        if not err <= tol:
            problems.append(f"{name}: max |diff| {err:.3g} > {tol:.3g}")
    def on_path(path, mode):
        def run():
            with samebits.use_path(path):
                samebits.matmul(a, b, mode=mode, out=out, threads=threads)
        return run
    with base.threads(threads):
        cells = [(f"samebits {path} {mode} t{threads}", on_path(path, mode))
                 for path in paths for mode in ("fast", "exact")]
        for name, maker in (("numpy", base.numpy), ("torch", base.torch_matmul),
                            ("onnxruntime", base.ort_matmul)):
            fn = maker(a, b, out, threads)
            if fn is not None:
                cells.append((f"{name} t{threads}", fn))
        for key, fn in cells:
            clear()
            fn()
            checked(key)
        rounds = interleaved(cells, threads)
    return {key: statistics.median(v) for key, v in rounds.items()}, rounds, problems


def print_row(label: str, cells: dict, best: str) -> None:
    print(f"{label:32s} " + "  ".join(f"{key}={v * 1e3:.3f}ms" for key, v in cells.items()
                                      if key.startswith(("samebits " + best, "numpy"))),
          flush=True)


def measure(args) -> dict:
    ticks_at_start, load_at_start = cpu_ticks(), load_sample()
    rng = np.random.default_rng(0)
    cores = samebits.info()["threads"]
    thread_counts = [1] if cores == 1 else [1, cores]
    base = Baselines()
    results, attention, failures = [], [], []
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
        paths = [p for p in samebits.paths() if p == best or flop <= SLOW_PATH_FLOP_LIMIT]
        row = {"label": label, "m": m, "n": n, "k": k, "model": model, "count": count, "cells": {}}
        ticks, load = cpu_ticks(), load_sample()
        row["rounds"] = {}
        for threads in thread_counts:
            cells, rounds, _ = time_cells(a, b, out, threads, paths, base)
            row["cells"].update(cells)
            row["rounds"].update(rounds)
        row["stolen_share"] = stolen_share(ticks, cpu_ticks())
        row["others_share"] = others_share(load, load_sample())
        print_row(label, row["cells"], best)
        results.append(row)
    for label, product, batch, a_shape, b_shape in attention_shapes(args.batches):
        if args.shapes and not re.search(args.shapes, label):
            continue
        a = rng.standard_normal(a_shape, dtype=np.float32)
        b = rng.standard_normal(b_shape, dtype=np.float32)
        out = np.empty(a_shape[:-1] + b_shape[-1:], dtype=np.float32)
        ref = np.matmul(a.astype(np.float64), b.astype(np.float64))
        row = {"label": label, "product": product, "batch": batch, "a_shape": list(a_shape),
               "b_shape": list(b_shape), "m": a_shape[-2], "n": b_shape[-1], "k": a_shape[-1],
               "products": batch * HEADS, "cells": {}, "check": [],
               "plan": {f"t{t}": str(samebits.explain(samebits.matmul, a, b, out=out, threads=t))
                        for t in thread_counts}}
        ticks, load = cpu_ticks(), load_sample()
        row["rounds"] = {}
        for threads in thread_counts:
            cells, rounds, problems = time_cells(a, b, out, threads, [best], base, ref)
            row["cells"].update(cells)
            row["rounds"].update(rounds)
            row["check"] += problems
        row["stolen_share"] = stolen_share(ticks, cpu_ticks())
        row["others_share"] = others_share(load, load_sample())
        failures += [f"{label} {p}" for p in row["check"]]
        print_row(label, row["cells"], best)
        attention.append(row)
    return {"results": results, "attention": attention, "threads": thread_counts,
            "best_path": best, "batches": args.batches, "quick": bool(args.quick),
            "settle_seconds": SETTLE_SECONDS,
            "stolen_share": stolen_share(ticks_at_start, cpu_ticks()),
            "others_share": others_share(load_at_start, load_sample()),
            "openblas": base.openblas,
            "torch": getattr(base.torch, "__version__", None),
            "onnxruntime": getattr(base.ort, "__version__", None),
            "numpy": np.__version__, "samebits": samebits.info(), "cpu": cpu_model(),
            "date": datetime.date.today().isoformat(), "failures": failures}


def speed(peer, mine) -> str:
    """Speed ratio of samebits to a peer (>1: samebits faster)."""
    return f"{peer / mine:.2f}" if peer and mine else "-"


def round_ratio(row: dict, peer: str, mine: str) -> str:
    """The speed ratio peer time / my time: the median over the rounds of the
    ratio within each round, and in brackets the lowest and highest round."""
    rounds = row.get("rounds", {})
    if peer not in rounds or mine not in rounds:
        return speed(row["cells"].get(peer), row["cells"].get(mine))
    ratios = sorted(p / m for p, m in zip(rounds[peer], rounds[mine]))
    return f"{statistics.median(ratios):.2f} [{ratios[0]:.2f}-{ratios[-1]:.2f}]"


def ms(v, digits: int = 3) -> str:
    return f"{v * 1e3:.{digits}f}" if v else "-"


def header(data: dict, ghz: float) -> list[str]:
    return [f"# samebits matrix-product benchmark, {data['date']}"
            + (" (--quick)" if data.get("quick") else ""), "",
            f"CPU: {data['cpu']}; threads: {data['threads']}; samebits "
            f"{data['samebits']['version']} ({data['samebits']['compiler']}); numpy "
            f"{data['numpy']} with OpenBLAS "
            + ", ".join(f"{o.get('version')} kernel {o.get('architecture')}"
                        for o in data["openblas"])
            + f"; torch {data['torch']}; onnxruntime {data['onnxruntime']}."
            + load_note(data.get("stolen_share"), data.get("others_share")), "",
            f"Times are medians over {ROUNDS} rounds; in each round every cell of a shape (every "
            f"library and mode at one thread count) is timed once, in turn, as the mean of "
            f"calls run for at least {int(ROUND_SECONDS * 1000)} ms (after 2 warm-up calls), "
            f"so that a burst of load on this shared machine falls on all libraries alike; "
            f"with several threads each cell starts after {data['settle_seconds']} s idle "
            "(numpy's OpenBLAS, torch's and ONNX Runtime's worker threads spin for about 0.1 s "
            "after a call and would take a core from the library timed next). Speed ratios "
            "against a peer are the median over the rounds of the ratio within each round, "
            "the lowest and highest round in brackets. "
            "GFLOP/s = 2mnk / time. % peak divides by "
            f"{data['clock_ghz']:.2f} GHz ({data['clock_source']}) x 2 FMA ports x lanes x 2 "
            "x threads: a ceiling for orientation (heavy AVX-512 code may run below that "
            "clock). ms columns: median (lowest-highest round). "
            "Ratios are speed ratios (>1: samebits faster); exact/fast is the exact mode's "
            "speed relative to fast.", ""]


def spread(row: dict, key: str) -> str:
    """A cell's median ms with its lowest and highest round."""
    rounds = sorted(row.get("rounds", {}).get(key, []))
    median = row["cells"].get(key)
    if median is None:
        return "-"
    if not rounds:
        return f"{median * 1e3:.3f}"
    return f"{median * 1e3:.3f} ({rounds[0] * 1e3:.3f}-{rounds[-1] * 1e3:.3f})"


def thread_table(data: dict, t: int, ghz: float) -> list[str]:
    best = data["best_path"]
    lines = [f"## {best}, {t} thread{'s' if t > 1 else ''}", "",
             "| shape | fast ms | fast GFLOP/s | % peak | exact ms | exact GFLOP/s | "
             "exact/fast | fast vs numpy | exact vs numpy | fast vs torch | fast vs ORT |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for row in data["results"]:
        c = row["cells"]
        fast, exact = c.get(f"samebits {best} fast t{t}"), c.get(f"samebits {best} exact t{t}")
        if fast is None:
            continue
        flop = 2.0 * row["m"] * row["n"] * row["k"]
        lines.append(
            f"| {row['label']} | {spread(row, f'samebits {best} fast t{t}')} | "
            f"{flop / fast / 1e9:.1f} | "
            f"{100 * flop / fast / 1e9 / nominal_peak_gflops(best, t, ghz):.0f} | "
            f"{spread(row, f'samebits {best} exact t{t}')} | {flop / exact / 1e9:.1f} | "
            f"{speed(fast, exact)} | "
            f"{round_ratio(row, f'numpy t{t}', f'samebits {best} fast t{t}')} | "
            f"{round_ratio(row, f'numpy t{t}', f'samebits {best} exact t{t}')} | "
            f"{round_ratio(row, f'torch t{t}', f'samebits {best} fast t{t}')} | "
            f"{round_ratio(row, f'onnxruntime t{t}', f'samebits {best} fast t{t}')} |")
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
        lines.append(f"| {model} | {ms(fast, 1)} | {ms(exact, 1)} | {speed(fast, exact)} | "
                     + " | ".join(ms(p, 1) for p in peers) + " | "
                     + " | ".join(speed(p, fast) for p in peers) + " |")
    return lines + [""]


def scaling_table(data: dict) -> list[str]:
    """Time at 1 thread / time at the most threads, per shape and library."""
    best, t = data["best_path"], data["threads"][-1]
    lines = [f"## Thread scaling: time at 1 thread / time at {t} threads", "",
             "Other load: the share of CPU time other processes used while the shape was timed.",
             "",
             "| shape | samebits fast | samebits exact | numpy | torch | ORT | other load |",
             "|---|---|---|---|---|---|---|"]
    for row in data["results"] + data["attention"]:
        c = row["cells"]
        keys = (f"samebits {best} fast", f"samebits {best} exact", "numpy", "torch", "onnxruntime")
        if f"{keys[0]} t1" not in c:
            continue
        others = row.get("others_share")
        lines.append(f"| {row['label']} | "
                     + " | ".join(speed(c.get(f"{k} t1"), c.get(f"{k} t{t}")) for k in keys)
                     + (f" | {100 * others:.0f}% |" if others is not None else " | - |"))
    return lines + [""]


def attention_table(data: dict) -> list[str]:
    best = data["best_path"]
    lines = ["## Batched attention", "",
             f"BERT-base, {HEADS} heads, {TOKENS} tokens, head width {HEAD_WIDTH}: scores "
             "Q (batch, 12, 128, 64) @ K^T (batch, 12, 64, 128) and context "
             "P (batch, 12, 128, 128) @ V (batch, 12, 128, 64), every head in one call: "
             "`samebits.matmul(q, kt, out=...)`, `np.matmul(..., out=...)`, "
             "`torch.matmul(..., out=...)` and a one-node ONNX MatMul on the 4-D inputs with "
             "its output bound. K^T is a contiguous array. GFLOP/s = 2mnk x batch x heads / time.",
             "",
             "| product | batch | threads | GFLOP | fast ms | fast GFLOP/s | exact ms | numpy ms | "
             "torch ms | ORT ms | fast vs numpy | exact vs numpy | fast vs torch | exact vs torch | "
             "fast vs ORT | exact vs ORT |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for t in data["threads"]:
        for row in data["attention"]:
            c = row["cells"]
            fast, exact = c.get(f"samebits {best} fast t{t}"), c.get(f"samebits {best} exact t{t}")
            peers = [c.get(f"{name} t{t}") for name in ("numpy", "torch", "onnxruntime")]
            flop = 2.0 * row["m"] * row["n"] * row["k"] * row["products"]
            lines.append(
                f"| {row['product']} | {row['batch']} | {t} | {flop / 1e9:.3f} | {ms(fast)} | "
                f"{flop / fast / 1e9:.1f} | {ms(exact)} | " + " | ".join(ms(p) for p in peers)
                + " | " + " | ".join(
                    f"{round_ratio(row, f'{name} t{t}', f'samebits {best} fast t{t}')} | "
                    f"{round_ratio(row, f'{name} t{t}', f'samebits {best} exact t{t}')}"
                    for name in ("numpy", "torch", "onnxruntime")) + " |")
    lines += ["", "samebits plans (`samebits.explain(samebits.matmul, a, b, threads=t)`, fast "
              "mode):", ""]
    for row in data["attention"]:
        for key, plan in row["plan"].items():
            lines.append(f"- {row['label']}, {key}: {plan}")
    return lines + [""]


def paths_table(data: dict) -> list[str]:
    threads, paths = data["threads"], data["samebits"]["paths"]
    lines = ["## Every path (shapes up to about 1024^3), GFLOP/s", "",
             "| shape | " + " | ".join(f"{p} {mo} t{t}" for t in threads for p in paths
                                      for mo in ("fast", "exact")) + " |",
             "|---|" + "---|" * (len(threads) * len(paths) * 2)]
    for row in data["results"]:
        flop = 2.0 * row["m"] * row["n"] * row["k"]
        cells = []
        for t in threads:
            for p in paths:
                for mo in ("fast", "exact"):
                    v = row["cells"].get(f"samebits {p} {mo} t{t}")
                    cells.append(f"{flop / v / 1e9:.1f}" if v else "-")
        lines.append(f"| {row['label']} | " + " | ".join(cells) + " |")
    return lines + [""]


def write_report(data: dict, out_dir: Path, ghz: float) -> Path:
    lines = header(data, ghz)
    for t in data["threads"] if data["results"] else ():
        lines += thread_table(data, t, ghz)
    if data["attention"]:
        lines += attention_table(data)
    if len(data["threads"]) > 1:
        lines += scaling_table(data)
    if any(p != data["best_path"] for p in data["samebits"]["paths"]):
        lines += paths_table(data)
    if data["failures"]:
        lines += ["## Output check failures", ""] + [f"- {f}" for f in data["failures"]] + [""]
    out_dir.mkdir(parents=True, exist_ok=True)
    stem = f"matmul-{data['date']}"
    (out_dir / f"{stem}.json").write_text(json.dumps(data, indent=1))
    report = out_dir / f"{stem}.md"
    report.write_text("\n".join(lines))
    plot(data, out_dir / f"{stem}.png")
    return report


def plot(data: dict, path: Path) -> None:
    """GFLOP/s bars: one subplot per thread count for the 2-D shapes, and one
    for the batched attention rows at every thread count."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    best = data["best_path"]
    names = [(f"samebits {best} fast", f"samebits {best} fast"),
             (f"samebits {best} exact", f"samebits {best} exact"),
             ("numpy/OpenBLAS", "numpy"), ("torch", "torch"), ("onnxruntime", "onnxruntime")]
    rows = [r for r in data["results"] if f"samebits {best} fast t1" in r["cells"]]
    # (title, [(label, row, thread count)]) per subplot
    panels = [(f"{data['cpu']}, {t} thread{'s' if t > 1 else ''}",
               [(r["label"], r, t) for r in rows]) for t in data["threads"]] if rows else []
    if data["attention"]:
        panels.append((f"{data['cpu']}, batched attention (BERT-base, 12 heads, 128 tokens)",
                       [(f"{r['label']} t{t}", r, t) for t in data["threads"]
                        for r in data["attention"]]))
    if not panels:
        return
    fig, axes = plt.subplots(len(panels), 1, figsize=(14, 5 * len(panels)), squeeze=False)
    for ax, (title, bars) in zip(axes[:, 0], panels):
        width = 0.8 / len(names)
        for i, (name, key) in enumerate(names):
            vals = []
            for _, r, t in bars:
                v = r["cells"].get(f"{key} t{t}")
                flop = 2.0 * r["m"] * r["n"] * r["k"] * r.get("products", 1)
                vals.append(flop / v / 1e9 if v else 0)
            ax.bar([x + i * width for x in range(len(bars))], vals, width, label=name)
        ax.set_xticks([x + 0.4 for x in range(len(bars))], [b[0] for b in bars], rotation=60,
                      ha="right", fontsize=7)
        ax.set_ylabel("GFLOP/s")
        ax.set_title(title)
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def batch_list(text: str) -> list[int]:
    batches = [int(v) for v in text.split(",") if v.strip()]
    if not batches or min(batches) < 1:
        raise argparse.ArgumentTypeError("batch sizes are integers >= 1, comma separated")
    return batches


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="squares up to 512 and the model shapes")
    parser.add_argument("--shapes", default="", help="only shapes whose label matches this regex "
                        "(the attention rows are labelled 'attention scores b8' and so on)")
    parser.add_argument("--batches", type=batch_list, default=[1, 8],
                        help="batch sizes of the attention rows (default: 1,8)")
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results")
    parser.add_argument("--ghz", type=float, default=None,
                        help="clock for the %% of peak column (default: measured, "
                             "bench/_machine.py measured_ghz; 2.45 nominal where it cannot be)")
    args = parser.parse_args()
    data = measure(args)
    if args.ghz is not None:
        data["clock_ghz"], data["clock_source"] = args.ghz, "given on the command line"
    else:
        ghz = measured_ghz()
        data["clock_ghz"], data["clock_source"] = (
            (ghz, "measured: a dependent add chain on one core") if ghz else
            (2.45, "nominal: no measurement on this machine"))
    report = write_report(data, args.out, data["clock_ghz"])
    print(report.read_text())
    print(f"written: {report}")
    if data["failures"]:
        print("output check failed:\n  " + "\n  ".join(data["failures"]), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
