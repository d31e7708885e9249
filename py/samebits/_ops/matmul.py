"""samebits.matmul: the fp32 matrix product, with numpy's shape rules."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Optional

from .._binding import (
    abi as _abi, args as _args, lib as _lib, operands as _operands, paths as _paths, threads as
    _threads)
from . import plan_report as _plan_report, products as _products
from .._typing import Mode

if TYPE_CHECKING:
    import numpy as np
else:
    from .._binding.operands import np   # None without numpy


# ---- The fast path --------------------------------------------------------
#
# A small product costs more in Python than in C, so the common call -- two
# float32 numpy arrays (exactly np.ndarray, 2-D, element-aligned strides), no
# `out` or a numpy one whose rows have unit column stride -- skips the general machinery (_products: Operand objects, the
# Output class, an argument Structure filled field by field). It passes the C
# library exactly the arguments the general path would (same pointers,
# strides, path and thread cap), so the results are the same bits. Every test
# it makes is one the general path makes with the same outcome; a call that
# fails any of them goes the general way, which raises the documented errors.
#
# Measured per call on this project's 2-core EPYC (CPython 3.11, numpy 2.4):
# - the data pointer is read from the array object itself: numpy's public
#   PyArrayObject struct is the object header, then `char *data`, and CPython's
#   id() is the object's address. ~0.2 us, against ~0.3 us for
#   ctypes.addressof(c_char.from_buffer(x)) on an array exported before and
#   ~0.9 us on a new one (numpy builds its buffer info on the first export, and
#   the result is always new), and ~1.5 us for __array_interface__ or
#   ndarray.ctypes.data. Checked at import against ndarray.ctypes.data; where
#   it does not hold, the fast path is off.
# - struct.pack builds the 18 int64 fields of sb_matmul_args in one step (~0.15 us; creating
#   and filling a c_int64 array takes ~0.7 us), and ctypes passes the bytes
#   object to the `const int64_t *` parameter as a pointer to its data, which C
#   only reads. That data follows the object header, ob_size and ob_shash, all
#   whole pointer-sized words, so it is 8-byte aligned. A new bytes object per
#   call keeps concurrent calls apart (ctypes releases the GIL during the call).
# - SAMEBITS_PATH and SAMEBITS_THREADS are read at import in any case; per call
#   only the use_path() context variable is looked up.
# A 16 x 16 x 16 call went from ~7 us to ~3.3 us (numpy's a @ b: ~1.65 us); of
# that, the C call alone is ~0.75 us and np.empty ~0.2 us (bench/call_overhead.py).

_NDARRAY: Optional[type[np.ndarray[Any, Any]]] = np.ndarray if np is not None else None
_FLOAT32 = _operands._FLOAT32
_ITEM = _operands.ITEM
_np_empty = np.empty if np is not None else None
_pack_args = _abi.packer(_abi.MatmulArgs)
# mode -> (code, the C function that runs it)
_ARGV_CALLS = {"fast": (_lib.MODE_FAST, _lib.fast_lib.sb_matmul),
               "exact": (_lib.MODE_EXACT, _lib.lib.sb_matmul)}
_data_address = _operands.data_address
_LIMIT, _MAX_ELEMENTS, _MAX_THREADS = _args.LIMIT, _args.MAX_ELEMENTS, _args.MAX_THREADS


def _import_time_default(read: Callable[[], int]) -> Optional[int]:
    try:
        return read()
    except ValueError:   # invalid SAMEBITS_PATH or SAMEBITS_THREADS: the general path raises
        return None


if not _operands.DATA_FIELD_HOLDS or _plan_report.TRACE:
    _NDARRAY = None   # no call takes a fast path (conv2d's neither): tracing goes the general way
_DEFAULT_PATH = _import_time_default(_paths.default_path_index)


def matmul(a: Any, b: Any, *, mode: Mode = "fast", out: Any = None,
           threads: int | None = None) -> Any:
    """The float32 matrix product ``a @ b``, with numpy's matmul shape rules.

    Parameters
    ----------
    a, b
        float32 arrays: numpy arrays with any strides (views, transposes,
        broadcasts and negative strides are read in place; unaligned or
        byte-strided ones are copied), or, without numpy, buffer-protocol
        objects of format 'f'. As in ``np.matmul``: (m, k) @ (k, n) is a
        matrix product; N-D operands are stacks of matrices in the last two
        dimensions, whose leading (batch) dimensions broadcast; a 1-D ``a`` is
        a row and a 1-D ``b`` a column, the added axis removed from the
        result. ``b`` may also be a PackedMatrix from ``samebits.pack`` (same
        bits).
    mode
        ``"exact"``: every output is the sum of its k products in increasing
        order from +0, each product and sum rounded to float32, no fused
        multiply-add, NaN stored as 0x7FC00000; the same bits on every
        machine, path, thread count and runtime. ``"fast"`` (default): the same
        order with fused multiply-add where the path has it; repeatable on one
        machine and path. Either way each 2-D product of a batch has the bits
        it has alone.
    out
        Optional writable float32 array of the result's shape, not
        overlapping a or b, filled in place and returned (any strides; rows
        with unit column stride are written directly).
    threads
        Maximum number of threads (default: every core, capped by
        SAMEBITS_THREADS): an int or a numpy integer >= 1, not a bool; caps
        above 1024 count as 1024. Small products stay on the calling thread;
        the products of a batch share the threads. The result never depends
        on it.

    Returns
    -------
    The product: ``out`` if given; else a numpy array when a or b is one
    (a numpy scalar for two 1-D operands, as numpy gives), or a memoryview of
    format 'f' otherwise.
    """
    if type(a) is _NDARRAY and type(b) is _NDARRAY and type(mode) is str:
        # The fast path (see above); anything it does not take falls through.
        call = _ARGV_CALLS.get(mode)
        if (call is not None and a.dtype is _FLOAT32 and b.dtype is _FLOAT32
                and a.ndim == 2 and b.ndim == 2):
            m, k = a.shape
            kb, n = b.shape
            a_row, a_col = a.strides
            b_row, b_col = b.strides
            a_ptr = _data_address(a)
            b_ptr = _data_address(b)
            path = _DEFAULT_PATH if _paths.forced_path() is None else _paths.active_path_index()
            nthreads = (_threads.fast_default if threads is None
                        else threads if type(threads) is int and 0 < threads <= _MAX_THREADS
                        else _args.threads(threads, "matmul"))
            # The general path's bounds as plain comparisons: every dimension
            # below 2**40 (possible beyond only for empty or broadcast arrays)
            # and a result of at most 2**62 bytes.
            if (kb == k and not (a_ptr | b_ptr | a_row | a_col | b_row | b_col) % _ITEM
                    and path is not None and nthreads is not None
                    and (m | n | k) < _LIMIT and m * n <= _MAX_ELEMENTS):
                if out is None:
                    try:
                        c = _np_empty((m, n), _FLOAT32)
                    except MemoryError:   # the general path says what could not be allocated
                        return _matmul_general(a, b, mode, out, threads)
                    c_ptr, c_row = _data_address(c), n
                elif (type(out) is _NDARRAY and out.dtype is _FLOAT32 and out.shape == (m, n)
                      and out.strides[1] == _ITEM and m * n * k and out.flags.writeable):
                    # Rows with unit column stride are written in place. The
                    # operands' byte ranges are compared when every stride is
                    # positive (the common case); an out that may meet an
                    # input, or other strides, go the general way (an exact
                    # check there, and its error).
                    c, c_ptr, c_row = out, _data_address(out), out.strides[0]
                    c_end = c_ptr + (m - 1) * c_row + n * _ITEM
                    if (c_row <= 0 or a_row <= 0 or a_col <= 0 or b_row <= 0 or b_col <= 0
                            or (c_row | c_ptr) % _ITEM
                            or (c_ptr < a_ptr + (m - 1) * a_row + (k - 1) * a_col + _ITEM
                                and a_ptr < c_end)
                            or (c_ptr < b_ptr + (k - 1) * b_row + (n - 1) * b_col + _ITEM
                                and b_ptr < c_end)):
                        return _matmul_general(a, b, mode, out, threads)
                    c_row //= _ITEM
                else:
                    return _matmul_general(a, b, mode, out, threads)
                code, function = call
                status = function(_pack_args(
                    path, code, nthreads, m, n, k,
                    a_ptr, a_row // _ITEM, a_col // _ITEM, b_ptr, b_row // _ITEM, b_col // _ITEM, 0,
                    c_ptr, c_row, 0, 0, 0))
                if status:
                    _lib.check_status(status, "matmul")
                return c
    return _matmul_general(a, b, mode, out, threads)


# ---- The general path -----------------------------------------------------

def _matmul_general(a: Any, b: Any, mode: str, out: Any, threads: int | None) -> Any:
    return _products.run(_products.prepare_matmul(a, b, mode, out, threads))
