// Runs the samebits hash suites in WebAssembly under Node, through the Pyodide
// runtime installed from npm (web/node_modules/pyodide) and the wheel built by
// wasm/build.sh. Prints the same lines as `python -m samebits hashes`, so a
// wasm fault shows up without a browser.
//
//   node wasm/node_hashes.mjs [--suites gemm,conv,ops] [--modes exact,fast] [--paths vec4]
//                             [--threads 1] [--groups sweep,random,models] [--flip BIT]
//                             [--wheel FILE] [--indexURL DIR] [--info] [--fastcheck]
//                             [--models DIR] [--networks resnet50,...] [--python FILE]
//
// --models DIR runs the models suite instead of the others: the reference
// networks' .onnx and .feeds files and models.json (web/make_models.py) are
// read from DIR and run by samebits.onnx in Pyodide; one line per network
// and mode ("models <network> exact vec4 threads=1 sha256=...").
// --python FILE runs FILE's Python code in Pyodide once samebits is loaded,
// instead of the suites, and prints json.dumps of its variable `result` on a
// "# python " line (for tests that compare the two modules inside Pyodide).
// --info prints samebits.info() as JSON on a "# info " line before the header.
// --fastcheck prints samebits._selfcheck.fast_check() (the fast-mode error
// bound on a few products) as JSON on a "# fastcheck " line.
// SAMEBITS_WASM_RELAXED=0 in the environment is passed on to Python: fast mode
// then runs on the plain module. Node builds whose V8 has relaxed SIMD only
// behind a flag (Node 20) need --experimental-wasm-relaxed-simd for the
// relaxed-SIMD module; without it samebits falls back to the plain module.
//
// Exit status: 0 when every line was computed, 1 on any error.
import { existsSync, readFileSync } from "node:fs";
import { dirname, isAbsolute, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");

function parseArgs(argv) {
  const opts = {
    suites: "gemm,conv,ops", modes: "exact", paths: "vec4", threads: "1",
    groups: "sweep,random,models",
    flip: null, wheel: null, indexURL: join(root, "web", "node_modules", "pyodide"),
    info: false, fastcheck: false, models: null, networks: "", python: null,
  };
  for (let i = 0; i < argv.length; i++) {
    const m = /^--([A-Za-z]+)(?:=(.*))?$/.exec(argv[i]);
    if (!m || !(m[1] in opts)) throw new Error(`unknown argument ${argv[i]}`);
    if (m[1] === "info" || m[1] === "fastcheck") { opts[m[1]] = true; continue; }
    opts[m[1]] = m[2] !== undefined ? m[2] : argv[++i];
    if (opts[m[1]] === undefined) throw new Error(`--${m[1]} needs a value`);
  }
  return opts;
}

function wheelPath(opts) {
  if (opts.wheel) return isAbsolute(opts.wheel) ? opts.wheel : resolve(opts.wheel);
  const manifest = join(root, "wasm", "out", "wheel.json");
  if (!existsSync(manifest)) throw new Error(`${manifest} is missing: run bash wasm/build.sh`);
  return join(root, "wasm", "out", JSON.parse(readFileSync(manifest, "utf8")).wheel);
}

const list = (s) => s.split(",").filter(Boolean);

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  const wheel = wheelPath(opts);
  if (!existsSync(wheel)) throw new Error(`${wheel} is missing: run bash wasm/build.sh`);
  const entry = join(opts.indexURL, "pyodide.mjs");
  if (!existsSync(entry)) throw new Error(`${entry} is missing: run npm ci in web/`);

  const t0 = performance.now();
  const { loadPyodide } = await import(pathToFileURL(entry).href);
  const env = {};
  if (process.env.SAMEBITS_WASM_RELAXED !== undefined) {
    env.SAMEBITS_WASM_RELAXED = process.env.SAMEBITS_WASM_RELAXED;
  }
  const pyodide = await loadPyodide({ indexURL: opts.indexURL + "/", stdout: () => {}, env });
  // loadPackage reads a local path under Node, unpacks the wheel into
  // site-packages and loads samebits/libsamebits.so as a dynamic library.
  const problems = [];
  await pyodide.loadPackage(wheel, { messageCallback: () => {},
                                     errorCallback: (m) => problems.push(m) });
  if (!pyodide.loadedPackages.samebits) {
    throw new Error(`could not load the samebits wheel ${wheel}: ${problems.join(" ")}`);
  }
  const tLoad = performance.now();

  pyodide.globals.set("opts_json", JSON.stringify({
    modes: list(opts.modes), paths: list(opts.paths),
    threads: list(opts.threads).map(Number), groups: list(opts.groups),
    suites: list(opts.suites),
    flip: opts.flip === null ? null : Number(opts.flip),
  }));
  const ns = pyodide.runPython(`
import json, samebits, samebits.hashes as H
opts = json.loads(opts_json)
unknown = [s for s in opts["suites"] if s not in H.SUITES]
if unknown:
    raise ValueError(f"unknown suites {unknown}; known: {list(H.SUITES)}")
suites = [s for s in H.SUITES if s in opts["suites"]]
def header_for(suite):
    return H.header(opts["groups"], suite)
def line_for(suite, mode):
    return H.hash_lines(modes=[mode], paths=opts["paths"], threads=opts["threads"],
                        groups=opts["groups"], flip_bit=opts["flip"], suite=suite)
(suites, samebits.info()["compiler"].strip(), json.dumps(samebits.info()))
`).toJs();
  if (opts.info) console.log(`# info ${ns[2]}`);
  if (opts.fastcheck) {
    console.log(`# fastcheck ${pyodide.runPython(
      "import json; from samebits import _selfcheck; json.dumps(_selfcheck.fast_check())")}`);
  }
  console.error(`# pyodide ${pyodide.version}, ${ns[1]}; loaded in ${((tLoad - t0) / 1000).toFixed(1)} s`);
  if (opts.python) {
    const scope = pyodide.globals.get("dict")();
    pyodide.runPython(readFileSync(opts.python, "utf8"), { globals: scope });
    console.log(`# python ${pyodide.runPython("import json; json.dumps(result)", { globals: scope })}`);
    scope.destroy();
    return;
  }
  if (opts.models) {
    await runModels(pyodide, opts);
    return;
  }
  const headerFor = pyodide.globals.get("header_for");
  const lineFor = pyodide.globals.get("line_for");
  for (const suite of ns[0]) {
    console.log(headerFor(suite));
    for (const mode of list(opts.modes)) {
      const t = performance.now();
      const lines = lineFor(suite, mode).toJs();
      const secs = ((performance.now() - t) / 1000).toFixed(1);
      for (const line of lines) console.log(line);
      console.error(`# ${suite} ${mode}: ${secs} s`);
    }
  }
  headerFor.destroy();
  lineFor.destroy();
}

// The models suite: each network's bytes go into Python once, as bytes; the
// Python side frees them when its lines are computed.
async function runModels(pyodide, opts) {
  const manifest = JSON.parse(readFileSync(join(opts.models, "models.json"), "utf8"));
  const wanted = list(opts.networks);
  const modelLines = pyodide.runPython(`
from samebits.onnx import suite
def model_lines(name, model_js, feeds_js, mode, paths, threads):
    model = model_js.to_bytes()
    feeds = suite.unpack_feeds(feeds_js.to_bytes())
    out = []
    for path in paths.to_py():
        for t in threads.to_py():
            digest = suite.network_digest(model, feeds, mode, path, t)
            out.append(suite.format_line(name, mode, path, t, digest))
    return out
model_lines`);
  console.log(pyodide.runPython("from samebits.onnx import suite; suite.header()"));
  for (const net of manifest.networks) {
    if (wanted.length && !wanted.includes(net.name)) continue;
    // Node's Buffer is not a typed array Pyodide converts: view it as a Uint8Array
    const asBytes = (b) => new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
    const model = asBytes(readFileSync(join(opts.models, net.model)));
    const feeds = asBytes(readFileSync(join(opts.models, net.feeds)));
    for (const mode of list(opts.modes)) {
      const t = performance.now();
      const lines = modelLines(net.name, model, feeds, mode, list(opts.paths),
                               list(opts.threads).map(Number)).toJs();
      for (const line of lines) console.log(line);
      console.error(`# models ${net.name} ${mode}: ${((performance.now() - t) / 1000).toFixed(1)} s`);
    }
  }
  modelLines.destroy();
}

main().catch((err) => {
  console.error(`node_hashes.mjs: ${err && err.stack ? err.stack : err}`);
  process.exit(1);
});
