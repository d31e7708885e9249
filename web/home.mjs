// The front page (home.html): a person picks a product or drops .npy files,
// runs exact and fast mode on 1..N threads (home-worker.mjs), sees the
// digests, the speed beside TF.js-wasm (bench-worker-tfjs.js), and compares
// the exact digest with a native one, pasted or from a golden file.
// window.homeState mirrors what the page shows, for web/run_browser.py.
import { parseNpy } from "./npy.mjs";

const $ = (id) => document.getElementById(id);
const state = { ready: false, running: false, info: null, results: [], tfjs: null, tfjsNote: null, verdict: null,
                error: null, inputs: null, runs: 0 };
window.homeState = state;
const files = { a: null, b: null };   // {name, shape, data} from .npy files
let worker = null;

const cores = navigator.hardwareConcurrency || 1;
const isolated = globalThis.crossOriginIsolated === true;
for (let t = 1; t <= Math.max(1, Math.min(cores, 16)); t++) {
    $("threads").append(new Option(String(t), String(t), t === 1, t === 1));
}
// WebKitGTK 2.50 sets crossOriginIsolated yet gives no SharedArrayBuffer:
// threads need both, and the page says which one is missing.
const shared = typeof SharedArrayBuffer === "function";
$("isolation").textContent = isolated && shared
    ? `This page is cross-origin isolated: up to ${cores} threads (Web Workers).`
    : isolated
    ? "This page is cross-origin isolated, but this browser gives it no SharedArrayBuffer: " +
      "the computation runs on one thread whatever you pick."
    : "This page is not cross-origin isolated (no COOP/COEP headers), so the browser allows no " +
      "shared memory: the computation runs on one thread whatever you pick.";

function dims() {
    const m = files.a ? files.a.shape[0] : Number($("m").value);
    const k = files.a ? files.a.shape[1] : files.b ? files.b.shape[0] : Number($("k").value);
    const n = files.b ? files.b.shape[1] : Number($("n").value);
    return { m, k, n };
}

function describeInputs() {
    const { m, k, n } = dims();
    const from = (f, seed) => f ? `${f.name} (${f.shape.join(" x ")})` : `test values, stream ${seed}`;
    state.inputs = { m, k, n, a: files.a?.name ?? null, b: files.b?.name ?? null };
    $("inputs").textContent = `A: ${from(files.a, 1)}; B: ${from(files.b, 2)}; C is ${m} x ${n}.`;
    for (const id of ["m", "k", "n"]) $(id).disabled = false;
    if (files.a) { $("m").value = m; $("k").value = k; $("m").disabled = $("k").disabled = true; }
    if (files.b) { $("k").value = k; $("n").value = n; $("k").disabled = $("n").disabled = true; }
    $("snippet").textContent = snippet(m, k, n);
    goldenNames();
}

function snippet(m, k, n) {
    const load = (f, shape, seed) => f ? `np.load(${JSON.stringify(f.name)})`
        : `portable_values((${shape}), ${seed})`;
    return [
        "import numpy as np, samebits",
        "from samebits.testing import digest, portable_values",
        `a = ${load(files.a, `${m}, ${k}`, 1)}`,
        `b = ${load(files.b, `${k}, ${n}`, 2)}`,
        'print(digest(samebits.matmul(a, b, mode="exact")))',
        "",
        `# or in a pytest test: same_bits.check("${goldenKey(m, k, n)}", samebits.matmul(a, b, mode="exact"))`,
    ].join("\n");
}

function goldenKey(m, k, n) {
    return `matmul/${files.a ? files.a.name : "test-values"}-${m}x${k}x${n}`;
}

async function loadFile(which, file) {
    try {
        const parsed = parseNpy(new Uint8Array(await file.arrayBuffer()), file.name);
        if (parsed.shape.length !== 2) {
            throw new Error(`${file.name}: a matrix needs 2 dimensions, got shape (${parsed.shape.join(", ")})`);
        }
        const other = files[which === "a" ? "b" : "a"];
        const [a, b] = which === "a" ? [parsed, other] : [other, parsed];
        if (a && b && a.shape[1] !== b.shape[0]) {
            throw new Error(`${file.name}: A is ${a.shape.join(" x ")} but B is ` +
                            `${b.shape.join(" x ")}: A's columns must equal B's rows`);
        }
        files[which] = { name: file.name, ...parsed };
        showError(null);
    } catch (error) {
        showError(error.message);
    }
    describeInputs();
}

function showError(message) {
    state.error = message;
    if (message) $("status").innerHTML = `<span class="bad">${escapeHtml(message)}</span>`;
}

function escapeHtml(text) {
    return text.replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c]);
}

for (const which of ["a", "b"]) {
    const zone = $(`drop${which.toUpperCase()}`);
    zone.addEventListener("dragover", (e) => { e.preventDefault(); zone.classList.add("over"); });
    zone.addEventListener("dragleave", () => zone.classList.remove("over"));
    zone.addEventListener("drop", (e) => {
        e.preventDefault();
        zone.classList.remove("over");
        if (e.dataTransfer.files.length) loadFile(which, e.dataTransfer.files[0]);
    });
    $(`file${which.toUpperCase()}`).addEventListener("change", (e) => {
        if (e.target.files.length) loadFile(which, e.target.files[0]);
    });
}
$("clear").addEventListener("click", () => {
    files.a = files.b = null;
    $("fileA").value = $("fileB").value = "";
    showError(null);
    describeInputs();
});
for (const id of ["m", "k", "n"]) $(id).addEventListener("input", describeInputs);

function startWorker(threads) {
    worker?.terminate();
    state.requestedThreads = threads;
    worker = new Worker(new URL("home-worker.mjs", import.meta.url), { type: "module" });
    state.ready = false;
    return request({ type: "init", threads }).then(({ info }) => {
        state.info = info;
        state.ready = true;
        $("status").textContent = `ready: samebits ${info.version}, ${info.threads} thread(s)` +
            `${info.threadsNote ? ` (${info.threadsNote})` : ""}, ` +
            `${info.relaxedSimd ? "relaxed SIMD (fast mode fuses)" : "SIMD128"}.`;
    });
}

// One request to the samebits worker: resolves on "ready" or "done", collecting results.
function request(message, onResult) {
    return new Promise((resolve, reject) => {
        worker.onmessage = ({ data }) => {
            if (data.type === "result") onResult?.(data);
            else if (data.type === "error") reject(new Error(data.message));
            else resolve(data);
        };
        worker.onerror = (e) => reject(new Error(e.message));
        worker.postMessage(message);
    });
}

// TF.js-wasm on the same shape and thread count, in its own worker (random
// inputs). It is only a speed reference: if it has not finished within
// limitMs (its threaded backend was seen to hang in Firefox 153 on a busy
// machine), its worker is stopped and the page says so.
function timeTfjs(m, k, n, threads, limitMs = 60000) {
    return new Promise((resolve, reject) => {
        const tf = new Worker(new URL("bench-worker-tfjs.js", import.meta.url));
        let cell = null;
        const timer = setTimeout(() => {
            tf.terminate();
            reject(new Error(`TF.js-wasm did not finish within ${limitMs / 1000} s; stopped`));
        }, limitMs);
        tf.onmessage = ({ data }) => {
            if (data.type === "ready") tf.postMessage({ type: "shape", shape: [m, n, k] });
            else if (data.type === "cell") cell = data;
            else if (data.type === "shapeDone") {
                clearTimeout(timer); tf.terminate(); resolve({ ...cell, info: null });
            } else if (data.type === "error") {
                clearTimeout(timer); tf.terminate(); reject(new Error(data.message));
            }
        };
        tf.postMessage({ type: "init", threads, base: new URL("./", location.href).href,
                         warmup: 1, minMs: 150, reps: 3 });
    });
}

function renderResults() {
    const { m, k, n } = state.inputs;
    const flops = 2 * m * k * n;
    const rows = state.results.map((r) => `<tr><td>samebits ${r.mode}</td><td>${r.ms.toFixed(3)}</td>` +
        `<td>${(flops / (r.ms * 1e6)).toFixed(1)}</td><td class="digest">${r.digest}</td></tr>`);
    if (state.tfjsNote) {
        rows.push(`<tr><td>TF.js-wasm</td><td colspan="3" class="note">${state.tfjsNote}</td></tr>`);
    } else if (state.tfjs) {
        const exact = state.results.find((r) => r.mode === "exact");
        const ratio = exact ? ` (samebits exact ${(state.tfjs.ms / exact.ms).toFixed(2)}x)` : "";
        rows.push(`<tr><td>TF.js-wasm</td><td>${state.tfjs.ms.toFixed(3)}</td>` +
                  `<td>${(flops / (state.tfjs.ms * 1e6)).toFixed(1)}</td><td class="note">speed only${ratio}</td></tr>`);
    }
    $("results").innerHTML = "<tr><th>run</th><th>ms (median)</th><th>GFLOP/s</th><th>digest of C</th></tr>" +
        rows.join("");
}

async function run() {
    if (state.running) return;
    state.running = true;
    $("run").disabled = true;
    state.results = [];
    state.tfjs = null;
    state.tfjsNote = null;
    showError(null);
    try {
        const threads = Number($("threads").value);
        if (!state.ready || state.requestedThreads !== threads) {
            $("status").textContent = `starting ${threads} thread(s)…`;
            await startWorker(threads);
        }
        const { m, k, n } = dims();
        for (const [name, v] of Object.entries({ m, k, n })) {
            if (!Number.isInteger(v) || v < 1 || v > 8192) throw new Error(`${name} must be an integer in [1, 8192]`);
        }
        describeInputs();
        $("status").textContent = `computing ${m} x ${k} x ${n}…`;
        await request({ type: "run", m, k, n, a: files.a?.data, b: files.b?.data }, (r) => {
            state.results.push(r);
            renderResults();
        });
        if ($("withTfjs").checked) {
            $("status").textContent = "timing TF.js-wasm…";
            try {
                state.tfjs = await timeTfjs(m, k, n, state.info.threads);
            } catch (error) {   // a peer's failure is not the run's: shown in its row
                state.tfjsNote = error.message;
            }
            renderResults();
        }
        state.runs += 1;
        $("status").textContent = `done: ${m} x ${k} x ${n} on ${state.info.threads} thread(s).`;
        compare();
    } catch (error) {
        showError(error.message);
    } finally {
        state.running = false;
        $("run").disabled = false;
    }
}
$("run").addEventListener("click", run);

// The golden file: {name: digest} as the pytest plugin writes it.
let golden = {};
function goldenNames() {
    const select = $("goldenName");
    const key = state.inputs ? goldenKey(state.inputs.m, state.inputs.k, state.inputs.n) : "";
    select.innerHTML = "";
    for (const name of Object.keys(golden)) select.append(new Option(name, name, false, name === key));
    compare();
}
$("golden").addEventListener("change", async (e) => {
    try {
        const parsed = JSON.parse(await e.target.files[0].text());
        if (parsed === null || typeof parsed != "object" || Array.isArray(parsed)) throw new Error("not an object");
        golden = parsed;
        showError(null);
    } catch (error) {
        golden = {};
        showError(`${e.target.files[0].name}: not a golden file of name -> digest (${error.message})`);
    }
    goldenNames();
});
$("goldenName").addEventListener("change", compare);
$("native").addEventListener("input", compare);

function compare() {
    const exact = state.results.find((r) => r.mode === "exact");
    const pasted = $("native").value.trim().toLowerCase();
    const name = $("goldenName").value;
    const [source, want] = pasted ? ["the pasted digest", pasted]
        : name && golden[name] ? [`golden entry "${name}"`, String(golden[name]).toLowerCase()] : [null, null];
    let verdict = null, html = "";
    if (!want) {
        html = '<span class="note">Paste a native digest or choose a golden file to compare.</span>';
    } else if (!/^[0-9a-f]{64}$/.test(want)) {
        verdict = "invalid";
        html = `<span class="bad">${escapeHtml(source)} is not 64 hex digits.</span>`;
    } else if (!exact) {
        html = '<span class="note">Run first.</span>';
    } else if (exact.digest === want) {
        verdict = "match";
        html = `<span class="ok">✓ exact mode here gives the same bits as ${escapeHtml(source)}.</span>`;
    } else {
        verdict = "differs";
        html = `<span class="bad">✗ the exact digest differs from ${escapeHtml(source)}: ` +
               "different inputs, shape or mode, or a broken build.</span>";
    }
    state.verdict = verdict;
    $("verdict").innerHTML = html;
}

describeInputs();
startWorker(1).catch((error) => showError(error.message));
