"""The runner's tensors.

- Floats: a float32 tensor. Its `data` is what the samebits kernels take and
  give: a numpy array when numpy is there, else a C-ordered memoryview of
  format 'f' with the tensor's shape; None when the tensor has no element
  (a memoryview cannot have a zero in its shape).
- Ints: an integer or bool tensor as a flat Python list in C order, with
  its ONNX element type. The shape subgraphs that exporters emit (Shape,
  Gather, Concat, Range, ...) are small, and Python's ints are exact, so
  they are evaluated here, in pure Python, the same everywhere.

Conversions between the two (Cast) and constants from TensorProto live here
too. Nothing here does float arithmetic: every float32 result comes from a
samebits kernel or is a copy of input bits.
"""
from __future__ import annotations

import ctypes
from array import array
import math
import struct
import sys
from pathlib import Path
from typing import Any, Optional, Sequence, Union

from . import _model as M

try:
    import numpy as np
except ImportError:   # Pyodide without numpy
    np = None  # type: ignore[assignment]  # optional: every use checks `np is not None` first

INT_TYPES = {M.INT64: "q", M.INT32: "i", M.INT16: "h", M.INT8: "b", M.UINT8: "B",
             M.UINT16: "H", M.UINT32: "I", M.UINT64: "Q", M.BOOL: "?"}
INT_RANGES = {M.INT64: (-(1 << 63), (1 << 63) - 1), M.INT32: (-(1 << 31), (1 << 31) - 1),
              M.INT16: (-(1 << 15), (1 << 15) - 1), M.INT8: (-128, 127), M.UINT8: (0, 255),
              M.UINT16: (0, 65535), M.UINT32: (0, (1 << 32) - 1), M.UINT64: (0, (1 << 64) - 1),
              M.BOOL: (0, 1)}


def size_of(shape: Sequence[int]) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


class Floats:
    """A float32 tensor (see the module docstring)."""

    __slots__ = ("shape", "data")

    def __init__(self, shape: tuple[int, ...], data: Any) -> None:
        self.shape = shape
        # numpy array or memoryview (see the module docstring); None when empty
        self.data: Any = data if size_of(shape) else None

    @staticmethod
    def wrap(data: Any) -> "Floats":
        """A samebits result (numpy array or shaped memoryview)."""
        return Floats(tuple(int(s) for s in data.shape), data)

    @property
    def size(self) -> int:
        return size_of(self.shape)

    def __repr__(self) -> str:
        return f"Floats{self.shape}"


class Ints:
    """An integer or bool tensor: a flat list in C order."""

    __slots__ = ("shape", "values", "dtype")

    def __init__(self, shape: tuple[int, ...], values: list[int], dtype: int = M.INT64) -> None:
        if len(values) != size_of(shape):
            raise ValueError(f"internal: {len(values)} values for shape {shape}")
        self.shape = shape
        self.values = values
        self.dtype = dtype

    @property
    def size(self) -> int:
        return len(self.values)

    def __repr__(self) -> str:
        return f"Ints[{M.DTYPE_NAMES.get(self.dtype, self.dtype)}]{self.shape}"


Value = Union[Floats, Ints]


# ---- float32 storage -------------------------------------------------------

def _memoryview_from_bytes(raw: Any, shape: tuple[int, ...]) -> memoryview[float]:
    """A new, aligned, writable C-ordered 'f' memoryview holding raw's bytes."""
    storage = (ctypes.c_float * size_of(shape))()
    ctypes.memmove(storage, bytes(raw), 4 * size_of(shape))
    view = memoryview(storage).cast("B")
    return view.cast("f", shape) if shape else view.cast("f", ())


def c_order(a: Any) -> Any:
    """A numpy array in C order (a copy only when it is not): unlike
    np.ascontiguousarray, a 0-d array stays 0-d."""
    a = np.asarray(a, dtype=np.float32)
    return a if a.flags.c_contiguous else a.copy(order="C")


def floats_from_bytes(raw: Any, shape: tuple[int, ...]) -> Floats:
    """A Floats holding a copy of little-endian float32 bytes."""
    if size_of(shape) == 0:
        return Floats(shape, None)
    if sys.byteorder != "little":   # every platform samebits builds for is little-endian
        raise ValueError("big-endian hosts are not supported")
    if np is not None:
        return Floats(shape, np.frombuffer(bytes(raw), dtype="<f4").reshape(shape).copy())
    return Floats(shape, _memoryview_from_bytes(raw, shape))


def floats_from_list(values: Sequence[float], shape: tuple[int, ...]) -> Floats:
    """float32 values (each rounded to float32 once, as struct does)."""
    return floats_from_bytes(struct.pack(f"<{len(values)}f", *values), shape)


def float_bytes(t: Floats) -> bytes:
    """The tensor's float32 bytes in C order."""
    if t.data is None:
        return b""
    if np is not None and isinstance(t.data, np.ndarray):
        raw: bytes = c_order(t.data).tobytes()
        return raw
    return memoryview(t.data).tobytes()


def float_list(t: Floats) -> list[float]:
    raw = float_bytes(t)
    return list(struct.unpack(f"<{len(raw) // 4}f", raw))


def reshape(t: Floats, shape: tuple[int, ...]) -> Floats:
    """The same elements in C order under a new shape (a view where possible)."""
    if size_of(shape) != t.size:
        raise ValueError(f"cannot reshape {t.shape} to {shape}")
    if t.data is None:
        return Floats(shape, None)
    if np is not None and isinstance(t.data, np.ndarray):
        return Floats(shape, t.data.reshape(shape))
    view = memoryview(t.data)
    if not view.c_contiguous:
        view = memoryview(view.tobytes())
    flat = view.cast("B")
    return Floats(shape, flat.cast("f", shape) if shape else flat.cast("f", ()))


def full_floats(shape: tuple[int, ...], value: float) -> Floats:
    """A new tensor with every element float32(value)."""
    if size_of(shape) == 0:
        return Floats(shape, None)
    bits = struct.unpack("<I", struct.pack("<f", _to_float32(value)))[0]
    if np is not None:
        return Floats(shape, np.full(shape, bits, dtype=np.uint32).view(np.float32))
    t = empty_floats(shape)
    if bits:
        memoryview(t.data).cast("B").cast("I")[:] = array("I", [bits]) * t.size
    return t


def empty_floats(shape: tuple[int, ...]) -> Floats:
    """A new tensor whose elements are to be written (zeros without numpy)."""
    if size_of(shape) == 0:
        return Floats(shape, None)
    if np is not None:
        return Floats(shape, np.empty(shape, dtype=np.float32))
    storage = (ctypes.c_float * size_of(shape))()
    view = memoryview(storage).cast("B")
    return Floats(shape, view.cast("f", shape) if shape else view.cast("f", ()))


def float_bits(t: Floats) -> list[int]:
    """The elements' binary32 bit patterns (data movement without numpy keeps bits)."""
    raw = float_bytes(t)
    return list(struct.unpack(f"<{len(raw) // 4}I", raw))


def floats_from_bits(bits: Sequence[int], shape: tuple[int, ...]) -> Floats:
    return floats_from_bytes(struct.pack(f"<{len(bits)}I", *bits), shape)


# ---- integer tensors -------------------------------------------------------

def check_int_range(values: Sequence[int], dtype: int, what: str) -> None:
    lo, hi = INT_RANGES[dtype]
    for v in values:
        if not lo <= v <= hi:
            raise ValueError(f"{what}: value {v} does not fit {M.DTYPE_NAMES[dtype]}")


def wrap_int(v: int, dtype: int) -> int:
    """v reduced to dtype's range with two's complement wrap-around (what a
    C cast between integer types does)."""
    if dtype == M.BOOL:
        return 1 if v else 0
    lo, hi = INT_RANGES[dtype]
    span = hi - lo + 1
    return (v - lo) % span + lo


# ---- constants from TensorProto --------------------------------------------

def _external_bytes(t: M.Tensor, base_dir: Optional[Path], what: str) -> bytes:
    if base_dir is None:
        raise ValueError(f"{what}: tensor {t.name!r} keeps its data in an external file "
                         f"({t.external_data.get('location')!r}); load the model from its path")
    location = t.external_data.get("location")
    if not location:
        raise ValueError(f"{what}: tensor {t.name!r}: external data without a location")
    path = (base_dir / location).resolve()
    if base_dir.resolve() not in path.parents and path.parent != base_dir.resolve():
        raise ValueError(f"{what}: tensor {t.name!r}: external data {location!r} lies outside "
                         f"the model's directory")
    offset = int(t.external_data.get("offset", "0") or 0)
    length = t.external_data.get("length")
    with open(path, "rb") as f:
        f.seek(offset)
        data = f.read(int(length)) if length else f.read()
    return data


def from_proto(t: M.Tensor, what: str, base_dir: Optional[Path] = None) -> Value:
    """A runtime tensor from a TensorProto (initializer, Constant, attribute)."""
    shape = tuple(t.dims)
    for d in shape:
        if d < 0:
            raise ValueError(f"{what}: tensor {t.name!r} has a negative dimension {shape}")
    n = size_of(shape)
    if t.has_segment:
        raise ValueError(f"{what}: tensor {t.name!r} is segmented, which is not supported")
    raw = t.raw_data
    if t.data_location == 1:
        raw = memoryview(_external_bytes(t, base_dir, what))
    name = M.DTYPE_NAMES.get(t.data_type, str(t.data_type))
    if t.data_type == M.FLOAT:
        if raw is not None:
            if len(raw) != 4 * n:
                raise ValueError(f"{what}: tensor {t.name!r} of shape {shape} has {len(raw)} "
                                 f"bytes of float32 data, expected {4 * n}")
            return floats_from_bytes(raw, shape)
        if len(t.float_data) != n:
            raise ValueError(f"{what}: tensor {t.name!r} of shape {shape} has "
                             f"{len(t.float_data)} float values, expected {n}")
        return floats_from_list(t.float_data, shape)
    if t.data_type in (M.DOUBLE, M.FLOAT16, M.BFLOAT16):
        # Constants in other float types: converted once to float32 (round to
        # nearest), as ONNX Runtime does when a graph casts them; the node
        # that reads them must accept float32 (checked by the runner).
        if raw is not None:
            fmt = {M.DOUBLE: "d", M.FLOAT16: "e", M.BFLOAT16: None}[t.data_type]
            if fmt is None:
                values = [struct.unpack("<f", bytes(2) + bytes(raw[2 * i:2 * i + 2]))[0]
                          for i in range(n)]
            else:
                size = struct.calcsize(fmt)
                if len(raw) != size * n:
                    raise ValueError(f"{what}: tensor {t.name!r}: {len(raw)} bytes for {n} "
                                     f"{name} values")
                values = list(struct.unpack(f"<{n}{fmt}", raw))
        elif t.data_type == M.DOUBLE:
            values = list(t.double_data)
        else:   # float16/bfloat16 travel as their bits in int32_data
            fmt = "e" if t.data_type == M.FLOAT16 else None
            values = []
            for bits in t.int32_data:
                if fmt:
                    values.append(struct.unpack("<e", struct.pack("<H", bits & 0xFFFF))[0])
                else:
                    values.append(struct.unpack("<f", struct.pack("<I", (bits & 0xFFFF) << 16))[0])
        if len(values) != n:
            raise ValueError(f"{what}: tensor {t.name!r}: {len(values)} values for shape {shape}")
        return floats_from_list([_to_float32(v) for v in values], shape)
    if t.data_type in INT_TYPES:
        fmt = INT_TYPES[t.data_type]
        if raw is not None:
            size = struct.calcsize(fmt)
            if len(raw) != size * n:
                raise ValueError(f"{what}: tensor {t.name!r} of shape {shape} has {len(raw)} "
                                 f"bytes of {name} data, expected {size * n}")
            values = [int(v) for v in struct.unpack(f"<{n}{fmt}", raw)]
        elif t.data_type in (M.INT64,):
            values = list(t.int64_data)
        elif t.data_type in (M.UINT64, M.UINT32):
            values = list(t.uint64_data)
        else:
            values = list(t.int32_data)
        if len(values) != n:
            raise ValueError(f"{what}: tensor {t.name!r} of shape {shape} has {len(values)} "
                             f"{name} values, expected {n}")
        check_int_range(values, t.data_type, f"{what}: tensor {t.name!r}")
        return Ints(shape, values, t.data_type)
    raise ValueError(f"{what}: tensor {t.name!r} has element type {name}, which the runner "
                     f"does not support (float32, integer and bool tensors are)")


def _to_float32(v: float) -> float:
    """v rounded to float32 (inf where it overflows, as a C cast does)."""
    if math.isnan(v) or math.isinf(v):
        return v
    try:
        rounded: float = struct.unpack("<f", struct.pack("<f", v))[0]
        return rounded
    except OverflowError:
        # struct refuses values beyond float32's range that C would round:
        # the largest finite float32 plus half an ulp is the threshold
        limit = 3.4028235677973366e38
        if abs(v) < limit:
            return math.copysign(3.4028234663852886e38, v)
        return math.copysign(math.inf, v)
