// Benchmark worker for TensorFlow.js's WebAssembly backend (XNNPACK): with
// job.threads 1 (the default) the plain SIMD binary
// (tfjs-backend-wasm-simd.wasm), never the multithreaded one; with more, the
// threaded SIMD binary with that many threads (it needs a cross-origin-
// isolated page). A classic worker: tfjs's UMD bundles need importScripts.
const post = (type, data = {}) => self.postMessage({ type, ...data });

let state = null;

async function init(job) {
  const common = await import(new URL("bench-common.mjs", job.base).href);
  const modules = new URL("node_modules/@tensorflow/", job.base).href;
  importScripts(`${modules}tfjs-core/dist/tf-core.min.js`,
                `${modules}tfjs-backend-wasm/dist/tf-backend-wasm.min.js`);
  const tf = self.tf;
  const threads = job.threads ?? 1;
  if (threads === 1) tf.env().set("WASM_HAS_MULTITHREAD_SUPPORT", false);   // the SIMD binary
  // TF.js caps its thread pool at hardwareConcurrency / 2 (it takes every
  // x86 core for two hyperthreads), which on a 2-processor machine is one
  // thread whatever setThreadsCount says: report enough processors for the
  // count asked for.
  if (threads > 1 && navigator.hardwareConcurrency < 2 * threads) {
    Object.defineProperty(navigator, "hardwareConcurrency", { value: 2 * threads });
  }
  tf.wasm.setThreadsCount(threads);
  tf.wasm.setWasmPaths(`${modules}tfjs-backend-wasm/dist/`);
  if (!(await tf.setBackend("wasm"))) throw new Error("tfjs: the wasm backend did not start");
  await tf.ready();
  state = { job, tf, ...common };
  return {
    version: tf.version_core, backend: tf.getBackend(),
    simd: tf.env().getBool("WASM_HAS_SIMD_SUPPORT"),
    multithread: tf.env().getBool("WASM_HAS_MULTITHREAD_SUPPORT"),
    threads: tf.wasm.getThreadsCount(),
  };
}

async function runShape([m, n, k]) {
  const { job, tf, randomFloats, timeCall, probes } = state;
  const a = tf.tensor2d(randomFloats(m * k, 1), [m, k]);
  const b = tf.tensor2d(randomFloats(k * n, 2), [k, n]);
  try {
    // The wasm backend runs each kernel synchronously: the product is
    // complete when matMul returns, so no read-back is timed.
    const { ms } = await timeCall(() => { tf.matMul(a, b).dispose(); }, job);
    const c = tf.matMul(a, b);
    const values = probes(c.dataSync(), m, n);
    c.dispose();
    post("cell", { lib: "tfjs", threads: job.threads ?? 1, m, n, k, ms, probes: values });
  } finally {
    a.dispose();
    b.dispose();
  }
}

// TF.js's kernels for the operator benchmark (it has no layer norm kernel).
const TF_OPS = {
  exp: (tf, x) => tf.exp(x), tanh: (tf, x) => tf.tanh(x), erf: (tf, x) => tf.erf(x),
  sigmoid: (tf, x) => tf.sigmoid(x), log: (tf, x) => tf.log(x),
  softmax: (tf, x) => tf.softmax(x),
};

async function runOp({ name, op, rows, cols }) {
  const { job, tf, opInput, timeCall } = state;
  const fn = TF_OPS[op];
  if (!fn) return;
  const x = tf.tensor2d(opInput(op, rows * cols), [rows, cols]);
  try {
    const { ms } = await timeCall(() => { fn(tf, x).dispose(); }, job);
    const y = fn(tf, x);
    const v = y.dataSync();
    y.dispose();
    const n = rows * cols;
    post("opCell", { lib: "tfjs", name, op, rows, cols, ms, probes: [v[0], v[n >> 1], v[n - 1]] });
  } finally {
    x.dispose();
  }
}

// Messages: {type: "init", ...job} -> "ready"; {type: "shape", shape} -> "cell", "shapeDone";
// {type: "op", ...} -> "opCell" (where TF.js has the operator), "shapeDone".
self.onmessage = async ({ data }) => {
  try {
    if (data.type === "init") post("ready", { info: await init(data) });
    else if (data.type === "shape") { await runShape(data.shape); post("shapeDone"); }
    else if (data.type === "op") { await runOp(data); post("shapeDone"); }
    else if (data.type === "model") post("shapeDone");   // no ONNX runner
  } catch (err) {
    post("error", { message: String(err && err.stack ? err.stack : err) });
  }
};
