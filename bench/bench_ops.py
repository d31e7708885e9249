"""The operators between the products, side by side in one run: samebits
(exact and fast mode) against numpy's float32 ufuncs and torch.

    python bench/bench_ops.py [--threads 1,2] [--quick]

- exp, tanh, erf, sigmoid, log, sin, cos over 1e6 float32 values;
- softmax and layer_norm over (8*12*128, 128) and (4096, 768), last axis;
- BERT-base attention (12 heads, 128 tokens, head size 64) at batch 1 and 8
  against torch.nn.functional.scaled_dot_product_attention.

Times are medians over interleaved rounds (bench_matmul.py's method: each
cell once per round, in turn); speed ratios are per-round ratios, median
with [lowest-highest]. Results go to bench/results/ops-DATE.{md,json}.
torch and numpy are optional: a missing peer is left out and said so.
"""
from __future__ import annotations

import argparse
import datetime
import json
import statistics
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _machine  # noqa: E402
import bench_matmul as bm  # noqa: E402  (the interleaved timing)

import samebits  # noqa: E402

try:
    import torch
    import torch.nn.functional as F
except ImportError:   # the benchmark runs without torch, minus its columns
    torch = None

ROOT = Path(__file__).resolve().parent.parent


def elementwise_cells(name: str, x: np.ndarray, out: np.ndarray, threads: int) -> list:
    fn = getattr(samebits, name)
    cells = [(f"samebits exact t{threads}", lambda: fn(x, mode="exact", out=out, threads=threads)),
             (f"samebits fast t{threads}", lambda: fn(x, mode="fast", out=out, threads=threads))]
    np_fn = {"exp": np.exp, "tanh": np.tanh, "log": np.log, "sin": np.sin, "cos": np.cos,
             "sigmoid": lambda v, out: np.divide(1, np.add(1, np.exp(-v)), out=out)}.get(name)
    if np_fn is not None and threads == 1:
        cells.append(("numpy t1", lambda: np_fn(x, out=out)))
    if torch is not None:
        tx, tout = torch.from_numpy(x), torch.from_numpy(out)
        t_fn = {"exp": torch.exp, "tanh": torch.tanh, "log": torch.log, "erf": torch.erf,
                "sigmoid": torch.sigmoid, "sin": torch.sin, "cos": torch.cos}[name]
        cells.append((f"torch t{threads}", lambda: t_fn(tx, out=tout)))
    return cells


def softmax_cells(x: np.ndarray, out: np.ndarray, threads: int) -> list:
    cells = [(f"samebits exact t{threads}",
              lambda: samebits.softmax(x, -1, mode="exact", out=out, threads=threads)),
             (f"samebits fast t{threads}",
              lambda: samebits.softmax(x, -1, mode="fast", out=out, threads=threads))]
    if torch is not None:
        tx, tout = torch.from_numpy(x), torch.from_numpy(out)
        cells.append((f"torch t{threads}", lambda: torch.softmax(tx, -1, out=tout)))
    return cells


def layer_norm_cells(x: np.ndarray, w: np.ndarray, b: np.ndarray, out: np.ndarray,
                     threads: int) -> list:
    n = x.shape[-1]
    cells = [(f"samebits exact t{threads}",
              lambda: samebits.layer_norm(x, n, w, b, mode="exact", out=out, threads=threads)),
             (f"samebits fast t{threads}",
              lambda: samebits.layer_norm(x, n, w, b, mode="fast", out=out, threads=threads))]
    if torch is not None:
        tx, tw, tb = torch.from_numpy(x), torch.from_numpy(w), torch.from_numpy(b)
        cells.append((f"torch t{threads}", lambda: F.layer_norm(tx, (n,), tw, tb)))
    return cells


def attention_cells(q, k, v, threads: int) -> list:
    cells = [(f"samebits {mode} t{threads}",
              (lambda m: lambda: samebits.scaled_dot_product_attention(q, k, v, mode=m,
                                                                       threads=threads))(mode))
             for mode in ("exact", "fast")]
    if torch is not None:
        tq, tk, tv = (torch.from_numpy(a) for a in (q, k, v))
        cells.append((f"torch t{threads}", lambda: F.scaled_dot_product_attention(tq, tk, tv)))
    return cells


def run_case(label: str, make_cells, threads: int) -> dict:
    if torch is not None:
        torch.set_num_threads(threads)
    cells = make_cells(threads)
    rounds = bm.interleaved(cells, threads)
    med = {key: statistics.median(v) for key, v in rounds.items()}
    print(f"{label:40s} " + "  ".join(f"{k}={v * 1e3:.3f}ms" for k, v in med.items()),
          flush=True)
    return {"label": label, "threads": threads, "median_s": med, "rounds_s": rounds}


def ratio(row: dict, peer: str, mine: str) -> str:
    rp, rm = row["rounds_s"].get(peer), row["rounds_s"].get(mine)
    if not rp or not rm:
        return "-"
    r = sorted(p / m for p, m in zip(rp, rm))
    return f"{statistics.median(r):.2f} [{r[0]:.2f}-{r[-1]:.2f}]"


def report(rows: list[dict], data: dict) -> str:
    lines = [f"# samebits operator benchmark, {data['date']}", "",
             f"CPU: {data['cpu']}; samebits {samebits.__version__} on {samebits.path()}; "
             f"numpy {np.__version__}; torch {data['torch'] or 'not installed'}. "
             f"Medians over {bm.ROUNDS} interleaved rounds; ratios are speed ratios "
             "(>1: samebits faster), median of the per-round ratios [lowest-highest].", "",
             "| case | threads | exact ms | fast ms | numpy ms | torch ms | exact vs numpy "
             "| exact vs torch | fast vs torch |", "|---|---|---|---|---|---|---|---|---|"]
    for row in rows:
        t = row["threads"]
        m = row["median_s"]
        ex, fa = f"samebits exact t{t}", f"samebits fast t{t}"

        def ms(key):
            return f"{m[key] * 1e3:.3f}" if key in m else "-"
        lines.append(f"| {row['label']} | {t} | {ms(ex)} | {ms(fa)} | {ms('numpy t1')} "
                     f"| {ms(f'torch t{t}')} | {ratio(row, 'numpy t1', ex)} "
                     f"| {ratio(row, f'torch t{t}', ex)} | {ratio(row, f'torch t{t}', fa)} |")
    lines.append("")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--quick", action="store_true", help="smaller sizes, for a smoke run")
    parser.add_argument("--elementwise", action="store_true",
                        help="the elementwise functions only (no softmax, norms, attention)")
    args = parser.parse_args()
    threads_list = [int(t) for t in args.threads.split(",")]
    rng = np.random.default_rng(0)
    count = 100_000 if args.quick else 1_000_000
    x = (rng.standard_normal(count) * 3).astype(np.float32)
    out = np.empty_like(x)
    rows = []
    for t in threads_list:
        for name in ("exp", "tanh", "erf", "sigmoid", "log", "sin", "cos"):
            data_x = np.abs(x) + np.float32(1e-3) if name == "log" else x
            rows.append(run_case(f"{name} {count:,}", lambda th, n=name, d=data_x:
                                 elementwise_cells(n, d, out, th), t))
        if args.elementwise:
            continue
        for shape in ((8 * 12 * 128, 128), (4096, 768)):
            if args.quick:
                shape = (shape[0] // 8, shape[1])
            a = rng.standard_normal(shape).astype(np.float32)
            o = np.empty_like(a)
            rows.append(run_case(f"softmax {shape}", lambda th, a=a, o=o: softmax_cells(a, o, th), t))
            w = rng.standard_normal(shape[1]).astype(np.float32)
            b = rng.standard_normal(shape[1]).astype(np.float32)
            rows.append(run_case(f"layer_norm {shape}",
                                 lambda th, a=a, o=o, w=w, b=b: layer_norm_cells(a, w, b, o, th), t))
        for batch in ((1,) if args.quick else (1, 8)):
            q, k, v = (rng.standard_normal((batch, 12, 128, 64)).astype(np.float32)
                       for _ in range(3))
            rows.append(run_case(f"attention BERT-base b{batch}",
                                 lambda th, q=q, k=k, v=v: attention_cells(q, k, v, th), t))
    data = {"date": datetime.date.today().isoformat(), "cpu": _machine.cpu_model(),
            "torch": torch.__version__ if torch is not None else None, "rows": rows}
    out_dir = ROOT / "bench" / "results"
    stem = (f"ops-{data['date']}" + ("-elementwise" if args.elementwise else "")
            + ("-quick" if args.quick else ""))
    (out_dir / f"{stem}.json").write_text(json.dumps(data, indent=1) + "\n")
    text = report(rows, data)
    (out_dir / f"{stem}.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
