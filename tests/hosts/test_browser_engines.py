"""The WebAssembly build in Firefox (SpiderMonkey) and WebKit (JavaScriptCore),
beside test_browser.py's Chromium (V8): the same page (web/index.html: the
gemm, conv and ops hash suites through Pyodide and the samebits wheel) must
give the native exact bits in every engine; fast mode runs on whichever
module the engine can compile (relaxed SIMD, or the plain one with a note)
and meets the fast-mode error bound; a flipped bit is noticed.

Needs `bash wasm/build.sh`, `npm ci` in web/ and Debian's firefox-esr,
webkit2gtk-driver and xvfb with selenium from PyPI (`make deps`); builds
nothing itself. Where something is missing the tests skip, except under CI
(env CI set), where they fail and say what to run.
"""
from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import pytest

import samebits
from samebits import hashes

pytestmark = pytest.mark.browser

# Chromium's test module's helpers: the native hash lines, and the npm package's check
from test_browser import _js_package_or_skip, _native  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
RELAXED_NAME = "libsamebits-relaxed.wasm"
FLIP_BIT = 7


def _load(name: str):
    sys.path.insert(0, str(ROOT / "web"))
    spec = importlib.util.spec_from_file_location(f"samebits_{name}", ROOT / "web" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _engine(request):
    engines, page = _load("engines"), _load("run_browser")
    missing = engines.missing_prerequisites(request.param) + [
        m for m in page.missing_prerequisites() if "Chromium" not in m and "Playwright" not in m]
    missing = list(dict.fromkeys(missing))
    if missing:
        message = f"the {request.param} tests need: " + "; ".join(missing)
        if os.environ.get("CI"):
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    return request.param, engines


@pytest.fixture(scope="module", params=["firefox", "webkit"])
def engine(request):
    """(engine name, web/engines.py) where the engine and the page's files are here."""
    return _engine(request)


@pytest.fixture(scope="module", params=["chromium", "firefox", "webkit"])
def any_engine(request):
    """Each of the three engines through the one runner (web/engines.py)."""
    return _engine(request)


@pytest.fixture(scope="module", params=["firefox", "webkit", "webkit-sab"])
def threads_engine(request):
    """engine, and WebKit with JavaScriptCore's SharedArrayBuffer on as Safari
    has it (web/engines.py: webkit-sab), for the threaded module."""
    return _engine(request)


def _run_page(engine, page: str, result_name: str, query: dict, extra: dict | None = None,
              timeout_s: float = 600, isolated: bool = True) -> dict:
    from urllib.parse import urlencode
    name, engines = engine
    result = engines.run_until_done(name, f"{page}?{urlencode(query)}", result_name, timeout_s,
                                    extra, isolated)
    assert not result.get("error"), f"{name}: page error: {result['error']}\n{result['console']}"
    assert result["done"]
    assert not result["blocked"], f"{name}: the page asked for remote URLs: {result['blocked']}"
    return result


def _run(engine, query: dict, native: dict, timeout_s: float = 600) -> dict:
    """web/index.html (the hash suites through Pyodide) with these native lines."""
    import json
    extra = {"/native-lines.json": (json.dumps(native).encode(), "application/json")}
    return _run_page(engine, "index.html", "samebitsResult",
                     {**query, "native": "/native-lines.json"}, extra, timeout_s)


def test_exact_suites_match_native(any_engine):
    """Every exact line computed in the engine (every suite in full: gemm,
    conv and ops) equals the native one, and the page says OK: the three
    engines through one runner, each result naming its engine and version."""
    engine = any_engine
    native = _native()
    result = _run(engine, {"modes": "exact", "speed": 0}, native)
    assert result["headers"] == native["headers"]
    natives = {hashes.parse_line(line).suite: line for line in native["lines"]}
    exact = [hashes.parse_line(line) for line in result["lines"]]
    assert [(b.suite, b.mode, b.path, b.threads) for b in exact] == [
        ("gemm", "exact", "vec4", 1), ("conv", "exact", "vec4", 1), ("ops", "exact", "vec4", 1)]
    for line, b in zip(result["lines"], exact):
        assert b.digest == hashes.parse_line(natives[b.suite]).digest, (
            f"{result['browser_version']}: {line}\nnative: {natives[b.suite]}")
    assert all(row["verdict"] == "match" for row in result["rows"])
    assert result["ok"] is True
    assert result["engine"] == engine[0] and result["browser_version"]
    print(f"\n{result['browser_version']}: " + "; ".join(result["lines"]))


def test_fast_mode_module_and_error_bound(engine):
    """Fast mode loads the relaxed-SIMD module where the engine compiles it
    (then it fuses; on an x86 CPU with FMA its products have the native FMA
    path's bits, as in Chromium) and the plain module with the compile
    error as its note where it does not; either way the products meet the
    fast-mode bound |c - ref64| <= k 2^-24 sum|a b| + 1e-30, and the exact
    lines keep the native bits."""
    groups = ["sweep"]
    native = _native(groups=groups, suites=("gemm",), modes=("exact",))
    result = _run(engine, {"suites": "gemm", "modes": "exact,fast", "groups": "sweep",
                           "speed": 0}, native, timeout_s=300)
    exact_rows = [r for r in result["rows"] if r["mode"] == "exact"]
    assert exact_rows and all(r["verdict"] == "match" for r in exact_rows)
    check = result["fastCheck"]
    assert check and check["ok"], f"fast-mode error bound broken in {engine[0]}: {check}"
    relaxed = result["fastLibrary"].endswith(f"/samebits/{RELAXED_NAME}")
    if relaxed:
        assert result["fused"]["vec4"] is True and result["fastLibraryNote"] is None
        assert check["fused"] is True
        if "avx2" in samebits.paths():
            from samebits import _selfcheck
            fma = _selfcheck.fast_check(path="avx2")
            assert [r["fast_sha256"] for r in check["shapes"]] == \
                [r["fast_sha256"] for r in fma["shapes"]]
    else:
        assert result["fastLibrary"] == result["library"]
        assert result["fused"]["vec4"] is False and check["fused"] is False
        note = result["fastLibraryNote"] or ""
        assert RELAXED_NAME in note and "relaxed" in note.lower(), note
        assert check["fast_differs"] == 0
    print(f"\n{result['browser_version']}: fast mode on "
          f"{'the relaxed-SIMD module' if relaxed else 'the plain module'}")


def test_notices_one_flipped_bit(engine):
    """Negative control: with ?flip=BIT the page's line is the native line of
    the same flipped output, and the page reports the mismatch."""
    groups = ["sweep"]
    native = _native(groups=groups, suites=("gemm",))
    result = _run(engine, {"suites": "gemm", "modes": "exact", "groups": "sweep", "speed": 0,
                           "flip": FLIP_BIT}, native, timeout_s=300)
    flipped = hashes.hash_lines(modes=["exact"], paths=[samebits.path()], threads=[1],
                                groups=groups, flip_bit=FLIP_BIT)
    assert hashes.parse_line(result["lines"][0]).digest == hashes.parse_line(flipped[0]).digest
    assert result["ok"] is False and result["rows"][0]["verdict"] != "match"


def _models_or_skip() -> list[str]:
    import json
    manifest = ROOT / "web" / "out" / "models" / "models.json"
    if not manifest.is_file():
        message = "web/out/models is missing (run: python web/make_models.py)"
        if os.environ.get("CI"):
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    return [n["name"] for n in json.loads(manifest.read_text())["networks"]]


def test_models_suite_matches_native(engine):
    """web/models.html: the five reference networks with samebits.onnx in
    Pyodide in the engine: every exact digest equals the native and pinned
    one."""
    from model_digests import PINNED
    from samebits.onnx import suite
    names = _models_or_skip()
    result = _run_page(engine, "models.html", "modelsResult", {}, timeout_s=1200)
    assert result["header"] == suite.header()
    assert [r["line"].split()[1] for r in result["rows"]] == names
    for row in result["rows"]:
        name, mode, path, threads, digest = suite.parse_line(row["line"])
        assert (mode, path, threads) == ("exact", "vec4", 1)
        assert digest == suite.parse_line(row["native"])[4] == PINNED[name], row
    assert result["ok"]
    print(f"\n{result['browser_version']}: " + "; ".join(r["line"] for r in result["rows"]))


# Firefox gives SharedArrayBuffer to a cross-origin isolated page; WebKitGTK
# 2.50 does not (crossOriginIsolated is true, SharedArrayBuffer undefined).
THREADED = {"firefox": True, "webkit": False, "webkit-sab": True}
RELAXED = {"firefox": True, "webkit": False, "webkit-sab": False}   # relaxed SIMD compiles


def test_js_package_suites_match_native(threads_engine):
    """The npm package's hash suites (web/js-check.html, in a module worker)
    at 1, 2 and 4 threads: on Web Workers where the engine gives
    SharedArrayBuffer (Firefox; WebKit with JavaScriptCore's option on),
    else one thread with the package's note (WebKitGTK as shipped); the
    relaxed-SIMD build where the engine compiles it; every digest native."""
    engine = threads_engine
    import json
    _js_package_or_skip()
    native = {"lines": [hashes.hash_lines(modes=["exact"], paths=["scalar"], threads=[1],
                                          suite=s)[0] for s in hashes.SUITES]}
    extra = {"/native-js.json": (json.dumps(native).encode(), "application/json")}
    result = _run_page(engine, "js-check.html", "jsCheckResult",
                       {"threads": "1,2,4", "native": "/native-js.json"}, extra)
    threaded, relaxed = THREADED[engine[0]], RELAXED[engine[0]]
    if threaded:
        assert result["threadsNotes"] == []
    else:
        assert result["threadsNotes"] == [
            f"one thread instead of {t}: SharedArrayBuffer is not available in this environment"
            for t in (2, 4)]
    assert [(m["threads"], m["threaded"], m["relaxedSimd"], m["fastModeFused"])
            for m in result["modules"]] == \
        [(t if threaded else 1, threaded and t > 1, relaxed, relaxed) for t in (1, 2, 4)]
    assert [(r["suite"], r["threads"], r["threadsUsed"]) for r in result["rows"]] == [
        (s, t, t if threaded else 1) for t in (1, 2, 4) for s in hashes.SUITES]
    assert all(r["verdict"] == "match" for r in result["rows"]), result["rows"]
    assert result["ok"] is True
    print(f"\n{result['browser_version']}: " + "; ".join(result["lines"]))


def test_js_package_models_suite(engine):
    """The five reference networks through the npm package's loadModel (the
    C graph runtime in the module, no Pyodide) at 1 thread, and at 4 where
    the engine has SharedArrayBuffer: every exact digest is the pinned one."""
    from model_digests import PINNED
    from samebits.onnx import suite
    _js_package_or_skip()
    names = _models_or_skip()
    counts = (1, 4) if THREADED[engine[0]] else (1,)
    result = _run_page(engine, "js-check.html", "jsCheckResult",
                       {"threads": ",".join(map(str, counts)), "suites": "",
                        "models": ",".join(names)}, timeout_s=2400)
    got = {}
    for row in result["models"]:
        name, mode, path, threads, digest = suite.parse_line(row["line"])
        assert (mode, path, threads, row["threadsUsed"]) == ("exact", "vec4", row["threads"],
                                                             row["threads"]), row
        got[(name, threads)] = digest
    assert got == {(n, t): PINNED[n] for n in names for t in counts}


def test_pytest_plugin_page(engine, tmp_path):
    """The same_bits fixture in Pyodide in the engine (web/pytest.html)
    passes against digests written natively, and fails naming the array
    whose golden digest is wrong."""
    import json
    import subprocess
    from test_browser import PLUGIN_USER_TEST, _pywheels_or_skip
    from test_testing import plugin_args
    _pywheels_or_skip()
    (tmp_path / "test_user_bits.py").write_text(PLUGIN_USER_TEST)
    native = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                             *plugin_args(), "--samebits-update",
                             str(tmp_path / "test_user_bits.py")],
                            capture_output=True, text=True, cwd=tmp_path)
    assert native.returncode == 0, native.stdout + native.stderr
    golden = json.loads((tmp_path / "same_bits.json").read_text())
    for digests, code in ((golden, 0), (dict(golden, **{"softmax/48x40": "0" * 64}), 1)):
        case = {"files": {"test_user_bits.py": PLUGIN_USER_TEST,
                          "same_bits.json": json.dumps(digests)}, "args": ["-q"]}
        extra = {"/pytest-case.json": (json.dumps(case).encode(), "application/json")}
        result = _run_page(engine, "pytest.html", "pytestResult", {"case": "/pytest-case.json"},
                           extra, timeout_s=300)
        assert result["exitCode"] == code, result["output"]
        if code == 0:
            assert "1 passed" in result["output"]
        else:
            assert "softmax/48x40: digest " in result["output"]
            assert "matmul/48x40x24: digest" not in result["output"]


def test_bench_page_runs_every_library(engine):
    """web/bench.html in the engine (bench/browser_bench.py --engine): samebits
    in both modes (fast on the module the engine compiles), TF.js-wasm and
    onnxruntime-web time the same products on one thread and agree (probe
    outputs within 1e-3 sqrt(k)); then operators, against TF.js where it has
    them. Times are recorded, not asserted."""
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
    ops = "erf-1e6,softmax-12288x128"
    result = bench.run_page({"shapes": "sq64,m1", "ops": ops, "minms": 5, "reps": 1,
                             "warmup": 1}, timeout_s=300, log=lambda line: None, engine=engine[0])
    assert not result.get("error"), f"bench page error: {result['error']}\n{result['console']}"
    assert not result["blocked"], f"the bench page asked for remote URLs: {result['blocked']}"
    libs = {c["lib"] for c in result["cells"]}
    assert libs == {"samebits-fast", "samebits-exact", "tfjs", "ort"}
    assert len(result["cells"]) == 2 * len(libs) and all(c["ms"] > 0 for c in result["cells"])
    info = result["info"]
    assert (info["samebits"]["fast_library"] == RELAXED_NAME) is RELAXED[engine[0]]
    assert info["samebits"]["fused"] is RELAXED[engine[0]]
    assert info["tfjs"]["backend"] == "wasm" and info["tfjs"]["threads"] == 1
    assert bench.check_agreement(bench.best_cells([result])) == []
    op_cells = {(c["lib"], c["name"]) for c in result["opCells"]}
    assert op_cells == {(lib, name) for name in ops.split(",")
                        for lib in ("samebits-fast", "samebits-exact")} | {
        ("tfjs", "erf-1e6"), ("tfjs", "softmax-12288x128")}
    assert bench.check_named_agreement(bench.best_named_cells([result], "opCells"),
                                       bench.OP_TOLERANCE) == []


def test_home_page_as_a_person_uses_it(engine, tmp_path):
    """The front page (web/home.html) in the engine, driven as a person would
    (web/engine_pages.py: typing, picking, clicking, choosing files): pick a
    shape and 2 threads and run: the exact digest shown is the native one,
    on 2 Web Workers where the engine gives SharedArrayBuffer and on one
    thread with the reason shown where it does not; paste it (match) and a
    wrong one (differs); choose .npy files and a golden file; a float64 file
    gets the astype hint. A screenshot of each engine: web/out/home-<engine>.png."""
    import json
    import numpy as np
    from samebits.testing import digest, portable_values
    _js_package_or_skip()
    name, engines = engine
    pages = _load("engine_pages")
    m, k, n = 48, 96, 40
    native = digest(samebits.matmul(portable_values((m, k), 1), portable_values((k, n), 2),
                                    mode="exact"))

    def run(page):
        runs = page.evaluate("window.homeState.runs")
        started = f"window.homeState.running || window.homeState.runs > {runs} || " \
                  "window.homeState.error"
        page.click("#run")
        try:   # as a person would: click again when the first click did not take
            page.wait_for(started, timeout_s=20)
        except TimeoutError:
            page.click("#run")
        try:
            page.wait_for(f"window.homeState.runs > {runs} || window.homeState.error")
        except TimeoutError as e:
            raise TimeoutError(f"{e}; the page shows: {page.inner_text('#status')!r}, state "
                               f"{page.evaluate('window.homeState')}") from None
        state = page.evaluate("window.homeState")
        assert not state["error"], state["error"]
        return state

    with pages.open_page(name) as (page, base, mailbox):
        page.goto(f"{base}/")
        page.wait_for("window.homeState && window.homeState.ready")
        isolation = page.inner_text("#isolation")
        if THREADED[name]:
            assert "cross-origin isolated: up to" in isolation, isolation
        else:
            assert "no SharedArrayBuffer" in isolation, isolation
        page.fill("#m", str(m))
        page.fill("#k", str(k))
        page.fill("#n", str(n))
        page.select_option("#threads", "2")
        state = run(page)
        info = state["info"]
        if THREADED[name]:
            assert info["threads"] == 2 and info["threaded"] is True
        else:
            assert info["threads"] == 1 and info["threadsNote"].startswith("one thread instead of 2")
        assert info["relaxedSimd"] is RELAXED[name]
        assert {r["mode"]: r for r in state["results"]}["exact"]["digest"] == native
        table = page.inner_text("#results")
        assert native in table and "samebits fast" in table and "TF.js-wasm" in table
        assert f"portable_values(({m}, {k}), 1)" in page.inner_text("#snippet")
        page.fill("#native", native)
        page.wait_for("window.homeState.verdict === 'match'")
        assert "same bits" in page.inner_text("#verdict")
        page.fill("#native", native[:-1] + ("0" if native[-1] != "0" else "1"))
        page.wait_for("window.homeState.verdict === 'differs'")
        page.fill("#native", "")

        rng = np.random.default_rng(5)
        a = rng.standard_normal((33, 70)).astype(np.float32)
        b = rng.standard_normal((70, 21)).astype(np.float32)
        np.save(tmp_path / "a.npy", a)
        np.save(tmp_path / "b.npy", b)
        page.set_input_files("#fileA", str(tmp_path / "a.npy"))
        page.set_input_files("#fileB", str(tmp_path / "b.npy"))
        page.wait_for("window.homeState.inputs && window.homeState.inputs.b === 'b.npy'")
        assert page.input_value("#m") == "33" and page.input_value("#n") == "21"
        state = run(page)
        npy_digest = digest(samebits.matmul(a, b, mode="exact"))
        assert {r["mode"]: r for r in state["results"]}["exact"]["digest"] == npy_digest
        key = "matmul/a.npy-33x70x21"
        golden = tmp_path / "same_bits.json"
        golden.write_text(json.dumps({"other": "0" * 64, key: npy_digest}))
        page.set_input_files("#golden", str(golden))
        page.wait_for("window.homeState.verdict === 'match'")
        assert key in page.inner_text("#verdict")
        screenshot = ROOT / "web" / "out" / f"home-{name}.png"
        screenshot.parent.mkdir(parents=True, exist_ok=True)
        page.screenshot(screenshot)
        assert screenshot.stat().st_size > 20_000

        np.save(tmp_path / "wide.npy", a.astype(np.float64))
        page.set_input_files("#fileA", str(tmp_path / "wide.npy"))
        page.wait_for("window.homeState.error")
        assert "a.astype(np.float32)" in page.inner_text("#status")
    blocked = [url for url in mailbox.blocked if not engines._browser_service(url)]
    assert not blocked, f"the page asked for remote URLs: {blocked}"
