"""samebits.conv2d: 2-D convolution in NCHW, exact and fast."""
from __future__ import annotations

import ctypes
from typing import Any, Optional, Sequence, Union

from . import _abi, _lib, _matmul, _paths, _tensors, _threads
from ._matmul import mode_code
from ._operands import is_numpy

IntPair = Union[int, Sequence[int]]
ACTIVATIONS = {None: 0, "relu": 1, "relu6": 2}


# The numpy fast path of conv2d, as matmul's (see _matmul.py): C-contiguous
# float32 arrays (x, out= and a bias), prepacked or plain weights, plain-int
# geometry. It makes the general path's checks and falls through to it on any
# doubt (an out= overlapping an input included), so errors are raised there;
# a small layer's call goes from ~18 us to ~6 us.
_pack_conv_args = _abi.packer(_abi.Conv2dArgs)
_CONV_CALLS = {"fast": (_lib.MODE_FAST, _lib.fast_lib.sb_conv2d),
               "exact": (_lib.MODE_EXACT, _lib.lib.sb_conv2d)}


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _positive_pair(value: Any, name: str) -> tuple[int, int]:
    pair = (value, value) if _is_int(value) else tuple(value) if isinstance(value, (tuple, list)) else None
    if pair is None or len(pair) != 2 or not all(_is_int(v) for v in pair):
        raise TypeError(f"conv2d: {name} must be an int or a pair of ints, got {value!r}")
    if min(pair) < 1:
        raise ValueError(f"conv2d: {name} must be at least 1, got {value!r}")
    return pair  # type: ignore[return-value]


def padding_quad(padding: Any, what: str = "conv2d") -> tuple[int, int, int, int]:
    """(top, bottom, left, right) from an int, a pair (h, w) or a 4-tuple."""
    if _is_int(padding):
        quad = (padding,) * 4
    elif isinstance(padding, (tuple, list)) and len(padding) == 2:
        quad = (padding[0], padding[0], padding[1], padding[1])
    elif isinstance(padding, (tuple, list)) and len(padding) == 4:
        quad = tuple(padding)
    else:
        raise TypeError(f"{what}: padding must be an int, a pair (h, w) or "
                        f"(top, bottom, left, right), got {padding!r}")
    if not all(_is_int(v) for v in quad):
        raise TypeError(f"{what}: padding values must be ints, got {padding!r}")
    if min(quad) < 0:
        raise ValueError(f"{what}: padding must not be negative, got {padding!r}")
    return quad  # type: ignore[return-value]


def output_size(size: int, before: int, after: int, k: int, dilation: int, stride: int) -> int:
    """floor((size + before + after - dilation*(k-1) - 1) / stride) + 1."""
    return (size + before + after - dilation * (k - 1) - 1) // stride + 1


def _geometry(stride: Any, padding: Any, dilation: Any) -> tuple:
    """(stride_h, stride_w, dil_h, dil_w, top, bottom, left, right), checked.
    Plain ints (the common case) take a short path: this runs every call."""
    if type(stride) is int and type(padding) is int and type(dilation) is int and \
            stride >= 1 and dilation >= 1 and padding >= 0:
        return (stride, stride, dilation, dilation, padding, padding, padding, padding)
    return _positive_pair(stride, "stride") + _positive_pair(dilation, "dilation") + \
        padding_quad(padding)


class PackedConv2d:
    """Convolution weights (Cout, C/groups, KH, KW) packed for one ISA path.

    Accepted by ``conv2d`` in place of the weights, with the same bits. The
    packing belongs to the path active when it was made; it holds a copy.
    """

    def __init__(self, w: Any, groups: int = 1) -> None:
        if not _is_int(groups) or groups < 1:
            raise ValueError(f"pack_conv2d: groups must be a positive int, got {groups!r}")
        weights = _tensors.as_input_nd(w, "w", 4)
        cout, cin_g, kh, kw = weights.shape
        if cout % groups:
            raise ValueError(f"pack_conv2d: groups={groups} does not divide the {cout} output "
                             f"channels of w (shape {weights.shape})")
        if kh < 1 or kw < 1:
            raise ValueError(f"pack_conv2d: w has an empty kernel (shape {weights.shape})")
        self.path: str = _paths.path()
        self.shape: tuple[int, int, int, int] = weights.shape
        self.groups: int = groups
        index = _paths.path_index(self.path)
        self.nbytes: int = _lib.lib.sb_conv2d_packed_bytes(index, cout, cin_g, kh, kw, groups)
        # 64 spare bytes so that the packed data can start on a cache line.
        self._storage = (ctypes.c_char * (self.nbytes + 64))()
        self._address = (ctypes.addressof(self._storage) + 63) & ~63
        status = _lib.lib.sb_conv2d_pack(index, cout, cin_g, kh, kw, groups, weights.ptr,
                                         self._address, self.nbytes)
        _lib.check_status(status, "pack_conv2d")
        self._numpy_source = is_numpy(w)

    @property
    def address(self) -> int:
        return self._address

    def __repr__(self) -> str:
        return (f"PackedConv2d(shape={self.shape}, groups={self.groups}, path={self.path!r}, "
                f"nbytes={self.nbytes})")


def pack_conv2d(w: Any, *, groups: int = 1) -> PackedConv2d:
    """Packs convolution weights once for repeated ``conv2d(x, packed, ...)``.

    ``w`` is (Cout, C/groups, KH, KW) float32; ``groups`` must be the value the
    convolution will use. Packing is for the active path (``samebits.path()``).
    """
    return PackedConv2d(w, groups)


def conv2d(x: Any, w: Any, bias: Any = None, *, stride: IntPair = 1, padding: Any = 0,
           dilation: IntPair = 1, groups: int = 1, activation: Optional[str] = None,
           mode: str = "fast", out: Any = None, threads: Optional[int] = None) -> Any:
    """2-D convolution of NCHW float32 input, as PyTorch's conv2d computes it.

    Parameters
    ----------
    x
        Input (N, C, H, W) float32 (numpy array, or a 4-D buffer of format
        'f'). A one-dimensional convolution is one of height 1.
    w
        Weights (Cout, C/groups, KH, KW) float32, or a PackedConv2d from
        ``samebits.pack_conv2d`` (same bits).
    bias
        Optional (Cout,) float32, added after the sum as one rounded add.
    stride, dilation
        An int or a pair (h, w), each at least 1.
    padding
        Zero padding: an int, a pair (h, w) or (top, bottom, left, right).
        Padding taps are real products with +0.
    groups
        Channel groups; must divide C and Cout. ``groups == C`` with one
        input channel per group (depthwise, any channel multiplier) runs a
        direct kernel with the same definition.
    activation
        None, ``"relu"`` or ``"relu6"``, applied after the bias; NaN passes
        through.
    mode
        ``"exact"``: each output sums its taps (channel, kernel row, kernel
        column) in that order from +0 with every product and sum rounded to
        float32, then bias and activation; NaN stored as 0x7FC00000. The same
        bits on every machine, path, thread count and runtime. ``"fast"``
        (default): the same order with fused multiply-add where the path has
        it; repeatable on one machine and path.
    out
        Optional writable float32 (N, Cout, OH, OW) array, not overlapping an
        input, filled in place and returned.
    threads
        Maximum number of threads; the result never depends on it.

    Returns
    -------
    The (N, Cout, OH, OW) output, OH = floor((H + pad_top + pad_bottom -
    dilation_h*(KH-1) - 1) / stride_h) + 1 (OW likewise): ``out`` if given,
    else a numpy array when x or w is one, else a 4-D memoryview.
    """
    if (type(x) is _matmul._NDARRAY and type(stride) is int
            and type(padding) is int and type(dilation) is int and type(groups) is int):
        y = _conv2d_numpy(x, w, bias, stride, padding, dilation, groups, activation, mode,
                          threads, out)
        if y is not None:
            return y
    code = mode_code(mode)
    if activation not in ACTIVATIONS:
        raise ValueError(f"conv2d: activation must be None, 'relu' or 'relu6', got {activation!r}")
    if not _is_int(groups) or groups < 1:
        raise ValueError(f"conv2d: groups must be a positive int, got {groups!r}")
    stride_h, stride_w, dil_h, dil_w, *pads = _geometry(stride, padding, dilation)
    nthreads = _threads.resolve_threads(threads)
    path = _paths.active_path_index()

    xt = _tensors.as_nchw_input(x, "x")
    n, c, h, width = xt.shape
    inputs = [(x, xt)]
    packed = w if isinstance(w, PackedConv2d) else None
    if packed is not None:
        if packed.path != _paths.path():
            raise ValueError(f"conv2d: w was packed for path {packed.path!r} but the active path "
                             f"is {_paths.path()!r}; pack it again under this path")
        if packed.groups != groups:
            raise ValueError(f"conv2d: w was packed for groups={packed.groups}, "
                             f"the call has groups={groups}")
        w_shape, w_ptr = packed.shape, packed.address
    else:
        wt = _tensors.as_input_nd(w, "w", 4)
        w_shape, w_ptr = wt.shape, wt.ptr
        inputs.append((w, wt))
    cout, cin_g, kh, kw = w_shape
    if c % groups:
        raise ValueError(f"conv2d: groups={groups} does not divide the {c} input channels of x "
                         f"(shape {xt.shape})")
    if cout % groups:
        raise ValueError(f"conv2d: groups={groups} does not divide the {cout} output channels "
                         f"of w (shape {w_shape})")
    if cin_g * groups != c:
        raise ValueError(f"conv2d: w (shape {w_shape}) has {cin_g} input channels per group, "
                         f"but x (shape {xt.shape}) with groups={groups} has {c // groups}")
    if kh < 1 or kw < 1:
        raise ValueError(f"conv2d: w has an empty kernel (shape {w_shape})")
    out_h = output_size(h, pads[0], pads[1], kh, dil_h, stride_h)
    out_w = output_size(width, pads[2], pads[3], kw, dil_w, stride_w)
    if out_h < 1 or out_w < 1:
        raise ValueError(
            f"conv2d: the output size {out_h} x {out_w} is below 1: input {h} x {width}, padding "
            f"{pads} (top, bottom, left, right), kernel {kh} x {kw}, dilation {(dil_h, dil_w)}, "
            f"stride {(stride_h, stride_w)}")
    bias_ptr = 0
    if bias is not None:
        bt = _tensors.as_input_nd(bias, "bias", 1)
        if bt.shape != (cout,):
            raise ValueError(f"conv2d: bias has shape {bt.shape}, expected ({cout},) for w of "
                             f"shape {w_shape}")
        bias_ptr = bt.ptr
        inputs.append((bias, bt))

    numpy_result = is_numpy(x) or (packed._numpy_source if packed is not None else is_numpy(w))
    output = _tensors.output_nd(out, (n, cout, out_h, out_w), numpy_result, inputs, "conv2d")
    library = _lib.lib if code == _lib.MODE_EXACT else _lib.fast_lib
    args = _abi.Conv2dArgs(path, code, nthreads, n, c, h, width, cout, kh, kw, groups, stride_h,
                           stride_w, dil_h, dil_w, pads[0], pads[1], pads[2], pads[3], xt.ptr,
                           w_ptr, 1 if packed is not None else 0, bias_ptr,
                           ACTIVATIONS[activation], output.ptr)
    _lib.check_status(library.sb_conv2d(ctypes.addressof(args)), "conv2d")
    return output.finish()


def _span(a: Any, ptr: int) -> tuple[int, int]:
    return ptr, ptr + a.nbytes


def _conv2d_numpy(x: Any, w: Any, bias: Any, stride: int, padding: int, dilation: int,
                  groups: int, activation: Any, mode: Any, threads: Optional[int],
                  out: Any = None) -> Any:
    """conv2d's fast path; None where the general path must decide."""
    call = _CONV_CALLS.get(mode) if type(mode) is str else None
    act = ACTIVATIONS.get(activation) if activation is None or type(activation) is str else None
    f32 = _matmul._FLOAT32
    if (call is None or act is None or x.dtype is not f32 or x.ndim != 4
            or not x.flags.c_contiguous or stride < 1 or dilation < 1 or padding < 0
            or groups < 1):
        return None
    if type(w) is PackedConv2d:
        if w.groups != groups or w.path != _paths.path():
            return None
        w_shape, w_ptr, packed = w.shape, w.address, 1
    elif (type(w) is _matmul._NDARRAY and w.dtype is f32 and w.ndim == 4
            and w.flags.c_contiguous):
        w_shape, w_ptr, packed = w.shape, _matmul._read_word(id(w) + _matmul._DATA_OFFSET).value, 0
    else:
        return None
    n, c, h, width = x.shape
    cout, cin_g, kh, kw = w_shape
    if (not (n and c and cout and h and width) or c % groups or cout % groups
            or cin_g * groups != c or kh < 1 or kw < 1):
        return None
    out_h = output_size(h, padding, padding, kh, dilation, stride)
    out_w = output_size(width, padding, padding, kw, dilation, stride)
    if out_h < 1 or out_w < 1:
        return None
    bias_ptr = 0
    if bias is not None:
        if (type(bias) is not _matmul._NDARRAY or bias.dtype is not f32
                or bias.shape != (cout,) or not bias.flags.c_contiguous):
            return None
        bias_ptr = _matmul._read_word(id(bias) + _matmul._DATA_OFFSET).value
    x_ptr = _matmul._read_word(id(x) + _matmul._DATA_OFFSET).value
    path = (_matmul._DEFAULT_PATH if _paths.forced_path() is None
            else _paths.active_path_index())
    nthreads = _matmul._DEFAULT_THREADS if threads is None else _threads.resolve_threads(threads)
    if (x_ptr | w_ptr | bias_ptr) % _matmul._ITEM or path is None or nthreads is None:
        return None
    if out is None:
        y = _matmul._np_empty((n, cout, out_h, out_w), f32)
    else:
        if (type(out) is not _matmul._NDARRAY or out.dtype is not f32
                or out.shape != (n, cout, out_h, out_w) or not out.flags.c_contiguous
                or not out.flags.writeable):
            return None
        y_lo, y_hi = _span(out, _matmul._read_word(id(out) + _matmul._DATA_OFFSET).value)
        if y_lo % _matmul._ITEM:
            return None
        inputs = [_span(x, x_ptr)]
        if not packed:
            inputs.append(_span(w, w_ptr))
        if bias is not None:
            inputs.append(_span(bias, bias_ptr))
        if any(lo < y_hi and y_lo < hi for lo, hi in inputs):
            return None   # overlapping an input: the general path says so
        y = out
    code, function = call
    status = function(_pack_conv_args(
        path, code, nthreads, n, c, h, width, cout, kh, kw, groups, stride, stride,
        dilation, dilation, padding, padding, padding, padding, x_ptr, w_ptr, packed, bias_ptr,
        act, _matmul._read_word(id(y) + _matmul._DATA_OFFSET).value))
    if status:
        _lib.check_status(status, "conv2d")
    return y
