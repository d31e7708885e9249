// Benchmark worker for onnxruntime-web, WebAssembly execution provider,
// job.threads threads (default 1; more need a cross-origin-isolated page), no
// proxy worker. The model is one MatMul node with B as a constant
// initializer (onnx-matmul.mjs).
import { fetchBytes, outputProbes, probes, randomFloats, timeCall, unpackFeeds, warmFor } from "./bench-common.mjs";
import { matmulModel } from "./onnx-matmul.mjs";

const post = (type, data = {}) => self.postMessage({ type, ...data });

let state = null;

async function init(job) {
  const dist = new URL("node_modules/onnxruntime-web/dist/", job.base).href;
  const ort = await import(`${dist}ort.wasm.min.mjs`);
  ort.env.wasm.numThreads = job.threads ?? 1;
  ort.env.wasm.proxy = false;
  ort.env.wasm.wasmPaths = dist;
  ort.env.logLevel = "error";
  state = { job, ort };
  return { version: ort.env.versions?.web ?? "?", numThreads: ort.env.wasm.numThreads };
}

async function runShape([m, n, k]) {
  const { job, ort } = state;
  const session = await ort.InferenceSession.create(
    matmulModel(m, k, n, randomFloats(k * n, 2)),
    { executionProviders: ["wasm"], graphOptimizationLevel: "all",
      intraOpNumThreads: job.threads ?? 1, interOpNumThreads: 1 });
  try {
    const a = new ort.Tensor("float32", randomFloats(m * k, 1), [m, k]);
    // The plain call: ORT copies each output into a new tensor. (A
    // preallocated output, run(feeds, { Y: tensor }), was left unfilled by
    // this version, which the probe check caught.)
    let y = null;
    const { ms } = await timeCall(async () => { y = (await session.run({ A: a })).Y; }, job);
    post("cell", { lib: "ort", threads: job.threads ?? 1, m, n, k, ms,
                   probes: probes(y.data, m, n) });
  } finally {
    await session.release();
  }
}

// A reference network (web/make_models.py's files), the whole graph, at
// job.threads threads.
async function runModel({ name, modelsURL }) {
  const { job, ort } = state;
  const get = (file) => fetchBytes(new URL(file, modelsURL));
  const session = await ort.InferenceSession.create(await get(`${name}.onnx`),
    { executionProviders: ["wasm"], graphOptimizationLevel: "all",
      intraOpNumThreads: job.threads ?? 1, interOpNumThreads: 1 });
  try {
    const feeds = {};
    for (const f of unpackFeeds(await get(`${name}.feeds`))) {
      feeds[f.name] = new ort.Tensor(f.dtype, f.data, f.shape);
    }
    let y = null;
    const run = async () => {
      const out = await session.run(feeds);
      y = out[session.outputNames[0]].data;
    };
    await warmFor(run, job.minMs);
    const { ms } = await timeCall(run, job);
    post("modelCell", { lib: "ort", threads: job.threads ?? 1, name, ms, probes: outputProbes(y) });
  } finally {
    await session.release();
  }
}

// Messages: {type: "init", ...job} -> "ready"; {type: "shape", shape} -> "cell", "shapeDone";
// {type: "model", name, modelsURL} -> "modelCell", "shapeDone".
self.onmessage = async ({ data }) => {
  try {
    if (data.type === "init") post("ready", { info: await init(data) });
    else if (data.type === "shape") { await runShape(data.shape); post("shapeDone"); }
    else if (data.type === "op") post("shapeDone");   // products only
    else if (data.type === "model") { await runModel(data); post("shapeDone"); }
  } catch (err) {
    post("error", { message: String(err && err.stack ? err.stack : err) });
  }
};
