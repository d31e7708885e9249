"""samebits.matmul: the fp32 matrix product."""
from __future__ import annotations

import ctypes
from typing import Any

from . import _lib, _operands, _paths, _threads
from ._packed import PackedMatrix

MODES = {"fast": _lib.MODE_FAST, "exact": _lib.MODE_EXACT}
_ARGV = ctypes.c_int64 * 15
_addressof = ctypes.addressof


def mode_code(mode: str) -> int:
    if not isinstance(mode, str) or mode not in MODES:
        raise ValueError(f"mode must be 'fast' or 'exact', got {mode!r}")
    return MODES[mode]


def matmul(a: Any, b: Any, *, mode: str = "fast", out: Any = None,
           threads: int | None = None) -> Any:
    """The float32 product ``a @ b`` of an (m, k) and a (k, n) matrix.

    Parameters
    ----------
    a, b
        float32 matrices: numpy arrays with any strides (row-padded and
        transposed views are read in place; other layouts may be copied), or,
        without numpy, 2-D buffer-protocol objects of format 'f'. ``b`` may
        also be a PackedMatrix from ``samebits.pack`` (same bits).
    mode
        ``"exact"``: every output is the sum of its k products in increasing
        order from +0, each product and sum rounded to float32, no fused
        multiply-add, NaN stored as 0x7FC00000; the same bits on every
        machine, path, thread count and runtime. ``"fast"`` (default): the same
        order with fused multiply-add where the path has it; repeatable on one
        machine and path.
    out
        Optional writable float32 (m, n) array, not overlapping a or b,
        filled in place and returned.
    threads
        Maximum number of threads (default: every core, capped by
        SAMEBITS_THREADS). Small products stay on the calling thread. The
        result never depends on it.

    Returns
    -------
    The (m, n) product: ``out`` if given; else a numpy array when a or b is
    one, or a memoryview of format 'f' and shape (m, n) otherwise.
    """
    code = mode_code(mode)
    nthreads = _threads.resolve_threads(threads)
    path = _paths.active_path_index()
    ma = _operands.as_input(a, "a")
    packed = b if isinstance(b, PackedMatrix) else None
    if packed is not None:
        if packed.path != _paths.path():
            raise ValueError(f"matmul: b was packed for path {packed.path!r} but the active "
                             f"path is {_paths.path()!r}; pack it again under this path")
        b_shape, b_inputs = packed.shape, []
    else:
        mb = _operands.as_input(b, "b")
        b_shape, b_inputs = mb.shape, [(b, mb)]
    if ma.cols != b_shape[0]:
        raise ValueError(f"matmul: shapes {ma.shape} and {b_shape} are not aligned "
                         f"(a has {ma.cols} columns, b has {b_shape[0]} rows)")
    m, n, k = ma.rows, b_shape[1], ma.cols
    numpy_result = _operands.is_numpy(a) or (_operands.is_numpy(b) if packed is None
                                             else packed._numpy_source)
    if out is None and numpy_result:   # the common case, kept short for small products
        result = _operands.np.empty((m, n), dtype=_operands.np.float32)
        c_ptr, ldc, output = _operands.numpy_address(result), n, None
    else:
        output = _operands.Output(out, m, n, numpy_result, [(a, ma)] + b_inputs, "matmul")
        c_ptr, ldc = output.matrix.ptr, output.matrix.row_stride
    library = _lib.lib if code == _lib.MODE_EXACT else _lib.fast_lib
    if packed is not None:
        b_ptr, b_row, b_col, is_packed = packed.address, 0, 0, 1
    else:
        b_ptr, b_row, b_col, is_packed = mb.ptr, mb.row_stride, mb.col_stride, 0
    args = _ARGV()   # one array argument: far cheaper through ctypes than fifteen
    args[:] = (path, code, nthreads, m, n, k, ma.ptr, ma.row_stride, ma.col_stride,
               b_ptr, b_row, b_col, c_ptr, ldc, is_packed)
    status = library.sb_sgemm_argv(_addressof(args))
    _lib.check_status(status, "matmul")
    return result if output is None else output.finish()
