// The page: starts the Pyodide worker, shows each browser hash line beside the
// native one, and publishes everything on window.samebitsResult for tests.
//
// Query parameters (all optional):
//   flip=BIT        negative control: flip that output bit before hashing
//   suites=gemm,conv,ops   modes=exact,fast   groups=sweep,random,models (gemm suite)
//   paths=vec4   threads=1
//   native=URL      the native lines (JSON: {"headers": {suite: header}, "lines": [...]},
//                   as web/make_native.py writes); default out/native.json
//   wheel=URL       the samebits wheel; default from ../wasm/out/wheel.json
//   pyodide=URL     Pyodide's indexURL; default node_modules/pyodide/
//   speed=N         size of the timed N x N x N products (default 512; 0: none)
//   fastcheck=0     skip the fast-mode error-bound check (default 1)
//   relaxed=0       fast mode on the plain SIMD128 module, not the relaxed-SIMD one
//   report=PATH     POST window.samebitsResult to PATH when done (report.mjs)
import { reportWhenDone } from "./report.mjs";
import { wheelURL } from "./wheel.mjs";

const params = new URLSearchParams(location.search);
const list = (name, fallback) => (params.get(name) || fallback).split(",").filter(Boolean);
const here = (url) => new URL(url, location.href).href;
const $ = (id) => document.getElementById(id);

const flipText = params.get("flip");
const job = {
  suites: list("suites", "gemm,conv,ops"),
  modes: list("modes", "exact,fast"),
  groups: list("groups", "sweep,random,models"),
  paths: list("paths", "vec4"),
  threads: list("threads", "1").map(Number),
  flip: flipText === null || flipText === "" ? null : Number(flipText),
  speed: Number(params.get("speed") ?? 512),
  fastcheck: (params.get("fastcheck") ?? "1") !== "0",
  relaxed: params.get("relaxed") ?? "1",
  indexURL: here(params.get("pyodide") || "node_modules/pyodide/"),
  wheelURL: null,
};

const result = {
  done: false, ok: false, lines: [], native: [], rows: [], header: null, headers: {},
  nativeHeaders: {},
  speed: null, error: null, flip: job.flip, job, pyodide: null, blockedCdn: false,
  fused: null, fastLibrary: null, fastLibraryNote: null, fastCheck: null,
};
window.samebitsResult = result;
reportWhenDone("samebitsResult");

// A line of the gemm suite is "exact vec4 threads=1 sha256=..."; a line of
// the conv or ops suite is the same after the suite's name (samebits/hashes.py).
function parseLine(line) {
  const fields = line.trim().split(/\s+/);
  const suite = fields.length === 5 && ["conv", "ops"].includes(fields[0]) ? fields.shift() : "gemm";
  const [mode, path, threads, digest] = fields;
  return { suite, mode, path, threads: Number((threads || "").split("=")[1]),
           digest: (digest || "").split("=")[1] || "" };
}

const headerSuite = (header) =>
  header.startsWith("# samebits conv suite") ? "conv"
    : header.startsWith("# samebits ops suite") ? "ops" : "gemm";

// Lines are compared within their suite. Exact lines must equal every native
// exact line of the suite (they agree across paths and threads); a fast line
// is compared with the native line of its own path and thread count, and a
// difference there is allowed.
function judge(line) {
  const b = parseLine(line);
  const nativeHeader = result.nativeHeaders[b.suite];
  const header = result.headers[b.suite];
  if (nativeHeader && header && nativeHeader !== header) {
    return { verdict: "alone", nativeLine: null,
             text: `not compared: the native lines are of another suite (${nativeHeader})` };
  }
  const natives = result.native.map((l) => ({ line: l, ...parseLine(l) }))
                               .filter((n) => n.suite === b.suite && n.mode === b.mode);
  const same = natives.find((n) => n.path === b.path && n.threads === b.threads);
  if (b.mode === "exact") {
    const ref = same || natives[0];
    if (!ref) return { verdict: "alone", text: "no native exact line", nativeLine: null };
    const match = natives.every((n) => n.digest === b.digest);
    const where = natives.map((n) => `${n.path}/${n.threads}t`).join(", ");
    return { verdict: match ? "match" : "mismatch", nativeLine: ref.line,
             text: match ? `same bits (native ${where})` : `DIFFERENT BITS (native ${where})` };
  }
  if (!same) return { verdict: "alone", text: "no native line to compare", nativeLine: null };
  const match = same.digest === b.digest;
  return { verdict: match ? "match" : "differs",
           text: match ? "same bits" : "differs (fast mode: allowed)", nativeLine: same.line };
}

function addRow(line, seconds) {
  const j = judge(line);
  const { suite, mode } = parseLine(line);
  const row = { line, native: j.nativeLine, suite, mode, verdict: j.verdict,
                match: j.verdict === "match", seconds };
  result.rows.push(row);
  result.lines.push(line);
  const tr = document.createElement("tr");
  tr.className = j.verdict;
  const verdict = document.createElement("td");
  verdict.className = "verdict";
  verdict.textContent = j.text;
  const lines = document.createElement("td");
  lines.className = "mono";
  for (const [label, text] of [["browser", line], ["native", j.nativeLine || "(none)"]]) {
    const l = document.createElement("span");
    l.className = "label";
    l.textContent = label;
    const t = document.createElement("span");
    t.className = "hashline";
    t.textContent = text;
    lines.append(l, t);
  }
  const secs = document.createElement("td");
  secs.textContent = seconds.toFixed(1);
  tr.append(verdict, lines, secs);
  $("rows").append(tr);
}

function summarize(message) {
  const s = $("summary");
  const exact = result.rows.filter((r) => r.mode === "exact");
  if (message) {
    s.textContent = message;
    s.className = "";
    return;
  }
  const bad = exact.filter((r) => !r.match).length;
  result.ok = !result.error && exact.length > 0 && bad === 0;
  if (result.error) s.textContent = "Error: the suite did not finish";
  else if (exact.length === 0) s.textContent = "No exact-mode line was compared";
  else if (bad) s.textContent = `MISMATCH: ${bad} of ${exact.length} exact-mode `
    + `line${exact.length > 1 ? "s differ" : " differs"} from native`;
  else s.textContent = `OK: ${exact.length > 1 ? `all ${exact.length} exact-mode lines have`
    : "the exact-mode line has"} the native bits`;
  s.className = result.ok ? "ok" : "bad";
}

async function fetchJSON(url, what) {
  const response = await fetch(url, { cache: "no-store" });
  if (!response.ok) throw new Error(`${what}: ${url} answered ${response.status}`);
  return response.json();
}

async function main() {
  const started = performance.now();
  if (job.flip !== null) {
    $("control").hidden = false;
    $("control").textContent = `Negative control: bit ${job.flip} of the first output is flipped `
      + "before hashing, so every exact line must differ from native (red).";
  }
  try {
    const native = await fetchJSON(here(params.get("native") || "out/native.json"), "native lines");
    result.native = native.lines || [];
    // {"headers": {suite: header}}; a document with only "header" (of one suite) works too.
    result.nativeHeaders = native.headers
      || (native.header ? { [headerSuite(native.header)]: native.header } : {});
    result.nativePlatform = native.platform || null;
  } catch (err) {
    result.native = [];
    $("error").textContent = `${err.message} (run python web/make_native.py)\n`;
  }
  job.wheelURL = await wheelURL(params);

  const worker = new Worker(here("worker.mjs"), { type: "module" });
  const expected = job.suites.length * job.modes.length * job.paths.length * job.threads.length;
  const tick = setInterval(() => {
    if (!result.header) return;
    const secs = ((performance.now() - started) / 1000).toFixed(0);
    summarize(`Running the suite in WebAssembly: ${result.rows.length} of ${expected} lines `
              + `done (${secs} s)…`);
  }, 1000);
  await new Promise((resolve) => {
    worker.onmessage = ({ data }) => {
      if (data.type === "ready") {
        result.headers = data.headers;
        result.header = data.headers.gemm || Object.values(data.headers)[0] || null;
        result.pyodide = data.pyodide;
        result.fused = data.fused;
        result.library = data.library;
        result.fastLibrary = data.fastLibrary;
        result.fastLibraryNote = data.fastLibraryNote;
        const relaxed = data.fastLibrary !== data.library;
        $("fastmode").textContent = relaxed
          ? `Fast mode: relaxed-SIMD module (${data.fastLibrary.split("/").pop()}), `
            + `fused multiply-add: ${data.fused.vec4 ? "yes" : "no"}.`
          : `Fast mode: plain SIMD128 module, unfused (${data.fastLibraryNote}).`;
        $("meta").textContent = `${Object.values(data.headers).join("; ")}. Pyodide ${data.pyodide} (booted in `
          + `${data.bootSeconds.toFixed(1)} s, wheel ${data.loadSeconds.toFixed(1)} s), library built `
          + `with ${data.compiler.trim()}; paths here: ${data.paths.join(", ")}. `
          + `Native: ${result.native.length} lines${result.nativePlatform ? ` from ${result.nativePlatform}` : ""}. `
          + navigator.userAgent.replace(/^.*?(\S*Chrom\S*).*$/, "$1");
        summarize("Pyodide and samebits loaded; running the suite…");
      } else if (data.type === "speed") {
        result.speed = data;
        const part = (mode) => {
          const s = data.seconds[mode];
          return `${mode} ${(2 * data.n ** 3 / s / 1e9).toFixed(1)} GFLOP/s (${(s * 1e3).toFixed(1)} ms)`;
        };
        $("speed").textContent = `Speed, one ${data.n}×${data.n}×${data.n} product, ${data.path} `
          + `path, 1 thread, best of 3: ${part("exact")}, ${part("fast")}`;
      } else if (data.type === "fastcheck") {
        result.fastCheck = data;
        const worst = data.worst.toFixed(3);
        $("fastmode").textContent += ` Error bound |c - ref64| <= k·2^-24·Σ|a·b| on `
          + `${data.shapes.length} products: ${data.ok ? "holds" : "BROKEN"} (worst ${worst} of it; `
          + `${data.fast_differs} outputs differ from exact mode).`;
      } else if (data.type === "line") {
        addRow(data.line, data.seconds);
      } else if (data.type === "error") {
        result.error = data.message;
        $("error").textContent += `Error: ${data.message}`;
        resolve();
      } else if (data.type === "done") {
        resolve();
      }
    };
    worker.onerror = (event) => {
      result.error = `worker failed: ${event.message || "unknown error"}`;
      $("error").textContent += result.error;
      resolve();
    };
    worker.postMessage(job);
  });
  clearInterval(tick);
  worker.terminate();
  result.seconds = (performance.now() - started) / 1000;
  summarize();
  result.done = true;
}

main().catch((err) => {
  result.error = String(err && err.message ? err.message : err);
  $("error").textContent += `Error: ${result.error}`;
  summarize();
  result.done = true;
});
