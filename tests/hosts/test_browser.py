"""The WebAssembly build in Chromium: the page web/index.html runs the hash
suites (gemm: matrix products; conv: the ResNet-50 and MobileNetV3-large
convolutions; ops: the elementwise functions) through Pyodide and the samebits wheel, and its exact lines
must have the native bits; with ?flip= the page must report the flipped bit. Fast mode
runs on the relaxed-SIMD module (fused multiply-add) and meets the fast-mode
error bound; with ?relaxed=0 it falls back to the plain module.

Needs `bash wasm/build.sh`, `npm ci` in web/, `pip install playwright` and
Debian's /usr/bin/chromium; builds nothing itself. Where something is missing
the tests skip, except under CI (env CI set), where they fail and say what to
run.
"""
from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path

import numpy as np
import pytest

import samebits
from samebits import hashes

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
FLIP_BIT = 7
RELAXED_NAME = "libsamebits-relaxed.wasm"


def _load_runner():
    spec = importlib.util.spec_from_file_location("samebits_run_browser",
                                                  ROOT / "web" / "run_browser.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def runner():
    module = _load_runner()
    missing = module.missing_prerequisites()
    if missing:
        message = "the browser tests need: " + "; ".join(missing)
        if os.environ.get("CI"):
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    return module


def _check_clean(result: dict) -> None:
    assert not result.get("error"), f"page error: {result['error']}\n{result['console']}"
    assert result["done"]
    assert not result["blocked"], f"the page asked for remote URLs: {result['blocked']}"


def _native(suites=hashes.SUITES, groups=hashes.GROUPS, modes=("exact",), flip_bit=None):
    """The native document the page compares with: {"headers", "lines"}."""
    return {"headers": {s: hashes.header(groups, s) for s in suites},
            "lines": [line for s in suites
                      for line in hashes.hash_lines(modes=list(modes), paths=[samebits.path()],
                                                    threads=[1], groups=groups, suite=s,
                                                    flip_bit=flip_bit)]}


def test_browser_exact_suite_matches_native(runner):
    """Every exact line computed in Chromium (every suite in full: gemm, conv
    and ops) equals the native one, and the page says OK."""
    native = _native()
    result = runner.run_page({"modes": "exact", "speed": 256}, native, timeout_s=600)
    _check_clean(result)
    assert result["headers"] == native["headers"]
    assert result["header"] == hashes.header()
    exact = [hashes.parse_line(line) for line in result["lines"]]
    assert [(b.suite, b.mode, b.path, b.threads) for b in exact] == [
        ("gemm", "exact", "vec4", 1), ("conv", "exact", "vec4", 1), ("ops", "exact", "vec4", 1)],\
        result["lines"]
    natives = {hashes.parse_line(line).suite: line for line in native["lines"]}
    for line, b in zip(result["lines"], exact):
        assert b.digest == hashes.parse_line(natives[b.suite]).digest, (
            f"Chromium: {line}\nnative:   {natives[b.suite]}")
    assert [row["native"] for row in result["rows"]] == [natives["gemm"], natives["conv"],
                                                         natives["ops"]]
    assert [row["suite"] for row in result["rows"]] == ["gemm", "conv", "ops"]
    assert all(row["verdict"] == "match" for row in result["rows"])
    assert result["ok"] is True
    assert result["speed"] and result["speed"]["seconds"]["exact"] > 0
    # ... with the relaxed-SIMD module loaded beside the plain one
    assert result["fastLibrary"].endswith(f"/samebits/{RELAXED_NAME}"), result["fastLibraryNote"]
    assert result["library"].endswith("/samebits/libsamebits.so")


def test_browser_fast_mode_uses_relaxed_simd(runner):
    """Chromium has relaxed SIMD: fast mode runs on the relaxed module, says it
    fuses, meets |c - ref64| <= k 2^-24 sum|a b| + 1e-30 on a few products, and
    on a CPU with FMA gives the bits of the native FMA path."""
    groups = ["sweep"]
    native = {"header": hashes.header(groups),
              "lines": hashes.hash_lines(modes=["fast"], paths=[samebits.path()], threads=[1],
                                         groups=groups)}
    result = runner.run_page({"suites": "gemm", "modes": "fast", "groups": "sweep", "speed": 0},
                             native, timeout_s=300)
    _check_clean(result)
    assert result["fastLibrary"].endswith(f"/samebits/{RELAXED_NAME}"), result["fastLibraryNote"]
    assert result["fused"]["vec4"] is True and result["fastLibraryNote"] is None
    check = result["fastCheck"]
    assert check and check["ok"], f"fast-mode error bound broken in Chromium: {check}"
    assert check["fused"] is True and len(check["shapes"]) >= 3
    if "avx2" in samebits.paths():  # x86 with FMA3: V8 runs relaxed_madd as vfmadd
        from samebits import _selfcheck
        fma = _selfcheck.fast_check(path="avx2")
        assert [r["fast_sha256"] for r in check["shapes"]] == \
            [r["fast_sha256"] for r in fma["shapes"]]
        assert check["fast_differs"] > 0


def test_browser_fast_mode_falls_back(runner):
    """?relaxed=0 (SAMEBITS_WASM_RELAXED=0): fast mode on the plain module,
    unfused and within the bound; exact lines keep the native bits."""
    groups = ["sweep"]
    native = {"header": hashes.header(groups),
              "lines": hashes.hash_lines(modes=["exact"], paths=[samebits.path()], threads=[1],
                                         groups=groups)}
    result = runner.run_page({"suites": "gemm", "modes": "exact", "groups": "sweep", "speed": 0,
                              "relaxed": "0"}, native, timeout_s=300)
    _check_clean(result)
    assert result["ok"] is True and all(r["verdict"] == "match" for r in result["rows"])
    assert result["fastLibrary"] == result["library"]
    assert result["fused"]["vec4"] is False
    assert result["fastLibraryNote"] == "SAMEBITS_WASM_RELAXED=0"
    check = result["fastCheck"]
    assert check["ok"] and check["fast_differs"] == 0 and check["fused"] is False


def test_browser_notices_one_flipped_bit(runner):
    """Negative control: with ?flip=BIT each of the page's lines (gemm, conv
    and ops) is the native line of the same flipped output, and the page
    reports a mismatch (red) for each."""
    groups = ["sweep"]
    native = _native(groups=groups)
    flipped = _native(groups=groups, flip_bit=FLIP_BIT)["lines"]
    result = runner.run_page({"modes": "exact", "groups": ",".join(groups), "speed": 0,
                              "fastcheck": 0, "flip": FLIP_BIT}, native, timeout_s=300)
    _check_clean(result)
    assert result["flip"] == FLIP_BIT
    assert len(result["rows"]) == 3
    for row, flip_line, native_line in zip(result["rows"], flipped, native["lines"]):
        line = hashes.parse_line(row["line"])
        assert line.suite == hashes.parse_line(flip_line).suite == row["suite"]
        assert line.digest == hashes.parse_line(flip_line).digest, "the browser flipped another bit"
        assert line.digest != hashes.parse_line(native_line).digest
        assert row["verdict"] == "mismatch" and row["match"] is False
    assert result["ok"] is False


def test_bench_page_runs_every_library(runner):
    """web/bench.html times samebits (fast on the relaxed module, exact on the
    plain one), TF.js-wasm and onnxruntime-web on one thread, and every
    library computes the same products (probe outputs within 1e-3 sqrt(k));
    then the operators, against TF.js where it has them."""
    spec = importlib.util.spec_from_file_location("samebits_browser_bench",
                                                  ROOT / "bench" / "browser_bench.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    missing = [str(p.relative_to(ROOT)) for p in bench.PEERS.values() if not p.is_file()]
    if missing:
        message = f"the bench page needs {missing} (run: cd web && npm ci)"
        if os.environ.get("CI"):
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    ops = "erf-1e6,softmax-12288x128,layer_norm-12288x128"
    result = bench.run_page({"shapes": "sq64,m1", "ops": ops, "minms": 5, "reps": 1,
                             "warmup": 1}, timeout_s=300, log=lambda line: None)
    assert not result.get("error"), f"bench page error: {result['error']}\n{result['console']}"
    assert not result["blocked"], f"the bench page asked for remote URLs: {result['blocked']}"
    libs = {c["lib"] for c in result["cells"]}
    assert libs == {"samebits-fast", "samebits-exact", "tfjs", "ort"}
    assert len(result["cells"]) == 2 * len(libs)
    assert all(c["ms"] > 0 for c in result["cells"])
    info = result["info"]
    assert info["samebits"]["fast_library"] == RELAXED_NAME and info["samebits"]["fused"] is True
    assert info["tfjs"]["backend"] == "wasm" and info["tfjs"]["threads"] == 1
    assert info["tfjs"]["multithread"] is False
    assert bench.check_agreement(bench.best_cells([result])) == []
    # the operators: samebits in both modes, TF.js where it has the kernel
    op_cells = {(c["lib"], c["name"]) for c in result["opCells"]}
    assert op_cells == {(lib, name) for name in ops.split(",")
                        for lib in ("samebits-fast", "samebits-exact")} | {
        ("tfjs", "erf-1e6"), ("tfjs", "softmax-12288x128")}
    assert all(c["ms"] > 0 for c in result["opCells"])
    assert bench.check_named_agreement(bench.best_named_cells([result], "opCells"),
                                       bench.OP_TOLERANCE) == []


def test_browser_models_suite_matches_native(runner):
    """web/models.html runs the five reference networks with samebits.onnx in
    Pyodide in Chromium (model files built natively by web/make_models.py and
    served from 127.0.0.1): every exact digest equals the native and pinned
    one."""
    import json
    from model_digests import PINNED
    from samebits.onnx import suite
    manifest_path = ROOT / "web" / "out" / "models" / "models.json"
    if not manifest_path.is_file():
        message = "web/out/models is missing (run: python web/make_models.py)"
        if os.environ.get("CI"):
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    manifest = json.loads(manifest_path.read_text())
    result = runner.run_models_page(timeout_s=900)
    assert not result.get("error"), f"page error: {result['error']}\n{result['console']}"
    assert result["done"] and not result["blocked"], result["blocked"]
    assert result["header"] == suite.header()
    assert [r["line"].split()[1] for r in result["rows"]] == \
        [n["name"] for n in manifest["networks"]]
    for row in result["rows"]:
        name, mode, path, threads, digest = suite.parse_line(row["line"])
        assert (mode, path, threads) == ("exact", "vec4", 1)
        assert digest == suite.parse_line(row["native"])[4] == PINNED[name], row
    assert result["ok"]


def test_bench_page_times_a_network(runner):
    """web/bench.html with ?models=: samebits.onnx (both modes) and
    onnxruntime-web run the same reference network; outputs agree."""
    spec = importlib.util.spec_from_file_location("samebits_browser_bench",
                                                  ROOT / "bench" / "browser_bench.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    if not (ROOT / "web" / "out" / "models" / "mobilenet_v3_large.onnx").is_file():
        message = "web/out/models is missing (run: python web/make_models.py)"
        if os.environ.get("CI"):
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    result = bench.run_page({"shapes": "none", "ops": "none", "models": "mobilenet_v3_large",
                             "libs": "samebits,ort", "minms": 5, "reps": 1, "warmup": 1},
                            timeout_s=300, log=lambda line: None)
    assert not result.get("error"), f"bench page error: {result['error']}\n{result['console']}"
    assert not result["blocked"]
    cells = {(c["lib"], c["name"]) for c in result["modelCells"]}
    assert cells == {("samebits-fast", "mobilenet_v3_large"),
                     ("samebits-exact", "mobilenet_v3_large"), ("ort", "mobilenet_v3_large")}
    assert all(c["ms"] > 0 for c in result["modelCells"])
    assert bench.check_named_agreement(bench.best_named_cells([result], "modelCells"),
                                       bench.MODEL_TOLERANCE) == []


# A user's test module: exact samebits results over the suite's portable test
# values, checked by digest; it runs natively and in Pyodide (no numpy).
PLUGIN_USER_TEST = '''
import samebits
from samebits import _testdata


def _values(count, seed, shape):
    return memoryview(_testdata.float_buffer(count, seed, 8)).cast("B").cast("f", shape)


def test_exact_results(same_bits):
    a, b = _values(48 * 40, 11, (48, 40)), _values(40 * 24, 12, (40, 24))
    same_bits.check("matmul/48x40x24", samebits.matmul(a, b, mode="exact"))
    same_bits.check("softmax/48x40", samebits.softmax(a, mode="exact"))
    same_bits.check("sin/48x40", samebits.sin(a, mode="exact"))
'''


def _pywheels_or_skip():
    if not (ROOT / "web" / "out" / "pywheels" / "pywheels.json").is_file():
        message = "web/out/pywheels is missing (run: python web/fetch_pywheels.py)"
        if os.environ.get("CI"):
            pytest.fail(message, pytrace=False)
        pytest.skip(message)


def test_pytest_plugin_in_pyodide_against_a_native_golden_file(runner, tmp_path):
    """The same_bits fixture in Pyodide (pytest from its wheels, the plugin from
    the samebits wheel's entry point) passes against digests written natively,
    and a golden file with one wrong digest fails naming that array."""
    import json
    import subprocess
    import sys
    _pywheels_or_skip()
    (tmp_path / "test_user_bits.py").write_text(PLUGIN_USER_TEST)
    from test_testing import plugin_args
    native = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                             *plugin_args(), "--samebits-update",
                             str(tmp_path / "test_user_bits.py")],
                            capture_output=True, text=True, cwd=tmp_path)
    assert native.returncode == 0, native.stdout + native.stderr
    golden = json.loads((tmp_path / "same_bits.json").read_text())
    assert sorted(golden) == ["matmul/48x40x24", "sin/48x40", "softmax/48x40"]
    case = {"files": {"test_user_bits.py": PLUGIN_USER_TEST,
                      "same_bits.json": json.dumps(golden)}, "args": ["-q"]}
    result = runner.run_pytest_page(case)
    assert not result.get("error"), f"page error: {result['error']}\n{result['console']}"
    assert not result["blocked"], result["blocked"]
    assert result["exitCode"] == 0, result["output"]
    assert "1 passed" in result["output"]

    wrong = dict(golden, **{"softmax/48x40": "0" * 64})
    case["files"]["same_bits.json"] = json.dumps(wrong)
    result = runner.run_pytest_page(case)
    assert result["exitCode"] == 1, result["output"]
    assert "softmax/48x40: digest " in result["output"]
    assert "matmul/48x40x24: digest" not in result["output"]


# ---------------------------------------------------------------------------
# The npm package (js/) in Chromium: web/js-check.html runs its hash suites
# in a module worker, the threaded module on Web Workers.

def _js_package_or_skip():
    dist = ROOT / "js" / "dist"
    missing = [n for n in ("samebits-single.wasm", "samebits-threads.wasm",
                           "samebits-threads.worker.js") if not (dist / n).is_file()]
    if missing:
        message = f"the npm package tests need js/dist/{missing[0]}: run bash js/build.sh"
        if os.environ.get("CI"):
            pytest.fail(message, pytrace=False)
        pytest.skip(message)


def _native_js_lines() -> dict:
    return {"lines": [hashes.hash_lines(modes=["exact"], paths=["scalar"], threads=[1],
                                        suite=s)[0] for s in hashes.SUITES]}


def test_js_package_suites_match_native_at_1_2_4_workers(runner):
    """Cross-origin isolated: every suite at 1, 2 and 4 threads gives the native digest."""
    _js_package_or_skip()
    result = runner.run_js_check_page({"threads": "1,2,4"}, _native_js_lines())
    _check_clean(result)
    assert result["isolated"] is True and result["threadsNotes"] == []
    # Chromium has relaxed SIMD: the relaxed builds ran, their fast mode fusing
    assert [(m["threads"], m["threaded"], m["relaxedSimd"], m["fastModeFused"])
            for m in result["modules"]] == [(1, False, True, True), (2, True, True, True),
                                            (4, True, True, True)]
    assert [(r["suite"], r["threads"], r["threadsUsed"]) for r in result["rows"]] == [
        (s, t, t) for t in (1, 2, 4) for s in hashes.SUITES]
    lines = [hashes.parse_line(line) for line in result["lines"]]
    assert [(b.threads, b.path) for b in lines] == [(t, "vec4") for t in (1, 2, 4) for _ in range(3)]
    assert all(r["verdict"] == "match" for r in result["rows"]), result["rows"]
    assert result["ok"] is True


def test_js_package_models_suite_at_1_and_4_workers(runner, tmp_path):
    """The five reference networks through the npm package's loadModel (the
    C graph runtime in the module, no Pyodide) in Chromium, cross-origin
    isolated, at 1 and 4 threads: every exact digest is the pinned one (2
    threads run under Node, test_js.py; the hash suites run at 1, 2 and 4
    here: three counts of five networks took 150 s of make test's budget). The
    page also times a chain of 1,000 Adds on 16 floats at one thread: the
    runtime's cost per node in this engine, recorded, not asserted."""
    from model_digests import PINNED
    from samebits.onnx import suite
    _js_package_or_skip()
    manifest = ROOT / "web" / "out" / "models" / "models.json"
    if not manifest.is_file():
        message = "web/out/models is missing (run: python web/make_models.py)"
        if os.environ.get("CI"):
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    from test_core_runtime import add_chain
    chain = ROOT / "web" / "out" / "chain-1000.onnx"
    chain.write_bytes(add_chain(1000))
    names = [n["name"] for n in json.loads(manifest.read_text())["networks"]]
    result = runner.run_js_check_page({"threads": "1,4", "suites": "", "models": ",".join(names),
                                       "chain": "out/chain-1000.onnx", "chainNodes": 1000},
                                      {"lines": []}, timeout_s=2400)
    _check_clean(result)
    assert result["isolated"] is True
    got = {}
    for row in result["models"]:
        name, mode, path, threads, digest = suite.parse_line(row["line"])
        assert (mode, path, threads, row["threadsUsed"]) == ("exact", "vec4", row["threads"],
                                                             row["threads"]), row
        got[(name, threads)] = digest
    assert got == {(n, t): PINNED[n] for n in names for t in (1, 4)}
    assert [c["threads"] for c in result["chain"]] == [1, 4]
    print("chain of Adds in Chromium, us per node:", [round(c["usPerNode"], 3) for c in result["chain"]])
    assert all(c["usPerNode"] > 0 for c in result["chain"])


def test_js_package_falls_back_to_one_thread_without_isolation(runner):
    """Without COOP/COEP the page has no SharedArrayBuffer: init({threads: 2})
    runs one thread, says why, and the bits are still native."""
    _js_package_or_skip()
    result = runner.run_js_check_page({"threads": "2", "suites": "conv,ops"}, _native_js_lines(),
                                      isolated=False)
    _check_clean(result)
    assert result["isolated"] is False
    assert result["threadsNotes"] == [
        "one thread instead of 2: SharedArrayBuffer is not available in this environment"]
    assert [(r["suite"], r["threadsUsed"], r["verdict"]) for r in result["rows"]] == [
        ("conv", 1, "match"), ("ops", 1, "match")]
    assert result["ok"] is True


def test_js_check_page_notices_a_wrong_native_line(runner):
    """The negative control: a native digest with one changed digit is a mismatch."""
    _js_package_or_skip()
    native = _native_js_lines()
    conv = native["lines"][1]
    native["lines"][1] = conv[:-1] + ("0" if conv[-1] != "0" else "1")
    result = runner.run_js_check_page({"threads": "1", "suites": "conv"}, native)
    _check_clean(result)
    assert [r["verdict"] for r in result["rows"]] == ["MISMATCH"]
    assert result["ok"] is False


# ---------------------------------------------------------------------------
# The front page (web/home.html), driven as a person would.

def _home_state(page, timeout_ms=300_000, wait_for=None):
    if wait_for:
        page.wait_for_function(wait_for, timeout=timeout_ms)
    return page.evaluate("window.homeState")


def _run_home(page, timeout_ms=300_000):
    runs = page.evaluate("window.homeState.runs")
    page.click("#run")
    page.wait_for_function(f"window.homeState.runs > {runs} || window.homeState.error",
                           timeout=timeout_ms)
    state = page.evaluate("window.homeState")
    assert not state["error"], state["error"]
    return state


def test_home_page_as_a_person_uses_it(runner, tmp_path):
    """Pick a shape and 2 threads, run: the exact digest shown is the native
    one; paste it (match) and a wrong one (differs); drop .npy files and a
    golden file; a float64 file gets the astype hint; TF.js's speed shows."""
    _js_package_or_skip()
    from samebits.testing import digest, portable_values

    m, k, n = 48, 96, 40
    native = digest(samebits.matmul(portable_values((m, k), 1), portable_values((k, n), 2), mode="exact"))
    with runner.local_browser_page(viewport={"width": 1100, "height": 1400}) as local:
        page = local.page
        page.goto(f"{local.base}/", wait_until="load")
        assert page.url.endswith("/web/home.html")
        _home_state(page, wait_for="window.homeState.ready")
        assert "cross-origin isolated" in page.inner_text("#isolation")
        page.fill("#m", str(m))
        page.fill("#k", str(k))
        page.fill("#n", str(n))
        page.select_option("#threads", "2")
        state = _run_home(page)
        assert state["info"]["threads"] == 2 and state["info"]["threaded"] is True
        shown = {r["mode"]: r for r in state["results"]}
        assert shown["exact"]["digest"] == native
        table = page.inner_text("#results")
        assert native in table and "samebits fast" in table and "TF.js-wasm" in table
        assert state["tfjs"]["ms"] > 0
        assert f"portable_values(({m}, {k}), 1)" in page.inner_text("#snippet")
        page.fill("#native", native)
        assert page.evaluate("window.homeState.verdict") == "match"
        assert "same bits" in page.inner_text("#verdict")
        page.fill("#native", native[:-1] + ("0" if native[-1] != "0" else "1"))
        assert page.evaluate("window.homeState.verdict") == "differs"
        page.fill("#native", "")

        # .npy files: A from numpy, B from numpy; then a golden file with its entry.
        rng = np.random.default_rng(5)
        a = rng.standard_normal((33, 70)).astype(np.float32)
        b = rng.standard_normal((70, 21)).astype(np.float32)
        np.save(tmp_path / "a.npy", a)
        np.save(tmp_path / "b.npy", b)
        page.set_input_files("#fileA", str(tmp_path / "a.npy"))
        page.set_input_files("#fileB", str(tmp_path / "b.npy"))
        page.wait_for_function("window.homeState.inputs && window.homeState.inputs.b === 'b.npy'")
        assert page.input_value("#m") == "33" and page.input_value("#n") == "21"
        state = _run_home(page)
        npy_digest = digest(samebits.matmul(a, b, mode="exact"))
        assert {r["mode"]: r for r in state["results"]}["exact"]["digest"] == npy_digest
        assert 'np.load("a.npy")' in page.inner_text("#snippet")
        key = "matmul/a.npy-33x70x21"
        golden = tmp_path / "same_bits.json"
        golden.write_text(json.dumps({"other": "0" * 64, key: npy_digest}))
        page.set_input_files("#golden", str(golden))
        page.wait_for_function("window.homeState.verdict === 'match'")
        assert key in page.inner_text("#verdict")
        screenshot = ROOT / "web" / "out" / "home.png"
        screenshot.parent.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(screenshot), full_page=True)
        assert screenshot.stat().st_size > 20_000

        # A float64 file is refused with the conversion to make.
        np.save(tmp_path / "wide.npy", a.astype(np.float64))
        page.set_input_files("#fileA", str(tmp_path / "wide.npy"))
        page.wait_for_function("window.homeState.error")
        assert "a.astype(np.float32)" in page.inner_text("#status")
        # An A whose columns do not match B's rows is refused, naming both shapes.
        np.save(tmp_path / "c.npy", rng.standard_normal((33, 71)).astype(np.float32))
        page.set_input_files("#fileA", str(tmp_path / "c.npy"))
        page.wait_for_function("(window.homeState.error || '').includes('columns')")
        assert "c.npy: A is 33 x 71 but B is 70 x 21: A's columns must equal B's rows" in \
            page.inner_text("#status")
    assert not local.blocked and not [c for c in local.console if "error" in c.lower()], \
        (local.blocked, local.console)


def test_home_page_without_isolation_says_one_thread(runner):
    _js_package_or_skip()
    with runner.local_browser_page(isolated=False) as local:
        page = local.page
        page.goto(f"{local.base}/web/home.html", wait_until="load")
        _home_state(page, wait_for="window.homeState.ready")
        assert "not cross-origin isolated" in page.inner_text("#isolation")
        page.fill("#m", "16")
        page.uncheck("#withTfjs")
        page.select_option("#threads", "2")
        state = _run_home(page)
        assert state["info"]["threads"] == 1 and state["info"]["threadsNote"].startswith(
            "one thread instead of 2")
        assert "one thread instead of 2" in page.inner_text("#status") or \
            state["info"]["threadsNote"]


def test_js_bench_page_times_every_library_at_two_threads(runner):
    """web/js-bench.html (bench/js_bench.py's page), tiny settings: every
    library gives a cell at 2 threads, TF.js's threaded binary really runs 2
    threads, and every output agrees with samebits exact (no speed asserted)."""
    _js_package_or_skip()
    import sys
    sys.path.insert(0, str(ROOT / "bench"))
    import js_bench
    result = js_bench.run_page({"threads": 2, "shapes": "sq64,m1", "minms": 5, "reps": 1,
                                "warmup": 1}, 300, lambda s: None)
    assert not result["error"] and not result["blocked"], result
    assert result["crossOriginIsolated"] is True
    assert result["info"]["tfjs"]["threads"] == 2 and result["info"]["ort"]["numThreads"] == 2
    assert result["info"]["samebits"]["threads"] == 2
    libs = sorted({(c["lib"], c["threads"], c["m"]) for c in result["cells"]})
    assert libs == sorted((lib, 2, m) for lib in ("samebits-fast", "samebits-exact", "tfjs", "ort")
                          for m in (64, 1))
    best = js_bench.best_cells([result])
    assert js_bench.check_agreement(best) == []
