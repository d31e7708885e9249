// The models page: a worker runs samebits.onnx in Pyodide over the reference
// networks listed in out/models/models.json (web/make_models.py) and each
// browser line is shown beside the native one. window.modelsResult holds
// everything for tests.
//
// Query parameters (all optional): networks=resnet50,...   modes=exact
//   models=URL (the folder with models.json; default out/models/)
//   wheel=URL   pyodide=URL
import { reportWhenDone } from "./report.mjs";
import { wheelURL } from "./wheel.mjs";

const params = new URLSearchParams(location.search);
const here = (url) => new URL(url, location.href).href;
const list = (name, fallback) => (params.get(name) || fallback).split(",").filter(Boolean);
const $ = (id) => document.getElementById(id);

const result = { done: false, ok: false, error: null, rows: [], header: null, info: null };
window.modelsResult = result;
reportWhenDone("modelsResult");   // ?report=PATH: POSTed when done (report.mjs)

function addRow(line, native, seconds) {
  const match = line.split("sha256=")[1] === native.split("sha256=")[1];
  result.rows.push({ line, native, match, seconds });
  const tr = document.createElement("tr");
  tr.className = match ? "match" : "mismatch";
  tr.innerHTML = `<td>${match ? "same bits" : "DIFFERENT BITS"}</td>` +
    `<td class="mono">browser ${line}<br>native&nbsp; ${native}</td><td>${seconds.toFixed(1)}</td>`;
  $("rows").append(tr);
}

async function main() {
  const modelsURL = here(params.get("models") || "out/models/");
  const response = await fetch(new URL("models.json", modelsURL), { cache: "no-store" });
  if (!response.ok) throw new Error(`models.json: ${response.status} (run python web/make_models.py)`);
  const manifest = await response.json();
  const wanted = list("networks", "");
  const networks = manifest.networks.filter((n) => !wanted.length || wanted.includes(n.name));
  const wheel = await wheelURL(params);
  const worker = new Worker(here("models-worker.mjs"), { type: "module" });
  await new Promise((resolve, reject) => {
    worker.onmessage = ({ data }) => {
      if (data.type === "ready") {
        result.header = data.header;
        result.info = data.info;
        $("status").textContent = `Pyodide ${data.info.pyodide}, samebits ${data.info.version}: running…`;
      } else if (data.type === "line") {
        const net = networks.find((n) => n.name === data.network);
        addRow(data.line, net.native, data.seconds);
      } else if (data.type === "done") {
        resolve();
      } else if (data.type === "error") {
        reject(new Error(data.message));
      }
    };
    worker.onerror = (e) => reject(new Error(`worker: ${e.message}`));
    worker.postMessage({ indexURL: here(params.get("pyodide") || "node_modules/pyodide/"),
                         modes: list("modes", "exact"), modelsURL,
                         networks: networks.map((n) => ({ name: n.name, model: n.model,
                                                          feeds: n.feeds })),
                         wheelURL: wheel });
  });
  worker.terminate();
  result.ok = result.rows.length === networks.length * list("modes", "exact").length &&
    result.rows.every((r) => r.match);
  $("status").textContent = result.ok ? `OK: ${result.rows.length} networks with the native bits`
    : "MISMATCH: some network differs from native";
}

main().catch((err) => {
  result.error = String(err && err.message ? err.message : err);
  $("status").textContent = `Error: ${result.error}`;
}).finally(() => { result.done = true; });
