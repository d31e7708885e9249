// Benchmark worker for the npm package (js/): samebits.init({threads}) and
// matmul timed with `out` preallocated, in each mode, with B packed once
// (packMatrix), as the peers keep their weights: each call copies A into the
// module's memory and C out of it (timed: what a caller of the API pays).
import * as samebits from "../js/index.mjs";
import { probes, randomFloats, timeCall } from "./bench-common.mjs";

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

self.onmessage = async ({ data }) => {
  try {
    if (data.type === "init") post("ready", { info: await init(data) });
    else if (data.type === "shape") { await runShape(data.shape); post("shapeDone"); }
    else post("shapeDone");
  } catch (err) {
    post("error", { message: String(err && err.stack ? err.stack : err) });
  }
};
