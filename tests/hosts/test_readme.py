"""Every fenced code block of README.md runs here, read from the file itself
(a new block is picked up: an unknown ```python block runs as it is, an
unknown ```js or ```sh block fails test_every_block_is_accounted_for until
SPECS says how to run it or why it is not run).

* ```python blocks run natively, each in a fresh `python -c` in a temporary
  directory holding `model.onnx` (a small network written with onnx.helper:
  input `input` of shape ('batch', 3, 224, 224), output `logits`); a block
  that continues an earlier one gets the earlier block's names from a short,
  explicit prelude (SPECS).
* Pyodide-only ```python blocks (top-level `await`, `pyfetch`, `micropip`)
  run in Pyodide under Node through `node wasm/node_hashes.mjs --python FILE`.
* ```js blocks run under Node: the Pyodide one with Pyodide from web/ and the
  wheel from wasm/out, the npm package's with js/ as the package "samebits".
* ```sh blocks: `samebits hashes` runs (marked slow), the pytest-plugin
  commands run on the plugin block's test file, the rest are listed in SPECS
  with the reason they are not run.

Substitutions (what the README writes, what runs instead) are in SPECS,
each with its reason, and each must still be found in its block. The Node
parts need `bash wasm/build.sh`, `bash js/build.sh`, `npm ci` in web/ and
`python web/fetch_pywheels.py`; where something is missing they skip,
except under CI (env CI set), where they fail and say what to run.
"""
from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import http.server
import importlib.metadata
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import threading
from pathlib import Path
from typing import Callable, Iterator, Optional

import numpy as np
import pytest

import samebits

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
NODE_HASHES = ROOT / "wasm" / "node_hashes.mjs"
PYODIDE_DIR = ROOT / "web" / "node_modules" / "pyodide"
WHEEL_JSON = ROOT / "wasm" / "out" / "wheel.json"
PYWHEELS = ROOT / "web" / "out" / "pywheels"
JS = ROOT / "js"
# The modules the npm block loads: init({ threads: 4 }) takes the threaded
# one (Node shares memory), and one thread is its fallback. The relaxed-SIMD
# builds are loaded only where they were built (js/build.sh with RELAXED=1).
NPM_MODULES = ("samebits-single.mjs", "samebits-single.wasm", "samebits-threads.mjs",
               "samebits-threads.wasm", "samebits-threads.worker.js")
TAG = "# readme "          # the line a block's runner prints its report on
LANGUAGES = ("python", "js", "sh", "")   # "" : untyped text (the Layout tree), not code


# ---------------------------------------------------------------------------
# The blocks, as README.md has them.

@dataclasses.dataclass(frozen=True)
class Block:
    lang: str
    code: str
    line: int           # the line of the opening fence
    section: str        # the heading above it
    id: str


_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})\s*([^\s`]*)[^`]*$")


def readme_blocks(text: str) -> list[Block]:
    """The fenced code blocks of a Markdown text, in order."""
    found: list[tuple[str, str, int, str]] = []
    section, fence, lang, start = "", "", "", 0
    body: list[str] = []
    for number, line in enumerate(text.splitlines(), 1):
        if fence:
            if line.strip() and set(line.strip()) == {fence[0]} and len(line.strip()) >= len(fence):
                found.append((lang, "\n".join(body) + "\n", start, section))
                fence = ""
            else:
                body.append(line)
            continue
        m = _FENCE.match(line)
        if m:
            fence, lang, start, body = m.group(1), m.group(2).lower(), number, []
        elif re.match(r"^#{1,6} ", line):
            section = line.lstrip("#").strip()
    if fence:
        raise ValueError(f"README.md: the block opened on line {start} is not closed")
    blocks: list[Block] = []
    seen: dict[str, int] = {}
    for lang, code, start, section in found:
        slug = "-".join(re.findall(r"[a-z0-9]+", section.lower())[:5]) or "top"
        base = f"{lang or 'text'}-{slug}"
        seen[base] = seen.get(base, 0) + 1
        blocks.append(Block(lang, code, start, section,
                            base if seen[base] == 1 else f"{base}-{seen[base]}"))
    return blocks


def looks_pyodide_only(code: str) -> bool:
    return bool(re.search(r"(^|[^\w])await\s|pyfetch|micropip|from pyodide|import pyodide", code))


# ---------------------------------------------------------------------------
# How each block runs. A spec claims the one block of its language that
# contains its marker. @@NAME@@ in preludes, epilogues and substitutions is
# filled in at run time (the server's address, the repository's path, ...).

@dataclasses.dataclass(frozen=True)
class Spec:
    name: str       # the test id's part
    marker: str
    lang: str
    runner: str     # native | pyodide | node-npm | node-pyodide | plugin | plugin-commands |
    #                 shell | not-run
    prelude: str = ""
    epilogue: str = ""
    substitutions: tuple[tuple[str, str, str], ...] = ()   # (README text, run instead, why)
    continues: str = ""                    # marker of the block whose names the prelude repeats
    names: tuple[str, ...] = ()            # ... which that block must assign
    reason: str = ""                       # not-run: why; otherwise a note
    check: Optional[Callable[..., None]] = None
    slow: bool = False


def _inputs_comment(block: Block) -> str:
    """What the block's comment says print(sess.inputs) prints."""
    m = re.search(r"^print\(sess\.inputs\)\s*#\s*(.+?)\s*$", block.code, re.M)
    assert m, "the ONNX block no longer prints sess.inputs with the expected value beside it"
    return m.group(1)


def _check_onnx_native(block: Block, stdout: str, ctx: dict) -> None:
    lines = stdout.splitlines()
    assert lines[0] == _inputs_comment(block), (lines[0], _inputs_comment(block))
    assert lines[1] == ctx["native_digest"]


def _check_onnx_pyodide(block: Block, stdout: str, ctx: dict) -> None:
    assert "/model.onnx" in ctx["requests"], ctx["requests"]     # pyfetch got it
    # "the same digest as natively": the native block on zeros (x here is zeros too)
    assert stdout.strip() == ctx["native_digest"], (stdout, ctx["native_digest"])


def _check_micropip(block: Block, stdout: str, ctx: dict) -> None:
    # micropip fetched the wheel from the server and installed it (over the
    # copy the runner loaded with pyodide.loadPackage)
    assert "/" + _wheel().name in ctx["requests"], ctx["requests"]
    assert stdout == "micropip\n", stdout


def _check_pyodide_js(block: Block, stdout: str, ctx: dict) -> None:
    # c is "a memoryview of shape (2, 4)"
    assert _report(stdout) == {"type": "memoryview", "format": "f", "shape": [2, 4]}


def _check_npm(block: Block, stdout: str, ctx: dict) -> None:
    report = _report(stdout)
    assert report["threads"] == 4 and report["threaded"], report
    # "equal to samebits.testing.digest in Python": the native exact product's
    from samebits.testing import digest
    a, b = ctx["a"], ctx["b"]
    assert report["digest"] == digest(samebits.matmul(a, b, mode="exact"))


def _check_hashes(block: Block, stdout: str, ctx: dict) -> None:
    from samebits import hashes
    lines = [hashes.parse_line(line) for line in stdout.splitlines()
             if line.strip() and not line.startswith("#")]
    # one line per (mode, path, threads) of each suite ...
    for suite in hashes.SUITES:
        rows = [(l.mode, l.path, l.threads) for l in lines if l.suite == suite]
        assert len(rows) == len(set(rows)) and {m for m, _, _ in rows} == {"exact", "fast"}
        assert {p for _, p, _ in rows} == set(samebits.paths()), (suite, rows)
        # ... and the exact lines identical across paths and thread counts
        exact = {l.digest for l in lines if l.suite == suite and l.mode == "exact"}
        assert len(exact) == 1, (suite, exact)


_NUMPY_SAMEBITS = "import numpy as np\nimport samebits\n"

SPECS: tuple[Spec, ...] = (
    Spec("make-all-test", 'make test', "sh", "not-run",
         reason="make all / make test install Debian, PyPI and npm packages, build everything "
                "and run the whole test suite, this file included"),
    Spec("pip-install", 'pip install .', "sh", "not-run",
         reason="installs samebits into the environment the suite runs in; "
                "tests/builds/test_dist.py builds the wheel and the sdist from the same tree"),
    Spec("api", 'samebits.use_path("scalar")', "python", "native"),
    Spec("operators", 'samebits.layer_norm(', "python", "native",
         prelude=_NUMPY_SAMEBITS +
         "# wt and bias as the Python API block defines them: this block continues it\n"
         "wt = np.random.rand(3072, 768).astype(np.float32)\n"
         "bias = np.zeros(3072, np.float32)\n",
         continues='samebits.use_path("scalar")', names=("wt", "bias")),
    Spec("conv2d", 'samebits.conv2d(', "python", "native", prelude=_NUMPY_SAMEBITS),
    Spec("onnx-native", 'samebits.onnx.load("model.onnx"', "python", "native",
         prelude="import numpy as np\n"
                 "x = np.zeros((1, 3, 224, 224), np.float32)   # as the Pyodide block's x\n",
         check=_check_onnx_native),
    # pyfetch("model.onnx") is relative to a page's address; Node's fetch needs
    # an absolute URL: the test serves the directory holding model.onnx over
    # HTTP on 127.0.0.1 and the block fetches it from there (a real pyfetch).
    Spec("onnx-pyodide", 'pyfetch(', "python", "pyodide",
         substitutions=(('pyfetch("model.onnx")', 'pyfetch("@@SERVER@@/model.onnx")',
                         "Node's fetch has no page to resolve a relative URL against"),),
         check=_check_onnx_pyodide),
    Spec("dask", 'client = Client(', "python", "native",
         prelude="import numpy as np\n"
                 "from dask.distributed import LocalCluster\n"
                 "cluster = LocalCluster(n_workers=1, threads_per_worker=2, processes=False,\n"
                 "                       dashboard_address=None)\n"
                 "batch = np.random.default_rng(5).random((3, 3, 224, 224), dtype=np.float32)\n",
         substitutions=(('"tcp://scheduler-host:8786"', "cluster.scheduler_address",
                         "a LocalCluster in this process stands for the remote scheduler"),),
         epilogue="import samebits.onnx\n"
                  "want = samebits.onnx.load('model.onnx', mode='exact').run({'input': batch})\n"
                  "assert list(out) == ['logits'] and out['logits'].shape == (3, 10)\n"
                  "assert out['logits'].tobytes() == want['logits'].tobytes(), 'not one process'\n"
                  "client.close()\n"
                  "cluster.close()\n"),
    Spec("hashes", 'samebits hashes', "sh", "shell", check=_check_hashes, slow=True,
         substitutions=(("samebits hashes", "@@PYTHON@@ -m samebits hashes --groups random",
                         "the block's own alternative: the console script need not be on PATH "
                         "(samebits imported from py/); the gemm suite's random group only, "
                         "since test_hashes holds every suite's full lines on every path"),)),
    Spec("pytest-plugin", 'def test_logits(same_bits)', "python", "plugin",
         prelude="import numpy as np\n"
                 "import samebits.onnx\n"
                 "# sess and feeds as in the ONNX section: model.onnx on one zero image\n"
                 "sess = samebits.onnx.load('model.onnx', mode='exact')\n"
                 "feeds = {'input': np.zeros((1, 3, 224, 224), np.float32)}\n"),
    Spec("pytest-plugin-commands", 'pytest --samebits-update', "sh", "plugin-commands",
         reason="runs in test_pytest_plugin_blocks, on the plugin block's test file; "
                "`git add` is replaced by a check that the file it names was written"),
    # The page's URLs are relative to the repository root (python web/serve.py
    # serves it); under Node the same files are read from the checkout, and
    # loadPyodide is imported from pyodide.mjs (a page gets it from pyodide.js).
    Spec("load-pyodide", 'loadPyodide(', "js", "node-pyodide",
         prelude='import { loadPyodide } from "@@PYODIDE_MJS@@";\n',
         substitutions=(('"/web/node_modules/pyodide/"', '"@@ROOT@@/web/node_modules/pyodide/"',
                         "the page's server root is the repository"),
                        ('"/wasm/out/', '"@@ROOT@@/wasm/out/',
                         "the page's server root is the repository")),
         epilogue='console.log("# readme " + pyodide.runPython(\n'
                  '  "import json; json.dumps({\'type\': type(c).__name__, \'format\': c.format, "'
                  ' +\n  "\'shape\': list(c.shape)})"));\n',
         check=_check_pyodide_js),
    # micropip (and packaging) are PyPI's wheels in web/out/pywheels, loaded
    # first as a notebook has them; the wheel is served over HTTP on 127.0.0.1.
    Spec("micropip", 'micropip.install(', "python", "pyodide",
         prelude="import pyodide_js\n"
                 "from pyodide.ffi import to_js\n"
                 "await pyodide_js.loadPackage(to_js(['@@PACKAGING@@', '@@MICROPIP@@']))\n",
         substitutions=(('"https://your.host/', '"@@SERVER@@/',
                         "the test's server on 127.0.0.1 holds the wheel from wasm/out"),),
         epilogue="import importlib.metadata\n"
                  "print(importlib.metadata.distribution('samebits').read_text('INSTALLER'))\n",
         check=_check_micropip),
    Spec("npm", 'from "samebits"', "js", "node-npm",
         prelude='import { readFileSync } from "node:fs";\n'
                 "// a (m x k) and b (k x n), written by the test\n"
                 "const m = 37, k = 29, n = 23;\n"
                 'const a = new Float32Array(new Uint8Array(readFileSync("a.bin")).buffer);\n'
                 'const b = new Float32Array(new Uint8Array(readFileSync("b.bin")).buffer);\n',
         epilogue='const { threads, threaded } = samebits.info();\n'
                  'console.log("# readme " + JSON.stringify(\n'
                  '  { digest: samebits.digest(c, { shape: [m, n] }), threads, threaded }));\n'
                  "process.exit(0);   // the threaded module's workers keep Node alive\n",
         check=_check_npm),
)
NPM_SHAPES = ((37, 29), (29, 23))     # a and b of the npm block's prelude

BLOCKS = readme_blocks(README.read_text(encoding="utf-8"))


def _claims() -> tuple[dict[str, Spec], list[str]]:
    """{block id: its spec}, and what is wrong (a marker matching no block or two)."""
    claims: dict[str, Spec] = {}
    problems = []
    for spec in SPECS:
        hits = [b for b in BLOCKS if b.lang == spec.lang and spec.marker in b.code]
        if len(hits) != 1:
            problems.append(f"the marker {spec.marker!r} is in {len(hits)} {spec.lang} blocks "
                            f"of README.md, not 1: {[b.id for b in hits]}")
            continue
        if hits[0].id in claims:
            problems.append(f"{hits[0].id} is claimed by {claims[hits[0].id].marker!r} "
                            f"and {spec.marker!r}")
        claims[hits[0].id] = spec
    return claims, problems


CLAIMS, CLAIM_PROBLEMS = _claims()
DEFAULT_NATIVE = Spec("", "", "python", "native")
DEFAULT_PYODIDE = Spec("", "", "python", "pyodide")


def spec_of(block: Block) -> Optional[Spec]:
    if block.id in CLAIMS:
        return CLAIMS[block.id]
    if block.lang == "python":   # a new block: run as it is
        return DEFAULT_PYODIDE if looks_pyodide_only(block.code) else DEFAULT_NATIVE
    return None


def _spec(block: Block) -> Spec:
    """The spec of a block that has one (the blocks the run tests get)."""
    spec = spec_of(block)
    assert spec is not None, f"{block.id} has no spec"
    return spec


def _blocks(*runners: str) -> list[Block]:
    return [b for b in BLOCKS if (s := spec_of(b)) is not None and s.runner in runners]


def _params(runner: str) -> list:
    return [pytest.param(b, id=_id(b), marks=[pytest.mark.slow] if _spec(b).slow else [])
            for b in _blocks(runner)]


def _id(block: Block) -> str:
    spec = spec_of(block)
    return f"{block.lang}-{spec.name}" if spec is not None and spec.name else block.id


def test_every_block_is_accounted_for() -> None:
    """Every fenced block has a known language and a way to run it (or a
    listed reason not to); every spec's marker, substitutions and continued
    names are still in the README."""
    assert len(BLOCKS) >= 10, [b.id for b in BLOCKS]
    assert not CLAIM_PROBLEMS, "\n".join(CLAIM_PROBLEMS)
    for block in BLOCKS:
        assert block.lang in LANGUAGES, (
            f"README.md line {block.line}: a ```{block.lang} block; tests/hosts/test_readme.py runs "
            f"python, js and sh blocks: add a way to run it")
        spec = spec_of(block)
        if block.lang in ("js", "sh"):
            assert spec is not None, (
                f"README.md line {block.line} ({block.id}): a new {block.lang} block; add a Spec "
                f"in tests/hosts/test_readme.py that runs it, or says why it is not run")
        if spec is None:
            continue
        assert spec.runner != "not-run" or spec.reason, spec
        if block.lang == "python":
            assert (spec.runner == "pyodide") == looks_pyodide_only(block.code), (
                f"{block.id}: runner {spec.runner} for a block that "
                f"{'needs' if looks_pyodide_only(block.code) else 'does not need'} Pyodide")
        for old, _new, why in spec.substitutions:
            assert old in block.code, f"{block.id}: the substitution of {old!r} ({why}) is stale"
        if spec.continues:
            earlier = next(b for b in BLOCKS if spec.continues in b.code)
            assert earlier.line < block.line
            for name in spec.names:
                assert re.search(rf"^{name}\s*=", earlier.code, re.M), (
                    f"{block.id}'s prelude takes {name} from {earlier.id}, which no longer "
                    f"defines it")
    runners = {s.runner for b in BLOCKS if (s := spec_of(b)) is not None}
    assert {"native", "pyodide", "node-npm", "node-pyodide", "plugin"} <= runners, runners


# ---------------------------------------------------------------------------
# Running them.

def _fill(text: str, values: dict[str, str]) -> str:
    for key, value in values.items():
        text = text.replace(f"@@{key}@@", value)
    assert "@@" not in text, f"unfilled placeholder in {text!r}"
    return text


def _program(block: Block, values: Optional[dict[str, str]] = None) -> str:
    """The prelude, the block with its substitutions made, the epilogue."""
    spec = _spec(block)
    values = values or {}
    code = block.code
    for old, new, _why in spec.substitutions:
        assert old in code, f"{block.id}: {old!r} is no longer in the block"
        code = code.replace(old, _fill(new, values))
    return "".join(_fill(part, values) + ("" if part.endswith("\n") or not part else "\n")
                   for part in (spec.prelude, code, spec.epilogue))


def _numbered(program: str) -> str:
    return "\n".join(f"{i:4} | {line}" for i, line in enumerate(program.splitlines(), 1))


def _report(stdout: str) -> dict:
    lines = [line[len(TAG):] for line in stdout.splitlines() if line.startswith(TAG)]
    assert lines, f"no {TAG.strip()!r} line in the output:\n{stdout}"
    return json.loads(lines[-1])


def _env() -> dict[str, str]:
    """This process's environment, with the samebits it imported first on the path."""
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"}
    package_parent = str(Path(samebits.__file__).resolve().parent.parent)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package_parent, env.get("PYTHONPATH")) if p)
    return env


def _need(missing: list[str], what: str) -> None:
    if missing:
        message = f"{what} needs: " + "; ".join(missing)
        if os.environ.get("CI"):
            pytest.fail(message, pytrace=False)
        pytest.skip(message)


def _wheel() -> Path:
    return WHEEL_JSON.parent / json.loads(WHEEL_JSON.read_text())["wheel"]


def _pyodide_missing() -> list[str]:
    missing = []
    if shutil.which("node") is None:
        missing.append("node (apt-get install nodejs)")
    if not (PYODIDE_DIR / "pyodide.mjs").is_file():
        missing.append("web/node_modules/pyodide (run: cd web && npm ci)")
    if not WHEEL_JSON.is_file():
        missing.append("wasm/out/wheel.json and the wheel (run: bash wasm/build.sh)")
    elif not _wheel().is_file():
        missing.append("the wheel named in wasm/out/wheel.json (run: bash wasm/build.sh)")
    return missing


def _write_model(path: Path) -> None:
    """model.onnx: input (batch, 3, 224, 224) -> global average pool -> Gemm
    -> logits (batch, 10)."""
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper, numpy_helper
    weight = np.linspace(-1, 1, 30, dtype=np.float32).reshape(10, 3)
    bias = np.linspace(0, 1, 10, dtype=np.float32)
    graph = helper.make_graph(
        [helper.make_node("GlobalAveragePool", ["input"], ["pooled"]),
         helper.make_node("Flatten", ["pooled"], ["flat"]),
         helper.make_node("Gemm", ["flat", "w", "b"], ["logits"], transB=1)],
        "readme",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, ["batch", 3, 224, 224])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", 10])],
        initializer=[numpy_helper.from_array(weight, "w"), numpy_helper.from_array(bias, "b")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)
    onnx.checker.check_model(model, full_check=True)
    path.write_bytes(model.SerializeToString())


def _native_digest(model: Path) -> str:
    """sha256 of the model's exact logits on one zero image, natively, in this process."""
    import samebits.onnx
    out = samebits.onnx.load(str(model), mode="exact").run(
        {"input": np.zeros((1, 3, 224, 224), np.float32)})
    return hashlib.sha256(out["logits"].tobytes()).hexdigest()


def _placeholders(block: Block, directory: Path) -> dict:
    """Writes what the block names into `directory`; returns what checks compare with."""
    ctx: dict = {}
    spec = _spec(block)
    text = block.code + (spec.prelude + spec.epilogue if spec is not None else "")
    if "model.onnx" in text:
        _write_model(directory / "model.onnx")
        ctx["native_digest"] = _native_digest(directory / "model.onnx")
    if "dask" in text:
        pytest.importorskip("dask.distributed")
    return ctx


@contextlib.contextmanager
def _served(directory: Path, requests: list[str]) -> Iterator[str]:
    """An HTTP server on 127.0.0.1 for `directory`, as long as the block runs;
    the paths of the GET requests it answered are appended to `requests`."""
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def do_GET(self) -> None:
            requests.append(self.path)
            super().do_GET()

        def log_message(self, *args) -> None:
            pass
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(Quiet, directory=str(directory)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def _run(args: list[str], cwd: Path, program: str, timeout: float = 600,
         expect: Optional[int] = 0) -> subprocess.CompletedProcess:
    proc = subprocess.run(args, cwd=str(cwd), capture_output=True, text=True, timeout=timeout,
                          env=_env())
    if expect is not None and proc.returncode != expect:
        pytest.fail(f"{' '.join(args[:3])} exited {proc.returncode} (want {expect}) running:\n"
                    f"{_numbered(program)}\n--- stdout\n{proc.stdout}\n--- stderr\n{proc.stderr}",
                    pytrace=False)
    return proc


@pytest.mark.parametrize("block", _params("native"))
def test_python_block(block: Block, tmp_path: Path) -> None:
    """A Python block, natively, in a fresh interpreter."""
    ctx = _placeholders(block, tmp_path)
    program = _program(block)
    proc = _run([sys.executable, "-c", program], tmp_path, program)
    spec = _spec(block)
    if spec.check is not None:
        spec.check(block, proc.stdout, ctx)


# Runs one block in Pyodide inside node_hashes.mjs --python: that runner
# executes the file with runPython (synchronous) and hides Python's stdout, so
# the block (top-level await allowed) is compiled here and run as a task on
# Pyodide's event loop, which Node keeps going after the runner's own work;
# the task prints its report with console.log and sets the exit status.
_PYODIDE_WRAPPER = r'''
import ast, asyncio, builtins, io, json, sys, traceback
import js

SOURCE = {source!r}


async def _readme_block():
    captured, saved = io.StringIO(), sys.stdout
    report = {{"ok": False}}
    sys.stdout = captured
    try:
        code = compile(SOURCE, "README.md block", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
        pending = eval(code, {{"__name__": "__main__"}})
        if pending is not None:
            await pending
        report["ok"] = True
    except BaseException:
        report["error"] = traceback.format_exc()
    finally:
        sys.stdout = saved
    report["stdout"] = captured.getvalue()
    js.console.log({tag!r} + json.dumps(report))
    if not report["ok"]:
        js.process.exitCode = 1


builtins._readme_task = asyncio.ensure_future(_readme_block())
result = "scheduled"
'''


@pytest.mark.node
@pytest.mark.parametrize("block", _params("pyodide"))
def test_pyodide_block(block: Block, tmp_path: Path) -> None:
    """A Pyodide-only Python block, in Pyodide under Node, with the wheel."""
    _need(_pyodide_missing(), "running README blocks in Pyodide")
    values: dict[str, str] = {}
    if "micropip" in block.code:
        manifest = PYWHEELS / "pywheels.json"
        _need([] if manifest.is_file() else
              ["web/out/pywheels (run: python web/fetch_pywheels.py)"], "the micropip block")
        wheels = json.loads(manifest.read_text())
        values.update(MICROPIP=str(PYWHEELS / wheels["micropip"]),
                      PACKAGING=str(PYWHEELS / wheels["packaging"]))
        shutil.copy(_wheel(), tmp_path / _wheel().name)
    ctx = _placeholders(block, tmp_path)
    ctx["requests"] = []
    with _served(tmp_path, ctx["requests"]) as url:
        values["SERVER"] = url
        program = _program(block, values)
        script = tmp_path / "readme_block.py"
        script.write_text(_PYODIDE_WRAPPER.format(source=program, tag=TAG))
        proc = _run(["node", str(NODE_HASHES), "--python", str(script)], ROOT, program,
                    timeout=300, expect=None)
    if proc.stdout.count(TAG) == 1 and not _report(proc.stdout)["ok"]:
        pytest.fail(f"{_id(block)} failed in Pyodide:\n{_numbered(program)}\n"
                    f"{_report(proc.stdout)['error']}", pytrace=False)
    if proc.returncode != 0:
        pytest.fail(f"node {NODE_HASHES.name} exited {proc.returncode} running:\n"
                    f"{_numbered(program)}\n--- stdout\n{proc.stdout}\n--- stderr\n{proc.stderr}",
                    pytrace=False)
    report = _report(proc.stdout)
    assert report["ok"]
    spec = _spec(block)
    if spec.check is not None:
        spec.check(block, report["stdout"], ctx)


@pytest.mark.node
@pytest.mark.parametrize("block", _params("node-npm") + _params("node-pyodide"))
def test_js_block(block: Block, tmp_path: Path) -> None:
    """A JavaScript block under Node: the npm package's (js/ installed as
    "samebits"), or the Pyodide one (Pyodide from web/, the wheel)."""
    spec = _spec(block)
    ctx: dict = {}
    values: dict[str, str] = {}
    if spec.runner == "node-npm":
        missing = [] if shutil.which("node") else ["node (apt-get install nodejs)"]
        missing += [f"js/dist/{name} (run: bash js/build.sh)" for name in NPM_MODULES
                    if not (JS / "dist" / name).is_file()]
        _need(missing, "the npm package's README block")
        (tmp_path / "node_modules").mkdir()
        (tmp_path / "node_modules" / "samebits").symlink_to(JS, target_is_directory=True)
        rng = np.random.default_rng(11)
        for name, shape in zip("ab", NPM_SHAPES):
            ctx[name] = rng.standard_normal(shape).astype(np.float32)
            (tmp_path / f"{name}.bin").write_bytes(ctx[name].astype("<f4").tobytes())
    else:
        _need(_pyodide_missing(), "the Pyodide README block")
        values = {"ROOT": ROOT.as_posix(), "PYODIDE_MJS": (PYODIDE_DIR / "pyodide.mjs").as_uri()}
    program = _program(block, values)
    (tmp_path / "block.mjs").write_text(program)
    proc = _run(["node", "block.mjs"], tmp_path, program, timeout=300)
    if spec.check is not None:
        spec.check(block, proc.stdout, ctx)


def _commands(block: Block) -> list[str]:
    """The block's command lines, comments and blank lines dropped."""
    lines = [line.split("#", 1)[0].strip() for line in block.code.splitlines()]
    return [line for line in lines if line]


def _shell_params() -> list:
    params = _params("shell")
    for block in _blocks("not-run", "plugin-commands"):
        reason = f"{_id(block)} is not run here: {_spec(block).reason}"
        params.append(pytest.param(block, id=_id(block), marks=[pytest.mark.skip(reason=reason)]))
    return params


@pytest.mark.parametrize("block", _shell_params())
def test_shell_block(block: Block, tmp_path: Path) -> None:
    """A shell block's commands, one by one, with the substitutions SPECS lists
    made in each command (comments dropped)."""
    spec = _spec(block)
    values = {"PYTHON": shlex.quote(sys.executable)}
    for command in _commands(block):
        for old, new, _why in spec.substitutions:
            command = command.replace(old, _fill(new, values))
        proc = _run(["bash", "-c", command], tmp_path, command)
        if spec.check is not None:
            spec.check(block, proc.stdout, {})


def test_pytest_plugin_blocks(tmp_path: Path) -> None:
    """The plugin's test function, in tests/ of a scratch project with
    model.onnx, run by the commands of the block after it: --samebits-update
    writes tests/same_bits.json (what `git add` names), then plain pytest
    passes; with one digest changed it fails naming the array."""
    test_block = next(b for b in _blocks("plugin"))
    command_block = next(b for b in _blocks("plugin-commands"))
    assert command_block.line > test_block.line
    _placeholders(test_block, tmp_path)
    program = _program(test_block)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_logits.py").write_text(program)
    (tmp_path / "pytest.ini").write_text("[pytest]\n")      # the scratch project's root
    # The plugin comes in by its pytest11 entry point where samebits is
    # installed; otherwise by name, as its docstring says.
    installed = any(e.value == "samebits.pytest_plugin"
                    for e in importlib.metadata.entry_points(group="pytest11"))
    pytest_args = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider"] + \
        ([] if installed else ["-p", "samebits.pytest_plugin"])
    commands = _commands(command_block)
    assert [c.split()[0] for c in commands] == ["pytest", "git", "pytest"], commands
    for command in commands:
        words = command.split()
        if words[0] == "git":
            assert words[1] == "add" and len(words) == 3, command
            golden = tmp_path / words[2]
            assert golden.is_file(), f"{words[2]} was not written"
            assert list(json.loads(golden.read_text())) == ["resnet50/logits"]
            continue
        _run(pytest_args + words[1:], tmp_path, program)
    # "anywhere else: fails, naming every array that differs"
    golden.write_text(json.dumps({"resnet50/logits": "0" * 64}) + "\n")
    proc = _run(pytest_args + commands[-1].split()[1:], tmp_path, program, expect=1)
    assert "resnet50/logits" in proc.stdout
