// The npm package's check page: runs the hash suites in a module worker
// (js-check-worker.mjs) at each thread count of ?threads, shows the lines and
// compares them with native ones (?native=URL of {"lines": [...]}), then sets
// window.jsCheckResult for web/run_browser.py.
import { reportWhenDone } from "./report.mjs";
const query = new URLSearchParams(location.search);
const threadCounts = (query.get("threads") ?? "1,2").split(",").map(Number);
const suites = (query.get("suites") ?? "gemm,conv,ops").split(",").filter(Boolean);
// ?models=resnet50,minilm_l6: the models suite through loadModel (web/out/models)
const models = (query.get("models") ?? "").split(",").filter(Boolean);
// ?chain=URL&chainNodes=N: the time per node of a chain of N Adds, one thread
const chain = query.get("chain") ? { url: query.get("chain"), nodes: Number(query.get("chainNodes") ?? 1000),
    runs: Number(query.get("chainRuns") ?? 50) } : null;
const result = { done: false, lines: [], rows: [], models: [], chain: [],
    isolated: globalThis.crossOriginIsolated === true, threadsNotes: [], modules: [], error: null };
window.jsCheckResult = result;
reportWhenDone("jsCheckResult");   // ?report=PATH: POSTed when done (report.mjs)

const show = (id, text, cls) => {
    const element = document.getElementById(id);
    element.textContent = text;
    if (cls) element.className = cls;
};
show("isolation", result.isolated
    ? `Cross-origin isolated: threads run on Web Workers (${navigator.hardwareConcurrency} processors).`
    : "Not cross-origin isolated: no SharedArrayBuffer, so the package runs one thread.");

async function nativeDigests() {
    const url = query.get("native");
    if (!url) return new Map();
    const doc = await (await fetch(url)).json();
    // A native line is "[suite ]mode path threads=T sha256=D": the digest per suite.
    return new Map(doc.lines.map(line => {
        const fields = line.split(/\s+/);
        const suite = ["conv", "ops"].includes(fields[0]) ? fields[0] : "gemm";
        return [suite, fields.at(-1).replace("sha256=", "")];
    }));
}

function runWorker(threads) {
    return new Promise((resolve, reject) => {
        const worker = new Worker(new URL("js-check-worker.mjs", import.meta.url), { type: "module" });
        const lines = [];
        worker.onmessage = ({ data }) => {
            if (data.model) {
                result.models.push({ threads, ...data });
                document.getElementById("lines").textContent += data.line + "\n";
                return;
            }
            if (data.chain) {
                result.chain.push({ threads, ...data.chain });
                document.getElementById("lines").textContent +=
                    `chain of Adds: ${data.chain.usPerNode.toFixed(3)} us per node\n`;
                return;
            }
            if (data.line) {
                lines.push(data);
                result.lines.push(data.line);
                document.getElementById("lines").textContent += data.line + "\n";
            }
            if (data.error) { worker.terminate(); reject(new Error(data.error)); }
            if (data.done) { worker.terminate(); resolve({ lines, info: data.info }); }
        };
        worker.onerror = e => reject(new Error(e.message));
        worker.postMessage({ threads, suites, models, chain });
    });
}

try {
    const native = await nativeDigests();
    for (const threads of threadCounts) {
        const { lines, info } = await runWorker(threads);
        if (info.threadsNote) result.threadsNotes.push(info.threadsNote);
        result.modules.push(info);
        for (const { suite, line, digest, seconds, threadsUsed } of lines) {
            const expected = native.get(suite);
            result.rows.push({ suite, threads, threadsUsed, line, seconds,
                verdict: expected === undefined ? "no native line" : expected === digest ? "match" : "MISMATCH" });
        }
    }
    const verdicts = result.rows.map(r => r.verdict);
    result.ok = verdicts.length > 0 ? verdicts.every(v => v === "match") : null;
    show("verdict", result.ok ? "OK: every line equals the native one."
        : verdicts.includes("MISMATCH") ? "MISMATCH: a line differs from native." : "No native lines to compare with.",
        result.ok ? "match" : "mismatch");
} catch (error) {
    result.error = String(error?.stack ?? error);
    show("verdict", `error: ${result.error}`, "mismatch");
}
result.done = true;
