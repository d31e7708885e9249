"""The WebAssembly build in Chromium: the page web/index.html runs the hash
suite through Pyodide and the samebits wheel, and its exact lines must have
the native bits; with ?flip= the page must report the flipped bit.

Needs `bash wasm/build.sh`, `npm ci` in web/, `pip install playwright` and
Debian's /usr/bin/chromium; builds nothing itself. Where something is missing
the tests skip, except under CI (env CI set), where they fail and say what to
run.
"""
from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

import samebits
from samebits import hashes

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parent.parent
FLIP_BIT = 7


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


def test_browser_exact_suite_matches_native(runner):
    """Every exact line computed in Chromium (full suite) equals the native one."""
    native_lines = hashes.hash_lines(modes=["exact"], paths=[samebits.path()], threads=[1])
    native = {"header": hashes.header(), "lines": native_lines}
    result = runner.run_page({"modes": "exact", "speed": 256}, native, timeout_s=600)
    _check_clean(result)
    assert result["header"] == hashes.header()
    exact = [line for line in result["lines"] if hashes.parse_line(line)[0] == "exact"]
    assert exact, f"the page printed no exact line: {result['lines']}"
    native_digest = hashes.parse_line(native_lines[0])[3]
    for line in exact:
        assert hashes.parse_line(line)[3] == native_digest, (
            f"Chromium: {line}\nnative:   {native_lines[0]}")
    assert all(row["verdict"] == "match" for row in result["rows"])
    assert result["ok"] is True
    assert result["speed"] and result["speed"]["seconds"]["exact"] > 0


def test_browser_notices_one_flipped_bit(runner):
    """Negative control: with ?flip=BIT the page's line is the native line of
    the same flipped output, and the page reports a mismatch (red)."""
    groups = ["sweep"]
    native_lines = hashes.hash_lines(modes=["exact"], paths=[samebits.path()], threads=[1],
                                     groups=groups)
    flipped = hashes.hash_lines(modes=["exact"], paths=[samebits.path()], threads=[1],
                                groups=groups, flip_bit=FLIP_BIT)
    native = {"header": hashes.header(groups), "lines": native_lines}
    result = runner.run_page({"modes": "exact", "groups": ",".join(groups), "speed": 0,
                              "flip": FLIP_BIT}, native, timeout_s=300)
    _check_clean(result)
    assert result["flip"] == FLIP_BIT
    assert len(result["rows"]) == 1
    row = result["rows"][0]
    digest = hashes.parse_line(row["line"])[3]
    assert digest == hashes.parse_line(flipped[0])[3], "the browser flipped another bit"
    assert digest != hashes.parse_line(native_lines[0])[3]
    assert row["verdict"] == "mismatch" and row["match"] is False
    assert result["ok"] is False
