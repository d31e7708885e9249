"""Elementwise functions of float32 arrays: exp, log, tanh, erf, sigmoid and
the activations relu, relu6, leaky_relu, gelu, silu, hardswish, hardsigmoid.

Exact mode computes each element by the fixed sequence of operations that
docs/exact-ops.md writes down, so the bits are the same on every machine,
path, thread count and runtime. The transcendentals' measured accuracy over
all 2**32 float32 inputs is in that document too. Fast mode has its own
float32 exp and sigmoid (fused multiply-add where the path has it, a
documented error bound); its other functions are the exact ones.
"""
from __future__ import annotations

import ctypes
import struct
from typing import Any

from .._binding import (
    abi as _abi, args as _args, lib as _lib, operands as _operands, paths as _paths)
from .._binding.operands import is_numpy
from .._binding.codes import UNARY_CODES
from .products import LEAKY_RELU_DEFAULT_SLOPE, mode_code, slope_value
from .._typing import Mode

_OPS = UNARY_CODES


def _unary(name: str, x: Any, mode: str, out: Any, threads: Any, param: int = 0,
           op: str | None = None) -> Any:
    """op(x) elementwise (op defaults to name; param: the binary32 bits of
    leaky_relu's slope)."""
    code = mode_code(mode)
    nthreads = _args.threads(threads, name)
    operand = _operands.as_operand(x, "x", dense=True)
    _args.shape(operand.shape, "x", name)
    in_place = out is not None and operand.zero_copy and _operands.same_elements(out, x)
    inputs = [] if in_place else [(x, operand)]
    output = _operands.Output(out, operand.shape, is_numpy(x), inputs, name)
    library = _lib.lib if code == _lib.MODE_EXACT else _lib.fast_lib
    args = _abi.UnaryArgs(_paths.active_path_index(), code, _OPS[op or name], nthreads,
                          operand.size, operand.ptr, output.ptr, param)
    _lib.check_status(library.sb_unary(ctypes.addressof(args)), name)
    return output.finish()


_DOC = """{summary}

    Parameters
    ----------
    x
        float32 input of any shape: a numpy array (any layout; others than
        C-contiguous are copied) or, without numpy, a buffer-protocol object
        of format 'f'.
    mode
        "exact": the documented sequence of operations (docs/exact-ops.md),
        the same bits everywhere. "fast" (the default): for exp and sigmoid
        a float32 kernel within the bound docs/exact-ops.md states
        (repeatable on one machine and path); for the others the exact
        kernel.
    out
        Optional writable float32 array of x's shape, filled and returned.
        It may be x itself (in place); any other overlap with x is refused.
    threads
        Maximum number of threads (default: every core, capped by
        SAMEBITS_THREADS). Small inputs stay on the calling thread. The
        result never depends on it.

    Returns
    -------
    The result, of x's shape: ``out`` if given; else a numpy array when x is
    one, or a memoryview of format 'f'.

    {special}

    Raises
    ------
    TypeError
        x or out is not float32 or not a buffer; threads is not an int.
    ValueError
        mode is not "fast" or "exact"; out has the wrong shape, is read-only
        or partly overlaps x; threads < 1.
    """


def exp(x: Any, *, mode: Mode = "fast", out: Any = None, threads: int | None = None) -> Any:
    return _unary("exp", x, mode, out, threads)


def log(x: Any, *, mode: Mode = "fast", out: Any = None, threads: int | None = None) -> Any:
    return _unary("log", x, mode, out, threads)


def tanh(x: Any, *, mode: Mode = "fast", out: Any = None, threads: int | None = None) -> Any:
    return _unary("tanh", x, mode, out, threads)


def erf(x: Any, *, mode: Mode = "fast", out: Any = None, threads: int | None = None) -> Any:
    return _unary("erf", x, mode, out, threads)


def sigmoid(x: Any, *, mode: Mode = "fast", out: Any = None, threads: int | None = None) -> Any:
    return _unary("sigmoid", x, mode, out, threads)


def sin(x: Any, *, mode: Mode = "fast", out: Any = None, threads: int | None = None) -> Any:
    return _unary("sin", x, mode, out, threads)


def cos(x: Any, *, mode: Mode = "fast", out: Any = None, threads: int | None = None) -> Any:
    return _unary("cos", x, mode, out, threads)


exp.__doc__ = _DOC.format(
    summary="e**x elementwise, float32.",
    special="Special values: exp(NaN) = NaN (0x7FC00000), exp(-inf) = +0, exp(+inf) = +inf;\n"
            "    results below 2**-149 round to subnormals or +0 and those above the largest\n"
            "    float to +inf, at the correctly rounded thresholds.")
log.__doc__ = _DOC.format(
    summary="The natural logarithm elementwise, float32.",
    special="Special values: log(+-0) = -inf, log(+inf) = +inf, log(x < 0) and log(NaN)\n"
            "    = NaN (0x7FC00000), log(1) = +0; subnormal inputs are exact inputs.")
tanh.__doc__ = _DOC.format(
    summary="The hyperbolic tangent elementwise, float32.",
    special="Special values: tanh(+-0) = +-0, tanh(+-inf) = +-1, tanh(NaN) = NaN\n"
            "    (0x7FC00000); tanh(-x) = -tanh(x) bit for bit.")
erf.__doc__ = _DOC.format(
    summary="The error function elementwise, float32.",
    special="Special values: erf(+-0) = +-0, erf(+-inf) = +-1, erf(NaN) = NaN\n"
            "    (0x7FC00000); erf(-x) = -erf(x) bit for bit.")
sigmoid.__doc__ = _DOC.format(
    summary="The logistic function 1 / (1 + e**-x) elementwise, float32.",
    special="Special values: sigmoid(-inf) = +0, sigmoid(+inf) = 1, sigmoid(NaN) = NaN\n"
            "    (0x7FC00000).")
sin.__doc__ = _DOC.format(
    summary="The sine elementwise, float32: the argument reduced modulo pi/2 exactly\n"
            "    (integer arithmetic on 320 bits of 2/pi), then a binary64 polynomial and one\n"
            "    rounding (docs/exact-ops.md). Both modes compute it this way.",
    special="Special values: sin(+-0) = +-0, sin(+-inf) = NaN, NaN gives NaN (0x7FC00000);\n"
            "    sin(-x) = -sin(x) bit for bit.")
cos.__doc__ = _DOC.format(
    summary="The cosine elementwise, float32, computed as sin is (docs/exact-ops.md).",
    special="Special values: cos(+-0) = 1, cos(+-inf) = NaN, NaN gives NaN (0x7FC00000);\n"
            "    cos(-x) = cos(x) bit for bit.")


def relu(x: Any, *, mode: Mode = "fast", out: Any = None, threads: int | None = None) -> Any:
    return _unary("relu", x, mode, out, threads)


def relu6(x: Any, *, mode: Mode = "fast", out: Any = None, threads: int | None = None) -> Any:
    return _unary("relu6", x, mode, out, threads)


def leaky_relu(x: Any, negative_slope: float = LEAKY_RELU_DEFAULT_SLOPE, *, mode: Mode = "fast",
               out: Any = None, threads: int | None = None) -> Any:
    slope = slope_value(negative_slope, "leaky_relu")
    bits = struct.unpack("<I", struct.pack("<f", slope))[0]
    return _unary("leaky_relu", x, mode, out, threads, param=bits)


def gelu(x: Any, approximate: str = "none", *, mode: Mode = "fast", out: Any = None,
         threads: int | None = None) -> Any:
    if approximate not in ("none", "tanh"):
        raise ValueError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")
    return _unary("gelu", x, mode, out, threads, op="gelu" if approximate == "none" else "gelu_tanh")


def silu(x: Any, *, mode: Mode = "fast", out: Any = None, threads: int | None = None) -> Any:
    return _unary("silu", x, mode, out, threads)


def hardswish(x: Any, *, mode: Mode = "fast", out: Any = None, threads: int | None = None) -> Any:
    return _unary("hardswish", x, mode, out, threads)


def hardsigmoid(x: Any, *, mode: Mode = "fast", out: Any = None,
                threads: int | None = None) -> Any:
    return _unary("hardsigmoid", x, mode, out, threads)


def elu(x: Any, alpha: float = 1.0, *, mode: Mode = "fast", out: Any = None,
        threads: int | None = None) -> Any:
    value = slope_value(alpha, "elu", "alpha")
    bits = struct.unpack("<I", struct.pack("<f", value))[0]
    return _unary("elu", x, mode, out, threads, param=bits)


def softplus(x: Any, *, mode: Mode = "fast", out: Any = None, threads: int | None = None) -> Any:
    return _unary("softplus", x, mode, out, threads)


def mish(x: Any, *, mode: Mode = "fast", out: Any = None, threads: int | None = None) -> Any:
    return _unary("mish", x, mode, out, threads)


relu.__doc__ = _DOC.format(
    summary="max(x, 0) elementwise, float32, as torch.relu: x < 0 gives +0, otherwise x\n"
            "    (so -0 stays -0).",
    special="NaN gives NaN (0x7FC00000).")
relu6.__doc__ = _DOC.format(
    summary="min(max(x, 0), 6) elementwise, float32 (x < 0 gives +0, x > 6 gives 6).",
    special="NaN gives NaN (0x7FC00000).")
leaky_relu.__doc__ = _DOC.format(
    summary="x if x > 0 else x * negative_slope, elementwise, float32 (torch's\n"
            "    leaky_relu; the slope, default 0.01, is rounded to float32 and the product\n"
            "    is one float32 multiply).",
    special="NaN gives NaN (0x7FC00000).")
gelu.__doc__ = _DOC.format(
    summary="GELU elementwise, float32, as torch.nn.functional.gelu: x/2 (1 + erf(x/sqrt(2)))\n"
            "    for approximate=\"none\", x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) for\n"
            "    approximate=\"tanh\"; evaluated in binary64 with one final rounding\n"
            "    (docs/exact-ops.md).",
    special="Special values: gelu(+inf) = +inf, gelu(-inf) = -0 (the limit; torch gives\n"
            "    NaN), NaN gives NaN (0x7FC00000).")
silu.__doc__ = _DOC.format(
    summary="x * sigmoid(x) elementwise, float32, evaluated as x / (1 + e**-x) in binary64\n"
            "    with one final rounding (docs/exact-ops.md).",
    special="Special values: silu(+inf) = +inf, silu(-inf) = -0 (the limit; torch gives\n"
            "    NaN), NaN gives NaN (0x7FC00000).")
hardswish.__doc__ = _DOC.format(
    summary="x * relu6(x + 3) / 6 elementwise, float32 operations in torch's order: the\n"
            "    add, the clamp, the multiply by x, then the divide by 6.",
    special="NaN gives NaN (0x7FC00000).")
hardsigmoid.__doc__ = _DOC.format(
    summary="relu6(x + 3) / 6 elementwise, float32 operations in torch's order.",
    special="NaN gives NaN (0x7FC00000).")
elu.__doc__ = _DOC.format(
    summary="ELU elementwise, float32: x for x >= 0 (-0 stays -0), else alpha * (e**x - 1)\n"
            "    evaluated in binary64 with one final rounding (alpha, default 1.0, rounded\n"
            "    to float32 first; docs/exact-ops.md).",
    special="Special values: elu(-inf) = -alpha, elu(+inf) = +inf, NaN gives NaN (0x7FC00000).")
softplus.__doc__ = _DOC.format(
    summary="log(1 + e**x) elementwise, float32, evaluated in binary64 as\n"
            "    max(x, 0) + log1p(e**-|x|) with one final rounding (docs/exact-ops.md).",
    special="Special values: softplus(+inf) = +inf, softplus(-inf) = +0, NaN gives NaN\n"
            "    (0x7FC00000).")
mish.__doc__ = _DOC.format(
    summary="x * tanh(softplus(x)) elementwise, float32, evaluated in binary64 with one\n"
            "    final rounding (docs/exact-ops.md).",
    special="Special values: mish(+inf) = +inf, mish(-inf) = -0 (the limit), NaN gives NaN\n"
            "    (0x7FC00000).")
