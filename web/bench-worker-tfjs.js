// Benchmark worker for TensorFlow.js's WebAssembly backend (XNNPACK), one
// thread: the plain SIMD binary (tfjs-backend-wasm-simd.wasm), never the
// multithreaded one. A classic worker: tfjs's UMD bundles need importScripts.
const post = (type, data = {}) => self.postMessage({ type, ...data });

self.onmessage = async ({ data: job }) => {
  try {
    const { randomFloats, timeCall, probes } = await import(new URL("bench-common.mjs", job.base).href);
    const modules = new URL("node_modules/@tensorflow/", job.base).href;
    importScripts(`${modules}tfjs-core/dist/tf-core.min.js`,
                  `${modules}tfjs-backend-wasm/dist/tf-backend-wasm.min.js`);
    const tf = self.tf;
    tf.env().set("WASM_HAS_MULTITHREAD_SUPPORT", false);   // the SIMD binary, no threads
    tf.wasm.setThreadsCount(1);
    tf.wasm.setWasmPaths(`${modules}tfjs-backend-wasm/dist/`);
    if (!(await tf.setBackend("wasm"))) throw new Error("tfjs: the wasm backend did not start");
    await tf.ready();
    post("ready", { info: {
      version: tf.version_core, backend: tf.getBackend(),
      simd: tf.env().getBool("WASM_HAS_SIMD_SUPPORT"),
      multithread: tf.env().getBool("WASM_HAS_MULTITHREAD_SUPPORT"),
      threads: tf.wasm.getThreadsCount(),
    } });
    for (const [m, n, k] of job.shapes) {
      const a = tf.tensor2d(randomFloats(m * k, 1), [m, k]);
      const b = tf.tensor2d(randomFloats(k * n, 2), [k, n]);
      // The wasm backend runs each kernel synchronously; the product is
      // complete when matMul returns, so no read-back is timed.
      const { ms } = await timeCall(() => { tf.matMul(a, b).dispose(); }, job);
      const c = tf.matMul(a, b);
      const values = probes(c.dataSync(), m, n);
      c.dispose();
      post("cell", { lib: "tfjs", m, n, k, ms, probes: values });
      a.dispose(); b.dispose();
    }
    post("done");
  } catch (err) {
    post("error", { message: String(err && err.stack ? err.stack : err) });
  }
};
