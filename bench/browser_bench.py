"""Browser benchmark: samebits (wasm, fast on relaxed SIMD and exact on plain
SIMD128) against TensorFlow.js-wasm (XNNPACK) and onnxruntime-web, one thread,
in Debian's Chromium through Playwright, or in Firefox or WebKit (--engine,
web/engines.py).

    python bench/browser_bench.py                      # every shape, 2 fresh pages
    python bench/browser_bench.py --shapes sq256,sq1024 --pages 3 --no-write
    python bench/browser_bench.py --shapes none --ops exp-1e6,softmax-4096x768
    python bench/browser_bench.py --engine firefox     # browser-<date>-firefox.md

The operators between the products (exp, tanh, erf, sigmoid, log, softmax,
layer_norm) are timed too, against TF.js's wasm kernels where it has one, and
with --models the reference networks (python web/make_models.py) against
onnxruntime-web running the same ONNX files.

Opens web/bench.html (served from 127.0.0.1 by web/serve.py, with the
Chromium flags of web/run_browser.py) in --pages fresh browser processes and
keeps the faster time of each cell: V8 sometimes leaves a hot loop
unoptimised in one page. Writes bench/results/browser-<date>.md (a table of
ms and GFLOP/s per library and the speed ratios) and browser-<date>.json.

Needs bash wasm/build.sh, npm ci in web/ (pyodide, @tensorflow/tfjs-core,
@tensorflow/tfjs-backend-wasm, onnxruntime-web), pip install playwright and
/usr/bin/chromium.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "web"))
from run_browser import CHROMIUM_ARGS, missing_prerequisites, run_until_done  # noqa: E402

RESULTS = ROOT / "bench" / "results"
NODE_MODULES = ROOT / "web" / "node_modules"
PEERS = {"tfjs": NODE_MODULES / "@tensorflow" / "tfjs-backend-wasm" / "package.json",
         "ort": NODE_MODULES / "onnxruntime-web" / "package.json"}
# Cells judged against the targets of issue 3: fast >= 1.3x and exact >=
# 0.95x TF.js-wasm on these shapes.
TARGET_SHAPES = ("sq256", "sq1024", "bert4096-qkvo", "bert4096-ffn-up", "bert4096-ffn-down")
FAST_TARGET, EXACT_TARGET = 1.3, 0.95


def run_page(query: dict, timeout_s: float, log, engine: str = "chromium") -> dict:
    """One fresh browser process, one page; returns window.benchResult,
    logging each cell as it comes (in Chromium; the other engines' cells when
    the page is done)."""
    if engine != "chromium":
        import engines
        result = engines.run_until_done(engine, f"bench.html?{urlencode(query)}", "benchResult",
                                        timeout_s)
        for c in result.get("cells", []) + result.get("opCells", []) + \
                result.get("modelCells", []):
            log(f"  {c['lib']:15s} {c.get('name') or (c['m'], c['n'], c['k'])}: {c['ms']:9.3f} ms")
        return result
    seen: set[tuple] = set()

    def on_poll(state: dict) -> None:
        cells = (state.get("cells") or []) + (state.get("opCells") or []) + \
            (state.get("modelCells") or [])
        for c in cells:
            key = (c["lib"], c.get("name"), c.get("m"), c.get("n"), c.get("k"))
            if key in seen:
                continue
            seen.add(key)
            if "name" in c:
                log(f"  {c['lib']:15s} {c['name']}: {c['ms']:9.3f} ms")
            else:
                log(f"  {c['lib']:15s} ({c['m']}, {c['n']}, {c['k']}): "
                    f"{c['ms']:9.3f} ms {c['gflops']:6.1f} GFLOP/s")

    return run_until_done(f"bench.html?{urlencode(query)}", "benchResult", timeout_s,
                          probe="window.benchResult && {done: window.benchResult.done,"
                                " cells: window.benchResult.cells,"
                                " opCells: window.benchResult.opCells,"
                                " modelCells: window.benchResult.modelCells}",
                          on_poll=on_poll)


def best_cells(pages: list[dict], fields: tuple[str, ...] = ("lib", "m", "n", "k")
               ) -> dict[tuple, dict]:
    """(the cell's `fields`) -> the fastest cell over the pages, with every page's time."""
    best: dict[tuple, dict] = {}
    for page in pages:
        for c in page["cells"]:
            key = tuple(c[f] for f in fields)
            entry = best.setdefault(key, {**c, "page_ms": []})
            entry["page_ms"].append(round(c["ms"], 4))
            if c["ms"] < entry["ms"]:
                entry.update(ms=c["ms"], gflops=c["gflops"])
    return best


def best_named_cells(pages: list[dict], field: str,
                     fields: tuple[str, ...] = ("lib", "name")) -> dict[tuple, dict]:
    """(lib, name) (or the cell's `fields`, lib first) -> the fastest cell
    over the pages, for the named cells of `field` ("opCells": operators,
    "modelCells": networks)."""
    best: dict[tuple, dict] = {}
    for page in pages:
        for c in page.get(field) or []:
            key = tuple(c[f] for f in fields)
            entry = best.setdefault(key, {**c, "page_ms": []})
            entry["page_ms"].append(round(c["ms"], 4))
            if c["ms"] < entry["ms"]:
                entry.update(ms=c["ms"])
    return best


# How close a peer's probes must be to samebits exact mode's (relative above
# 1): a peer computing something else would otherwise look fast. Networks
# get more room than single operators: their sums run in other orders.
OP_TOLERANCE, MODEL_TOLERANCE = 1e-4, 1e-3


def check_named_agreement(best: dict, tolerance: float) -> list[str]:
    """Every library's named-cell probes within `tolerance` of samebits
    exact's in the cell of the same key (best_named_cells' keys, lib first)."""
    problems = []
    for (lib, *rest), cell in best.items():
        ref = best.get(("samebits-exact", *rest))
        if lib == "samebits-exact" or ref is None:
            continue
        for got, want in zip(cell["probes"], ref["probes"]):
            if not abs(got - want) <= tolerance * max(1.0, abs(want)):
                where = " ".join(str(r) for r in rest)
                problems.append(f"{lib} {where}: output {got!r}, samebits exact {want!r}")
    return problems


def _named_row(best: dict, name: str, label: str, peer: str, digits: int) -> str:
    """A table row: samebits fast and exact ms, the peer's ms, both ratios."""
    libs = ("samebits-fast", "samebits-exact", peer)
    ms = {lib: best[(lib, name)]["ms"] for lib in libs if (lib, name) in best}
    row = [label] + [f"{ms[lib]:.{digits}f}" if lib in ms else "—" for lib in libs]
    for lib in libs[:2]:
        row.append(f"{ms[peer] / ms[lib]:.2f}x" if lib in ms and peer in ms else "—")
    return "| " + " | ".join(row) + " |"


def models_markdown(best_models: dict, names: list[str]) -> list[str]:
    if not names:
        return []
    lines = ["## Reference networks", "",
             "One thread; samebits.onnx (fast mode on the relaxed-SIMD module, exact on the "
             "plain one) against onnxruntime-web's wasm execution provider on the same ONNX "
             "files (web/make_models.py), batch as in the models hash suite; each output "
             "checked against samebits exact mode (three probes). Targets: fast >= 1.3x, "
             "exact >= 1.0x onnxruntime-web.", "",
             "| network | samebits-fast ms | samebits-exact ms | ort ms | fast/ort | exact/ort |",
             "|---|---:|---:|---:|---:|---:|"]
    lines += [_named_row(best_models, name, name, "ort", 1) for name in names]
    return lines + [""]


def ops_markdown(best_ops: dict, ops: dict) -> list[str]:
    if not ops:
        return []
    lines = ["## The operators between the products", "",
             "One thread; exp, tanh, erf, sigmoid and log over 10^6 values in [-4, 4) (log: "
             "[0.5, 1.5)), softmax and layer_norm along the last axis, `out=` preallocated. "
             "samebits runs the same wheel as above (fast mode on the relaxed-SIMD module); "
             "TF.js runs its wasm kernel where it has one (no layer norm). Every output was "
             "checked against samebits exact mode (three probes).", "",
             "| operator (rows, cols) | samebits-fast ms | samebits-exact ms | tfjs ms "
             "| fast/tfjs | exact/tfjs |", "|---|---:|---:|---:|---:|---:|"]
    lines += [_named_row(best_ops, name, f"{name} ({rows}, {cols})", "tfjs", 3)
              for name, (op, rows, cols) in ops.items()]
    lines += ["", "Ratios are speed ratios (TF.js time / samebits time; above 1: samebits "
              "is faster).", ""]
    return lines


def cpu_name() -> str:
    """lscpu's model name, with the family and model numbers (a VM may hide the name)."""
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
    except OSError:
        return platform.processor() or platform.machine()
    fields = dict(line.split(":", 1) for line in out.splitlines() if ":" in line)
    fields = {k.strip(): v.strip() for k, v in fields.items()}
    name = fields.get("Model name", platform.machine())
    if "CPU family" in fields and "Model" in fields:
        name += f" (family {fields['CPU family']}, model {fields['Model']})"
    return name


def check_agreement(best: dict) -> list[str]:
    """Every library's probe outputs (first, middle, last) must agree with
    samebits exact mode within 1e-3 * sqrt(k): a misconfigured peer that does
    not compute the product would otherwise look fast."""
    problems = []
    for (lib, m, n, k), cell in best.items():
        ref = best.get(("samebits-exact", m, n, k))
        if lib == "samebits-exact" or ref is None:
            continue
        tol = 1e-3 * k ** 0.5
        for got, want in zip(cell["probes"], ref["probes"]):
            if not abs(got - want) <= tol:
                problems.append(f"{lib} ({m}, {n}, {k}): output {got!r}, samebits exact {want!r}")
    return problems


def package_version(path: Path) -> str:
    try:
        return json.loads(path.read_text())["version"]
    except (OSError, ValueError, KeyError):
        return "?"


def markdown(pages: list[dict], best: dict, shapes: dict, meta: dict,
             best_ops: dict | None = None, ops: dict | None = None,
             best_models: dict | None = None, models: list | None = None) -> str:
    loads = ", ".join(f"{p['load_before']:.2f}" for p in pages)
    libs = [lib for lib in ("samebits-fast", "samebits-exact", "tfjs", "ort")
            if any(k[0] == lib for k in best)]
    lines = [f"# Browser benchmark, {meta['date']}", "",
             (f"Chromium {meta['browser']} (headless, `{' '.join(CHROMIUM_ARGS)}`), "
              if meta.get("engine", "chromium") == "chromium" else
              f"{meta['browser']} (web/engines.py: {meta['engine']}), ") +
             f"CPU: {meta['cpu']}; one thread everywhere.", "",
             f"* **samebits-fast**: samebits {meta['samebits'].get('version', '?')} in Pyodide "
             f"{meta['samebits'].get('pyodide', '?')}, `matmul(a, b, out=c, threads=1)`, fast mode "
             f"on `{meta['samebits'].get('fast_library')}` ("
             f"{'relaxed SIMD' if 'relaxed' in str(meta['samebits'].get('fast_library')) else 'plain SIMD128: the engine has no relaxed SIMD'}, fused: "
             f"{meta['samebits'].get('fused')}), vec4 path, tile "
             f"{meta['samebits'].get('tile')}; B is packed inside every call.",
             f"* **samebits-exact**: the same, exact mode, on `{meta['samebits'].get('library')}` "
             f"(plain SIMD128).",
             f"* **tfjs**: @tensorflow/tfjs-backend-wasm {meta['tfjs_version']} (XNNPACK), "
             f"SIMD binary without threads (threads: {meta['tfjs'].get('threads')}), "
             "`tf.matMul(a, b).dispose()`; XNNPACK keeps B packed between calls.",
             f"* **ort**: onnxruntime-web {meta['ort_version']}, wasm execution provider, "
             "numThreads=1, a one-node MatMul model with B as an initializer (packed once), "
             "`await session.run({A: a})` (the output is copied into a new tensor).", "",
             f"Method: per cell {meta['timing']['warmup']} warm-up calls, then calls repeated "
             f"for at least {meta['timing']['minMs']} ms and averaged, median of "
             f"{meta['timing']['reps']} such means; each library in its own fresh worker, every "
             "shape timed by all libraries in turn before the next shape; "
             f"{len(pages)} fresh browser processes, the faster time of each cell kept "
             f"(1-minute load average before each page: {loads}). "
             "GFLOP/s = 2mnk / time. Every library's outputs were checked against samebits "
             "exact mode (three probes per product).", "",
             ]
    if shapes:
        lines += ["| shape (m, n, k) | " + " | ".join(f"{lib} ms | GFLOP/s" for lib in libs)
                  + " | fast/tfjs | exact/tfjs | fast/ort | exact/ort |",
                  "|---|" + "---:|---:|" * len(libs) + "---:|---:|---:|---:|"]
    met, missed = [], []
    for name, (m, n, k) in shapes.items():
        row = [f"{name} ({m}, {n}, {k})"]
        ms = {}
        for lib in libs:
            c = best.get((lib, m, n, k))
            if c:
                ms[lib] = c["ms"]
                row += [f"{c['ms']:.3f}", f"{c['gflops']:.1f}"]
            else:
                row += ["—", "—"]

        def ratio(lib, peer):
            if lib in ms and peer in ms:
                return ms[peer] / ms[lib]
            return None

        for lib, peer, target in (("samebits-fast", "tfjs", FAST_TARGET),
                                  ("samebits-exact", "tfjs", EXACT_TARGET),
                                  ("samebits-fast", "ort", None), ("samebits-exact", "ort", None)):
            r = ratio(lib, peer)
            if r is None:
                row.append("—")
                continue
            mark = ""
            if target is not None and name in TARGET_SHAPES:
                ok = r >= target
                (met if ok else missed).append(f"{lib.split('-')[1]} {name} {r:.2f}x")
                mark = " ✓" if ok else " ✗"
            row.append(f"{r:.2f}x{mark}")
        lines.append("| " + " | ".join(row) + " |")
    if shapes:
        lines += ["", "Ratios are speed ratios (peer time / samebits time; above 1: samebits "
                  "is faster). ✓/✗ mark the target cells: fast ≥ 1.3x and exact ≥ 0.95x "
                  "TF.js-wasm on 256³, 1024³ and the BERT-base products at 32 x 128 rows.", "",
                  f"Targets met: {', '.join(met) or 'none'}.",
                  f"Targets missed: {', '.join(missed) or 'none'}.", ""]
    lines += ops_markdown(best_ops or {}, ops or {})
    lines += models_markdown(best_models or {}, models or [])
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shapes", default="all", help="comma-separated names from web/bench.mjs")
    parser.add_argument("--ops", default="all",
                        help="comma-separated operator names from web/bench.mjs, or none")
    parser.add_argument("--models", default="none",
                        help="reference networks (web/make_models.py), comma-separated, or none")
    parser.add_argument("--libs", default="samebits,tfjs,ort")
    parser.add_argument("--pages", type=int, default=2, help="fresh browser processes (>= 2)")
    parser.add_argument("--minms", type=float, default=80)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=1800, help="seconds per page")
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--no-write", action="store_true", help="print only")
    parser.add_argument("--wheel", help="samebits wheel URL path on the page's server "
                        "(default: the one wasm/out/wheel.json names)")
    parser.add_argument("--engine", default="chromium", choices=("chromium", "firefox", "webkit"))
    args = parser.parse_args(argv)

    missing = missing_prerequisites()
    if args.engine != "chromium":
        import engines
        missing = [m for m in missing if "Chromium" not in m and "Playwright" not in m]
        missing += engines.missing_prerequisites(args.engine)
    missing += [f"{p.parent.name} from npm (run npm ci in web/)" for p in PEERS.values()
                if not p.is_file()]
    if missing:
        print("browser_bench.py: missing:\n  " + "\n  ".join(missing), file=sys.stderr)
        return 2
    query = {"libs": args.libs, "shapes": args.shapes, "ops": args.ops, "models": args.models,
             "minms": args.minms,
             "reps": args.reps,
             "warmup": args.warmup}
    if args.wheel:
        query["wheel"] = args.wheel
    pages = []
    for index in range(args.pages):
        load = os.getloadavg()[0]
        print(f"page {index + 1} of {args.pages} (load average {load:.2f})", flush=True)
        if load > 0.8:
            print("  warning: the machine is busy; timings will be low", flush=True)
        result = run_page(query, args.timeout, lambda s: print(s, flush=True), args.engine)
        result["load_before"], result["load_after"] = load, os.getloadavg()[0]
        if result.get("error") or result.get("blocked"):
            print(f"browser_bench.py: page error: {result.get('error')}; blocked: "
                  f"{result.get('blocked')}; console: {result.get('console')[-5:]}",
                  file=sys.stderr)
            return 1
        pages.append(result)

    best = best_cells(pages)
    best_ops = best_named_cells(pages, "opCells")
    best_models = best_named_cells(pages, "modelCells")
    problems = check_agreement(best) + check_named_agreement(best_ops, OP_TOLERANCE) + \
        check_named_agreement(best_models, MODEL_TOLERANCE)
    if problems:
        print("browser_bench.py: the libraries disagree on the products:\n  "
              + "\n  ".join(problems), file=sys.stderr)
        return 1
    shapes = {name: tuple(dims) for name, dims in pages[0]["shapeDims"].items()}
    today = datetime.date.today().isoformat()
    meta = {"date": today, "engine": args.engine, "browser": pages[0].get("browser_version"),
            "cpu": cpu_name(),
            "samebits": pages[0]["info"].get("samebits", {}),
            "tfjs": pages[0]["info"].get("tfjs", {}), "ort": pages[0]["info"].get("ort", {}),
            "tfjs_version": package_version(PEERS["tfjs"]),
            "ort_version": package_version(PEERS["ort"]), "timing": pages[0]["timing"],
            "pages": len(pages)}
    ops = {name: tuple(dims) for name, dims in pages[0].get("opDims", {}).items()}
    models = list(pages[0].get("models") or [])
    text = markdown(pages, best, shapes, meta, best_ops, ops, best_models, models)
    print(text)
    if not args.no_write:
        args.out.mkdir(parents=True, exist_ok=True)
        md = args.out / (f"browser-{today}.md" if args.engine == "chromium"
                         else f"browser-{today}-{args.engine}.md")
        md.write_text(text, encoding="utf-8")
        cells = [dict(v, lib=k[0]) for k, v in sorted(best.items())]
        op_cells = [dict(v, lib=k[0]) for k, v in sorted(best_ops.items())]
        model_cells = [dict(v, lib=k[0]) for k, v in sorted(best_models.items())]
        md.with_suffix(".json").write_text(json.dumps(
            {"meta": meta, "shapes": shapes, "cells": cells, "ops": ops, "op_cells": op_cells,
             "models": models, "model_cells": model_cells,
             "pages": [{"info": p["info"], "cells": p["cells"], "opCells": p.get("opCells", []),
                        "userAgent": p["userAgent"],
                        "load_before": p["load_before"], "load_after": p["load_after"]}
                       for p in pages]}, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {md} and {md.with_suffix('.json')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
