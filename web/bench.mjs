// The browser benchmark page: one fresh worker per library, run one after
// another, each timing every shape on one thread (see bench-common.mjs for
// the method). Results go to the table and to window.benchResult.
//
// Query parameters (all optional):
//   libs=samebits,tfjs,ort   shapes=NAME,...|all (names from SHAPES)
//   modes=fast,exact (samebits)   warmup=2   minms=80   reps=3
//   wheel=URL   pyodide=URL
const params = new URLSearchParams(location.search);
const here = (url) => new URL(url, location.href).href;
const $ = (id) => document.getElementById(id);
const list = (name, fallback) => (params.get(name) || fallback).split(",").filter(Boolean);

// name -> [m, n, k]: C (m x n) = A (m x k) B (k x n)
export const SHAPES = {
  "sq64": [64, 64, 64], "sq128": [128, 128, 128], "sq256": [256, 256, 256],
  "sq512": [512, 512, 512], "sq1024": [1024, 1024, 1024],
  "bert4096-qkvo": [4096, 768, 768], "bert4096-ffn-up": [4096, 3072, 768],
  "bert4096-ffn-down": [4096, 768, 3072],
  "bert128-qkvo": [128, 768, 768], "bert128-ffn-up": [128, 3072, 768],
  "bert128-ffn-down": [128, 768, 3072],
  "m1": [1, 768, 768], "m32": [32, 768, 768],
};

const shapeNames = list("shapes", "all").includes("all") ? Object.keys(SHAPES) : list("shapes", "");
for (const name of shapeNames) if (!SHAPES[name]) throw new Error(`unknown shape ${name}`);
const timing = { warmup: Number(params.get("warmup") ?? 2), minMs: Number(params.get("minms") ?? 80),
                 reps: Number(params.get("reps") ?? 3) };
const libs = list("libs", "samebits,tfjs,ort");
const modes = list("modes", "fast,exact");

const result = { done: false, error: null, cells: [], info: {}, shapes: shapeNames, timing,
                 shapeDims: Object.fromEntries(shapeNames.map((n) => [n, SHAPES[n]])),
                 libs, modes, userAgent: navigator.userAgent,
                 crossOriginIsolated: self.crossOriginIsolated };
window.benchResult = result;

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
}

async function wheelURL() {
  if (params.get("wheel")) return here(params.get("wheel"));
  const manifestURL = here("../wasm/out/wheel.json");
  const response = await fetch(manifestURL, { cache: "no-store" });
  if (!response.ok) throw new Error(`${manifestURL}: ${response.status} (run bash wasm/build.sh)`);
  return new URL((await response.json()).wheel, manifestURL).href;
}

function runWorker(lib, job) {
  const [url, type] = {
    samebits: ["bench-worker-samebits.mjs", "module"],
    tfjs: ["bench-worker-tfjs.js", "classic"],
    ort: ["bench-worker-ort.mjs", "module"],
  }[lib];
  const worker = new Worker(here(url), { type });
  return new Promise((resolve, reject) => {
    worker.onmessage = ({ data }) => {
      if (data.type === "ready") {
        result.info[lib] = data.info;
        $("status").textContent = `${lib} loaded; timing…`;
      } else if (data.type === "cell") {
        const cell = { ...data, gflops: (2 * data.m * data.n * data.k) / (data.ms * 1e6) };
        delete cell.type;
        result.cells.push(cell);
        render();
      } else if (data.type === "done") {
        worker.terminate();
        resolve();
      } else if (data.type === "error") {
        worker.terminate();
        reject(new Error(`${lib}: ${data.message}`));
      }
    };
    worker.onerror = (e) => { worker.terminate(); reject(new Error(`${lib} worker: ${e.message}`)); };
    worker.postMessage(job);
  });
}

async function main() {
  render();
  const shapes = shapeNames.map((n) => SHAPES[n]);
  for (const lib of libs) {
    $("status").textContent = `loading ${lib}…`;
    const job = { ...timing, shapes, base: here("./"), modes };
    if (lib === "samebits") {
      job.wheelURL = await wheelURL();
      job.pyodideURL = here(params.get("pyodide") || "node_modules/pyodide/");
    }
    await runWorker(lib, job);
  }
  $("status").textContent = "done";
}

main().catch((err) => {
  result.error = String(err && err.message ? err.message : err);
  $("status").textContent = `Error: ${result.error}`;
}).finally(() => { result.done = true; });
