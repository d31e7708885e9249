// Installs the samebits Pyodide wheel the way a notebook user does, with
// micropip (its wheel and packaging's from web/out/pywheels, PyPI's files),
// under Node, then runs one exact product and prints one JSON line:
// {"version", "file", "digest", "entry_points"}.
//
//   node wasm/node_micropip.mjs [--wheel FILE]
import { readFileSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const args = process.argv.slice(2);
const wheelArg = args.indexOf("--wheel");
const wheel = wheelArg >= 0 ? resolve(args[wheelArg + 1])
  : join(root, "wasm", "out", JSON.parse(readFileSync(join(root, "wasm", "out", "wheel.json"),
                                                      "utf8")).wheel);
const indexURL = join(root, "web", "node_modules", "pyodide");
const pywheels = join(root, "web", "out", "pywheels");
const manifest = JSON.parse(readFileSync(join(pywheels, "pywheels.json"), "utf8"));

const { loadPyodide } = await import(pathToFileURL(join(indexURL, "pyodide.mjs")).href);
const pyodide = await loadPyodide({ indexURL: indexURL + "/", stdout: () => {} });
await pyodide.loadPackage([join(pywheels, manifest.packaging), join(pywheels, manifest.micropip)],
                          { messageCallback: () => {} });
// micropip reads wheels from the Emscripten file system by emfs: URLs
const target = `/tmp/${basename(wheel)}`;
pyodide.FS.writeFile(target, readFileSync(wheel));
pyodide.globals.set("wheel_url", `emfs:${target}`);
const line = await pyodide.runPythonAsync(`
import json, micropip
await micropip.install(wheel_url)
import importlib.metadata as md
import samebits
from samebits import _testdata
from samebits.testing import digest
a = memoryview(_testdata.float_buffer(64 * 48, 21, 8)).cast("B").cast("f", (64, 48))
b = memoryview(_testdata.float_buffer(48 * 32, 22, 8)).cast("B").cast("f", (48, 32))
eps = md.distribution("samebits").entry_points
json.dumps({"version": samebits.__version__, "file": samebits.__file__,
            "digest": digest(samebits.matmul(a, b, mode="exact")),
            "entry_points": sorted(f"{e.group}:{e.name}={e.value}" for e in eps)})
`);
console.log(line);
