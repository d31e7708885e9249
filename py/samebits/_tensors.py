"""N-d C-contiguous float32 operands (NCHW tensors, weights, biases) for the C library.

The counterpart of _operands.py for the layers (convolution, pooling): the C
kernels read inputs and write outputs as dense C-contiguous arrays, so an
operand is a pointer and a shape, never strides.

Inputs: numpy float32 arrays (C-contiguous aligned ones are read in place,
any other layout is copied once) or, without numpy, any buffer-protocol object
of format 'f' with the right number of dimensions (a memoryview cast to a
shape, a ctypes array; writable C-contiguous ones are read in place, read-only
or strided ones are copied).

Outputs (`output_nd`): a fresh numpy array or ctypes-backed memoryview, or the
caller's `out`, written in place when C-contiguous, else through a temporary
that `finish()` copies back.
"""
from __future__ import annotations

import ctypes
from typing import Any, Sequence

from ._args import no_memory
from ._operands import (ITEM, _address, _float_view, buffer_span, copy_into, is_numpy, np,
                        numpy_address, numpy_span, overlaps)

__all__ = ["Tensor", "Tensor4", "as_input_nd", "as_nchw_input", "as_contiguous_input",
           "output_nd", "OutputND"]

_FLOAT32 = np.dtype(np.float32) if np is not None else None


def _prod(shape: Sequence[int]) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


class Tensor:
    """A C-contiguous float32 operand as the C library sees it: ptr and shape."""

    __slots__ = ("ptr", "shape", "keep", "zero_copy")

    def __init__(self, ptr: int, shape: tuple[int, ...], keep: Any, zero_copy: bool) -> None:
        self.ptr = ptr                  # address of the first element (0 when empty)
        self.shape = shape              # tuple of ints, C order
        self.keep = keep                # the object that owns the memory, alive for the call
        self.zero_copy = zero_copy      # ptr points into the caller's memory

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return _prod(self.shape)

    def byte_span(self) -> tuple[int, int]:
        """[lo, hi) of the bytes the tensor covers; empty when it has no element."""
        n = self.size
        return (0, 0) if n == 0 else (self.ptr, self.ptr + n * ITEM)

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(ptr=0x{self.ptr:x}, shape={self.shape}, "
                f"zero_copy={self.zero_copy})")


class Tensor4(Tensor):
    """A 4-D (NCHW) Tensor: shape is (n, c, h, w)."""

    __slots__ = ()


def _make(ptr: int, shape: tuple[int, ...], keep: Any, zero_copy: bool) -> Tensor:
    cls = Tensor4 if len(shape) == 4 else Tensor
    return cls(ptr, shape, keep, zero_copy)


def _from_numpy(x: "np.ndarray", name: str, ndim: int) -> Tensor:
    if x.dtype is not _FLOAT32 and x.dtype != _FLOAT32:
        raise TypeError(f"{name} must have dtype float32, got {x.dtype}")
    if x.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-D, got shape {x.shape}")
    flags = x.flags
    if flags.c_contiguous and flags.aligned:
        return _make(numpy_address(x), x.shape, x, True)
    copy = np.array(x, order="C", copy=True)   # fresh, aligned, C-contiguous
    return _make(numpy_address(copy), copy.shape, copy, False)


def _from_buffer(x: Any, name: str, ndim: int) -> Tensor:
    view = _float_view(x, name, ndim)
    shape = tuple(view.shape)
    if view.c_contiguous and not view.readonly:
        return _make(_address(view), shape, view, True)
    # Read-only (no safe way to take its address from Python) or strided: one
    # C-contiguous copy of the logical elements.
    n = _prod(shape)
    copy = (ctypes.c_float * max(n, 1))()
    if n:
        ctypes.memmove(copy, view.tobytes(), n * ITEM)
    return _make(ctypes.addressof(copy), shape, copy, False)


def as_input_nd(x: Any, name: str, ndim: int) -> Tensor:
    """A read-only C-contiguous float32 operand of `ndim` dimensions.

    TypeError for a wrong dtype/format or a non-buffer object (naming it),
    ValueError for the wrong number of dimensions (giving the shape).
    Zero-copy where the C side can address the caller's memory directly.
    """
    if is_numpy(x):
        return _from_numpy(x, name, ndim)
    return _from_buffer(x, name, ndim)


def as_nchw_input(x: Any, name: str) -> Tensor4:
    """A 4-D (N, C, H, W) float32 input; see as_input_nd."""
    return as_input_nd(x, name, 4)  # type: ignore[return-value]


# The name the task list uses; same function.
as_contiguous_input = as_input_nd


class OutputND:
    """Where the C library writes a C-contiguous result of `shape`, and what
    the caller gets back (`finish()`)."""

    __slots__ = ("result", "tensor", "_copy_back")

    def __init__(self, out: Any, shape: Sequence[int], numpy_result: bool,
                 inputs: Sequence[tuple[Any, Tensor]], what: str) -> None:
        if type(shape) is not tuple:
            shape = tuple(int(s) for s in shape)
        self._copy_back = None
        if out is None:
            # numpy's MemoryError does not say what for, ctypes' says nothing.
            try:
                if numpy_result:
                    self.result = np.empty(shape, dtype=np.float32)
                    self.tensor = _make(numpy_address(self.result), shape, self.result, True)
                else:
                    storage = ctypes.c_float
                    for s in reversed(shape):
                        storage = storage * s
                    storage = storage()
                    view = memoryview(storage)
                    self.result = view.cast("B").cast("f", shape) if _prod(shape) else view
                    self.tensor = _make(ctypes.addressof(storage), shape, storage, True)
            except MemoryError:
                raise no_memory(what, "the output", shape) from None
            return
        self.result = out
        n = _prod(shape)
        if is_numpy(out):
            if out.dtype != np.float32:
                raise TypeError(f"{what}: out must have dtype float32, got {out.dtype}")
            if out.shape != shape:
                raise ValueError(f"{what}: out has shape {out.shape}, the result has shape {shape}")
            if not out.flags.writeable:
                raise ValueError(f"{what}: out is read-only")
            if (out.flags.c_contiguous and out.flags.aligned) or n == 0:
                self.tensor = _make(numpy_address(out), shape, out, True)
            else:   # the kernels write dense C order: go through a temporary
                try:
                    temp = np.empty(shape, dtype=np.float32)
                except MemoryError:
                    raise no_memory(what, "a temporary for out", shape) from None
                self.tensor = _make(numpy_address(temp), shape, temp, True)
                self._copy_back = lambda: np.copyto(out, temp)
            out_span = lambda: numpy_span(out)
        else:
            view = _float_view(out, f"{what}: out", len(shape))
            if tuple(view.shape) != shape:
                raise ValueError(f"{what}: out has shape {tuple(view.shape)}, "
                                 f"the result has shape {shape}")
            if view.readonly:
                raise ValueError(f"{what}: out is read-only")
            if view.c_contiguous:
                self.tensor = _make(_address(view), shape, view, True)
            else:
                try:
                    storage = (ctypes.c_float * max(n, 1))()
                except MemoryError:
                    raise no_memory(what, "a temporary for out", shape) from None
                temp = memoryview(storage).cast("B").cast("f", shape)
                self.tensor = _make(ctypes.addressof(storage), shape, storage, True)
                self._copy_back = lambda: copy_into(view, temp)
            out_span = lambda: buffer_span(view)
        if overlaps(out, out_span, inputs):
            raise ValueError(f"{what}: out overlaps an input; pass a separate array")

    @property
    def ptr(self) -> int:
        return self.tensor.ptr

    def finish(self) -> Any:
        """Copies a temporary back into `out` where one was used; returns the result."""
        if self._copy_back is not None:
            self._copy_back()
        return self.result


def output_nd(out: Any, shape: Sequence[int], numpy_result: bool,
              inputs: Sequence[tuple[Any, Tensor]], what: str) -> OutputND:
    """The destination of a C-contiguous float32 result of `shape`.

    out=None: a new numpy array (numpy_result) or a memoryview of format 'f'
    over ctypes storage (for an empty result, the view of the ctypes array).
    Otherwise `out` is checked: float32 (TypeError), exactly `shape`,
    writable, not overlapping any zero-copy input (ValueError); a layout the
    kernels cannot write directly goes through a temporary that finish()
    copies back.
    """
    return OutputND(out, shape, numpy_result, inputs, what)
