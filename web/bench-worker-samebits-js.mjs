// Benchmark worker for the npm package (js/): samebits.init({threads}) and
// matmul timed with `out` preallocated, in each mode, with B packed once
// (packMatrix), as the peers keep their weights: each call copies A into the
// module's memory and C out of it (timed: what a caller of the API pays).
// A reference network runs through loadModel: the C graph runtime in the
// module, each run copying the inputs in and the outputs out (timed).
import * as samebits from "../js/index.mjs";
import { fetchBytes, outputProbes, probes, randomFloats, timeCall, unpackFeeds, warmFor } from "./bench-common.mjs";

const post = (type, data = {}) => self.postMessage({ type, ...data });
let state = null;

async function init(job) {
  const sb = await samebits.init({ threads: job.threads ?? 1 });
  state = { job, sb };
  return sb.info();
}

async function runShape([m, n, k]) {
  const { job, sb } = state;
  const a = randomFloats(m * k, 1), b = sb.packMatrix(randomFloats(k * n, 2), k, n);
  const out = new Float32Array(m * n);
  try {
    for (const mode of job.modes) {
      const { ms } = await timeCall(() => { sb.matmul(a, b, m, k, n, { mode, out }); }, job);
      post("cell", { lib: `samebits-${mode}`, threads: sb.threads, m, n, k, ms,
                     probes: probes(out, m, n) });
    }
  } finally {
    b.dispose();
  }
}

// A reference network (web/make_models.py's files), the whole graph, in each mode.
async function runModel({ name, modelsURL }) {
  const { job, sb } = state;
  const bytes = await fetchBytes(new URL(`${name}.onnx`, modelsURL));
  const feeds = {};
  for (const f of unpackFeeds(await fetchBytes(new URL(`${name}.feeds`, modelsURL)))) {
    feeds[f.name] = { data: f.data, dims: f.shape };
  }
  for (const mode of job.modes) {
    const model = await sb.loadModel(bytes, { mode });
    try {
      const first = model.outputs[0].name;
      let y = null;
      const run = () => { y = model.run(feeds)[first].data; };
      await warmFor(run, job.minMs);
      const { ms } = await timeCall(run, job);
      post("modelCell", { lib: `samebits-${mode}`, threads: sb.threads, name, ms,
                          probes: outputProbes(y) });
    } finally {
      model.dispose();
    }
  }
}

// Messages: {type: "init", ...job} -> "ready"; {type: "shape", shape} -> "cell"s,
// "shapeDone"; {type: "model", name, modelsURL} -> "modelCell"s, "shapeDone".
self.onmessage = async ({ data }) => {
  try {
    if (data.type === "init") post("ready", { info: await init(data) });
    else if (data.type === "shape") { await runShape(data.shape); post("shapeDone"); }
    else if (data.type === "model") { await runModel(data); post("shapeDone"); }
    else post("shapeDone");
  } catch (err) {
    post("error", { message: String(err && err.stack ? err.stack : err) });
  }
};
