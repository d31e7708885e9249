// Benchmark worker for onnxruntime-web, WebAssembly execution provider, one
// thread, no proxy worker. The model is one MatMul node with B as a constant
// initializer (onnx-matmul.mjs).
import { probes, randomFloats, timeCall } from "./bench-common.mjs";
import { matmulModel } from "./onnx-matmul.mjs";

const post = (type, data = {}) => self.postMessage({ type, ...data });

let state = null;

async function init(job) {
  const dist = new URL("node_modules/onnxruntime-web/dist/", job.base).href;
  const ort = await import(`${dist}ort.wasm.min.mjs`);
  ort.env.wasm.numThreads = 1;
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
      intraOpNumThreads: 1, interOpNumThreads: 1 });
  try {
    const a = new ort.Tensor("float32", randomFloats(m * k, 1), [m, k]);
    // The plain call: ORT copies each output into a new tensor. (A
    // preallocated output, run(feeds, { Y: tensor }), was left unfilled by
    // this version, which the probe check caught.)
    let y = null;
    const { ms } = await timeCall(async () => { y = (await session.run({ A: a })).Y; }, job);
    post("cell", { lib: "ort", m, n, k, ms, probes: probes(y.data, m, n) });
  } finally {
    await session.release();
  }
}

// Messages: {type: "init", ...job} -> "ready"; {type: "shape", shape} -> "cell", "shapeDone".
self.onmessage = async ({ data }) => {
  try {
    if (data.type === "init") post("ready", { info: await init(data) });
    else if (data.type === "shape") { await runShape(data.shape); post("shapeDone"); }
    else if (data.type === "op") post("shapeDone");   // products only
  } catch (err) {
    post("error", { message: String(err && err.stack ? err.stack : err) });
  }
};
