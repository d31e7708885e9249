"""The npm package (js/) under Node: its standalone WebAssembly modules give
the native exact bits (the three hash suites at 1, 2 and 4 threads, and a
set of API calls made both through the JavaScript and the Python API), its
arguments are checked, and `npm pack` gives a tarball that installs and runs
in a scratch project.

Needs `bash js/build.sh` and node; builds nothing itself. Where something is
missing the tests skip, except under CI (env CI set), where they fail and
say what to run.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pytest

import samebits
from samebits import _testdata, hashes
from samebits.testing import digest, portable_values

pytestmark = pytest.mark.node

ROOT = Path(__file__).resolve().parents[2]
JS = ROOT / "js"
DIST = JS / "dist"
RUN_CALLS = JS / "test" / "run_calls.mjs"
RUN_HASHES = JS / "test" / "run_hashes.mjs"
# Node 20's V8 validates relaxed SIMD only behind this flag (Chromium has it on).
RELAXED_FLAG = "--experimental-wasm-relaxed-simd"
MODULES = ("samebits-single", "samebits-threads", "samebits-single-relaxed",
           "samebits-threads-relaxed")


def _missing() -> list[str]:
    missing = []
    if shutil.which("node") is None:
        missing.append("node (apt-get install nodejs)")
    names = [f"{m}.{ext}" for m in MODULES for ext in ("mjs", "wasm")] + [
        "samebits-threads.worker.js", "samebits-threads-relaxed.worker.js"]
    for name in names:
        if not (DIST / name).is_file():
            missing.append(f"js/dist/{name} (run: bash js/build.sh)")
    return missing


@pytest.fixture(scope="module")
def built() -> None:
    missing = _missing()
    if missing:
        message = "the npm package tests need: " + "; ".join(missing)
        if os.environ.get("CI"):
            pytest.fail(message, pytrace=False)
        pytest.skip(message)


def _node(*args: str, cwd: Path | None = None, timeout: float = 600) -> str:
    done = subprocess.run(["node", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=timeout)
    assert done.returncode == 0, f"node {' '.join(args)} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout


# ---------------------------------------------------------------------------
# Generated files and versions.

def test_suite_data_is_current() -> None:
    done = subprocess.run([sys.executable, str(ROOT / "tools" / "make_js_suites.py"), "--check"],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_package_version_is_the_python_version() -> None:
    package = json.loads((JS / "package.json").read_text())
    assert package["version"] == samebits.__version__
    assert package["license"] == "MIT"


# ---------------------------------------------------------------------------
# The hash suites, against the native library.

def _native_line(suite: str) -> str:
    """The native exact digest of one suite (scalar path, 1 thread)."""
    line = hashes.hash_lines(modes=["exact"], paths=["scalar"], threads=[1], suite=suite)[0]
    return hashes.parse_line(line).digest


@pytest.fixture(scope="module")
def native_digests() -> dict[str, str]:
    return {suite: _native_line(suite) for suite in hashes.SUITES}


@pytest.mark.parametrize("threads, relaxed", [(1, False), (2, False), (4, False), (1, True),
                                              (2, True)])
def test_hash_suites_equal_native(built: None, native_digests: dict[str, str],
                                  threads: int, relaxed: bool) -> None:
    """threads 1 runs a one-thread module, 2 and 4 a threaded one (workers);
    relaxed: the relaxed-SIMD build (Node's flag on), whose fast mode fuses."""
    flags = [RELAXED_FLAG] if relaxed else []
    out = _node(*flags, str(RUN_HASHES), "--threads", str(threads),
                "--relaxed-simd", "on" if relaxed else "off")
    module = json.loads(out.splitlines()[0].removeprefix("# module: "))
    assert (module["threads"], module["relaxedSimd"], module["fastModeFused"]) == \
        (threads, relaxed, relaxed)
    assert module["threaded"] == (threads > 1)
    lines = [hashes.parse_line(line) for line in out.splitlines() if not line.startswith("#")]
    assert [line.suite for line in lines] == list(hashes.SUITES), out
    for line in lines:
        assert line.threads == threads and line.mode == "exact" and line.path == "vec4", out
        assert line.digest == native_digests[line.suite], \
            f"{line.suite} suite under Node at {threads} threads differs from native:\n{out}"
    headers = [line for line in out.splitlines() if line.startswith("# samebits")]
    assert headers == [hashes.header(suite=s) for s in hashes.SUITES]


MODELS_DIR = ROOT / "web" / "out" / "models"
RUN_MODELS = JS / "test" / "run_models.mjs"


@pytest.mark.parametrize("threads", [1, 2])
def test_models_suite_through_load_model(built: None, threads: int) -> None:
    """The five reference networks through the npm package's loadModel (the
    C graph runtime in the module, no Pyodide) at 1 and 2 threads: every
    exact digest equals the pinned one (4 threads run in Chromium,
    test_browser.py; the hash suites run at 1, 2 and 4 here)."""
    from model_digests import PINNED
    from samebits.onnx import suite
    manifest = MODELS_DIR / "models.json"
    if not manifest.is_file():
        message = f"{manifest.relative_to(ROOT)} is missing (run: python web/make_models.py)"
        if os.environ.get("CI"):
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    out = _node(str(RUN_MODELS), str(MODELS_DIR), "--threads", str(threads), timeout=1800)
    module = json.loads(out.splitlines()[0].removeprefix("# module: "))
    assert (module["threads"], module["threaded"]) == (threads, threads > 1)
    lines = [line.split("  #")[0] for line in out.splitlines() if line.startswith("models ")]
    got = {}
    for line in lines:
        name, mode, path, t, digest = suite.parse_line(line)
        assert (mode, path, t) == ("exact", "vec4", threads), line
        got[name] = digest
    assert got == {n["name"]: PINNED[n["name"]] for n in json.loads(manifest.read_text())["networks"]}


def test_hash_line_notices_one_flipped_bit(built: None, native_digests: dict[str, str]) -> None:
    """The negative control: one flipped output bit changes the JS line."""
    out = _node(str(RUN_HASHES), "--threads", "1", "--suites", "ops", "--flip-bit", "77")
    line = hashes.parse_line(out.splitlines()[-1])
    assert line.digest != native_digests["ops"]
    assert line.digest == hashes.ops_suite_digest("exact", "scalar", 1, flip_bit=77)


# ---------------------------------------------------------------------------
# API calls made in both languages.

def _tv(count: int, seed: int, nspecial: int = 8) -> dict[str, list[int]]:
    return {"portableValues": [count, seed, nspecial]}


def _arr(count: int, seed: int, nspecial: int = 8, shape: tuple[int, ...] | None = None
         ) -> np.ndarray:
    values = np.frombuffer(_testdata.float_buffer(count, seed, nspecial), np.float32)[:count]
    return values.reshape(shape if shape is not None else (count,)).copy()


Case = tuple[str, str, list[Any], Callable[[], np.ndarray]]


def _cases() -> list[Case]:
    cases: list[Case] = []
    ex = {"mode": "exact"}

    # matmul: layouts, bias and activations, degenerate sizes.
    m, k, n = 37, 53, 29
    a, b = _arr(m * k, 1), _arr(k * n, 2)
    bias = _arr(n, 3, 0)
    A, B = a.reshape(m, k), b.reshape(k, n)
    cases += [
        ("matmul", "matmul", [_tv(m * k, 1), _tv(k * n, 2), m, k, n, ex],
         lambda: samebits.matmul(A, B, mode="exact")),
        ("matmul transposeA", "matmul", [_tv(m * k, 1), _tv(k * n, 2), m, k, n,
                                         {**ex, "transposeA": True}],
         lambda: samebits.matmul(a.reshape(k, m).T, B, mode="exact")),
        ("matmul transposeB bias gelu_tanh", "matmul",
         [_tv(m * k, 1), _tv(k * n, 2), m, k, n,
          {**ex, "transposeB": True, "bias": _tv(n, 3, 0), "activation": "gelu_tanh"}],
         lambda: samebits.linear(A, b.reshape(n, k), bias, activation="gelu_tanh", mode="exact")),
        ("matmul bias leaky_relu 0.2", "matmul",
         [_tv(m * k, 1), _tv(k * n, 2), m, k, n,
          {**ex, "bias": _tv(n, 3, 0), "activation": "leaky_relu", "negativeSlope": 0.2}],
         lambda: samebits.linear(A, np.ascontiguousarray(B.T), bias,
                                 activation=("leaky_relu", 0.2), mode="exact")),
        ("matmul one row", "matmul", [_tv(300, 4), _tv(300 * 70, 5), 1, 300, 70, ex],
         lambda: samebits.matmul(_arr(300, 4).reshape(1, 300), _arr(300 * 70, 5).reshape(300, 70),
                                 mode="exact")),
        ("matmul k=0", "matmul", [_tv(0, 1), _tv(0, 2), 3, 0, 4, ex],
         lambda: np.zeros((3, 4), np.float32)),
        ("matmul packed B bias relu", "matmul",
         [_tv(m * k, 1), {"packMatrix": [_tv(k * n, 2), k, n]}, m, k, n,
          {**ex, "bias": _tv(n, 3, 0), "activation": "relu"}],
         lambda: samebits.linear(A, np.ascontiguousarray(B.T), bias, activation="relu",
                                 mode="exact")),
        ("matmul packed transposed B", "matmul",
         [_tv(m * k, 1), {"packMatrix": [_tv(k * n, 2), k, n, {"transposeB": True}]}, m, k, n, ex],
         lambda: samebits.matmul(A, b.reshape(n, k).T, mode="exact")),
    ]

    # conv2d: padding forms, stride, dilation, groups, depthwise, activations.
    def conv(name: str, xs: tuple[int, int, int, int], ws: tuple[int, int, int, int],
             opts: dict[str, Any], py: dict[str, Any], with_bias: bool = True) -> None:
        seed = 100 + 4 * len(cases)
        cx, cw = int(np.prod(xs)), int(np.prod(ws))
        js_opts = {**ex, **opts}
        if with_bias:
            js_opts["bias"] = _tv(ws[0], seed + 2, 0)
        x, w = _arr(cx, seed, shape=xs), _arr(cw, seed + 1, shape=ws)
        bb = _arr(ws[0], seed + 2, 0) if with_bias else None
        cases.append((name, "conv2d", [_tv(cx, seed), list(xs), _tv(cw, seed + 1), list(ws),
                                       js_opts],
                      lambda: samebits.conv2d(x, w, bb, mode="exact", **py)))

    conv("conv 3x3 pad 1", (2, 5, 11, 9), (7, 5, 3, 3), {"padding": 1}, {"padding": 1})
    conv("conv stride 2 dilation 2 groups 2 relu6", (1, 6, 17, 15), (4, 3, 3, 3),
         {"stride": 2, "dilation": 2, "groups": 2, "activation": "relu6"},
         {"stride": 2, "dilation": 2, "groups": 2, "activation": "relu6"})
    conv("conv same 4x4 (uneven padding)", (1, 3, 10, 12), (5, 3, 4, 4), {"padding": "same"},
         {"padding": "same"}, with_bias=False)
    conv("conv padding [1, 2, 0, 3] stride [2, 1]", (1, 4, 9, 8), (3, 4, 3, 2),
         {"padding": [1, 2, 0, 3], "stride": [2, 1]},
         {"padding": (1, 2, 0, 3), "stride": (2, 1)})
    conv("conv depthwise hardswish", (1, 8, 14, 14), (8, 1, 5, 5),
         {"padding": 2, "groups": 8, "activation": "hardswish"},
         {"padding": 2, "groups": 8, "activation": "hardswish"})
    conv("conv 1x1 valid", (3, 16, 7, 7), (24, 16, 1, 1), {"padding": "valid"},
         {"padding": "valid"})
    # Packed weights: the shape comes from the packing; the bits are the plain call's.
    px, pw = _arr(2 * 6 * 9 * 9, 700, shape=(2, 6, 9, 9)), _arr(8 * 3 * 3 * 3, 701, shape=(8, 3, 3, 3))
    cases.append(("conv packed weights groups 2", "conv2d",
                  [_tv(2 * 6 * 9 * 9, 700), [2, 6, 9, 9],
                   {"packConv2dWeight": [_tv(8 * 3 * 3 * 3, 701), [8, 3, 3, 3], {"groups": 2}]},
                   None, {**ex, "padding": 1, "activation": "silu"}],
                  lambda: samebits.conv2d(px, pw, None, padding=1, groups=2, activation="silu",
                                          mode="exact")))

    # Pools and resizes (no modes: their definitions have none).
    xs = (2, 3, 13, 11)
    cx = int(np.prod(xs))
    x = _arr(cx, 900, shape=xs)
    pools: list[tuple[str, str, dict[str, Any], Callable[[], np.ndarray]]] = [
        ("max 3/2 p1", "maxPool2d", {"kernelSize": 3, "stride": 2, "padding": 1},
         lambda: samebits.max_pool2d(x, 3, 2, 1)),
        ("max ceil", "maxPool2d", {"kernelSize": 3, "stride": 2, "ceilMode": True},
         lambda: samebits.max_pool2d(x, 3, 2, 0, ceil_mode=True)),
        ("max dilation 2 kernel [2, 3]", "maxPool2d", {"kernelSize": [2, 3], "dilation": 2},
         lambda: samebits.max_pool2d(x, (2, 3), dilation=2)),
        ("avg 3/2 p1", "avgPool2d", {"kernelSize": 3, "stride": 2, "padding": 1},
         lambda: samebits.avg_pool2d(x, 3, 2, 1)),
        ("avg ceil exclude pad", "avgPool2d",
         {"kernelSize": 3, "stride": 2, "padding": 1, "ceilMode": True, "countIncludePad": False},
         lambda: samebits.avg_pool2d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False)),
        ("avg divisor 5", "avgPool2d", {"kernelSize": 2, "divisorOverride": 5},
         lambda: samebits.avg_pool2d(x, 2, divisor_override=5)),
        ("nearest 20x7", "interpolate", {"size": [20, 7]},
         lambda: samebits.interpolate(x, size=(20, 7))),
        ("bilinear 30x17", "interpolate", {"size": [30, 17], "mode": "bilinear"},
         lambda: samebits.interpolate(x, size=(30, 17), mode="bilinear", align_corners=False)),
        ("bilinear align 5x24", "interpolate",
         {"size": [5, 24], "mode": "bilinear", "alignCorners": True},
         lambda: samebits.interpolate(x, size=(5, 24), mode="bilinear", align_corners=True)),
    ]
    for name, fn, opts, py_call in pools:
        cases.append((f"pool {name}", fn, [_tv(cx, 900), list(xs), opts], py_call))
    for size in ([5, 7], 1):
        cases.append((f"adaptive {size}", "adaptiveAvgPool2d", [_tv(cx, 900), list(xs), size, {}],
                      lambda size=size: samebits.adaptive_avg_pool2d(x, size)))

    # Elementwise functions over test values (with specials).
    u = _arr(5000, 77)
    for name in ("exp", "log", "tanh", "erf", "sigmoid", "relu", "relu6", "silu", "hardswish",
                 "hardsigmoid", "sqrt", "softplus", "mish", "sin", "cos", "gelu"):
        cases.append((f"unary {name}", name, [_tv(5000, 77), ex],
                      lambda f=getattr(samebits, name): f(u, mode="exact")))
    cases += [
        ("unary leakyRelu 0.3", "leakyRelu", [_tv(5000, 77), {**ex, "negativeSlope": 0.3}],
         lambda: samebits.leaky_relu(u, 0.3, mode="exact")),
        ("unary elu 0.5", "elu", [_tv(5000, 77), {**ex, "alpha": 0.5}],
         lambda: samebits.elu(u, 0.5, mode="exact")),
        ("unary gelu tanh", "gelu", [_tv(5000, 77), {**ex, "approximate": "tanh"}],
         lambda: samebits.gelu(u, "tanh", mode="exact")),
    ]

    # Arithmetic with broadcasting.
    p, q = _arr(60, 31), _arr(60, 32)
    cases += [
        ("add", "add", [_tv(60, 31), _tv(60, 32), ex],
         lambda: samebits.add(p, q, mode="exact")),
        ("mul broadcast [3, 1, 5] [4, 1]", "mul",
         [_tv(15, 33), _tv(4, 34), {**ex, "aShape": [3, 1, 5], "bShape": [4, 1]}],
         lambda: samebits.mul(_arr(15, 33, shape=(3, 1, 5)), _arr(4, 34, shape=(4, 1)),
                              mode="exact")),
        ("div by one value", "div", [_tv(60, 31), _tv(1, 35, 0), ex],
         lambda: samebits.div(p, _arr(1, 35, 0), mode="exact")),
        ("pow", "pow", [_tv(60, 31), _tv(60, 32), ex],
         lambda: samebits.pow(p, q, mode="exact")),
        ("maximum", "maximum", [_tv(60, 31), _tv(60, 32), ex],
         lambda: samebits.maximum(p, q, mode="exact")),
        ("minimum", "minimum", [_tv(60, 31), _tv(60, 32), ex],
         lambda: samebits.minimum(p, q, mode="exact")),
    ]

    # Reductions and normalizations.
    rs = (7, 11, 13)
    r = _arr(1001, 41, shape=rs)
    for axis in (0, 1, -1):
        cases.append((f"sum axis {axis}", "sum", [_tv(1001, 41), list(rs), axis, ex],
                      lambda axis=axis: samebits.sum(r, axis, mode="exact")))
    cases += [
        ("mean axis 1", "mean", [_tv(1001, 41), list(rs), 1, ex],
         lambda: samebits.mean(r, 1, mode="exact")),
        ("softmax axis 1", "softmax", [_tv(1001, 41), list(rs), 1, ex],
         lambda: samebits.softmax(r, 1, mode="exact")),
        ("logSoftmax axis 0", "logSoftmax", [_tv(1001, 41), list(rs), 0, ex],
         lambda: samebits.log_softmax(r, 0, mode="exact")),
        ("layerNorm 2 dims weight bias eps 1e-3", "layerNorm",
         [_tv(1001, 41), list(rs), {**ex, "normalizedDims": 2, "weight": _tv(143, 42, 0),
                                    "bias": _tv(143, 43, 0), "eps": 1e-3}],
         lambda: samebits.layer_norm(r, (11, 13), _arr(143, 42, 0, (11, 13)),
                                     _arr(143, 43, 0, (11, 13)), 1e-3, mode="exact")),
        ("layerNorm plain", "layerNorm", [_tv(1001, 41), list(rs), ex],
         lambda: samebits.layer_norm(r, 13, mode="exact")),
    ]
    cases.append(("portableValues", "portableValues", [1000, 123, 8],
                  lambda: portable_values(1000, 123, nspecial=8)))
    ns = (2, 6, 4, 5)
    nx = _arr(240, 51, shape=ns)
    cases += [
        ("batchNorm", "batchNorm",
         [_tv(240, 51), list(ns), {**ex, "runningMean": _tv(6, 52, 0), "runningVar": _tv(6, 53, 0),
                                   "weight": _tv(6, 54, 0), "bias": _tv(6, 55, 0)}],
         lambda: samebits.batch_norm(nx, _arr(6, 52, 0), _arr(6, 53, 0), _arr(6, 54, 0),
                                     _arr(6, 55, 0), mode="exact")),
        ("groupNorm 3", "groupNorm",
         [_tv(240, 51), list(ns), 3, {**ex, "weight": _tv(6, 54, 0), "bias": _tv(6, 55, 0),
                                      "eps": 1e-4}],
         lambda: samebits.group_norm(nx, 3, _arr(6, 54, 0), _arr(6, 55, 0), 1e-4, mode="exact")),
    ]
    return cases


CASES = _cases()


def _run_calls(tmp_path: Path, calls: list[dict[str, Any]], init: dict[str, Any] | None = None,
               node_flags: tuple[str, ...] = ()) -> dict[str, Any]:
    spec = tmp_path / "calls.json"
    spec.write_text(json.dumps({"init": init or {}, "calls": calls}))
    return json.loads(_node(*node_flags, str(RUN_CALLS), str(spec)))


@pytest.mark.parametrize("threads, relaxed", [(1, False), (2, False), (2, True)])
def test_api_calls_equal_python(built: None, tmp_path: Path, threads: int,
                                relaxed: bool) -> None:
    calls = [{"name": name, "fn": fn, "args": args} for name, fn, args, _ in CASES]
    results = _run_calls(tmp_path, calls, {"threads": threads, "relaxedSimd": relaxed},
                         (RELAXED_FLAG,) if relaxed else ())
    assert results["#info"]["threads"] == threads
    assert results["#info"]["relaxedSimd"] is relaxed
    differing = []
    for name, _, _, py_call in CASES:
        got = results[name]
        assert "error" not in got, f"{name}: {got['error']}"
        expected = np.asarray(py_call())
        if "shape" in got:     # NCHW results carry their shape
            assert got["shape"] == list(expected.shape), name
            want = digest(expected)
        else:
            want = digest(expected.reshape(-1))
        if got["digest"] != want:
            differing.append(name)
    assert not differing, f"JS and Python differ on: {differing}"


def test_relaxed_fast_mode_fuses_within_the_error_bound(built: None, tmp_path: Path) -> None:
    """The relaxed build's fast matmul fuses (it differs from exact) and
    stays within |c - ref| <= k 2^-24 sum|a b| + 1e-30 of a float64
    reference; the plain build's fast mode has no fused operation, so it
    equals exact."""
    import base64
    m, k, n = 64, 300, 50
    calls = [{"name": mode, "fn": "matmul", "values": True,
              "args": [_tv(m * k, 11, 0), _tv(k * n, 12, 0), m, k, n, {"mode": mode}]}
             for mode in ("fast", "exact")]
    a = _arr(m * k, 11, 0, (m, k)).astype(np.float64)
    b = _arr(k * n, 12, 0, (k, n)).astype(np.float64)
    ref, scale = a @ b, np.abs(a) @ np.abs(b)

    def values(result: dict[str, Any]) -> np.ndarray:
        return np.frombuffer(base64.b64decode(result["base64"]), np.float32).reshape(m, n)

    relaxed = _run_calls(tmp_path, calls, {"relaxedSimd": True}, (RELAXED_FLAG,))
    assert relaxed["#info"]["fastModeFused"] is True
    fast, exact = values(relaxed["fast"]), values(relaxed["exact"])
    assert np.any(fast != exact), "relaxed fast mode gave exact mode's bits: nothing fused"
    assert np.all(np.abs(fast - ref) <= k * 2.0 ** -24 * scale + 1e-30)
    plain = _run_calls(tmp_path, calls, {"relaxedSimd": False})
    assert plain["#info"]["fastModeFused"] is False
    assert plain["fast"]["digest"] == plain["exact"]["digest"] == relaxed["exact"]["digest"]


def test_dispose_ends_the_workers_and_the_object(built: None, tmp_path: Path) -> None:
    """After dispose() a Node process with the threaded module exits by itself
    (its workers are gone), and a call on the disposed object is a TypeError."""
    script = tmp_path / "dispose.mjs"
    script.write_text(
        f'import * as samebits from {json.dumps((JS / "index.mjs").as_uri())};\n'
        "const sb = await samebits.init({ threads: 3 });\n"
        "const a = sb.portableValues(256 * 256, 1);\n"
        "sb.matmul(a, a, 256, 256, 256, { mode: 'exact' });\n"
        "sb.dispose();\n"
        "try { sb.relu(a); } catch (e) { console.log(`${e.constructor.name}: ${e.message}`); }\n")
    out = _node(str(script), timeout=60)   # no process.exit: it must end on its own
    assert out.strip() == "TypeError: relu: this samebits object was disposed"


# ---------------------------------------------------------------------------
# Bad arguments: the error class, and the function and argument named.

BAD: list[tuple[str, str, list[Any], str, str]] = [
    ("float64 input", "matmul", [[1.0, 2.0], _tv(2, 1), 1, 2, 1], "TypeError",
     "matmul: a must be a Float32Array, got Array (convert with Float32Array.from(...))"),
    ("short b", "matmul", [_tv(6, 1), _tv(5, 2), 2, 3, 2], "RangeError",
     "matmul: b must hold 6 floats for shape [3, 2], got 5"),
    ("fractional m", "matmul", [_tv(6, 1), _tv(6, 2), 1.5, 3, 2], "TypeError",
     "matmul: m must be an integer, got 1.5"),
    ("negative k", "matmul", [_tv(6, 1), _tv(6, 2), 2, -3, 2], "RangeError",
     "matmul: k must be in [0, 1099511627776], got -3"),
    ("bad mode", "matmul", [_tv(6, 1), _tv(6, 2), 2, 3, 2, {"mode": "precise"}], "RangeError",
     'matmul: mode must be one of "fast", "exact", got "precise"'),
    ("unknown option", "matmul", [_tv(6, 1), _tv(6, 2), 2, 3, 2, {"trans_b": True}], "TypeError",
     'matmul: unknown option "trans_b"'),
    ("threads above init", "matmul", [_tv(6, 1), _tv(6, 2), 2, 3, 2, {"threads": 9}],
     "RangeError", "matmul: threads must be in [1, 1], got 9"),
    ("wrong out length", "relu", [_tv(6, 1), {"out": _tv(5, 1)}], "RangeError",
     "relu: out must hold 6 floats, got 5"),
    ("bad activation", "matmul", [_tv(6, 1), _tv(6, 2), 2, 3, 2, {"activation": "swish"}],
     "RangeError", 'matmul: activation must be one of "none", "relu"'),
    ("groups mismatch", "conv2d", [_tv(48, 1), [1, 3, 4, 4], _tv(36, 2), [4, 1, 3, 3],
                                   {"groups": 2}], "RangeError", "conv2d: with groups=2"),
    ("window too large", "conv2d", [_tv(48, 1), [1, 3, 4, 4], _tv(75, 2), [1, 3, 5, 5]],
     "RangeError", "conv2d: the output size 0 x 0 is below 1"),
    ("3-D conv input", "conv2d", [_tv(48, 1), [3, 4, 4], _tv(27, 2), [1, 3, 3, 3]],
     "RangeError", "conv2d: xShape must have 4 dimensions, got [3,4,4]"),
    ("same with stride", "conv2d", [_tv(48, 1), [1, 3, 4, 4], _tv(27, 2), [1, 3, 3, 3],
                                    {"padding": "same", "stride": 2}], "RangeError",
     'conv2d: padding "same" needs stride 1'),
    ("pool padding over half", "maxPool2d", [_tv(48, 1), [1, 3, 4, 4],
                                             {"kernelSize": 2, "padding": 2}],
     "RangeError", "maxPool2d: padding must be at most half of kernelSize"),
    ("no kernelSize", "avgPool2d", [_tv(48, 1), [1, 3, 4, 4], {}], "TypeError",
     "avgPool2d: kernelSize is required"),
    ("shapes that do not broadcast", "add",
     [_tv(6, 1), _tv(4, 2), {"aShape": [2, 3], "bShape": [4]}],
     "RangeError", "add: shapes [2,3] and [4] do not broadcast"),
    ("infinite slope", "leakyRelu", [_tv(6, 1), {"negativeSlope": 1e39}], "RangeError",
     "leakyRelu: negativeSlope must be a finite float32 value, got 1e+39"),
    ("axis out of range", "softmax", [_tv(6, 1), [2, 3], 2], "RangeError",
     "softmax: axis must be in [-2, 1], got 2"),
    ("groupNorm groups", "groupNorm", [_tv(48, 1), [1, 3, 4, 4], 2], "RangeError",
     "groupNorm: channels 3 must divide by numGroups 2"),
    ("disposed packed B", "matmul",
     [_tv(6, 1), {"disposed": {"packMatrix": [_tv(6, 2), 3, 2]}}, 2, 3, 2], "TypeError",
     "matmul: the packed weights were disposed"),
    ("packed B of another shape", "matmul",
     [_tv(6, 1), {"packMatrix": [_tv(6, 2), 2, 3]}, 2, 3, 2], "RangeError",
     "matmul: b was packed as 2 x 3, not 3 x 2"),
    ("packed conv weights, other groups", "conv2d",
     [_tv(48, 1), [1, 4, 4, 3], {"packConv2dWeight": [_tv(72, 2), [4, 2, 3, 3], {"groups": 2}]},
      None, {"groups": 1}], "RangeError", "conv2d: weight was packed for groups=2, not 1"),
    ("a valid call among them", "relu", [_tv(4, 1), {"out": _tv(4, 1)}], "", ""),
    ("element count beyond wasm32", "conv2d",
     [_tv(4, 1), [1, 1, 65536, 65536], _tv(1, 2), [1, 1, 1, 1]], "RangeError",
     "conv2d: xShape [1,1,65536,65536] has 4294967296 elements"),
]


def test_bad_arguments_raise_named_errors(built: None, tmp_path: Path) -> None:
    calls = [{"name": name, "fn": fn, "args": args} for name, fn, args, _, _ in BAD]
    results = _run_calls(tmp_path, calls, {"threads": 1})
    for name, _, _, kind, message in BAD:
        got = results[name]
        if not kind:       # a valid call among the bad ones: it still works
            assert "digest" in got, (name, got)
            continue
        assert "error" in got, f"{name}: no error, got {got}"
        assert got["error"].startswith(f"{kind}: {message}"), (name, got["error"])


# ---------------------------------------------------------------------------
# npm pack, installed in a scratch project.

@pytest.fixture(scope="module")
def tarball(built: None, tmp_path_factory: pytest.TempPathFactory) -> Path:
    if shutil.which("npm") is None:
        message = "npm pack needs npm (apt-get install npm)"
        if os.environ.get("CI"):
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    out = tmp_path_factory.mktemp("pack")
    done = subprocess.run(["npm", "pack", "--silent", "--pack-destination", str(out), str(JS)],
                          capture_output=True, text=True, cwd=out)
    assert done.returncode == 0, done.stderr
    packed = sorted(out.glob("samebits-*.tgz"))
    assert len(packed) == 1, done.stdout
    return packed[0]


def test_tarball_holds_the_package(tarball: Path) -> None:
    with tarfile.open(tarball) as tar:
        names = sorted(n.removeprefix("package/") for n in tar.getnames())
    needed = ["package.json", "index.mjs", "index.d.ts", "hashes.d.ts", "README.md", "LICENSE",
              "src/samebits.mjs", "src/suite-data.mjs", "dist/samebits-threads.worker.js",
              "dist/samebits-threads-relaxed.worker.js"]
    needed += [f"dist/{m}.{ext}" for m in MODULES for ext in ("mjs", "wasm")]
    for needed in needed:
        assert needed in names, f"{needed} missing from {tarball.name}: {names}"
    assert not [n for n in names if n.startswith("test/") or n.endswith(".o")], names
    assert re.fullmatch(rf"samebits-{re.escape(samebits.__version__)}\.tgz", tarball.name)


def _install(tarball: Path, project: Path) -> None:
    project.mkdir()
    (project / "package.json").write_text('{"name": "app", "private": true, "type": "module"}')
    done = subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--offline", str(tarball)],
                          capture_output=True, text=True, cwd=project)
    assert done.returncode == 0, done.stderr


def test_installed_tarball_runs_under_node(tarball: Path, tmp_path: Path,
                                           native_digests: dict[str, str]) -> None:
    project = tmp_path / "app"
    _install(tarball, project)
    (project / "main.mjs").write_text(
        'import * as samebits from "samebits";\n'
        'import { hashLine } from "samebits/hashes";\n'
        'const sb = await samebits.init({ threads: 2 });\n'
        'console.log(hashLine(sb, "conv"));\n'
        'const c = samebits.matmul(new Float32Array([1, 2, 3, 4]), new Float32Array([5, 6, 7, 8]),'
        ' 2, 2, 2, { mode: "exact" });\n'
        'console.log(Array.from(c).join(","), samebits.digest(c, { shape: [2, 2] }));\n'
        'process.exit(0);\n')
    out = _node("main.mjs", cwd=project).splitlines()
    line = hashes.parse_line(out[0])
    assert (line.suite, line.threads, line.digest) == ("conv", 2, native_digests["conv"])
    values, js_digest = out[1].split()
    assert values == "19,22,43,50"
    assert js_digest == digest(np.array([[19, 22], [43, 50]], np.float32))


TSC = ROOT / "web" / "node_modules" / "typescript" / "bin" / "tsc"

TS_USER = """
import * as samebits from "samebits";
import { hashLine, type Suite } from "samebits/hashes";

const sb: samebits.Samebits = await samebits.init({ threads: 2, relaxedSimd: false });
const a = new Float32Array(6), b = new Float32Array(6);
const c: Float32Array = samebits.matmul(a, b, 2, 3, 2, { mode: "exact", activation: "relu" });
const packed: samebits.PackedMatrix = sb.packMatrix(b, 3, 2, { transposeB: true });
const y: samebits.Shaped = sb.conv2d(a, [1, 1, 2, 3], b, [1, 1, 2, 3], { padding: "same" });
const digest: string = samebits.digest(c, { shape: [2, 2] });
const suite: Suite = "conv";
const line: string = hashLine(sb, suite, { mode: "exact" });
packed.dispose();
console.log(y.shape, digest, line, sb.info().relaxedSimd);
"""

TS_WRONG = {
    "bad mode": 'samebits.matmul(a, a, 1, 1, 1, { mode: "precise" });',
    "Float64Array input": "samebits.relu(new Float64Array(2));",
    "unknown option": "samebits.matmul(a, a, 1, 1, 1, { transB: true });",
    "missing kernelSize": "samebits.maxPool2d(a, [1, 1, 1, 1], {});",
}


def test_types_check_a_user_program_with_typescript(tarball: Path, tmp_path: Path) -> None:
    """index.d.ts under tsc --strict: a typical program passes; a wrong mode,
    a Float64Array, an unknown option and a missing kernelSize are errors."""
    if not TSC.is_file():
        message = "typescript from npm is missing (run npm ci in web/)"
        if os.environ.get("CI"):
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    project = tmp_path / "app"
    _install(tarball, project)
    options = ["--noEmit", "--strict", "--module", "nodenext", "--moduleResolution", "nodenext",
               "--target", "es2022"]
    (project / "main.ts").write_text(TS_USER)
    done = subprocess.run(["node", str(TSC), *options, "main.ts"], capture_output=True,
                          text=True, cwd=project)
    assert done.returncode == 0, done.stdout + done.stderr
    for name, line in TS_WRONG.items():
        (project / "wrong.ts").write_text('import * as samebits from "samebits";\n'
                                          "const a = new Float32Array(1);\n" + line + "\n")
        done = subprocess.run(["node", str(TSC), *options, "wrong.ts"], capture_output=True,
                              text=True, cwd=project)
        assert done.returncode != 0 and "error TS" in done.stdout, (name, done.stdout)


def test_float16_and_bfloat16_models_through_load_model(built: None, tmp_path: Path) -> None:
    """A float16 model and a bfloat16 one through loadModel: Float32Array
    feeds (rounded once by the runtime) and Uint16Array bits give the bits
    the Python host gives; outputs are Float32Arrays of the values with
    dtype "float16" / "bfloat16" (docs/onnx.md, "float16 and bfloat16")."""
    import samebits.onnx as so
    from onnx import TensorProto, helper

    def make(elem: int) -> bytes:
        nodes = [helper.make_node("Mul", ["x", "x"], ["m"]), helper.make_node("Add", ["m", "x"], ["y"])]
        g = helper.make_graph(nodes, "t", [helper.make_tensor_value_info("x", elem, [6])],
                              [helper.make_tensor_value_info("y", elem, None)])
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
        m.ir_version = 8
        return m.SerializeToString()

    x = np.array([1.001, -300.7, 70000.0, 6e-8, 0.3333, np.inf], np.float32)
    half, bf16 = make(TensorProto.FLOAT16), make(TensorProto.BFLOAT16)
    want_half = so.load(half, mode="exact").run({"x": x})["y"].astype(np.float32)
    want_bf16 = so.load(bf16, mode="exact").run({"x": x})["y"]
    (tmp_path / "half.onnx").write_bytes(half)
    (tmp_path / "bf16.onnx").write_bytes(bf16)
    script = tmp_path / "narrow.mjs"
    script.write_text(
        "import { readFileSync } from 'node:fs';\n"
        f'import * as samebits from {json.dumps((JS / "index.mjs").as_uri())};\n'
        f"const x = new Float32Array({json.dumps([float(v) if np.isfinite(v) else 1e999 for v in x]).replace('1e+999', 'Infinity')});\n"
        "const out = {};\n"
        "for (const name of ['half', 'bf16']) {\n"
        f"  const model = await samebits.loadModel(readFileSync({json.dumps(str(tmp_path))} + `/${{name}}.onnx`), {{ mode: 'exact' }});\n"
        "  const a = model.run({ x: { data: x, dims: [6] } }).y;\n"
        "  // the same values as bits: a Uint16Array feed\n"
        "  const bits = new Uint16Array(6);\n"
        "  const f32 = new Float32Array(1), u32 = new Uint32Array(f32.buffer);\n"
        "  for (let i = 0; i < 6; i++) { f32[0] = x[i]; bits[i] = name === 'bf16' ? (u32[0] + 0x7fff + ((u32[0] >>> 16) & 1)) >>> 16 : 0; }\n"
        "  const b = name === 'bf16' ? model.run({ x: { data: bits, dims: [6] } }).y : a;\n"
        "  out[name] = { dtype: a.dtype, kind: a.data.constructor.name, a: Array.from(new Uint32Array(a.data.buffer)),\n"
        "                b: Array.from(new Uint32Array(b.data.buffer)) };\n"
        "}\n"
        "console.log(JSON.stringify(out));\n")
    got = json.loads(_node(str(script), timeout=120).strip().splitlines()[-1])
    assert got["half"]["dtype"] == "float16" and got["bf16"]["dtype"] == "bfloat16"
    assert got["half"]["kind"] == "Float32Array"
    assert got["half"]["a"] == want_half.view(np.uint32).tolist()
    assert got["bf16"]["a"] == want_bf16.view(np.uint32).tolist()
    assert got["bf16"]["b"] == want_bf16.view(np.uint32).tolist()


def test_node_profile_through_load_model(built: None, tmp_path: Path) -> None:
    """model.nodeProfile after runs with {profile: true}: the nodes the Python
    host lists (names, positions in the file, fused labels), each run counted,
    the If node's subgraph timed; profile is the same counters per type;
    resetProfile forgets both."""
    sys.path.insert(0, str(ROOT / "tests" / "graph"))
    pytest.importorskip("onnx")
    from test_node_profile import NODES, profiled_model
    (tmp_path / "profiled.onnx").write_bytes(profiled_model())
    script = tmp_path / "profile.mjs"
    script.write_text(
        "import { readFileSync } from 'node:fs';\n"
        f'import * as samebits from {json.dumps((JS / "index.mjs").as_uri())};\n'
        f"const model = await samebits.loadModel(readFileSync({json.dumps(str(tmp_path / 'profiled.onnx'))}));\n"
        "const feeds = { x: { data: new Float32Array(50).fill(0.5), dims: [1, 2, 5, 5] },\n"
        "                cond: { data: new Uint8Array([1]), dims: [] } };\n"
        "const before = model.nodeProfile.length;\n"
        "model.run(feeds, { profile: true });\n"
        "model.run(feeds);\n"
        "model.run(feeds, { profile: true });\n"
        "const nodes = model.nodeProfile, profile = model.profile;\n"
        "model.resetProfile();\n"
        "console.log(JSON.stringify({ before, nodes, profile, after: [model.nodeProfile.length,\n"
        "  Object.keys(model.profile).length] }));\n")
    got = json.loads(_node(str(script), timeout=120).strip().splitlines()[-1])
    assert got["before"] == 0 and got["after"] == [0, 0]
    assert [(t["name"], t["index"], t["op"]) for t in got["nodes"]] == NODES
    assert all(t["calls"] == 2 and t["ms"] >= 0 for t in got["nodes"])
    assert next(t for t in got["nodes"] if t["op"] == "If")["ms"] > 0
    for op, entry in got["profile"].items():
        mine = [t for t in got["nodes"] if t["op"] == op]
        assert entry["calls"] == sum(t["calls"] for t in mine)
        assert entry["ms"] == pytest.approx(sum(t["ms"] for t in mine), rel=1e-9, abs=1e-12)
    assert set(got["profile"]) == {op for _, _, op in NODES}
