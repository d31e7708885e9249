// The browser benchmark page: one fresh worker per library, all loaded
// first; then each shape is timed on one thread by every library in turn (see
// bench-common.mjs for the method). Results go to the table and to
// window.benchResult.
//
// Query parameters (all optional):
//   libs=samebits,tfjs,ort   shapes=NAME,...|all (names from SHAPES)
//   ops=NAME,...|all|none (names from OPS: the operators between the products)
//   models=NAME,...|none (reference networks from out/models/, web/make_models.py;
//                         default none: they are large)
//   modes=fast,exact (samebits)   warmup=2   minms=80   reps=3
//   wheel=URL   pyodide=URL
import { reportWhenDone } from "./report.mjs";
import { wheelURL } from "./wheel.mjs";
import { SHAPES } from "./bench-shapes.mjs";
import { startWorker } from "./bench-client.mjs";

export { SHAPES };

const params = new URLSearchParams(location.search);
const here = (url) => new URL(url, location.href).href;
const $ = (id) => document.getElementById(id);
const list = (name, fallback) => (params.get(name) || fallback).split(",").filter(Boolean);


// name -> [operator, rows, cols]: the operator over a (rows, cols) float32
// array, softmax and layer_norm along the last axis. TF.js has every one but
// layer_norm; onnxruntime-web is timed on products only.
export const OPS = {
  "exp-1e6": ["exp", 1, 1000000], "tanh-1e6": ["tanh", 1, 1000000],
  "erf-1e6": ["erf", 1, 1000000], "sigmoid-1e6": ["sigmoid", 1, 1000000],
  "log-1e6": ["log", 1, 1000000],
  "softmax-12288x128": ["softmax", 12288, 128], "softmax-4096x768": ["softmax", 4096, 768],
  "layer_norm-12288x128": ["layer_norm", 12288, 128],
  "layer_norm-4096x768": ["layer_norm", 4096, 768],
};

const opNames = (list("ops", "all").includes("all") ? Object.keys(OPS) : list("ops", ""))
  .filter((n) => n !== "none");
for (const name of opNames) if (!OPS[name]) throw new Error(`unknown op ${name}`);
const modelNames = list("models", "none").filter((n) => n !== "none");
const shapeNames = (list("shapes", "all").includes("all") ? Object.keys(SHAPES) : list("shapes", ""))
  .filter((n) => n !== "none");
for (const name of shapeNames) if (!SHAPES[name]) throw new Error(`unknown shape ${name}`);
const timing = { warmup: Number(params.get("warmup") ?? 2), minMs: Number(params.get("minms") ?? 80),
                 reps: Number(params.get("reps") ?? 3) };
const libs = list("libs", "samebits,tfjs,ort");
const modes = list("modes", "fast,exact");

const result = { done: false, error: null, cells: [], opCells: [], modelCells: [], models: modelNames,
                 info: {}, shapes: shapeNames,
                 ops: opNames, opDims: Object.fromEntries(opNames.map((n) => [n, OPS[n]])), timing,
                 shapeDims: Object.fromEntries(shapeNames.map((n) => [n, SHAPES[n]])),
                 libs, modes, userAgent: navigator.userAgent,
                 crossOriginIsolated: self.crossOriginIsolated };
window.benchResult = result;
reportWhenDone("benchResult");   // ?report=PATH: POSTed when done (report.mjs)

const COLUMNS = [...(libs.includes("samebits") ? modes.map((m) => `samebits-${m}`) : []),
                 ...libs.filter((l) => l !== "samebits")];

function render() {
  const head = `<tr><th>shape (m, n, k)</th>${COLUMNS.map((c) => `<th>${c}</th>`).join("")}</tr>`;
  const rows = shapeNames.map((name) => {
    const [m, n, k] = SHAPES[name];
    const cells = COLUMNS.map((lib) => {
      const c = result.cells.find((x) => x.lib === lib && x.m === m && x.n === n && x.k === k);
      return c ? `<td>${c.ms.toFixed(3)} ms<br><b>${c.gflops.toFixed(1)}</b> GFLOP/s</td>` : "<td></td>";
    });
    return `<tr><td>${name} (${m}, ${n}, ${k})</td>${cells.join("")}</tr>`;
  });
  $("table").innerHTML = head + rows.join("");
  const opHead = `<tr><th>operator (rows, cols)</th>${COLUMNS.map((c) => `<th>${c}</th>`).join("")}</tr>`;
  const opRows = opNames.map((name) => {
    const [, rows, cols] = OPS[name];
    const cells = COLUMNS.map((lib) => {
      const c = result.opCells.find((x) => x.lib === lib && x.name === name);
      return c ? `<td>${c.ms.toFixed(3)} ms</td>` : "<td>—</td>";
    });
    return `<tr><td>${name} (${rows}, ${cols})</td>${cells.join("")}</tr>`;
  });
  $("ops").innerHTML = opNames.length ? opHead + opRows.join("") : "";
  const modelHead = `<tr><th>network</th>${COLUMNS.map((c) => `<th>${c}</th>`).join("")}</tr>`;
  const modelRows = modelNames.map((name) => {
    const cells = COLUMNS.map((lib) => {
      const c = result.modelCells.find((x) => x.lib === lib && x.name === name);
      return c ? `<td>${c.ms.toFixed(1)} ms</td>` : "<td>—</td>";
    });
    return `<tr><td>${name}</td>${cells.join("")}</tr>`;
  });
  $("models").innerHTML = modelNames.length ? modelHead + modelRows.join("") : "";
}

const WORKERS = {
  samebits: ["bench-worker-samebits.mjs", "module"],
  tfjs: ["bench-worker-tfjs.js", "classic"],
  ort: ["bench-worker-ort.mjs", "module"],
};

/** Each library's worker; its cells go to the tables as they come. */
function startLibWorker(lib) {
  const [url, type] = WORKERS[lib];
  return startWorker(lib, url, type, (data) => {
    const { type: kind, ...cell } = data;
    if (kind === "modelCell") result.modelCells.push(cell);
    else if (kind === "opCell") result.opCells.push(cell);
    else if (kind === "cell") result.cells.push({ ...cell, gflops: (2 * cell.m * cell.n * cell.k) / (cell.ms * 1e6) });
    else return;
    render();
  });
}

// Every library gets its own fresh worker, loaded one after the other; then
// the shapes are timed in turn, each shape by every library before the next
// shape, so that a disturbance on a shared machine hits the libraries alike.
async function main() {
  render();
  const base = { ...timing, base: here("./"), modes };
  const workers = {};
  try {
    for (const lib of libs) {
      $("status").textContent = `loading ${lib}…`;
      const job = { ...base, type: "init" };
      if (lib === "samebits") {
        job.wheelURL = await wheelURL(params);
        job.pyodideURL = here(params.get("pyodide") || "node_modules/pyodide/");
      }
      workers[lib] = startLibWorker(lib);
      result.info[lib] = (await workers[lib].send(job)).info;
    }
    for (const name of shapeNames) {
      for (const lib of libs) {
        $("status").textContent = `timing ${name} with ${lib}…`;
        await workers[lib].send({ type: "shape", shape: SHAPES[name] });
      }
    }
    const modelsURL = here("out/models/");
    for (const name of modelNames) {
      for (const lib of libs) {
        $("status").textContent = `timing ${name} with ${lib}…`;
        await workers[lib].send({ type: "model", name, modelsURL });
      }
    }
    for (const name of opNames) {
      const [op, rows, cols] = OPS[name];
      for (const lib of libs) {
        $("status").textContent = `timing ${name} with ${lib}…`;
        await workers[lib].send({ type: "op", name, op, rows, cols });
      }
    }
  } finally {
    for (const w of Object.values(workers)) w.worker.terminate();
  }
  $("status").textContent = "done";
}

main().catch((err) => {
  result.error = String(err && err.message ? err.message : err);
  $("status").textContent = `Error: ${result.error}`;
}).finally(() => { result.done = true; });
