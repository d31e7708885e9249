// The Pyodide side of the page, in a worker so that the page stays live while
// the suite runs. It loads Pyodide from the local npm copy, installs the
// samebits wheel, then reports: "ready", "speed", "fastcheck", one "line" per
// hash line (each suite of job.suites in turn: gemm, conv, then ops), and "done"
// (or "error").
const post = (type, data = {}) => self.postMessage({ type, ...data });

const PYTHON = `
import json, time, samebits, samebits.hashes as H
from samebits import _selfcheck, _testdata
from samebits._binding import lib as _lib

def sb_ready(groups, suites):
    info = samebits.info()
    headers = {suite: H.header(groups, suite) for suite in H.SUITES if suite in suites}
    return json.dumps({"headers": headers, "compiler": info["compiler"],
                       "path": info["path"], "paths": info["paths"],
                       "fused": info["fused_fast_mode"], "library": info["library"],
                       "fastLibrary": info["fast_library"],
                       "fastLibraryNote": _lib.FAST_LIBRARY_NOTE})

def sb_fast_check():
    return json.dumps(_selfcheck.fast_check())

def _matrix(n, seed):
    buf = _testdata.float_buffer(n * n, seed, 0)
    return memoryview(buf).cast("B").cast("f", (n, n))

def sb_speed(n, repeats=3):
    """Best-of-repeats seconds of one n x n x n product per mode (1 thread)."""
    a, b = _matrix(n, 11), _matrix(n, 12)
    out = memoryview(bytearray(4 * n * n)).cast("f", (n, n))
    result = {}
    for mode in ("exact", "fast"):
        samebits.matmul(a, b, mode=mode, out=out, threads=1)   # warm-up
        best = float("inf")
        for _ in range(repeats):
            t = time.perf_counter()
            samebits.matmul(a, b, mode=mode, out=out, threads=1)
            best = min(best, time.perf_counter() - t)
        result[mode] = best
    return json.dumps({"n": n, "path": samebits.path(), "seconds": result})

def sb_lines(suite, mode, paths, threads, groups, flip=None):
    # JavaScript's undefined arrives as None (null would arrive as JsNull).
    flip = flip if isinstance(flip, int) else None
    return json.dumps(H.hash_lines(modes=[mode], paths=paths, threads=threads,
                                   groups=groups, flip_bit=flip, suite=suite))
`;

self.onmessage = async (event) => {
  const job = event.data;
  try {
    const t0 = performance.now();
    const { loadPyodide } = await import(new URL("pyodide.mjs", job.indexURL).href);
    // relaxed=0 on the page: fast mode on the plain module (SAMEBITS_WASM_RELAXED=0).
    const env = job.relaxed === "0" ? { SAMEBITS_WASM_RELAXED: "0" } : {};
    const pyodide = await loadPyodide({ indexURL: job.indexURL, env });
    const tBoot = performance.now();
    // loadPackage fetches the wheel, unpacks it into site-packages and loads
    // samebits/libsamebits.so as a dynamic library (compiled asynchronously);
    // samebits/_binding/lib.py then opens the same library through ctypes, and opens
    // samebits/libsamebits-relaxed.wasm for fast mode where relaxed SIMD works.
    const problems = [];
    await pyodide.loadPackage(job.wheelURL, { messageCallback: () => {},
                                              errorCallback: (m) => problems.push(m) });
    if (!pyodide.loadedPackages.samebits) {
      throw new Error(`could not load the samebits wheel ${job.wheelURL}: ${problems.join(" ")}`);
    }
    pyodide.runPython(PYTHON);
    const g = (name) => pyodide.globals.get(name);
    const groups = pyodide.toPy(job.groups);
    const known = ["gemm", "conv", "ops"];
    const suites = job.suites.filter((s) => known.includes(s));
    if (suites.length !== job.suites.length) {
      throw new Error(`unknown suite in suites=${job.suites.join(",")} (known: ${known})`);
    }
    const ready = JSON.parse(g("sb_ready")(groups, pyodide.toPy(suites)));
    post("ready", { ...ready, pyodide: pyodide.version,
                    bootSeconds: (tBoot - t0) / 1000,
                    loadSeconds: (performance.now() - tBoot) / 1000 });
    if (job.speed > 0) post("speed", JSON.parse(g("sb_speed")(job.speed)));
    if (job.fastcheck) post("fastcheck", JSON.parse(g("sb_fast_check")()));
    const sbLines = g("sb_lines");
    for (const suite of known.filter((s) => suites.includes(s))) {
      for (const mode of job.modes) {
        const t = performance.now();
        const lines = JSON.parse(sbLines(suite, mode, pyodide.toPy(job.paths),
                                         pyodide.toPy(job.threads), groups,
                                         job.flip ?? undefined));
        const seconds = (performance.now() - t) / 1000 / Math.max(1, lines.length);
        for (const line of lines) post("line", { line, seconds });
      }
    }
    post("done");
  } catch (err) {
    post("error", { message: String(err && err.message ? err.message : err) });
  }
};
