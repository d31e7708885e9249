// Benchmark worker for samebits in WebAssembly: Pyodide from node_modules,
// the wheel from wasm/out, matmul timed from Python (samebits.bench.time_call,
// the method of bench-common.mjs) with out= preallocated and threads=1.
// Fast mode runs on the relaxed-SIMD module, exact mode on the plain one.
import { fetchBytes, opInput, randomFloats } from "./bench-common.mjs";

const post = (type, data = {}) => self.postMessage({ type, ...data });

const PYTHON = `
import json, samebits
from samebits._binding import lib as _lib
from samebits.bench import time_call

def sb_info():
    info = samebits.info()
    return json.dumps({"version": info["version"], "path": info["path"],
                       "fused": info["fused_fast_mode"].get("vec4"),
                       "tile": info["tiles"].get("vec4"),
                       "library": info["library"].rsplit("/", 1)[-1],
                       "fast_library": info["fast_library"].rsplit("/", 1)[-1],
                       "fast_library_note": _lib.FAST_LIBRARY_NOTE,
                       "compiler": info["compiler"]})

def sb_matrix(js_array, rows, cols):
    flat = memoryview(bytearray(4 * rows * cols)).cast("f")
    js_array.assign_to(flat)
    return flat.cast("B").cast("f", (rows, cols))

def sb_time(a, b, m, n, mode, warmup, min_seconds, reps):
    out = memoryview(bytearray(4 * m * n)).cast("f", (m, n))
    fn = lambda: samebits.matmul(a, b, mode=mode, out=out, threads=1)
    seconds = time_call(fn, min_seconds=min_seconds, repeats=reps, warmup=warmup)
    flat = out.cast("B").cast("f")
    probes = [flat[0], flat[(m // 2) * n + n // 2], flat[m * n - 1]]
    return json.dumps({"seconds": seconds, "probes": probes})

def sb_time_model(model_js, feeds_js, mode, warmup, min_seconds, reps):
    import samebits.onnx as so
    from samebits.onnx import suite
    session = so.load(model_js.to_bytes(), mode=mode, threads=1)
    feeds = suite.unpack_feeds(feeds_js.to_bytes())
    out = {}
    def fn():
        out.update(session.run(feeds))
    seconds = time_call(fn, min_seconds=min_seconds, repeats=reps, warmup=warmup)
    flat = next(iter(out.values()))
    flat = flat.cast("B").cast("f") if flat.ndim else flat
    n = len(flat)
    return json.dumps({"seconds": seconds, "probes": [flat[0], flat[n // 2], flat[n - 1]]})

def sb_time_op(x, op, rows, cols, mode, warmup, min_seconds, reps):
    out = memoryview(bytearray(4 * rows * cols)).cast("f", (rows, cols))
    if op == "softmax":
        fn = lambda: samebits.softmax(x, -1, mode=mode, out=out, threads=1)
    elif op == "layer_norm":
        fn = lambda: samebits.layer_norm(x, (cols,), mode=mode, out=out, threads=1)
    else:
        f = getattr(samebits, op)
        fn = lambda: f(x, mode=mode, out=out, threads=1)
    seconds = time_call(fn, min_seconds=min_seconds, repeats=reps, warmup=warmup)
    flat = out.cast("B").cast("f")
    n = rows * cols
    return json.dumps({"seconds": seconds, "probes": [flat[0], flat[n // 2], flat[n - 1]]})
`;

let state = null;

async function init(job) {
  const { loadPyodide } = await import(new URL("pyodide.mjs", job.pyodideURL).href);
  const pyodide = await loadPyodide({ indexURL: job.pyodideURL });
  const problems = [];
  await pyodide.loadPackage(job.wheelURL, { messageCallback: () => {},
                                            errorCallback: (m) => problems.push(m) });
  if (!pyodide.loadedPackages.samebits) {
    throw new Error(`could not load ${job.wheelURL}: ${problems.join(" ")}`);
  }
  pyodide.runPython(PYTHON);
  const g = (name) => pyodide.globals.get(name);
  const info = JSON.parse(g("sb_info")());
  state = { job, matrix: g("sb_matrix"), time: g("sb_time"), timeOp: g("sb_time_op"),
            timeModel: g("sb_time_model") };
  return { ...info, pyodide: pyodide.version };
}

function runShape([m, n, k]) {
  const { job, matrix, time } = state;
  const a = matrix(randomFloats(m * k, 1), m, k);
  const b = matrix(randomFloats(k * n, 2), k, n);
  try {
    for (const mode of job.modes) {
      const { seconds, probes } = JSON.parse(time(a, b, m, n, mode, job.warmup,
                                                  job.minMs / 1000, job.reps));
      post("cell", { lib: `samebits-${mode}`, m, n, k, ms: seconds * 1000, probes });
    }
  } finally {
    a.destroy();
    b.destroy();
  }
}

function runOp({ name, op, rows, cols }) {
  const { job, matrix, timeOp } = state;
  const x = matrix(opInput(op, rows * cols), rows, cols);
  try {
    for (const mode of job.modes) {
      const { seconds, probes } = JSON.parse(timeOp(x, op, rows, cols, mode, job.warmup,
                                                    job.minMs / 1000, job.reps));
      post("opCell", { lib: `samebits-${mode}`, name, op, rows, cols, ms: seconds * 1000, probes });
    }
  } finally {
    x.destroy();
  }
}

async function runModel({ name, modelsURL }) {
  const { job, timeModel } = state;
  const model = await fetchBytes(new URL(`${name}.onnx`, modelsURL));
  const feeds = await fetchBytes(new URL(`${name}.feeds`, modelsURL));
  for (const mode of job.modes) {
    const { seconds, probes } = JSON.parse(timeModel(model, feeds, mode, job.warmup,
                                                     job.minMs / 1000, job.reps));
    post("modelCell", { lib: `samebits-${mode}`, name, ms: seconds * 1000, probes });
  }
}

// Messages: {type: "model", name, modelsURL} -> "modelCell"s, "shapeDone";
// {type: "init", ...job} -> "ready"; {type: "shape", shape} -> "cell"s,
// "shapeDone"; {type: "op", name, op, rows, cols} -> "opCell"s, "shapeDone".
self.onmessage = async ({ data }) => {
  try {
    if (data.type === "init") post("ready", { info: await init(data) });
    else if (data.type === "shape") { runShape(data.shape); post("shapeDone"); }
    else if (data.type === "op") { runOp(data); post("shapeDone"); }
    else if (data.type === "model") { await runModel(data); post("shapeDone"); }
  } catch (err) {
    post("error", { message: String(err && err.stack ? err.stack : err) });
  }
};
