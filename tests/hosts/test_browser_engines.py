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

ROOT = Path(__file__).resolve().parents[2]
RELAXED_NAME = "libsamebits-relaxed.wasm"
FLIP_BIT = 7


def _load(name: str):
    sys.path.insert(0, str(ROOT / "web"))
    spec = importlib.util.spec_from_file_location(f"samebits_{name}", ROOT / "web" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module", params=["firefox", "webkit"])
def engine(request):
    """(engine name, web/engines.py) where the engine and the page's files are here."""
    engines, page = _load("engines"), _load("run_browser")
    missing = engines.missing_prerequisites(request.param) + [
        m for m in page.missing_prerequisites() if "Chromium" not in m and "Playwright" not in m]
    if missing:
        message = f"the {request.param} tests need: " + "; ".join(missing)
        if os.environ.get("CI"):
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    return request.param, engines


def _native(groups=hashes.GROUPS, suites=hashes.SUITES, modes=("exact",), flip_bit=None):
    return {"headers": {s: hashes.header(groups, s) for s in suites},
            "lines": [line for s in suites
                      for line in hashes.hash_lines(modes=list(modes), paths=[samebits.path()],
                                                    threads=[1], groups=groups, suite=s,
                                                    flip_bit=flip_bit)]}


def _run(engine, query: dict, native: dict, timeout_s: float = 600) -> dict:
    import json
    from urllib.parse import urlencode
    name, engines = engine
    extra = {"/native-lines.json": (json.dumps(native).encode(), "application/json")}
    query = {**query, "native": "/native-lines.json"}
    result = engines.run_until_done(name, f"index.html?{urlencode(query)}", "samebitsResult",
                                    timeout_s, extra)
    assert not result.get("error"), f"{name}: page error: {result['error']}\n{result['console']}"
    assert result["done"]
    assert not result["blocked"], f"{name}: the page asked for remote URLs: {result['blocked']}"
    return result


def test_exact_suites_match_native(engine):
    """Every exact line computed in the engine (every suite in full: gemm,
    conv and ops) equals the native one, and the page says OK."""
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
    print(f"\n{result['browser_version']}: " + "; ".join(result["lines"]))


def test_fast_mode_module_and_error_bound(engine):
    """Fast mode loads the relaxed-SIMD module where the engine compiles it
    (then it fuses; on an x86 CPU with FMA its products have the native FMA
    path's bits, as in Chromium) and the plain module with the compile
    error as its note where it does not; either way the products meet the
    fast-mode bound |c - ref64| <= k 2^-24 sum|a b| + 1e-30, and the exact
    lines keep the native bits."""
    groups = ["sweep"]
    native = _native(groups, suites=("gemm",), modes=("exact",))
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
    native = _native(groups, suites=("gemm",))
    result = _run(engine, {"suites": "gemm", "modes": "exact", "groups": "sweep", "speed": 0,
                           "flip": FLIP_BIT}, native, timeout_s=300)
    flipped = hashes.hash_lines(modes=["exact"], paths=[samebits.path()], threads=[1],
                                groups=groups, flip_bit=FLIP_BIT)
    assert hashes.parse_line(result["lines"][0]).digest == hashes.parse_line(flipped[0]).digest
    assert result["ok"] is False and result["rows"][0]["verdict"] != "match"
