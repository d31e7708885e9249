"""Browser benchmark of the npm package (js/): samebits' matrix products
against TensorFlow.js-wasm (XNNPACK; its threaded SIMD binary above one
thread) and onnxruntime-web (wasm execution provider, numThreads), at 1 and
2 threads, in Debian's Chromium through Playwright, on a cross-origin-isolated
page (web/js-bench.html).

    python bench/js_bench.py                          # 1 and 2 threads, 2 pages each
    python bench/js_bench.py --threads 2 --shapes sq256,m1 --pages 3 --no-write
    python bench/js_bench.py --shapes none --models vad_small,squeezenet_small,onehot_classifier

With --models, reference networks (web/make_models.py writes their files,
SMALL_NETWORKS at batch 1) run through the npm package's loadModel (the C
graph runtime in the module) against onnxruntime-web's InferenceSession on
the same files, at the same thread counts.

Each page is a fresh browser process; every cell keeps the faster of its
pages' times (V8 sometimes leaves a hot loop unoptimised in one page) and
lists them all. Writes bench/results/js-browser-<date>.md and .json.

Needs bash js/build.sh, npm ci in web/, pip install playwright and
/usr/bin/chromium.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import sys
from pathlib import Path
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "web"))
sys.path.insert(0, str(ROOT / "bench"))
from run_browser import CHROMIUM_ARGS, run_until_done  # noqa: E402
from browser_bench import PEERS, cpu_name, package_version  # noqa: E402
from browser_bench import best_cells as browser_best_cells  # noqa: E402
from browser_bench import MODEL_TOLERANCE, best_named_cells, check_named_agreement  # noqa: E402

RESULTS = ROOT / "bench" / "results"
# Issue 13's targets: fast >= 1.3x and exact >= 1.0x both peers on 256^3 to
# the BERT products, at 1 and 2 threads; small products >= 1.0x TF.js at 1 thread.
LARGE = ("sq256", "sq512", "sq1024", "bert128-qkvo", "bert128-ffn-up", "bert128-ffn-down",
         "bert4096-qkvo", "bert4096-ffn-up", "bert4096-ffn-down")
SMALL = ("sq64", "sq128", "m1", "m32")
FAST_TARGET, EXACT_TARGET, SMALL_TARGET = 1.3, 1.0, 1.0
# Issue 20's target for the small networks: fast >= 1.3x onnxruntime-web.
MODEL_FAST_TARGET = 1.3


def run_page(query: dict, timeout_s: float, log) -> dict:
    """One fresh Chromium process, one page; returns window.jsBenchResult,
    logging each cell as it comes."""
    seen = 0

    def on_poll(state: dict) -> None:
        nonlocal seen
        cells = state.get("cells") or []
        for c in cells[seen:]:
            log(f"  {c['lib']:15s} t={c['threads']} ({c['m']}, {c['n']}, {c['k']}): "
                f"{c['ms']:9.3f} ms {c['gflops']:6.1f} GFLOP/s")
        seen = len(cells)

    return run_until_done(f"js-bench.html?{urlencode(query)}", "jsBenchResult", timeout_s,
                          probe="window.jsBenchResult && {done: window.jsBenchResult.done,"
                                " cells: window.jsBenchResult.cells}", on_poll=on_poll)


def best_cells(pages: list[dict]) -> dict[tuple, dict]:
    """(lib, threads, m, n, k) -> the fastest cell over the pages, with every page's time."""
    return browser_best_cells(pages, ("lib", "threads", "m", "n", "k"))


def check_agreement(best: dict) -> list[str]:
    """Every library's probes within 1e-3 sqrt(k) of samebits exact mode's."""
    problems = []
    for (lib, t, m, n, k), cell in best.items():
        ref = best.get(("samebits-exact", t, m, n, k))
        if lib == "samebits-exact" or ref is None:
            continue
        for got, want in zip(cell["probes"], ref["probes"]):
            if not abs(got - want) <= 1e-3 * k ** 0.5:
                problems.append(f"{lib} t={t} ({m}, {n}, {k}): {got!r} vs exact {want!r}")
    return problems


def models_markdown(best: dict, names: list[str], thread_counts: list[int], meta: dict) -> str:
    if not names:
        return ""
    lines = ["## Networks", "",
             f"The npm package's `loadModel(bytes, {{mode}})` (the C graph runtime in the "
             f"module; fast mode on the relaxed-SIMD build) against onnxruntime-web "
             f"{meta['ort']} (`InferenceSession.create`, wasm execution provider, "
             "graphOptimizationLevel all, intraOpNumThreads = t) on the same ONNX files "
             "(web/make_models.py, batch 1), each run's inputs copied in and outputs out "
             "(timed, for both). Outputs checked against samebits exact (three probes, "
             f"relative {MODEL_TOLERANCE}). Target: fast >= {MODEL_FAST_TARGET}x "
             "onnxruntime-web.", "",
             "| network | threads | samebits-fast ms | samebits-exact ms | ort ms | fast/ort "
             "| exact/ort | spread (max/min over pages) |", "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for name in names:
        for t in thread_counts:
            cells = {lib: best.get((lib, t, name)) for lib in ("samebits-fast", "samebits-exact", "ort")}
            row = [name, str(t)] + [f"{c['ms']:.3f}" if c else "—" for c in cells.values()]
            for lib in ("samebits-fast", "samebits-exact"):
                if cells[lib] and cells["ort"]:
                    ratio = cells["ort"]["ms"] / cells[lib]["ms"]
                    mark = ""
                    if lib == "samebits-fast":
                        mark = " ✓" if ratio >= MODEL_FAST_TARGET else " ✗"
                    row.append(f"{ratio:.2f}x{mark}")
                else:
                    row.append("—")
            spreads = [max(c["page_ms"]) / min(c["page_ms"]) for c in cells.values() if c]
            row.append(f"{max(spreads):.2f}" if spreads else "—")
            lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines + [""])


def markdown(best: dict, shapes: dict, thread_counts: list[int], meta: dict) -> str:
    lines = [f"# The npm package in Chromium, {meta['date']}", "",
             f"Chromium {meta['chromium']} (headless, `{' '.join(CHROMIUM_ARGS)}`), cross-origin "
             f"isolated; CPU: {meta['cpu']} ({os.cpu_count()} logical processors).", "",
             f"* **samebits-fast / -exact**: the npm package {meta['samebits']}, "
             "`sb.matmul(a, packedB, m, k, n, {mode, out})`, B packed once by `packMatrix` "
             "(as the peers keep theirs); each call copies A into the module's memory and C "
             "out (timed). Fast mode on the relaxed-SIMD build (fused), exact on the same "
             "module.",
             f"* **tfjs**: @tensorflow/tfjs-backend-wasm {meta['tfjs']} (XNNPACK): at 1 thread "
             "the SIMD binary, above it the threaded SIMD binary with setThreadsCount(t); "
             "`tf.matMul(a, b).dispose()` on tensors made once (B stays packed by XNNPACK).",
             f"* **ort**: onnxruntime-web {meta['ort']}, wasm execution provider, numThreads = "
             "intraOpNumThreads = t, a one-node MatMul model with B an initializer.", "",
             f"Method: per cell {meta['timing']['warmup']} warm-up calls, then calls repeated for "
             f"at least {meta['timing']['minMs']} ms and averaged, median of "
             f"{meta['timing']['reps']} such means; each library in its own fresh worker, every "
             f"shape timed by all libraries before the next; {meta['pages']} fresh browser "
             "processes per thread count, the fastest kept, all listed in the JSON "
             "(`page_ms`). Every output checked against samebits exact (three probes).", ""]
    libs = ("samebits-fast", "samebits-exact", "tfjs", "ort")
    met, missed = [], []
    for t in thread_counts:
        lines += [f"## {t} thread{'s' if t > 1 else ''}", "",
                  "| shape (m, n, k) | " + " | ".join(f"{lib} ms" for lib in libs)
                  + " | fast/tfjs | exact/tfjs | fast/ort | exact/ort | spread (max/min over pages) |",
                  "|---|" + "---:|" * (len(libs) + 5)]
        for name, (m, n, k) in shapes.items():
            cells = {lib: best.get((lib, t, m, n, k)) for lib in libs}
            row = [f"{name} ({m}, {n}, {k})"]
            row += [f"{c['ms']:.3f}" if c else "—" for c in cells.values()]
            for lib, peer in (("samebits-fast", "tfjs"), ("samebits-exact", "tfjs"),
                              ("samebits-fast", "ort"), ("samebits-exact", "ort")):
                if not (cells[lib] and cells[peer]):
                    row.append("—")
                    continue
                ratio = cells[peer]["ms"] / cells[lib]["ms"]
                target = None
                if name in LARGE:
                    target = FAST_TARGET if lib.endswith("fast") else EXACT_TARGET
                elif name in SMALL and t == 1 and peer == "tfjs":
                    target = SMALL_TARGET
                mark = ""
                if target is not None:
                    label = f"{lib.split('-')[1]}/{peer} {name} t={t} {ratio:.2f}x"
                    (met if ratio >= target else missed).append(label)
                    mark = " ✓" if ratio >= target else " ✗"
                row.append(f"{ratio:.2f}x{mark}")
            spreads = [max(c["page_ms"]) / min(c["page_ms"]) for c in cells.values() if c]
            row.append(f"{max(spreads):.2f}" if spreads else "—")
            lines.append("| " + " | ".join(row) + " |")
        lines.append("")
    lines += ["Ratios are speed ratios (peer time / samebits time; above 1: samebits is "
              "faster). ✓/✗: the targets (fast ≥ 1.3x and exact ≥ 1.0x both peers from 256³ "
              "to the BERT products; the small products ≥ 1.0x TF.js at one thread).", "",
              f"Targets met ({len(met)}): {', '.join(met) or 'none'}.", "",
              f"Targets missed ({len(missed)}): {', '.join(missed) or 'none'}.", ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", default="1,2", help="comma-separated thread counts")
    parser.add_argument("--shapes", default="all", help="names from web/bench-shapes.mjs")
    parser.add_argument("--libs", default="samebits,tfjs,ort")
    parser.add_argument("--pages", type=int, default=2, help="fresh browser processes per count")
    parser.add_argument("--minms", type=float, default=80)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=1800, help="seconds per page")
    parser.add_argument("--models", default="none",
                        help="reference networks (web/make_models.py), comma-separated, or none")
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args(argv)
    if not (ROOT / "js" / "dist" / "samebits-threads.wasm").is_file():
        print("js_bench.py: run bash js/build.sh first", file=sys.stderr)
        return 2
    thread_counts = [int(t) for t in args.threads.split(",")]
    model_names = [n for n in args.models.split(",") if n and n != "none"]
    if model_names:
        sys.path.insert(0, str(ROOT / "web"))
        from make_models import make_models
        make_models(networks=model_names, manifest=False)   # the suite's models.json stays
    pages, shapes, info = [], {}, {}
    for t in thread_counts:
        for index in range(args.pages):
            load = os.getloadavg()[0]
            print(f"threads={t}: page {index + 1} of {args.pages} (load average {load:.2f})",
                  flush=True)
            query = {"threads": t, "libs": args.libs, "shapes": args.shapes, "minms": args.minms,
                     "reps": args.reps, "warmup": args.warmup, "models": args.models}
            result = run_page(query, args.timeout, lambda s: print(s, flush=True))
            if result.get("error") or result.get("blocked") or not result["crossOriginIsolated"]:
                print(f"js_bench.py: page error: {result.get('error')}; blocked: "
                      f"{result.get('blocked')}; isolated: {result['crossOriginIsolated']}; "
                      f"console: {result.get('console')[-5:]}", file=sys.stderr)
                return 1
            result["load_before"] = load
            pages.append(result)
            shapes, info = result["shapes"], result["info"]
    best = best_cells(pages)
    best_models = best_named_cells(pages, "modelCells", ("lib", "threads", "name"))
    problems = check_agreement(best) + check_named_agreement(best_models, MODEL_TOLERANCE)
    if problems:
        print("js_bench.py: outputs disagree:\n  " + "\n  ".join(problems), file=sys.stderr)
        return 1
    meta = {"date": datetime.date.today().isoformat(), "chromium": pages[0]["browser_version"],
            "cpu": cpu_name(), "samebits": info.get("samebits", {}).get("version", "?"),
            "tfjs": package_version(PEERS["tfjs"]), "ort": package_version(PEERS["ort"]),
            "timing": pages[0]["timing"], "pages": args.pages}
    text = markdown(best, shapes, thread_counts, meta) if shapes else (
        f"# The npm package in Chromium, {meta['date']}\n\nChromium {meta['chromium']} "
        f"(headless, `{' '.join(CHROMIUM_ARGS)}`), cross-origin isolated; CPU: {meta['cpu']} "
        f"({os.cpu_count()} logical processors). Timing: {meta['timing']['warmup']} warm-up "
        f"runs, then runs repeated for at least {meta['timing']['minMs']} ms and averaged, "
        f"median of {meta['timing']['reps']} such means; each library in its own fresh "
        f"worker; {meta['pages']} fresh browser processes per thread count, the fastest "
        "kept, all in the JSON (`page_ms`).\n")
    text += "\n" + models_markdown(best_models, model_names, thread_counts, meta)
    print(text)
    if not args.no_write:
        args.out.mkdir(parents=True, exist_ok=True)
        stem = args.out / (f"js-browser-{meta['date']}" + ("-models" if not shapes else ""))
        stem.with_suffix(".md").write_text(text)
        stem.with_suffix(".json").write_text(json.dumps(
            {"meta": meta, "info": info, "loads": [p["load_before"] for p in pages],
             "cells": list(best.values()), "model_cells": list(best_models.values())},
            indent=1))
        print(f"wrote {stem}.md and .json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
