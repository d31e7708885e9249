"""samebits.max_pool2d: 2-D max pooling over NCHW float32 tensors."""
from __future__ import annotations

import ctypes
from typing import Any, Sequence, Union

from . import _abi, _lib, _tensors, _threads
from ._operands import is_numpy, np

_addressof = ctypes.addressof
_LIMIT = 1 << 40                     # the C side's bound on every size argument

IntOrPair = Union[int, Sequence[int]]


def _as_int(value: Any, what: str) -> int:
    if isinstance(value, bool) or (np is not None and isinstance(value, np.bool_)):
        raise TypeError(f"max_pool2d: {what} must be an int, got bool")
    if isinstance(value, int):
        return value
    if np is not None and isinstance(value, np.integer):
        return int(value)
    raise TypeError(f"max_pool2d: {what} must be an int, got {type(value).__name__}")


def _ints(value: Any, what: str, lengths: tuple[int, ...]) -> tuple[int, ...]:
    """An int, or a tuple/list of one of the given lengths, as a tuple of ints."""
    if isinstance(value, (tuple, list)):
        if len(value) not in lengths:
            shapes = " or ".join(str(n) for n in lengths)
            raise ValueError(f"max_pool2d: {what} must be an int or a sequence of {shapes} "
                             f"ints, got {len(value)} values: {tuple(value)!r}")
        return tuple(_as_int(v, what) for v in value)
    return (_as_int(value, what),)


def _pair(value: Any, what: str, minimum: int) -> tuple[int, int]:
    vals = _ints(value, what, (2,))
    pair = (vals[0], vals[0]) if len(vals) == 1 else (vals[0], vals[1])
    for v in pair:
        if v < minimum:
            raise ValueError(f"max_pool2d: {what} must be at least {minimum}, got {value!r}")
        if v > _LIMIT:
            raise ValueError(f"max_pool2d: {what} is too large: {value!r}")
    return pair


def _padding(value: Any) -> tuple[int, int, int, int]:
    vals = _ints(value, "padding", (2, 4))
    if len(vals) == 1:
        pads = vals * 4
    elif len(vals) == 2:
        pads = (vals[0], vals[0], vals[1], vals[1])
    else:
        pads = vals
    for v in pads:
        if v < 0:
            raise ValueError(f"max_pool2d: padding must not be negative, got {value!r}")
        if v > _LIMIT:
            raise ValueError(f"max_pool2d: padding is too large: {value!r}")
    return pads  # type: ignore[return-value]


def output_size(size: int, pad_before: int, pad_after: int, kernel: int, dilation: int,
                stride: int) -> int:
    """floor((size + pad_before + pad_after - dilation*(kernel-1) - 1) / stride) + 1."""
    return (size + pad_before + pad_after - dilation * (kernel - 1) - 1) // stride + 1


def max_pool2d(x: Any, kernel_size: IntOrPair, stride: IntOrPair | None = None,
               padding: Union[int, Sequence[int]] = 0, dilation: IntOrPair = 1, *,
               out: Any = None, threads: int | None = None) -> Any:
    """2-D max pooling of an (N, C, H, W) float32 tensor.

    Output element (n, c, oy, ox) is the largest of the taps
    ``x[n, c, oy*stride_h + ky*dilation_h - pad_top, ox*stride_w + kx*dilation_w - pad_left]``
    for ky < kernel_h, kx < kernel_w that lie inside the input (padding is never
    a value). NaN taps are ignored, and of equal taps the first in row-major
    (ky, kx) order is kept, so -0 before +0 gives -0. A window whose inside taps
    are all NaN gives NaN (0x7FC00000); a window lying entirely in the padding
    gives the lowest float, -3.4028235e38. The result is the same on every
    machine, thread count and runtime (see docs/maxpool.md).

    Parameters
    ----------
    x
        float32 input of shape (N, C, H, W): a numpy array of any layout (other
        than C-contiguous ones are copied), or, without numpy, a 4-D
        buffer-protocol object of format 'f'.
    kernel_size
        Window size: an int, or a pair (kernel_h, kernel_w); at least 1.
    stride
        Step between windows: an int or a pair; at least 1. Default: kernel_size.
    padding
        Implicit padding: an int (all four sides), a pair (h, w) (top and bottom
        h, left and right w) or a 4-tuple (top, bottom, left, right); at least 0.
    dilation
        Spacing between taps: an int or a pair; at least 1.
    out
        Optional writable float32 array of the result's shape, not overlapping
        x, filled in place and returned.
    threads
        Maximum number of threads (default: every core, capped by
        SAMEBITS_THREADS). Small inputs stay on the calling thread. The result
        never depends on it.

    Returns
    -------
    The (N, C, OH, OW) result, OH = floor((H + pad_top + pad_bottom -
    dilation_h*(kernel_h-1) - 1) / stride_h) + 1 and likewise OW: ``out`` if
    given; else a numpy array when x is one, or a memoryview of format 'f'.

    Raises
    ------
    TypeError
        x is not float32 or not a buffer; a size argument is not an int (bool
        included) or a sequence of ints.
    ValueError
        x is not 4-D; a size argument is out of range or of the wrong length;
        the output would have fewer than one row or column; ``out`` has the
        wrong shape, is read-only or overlaps x; threads < 1.
    """
    kh, kw = _pair(kernel_size, "kernel_size", 1)
    sh, sw = (kh, kw) if stride is None else _pair(stride, "stride", 1)
    dh, dw = _pair(dilation, "dilation", 1)
    pt, pb, pl, pr = _padding(padding)
    nthreads = _threads.resolve_threads(threads)
    tx = _tensors.as_nchw_input(x, "x")
    n, c, h, w = tx.shape
    if max(n, c, h, w) > _LIMIT:
        raise ValueError(f"max_pool2d: x is too large: shape {tx.shape}")
    oh = output_size(h, pt, pb, kh, dh, sh)
    ow = output_size(w, pl, pr, kw, dw, sw)
    for axis, size, before, after, k, d, s, o in (("height", h, pt, pb, kh, dh, sh, oh),
                                                  ("width", w, pl, pr, kw, dw, sw, ow)):
        if o < 1:
            raise ValueError(
                f"max_pool2d: output {axis} would be {o} (input {axis} {size} + padding "
                f"{before} + {after} is less than the window's extent dilation*(kernel-1)+1 = "
                f"{d * (k - 1) + 1}); it must be at least 1")
    output = _tensors.output_nd(out, (n, c, oh, ow), is_numpy(x), [(x, tx)], "max_pool2d")
    args = _abi.MaxPool2dArgs(n, c, h, w, kh, kw, sh, sw, dh, dw, pt, pb, pl, pr, tx.ptr,
                              output.ptr, nthreads)
    status = _lib.lib.sb_max_pool2d(_addressof(args))
    _lib.check_status(status, "max_pool2d")
    return output.finish()
