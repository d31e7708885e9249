"""The WebAssembly build under Node: Pyodide from npm, the samebits wheel, the
exact hash suite, compared line by line with the native library; the
relaxed-SIMD module for fast mode (its imports, where its fused operations
are, the fast-mode error bound, the fallback to the plain module).

Needs `bash wasm/build.sh`, `npm ci` in web/ and node; builds nothing itself.
Where something is missing the tests skip, except under CI (env CI set),
where they fail and say what to run.
"""
from __future__ import annotations

import base64
import csv
import email
import hashlib
import importlib.util
import io
import json
import os
import re
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest

import samebits
from samebits import hashes

pytestmark = pytest.mark.node

ROOT = Path(__file__).resolve().parents[2]
WHEEL_JSON = ROOT / "wasm" / "out" / "wheel.json"
PYODIDE_DIR = ROOT / "web" / "node_modules" / "pyodide"
SCRIPT = ROOT / "wasm" / "node_hashes.mjs"
RELAXED_NAME = "libsamebits-relaxed.wasm"
RELAXED_FLAG = "--experimental-wasm-relaxed-simd"


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


def _manifest() -> dict:
    return json.loads(WHEEL_JSON.read_text())


def _relaxed_module() -> bytes:
    manifest = _manifest()
    assert manifest.get("fast_library") == f"samebits/{RELAXED_NAME}", (
        "the wheel has no relaxed-SIMD module (was it built with RELAXED=0? "
        "run: bash wasm/build.sh)")
    with zipfile.ZipFile(_wheel()) as zf:
        return zf.read(manifest["fast_library"])


def _make_wheel():
    """wasm/make_wheel.py as a module (it needs auditwheel-emscripten and
    packaging 26 or newer, from make deps)."""
    pytest.importorskip("auditwheel_emscripten")
    spec = importlib.util.spec_from_file_location("make_wheel", ROOT / "wasm" / "make_wheel.py")
    make_wheel = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(make_wheel)
    return make_wheel


def _node_needs_flag() -> bool:
    """Whether this node's V8 compiles relaxed SIMD only behind a flag (Node 20)."""
    check = ("const fs = require('fs');"
             "process.exit(WebAssembly.validate(fs.readFileSync(process.argv[1])) ? 0 : 3)")
    module = WHEEL_JSON.parent / RELAXED_NAME
    proc = subprocess.run(["node", "-e", check, str(module)], capture_output=True, text=True)
    if proc.returncode == 0:
        return False
    flagged = subprocess.run(["node", RELAXED_FLAG, "-e", check, str(module)],
                             capture_output=True, text=True)
    assert flagged.returncode == 0, (
        f"node cannot compile {module.name} even with {RELAXED_FLAG}: {flagged.stderr}")
    return True


def _node(*args: str, timeout: float = 600, relaxed: bool = True,
          env: dict | None = None) -> subprocess.CompletedProcess:
    """Runs the Node runner; relaxed=True passes node's relaxed-SIMD flag where
    this node needs it, so that the relaxed module loads."""
    flags = [RELAXED_FLAG] if relaxed and _node_needs_flag() else []
    proc = subprocess.run(["node", *flags, str(SCRIPT), *args], cwd=str(ROOT),
                          capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **(env or {})})
    assert proc.returncode == 0, f"node {SCRIPT.name} failed:\n{proc.stdout}\n{proc.stderr}"
    return proc


def _tagged(proc: subprocess.CompletedProcess, tag: str) -> dict:
    prefix = f"# {tag} "
    return json.loads(next(l for l in proc.stdout.splitlines()
                           if l.startswith(prefix))[len(prefix):])


def _native_fast_check(path: str) -> dict:
    from samebits import _selfcheck
    return _selfcheck.fast_check(path=path)


def test_wheel_is_well_formed(prerequisites):
    """Its name carries the pinned Pyodide's tags, RECORD lists every file with
    its sha256, and the library is a side module in the package folder."""
    wheel = _wheel()
    info = json.loads((PYODIDE_DIR / "pyodide-lock.json").read_text())["info"]
    series = "pyemscripten" if int(info["abi_version"].split("_")[0]) >= 2026 else "pyodide"
    tag = f"py3-none-{series}_{info['abi_version']}_wasm32"   # no CPython extension inside
    assert wheel.name == f"samebits-{samebits.__version__}-{tag}.whl"
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        dist_info = f"samebits-{samebits.__version__}.dist-info"
        assert {f"{dist_info}/{n}" for n in ("METADATA", "WHEEL", "RECORD")} <= names
        assert f"Tag: {tag}" in zf.read(f"{dist_info}/WHEEL").decode().splitlines()
        metadata = email.message_from_bytes(zf.read(f"{dist_info}/METADATA"))
        assert metadata["Name"] == "samebits" and metadata["Version"] == samebits.__version__
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
        # The relaxed-SIMD module: a side module too, under a name that
        # pyodide.loadPackage does not load by itself (no ".so" in it).
        relaxed = zf.read(f"samebits/{RELAXED_NAME}")
        assert relaxed[:4] == b"\0asm" and b"dylink" in relaxed[:64]
        assert [n for n in names if ".so" in n.rsplit("/", 1)[-1]] == ["samebits/libsamebits.so"]
        package = ROOT / "py" / "samebits"
        for source in package.glob("*.py"):
            name = f"samebits/{source.name}"
            assert name in names, f"{source.name} is not in the wheel (rebuild: bash wasm/build.sh)"
            assert zf.read(name) == source.read_bytes(), (
                f"the wheel's {source.name} is stale (rebuild: bash wasm/build.sh)")


def test_node_exact_suite_matches_native(prerequisites):
    """Every exact suite in full in wasm (vec4 on SIMD128, one thread), the
    gemm, conv and ops suites, has the native bits."""
    proc = _node("--modes", "exact", "--info")
    out = proc.stdout.splitlines()
    info = json.loads(next(l for l in out if l.startswith("# info "))[len("# info "):])
    assert info["platform"] == "emscripten" and info["machine"] == "wasm32"
    assert "vec4" in info["paths"] and info["threading"] is False
    assert info["library"].endswith("site-packages/samebits/libsamebits.so")
    # ... with the relaxed-SIMD module loaded beside it for fast mode
    assert info["fast_library"].endswith(f"site-packages/samebits/{RELAXED_NAME}")

    headers = [l for l in out if l.startswith("# samebits")]
    wasm_lines = [l for l in out if l and not l.startswith("#")]
    assert headers == [hashes.header(), hashes.header(suite="conv"), hashes.header(suite="ops")]
    assert len(wasm_lines) == 3
    for suite, wasm_line in zip(hashes.SUITES, wasm_lines):
        native_line = hashes.hash_lines(modes=["exact"], paths=[samebits.path()], threads=[1],
                                        suite=suite)[0]
        line = hashes.parse_line(wasm_line)
        assert line[:3] == ("exact", "vec4", 1) and line.suite == suite
        assert line.digest == hashes.parse_line(native_line).digest, (
            f"wasm under Node: {wasm_line}\nnative:          {native_line}")


def test_relaxed_module_imports_resolve(prerequisites, tmp_path):
    """The relaxed module imports only the loader's globals and C library
    functions that Pyodide's main module exports, and binds its own symbols
    inside itself (no GOT.func/GOT.mem import of a name it defines: those
    would resolve to the plain module's kernels)."""
    make_wheel = _make_wheel()
    module = tmp_path / RELAXED_NAME
    module.write_bytes(_relaxed_module())
    facts = make_wheel.side_module_facts(module)
    main = make_wheel.side_module_facts(PYODIDE_DIR / "pyodide.asm.wasm")
    provided = set(main["exports"])
    assert not facts["shared_memory"] and "sb_sgemm" in facts["exports"]
    assert not [i for i in facts["imports"] if i.startswith("GOT.")]
    functions = [i for i in facts["imports"] if i not in make_wheel.LOADER_IMPORTS]
    assert {"env.malloc", "env.free"} <= set(functions)
    for name in functions:
        assert name.startswith("env.") and name[4:] in provided, (
            f"{name} is not exported by Pyodide's main module")


def _disassembled(module: bytes, tmp_path: Path, name: str) -> dict[str, list[str]]:
    """{function name: its instruction lines} of a wasm module (wasm-objdump)."""
    tool = shutil.which("wasm-objdump")
    if tool is None:
        message = "wasm-objdump (Debian: apt-get install wabt) is needed to disassemble"
        if os.environ.get("CI"):
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    path = tmp_path / name
    path.write_bytes(module)
    proc = subprocess.run([tool, "-d", str(path)], capture_output=True, text=True, check=True)
    return _function_ops(proc.stdout)


def _function_ops(disassembly: str) -> dict[str, list[str]]:
    """wasm-objdump -d output -> {function name: its instruction lines}."""
    functions, current = {}, None
    for line in disassembly.splitlines():
        if line.rstrip().endswith(">:") and "func[" in line:
            current = line.split("<", 1)[1].rsplit(">", 1)[0]
            functions[current] = []
        elif current is not None and "|" in line:
            functions[current].append(line.split("|", 1)[1].strip())
    return functions


def test_relaxed_ops_only_in_fast_kernels(prerequisites, tmp_path):
    """f32x4.relaxed_madd (the fused multiply-add) is in vec4's fast kernels
    (tile and narrow tile, over packed A, A in place or B by offsets, row,
    few-column over packed A or A in place, and depthwise) and in no other
    function:
    exact-mode code is the plain one."""
    functions = _disassembled(_relaxed_module(), tmp_path, RELAXED_NAME)
    assert "sb_sgemm" in functions and "sb_ukr_vec4_exact" in functions
    relaxed = {name: sum("relaxed" in op for op in ops) for name, ops in functions.items()}
    users = {name for name, count in relaxed.items() if count}
    # the few-column kernel's instances (ukr_mv_<mr>_<columns>_fast, one per
    # column count) are fast kernels too
    few_columns = {name for name in users if re.fullmatch(r"ukr_mv_\d+_[1-4]_fast", name)}
    assert users and users - few_columns <= {
        "sb_ukr_vec4_fast", "sb_ukr_vec4_narrow_fast", "sb_ukr_vec4_direct_fast",
        "sb_ukr_vec4_narrow_direct_fast", "sb_ukr_vec4_offsets_fast",
        "sb_ukr_vec4_narrow_offsets_fast", "sb_row_vec4_fast", "sb_column_vec4_fast",
        "sb_column_direct_vec4_fast", "sb_dw_vec4_fast"}, users
    assert relaxed["sb_ukr_vec4_fast"] > 0
    assert all("relaxed_madd" in op for ops in functions.values() for op in ops
               if "relaxed" in op)


def test_vec4_tile_keeps_its_accumulators_in_registers(prerequisites, tmp_path):
    """The wasm tile and depthwise kernels are fully unrolled; the tile does not spill: per step of
    k, MR x NV = 4 x 2 multiplies (or fused multiply-adds), and about 22 vector
    loads and stores in the whole function (C in and out, B, A). A compiler
    that leaves the accumulators on the stack doubles the latter and made
    exact mode about 4x slower in the browser once."""
    with zipfile.ZipFile(_wheel()) as zf:
        modules = {"main": zf.read("samebits/libsamebits.so"), "relaxed": _relaxed_module()}
    for label, data in modules.items():
        functions = _disassembled(data, tmp_path, f"{label}.wasm")
        tiles = {name: ops for name, ops in functions.items()
                 if name in ("sb_ukr_vec4_exact", "sb_ukr_vec4_fast", "sb_ukr_vec4_direct_exact",
                             "sb_ukr_vec4_direct_fast", "sb_ukr_vec4_offsets_exact",
                             "sb_ukr_vec4_offsets_fast")}
        assert tiles, f"{label}: no vec4 tile kernel found by name"
        for name, ops in tiles.items():
            steps = sum("f32x4.mul" in op or "relaxed_madd" in op for op in ops)
            memory = sum("v128.load" in op or "v128.store" in op for op in ops)
            assert steps == 8, f"{label} {name}: {steps} multiplies, want 8 (MR 4 x NV 2)"
            assert memory <= 26, f"{label} {name}: {memory} vector loads/stores (spills?)"
        # The depthwise kernel's 20 register blocks (R x V, R*V <= 8 in wasm)
        # hold 105 accumulators between them: each needs its own multiply
        # once the loops are unrolled (a rolled loop keeps them on the stack;
        # that made depthwise layers 1.3-2x slower in wasm).
        depthwise = {name: ops for name, ops in functions.items()
                     if name in ("sb_dw_vec4_exact", "sb_dw_vec4_fast")}
        assert depthwise, f"{label}: no vec4 depthwise kernel found by name"
        for name, ops in depthwise.items():
            steps = sum("f32x4.mul" in op or "relaxed_madd" in op for op in ops)
            assert steps >= 105, f"{label} {name}: {steps} multiplies, want at least 105"


def test_node_fast_mode_uses_relaxed_module(prerequisites):
    """With relaxed SIMD, fast mode runs on the relaxed module, says it fuses,
    and meets the fast-mode error bound; on a CPU with FMA its bits are those
    of the native FMA path (same fused operations in the same order)."""
    proc = _node("--suites", "gemm", "--modes", "fast", "--groups", "sweep", "--info",
                 "--fastcheck")
    info, check = _tagged(proc, "info"), _tagged(proc, "fastcheck")
    assert info["fast_library"].endswith(f"site-packages/samebits/{RELAXED_NAME}")
    assert info["library"].endswith("site-packages/samebits/libsamebits.so")
    assert info["fused_fast_mode"]["vec4"] is True
    assert check["fast_library_note"] is None and check["fused"] is True
    assert check["ok"], f"fast-mode error bound broken: {check}"
    if "avx2" in samebits.paths():  # x86 with FMA3: V8 fuses relaxed_madd
        native = _native_fast_check("avx2")
        assert [r["fast_sha256"] for r in check["shapes"]] == \
            [r["fast_sha256"] for r in native["shapes"]]
        assert check["fast_differs"] > 0


# Runs in Pyodide (node_hashes.mjs --python): every non-product operator in
# fast mode on the relaxed module against the plain module, bit for bit, on
# special values (signed zeros, NaNs, infinities, subnormals, clamp edges) and
# a sweep of the whole float32 range. `result` holds the rows that differ.
_FAST_EQUALS_EXACT_PROBE = r"""
import ctypes
import struct

import samebits
from samebits._binding import abi as _abi, lib as _lib, paths as _paths

SPECIAL = [
    0x00000000, 0x80000000,                          # +0, -0
    0x7FC00000, 0xFFC00000, 0x7F800001, 0xFF800001,  # NaNs: quiet, negative, signalling
    0x7FBFFFFF, 0xFFFFFFFF, 0x7FC00001,
    0x7F800000, 0xFF800000,                          # +-inf
    0x00000001, 0x80000001, 0x007FFFFF, 0x807FFFFF,  # subnormals
    0x00400000, 0x80400000,
    0x00800000, 0x80800000, 0x7F7FFFFF, 0xFF7FFFFF,  # +-FLT_MIN, +-FLT_MAX
    0x3F800000, 0xBF800000, 0x3F000000, 0xBF000000,  # +-1, +-1/2
    0x40C00000, 0xC0C00000, 0x40BFFFFF, 0x40C00001,  # 6 and beside it (relu6)
    0x40400000, 0xC0400000, 0xC03FFFFF, 0xC0400001,  # +-3 and beside -3 (hardswish)
    0x42B20000, 0xC2D00000, 0xC2CE0000, 0x42B17218,  # exp's clamps
]
VALUES = SPECIAL + [i * 0x10001 for i in range(1 << 16)]   # + every exponent, both signs
OPS = {"exp": 0, "log": 1, "tanh": 2, "erf": 3, "sigmoid": 4, "relu": 5, "relu6": 6,
       "leaky_relu": 7, "gelu": 8, "gelu_tanh": 9, "silu": 10, "hardswish": 11,
       "hardsigmoid": 12, "sqrt": 13, "hardswish_onnx": 14, "hardsigmoid_onnx": 15,
       "elu": 16, "softplus": 17, "mish": 18, "sin": 19, "cos": 20}
FAST_VARIANTS = {"exp", "log", "tanh", "erf", "sigmoid"}   # fast_math.h
PARAMS = {"leaky_relu": [0.01, 0.0, -2.0], "hardsigmoid_onnx": [0.2, 1 / 6],
          "elu": [1.0, 0.5]}
EPILOGUES = ["relu", "relu6", "leaky_relu", ("leaky_relu", -2.0), "gelu", "gelu_tanh",
             "silu", "hardswish", "hardsigmoid", "sigmoid", "tanh", "hardswish_onnx",
             ("hardsigmoid_onnx", 0.2)]


def bits32(value):
    return struct.unpack("<I", struct.pack("<f", value))[0]


def floats(bits, shape=None):
    view = memoryview(bytearray(struct.pack(f"<{len(bits)}I", *bits))).cast("f")
    return view if shape is None else view.cast("B").cast("f", shape)


def words(result):
    data = result.cast("B").tobytes()
    return list(struct.unpack(f"<{len(data) // 4}I", data))


def compare(what, inputs, want, got):
    bad = [f"x={a:08x}: want {w:08x}, got {g:08x}" for a, w, g in zip(inputs, want, got)
           if w != g]
    if bad:
        differ.append(f"{what}: {len(bad)} differ, " + "; ".join(bad[:4]))


def unary(library, path, mode, op, param, x):
    y = (ctypes.c_uint32 * len(x))()
    args = _abi.UnaryArgs(path, mode, op, 1, len(x), ctypes.addressof(x),
                          ctypes.addressof(y), param)
    assert library.sb_unary(ctypes.addressof(args)) == 0
    return list(y)


differ = []
checked = 0
x = (ctypes.c_uint32 * len(VALUES))(*VALUES)
for path_name in samebits.paths():
    path = _paths.path_index(path_name)
    # Elementwise: the exact kernel's bits (ops without a fast variant), or
    # the plain module's fast kernel (exp, log, ...: neither module fuses them).
    for name, op in OPS.items():
        for param in PARAMS.get(name, [None]):
            bits = 0 if param is None else bits32(param)
            against = _lib.MODE_FAST if name in FAST_VARIANTS else _lib.MODE_EXACT
            want = unary(_lib.lib, path, against, op, bits, x)
            got = unary(_lib.fast_lib, path, _lib.MODE_FAST, op, bits, x)
            compare(f"{path_name} {name}({param})", VALUES, want, got)
            checked += 1
    with samebits.use_path(path_name):
        # Fused epilogues: ones (4, 1) @ values (n, 1).T with k = 1, so that the
        # fused and unfused sums agree and each output is its value (bias: none,
        # or the values rotated), then the activation, in both modes.
        ones = floats([0x3F800000] * 4, (4, 1))
        weight = floats(VALUES, (len(VALUES), 1))
        bias = floats(VALUES[1:] + VALUES[:1])
        h = len(VALUES) // 64
        image = VALUES[:h * 64]
        for act in EPILOGUES:
            for b in (None, bias):
                want, got = (words(samebits.linear(ones, weight, b, activation=act, mode=m))
                             for m in ("exact", "fast"))
                compare(f"{path_name} linear {act} bias={b is not None}", VALUES * 4, want, got)
                checked += 1
            # 1x1 convolution, one channel into 4 (product path), and depthwise.
            for kind, (c, cout, groups) in {"conv": (1, 4, 1), "depthwise": (4, 4, 4)}.items():
                xc = floats(image * c, (1, c, h, 64))
                wc = floats([0x3F800000] * cout, (cout, c // groups, 1, 1))
                want, got = (words(samebits.conv2d(xc, wc, activation=act, groups=groups,
                                                   mode=m)) for m in ("exact", "fast"))
                compare(f"{path_name} {kind} {act}", image * cout, want, got)
                checked += 1
    # Reductions (sum, mean, softmax, log_softmax, layer_norm) in fast mode:
    # the plain module's bits (they fuse nowhere).
    for op in range(5):
        for n, inner in ((64, 1), (16, 4)):
            if op == 4 and inner != 1:
                continue
            outer = len(VALUES) // (n * inner)
            results = []
            for library in (_lib.lib, _lib.fast_lib):
                y = (ctypes.c_uint32 * (outer * n * inner))()
                args = _abi.ReduceArgs(path, _lib.MODE_FAST, op, 1, outer, n, inner,
                                       ctypes.addressof(x), ctypes.addressof(y), 0, 0,
                                       bits32(1e-5) if op == 4 else 0)
                assert library.sb_reduce(ctypes.addressof(args)) == 0
                results.append(list(y))
            compare(f"{path_name} reduce op {op} n={n} inner={inner}", VALUES, *results)
            checked += 1

result = {"fast_library": _lib.FAST_LIBRARY_PATH, "note": _lib.FAST_LIBRARY_NOTE,
          "checked": checked, "differ": differ}
"""


def test_node_relaxed_fast_mode_has_exact_bits(prerequisites, tmp_path):
    """Fast mode on the relaxed module runs the exact kernels wherever fast
    mode has no kernel of its own: every elementwise op except exp, log,
    tanh, erf and sigmoid equals exact mode bit for bit (-0, NaNs, infinities,
    subnormals and a sweep), as do the products' fused activations; the fast
    kernels and the reductions equal the plain module's fast mode. clang 19
    compiled relu's `x <= 0 ? 0 : x` into f32x4.pmax(x, 0), giving relu(-0) =
    -0: the relaxed module now takes only vec4's product kernels from it."""
    probe = tmp_path / "fast_equals_exact.py"
    probe.write_text(_FAST_EQUALS_EXACT_PROBE)
    report = _tagged(_node("--python", str(probe)), "python")
    assert report["fast_library"].endswith(f"site-packages/samebits/{RELAXED_NAME}")
    assert report["note"] is None
    assert report["checked"] > 100
    assert not report["differ"], "fast mode on the relaxed module differs:\n" + \
        "\n".join(report["differ"])


def test_node_fast_mode_falls_back(prerequisites):
    """SAMEBITS_WASM_RELAXED=0, or an engine that rejects relaxed SIMD: fast
    mode runs on the plain module, unfused, and exact lines keep the native
    bits."""
    proc = _node("--suites", "gemm", "--modes", "exact", "--groups", "sweep", "--info",
                 "--fastcheck", env={"SAMEBITS_WASM_RELAXED": "0"})
    info, check = _tagged(proc, "info"), _tagged(proc, "fastcheck")
    assert info["fast_library"] == info["library"]
    assert info["fused_fast_mode"]["vec4"] is False
    assert check["fast_library_note"] == "SAMEBITS_WASM_RELAXED=0"
    assert check["ok"] and check["fast_differs"] == 0
    if not samebits.info()["fused_fast_mode"]["vec4"]:  # native vec4 unfused too (SSE2)
        native = _native_fast_check("vec4")
        assert [r["fast_sha256"] for r in check["shapes"]] == \
            [r["fast_sha256"] for r in native["shapes"]]
    wasm_line = [l for l in proc.stdout.splitlines() if l and not l.startswith("#")]
    native_line = hashes.hash_lines(modes=["exact"], paths=[samebits.path()], threads=[1],
                                    groups=["sweep"])
    assert [hashes.parse_line(l)[3] for l in wasm_line] == \
        [hashes.parse_line(l)[3] for l in native_line]

    if _node_needs_flag():  # this node's V8 refuses relaxed SIMD without the flag
        proc = _node("--suites", "gemm", "--modes", "fast", "--groups", "sweep", "--info",
                     "--fastcheck", relaxed=False)
        check = _tagged(proc, "fastcheck")
        assert check["fast_library"] == check["library"] and check["fused"] is False
        assert check["fast_library_note"].startswith(f"{RELAXED_NAME} did not load")
        assert check["ok"]


MODELS_DIR = ROOT / "web" / "out" / "models"


def _models_or_skip() -> dict:
    manifest = MODELS_DIR / "models.json"
    if not manifest.is_file():
        message = f"{manifest.relative_to(ROOT)} is missing (run: python web/make_models.py)"
        if os.environ.get("CI"):
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    return json.loads(manifest.read_text())


def test_node_models_suite_matches_native(prerequisites):
    """The five reference networks run by samebits.onnx in Pyodide under Node
    (wasm vec4, exact, one thread): every digest equals the native one and the
    pinned one."""
    from model_digests import PINNED
    from samebits.onnx import suite
    manifest = _models_or_skip()
    proc = _node("--models", str(MODELS_DIR), "--modes", "exact", timeout=900)
    lines = [l for l in proc.stdout.splitlines() if l.startswith("models ")]
    assert proc.stdout.splitlines()[0].startswith("# samebits models suite")
    assert [suite.parse_line(l)[0] for l in lines] == [n["name"] for n in manifest["networks"]]
    for line, net in zip(lines, manifest["networks"]):
        name, mode, path, threads, digest = suite.parse_line(line)
        assert (mode, path, threads) == ("exact", "vec4", 1)
        assert digest == suite.parse_line(net["native"])[4] == PINNED[name], (line, net["native"])


def test_micropip_installs_the_wheel(prerequisites):
    """micropip.install(url), what notebook users type, installs the wheel
    under Node (micropip itself from PyPI's wheel); the installed package
    computes native bits and carries its entry points (the CLI, the pytest
    plugin)."""
    from samebits import _testdata
    from samebits.testing import digest
    if not (ROOT / "web" / "out" / "pywheels" / "pywheels.json").is_file():
        message = "web/out/pywheels is missing (run: python web/fetch_pywheels.py)"
        if os.environ.get("CI"):
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    proc = subprocess.run(["node", str(ROOT / "wasm" / "node_micropip.mjs")], cwd=str(ROOT),
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    info = json.loads(proc.stdout.strip().splitlines()[-1])
    assert info["version"] == samebits.__version__
    assert info["file"].endswith("site-packages/samebits/__init__.py")
    a = memoryview(_testdata.float_buffer(64 * 48, 21, 8)).cast("B").cast("f", (64, 48))
    b = memoryview(_testdata.float_buffer(48 * 32, 22, 8)).cast("B").cast("f", (48, 32))
    assert info["digest"] == digest(samebits.matmul(a, b, mode="exact"))
    assert info["entry_points"] == ["console_scripts:samebits=samebits.__main__:main",
                                    "pytest11:samebits=samebits.pytest_plugin"]


def test_auditwheel_emscripten_agrees_with_the_wheel_builder(prerequisites, tmp_path):
    """auditwheel-emscripten (pyodide auditwheel) reads both side modules of the
    wheel: they need no other shared library, and their function imports are
    the few C library functions make_wheel.py allows (which Pyodide exports).
    Its 0.0.16 release does not know PEP 783's pyemscripten platform tag, so
    it is given the modules themselves, not the wheel."""
    aw = pytest.importorskip("auditwheel_emscripten")
    make_wheel = _make_wheel()
    with zipfile.ZipFile(_wheel()) as zf:
        for name in ("libsamebits.so", RELAXED_NAME):
            (tmp_path / name).write_bytes(zf.read(f"samebits/{name}"))
    for name in ("libsamebits.so", RELAXED_NAME):
        module = tmp_path / name
        assert aw.show(module) == {str(module): []}      # no needed shared libraries
        functions = {i.field for i in aw.get_imports(module)[str(module)]
                     if i.kind == 0 and i.module == "env"}
        assert functions and functions <= set(make_wheel.LIBC_IMPORTS), functions
