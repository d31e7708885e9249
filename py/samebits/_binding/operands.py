"""Turns user arrays into what the C library reads and writes: one Operand type
(an address, a shape and element strides) for matrices and N-d tensors alike.

Inputs are numpy float32 arrays (when numpy is importable) or, without numpy,
any object with the buffer protocol and format 'f' (a memoryview cast to a
shape, a ctypes array, ...). An operation either reads strided operands in
place (matmul: any element-aligned strides) or wants them dense (the layers:
C-contiguous); anything the C side cannot address is copied once.

Outputs (`Output`) are a fresh numpy array or ctypes-backed memoryview, or
the caller's `out`, written in place when the operation can write its
layout, else through a temporary that `finish()` copies back. An `out` that
shares memory with an input read in place is refused.
"""
from __future__ import annotations

import ctypes
import itertools
import struct
import sys
from typing import TYPE_CHECKING, Any, Callable, Optional, Sequence, cast

from .args import no_memory

try:
    import numpy as np
except ImportError:  # Pyodide without numpy loaded
    np = None  # type: ignore[assignment]  # optional: every use checks `np is not None` first

if TYPE_CHECKING:
    import numpy.typing as npt

_TOO_HARD = getattr(getattr(np, "exceptions", np), "TooHardError", Exception) if np else Exception
FLOAT_FORMATS = {"f", "=f", "@f", "<f" if sys.byteorder == "little" else ">f"}
ITEM = 4
_FLOAT32 = np.dtype(np.float32) if np is not None else None
_char_from_buffer = ctypes.c_char.from_buffer
_addressof = ctypes.addressof


def prod(shape: Sequence[int]) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


def c_strides(shape: Sequence[int]) -> tuple[int, ...]:
    """Element strides of a C-contiguous array of `shape`."""
    strides, step = [], 1
    for s in reversed(shape):
        strides.append(step)
        step *= max(s, 1)
    return tuple(reversed(strides))


class Operand:
    """A float32 array as the C library sees it."""

    __slots__ = ("ptr", "shape", "strides", "keep", "zero_copy")

    def __init__(self, ptr: int, shape: tuple[int, ...], strides: tuple[int, ...], keep: Any,
                 zero_copy: bool) -> None:
        self.ptr = ptr                  # address of element (0, ..., 0); 0 when empty
        self.shape = shape
        self.strides = strides          # in elements
        self.keep = keep                # the object that owns the memory, alive for the call
        self.zero_copy = zero_copy      # ptr points into the caller's memory

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return prod(self.shape)

    @property
    def c_contiguous(self) -> bool:
        return self.size == 0 or all(st == c for s, st, c in
                                     zip(self.shape, self.strides, c_strides(self.shape)) if s > 1)

    def byte_span(self) -> tuple[int, int]:
        """[lo, hi) of the bytes the operand can touch; empty when it has no element."""
        if self.size == 0:
            return (0, 0)
        lo = hi = self.ptr
        for extent, stride in zip(self.shape, self.strides):
            reach = (extent - 1) * stride * ITEM
            lo, hi = (lo + reach, hi) if reach < 0 else (lo, hi + reach)
        return (lo, hi + ITEM)

    def __repr__(self) -> str:
        return (f"Operand(ptr=0x{self.ptr:x}, shape={self.shape}, strides={self.strides}, "
                f"zero_copy={self.zero_copy})")


def is_numpy(x: Any) -> bool:
    return np is not None and isinstance(x, np.ndarray)


# The data pointer of a numpy array, read from the array object itself:
# numpy's public PyArrayObject struct is the object header, then `char *data`,
# and CPython's id() is the object's address. data_address(x) reads that word
# with struct from a memoryview spanning the process's address space (~0.25
# us; a ctypes object at the address ~0.5 us, ndarray.ctypes.data ~1.5 us on
# the development machine). Checked at import against ndarray.ctypes.data;
# where it does not hold (another Python, a 32-bit build, no numpy),
# DATA_FIELD_HOLDS is false and numpy is asked instead.
DATA_OFFSET = object.__basicsize__


def _address_reader() -> Optional[Callable[[Any], int]]:
    if np is None or sys.implementation.name != "cpython" or sys.maxsize < 2**63 - 1:
        return None
    try:
        memory = memoryview((ctypes.c_char * (1 << 47)).from_address(0)).cast("B")
        unpack = struct.Struct("=Q").unpack_from
        reader: Callable[[Any], int] = lambda x: unpack(memory, id(x) + DATA_OFFSET)[0]   # noqa: E731
        base = np.zeros((4, 6), np.float32)
        probes = (base, base[1:, 2:], base[::-1, ::2], np.empty((0, 3), np.float32))
        return reader if all(reader(x) == x.ctypes.data for x in probes) else None
    except (ValueError, TypeError, OverflowError, MemoryError, struct.error):
        return None


# None where DATA_FIELD_HOLDS is false; only called where it holds.
data_address = cast("Callable[[Any], int]", _address_reader())
DATA_FIELD_HOLDS = data_address is not None


def numpy_address(x: npt.NDArray[Any]) -> int:
    """Address of x's first element."""
    if DATA_FIELD_HOLDS:
        return data_address(x)
    try:   # writable C-contiguous arrays; refuses the others (read-only, strided, empty)
        # numpy's stubs give ndarray __buffer__ on Python >= 3.12 only; it has the buffer protocol
        return _addressof(_char_from_buffer(x))   # type: ignore[arg-type]
    except (TypeError, ValueError, BufferError):
        return x.ctypes.data


def _ndim_ok(ndim: int, want: Optional[int], min_ndim: int) -> bool:
    return ndim == want if want is not None else ndim >= min_ndim


def _ndim_error(name: str, shape: tuple[int, ...], want: Optional[int], min_ndim: int) -> ValueError:
    rule = f"{want}-D" if want is not None else f"at least {min_ndim}-D"
    return ValueError(f"{name} must be {rule}, got shape {shape}")


def _from_numpy(x: npt.NDArray[Any], name: str, ndim: Optional[int], min_ndim: int,
                dense: bool) -> Operand:
    if x.dtype is not _FLOAT32 and x.dtype != _FLOAT32:
        hint = " (convert with .astype(np.float32))" if x.dtype.kind in "fiub" else ""
        raise TypeError(f"{name} must have dtype float32, got {x.dtype}{hint}")
    if not _ndim_ok(x.ndim, ndim, min_ndim):
        raise _ndim_error(name, x.shape, ndim, min_ndim)
    address = numpy_address(x)
    if dense:
        if x.flags.c_contiguous and x.flags.aligned:
            return Operand(address, x.shape, c_strides(x.shape), x, True)
    else:
        misaligned = address % ITEM
        for st in x.strides:
            misaligned |= st % ITEM
        if not misaligned:
            return Operand(address, x.shape, tuple([st // ITEM for st in x.strides]), x, True)
    try:
        copy = np.array(x, order="C", copy=True)   # a fresh, aligned copy the C side can read
    except MemoryError:
        raise no_memory("samebits", f"a copy of {name}", x.shape) from None
    return Operand(numpy_address(copy), copy.shape, c_strides(copy.shape), copy, False)


def float_view(x: Any, name: str, ndim: Optional[int] = None, min_ndim: int = 0) -> memoryview:
    """x as a memoryview of float32 (with `ndim` dimensions, or at least
    `min_ndim`), or a TypeError / ValueError naming what is wrong."""
    try:
        view = memoryview(x)
    except TypeError:
        kinds = "a float32 numpy array or " if np is not None else ""
        raise TypeError(f"{name} must be {kinds}an object with the buffer protocol "
                        f"(format 'f'), got {type(x).__name__}") from None
    if view.format not in FLOAT_FORMATS:
        raise TypeError(f"{name} must hold float32 (buffer format 'f'), got format {view.format!r}")
    if not _ndim_ok(view.ndim, ndim, min_ndim):
        raise _ndim_error(name, view_shape(view), ndim, min_ndim)
    return view


def view_shape(view: memoryview) -> tuple[int, ...]:
    """tuple(view.shape). typeshed has memoryview.shape Optional; CPython gives
    a tuple for every view (() for a 0-d one)."""
    return tuple(cast("tuple[int, ...]", view.shape))


def view_address(view: memoryview) -> int:
    """Address of a writable C-contiguous buffer's first byte."""
    if view.nbytes == 0:
        return 0
    return ctypes.addressof((ctypes.c_char * view.nbytes).from_buffer(view))


def _from_buffer(x: Any, name: str, ndim: Optional[int], min_ndim: int) -> Operand:
    view = float_view(x, name, ndim, min_ndim)
    shape = view_shape(view)
    if view.c_contiguous and not view.readonly:
        return Operand(view_address(view), shape, c_strides(shape), view, True)
    # Read-only (no safe way to take its address from Python) or strided: one
    # C-contiguous copy of the logical elements.
    n = prod(shape)
    try:
        copy = (ctypes.c_float * max(n, 1))()
    except MemoryError:
        raise no_memory("samebits", f"a copy of {name}", shape) from None
    if n:
        ctypes.memmove(copy, view.tobytes(), n * ITEM)
    return Operand(ctypes.addressof(copy), shape, c_strides(shape), copy, False)


def as_operand(x: Any, name: str, ndim: Optional[int] = None, *, min_ndim: int = 0,
               dense: bool = False) -> Operand:
    """A read-only float32 operand, zero-copy where the C side can address it.

    ndim: the number of dimensions required (None: at least min_ndim).
    dense: the operation reads C-contiguous memory only (else any
    element-aligned strides are read in place). TypeError for a wrong dtype or
    format or a non-buffer object, ValueError for the wrong number of
    dimensions, each naming the argument.
    """
    if is_numpy(x):
        return _from_numpy(x, name, ndim, min_ndim, dense)
    return _from_buffer(x, name, ndim, min_ndim)


def merge_dims(shape: Sequence[int], xs: Sequence[int], ys: Sequence[int]
               ) -> tuple[list[int], list[int], list[int]]:
    """(shape, xs, ys) of an elementwise walk over two strided operands with
    extent-1 dimensions dropped and neighbours that both step through as one
    merged, so that rows are as long as they can be (at least one
    dimension). Which element meets which does not change."""
    dims = [(n, a, b) for n, a, b in zip(shape, xs, ys) if n != 1]
    if not dims:
        return [1], [0], [0]
    merged = [list(dims[0])]
    for n, a, b in dims[1:]:
        pn, pa, pb = merged[-1]
        if pa == a * n and pb == b * n:
            merged[-1] = [pn * n, a, b]
        else:
            merged.append([n, a, b])
    return [m[0] for m in merged], [m[1] for m in merged], [m[2] for m in merged]


def same_elements(out: Any, x: Any) -> bool:
    """out is x, or a numpy array over exactly x's elements in x's layout:
    the overlap an operation that reads each element before writing its own
    output allows (in place)."""
    if out is x:
        return True
    if is_numpy(out) and is_numpy(x):
        same: bool = (out.shape == x.shape and out.strides == x.strides and out.size > 0
                      and out.__array_interface__["data"][0] == x.__array_interface__["data"][0])
        return same
    return False


# ---- outputs ----------------------------------------------------------------

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


def numpy_span(a: npt.NDArray[Any]) -> tuple[int, int]:
    """[lo, hi) of the bytes a numpy array covers; empty when it has no element."""
    if a.size == 0:
        return (0, 0)
    utils = getattr(np.lib, "array_utils", None)
    # np.byte_bounds: numpy < 2, where np.lib.array_utils is missing (numpy 2's stubs lack it)
    bounds: Callable[[Any], tuple[int, int]] = (
        utils.byte_bounds if utils is not None else np.byte_bounds)   # type: ignore[attr-defined]
    return bounds(a)


def buffer_span(view: memoryview) -> tuple[int, int] | None:
    """Bytes a writable buffer may touch, for when numpy is not there to ask:
    exact when C-contiguous, else the whole exporting buffer (conservative);
    None when it cannot be told."""
    if view.nbytes == 0:
        return (0, 0)
    if view.c_contiguous:
        lo = view_address(view)
        return (lo, lo + view.nbytes)
    try:
        base = memoryview(view.obj)
        if base.readonly or not base.c_contiguous:
            return None
        lo = view_address(base)
        return (lo, lo + base.nbytes)
    except (TypeError, ValueError, BufferError):
        return None


def overlaps(out: Any, out_span: Callable[[], tuple[int, int] | None],
             inputs: Sequence[tuple[Any, Operand]]) -> bool:
    """Whether `out` may share memory with an input read in place (inputs are
    (object, Operand) pairs). With numpy every pair is asked exactly (a buffer
    through a numpy view of its memory: a strided memoryview out has exact
    bounds, interleaved columns do not overlap). Without numpy, byte spans are
    compared, out_span() giving out's memory or None when it cannot be told
    (then the answer is yes: refusing is safer than a wrong result)."""
    out_array = _as_array(out)
    for obj, operand in inputs:
        if not operand.zero_copy:
            continue
        obj_array = _as_array(obj) if out_array is not None else None
        if obj_array is not None:
            if not np.may_share_memory(out_array, obj_array):
                continue
            try:
                # numpy's stub allows max_work -1 or 0 only; a positive bound is documented
                if np.shares_memory(out_array, obj_array,
                                    max_work=100_000):   # type: ignore[arg-type]
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


def dense_layout(operand: Operand) -> bool:
    """The layers write dense C order only."""
    return operand.c_contiguous


class Output:
    """Where the C library writes a float32 result of `shape`, and what the
    caller gets back (`finish()`).

    writable(operand) says whether the operation can write a layout in place
    (default: dense C order); `out` in any other layout is written through a
    C-contiguous temporary that finish() copies into it.
    """

    __slots__ = ("result", "operand", "_copy_back")

    def __init__(self, out: Any, shape: Sequence[int], numpy_result: bool,
                 inputs: Sequence[tuple[Any, Operand]], what: str,
                 writable: Callable[[Operand], bool] = dense_layout) -> None:
        if type(shape) is not tuple:
            shape = tuple(int(s) for s in shape)
        self._copy_back: Optional[Callable[[], Any]] = None
        if out is None:
            self.result, self.operand = self._fresh(shape, numpy_result, what, "the output")
            return
        self.result = out
        if is_numpy(out):
            if out.dtype is not _FLOAT32 and out.dtype != _FLOAT32:
                raise TypeError(f"{what}: out must have dtype float32, got {out.dtype}")
            if out.shape != shape:
                raise ValueError(f"{what}: out has shape {out.shape}, the result has shape {shape}")
            flags = out.flags
            if not flags.writeable:
                raise ValueError(f"{what}: out is read-only")
            address = numpy_address(out) if out.size else 0
            direct = None
            misaligned = address % ITEM
            for st in out.strides:
                misaligned |= st % ITEM
            if not misaligned:
                direct = Operand(address, shape, tuple([st // ITEM for st in out.strides]), out,
                                 True)
            if direct is not None and (out.size == 0 or writable(direct)):
                self.operand = direct
            else:   # a layout the kernels cannot write: through a temporary
                temp, self.operand = self._fresh(shape, True, what, "a temporary for out")
                self._copy_back = lambda: np.copyto(out, temp)
            out_span: Callable[[], tuple[int, int] | None] = lambda: numpy_span(out)   # noqa: E731
        else:
            view = float_view(out, f"{what}: out", len(shape))
            if view_shape(view) != shape:
                raise ValueError(f"{what}: out has shape {view_shape(view)}, "
                                 f"the result has shape {shape}")
            if view.readonly:
                raise ValueError(f"{what}: out is read-only")
            if view.c_contiguous:
                self.operand = Operand(view_address(view), shape, c_strides(shape), view, True)
            else:   # strided: the kernels write a temporary, copied into out at the end
                temp, self.operand = self._fresh(shape, False, what, "a temporary for out")
                self._copy_back = lambda: copy_into(view, temp)
            out_span = lambda: buffer_span(view)   # noqa: E731
        # out's own memory, not a temporary's: that is what must not overlap an input.
        if overlaps(out, out_span, inputs):
            raise ValueError(f"{what}: out overlaps an input; pass a separate array")

    @staticmethod
    def _fresh(shape: tuple[int, ...], numpy_result: bool, what: str,
               thing: str) -> tuple[Any, Operand]:
        """A new C-contiguous result: (what the caller sees, its Operand).
        numpy's MemoryError does not say what for, ctypes' says nothing."""
        try:
            if numpy_result:
                array = np.empty(shape, dtype=np.float32)
                return array, Operand(numpy_address(array) if array.size else 0, shape,
                                      c_strides(shape), array, True)
            storage_type: type[ctypes.c_float] | type[ctypes.Array[Any]] = ctypes.c_float
            for s in reversed(shape):
                storage_type = storage_type * s
            storage = storage_type()
            view = memoryview(storage)
            result = view.cast("B").cast("f", shape) if prod(shape) else view
            return result, Operand(ctypes.addressof(storage), shape, c_strides(shape), storage,
                                   True)
        except MemoryError:
            raise no_memory(what, thing, shape) from None

    @property
    def ptr(self) -> int:
        return self.operand.ptr

    def finish(self) -> Any:
        """Copies a temporary back into `out` where one was used; returns the result."""
        if self._copy_back is not None:
            self._copy_back()
        return self.result
