"""The WebAssembly build under Node: Pyodide from npm, the samebits wheel, the
exact hash suite, compared line by line with the native library.

Needs `bash wasm/build.sh`, `npm ci` in web/ and node; builds nothing itself.
Where something is missing the tests skip, except under CI (env CI set),
where they fail and say what to run.
"""
from __future__ import annotations

import base64
import csv
import hashlib
import io
import json
import os
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest

import samebits
from samebits import hashes

pytestmark = pytest.mark.node

ROOT = Path(__file__).resolve().parent.parent
WHEEL_JSON = ROOT / "wasm" / "out" / "wheel.json"
PYODIDE_DIR = ROOT / "web" / "node_modules" / "pyodide"
SCRIPT = ROOT / "wasm" / "node_hashes.mjs"


def _missing() -> list[str]:
    missing = []
    if shutil.which("node") is None:
        missing.append("node (apt-get install nodejs)")
    if not (PYODIDE_DIR / "pyodide.mjs").is_file():
        missing.append("web/node_modules/pyodide (run: cd web && npm ci)")
    if not WHEEL_JSON.is_file():
        missing.append("wasm/out/wheel.json and the wheel (run: bash wasm/build.sh)")
    elif not (WHEEL_JSON.parent / json.loads(WHEEL_JSON.read_text())["wheel"]).is_file():
        missing.append("the wheel named in wasm/out/wheel.json (run: bash wasm/build.sh)")
    return missing


@pytest.fixture(scope="module")
def prerequisites() -> None:
    missing = _missing()
    if missing:
        message = "the wasm tests need: " + "; ".join(missing)
        if os.environ.get("CI"):
            pytest.fail(message, pytrace=False)
        pytest.skip(message)


def _wheel() -> Path:
    return WHEEL_JSON.parent / json.loads(WHEEL_JSON.read_text())["wheel"]


def _node(*args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    proc = subprocess.run(["node", str(SCRIPT), *args], cwd=str(ROOT), capture_output=True,
                          text=True, timeout=timeout)
    assert proc.returncode == 0, f"node {SCRIPT.name} failed:\n{proc.stdout}\n{proc.stderr}"
    return proc


def test_wheel_is_well_formed(prerequisites):
    """Its name carries the pinned Pyodide's tags, RECORD lists every file with
    its sha256, and the library is a side module in the package folder."""
    wheel = _wheel()
    info = json.loads((PYODIDE_DIR / "pyodide-lock.json").read_text())["info"]
    major, minor = info["python"].split(".")[:2]
    series = "pyemscripten" if int(info["abi_version"].split("_")[0]) >= 2026 else "pyodide"
    tag = f"cp{major}{minor}-cp{major}{minor}-{series}_{info['abi_version']}_wasm32"
    assert wheel.name == f"samebits-{samebits.__version__}-{tag}.whl"
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        dist_info = f"samebits-{samebits.__version__}.dist-info"
        assert {f"{dist_info}/{n}" for n in ("METADATA", "WHEEL", "RECORD")} <= names
        assert f"Tag: {tag}" in zf.read(f"{dist_info}/WHEEL").decode().splitlines()
        metadata = zf.read(f"{dist_info}/METADATA").decode()
        assert "Name: samebits" in metadata and f"Version: {samebits.__version__}" in metadata
        rows = list(csv.reader(io.StringIO(zf.read(f"{dist_info}/RECORD").decode())))
        recorded = {row[0] for row in rows}
        assert recorded == names
        for name, digest, size in rows:
            if name.endswith("/RECORD"):
                continue
            data = zf.read(name)
            expected = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
            assert digest == "sha256=" + expected.decode() and int(size) == len(data), name
        library = zf.read("samebits/libsamebits.so")
        assert library[:4] == b"\0asm" and b"dylink" in library[:64]
        package = ROOT / "py" / "samebits"
        for source in package.glob("*.py"):
            name = f"samebits/{source.name}"
            assert name in names, f"{source.name} is not in the wheel (rebuild: bash wasm/build.sh)"
            assert zf.read(name) == source.read_bytes(), (
                f"the wheel's {source.name} is stale (rebuild: bash wasm/build.sh)")


def test_node_exact_suite_matches_native(prerequisites):
    """The full exact suite in wasm (vec4 on SIMD128, one thread) has the
    native bits."""
    proc = _node("--modes", "exact", "--info")
    out = proc.stdout.splitlines()
    info = json.loads(next(l for l in out if l.startswith("# info "))[len("# info "):])
    assert info["platform"] == "emscripten" and info["machine"] == "wasm32"
    assert "vec4" in info["paths"] and info["threading"] is False
    assert info["library"].endswith("site-packages/samebits/libsamebits.so")

    header = next(l for l in out if l.startswith("# samebits"))
    wasm_lines = [l for l in out if l and not l.startswith("#")]
    assert header == hashes.header()
    assert len(wasm_lines) == 1
    native_lines = hashes.hash_lines(modes=["exact"], paths=[samebits.path()], threads=[1])
    mode, path, threads, digest = hashes.parse_line(wasm_lines[0])
    assert (mode, path, threads) == ("exact", "vec4", 1)
    native_digest = hashes.parse_line(native_lines[0])[3]
    assert digest == native_digest, (
        f"wasm under Node: {wasm_lines[0]}\nnative:          {native_lines[0]}")
