"""Elementwise arithmetic with numpy's broadcasting: add, sub, mul, div,
maximum, minimum, pow (csrc/kernels/binary.c), and sqrt.

Each output element is one documented operation of its two inputs
(docs/exact-ops.md, "Arithmetic"): the same bits on every machine, path,
thread count and runtime, in both modes, with NaN stored as 0x7FC00000.
"""
from __future__ import annotations

import ctypes
import numbers
import struct
from typing import TYPE_CHECKING, Any, Optional

from .._binding import (
    abi as _abi, args as _args, lib as _lib, operands as _operands, paths as _paths,
    threads as _threads)
from . import matmul as _matmul
from .elementwise import _unary
from .._binding.codes import BINARY_CODES
from .._binding.operands import Operand, is_numpy
from .products import mode_code
from .._typing import Mode

if TYPE_CHECKING:
    import numpy as np
else:
    from .._binding.operands import np   # None without numpy

_OPS = BINARY_CODES


def _scalar_operand(value: Any, name: str, what: str) -> Operand:
    """A Python int or float as a 0-d float32 operand (rounded to nearest)."""
    cell = ctypes.c_uint32(_args.float32_bits(value, name, what))
    return Operand(ctypes.addressof(cell), (), (), cell, False)


def _operand(value: Any, name: str, what: str) -> Operand:
    """An array operand, or a number (Python or numpy scalar) as a 0-d one."""
    if isinstance(value, bool):
        raise TypeError(f"{what}: {name} must be a float32 array or a number, got bool")
    if isinstance(value, numbers.Real):
        return _scalar_operand(value, name, what)
    return _operands.as_operand(value, name)


def broadcast_shape(a: tuple[int, ...], b: tuple[int, ...], what: str) -> tuple[int, ...]:
    """numpy's broadcast of two shapes, or a ValueError naming both."""
    ndim = max(len(a), len(b))
    pa, pb = (1,) * (ndim - len(a)) + a, (1,) * (ndim - len(b)) + b
    out = []
    for x, y in zip(pa, pb):
        if x != y and x != 1 and y != 1:
            raise ValueError(f"{what}: operands could not be broadcast together with shapes "
                             f"{a} and {b}")
        out.append(y if x == 1 else x)
    return tuple(out)


def _strides_for(operand: Operand, shape: tuple[int, ...]) -> list[int]:
    """operand's element strides over the broadcast shape (0 where it repeats)."""
    pad = len(shape) - operand.ndim
    strides = [0] * pad
    for size, extent, stride in zip(operand.shape, shape[pad:], operand.strides):
        strides.append(0 if size == 1 and extent != 1 else stride)
    return strides


def _in_place(out: Any, obj: Any, operand: Operand, shape: tuple[int, ...]) -> bool:
    """out is this input itself, of the output's shape and dense C layout:
    every element is read before its own output is written."""
    if out is None or not operand.zero_copy or operand.shape != shape:
        return False
    if not operand.c_contiguous:
        return False
    return _operands.same_elements(out, obj)


# ---- The fast path --------------------------------------------------------
#
# As matmul's (_ops/matmul.py, which says what each step saves): the common
# call -- float32 numpy arrays of one shape, C-contiguous and aligned, or one
# of them a Python float or int; no `out`, or a C-contiguous float32 one that
# is an input itself or meets neither -- skips the Operand and Output
# machinery and passes the C library the arguments the general path would
# after merging every dimension (one row of size elements, unit strides, 0
# for a number), so the bits are the same. Any other call, and any test that
# fails, goes the general way, which raises the documented errors. An add of
# two 10-element arrays went from ~38 us to ~7 us (numpy: ~0.9 us).

_NDARRAY: Optional[type[np.ndarray[Any, Any]]] = np.ndarray if np is not None else None
_FLOAT32 = _operands._FLOAT32
_ITEM = _operands.ITEM
_D = _abi.MAX_BATCH_DIMS
_FIELDS = 5 + 3 * _D + 3
_pack_binary = (struct.Struct("=" + "q" * _FIELDS).pack
                if ctypes.sizeof(_abi.BinaryArgs) == 8 * _FIELDS else None)
_ZEROS = (0,) * (_D - 1)
_MODES = {"fast": _lib.MODE_FAST, "exact": _lib.MODE_EXACT}
_data_address = _operands.data_address
_MAX_THREADS, _MAX_ELEMENTS = _args.MAX_THREADS, _args.MAX_ELEMENTS
if not _operands.DATA_FIELD_HOLDS or _pack_binary is None:
    _NDARRAY = None


def _plain(x: Any) -> bool:
    """A float32 numpy array the fast path reads as one dense row."""
    return (type(x) is _NDARRAY and x.dtype is _FLOAT32 and x.flags.c_contiguous
            and not _data_address(x) % _ITEM)


def _binary_fast(what: str, a: Any, b: Any, mode: Any, out: Any, threads: Any) -> Any:
    """The result, or None when the call is not the fast path's."""
    code = _MODES.get(mode) if type(mode) is str else None
    if code is None:
        return None
    keep = None
    if _plain(a) and _plain(b) and a.shape == b.shape:
        x, a_ptr, a_step, b_ptr, b_step = a, _data_address(a), 1, _data_address(b), 1
    elif _plain(a) and type(b) in (float, int):
        keep = ctypes.c_uint32(_args.float32_bits(b, "b", what))
        x, a_ptr, a_step, b_ptr, b_step = a, _data_address(a), 1, ctypes.addressof(keep), 0
    elif _plain(b) and type(a) in (float, int):
        keep = ctypes.c_uint32(_args.float32_bits(a, "a", what))
        x, a_ptr, a_step, b_ptr, b_step = b, ctypes.addressof(keep), 0, _data_address(b), 1
    else:
        return None
    size = x.size
    path = (_matmul._DEFAULT_PATH if _paths.forced_path() is None
            else _paths.active_path_index())
    nthreads = (_threads.fast_default if threads is None
                else threads if type(threads) is int and 0 < threads <= _MAX_THREADS else None)
    if not 0 < size <= _MAX_ELEMENTS or path is None or nthreads is None:
        return None
    if out is None:
        y = np.empty(x.shape, _FLOAT32)
    elif (_plain(out) and out.shape == x.shape and out.flags.writeable):
        y, nbytes = out, size * _ITEM
        y_ptr = _data_address(y)
        for obj, ptr, step in ((a, a_ptr, a_step), (b, b_ptr, b_step)):
            if step and obj is not out and ptr < y_ptr + nbytes and y_ptr < ptr + nbytes:
                return None   # meets an input it is not: the general path decides
    else:
        return None
    pack = _pack_binary
    if pack is None:
        return None
    status = _lib.lib.sb_binary(pack(
        path, code, _OPS[what], nthreads, 1, size, *_ZEROS, a_ptr, a_step, *_ZEROS,
        b_ptr, b_step, *_ZEROS, _data_address(y)))
    if status:
        _lib.check_status(status, what)
    return y


def _binary(what: str, a: Any, b: Any, mode: str, out: Any, threads: Any) -> Any:
    if _NDARRAY is not None:
        y = _binary_fast(what, a, b, mode, out, threads)
        if y is not None:
            return y
    mode_code(mode)                      # validated; both modes compute the same
    nthreads = _args.threads(threads, what)
    ta, tb = _operand(a, "a", what), _operand(b, "b", what)
    for t, name in ((ta, "a"), (tb, "b")):
        _args.shape(t.shape, name, what)
    shape = broadcast_shape(ta.shape, tb.shape, what)
    _args.shape(shape, "the result", what)
    _args.output_bytes(shape, what)
    dims, sa, sb = _operands.merge_dims(shape, _strides_for(ta, shape),
                                        _strides_for(tb, shape))
    if len(dims) > _abi.MAX_BATCH_DIMS:
        raise ValueError(f"{what}: the operands' layouts need {len(dims)} dimensions after "
                         f"merging; at most {_abi.MAX_BATCH_DIMS} are supported (pass "
                         "contiguous arrays)")
    inputs = [(obj, t) for obj, t in ((a, ta), (b, tb)) if not _in_place(out, obj, t, shape)]
    output = _operands.Output(out, shape, is_numpy(a) or is_numpy(b), inputs, what)
    pad = _abi.MAX_BATCH_DIMS - len(dims)
    args = _abi.BinaryArgs(_paths.active_path_index(), mode_code(mode), _OPS[what], nthreads,
                           len(dims), (ctypes.c_int64 * _abi.MAX_BATCH_DIMS)(*dims, *[0] * pad),
                           ta.ptr, (ctypes.c_int64 * _abi.MAX_BATCH_DIMS)(*sa, *[0] * pad),
                           tb.ptr, (ctypes.c_int64 * _abi.MAX_BATCH_DIMS)(*sb, *[0] * pad),
                           output.ptr)
    _lib.check_status(_lib.lib.sb_binary(ctypes.addressof(args)), what)
    return output.finish()


_DOC = """{summary}

    Parameters
    ----------
    a, b
        float32 arrays (numpy arrays of any strides, or buffer-protocol objects
        of format 'f') or Python numbers (rounded to float32). Their shapes
        broadcast as in numpy.
    mode
        "fast" (default) or "exact": the same bits in both (docs/exact-ops.md).
    out
        Optional writable float32 array of the broadcast shape, filled and
        returned. It may be one of the inputs when that input has the result's
        shape and is C-contiguous (in place); any other overlap is refused.
    threads
        Maximum number of threads (default: every core, capped by
        SAMEBITS_THREADS); the result never depends on it.

    Returns
    -------
    The result, of the broadcast shape: ``out`` if given; else a numpy array
    when an input is one, or a memoryview of format 'f'.

    Raises
    ------
    TypeError
        an input is not float32, not a buffer and not a number (bool refused).
    ValueError
        the shapes do not broadcast; out has the wrong shape, is read-only or
        overlaps an input; mode is not "fast" or "exact"; threads < 1.
    """


def add(a: Any, b: Any, *, mode: Mode = "fast", out: Any = None,
        threads: int | None = None) -> Any:
    return _binary("add", a, b, mode, out, threads)


def sub(a: Any, b: Any, *, mode: Mode = "fast", out: Any = None,
        threads: int | None = None) -> Any:
    return _binary("sub", a, b, mode, out, threads)


def mul(a: Any, b: Any, *, mode: Mode = "fast", out: Any = None,
        threads: int | None = None) -> Any:
    return _binary("mul", a, b, mode, out, threads)


def div(a: Any, b: Any, *, mode: Mode = "fast", out: Any = None,
        threads: int | None = None) -> Any:
    return _binary("div", a, b, mode, out, threads)


def maximum(a: Any, b: Any, *, mode: Mode = "fast", out: Any = None,
            threads: int | None = None) -> Any:
    return _binary("maximum", a, b, mode, out, threads)


def minimum(a: Any, b: Any, *, mode: Mode = "fast", out: Any = None,
            threads: int | None = None) -> Any:
    return _binary("minimum", a, b, mode, out, threads)


def pow(a: Any, b: Any, *, mode: Mode = "fast", out: Any = None,   # noqa: A001 (numpy's name)
        threads: int | None = None) -> Any:
    return _binary("pow", a, b, mode, out, threads)


def sqrt(x: Any, *, mode: Mode = "fast", out: Any = None, threads: int | None = None) -> Any:
    return _unary("sqrt", x, mode, out, threads)


add.__doc__ = _DOC.format(summary="a + b elementwise (one float32 add).")
sub.__doc__ = _DOC.format(summary="a - b elementwise (one float32 subtract).")
mul.__doc__ = _DOC.format(summary="a * b elementwise (one float32 multiply).")
div.__doc__ = _DOC.format(summary="a / b elementwise (one float32 divide).")
maximum.__doc__ = _DOC.format(
    summary="The larger of a and b elementwise, as np.maximum: NaN if either is NaN,\n"
            "    and +0 for -0 against +0.")
minimum.__doc__ = _DOC.format(
    summary="The smaller of a and b elementwise, as np.minimum: NaN if either is NaN,\n"
            "    and -0 for -0 against +0.")
pow.__doc__ = _DOC.format(
    summary="a ** b elementwise with C99's special cases (pow(x, 0) = 1 and\n"
            "    pow(1, y) = 1 even for NaN). An integer b below 2**24 in magnitude is\n"
            "    repeated products in binary64 (then one divide for b < 0); any other b\n"
            "    is exp(b log|a|) through the exact functions; a negative a with a\n"
            "    non-integer b gives NaN (docs/exact-ops.md).")
sqrt.__doc__ = """The square root elementwise: one IEEE float32 square root (correctly
    rounded); sqrt(-0) = -0, sqrt(x < 0) = NaN (0x7FC00000).

    Takes x, mode, out and threads as samebits.exp does."""
