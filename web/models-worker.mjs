// The Pyodide side of the models page: loads Pyodide and the samebits wheel,
// then for each network fetches its .onnx and .feeds files, runs it with
// samebits.onnx (one thread) and posts its hash line.
const post = (type, data = {}) => self.postMessage({ type, ...data });

const PYTHON = `
import json, samebits
from samebits.onnx import suite

def sb_info():
    info = samebits.info()
    return json.dumps({"version": info["version"], "path": info["path"]})

def sb_model_line(name, model_js, feeds_js, mode):
    model = model_js.to_bytes()        # one copy into the wasm heap, freed on return
    feeds = suite.unpack_feeds(feeds_js.to_bytes())
    digest = suite.network_digest(model, feeds, mode, None, 1)
    return suite.format_line(name, mode, samebits.path(), 1, digest)
`;

async function bytes(url) {
  const response = await fetch(url, { cache: "no-store" });
  if (!response.ok) throw new Error(`${url}: ${response.status}`);
  return new Uint8Array(await response.arrayBuffer());
}

self.onmessage = async ({ data: job }) => {
  try {
    const { loadPyodide } = await import(new URL("pyodide.mjs", job.indexURL).href);
    const pyodide = await loadPyodide({ indexURL: job.indexURL });
    const wheel = job.wheelURL;
    const problems = [];
    await pyodide.loadPackage(wheel, { messageCallback: () => {},
                                       errorCallback: (m) => problems.push(m) });
    if (!pyodide.loadedPackages.samebits) {
      throw new Error(`could not load ${wheel}: ${problems.join(" ")}`);
    }
    pyodide.runPython(PYTHON);
    const info = { ...JSON.parse(pyodide.globals.get("sb_info")()), pyodide: pyodide.version };
    post("ready", { info, header: pyodide.runPython("suite.header()") });
    const line = pyodide.globals.get("sb_model_line");
    for (const net of job.networks) {
      // fetched once per network, for every mode
      const model = await bytes(new URL(net.model, job.modelsURL));
      const feeds = await bytes(new URL(net.feeds, job.modelsURL));
      for (const mode of job.modes) {
        const t = performance.now();
        const text = line(net.name, model, feeds, mode);
        post("line", { network: net.name, line: text, seconds: (performance.now() - t) / 1000 });
      }
    }
    line.destroy();
    post("done");
  } catch (err) {
    post("error", { message: String(err && err.stack ? err.stack : err) });
  }
};
