"""The hash suites: SHA-256 of the outputs of fixed sets of operations.

Three suites, each with its own version and lines: "gemm" (matrix products:
sweep, random and model shapes), "conv" (the convolutions of ResNet-50 and
MobileNetV3-large, and ResNet-50's max pool) and "ops" (the elementwise
functions and activations over a sweep of every float32 exponent and the
test values). Exact-mode lines must be identical on every
machine, path, thread count and runtime; fast-mode lines show same-machine
repeatability. docs/hash-suite.md defines the suites exactly, so a port can
regenerate them.
"""
from __future__ import annotations

import ctypes
import hashlib
import itertools
import time
from typing import Iterable, NamedTuple, TypedDict

from . import _testdata
from ._binding import abi as _abi, args as _args, lib as _lib, paths as _paths, threads as _threads
from ._binding.args import pooled_size
from ._ops.elementwise import _OPS as _UNARY_CODES
from ._ops.resize import scale_bits
from .shapes import CONV_MODELS, MOBILENETV3_LARGE_SE_CONVS, MODELS

SUITE_VERSION = 1          # the gemm suite
CONV_SUITE_VERSION = 2     # the conv suite (v2: the squeeze-and-excitation layers added)
OPS_SUITE_VERSION = 2      # the ops suite (v2: elu, softplus, mish, sin, cos added)
SUITES = ("gemm", "conv", "ops")  # in printing order
GROUPS = ("sweep", "random", "models")
NSPECIAL = 8


class Case(NamedTuple):
    group: str
    m: int
    n: int
    k: int
    a_transposed: bool = False
    b_transposed: bool = False
    pad_a: int = 0
    pad_b: int = 0
    pad_c: int = 0


def sweep_cases() -> list[Case]:
    cubes = [Case("sweep", s, s, s) for s in range(257)]
    skewed = [Case("sweep", s, (3 * s + 1) % 257, (5 * s + 2) % 257) for s in range(257)]
    return cubes + skewed


def random_cases(count: int = 48) -> list[Case]:
    cases = []
    for r in range(count):
        d = [_testdata.mix32(0x70000000 + 8 * r + t) for t in range(8)]
        cases.append(Case("random", 1 + d[0] % 300, 1 + d[1] % 300, 1 + d[2] % 300,
                          d[3] % 2 == 1, d[4] % 2 == 1, d[5] % 8, d[6] % 8, d[7] % 8))
    return cases


def model_cases() -> list[Case]:
    return [Case("models", p.m, p.n, p.k, b_transposed=p.b_transposed)
            for products in MODELS.values() for p in products]


def suite(groups: Iterable[str] = GROUPS) -> list[Case]:
    """The products of the gemm suite, in hashing order."""
    makers = {"sweep": sweep_cases, "random": random_cases, "models": model_cases}
    unknown = set(groups) - set(makers)
    if unknown:
        raise ValueError(f"unknown hash groups {sorted(unknown)}; known: {list(makers)}")
    return [case for g in ("sweep", "random", "models") if g in groups for case in makers[g]()]


_gemm_cases = suite   # for functions whose `suite` argument names a suite


class _Operand(NamedTuple):
    buffer: ctypes.Array[ctypes.c_float]
    row: int
    col: int


def _operand(rows: int, cols: int, transposed: bool, pad: int, seed: int) -> _Operand:
    """A rows x cols matrix stored row-major (or as its transpose) with `pad`
    extra elements per stored row; the padding holds test values too."""
    stored_rows, stored_cols = (cols, rows) if transposed else (rows, cols)
    ld = stored_cols + pad
    buffer = _testdata.float_buffer(stored_rows * ld, seed, NSPECIAL)
    return _Operand(buffer, 1, ld) if transposed else _Operand(buffer, ld, 1)


def case_output(case: Case, index: int, mode: int, path: int, threads: int) -> bytes:
    """The m x n result of one case as little-endian float32 bytes, row-major."""
    a = _operand(case.m, case.k, case.a_transposed, case.pad_a, 2 * index + 1)
    b = _operand(case.k, case.n, case.b_transposed, case.pad_b, 2 * index + 2)
    ldc = case.n + case.pad_c
    c = _testdata.float_buffer(case.m * ldc, 0x80000000 + index, 0)  # garbage to overwrite
    library = _lib.lib if mode == _lib.MODE_EXACT else _lib.fast_lib
    status = library.sb_sgemm(path, mode, threads, case.m, case.n, case.k,
                               ctypes.addressof(a.buffer), a.row, a.col,
                               ctypes.addressof(b.buffer), b.row, b.col,
                               ctypes.addressof(c), ldc)
    _lib.check_status(status, "hash suite")
    raw = memoryview(c).cast("B")
    row_bytes = case.n * 4
    if case.pad_c == 0:
        return bytes(raw[: case.m * row_bytes])
    return b"".join(bytes(raw[i * ldc * 4: i * ldc * 4 + row_bytes]) for i in range(case.m))


def _digest(outputs: Iterable[bytes], flip_bit: int | None) -> str:
    """SHA-256 over the outputs in order; flip_bit (see suite_digest) flips
    one bit of the first nonempty output first."""
    digest = hashlib.sha256()
    for out in outputs:
        if flip_bit is not None and out:
            flipped = bytearray(out)
            flipped[(flip_bit // 8) % len(out)] ^= 1 << (flip_bit % 8)
            out, flip_bit = bytes(flipped), None
        digest.update(out)
    return digest.hexdigest()


def suite_digest(mode: str, path: str, threads: int,
                 groups: Iterable[str] = ("sweep", "random", "models"),
                 flip_bit: int | None = None) -> str:
    """SHA-256 over the outputs of every case of the suite, in order.

    flip_bit flips that bit of the first nonempty output before hashing: a
    negative control proving that a comparison of lines notices one bit.
    """
    from ._ops.products import mode_code
    code, index = mode_code(mode), _paths.path_index(path)
    outputs = (case_output(case, i, code, index, threads) for i, case in enumerate(suite(groups)))
    return _digest(outputs, flip_bit)


# --------------------------------------------------------------------------
# The conv suite (docs/hash-suite.md, "The conv suite").

CONV_SEED = 0x40000000       # entry q: x from 3q, weights 3q + 1, bias 3q + 2 (plus this)
CONV_OUT_SEED = 0xC0000000   # entry q: the output is filled from this + q first
CONV_ACTIVATIONS = {"ResNet-50": "relu", "MobileNetV3-large": "relu6",
                    "MobileNetV3-large SE": "relu"}
# The models of the conv suite, in order: the benchmark chains, then
# MobileNetV3-large's squeeze-and-excitation layers.
CONV_SUITE_MODELS = {**CONV_MODELS, "MobileNetV3-large SE": MOBILENETV3_LARGE_SE_CONVS}
_CONV_ACTIVATION_CODES = {None: 0, "relu": 1, "relu6": 2}


class ConvCase(NamedTuple):
    """One entry of the conv suite: a convolution of input (1, c, h, w) with
    weights (cout, c // groups, kh, kw), or (kind "maxpool") a max pool of
    kh x kw windows over (1, c, h, w) (then cout == c, groups == 1)."""
    model: str
    name: str
    kind: str                # "conv" or "maxpool"
    c: int
    h: int
    w: int
    cout: int
    kh: int
    kw: int
    stride: int
    padding: int
    groups: int
    activation: str | None   # None, "relu" or "relu6" (convolutions only)

    @property
    def out_h(self) -> int:
        return _args.window_output_size(self.h, self.padding, self.padding, self.kh, 1,
                                        self.stride)

    @property
    def out_w(self) -> int:
        return _args.window_output_size(self.w, self.padding, self.padding, self.kw, 1,
                                        self.stride)


def conv_suite() -> list[ConvCase]:
    """The entries of the conv suite, in hashing order: per model of
    CONV_SUITE_MODELS (ResNet-50, MobileNetV3-large, then MobileNetV3-large's
    squeeze-and-excitation layers), its distinct convolutions in list order,
    layer i (from 0 within the model) without activation when i is even and
    with the model's activation (relu, relu6, relu) when i is odd;
    ResNet-50's 3x3/2 max pool right after its stem."""
    cases = []
    for model, shapes in CONV_SUITE_MODELS.items():
        for i, s in enumerate(shapes):
            activation = CONV_ACTIVATIONS[model] if i % 2 else None
            cases.append(ConvCase(model, s.name, "conv", s.c, s.h, s.w, s.cout, s.kh, s.kw,
                                  s.stride, s.padding, s.groups, activation))
            if model == "ResNet-50" and i == 0:   # the stem's output is pooled
                size = s.out_h
                cases.append(ConvCase(model, "maxpool3x3", "maxpool", s.cout, size, size,
                                      s.cout, 3, 3, 2, 1, 1, None))
    return cases


def conv_case_output(case: ConvCase, index: int, mode: int, path: int, threads: int,
                     naive: bool = False) -> bytes:
    """The (1, cout, out_h, out_w) output of entry `index` as little-endian
    float32 bytes. naive=True computes a convolution with the C library's
    plain-loop reference (sb_conv2d_naive) instead of the kernels."""
    x = _testdata.float_buffer(case.c * case.h * case.w, CONV_SEED + 3 * index, NSPECIAL)
    y = _testdata.float_buffer(case.cout * case.out_h * case.out_w, CONV_OUT_SEED + index, 0)
    if case.kind == "maxpool":
        pool = _abi.MaxPool2dArgs(
            1, case.c, case.h, case.w, case.kh, case.kw, case.stride, case.stride, 1, 1,
            case.padding, case.padding, case.padding, case.padding,
            ctypes.addressof(x), ctypes.addressof(y), threads)
        _lib.check_status(_lib.lib.sb_max_pool2d(ctypes.addressof(pool)),
                          "conv hash suite (max pool)")
        return bytes(memoryview(y).cast("B"))
    w = _testdata.float_buffer(case.cout * (case.c // case.groups) * case.kh * case.kw,
                               CONV_SEED + 3 * index + 1, NSPECIAL)
    bias = _testdata.float_buffer(case.cout, CONV_SEED + 3 * index + 2, 0)
    args = _abi.Conv2dArgs(
        path, mode, threads, 1, case.c, case.h, case.w, case.cout, case.kh, case.kw, case.groups,
        case.stride, case.stride, 1, 1, case.padding, case.padding, case.padding, case.padding,
        ctypes.addressof(x), ctypes.addressof(w), 0, ctypes.addressof(bias),
        _CONV_ACTIVATION_CODES[case.activation], ctypes.addressof(y))
    if naive:
        function = _lib.lib.sb_conv2d_naive
    else:
        function = (_lib.lib if mode == _lib.MODE_EXACT else _lib.fast_lib).sb_conv2d
    _lib.check_status(function(ctypes.addressof(args)),
                      f"conv hash suite ({case.model} {case.name})")
    return bytes(memoryview(y).cast("B"))


def conv_suite_digest(mode: str, path: str, threads: int, flip_bit: int | None = None) -> str:
    """SHA-256 over the outputs of every entry of the conv suite, in order
    (flip_bit as in suite_digest)."""
    from ._ops.products import mode_code
    code, index = mode_code(mode), _paths.path_index(path)
    outputs = (conv_case_output(case, i, code, index, threads)
               for i, case in enumerate(conv_suite()))
    return _digest(outputs, flip_bit)


# --------------------------------------------------------------------------
# The ops suite (docs/hash-suite.md, "The ops suite").

# By their names in enum sb_unary_op; leaky_relu with slope 0.01, elu with alpha 1.
OPS_FUNCTIONS = ("exp", "log", "tanh", "erf", "sigmoid", "relu", "relu6", "leaky_relu", "gelu",
                 "gelu_tanh", "silu", "hardswish", "hardsigmoid", "sqrt", "elu", "softplus",
                 "mish", "sin", "cos")
OPS_LEAKY_SLOPE_BITS = 0x3C23D70A   # 0.01 rounded to binary32
OPS_ELU_ALPHA_BITS = 0x3F800000     # 1.0
OPS_SWEEP = 65536           # float32 bit patterns i * 65537, i < OPS_SWEEP
OPS_TEST_VALUES = 65536     # then this many test values of stream OPS_SEED
OPS_SEED = 0x0B5E0000


# Inputs next to rounding midpoints (log's exceptions, sigmoid near 0, sin's
# and cos's exceptions): the last values of the input, in place of the last
# test values.
OPS_HARD_INPUTS = (0x3C413D3A, 0x41178FEB, 0x4C5D65A5, 0x65D890D3, 0x6F31A8EC, 0x36EC0000,
                   0x37060000, 0x370E0000, 0x372E0000, 0x37460000, 0x374E0000, 0x37660000,
                   0xB6F60000, 0x46199998, 0xC6199998, 0x5F18B878, 0x6115CB11)


def ops_inputs() -> ctypes.Array[ctypes.c_uint32]:
    """The suite's input: the sweep (every sign, exponent and top seven
    mantissa bits, NaNs, infinities and subnormals among them), then the
    test values (mostly in [-1, 1), NSPECIAL specials), the last of them
    replaced by OPS_HARD_INPUTS."""
    x = (ctypes.c_uint32 * (OPS_SWEEP + OPS_TEST_VALUES))()
    for i in range(OPS_SWEEP):
        x[i] = i * 65537
    values = _testdata.float_buffer(OPS_TEST_VALUES, OPS_SEED, NSPECIAL)
    ctypes.memmove(ctypes.addressof(x) + 4 * OPS_SWEEP, values, 4 * OPS_TEST_VALUES)
    for i, bits in enumerate(OPS_HARD_INPUTS):
        x[len(x) - len(OPS_HARD_INPUTS) + i] = bits
    return x


def ops_output(op: int, x: ctypes.Array[ctypes.c_uint32], mode: int, path: int, threads: int) -> bytes:
    """Function `op` (an index into OPS_FUNCTIONS) of every input, as
    little-endian float32 bytes."""
    y = (ctypes.c_float * len(x))()
    name = OPS_FUNCTIONS[op]
    param = {"leaky_relu": OPS_LEAKY_SLOPE_BITS, "elu": OPS_ELU_ALPHA_BITS}.get(name, 0)
    code = _UNARY_CODES[name]
    args = _abi.UnaryArgs(path, mode, code, threads, len(x), ctypes.addressof(x),
                          ctypes.addressof(y), param)
    library = _lib.lib if mode == _lib.MODE_EXACT else _lib.fast_lib
    _lib.check_status(library.sb_unary(ctypes.addressof(args)),
                      f"ops hash suite ({OPS_FUNCTIONS[op]})")
    return bytes(memoryview(y).cast("B"))


# Then the reductions, over the input seen as (256, 512): (name, op of enum
# sb_reduce_op, outer, n, inner, output floats).
OPS_REDUCTIONS = (("sum rows", 0, 256, 512, 1, 256), ("sum columns", 0, 1, 256, 512, 512),
                  ("mean rows", 1, 256, 512, 1, 256),
                  ("softmax rows", 2, 256, 512, 1, 131072),
                  ("softmax columns", 2, 1, 256, 512, 131072),
                  ("log_softmax rows", 3, 256, 512, 1, 131072),
                  ("layer_norm rows", 4, 256, 512, 1, 131072))
OPS_NORM_SEED = 0x0B5E1000      # layer_norm: weight from this stream, bias from + 1
OPS_NORM_EPS_BITS = 0x3727C5AC  # 1e-5 rounded to binary32


def ops_reduction_output(index: int, x: ctypes.Array[ctypes.c_uint32], mode: int, path: int,
                         threads: int) -> bytes:
    """Reduction `index` of OPS_REDUCTIONS over the input, as little-endian bytes."""
    name, op, outer, n, inner, count = OPS_REDUCTIONS[index]
    y = (ctypes.c_float * count)()
    weight = bias = None
    eps = 0
    if name.startswith("layer_norm"):
        weight = _testdata.float_buffer(n, OPS_NORM_SEED, 0)
        bias = _testdata.float_buffer(n, OPS_NORM_SEED + 1, 0)
        eps = OPS_NORM_EPS_BITS
    args = _abi.ReduceArgs(path, mode, op, threads, outer, n, inner, ctypes.addressof(x),
                           ctypes.addressof(y), ctypes.addressof(weight) if weight else 0,
                           ctypes.addressof(bias) if bias else 0, eps)
    library = _lib.lib if mode == _lib.MODE_EXACT else _lib.fast_lib
    _lib.check_status(library.sb_reduce(ctypes.addressof(args)), f"ops hash suite ({name})")
    return bytes(memoryview(y).cast("B"))


# Then normalizations and pools of the input seen as (2, 16, 64, 64): (name,
# arguments). Channel vectors come from test-value streams OPS_NORM_SEED + 2,
# 3, 4, 5 (mean, var, weight, bias; var made |v| + 0.5).
class _NormPoolSpec(TypedDict, total=False):
    op: int                     # normalizations: enum sb_norm_op
    groups: int
    k: int                      # avg_pool2d
    s: int
    p: int
    ceil: bool
    include_pad: int
    out: tuple[int, int]        # adaptive_avg_pool2d
    resize: tuple[int, int]     # interpolate
    mode: int
    align: int


OPS_NORMS_POOLS: tuple[tuple[str, _NormPoolSpec], ...] = (
    ("batch_norm", dict(op=0)), ("group_norm 4", dict(op=1, groups=4)),
    ("avg_pool2d 3x3/2 p1", dict(k=3, s=2, p=1, ceil=False, include_pad=1)),
    ("avg_pool2d 3x3/2 p1 ceil exclude-pad", dict(k=3, s=2, p=1, ceil=True, include_pad=0)),
    ("adaptive_avg_pool2d 1", dict(out=(1, 1))), ("adaptive_avg_pool2d 5x7", dict(out=(5, 7))),
    ("interpolate nearest 100x90", dict(resize=(100, 90), mode=0, align=0)),
    ("interpolate bilinear 96x80", dict(resize=(96, 80), mode=1, align=0)),
    ("interpolate bilinear align_corners 50x70", dict(resize=(50, 70), mode=1, align=1)))


def _channel_vector(seed: int, count: int, positive: bool = False) -> ctypes.Array[ctypes.c_float]:
    v = _testdata.float_buffer(count, seed, 0)
    if positive:
        for i in range(count):
            v[i] = abs(v[i]) + 0.5       # exact in binary32 for these values, then rounded
    return v


def ops_norm_pool_output(index: int, x: ctypes.Array[ctypes.c_uint32], mode: int, path: int,
                         threads: int) -> bytes:
    """Entry `index` of OPS_NORMS_POOLS over the input, as little-endian bytes."""
    name, spec = OPS_NORMS_POOLS[index]
    n, c, h, w = 2, 16, 64, 64
    if "op" in spec:
        y = (ctypes.c_float * len(x))()
        vectors = [_channel_vector(OPS_NORM_SEED + 2 + i, c, positive=(i == 1)) for i in range(4)]
        mean, var = (ctypes.addressof(vectors[0]), ctypes.addressof(vectors[1])) \
            if spec["op"] == 0 else (0, 0)
        args: ctypes.Structure = _abi.NormArgs(path, mode, spec["op"], threads, n, c, h * w, spec.get("groups", 0),
                             ctypes.addressof(x), ctypes.addressof(y), mean, var,
                             ctypes.addressof(vectors[2]), ctypes.addressof(vectors[3]),
                             OPS_NORM_EPS_BITS)
        library = _lib.lib if mode == _lib.MODE_EXACT else _lib.fast_lib
        _lib.check_status(library.sb_norm(ctypes.addressof(args)), f"ops hash suite ({name})")
        return bytes(memoryview(y).cast("B"))
    if "resize" in spec:
        oh, ow = spec["resize"]
        align = spec["align"]
        bits = [scale_bits(h, oh, None, bool(align)), scale_bits(w, ow, None, bool(align))]
        y = (ctypes.c_float * (n * c * oh * ow))()
        args = _abi.Resize2dArgs(n, c, h, w, oh, ow, spec["mode"], align, bits[0], bits[1],
                                 ctypes.addressof(x), ctypes.addressof(y), threads)
        _lib.check_status(_lib.lib.sb_resize2d(ctypes.addressof(args)),
                          f"ops hash suite ({name})")
        return bytes(memoryview(y).cast("B"))
    if "out" in spec:
        oh, ow = spec["out"]
        fields: dict[str, int] = dict(kh=0, kw=0, stride_h=0, stride_w=0, pad_top=0, pad_bottom=0, pad_left=0,
                      pad_right=0, count_include_pad=0, divisor_override=0, adaptive=1)
    else:
        k, s, p = spec["k"], spec["s"], spec["p"]
        oh = ow = pooled_size(h, k, s, p, p, spec["ceil"])
        fields = dict(kh=k, kw=k, stride_h=s, stride_w=s, pad_top=p, pad_bottom=p, pad_left=p,
                      pad_right=p, count_include_pad=spec["include_pad"], divisor_override=0,
                      adaptive=0)
    y = (ctypes.c_float * (n * c * oh * ow))()
    args = _abi.AvgPool2dArgs(n=n, c=c, h=h, w=w, oh=oh, ow=ow, x=ctypes.addressof(x),
                              y=ctypes.addressof(y), max_threads=threads, **fields)
    _lib.check_status(_lib.lib.sb_avg_pool2d(ctypes.addressof(args)), f"ops hash suite ({name})")
    return bytes(memoryview(y).cast("B"))


def ops_suite_digest(mode: str, path: str, threads: int, flip_bit: int | None = None) -> str:
    """SHA-256 over the outputs of every function, every reduction, then
    every normalization and pool of the ops suite, in order (flip_bit as in
    suite_digest)."""
    from ._ops.products import mode_code
    code, index = mode_code(mode), _paths.path_index(path)
    x = ops_inputs()
    outputs = itertools.chain(
        (ops_output(op, x, code, index, threads) for op in range(len(OPS_FUNCTIONS))),
        (ops_reduction_output(r, x, code, index, threads) for r in range(len(OPS_REDUCTIONS))),
        (ops_norm_pool_output(r, x, code, index, threads) for r in range(len(OPS_NORMS_POOLS))))
    return _digest(outputs, flip_bit)


# --------------------------------------------------------------------------
# Lines and headers.

class HashLine(NamedTuple):
    mode: str
    path: str
    threads: int
    digest: str
    suite: str = "gemm"


def format_line(mode: str, path: str, threads: int, digest: str, suite: str = "gemm") -> str:
    """A gemm line is "exact avx2   threads=1   sha256=..." (as in suite v1);
    a conv or ops line is the same after the suite's name."""
    line = f"{mode:<5} {path:<6} threads={threads:<3} sha256={digest}"
    if suite == "gemm":
        return line
    if suite in SUITES:
        return f"{suite} {line}"
    raise ValueError(f"unknown hash suite {suite!r}; known: {list(SUITES)}")


def parse_line(line: str) -> HashLine:
    """(mode, path, threads, digest, suite) of a line printed by format_line."""
    fields = line.split()
    suite = "gemm"
    if len(fields) == 5 and fields[0] in SUITES and fields[0] != "gemm":
        suite, fields = fields[0], fields[1:]
    if len(fields) != 4 or not fields[2].startswith("threads=") or \
            not fields[3].startswith("sha256="):
        raise ValueError(f"not a hash line: {line!r}")
    mode, path, threads, digest = fields
    return HashLine(mode, path, int(threads.split("=")[1]), digest.split("=")[1], suite)


def default_thread_counts() -> list[int]:
    """The thread counts the lines cover when none are given: 1 and every core."""
    cores = _threads.default_threads()
    return [1] if cores == 1 else [1, cores]


def hash_lines(modes: Iterable[str] = ("exact", "fast"), paths: Iterable[str] | None = None,
               threads: Iterable[int] | None = None,
               groups: Iterable[str] = GROUPS,
               timings: list[float] | None = None, flip_bit: int | None = None,
               suite: str = "gemm") -> list[str]:
    """One line per (mode, path, threads) of one suite; threads default to 1
    and every core. `groups` selects parts of the gemm suite (the conv suite
    has none)."""
    if suite not in SUITES:
        raise ValueError(f"unknown hash suite {suite!r}; known: {list(SUITES)}")
    paths = list(paths) if paths is not None else _paths.paths()
    if threads is None:
        threads = default_thread_counts()
    # Checked (and caps above 1024 clamped) before they reach C, where the conv
    # suite's int64 argument array would wrap them; the lines show the value used.
    threads = [_args.threads(t, "hashes") for t in threads]
    groups = tuple(groups)
    lines = []
    for mode in modes:
        for path in paths:
            for t in threads:
                start = time.perf_counter()
                if suite == "gemm":
                    digest = suite_digest(mode, path, t, groups, flip_bit)
                elif suite == "conv":
                    digest = conv_suite_digest(mode, path, t, flip_bit)
                else:
                    digest = ops_suite_digest(mode, path, t, flip_bit)
                if timings is not None:
                    timings.append(time.perf_counter() - start)
                lines.append(format_line(mode, path, t, digest, suite))
    return lines


def header(groups: Iterable[str] = GROUPS, suite: str = "gemm") -> str:
    """The line printed before a suite's lines (groups: of the gemm suite)."""
    if suite == "conv":
        cases = conv_suite()
        convs = sum(1 for c in cases if c.kind == "conv")
        pools = len(cases) - convs
        return (f"# samebits conv suite v{CONV_SUITE_VERSION}: {convs} convolutions, "
                f"{pools} max pool{'s' if pools != 1 else ''}")
    if suite == "ops":
        return (f"# samebits ops suite v{OPS_SUITE_VERSION}: {len(OPS_FUNCTIONS)} functions, "
                f"{len(OPS_REDUCTIONS)} reductions and {len(OPS_NORMS_POOLS)} norms, pools and "
                f"resizes over "
                f"{OPS_SWEEP + OPS_TEST_VALUES} inputs")
    if suite != "gemm":
        raise ValueError(f"unknown hash suite {suite!r}; known: {list(SUITES)}")
    products = _gemm_cases(groups)
    counts = {g: sum(1 for c in products if c.group == g) for g in GROUPS}
    parts = ", ".join(f"{n} {g}" for g, n in counts.items() if n)
    return f"# samebits hash suite v{SUITE_VERSION}: {parts} products"


def header_suite(line: str) -> str | None:
    """The suite a header line belongs to ("gemm", "conv", "ops"), or None."""
    if line.startswith("# samebits hash suite"):
        return "gemm"
    if line.startswith("# samebits conv suite"):
        return "conv"
    if line.startswith("# samebits ops suite"):
        return "ops"
    return None
