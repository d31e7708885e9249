"""samebits.max_pool2d: 2-D max pooling over NCHW float32 tensors."""
from __future__ import annotations

import ctypes
from typing import Any, Sequence, Union

from .._binding import abi as _abi, args as _args, lib as _lib, operands as _operands
from . import unbatched as _unbatched
from .._binding.operands import is_numpy

_addressof = ctypes.addressof

IntOrPair = Union[int, Sequence[int]]


def max_pool2d(x: Any, kernel_size: IntOrPair, stride: IntOrPair | None = None,
               padding: Union[int, Sequence[int]] = 0, dilation: IntOrPair = 1,
               ceil_mode: bool = False, *, out: Any = None,
               threads: int | None = None) -> Any:
    """2-D max pooling of an (N, C, H, W) or unbatched (C, H, W) float32 tensor.

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
        Window size: an int, or a pair (kernel_h, kernel_w); in [1, 2**40].
    stride
        Step between windows: an int or a pair; in [1, 2**40]. Default:
        kernel_size.
    padding
        Implicit padding: an int (all four sides), a pair (h, w) (top and bottom
        h, left and right w) or a 4-tuple (top, bottom, left, right); in
        [0, 2**40].
    dilation
        Spacing between taps: an int or a pair; in [1, 2**40].
    ceil_mode
        As torch: the output size rounds up instead of down, so that a last,
        partial window is kept, provided it starts inside the input or its
        top/left padding. Its taps beyond the input are padding (never values).
    out
        Optional writable float32 array of the result's shape, not overlapping
        x, filled in place and returned.
    threads
        Maximum number of threads (default: every core, capped by
        SAMEBITS_THREADS). Small inputs stay on the calling thread. The result
        never depends on it.

    Returns
    -------
    The (N, C, OH, OW) result ((C, OH, OW) for unbatched x), OH =
    floor((H + pad_top + pad_bottom - dilation_h*(kernel_h-1) - 1) / stride_h)
    + 1 (ceil with ceil_mode) and likewise OW: ``out`` if given; else a numpy
    array when x is one, or a memoryview of format 'f'.

    Raises
    ------
    TypeError
        x is not float32 or not a buffer; a size argument is not an int (bool
        included) or a sequence of ints.
    ValueError
        x is not 4-D or has a dimension above 2**40; a size argument is out of
        range or of the wrong length; the output would have fewer than one row
        or column, or more than 2**62 bytes; ``out`` has the wrong shape, is
        read-only or overlaps x; threads < 1.
    """
    kernel = _args.pair(kernel_size, "kernel_size", "max_pool2d")
    strides = kernel if stride is None else _args.pair(stride, "stride", "max_pool2d")
    dilations = _args.pair(dilation, "dilation", "max_pool2d")
    pt, pb, pl, pr = pads = _args.padding(padding, "max_pool2d")
    if not isinstance(ceil_mode, bool):
        raise TypeError(f"max_pool2d: ceil_mode must be a bool, got {type(ceil_mode).__name__}")
    nthreads = _args.threads(threads, "max_pool2d")
    user_out = out
    x, out, unbatched = _unbatched.add_batch(x, out, "max_pool2d")
    tx = _operands.as_operand(x, "x", 4, dense=True)
    _args.shape(tx.shape, "x", "max_pool2d")
    n, c, h, w = tx.shape
    if ceil_mode:
        # the partial last window's taps past the input are end padding,
        # which is never a value: the same maximum as torch's ceil mode
        pb += _args.ceil_end_padding(h, dilations[0] * (kernel[0] - 1) + 1, strides[0], pt, pb)
        pr += _args.ceil_end_padding(w, dilations[1] * (kernel[1] - 1) + 1, strides[1], pl, pr)
        pads = (pt, pb, pl, pr)
    oh, ow = _args.output_hw("max_pool2d", (h, w), pads, kernel, dilations, strides)
    _args.output_bytes((n, c, oh, ow), "max_pool2d")
    (kh, kw), (sh, sw), (dh, dw) = kernel, strides, dilations
    output = _operands.Output(out, (n, c, oh, ow), is_numpy(x), [(x, tx)], "max_pool2d")
    args = _abi.MaxPool2dArgs(n, c, h, w, kh, kw, sh, sw, dh, dw, pt, pb, pl, pr, tx.ptr,
                              output.ptr, nthreads)
    status = _lib.lib.sb_max_pool2d(_addressof(args))
    _lib.check_status(status, "max_pool2d")
    return _unbatched.drop_batch(output.finish(), user_out, unbatched)
