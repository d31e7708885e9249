"""Helpers for tests that compare results across machines by their bits.

- ``digest(x)``: a SHA-256 of an array's dtype, shape and little-endian
  bytes in C order, the string to write down on one machine and compare on
  another (docs/testing.md gives the exact byte layout, so that any language
  can compute it).
- ``assert_same_bits(actual, desired)``: equality of every bit, where
  ``numpy.testing.assert_array_equal`` treats -0 and +0 as equal and any two
  NaNs as equal.
- ``portable_values(shape, seed)``: the portable test values of
  docs/test-values.md (the inputs of the hash suites), which every samebits
  build, the npm package's ``portableValues`` included, regenerates bit for
  bit. (Not named ``test_*``: pytest would collect it from a test module
  that imports it.)

Both take numpy arrays or, without numpy (Pyodide), any buffer-protocol
object (a memoryview of format 'f', for example). The pytest plugin
(``samebits.pytest_plugin``, fixture ``same_bits``) builds on them.
"""
from __future__ import annotations

import hashlib
import struct
import sys
from typing import Any

__all__ = ["digest", "assert_same_bits", "portable_values", "DIGEST_VERSION"]

DIGEST_VERSION = 1

# element type -> item size in bytes
_DTYPES = {"float16": 2, "float32": 4, "float64": 8, "int8": 1, "int16": 2, "int32": 4,
           "int64": 8, "uint8": 1, "uint16": 2, "uint32": 4, "uint64": 8, "bool": 1}
_UNSIGNED = {1: "B", 2: "H", 4: "I", 8: "Q"}   # item size -> its unsigned struct code
# the quiet NaN with the sign bit clear, and the masks that find any NaN
_CANONICAL_NAN = {"float16": (0x7E00, 0x7FFF, 0x7C00), "float32": (0x7FC00000, 0x7FFFFFFF,
                                                                  0x7F800000),
                  "float64": (0x7FF8000000000000, 0x7FFFFFFFFFFFFFFF, 0x7FF0000000000000)}
# buffer formats (struct codes) -> element type
_FORMATS = {"e": "float16", "f": "float32", "d": "float64", "b": "int8", "h": "int16",
            "i": "int32", "q": "int64", "B": "uint8", "H": "uint16", "I": "uint32",
            "Q": "uint64", "?": "bool"}


def _numpy() -> Any:
    return sys.modules.get("numpy")


def _view(x: Any, what: str) -> tuple[str, tuple[int, ...], bytes]:
    """(element type, shape, little-endian bytes in C order) of an array or buffer."""
    np = _numpy()
    if np is not None and isinstance(x, (np.ndarray, np.generic)):
        a = np.asarray(x)
        name = "bool" if a.dtype.kind == "b" else a.dtype.name
        if name not in _DTYPES:
            raise TypeError(f"{what}: dtype {a.dtype} is not supported (float16/32/64, "
                            f"integers and bool are)")
        # (not np.ascontiguousarray: it turns a 0-d array into a 1-d one)
        a = a.astype(a.dtype.newbyteorder("<") if a.dtype.itemsize > 1 else a.dtype,
                     order="C", copy=False)
        return name, tuple(int(d) for d in a.shape), a.tobytes()
    try:
        view = memoryview(x)
    except TypeError:
        raise TypeError(f"{what}: expected a numpy array or a buffer, got "
                        f"{type(x).__name__}") from None
    fmt = view.format
    order, code = (fmt[0], fmt[1:]) if fmt[:1] in "<>=!@" else ("@", fmt)
    if code == "l":
        code = "q" if view.itemsize == 8 else "i"
    elif code == "L":
        code = "Q" if view.itemsize == 8 else "I"
    name = _FORMATS.get(code)
    if name is None or view.itemsize != _DTYPES[name]:
        raise TypeError(f"{what}: buffer format {fmt!r} is not supported (float16/32/64, "
                        f"integers and bool are)")
    raw = view.tobytes()   # C order whatever the strides
    big = order in (">", "!") or (order in "@=" and sys.byteorder == "big")
    if big and view.itemsize > 1:
        n = len(raw) // view.itemsize
        raw = struct.pack(f"<{n}{_UNSIGNED[view.itemsize]}",
                          *struct.unpack(f">{n}{_UNSIGNED[view.itemsize]}", raw))
    return name, tuple(view.shape or ()), raw


def _canonical_nans(name: str, raw: bytes) -> bytes:
    """raw with every NaN of a float type replaced by the positive quiet NaN."""
    if name not in _CANONICAL_NAN:
        return raw
    canonical, magnitude, infinity = _CANONICAL_NAN[name]
    np = _numpy()
    if np is not None:
        bits = np.frombuffer(raw, dtype=f"<u{_DTYPES[name]}").copy()
        bits[(bits & magnitude) > infinity] = canonical
        return bytes(bits.tobytes())
    size = _DTYPES[name]
    n = len(raw) // size
    bits = list(struct.unpack(f"<{n}{_UNSIGNED[size]}", raw))
    return struct.pack(f"<{n}{_UNSIGNED[size]}",
                       *[canonical if (b & magnitude) > infinity else b for b in bits])


def digest(x: Any, *, canonical_nan: bool = True) -> str:
    """The SHA-256, as 64 hex digits, of x's element type, shape and values.

    The hashed bytes are ``b"samebits-digest-v1\\n"``, then
    ``"<dtype> <d0>,<d1>,...\\n"`` in ASCII (``"float32 2,3\\n"``; a 0-d array
    has an empty shape list), then the elements in C order as little-endian
    bytes. With ``canonical_nan`` (the default) every NaN of a float type is
    hashed as the positive quiet NaN (0x7FC00000 for float32), so that NaN
    payloads, which IEEE arithmetic does not pin down, do not count; -0 and
    +0 always differ.

    x: a numpy array (float16/32/64, integer or bool) or a buffer of such
    elements (memoryview formats 'e', 'f', 'd', integer codes, '?').
    """
    name, shape, raw = _view(x, "digest")
    if canonical_nan:
        raw = _canonical_nans(name, raw)
    h = hashlib.sha256(f"samebits-digest-v{DIGEST_VERSION}\n".encode())
    h.update(f"{name} {','.join(str(d) for d in shape)}\n".encode())
    h.update(raw)
    return h.hexdigest()


def portable_values(shape: int | tuple[int, ...], seed: int, *, nspecial: int = 0) -> Any:
    """Float32 test values of stream ``seed`` (docs/test-values.md) in ``shape``,
    C order: mostly in [-1, 1), one in 32 scaled by 2^-64, and ``nspecial``
    special values (NaNs, infinities, zeros, subnormals) at positions the
    stream chooses. A numpy array when numpy is loaded, else a memoryview of
    format 'f'. The same values as the npm package's
    ``portableValues(count, seed, nspecial)``.
    """
    from . import _testdata
    from ._binding import args as _args
    dims = (shape,) if isinstance(shape, int) else tuple(shape)
    dims = tuple(_args.as_int(d, f"shape[{i}]", "portable_values") for i, d in enumerate(dims))
    if any(d < 0 for d in dims):
        raise ValueError(f"portable_values: shape must not be negative, got {dims}")
    seed = _args.as_int(seed, "seed", "portable_values")
    nspecial = _args.as_int(nspecial, "nspecial", "portable_values")
    if not 0 <= seed <= 0xFFFFFFFF or not 0 <= nspecial <= 0xFFFFFFFF:
        raise ValueError(f"portable_values: seed and nspecial must be in [0, 2**32), got {seed} "
                         f"and {nspecial}")
    count = 1
    for d in dims:
        count *= d
    if count > 2 ** 31:
        raise ValueError(f"portable_values: {count} values is too many (at most 2**31)")
    buffer = _testdata.float_buffer(count, seed, nspecial)
    np = _numpy()
    if np is not None:
        return np.frombuffer(buffer, np.float32)[:count].reshape(dims).copy()
    flat = memoryview(buffer).cast("B")[: 4 * count].cast("f")
    return flat.cast("B").cast("f", dims) if dims else flat


def _index(flat: int, shape: tuple[int, ...]) -> tuple[int, ...]:
    out = []
    for d in reversed(shape):
        out.append(flat % d)
        flat //= d
    return tuple(reversed(out))


def _describe(name: str, chunk: bytes) -> str:
    """One element as decimal and hex."""
    size = _DTYPES[name]
    (bits,) = struct.unpack(f"<{_UNSIGNED[size]}", chunk)
    if name.startswith("float"):
        value = struct.unpack({"float16": "<e", "float32": "<f", "float64": "<d"}[name], chunk)[0]
        return f"{value!r} (0x{bits:0{2 * size}X})"
    if name == "bool":
        return repr(bool(bits))
    signed = name.startswith("int")
    value = bits - (1 << (8 * size)) if signed and bits >> (8 * size - 1) else bits
    return f"{value} (0x{bits:0{2 * size}X})"


def assert_same_bits(actual: Any, desired: Any, *, err_msg: str = "",
                     max_listed: int = 5) -> None:
    """Raise AssertionError unless actual and desired have the same element
    type, shape and bits: -0 differs from +0, and NaNs must have the same
    payload and sign. The message gives how many elements differ, the first
    ``max_listed`` of them by index, and both values in decimal and hex."""
    a_name, a_shape, a_raw = _view(actual, "assert_same_bits: actual")
    d_name, d_shape, d_raw = _view(desired, "assert_same_bits: desired")
    prefix = f"{err_msg}\n" if err_msg else ""
    if (a_name, a_shape) != (d_name, d_shape):
        raise AssertionError(f"{prefix}not the same bits: actual is {a_name} {a_shape}, "
                             f"desired {d_name} {d_shape}")
    if a_raw == d_raw:
        return
    size = _DTYPES[a_name]
    np = _numpy()
    if np is not None:
        ua = np.frombuffer(a_raw, dtype=f"<u{size}")
        ud = np.frombuffer(d_raw, dtype=f"<u{size}")
        differ = np.flatnonzero(ua != ud)
        count, first = int(differ.size), [int(i) for i in differ[:max_listed]]
    else:
        positions = [i for i in range(len(a_raw) // size)
                     if a_raw[i * size:(i + 1) * size] != d_raw[i * size:(i + 1) * size]]
        count, first = len(positions), positions[:max_listed]
    total = len(a_raw) // size
    lines = [f"{prefix}not the same bits: {count} of {total} elements differ "
             f"({a_name} {a_shape})"]
    for i in first:
        where = _index(i, a_shape) if a_shape else ()
        lines.append(f"  at {where}: actual {_describe(a_name, a_raw[i * size:(i + 1) * size])}"
                     f", desired {_describe(d_name, d_raw[i * size:(i + 1) * size])}")
    if count > len(first):
        lines.append(f"  ... and {count - len(first)} more")
    raise AssertionError("\n".join(lines))
