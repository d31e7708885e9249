// Runs a user's pytest suite inside Pyodide with samebits' pytest plugin.
// ?case=URL names a JSON document {"files": {"name": "text", ...}, "args": [...]}:
// the files (test modules, same_bits.json) are written to /home/pyodide/case
// and `pytest <args> case` runs there. The plugin comes from the samebits
// wheel's pytest11 entry point, as after pip install. window.pytestResult
// holds {done, exitCode, output, error}.
//
// Query parameters: case=URL (required)   wheel=URL   pyodide=URL
//   pywheels=URL (folder with pywheels.json, made by web/fetch_pywheels.py)
import { reportWhenDone } from "./report.mjs";
import { wheelURL } from "./wheel.mjs";

const params = new URLSearchParams(location.search);
const here = (url) => new URL(url, location.href).href;
const $ = (id) => document.getElementById(id);
const result = { done: false, exitCode: null, output: "", error: null };
window.pytestResult = result;
reportWhenDone("pytestResult");   // ?report=PATH: POSTed when done (report.mjs)

async function main() {
  const indexURL = here(params.get("pyodide") || "node_modules/pyodide/");
  const { loadPyodide } = await import(new URL("pyodide.mjs", indexURL).href);
  let output = "";
  const pyodide = await loadPyodide({ indexURL,
                                      stdout: (line) => { output += line + "\n"; },
                                      stderr: (line) => { output += line + "\n"; } });
  const pywheels = here(params.get("pywheels") || "out/pywheels/");
  const manifest = await (await fetch(new URL("pywheels.json", pywheels), { cache: "no-store" }))
    .json();
  const wheels = ["pluggy", "iniconfig", "packaging", "pygments", "pytest"]
    .map((name) => new URL(manifest[name], pywheels).href);
  wheels.push(await wheelURL(params));
  await pyodide.loadPackage(wheels, { messageCallback: () => {} });
  const caseDoc = await (await fetch(here(params.get("case")), { cache: "no-store" })).json();
  pyodide.globals.set("case_json", JSON.stringify(caseDoc));
  $("status").textContent = "running pytest…";
  result.exitCode = pyodide.runPython(`
import json, os, pytest
case = json.loads(case_json)
os.makedirs("/home/pyodide/case", exist_ok=True)
for name, text in case["files"].items():
    with open(os.path.join("/home/pyodide/case", name), "w") as f:
        f.write(text)
os.chdir("/home/pyodide")
int(pytest.main(case.get("args", []) + ["-p", "no:cacheprovider", "case"]))
`);
  result.output = output;
  $("output").textContent = output;
  $("status").textContent = `pytest exited with ${result.exitCode}`;
}

main().catch((err) => {
  result.error = String(err && err.message ? err.message : err);
  $("status").textContent = `Error: ${result.error}`;
}).finally(() => { result.done = true; });
