"""Reductions and normalizations over an axis: sum, mean, softmax,
log_softmax, layer_norm (csrc/kernels/reduce.c).

Each is defined in a fixed order (docs/exact-ops.md, "Reductions"): sums
run over the axis in increasing index from +0, one float32 add per term, so
the result is the same on every machine, path, thread count and runtime, in
both modes.
"""
from __future__ import annotations

import ctypes
import numbers
from typing import Any, Optional, Sequence, Union

from .._binding import (
    abi as _abi, args as _args, lib as _lib, operands as _operands, paths as _paths)
from .._binding.codes import REDUCE_CODES
from .._binding.operands import Operand, is_numpy, prod
from .products import mode_code
from .._typing import Mode

_SUM, _MEAN, _SOFTMAX, _LOG_SOFTMAX, _LAYER_NORM = (
    REDUCE_CODES[name] for name in ("sum", "mean", "softmax", "log_softmax", "layer_norm"))


def _run(what: str, op: int, x: Any, operand: Any, outer: int, n: int, inner: int,
         out_shape: tuple[int, ...], mode: str, out: Any, threads: Any,
         weight: Any = None, bias: Any = None, eps_bits: int = 0) -> Any:
    code = mode_code(mode)
    nthreads = _args.threads(threads, what)
    # out may be x itself (softmax, log_softmax, layer_norm in place): each
    # element is read before its own output is written (csrc/kernels/reduce.c).
    in_place = out is x and operand.zero_copy and operand.c_contiguous
    inputs = ([] if in_place else [(x, operand)]) + \
        [(obj, t) for obj, t in (weight, bias) if t is not None]
    output = _operands.Output(out, out_shape, is_numpy(x), inputs, what)
    args = _abi.ReduceArgs(_paths.active_path_index(), code, op, nthreads, outer, n, inner,
                           operand.ptr, output.ptr, weight[1].ptr if weight[1] else 0,
                           bias[1].ptr if bias[1] else 0, eps_bits)
    # fast mode's softmax uses the fast exp: the fast library's (in Pyodide,
    # the relaxed-SIMD module, with fused multiply-add where the engine has it)
    library = _lib.lib if code == _lib.MODE_EXACT else _lib.fast_lib
    _lib.check_status(library.sb_reduce(ctypes.addressof(args)), what)
    return output.finish()


def _sum_or_mean(what: str, op: int, x: Any, axis: Any, keepdims: bool, mode: str, out: Any,
                 threads: Any) -> Any:
    t = _operands.as_operand(x, "x", dense=True)
    _args.shape(t.shape, "x", what)
    if axis is None:
        outer, n, inner = 1, t.size, 1
        shape: tuple[int, ...] = (1,) * t.ndim if keepdims else ()
    else:
        a = _args.axis(axis, t.ndim, what)
        dims = t.shape if t.ndim else (1,)
        outer, n, inner = prod(dims[:a]), dims[a], prod(dims[a + 1:])
        shape = tuple(1 if d == a else s for d, s in enumerate(t.shape)) if keepdims else \
            tuple(s for d, s in enumerate(t.shape) if d != a)
    if type(keepdims) is not bool:
        raise TypeError(f"{what}: keepdims must be a bool, got {type(keepdims).__name__}")
    return _run(what, op, x, t, outer, n, inner, shape, mode, out, threads, (None, None),
                (None, None))


def sum(x: Any, axis: Optional[int] = None, *, keepdims: bool = False,   # noqa: A001
        mode: Mode = "fast", out: Any = None, threads: int | None = None) -> Any:
    """The sum over one axis (or every element, axis=None), as np.sum for
    float32: each output adds its terms in increasing index order from +0,
    one float32 add per term (docs/exact-ops.md). keepdims as in numpy.

    x: a float32 array of any layout (others than C-contiguous are copied) or
    a buffer of format 'f'. Raises TypeError / ValueError naming a bad x,
    axis, keepdims, mode, out or threads."""
    return _sum_or_mean("sum", _SUM, x, axis, keepdims, mode, out, threads)


def mean(x: Any, axis: Optional[int] = None, *, keepdims: bool = False,
         mode: Mode = "fast", out: Any = None, threads: int | None = None) -> Any:
    """The mean over one axis (or every element): the sum of ``samebits.sum``,
    then one float32 divide by the count (rounded to float32). An empty axis
    gives NaN. Arguments as for ``samebits.sum``."""
    return _sum_or_mean("mean", _MEAN, x, axis, keepdims, mode, out, threads)


def _softmax(what: str, op: int, x: Any, dim: Any, mode: str, out: Any, threads: Any) -> Any:
    t = _operands.as_operand(x, "x", dense=True)
    _args.shape(t.shape, "x", what)
    a = _args.axis(dim, t.ndim, what, "dim")
    dims = t.shape if t.ndim else (1,)
    return _run(what, op, x, t, prod(dims[:a]), dims[a], prod(dims[a + 1:]), t.shape, mode,
                out, threads, (None, None), (None, None))


def softmax(x: Any, dim: int = -1, *, mode: Mode = "fast", out: Any = None,
            threads: int | None = None) -> Any:
    """Softmax over dimension ``dim`` (torch's name), float32: per slice, m =
    the largest value (NaN if any is NaN), e = exp(x - m) with the exact exp,
    s = the sum of e in increasing index order from +0, then e / s (one
    divide each). Same shape as x. Arguments as for ``samebits.exp``."""
    return _softmax("softmax", _SOFTMAX, x, dim, mode, out, threads)


def log_softmax(x: Any, dim: int = -1, *, mode: Mode = "fast", out: Any = None,
                threads: int | None = None) -> Any:
    """log(softmax(x)) over ``dim``, float32: (x - m) - log(s), with m and s
    as for ``samebits.softmax`` and the exact log."""
    return _softmax("log_softmax", _LOG_SOFTMAX, x, dim, mode, out, threads)


def layer_norm(x: Any, normalized_shape: Union[int, Sequence[int]], weight: Any = None,
               bias: Any = None, eps: float = 1e-5, *, mode: Mode = "fast", out: Any = None,
               threads: int | None = None) -> Any:
    """Layer normalization over the last dimensions, with torch's signature.

    Each slice of ``normalized_shape`` (the trailing dimensions of x) is
    normalized on its own: mean = the sum of its n values (increasing order
    from +0) / n; d = x - mean; var = the sum of d * d (same order) / n;
    r = 1 / sqrt(var + eps); y = d * r, then * weight, then + bias (each one
    float32 operation; weight and bias optional, of normalized_shape). eps is
    rounded to float32. Same shape as x (docs/exact-ops.md).
    """
    what = "layer_norm"
    t = _operands.as_operand(x, "x", dense=True)
    _args.shape(t.shape, "x", what)
    norm = (normalized_shape,) if isinstance(normalized_shape, numbers.Integral) else \
        tuple(normalized_shape) if isinstance(normalized_shape, (tuple, list)) else None
    if norm is None:
        raise TypeError(f"{what}: normalized_shape must be an int or a sequence of ints, "
                        f"got {type(normalized_shape).__name__}")
    norm = tuple(_args.as_int(s, "normalized_shape", what, normalized_shape) for s in norm)
    k = len(norm)
    if k == 0 or k > t.ndim or t.shape[t.ndim - k:] != norm:
        raise ValueError(f"{what}: normalized_shape {norm} must be the trailing dimensions of "
                         f"x, whose shape is {t.shape}")
    n = prod(norm)
    tensors: list[tuple[Any, Optional[Operand]]] = []
    for obj, name in ((weight, "weight"), (bias, "bias")):
        if obj is None:
            tensors.append((None, None))
            continue
        op = _operands.as_operand(obj, name, dense=True)
        if op.shape != norm:
            raise ValueError(f"{what}: {name} has shape {op.shape}, normalized_shape is {norm}")
        tensors.append((obj, op))
    return _run(what, _LAYER_NORM, x, t, t.size // n if n else 0, n, 1, t.shape, mode, out,
                threads, tensors[0], tensors[1], _args.float32_bits(eps, "eps", what))
