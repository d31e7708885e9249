"""Turns user arrays into pointers and element strides for the C library.

Two kinds of operand are accepted: numpy arrays (when numpy is importable)
and, without numpy, any object with the buffer protocol, format 'f' and two
dimensions (a memoryview cast to a shape, a 2-D ctypes array, ...).
"""
from __future__ import annotations

import ctypes
import itertools
import sys
from typing import Any, Callable, Sequence

from ._args import no_memory

try:
    import numpy as np
except ImportError:  # Pyodide without numpy loaded
    np = None

_TOO_HARD = getattr(getattr(np, "exceptions", np), "TooHardError", Exception) if np else Exception
FLOAT_FORMATS = {"f", "=f", "@f", "<f" if sys.byteorder == "little" else ">f"}
ITEM = 4


class Matrix:
    """A 2-D float32 operand as the C library sees it."""

    __slots__ = ("ptr", "rows", "cols", "row_stride", "col_stride", "keep", "zero_copy")

    def __init__(self, ptr: int, rows: int, cols: int, row_stride: int, col_stride: int,
                 keep: Any, zero_copy: bool) -> None:
        self.ptr = ptr                  # address of element (0, 0)
        self.rows = rows
        self.cols = cols
        self.row_stride = row_stride    # in elements
        self.col_stride = col_stride    # in elements
        self.keep = keep                # the object that owns the memory, alive for the call
        self.zero_copy = zero_copy      # ptr points into the caller's memory

    @property
    def shape(self) -> tuple[int, int]:
        return (self.rows, self.cols)

    def byte_span(self) -> tuple[int, int]:
        """[lo, hi) of the bytes the matrix can touch; empty when it has no element."""
        if self.rows == 0 or self.cols == 0:
            return (0, 0)
        lo = hi = self.ptr
        for extent, stride in ((self.rows, self.row_stride), (self.cols, self.col_stride)):
            reach = (extent - 1) * stride * ITEM
            lo, hi = (lo + reach, hi) if reach < 0 else (lo, hi + reach)
        return (lo, hi + ITEM)


_FLOAT32 = np.dtype(np.float32) if np is not None else None
_char_from_buffer = ctypes.c_char.from_buffer
_addressof = ctypes.addressof


def is_numpy(x: Any) -> bool:
    return np is not None and isinstance(x, np.ndarray)


def numpy_address(x: "np.ndarray") -> int:
    """Address of x's first element. ndarray.ctypes.data costs microseconds, so
    writable C-contiguous arrays (the common case) go through ctypes.from_buffer,
    which refuses the others (read-only, strided, empty)."""
    try:
        return _addressof(_char_from_buffer(x))
    except (TypeError, ValueError, BufferError):
        return x.ctypes.data


def _from_numpy(x: "np.ndarray", name: str) -> Matrix:
    if x.dtype is not _FLOAT32 and x.dtype != _FLOAT32:
        raise TypeError(f"{name} must have dtype float32, got {x.dtype}")
    if x.ndim != 2:
        raise ValueError(f"{name} must be 2-D, got shape {x.shape}")
    rows, cols = x.shape
    row_bytes, col_bytes = x.strides
    address = numpy_address(x)
    if row_bytes % ITEM or col_bytes % ITEM or address % ITEM:
        x = np.array(x, order="C", copy=True)   # a fresh, aligned copy the C side can read
        return Matrix(numpy_address(x), rows, cols, cols, 1, x, False)
    return Matrix(address, rows, cols, row_bytes // ITEM, col_bytes // ITEM, x, True)


def _float_view(x: Any, name: str, ndim: int = 2) -> memoryview:
    """x as a memoryview of float32 with ndim dimensions, or a TypeError /
    ValueError naming what is wrong."""
    try:
        view = memoryview(x)
    except TypeError:
        kinds = "a float32 numpy array or " if np is not None else ""
        raise TypeError(f"{name} must be {kinds}an object with the buffer protocol "
                        f"(format 'f'), got {type(x).__name__}") from None
    if view.format not in FLOAT_FORMATS:
        raise TypeError(f"{name} must hold float32 (buffer format 'f'), got format {view.format!r}")
    if view.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-D, got shape {tuple(view.shape)}")
    return view


def _address(view: memoryview) -> int:
    """Address of a writable C-contiguous buffer's first byte."""
    if view.nbytes == 0:
        return 0
    return ctypes.addressof((ctypes.c_char * view.nbytes).from_buffer(view))


def _from_buffer(x: Any, name: str) -> Matrix:
    view = _float_view(x, name)
    rows, cols = view.shape
    if view.c_contiguous and not view.readonly:
        return Matrix(_address(view), rows, cols, cols, 1, view, True)
    # Read-only or strided buffers: one C-contiguous copy of the logical elements.
    copy = (ctypes.c_float * max(rows * cols, 1))()
    ctypes.memmove(copy, view.tobytes(), rows * cols * ITEM)
    return Matrix(ctypes.addressof(copy), rows, cols, cols, 1, copy, False)


def as_input(x: Any, name: str) -> Matrix:
    """A read-only operand: zero-copy where the C side can address it."""
    if is_numpy(x):
        return _from_numpy(x, name)
    return _from_buffer(x, name)


def _as_array(x: Any) -> Any:
    """A numpy array over x's own memory (x itself for an array), or None
    without numpy or when numpy cannot view x. Through memoryview(x), never
    __array__, which may return a copy and so hide an overlap."""
    if is_numpy(x):
        return x
    if np is None:
        return None
    try:
        return np.asarray(memoryview(x))
    except (TypeError, ValueError, BufferError):
        return None


def numpy_span(a: "np.ndarray") -> tuple[int, int]:
    """[lo, hi) of the bytes a numpy array covers; empty when it has no element."""
    if a.size == 0:
        return (0, 0)
    utils = getattr(np.lib, "array_utils", None)
    bounds = utils.byte_bounds if utils is not None else np.byte_bounds
    return bounds(a)


def buffer_span(view: memoryview) -> tuple[int, int] | None:
    """Bytes a writable buffer may touch, for when numpy is not there to ask:
    exact when C-contiguous, else the whole exporting buffer (conservative);
    None when it cannot be told."""
    if view.nbytes == 0:
        return (0, 0)
    if view.c_contiguous:
        lo = _address(view)
        return (lo, lo + view.nbytes)
    try:
        base = memoryview(view.obj)
        if base.readonly or not base.c_contiguous:
            return None
        lo = _address(base)
        return (lo, lo + base.nbytes)
    except (TypeError, ValueError, BufferError):
        return None


def overlaps(out: Any, out_span: Callable[[], tuple[int, int] | None],
             inputs: Sequence[tuple[Any, Any]]) -> bool:
    """Whether `out` may share memory with an input read in place (inputs are
    (object, Matrix or Tensor) pairs). With numpy every pair is asked exactly
    (a buffer through a numpy view of its memory: a strided memoryview out
    has exact bounds, interleaved columns do not overlap). Without numpy,
    byte spans are compared, out_span() giving out's memory or None when it
    cannot be told (then the answer is yes: refusing is safer than a wrong
    result)."""
    out_array = _as_array(out)
    for obj, operand in inputs:
        if not operand.zero_copy:
            continue
        obj_array = _as_array(obj) if out_array is not None else None
        if obj_array is not None:
            if not np.may_share_memory(out_array, obj_array):
                continue
            try:
                if np.shares_memory(out_array, obj_array, max_work=100_000):
                    return True
            except _TOO_HARD:   # undecided within the work limit: refuse
                return True
            continue
        span = out_span()
        if span is None:
            return True
        lo, hi = span
        ilo, ihi = operand.byte_span()
        if lo < ihi and ilo < hi:
            return True
    return False


def copy_into(view: memoryview, source: memoryview) -> None:
    """Copies the float32 buffer `source` into the strided buffer `view` of
    the same shape (an out= the kernels could not write directly)."""
    if np is not None:
        np.copyto(np.asarray(view), np.asarray(source))
        return
    for index in itertools.product(*(range(s) for s in view.shape)):
        view[index] = source[index]


class Output:
    """Where the C library writes an (m, n) result, and what the caller gets back."""

    def __init__(self, out: Any, m: int, n: int, numpy_result: bool,
                 inputs: list[tuple[Any, Matrix]], what: str) -> None:
        self._copy_back = None
        if out is None:
            # numpy's MemoryError does not say what for, ctypes' says nothing.
            try:
                if numpy_result:
                    self.result = np.empty((m, n), dtype=np.float32)
                    self.matrix = Matrix(numpy_address(self.result), m, n, n, 1, self.result,
                                         True)
                else:
                    storage = (ctypes.c_float * n * m)()
                    view = memoryview(storage)
                    self.result = view.cast("B").cast("f", (m, n)) if m and n else view
                    self.matrix = Matrix(ctypes.addressof(storage), m, n, n, 1, storage, True)
            except MemoryError:
                raise no_memory(what, "the output", (m, n)) from None
            return
        self.result = out
        if is_numpy(out):
            if out.dtype != np.float32:
                raise TypeError(f"{what}: out must have dtype float32, got {out.dtype}")
            if out.shape != (m, n):
                raise ValueError(f"{what}: out has shape {out.shape}, the result has shape {(m, n)}")
            if not out.flags.writeable:
                raise ValueError(f"{what}: out is read-only")
            direct = out.strides[1] == ITEM and out.strides[0] % ITEM == 0 and out.flags.aligned
            if direct or m * n == 0:
                self.matrix = Matrix(numpy_address(out), m, n,
                                     out.strides[0] // ITEM if direct else n, 1, out, True)
            else:  # the kernels write unit-stride rows: go through a temporary
                try:
                    temp = np.empty((m, n), dtype=np.float32)
                except MemoryError:
                    raise no_memory(what, "a temporary for out", (m, n)) from None
                self.matrix = Matrix(numpy_address(temp), m, n, n, 1, temp, True)
                self._copy_back = lambda: np.copyto(out, temp)
        else:
            view = _float_view(out, f"{what}: out")
            if tuple(view.shape) != (m, n):
                raise ValueError(f"{what}: out has shape {tuple(view.shape)}, "
                                 f"the result has shape {(m, n)}")
            if view.readonly:
                raise ValueError(f"{what}: out is read-only")
            if view.c_contiguous:
                self.matrix = Matrix(_address(view), m, n, n, 1, view, True)
            else:   # strided: the kernels write a temporary, copied into out at the end
                try:
                    storage = (ctypes.c_float * max(m * n, 1))()
                except MemoryError:
                    raise no_memory(what, "a temporary for out", (m, n)) from None
                temp = memoryview(storage).cast("B").cast("f", (m, n))
                self.matrix = Matrix(ctypes.addressof(storage), m, n, n, 1, storage, True)
                self._copy_back = lambda: copy_into(view, temp)
        # out's own memory, not a temporary's: that is what must not overlap an input.
        out_span = (lambda: numpy_span(out)) if is_numpy(out) else (lambda: buffer_span(view))
        if overlaps(out, out_span, inputs):
            raise ValueError(f"{what}: out overlaps an input; pass a separate array")

    def finish(self) -> Any:
        if self._copy_back is not None:
            self._copy_back()
        return self.result
