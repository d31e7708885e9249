// The npm package's benchmark page: each library in a fresh worker with
// ?threads=N, every shape timed by all libraries in turn (bench-common.mjs
// has the method). Results go to the table and to window.jsBenchResult.
//
// Query: threads=1   libs=samebits,tfjs,ort   shapes=NAME,...|all|none (bench-shapes.mjs)
//        models=NAME,...|none (reference networks from out/models/, web/make_models.py;
//        samebits and ort only)   modes=fast,exact   warmup=2   minms=80   reps=3
import { SHAPES } from "./bench-shapes.mjs";
import { startWorker } from "./bench-client.mjs";

const params = new URLSearchParams(location.search);
const list = (name, fallback) => (params.get(name) || fallback).split(",").filter(Boolean);
const threads = Number(params.get("threads") ?? 1);
const libs = list("libs", "samebits,tfjs,ort");
const modes = list("modes", "fast,exact");
const shapeNames = list("shapes", "all").includes("all") ? Object.keys(SHAPES)
  : list("shapes", "").filter((n) => n !== "none");
const modelNames = list("models", "none").filter((n) => n !== "none");
for (const name of shapeNames) if (!SHAPES[name]) throw new Error(`unknown shape ${name}`);
const timing = { warmup: Number(params.get("warmup") ?? 2), minMs: Number(params.get("minms") ?? 80),
                 reps: Number(params.get("reps") ?? 3) };
const result = { done: false, error: null, cells: [], modelCells: [], models: modelNames,
                 info: {}, threads, libs, modes, timing,
                 shapes: Object.fromEntries(shapeNames.map((n) => [n, SHAPES[n]])),
                 crossOriginIsolated: self.crossOriginIsolated, userAgent: navigator.userAgent };
window.jsBenchResult = result;

const WORKERS = { samebits: ["bench-worker-samebits-js.mjs", "module"],
                  tfjs: ["bench-worker-tfjs.js", "classic"], ort: ["bench-worker-ort.mjs", "module"] };
const columns = [...(libs.includes("samebits") ? modes.map((m) => `samebits-${m}`) : []),
                 ...libs.filter((l) => l !== "samebits")];

function render() {
  const head = `<tr><th>shape (m, n, k), ${threads} thread(s)</th>${columns.map((c) => `<th>${c}</th>`).join("")}</tr>`;
  const rows = shapeNames.map((name) => {
    const [m, n, k] = SHAPES[name];
    const cells = columns.map((lib) => {
      const c = result.cells.find((x) => x.lib === lib && x.m === m && x.n === n && x.k === k);
      return c ? `<td>${c.ms.toFixed(3)} ms<br><b>${c.gflops.toFixed(1)}</b> GFLOP/s</td>` : "<td></td>";
    });
    return `<tr><td>${name} (${m}, ${n}, ${k})</td>${cells.join("")}</tr>`;
  });
  document.getElementById("table").innerHTML = head + rows.join("");
}

function startLibWorker(lib) {
  const [url, type] = WORKERS[lib];
  return startWorker(lib, url, type, (data) => {
    if (data.type === "modelCell") {
      const { type: _, ...cell } = data;
      result.modelCells.push(cell);
      return;
    }
    if (data.type !== "cell") return;
    const { type: _, ...cell } = data;
    result.cells.push({ ...cell, gflops: (2 * cell.m * cell.n * cell.k) / (cell.ms * 1e6) });
    render();
  });
}

async function main() {
  render();
  const workers = {};
  const status = document.getElementById("status");
  try {
    for (const lib of libs) {
      status.textContent = `loading ${lib}…`;
      workers[lib] = startLibWorker(lib);
      result.info[lib] = (await workers[lib].send({ type: "init", ...timing, modes, threads,
                                                    base: new URL("./", location.href).href })).info;
    }
    for (const name of shapeNames) {
      for (const lib of libs) {
        status.textContent = `timing ${name} with ${lib}…`;
        await workers[lib].send({ type: "shape", shape: SHAPES[name] });
      }
    }
    const modelsURL = new URL("out/models/", location.href).href;
    for (const name of modelNames) {
      for (const lib of libs.filter((l) => l !== "tfjs")) {
        status.textContent = `timing ${name} with ${lib}…`;
        await workers[lib].send({ type: "model", name, modelsURL });
      }
    }
  } finally {
    for (const w of Object.values(workers)) w.worker.terminate();
  }
  status.textContent = "done";
}

main().catch((err) => {
  result.error = String(err && err.stack ? err.stack : err);
  document.getElementById("status").textContent = `Error: ${result.error}`;
}).finally(() => { result.done = true; });
