"""The integer arguments that reach the C library, checked in one place.

Every size and geometry argument (stride, padding, dilation, kernel size,
groups, tensor dimensions) must lie in [minimum, LIMIT]: the C side
(csrc/kernels/conv_args.c, csrc/kernels/maxpool.c) refuses anything above 2**40 with a bare
status code, and the int64 argument arrays would silently wrap values beyond
2**64, so Python checks first and names the argument. Quantities derived from
them (a window's extent, a padded size, an output's byte size) are checked
too, so that no size_t expression on the C side can wrap and nothing is
allocated for an output that cannot exist.

Integers follow operator.index (int, numpy integers, anything with
__index__), except bool and numpy.bool_ (integers.py). Every message starts with the operation's name
("conv2d: ...") and names the argument and the value.
"""
from __future__ import annotations

import numbers
import struct
from typing import Any, Optional, Sequence

from . import threads as _threads
from .integers import as_int as as_int

LIMIT = 1 << 40            # the C side's bound on every size argument
DERIVED_LIMIT = 1 << 62    # bound on a window's extent and on a padded size
MAX_BYTES = 1 << 62        # bound on an output's (or a packing's) byte size
FLOAT_BYTES = 4            # every tensor is float32
MAX_ELEMENTS = MAX_BYTES // FLOAT_BYTES
MAX_THREADS = _threads.MAX_THREADS   # thread caps above this are clamped


def _ints(value: Any, name: str, what: str, lengths: tuple[int, ...]) -> tuple[int, ...]:
    """An int as a 1-tuple, or a tuple/list of one of `lengths` ints."""
    if isinstance(value, (tuple, list)):
        if len(value) not in lengths:
            counts = " or ".join(str(n) for n in lengths)
            raise ValueError(f"{what}: {name} must be an int or a sequence of {counts} ints, "
                             f"got {len(value)} values: {tuple(value)!r}")
        return tuple(as_int(v, name, what, value) for v in value)
    return (as_int(value, name, what),)


def _in_range(values: tuple[int, ...], name: str, what: str, minimum: int, whole: Any) -> None:
    for v in values:
        if v < minimum:
            rule = "must not be negative" if minimum == 0 else f"must be at least {minimum}"
            raise ValueError(f"{what}: {name} {rule}, got {whole!r}")
        if v > LIMIT:
            raise ValueError(f"{what}: {name} is too large: {whole!r} (at most 2**40 = {LIMIT})")


def bounded(value: Any, name: str, what: str, minimum: int = 1) -> int:
    """One int in [minimum, 2**40] (groups)."""
    v = as_int(value, name, what)
    _in_range((v,), name, what, minimum, value)
    return v


def pair(value: Any, name: str, what: str, minimum: int = 1) -> tuple[int, int]:
    """An int or a pair (h, w) of ints, each in [minimum, 2**40] (stride,
    dilation, kernel_size)."""
    vals = _ints(value, name, what, (2,))
    _in_range(vals, name, what, minimum, value)
    return (vals[0], vals[0]) if len(vals) == 1 else (vals[0], vals[1])


def padding(value: Any, what: str) -> tuple[int, int, int, int]:
    """(top, bottom, left, right) from an int, a pair (h, w) or a 4-tuple, each in [0, 2**40]."""
    vals = _ints(value, "padding", what, (2, 4))
    _in_range(vals, "padding", what, 0, value)
    if len(vals) == 1:
        return (vals[0],) * 4
    if len(vals) == 2:
        return (vals[0], vals[0], vals[1], vals[1])
    return vals  # type: ignore[return-value]


def axis(value: Any, ndim: int, what: str, name: str = "axis") -> int:
    """An axis of an ndim-dimensional tensor (a 0-d one has one: 0), negative
    counting from the end, as a non-negative int; ValueError when out of range."""
    a = as_int(value, name, what)
    if not -max(ndim, 1) <= a < max(ndim, 1):
        raise ValueError(f"{what}: {name} {a} is out of range for a {ndim}-D input")
    return a % max(ndim, 1)


def float32_bits(value: Any, name: str, what: str) -> int:
    """A real number rounded to binary32, as its bits (the form the C side
    takes parameters in); TypeError for a non-number or bool, ValueError
    beyond float32's range."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{what}: {name} must be a real number, got {type(value).__name__}")
    try:
        bits: int = struct.unpack("<I", struct.pack("<f", float(value)))[0]
        return bits
    except OverflowError:
        raise ValueError(f"{what}: {name} = {value!r} is beyond float32's range") from None


def threads(value: Optional[int], what: str) -> int:
    """The thread cap of one call: the default (every core, capped by
    SAMEBITS_THREADS) for None, else an int >= 1, clamped to MAX_THREADS.
    Results never depend on it."""
    if value is None:
        return _threads.default_threads()
    v = as_int(value, "threads", what)
    if v < 1:
        raise ValueError(f"{what}: threads must be at least 1, got {value!r}")
    return min(v, MAX_THREADS)


def shape(dims: Sequence[int], name: str, what: str) -> None:
    """Refuses a tensor whose dimensions exceed 2**40 (possible for empty or
    broadcast numpy arrays, which hold no memory for them)."""
    if any(d > LIMIT for d in dims):
        raise ValueError(f"{what}: {name} has shape {tuple(dims)}; dimensions above 2**40 "
                         f"= {LIMIT} are not supported")


def output_bytes(dims: Sequence[int], what: str, thing: str = "the output") -> int:
    """The byte size of a float32 tensor of `dims`; ValueError naming the shape
    when it exceeds 2**62 (checked before anything is allocated)."""
    count = 1
    for d in dims:
        count *= d
    nbytes = count * FLOAT_BYTES
    if nbytes > MAX_BYTES:
        raise ValueError(f"{what}: {thing} would have shape {tuple(dims)}, {nbytes} bytes; "
                         f"more than 2**62 bytes cannot be allocated")
    return nbytes


def no_memory(what: str, thing: str, dims: Sequence[int], nbytes: Optional[int] = None
              ) -> MemoryError:
    """The MemoryError for an allocation that failed, saying what it was for
    (numpy's says less, ctypes' nothing at all). nbytes defaults to a float32
    tensor of shape `dims`."""
    if nbytes is None:
        nbytes = FLOAT_BYTES
        for d in dims:
            nbytes *= d
    return MemoryError(f"{what}: could not allocate {nbytes} bytes for {thing} "
                       f"of shape {tuple(dims)}")


def window_output_size(size: int, pad_before: int, pad_after: int, kernel: int, dilation: int,
                       stride: int) -> int:
    """How many windows fit along one axis:
    floor((size + pad_before + pad_after - dilation*(kernel-1) - 1) / stride) + 1.
    Exact (Python ints); below 1 when not even one window fits."""
    return (size + pad_before + pad_after - dilation * (kernel - 1) - 1) // stride + 1


def pooled_size(size: int, k: int, s: int, before: int, after: int, ceil_mode: bool) -> int:
    """torch's pooling output size along one axis, for a window of extent k:
    floor (or with ceil_mode ceil) of (size + pads - k) / s, plus 1; in ceil
    mode the last window must start inside the input or the leading padding.
    Below 1 when no window fits (the callers refuse that)."""
    span = size + before + after - k
    out = (-(-span // s) if ceil_mode else span // s) + 1
    if ceil_mode and (out - 1) * s >= size + before:
        out -= 1
    return out


def ceil_end_padding(size: int, extent: int, s: int, before: int, after: int) -> int:
    """The extra end padding that makes floor mode count ceil mode's windows
    (for the pools where padding is never a value: max pooling)."""
    count = pooled_size(size, extent, s, before, after, True)
    return max(0, (count - 1) * s + extent - (size + before + after))


def output_hw(what: str, hw: tuple[int, int], pads: tuple[int, int, int, int],
              kernel: tuple[int, int], dilation: tuple[int, int],
              stride: tuple[int, int]) -> tuple[int, int]:
    """(OH, OW) of a windowed op over an (H, W) input, each at least 1, else a
    ValueError giving the numbers. Also refuses a window extent or padded size
    of 2**62 or more, which the C side's size_t arithmetic could not hold."""
    axes = (("height", hw[0], pads[0], pads[1], kernel[0], dilation[0], stride[0]),
            ("width", hw[1], pads[2], pads[3], kernel[1], dilation[1], stride[1]))
    for axis, size, before, after, k, d, _ in axes:
        extent = d * (k - 1) + 1
        if extent >= DERIVED_LIMIT:
            raise ValueError(f"{what}: the window's {axis} extent dilation*(kernel-1)+1 = "
                             f"{d}*({k}-1)+1 = {extent} is too large (2**62 or more)")
        if size + before + after >= DERIVED_LIMIT:
            raise ValueError(f"{what}: the padded {axis} {size} + {before} + {after} is too "
                             f"large (2**62 or more)")
    oh, ow = (window_output_size(*axis[1:]) for axis in axes)
    for (axis, size, before, after, k, d, _), o in zip(axes, (oh, ow)):
        if o < 1:
            raise ValueError(
                f"{what}: the output size {oh} x {ow} is below 1: output {axis} would be {o} "
                f"(input {axis} {size} + padding {before} + {after} is less than the window's "
                f"extent dilation*(kernel-1)+1 = {d * (k - 1) + 1}; input {hw[0]} x {hw[1]}, "
                f"padding {pads} (top, bottom, left, right), kernel {kernel[0]} x {kernel[1]}, "
                f"dilation {dilation}, stride {stride})")
    return oh, ow
