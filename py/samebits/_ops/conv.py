"""samebits.conv2d: 2-D convolution in NCHW, exact and fast."""
from __future__ import annotations

import ctypes
from typing import Any, Optional, Sequence, Union

from .._binding import (
    abi as _abi, args as _args, lib as _lib, operands as _operands, paths as _paths, threads as
    _threads)
from . import matmul as _matmul, plan_report as _plan_report, unbatched as _unbatched
from .products import ACTIVATIONS, activation_code, mode_code
from .._binding.operands import Operand, is_numpy
from .packed import PackedData
from .._typing import Mode

IntPair = Union[int, Sequence[int]]


# The numpy fast path of conv2d, as matmul's (see _matmul.py): C-contiguous
# float32 arrays (x, out= and a bias), prepacked or plain weights, plain-int
# geometry. It makes the general path's checks (the 2**40 bounds of _args
# included, as plain comparisons) and falls through to it on any doubt (an
# out= overlapping an input included), so errors are raised there; a small
# layer's call goes from ~18 us to ~6 us.
_pack_conv_args = _abi.packer(_abi.Conv2dArgs)
_LIMIT, _MAX_ELEMENTS = _args.LIMIT, _args.MAX_ELEMENTS
_CONV_CALLS = {"fast": (_lib.MODE_FAST, _lib.fast_lib.sb_conv2d),
               "exact": (_lib.MODE_EXACT, _lib.lib.sb_conv2d)}


class PackedConv2d(PackedData):
    """Convolution weights (Cout, C/groups, KH, KW) packed for one ISA path.

    Accepted by ``conv2d`` in place of the weights, with the same bits. The
    packing belongs to the path active when it was made; it holds a copy.
    Copies and pickles hold their own.
    """

    _WHAT, _SOURCE, _NDIM = "pack_conv2d", "w", 4
    _STATE = PackedData._STATE + ("groups",)

    def __init__(self, w: Any, groups: int = 1) -> None:
        groups = _args.bounded(groups, "groups", "pack_conv2d")
        weights = _operands.as_operand(w, "w", 4, dense=True)
        _args.shape(weights.shape, "w", "pack_conv2d")
        cout, cin_g, kh, kw = weights.shape
        if cout % groups:
            raise ValueError(f"pack_conv2d: groups={groups} does not divide the {cout} output "
                             f"channels of w (shape {weights.shape})")
        if kh < 1 or kw < 1:
            raise ValueError(f"pack_conv2d: w has an empty kernel (shape {weights.shape})")
        self.path: str = _paths.path()
        # 4-D: as_operand(w, "w", 4) checked it
        self.shape: tuple[int, int, int, int] = weights.shape   # type: ignore[assignment]
        self.groups: int = groups
        index = _paths.path_index(self.path)
        self._set_nbytes(index)
        self._allocate()
        status = _lib.lib.sb_conv2d_pack(index, cout, cin_g, kh, kw, groups, weights.ptr,
                                         self._address, self.nbytes)
        _lib.check_status(status, "pack_conv2d")
        self._numpy_source = is_numpy(w)

    def _packed_bytes(self, index: int) -> int:
        nbytes: int = _lib.lib.sb_conv2d_packed_bytes(index, *self.shape, self.groups)
        return nbytes

    def _state_ok(self, state: dict[str, Any]) -> bool:
        groups = state.get("groups")
        return type(groups) is int and 1 <= groups <= _args.LIMIT

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
           dilation: IntPair = 1, groups: int = 1, activation: Any = None,
           mode: Mode = "fast", out: Any = None, threads: Optional[int] = None) -> Any:
    """2-D convolution of NCHW float32 input, as PyTorch's conv2d computes it.

    Parameters
    ----------
    x
        Input (N, C, H, W) float32 (numpy array, or a 4-D buffer of format
        'f'), or unbatched (C, H, W) as in torch (the result is then (Cout,
        OH, OW)). A one-dimensional convolution is one of height 1.
    w
        Weights (Cout, C/groups, KH, KW) float32, or a PackedConv2d from
        ``samebits.pack_conv2d`` (same bits).
    bias
        Optional (Cout,) float32, added after the sum as one rounded add.
    stride, dilation
        An int or a pair (h, w), each in [1, 2**40].
    padding
        Zero padding: an int, a pair (h, w) or (top, bottom, left, right),
        each in [0, 2**40]; or, as torch, "valid" (none) or "same" (stride 1
        only: dilation*(K-1) zeros per axis, half before, the odd one after,
        so that the output has the input's size). Padding taps are real
        products with +0.
    groups
        Channel groups, in [1, 2**40]; must divide C and Cout. ``groups ==
        C`` with one input channel per group (depthwise, any channel
        multiplier) runs a direct kernel with the same definition.
    activation
        None, or the name of an activation applied after the bias, with the
        bits of the standalone function (docs/exact-ops.md): "relu", "relu6",
        "leaky_relu" (slope 0.01) or ("leaky_relu", slope), "gelu",
        "gelu_tanh" (torch's approximate="tanh"), "silu", "hardswish",
        "hardsigmoid", "sigmoid", "tanh"; and "swish_onnx", ONNX's
        ``x * sigmoid(x)`` as two operations (the sigmoid rounded, then one
        multiply; in fast mode with fast mode's sigmoid). NaN stays NaN.
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

    Integer arguments are ints or numpy integers (anything with __index__),
    never bool; tensor dimensions are at most 2**40 as well.

    Returns
    -------
    The (N, Cout, OH, OW) output, OH = floor((H + pad_top + pad_bottom -
    dilation_h*(KH-1) - 1) / stride_h) + 1 (OW likewise): ``out`` if given,
    else a numpy array when x or w is one, else a 4-D memoryview.

    Raises
    ------
    TypeError
        A wrong dtype or a non-buffer input; an integer argument that is not
        an int (bool included).
    ValueError
        Wrong dimensions or shapes; an integer argument out of range or a
        sequence of the wrong length; an output below 1 row or column, or of
        more than 2**62 bytes; groups that do not divide the channels; a bad
        mode, activation or out; weights packed for other groups or another path.
    """
    if isinstance(padding, str):
        padding = _named_padding(padding, w, stride, dilation)
    user_out = out
    x, out, unbatched = _unbatched.add_batch(x, out, "conv2d")
    if unbatched:
        y = conv2d(x, w, bias, stride=stride, padding=padding, dilation=dilation, groups=groups,
                   activation=activation, mode=mode, out=out, threads=threads)
        return _unbatched.drop_batch(y, user_out, True)
    if (type(x) is _matmul._NDARRAY and type(stride) is int
            and type(padding) is int and type(dilation) is int and type(groups) is int):
        y = _conv2d_numpy(x, w, bias, stride, padding, dilation, groups, activation, mode,
                          threads, out)
        if y is not None:
            return y
    library, args, output, _ = prepare(x, w, bias, stride, padding, dilation, groups, activation,
                                       mode, out, threads)
    if _plan_report.TRACE:
        _plan_report.trace(lambda: _plan_report.plan_conv2d(library, args))
    _lib.check_status(library.sb_conv2d(ctypes.addressof(args)), "conv2d")
    return output.finish()


def _named_padding(name: str, w: Any, stride: Any, dilation: Any) -> tuple[int, int, int, int]:
    """torch's padding="valid" and "same" as (top, bottom, left, right)."""
    if name == "valid":
        return (0, 0, 0, 0)
    if name != "same":
        raise ValueError(f"conv2d: padding must be an int, a sequence, 'valid' or 'same', got "
                         f"{name!r}")
    if _args.pair(stride, "stride", "conv2d") != (1, 1):
        raise ValueError("conv2d: padding='same' needs stride 1 (as in torch), got "
                         f"stride={stride!r}")
    dil = _args.pair(dilation, "dilation", "conv2d")
    if isinstance(w, PackedConv2d):
        kh, kw = w.shape[2], w.shape[3]
    else:
        shape: Sequence[int] = (w.shape if hasattr(w, "shape")
                                else _operands.view_shape(memoryview(w)))
        if len(shape) != 4:
            raise ValueError(f"conv2d: w must be 4-D, got shape {tuple(shape)}")
        kh, kw = int(shape[2]), int(shape[3])
    pads = []
    for k, d in ((kh, dil[0]), (kw, dil[1])):
        total = d * (k - 1)
        pads += [total // 2, total - total // 2]
    return (pads[0], pads[1], pads[2], pads[3])


def prepare(x: Any, w: Any, bias: Any, stride: Any, padding: Any, dilation: Any, groups: Any,
            activation: Any, mode: Any, out: Any, threads: Any
            ) -> tuple[ctypes.CDLL, _abi.Conv2dArgs, _operands.Output, list[tuple[Any, Operand]]]:
    """conv2d's arguments checked into (library, sb_conv2d_args, output, the
    operands to keep alive): what conv2d runs and explain() plans."""
    code = mode_code(mode)
    act = activation_code(activation, "conv2d")
    groups = _args.bounded(groups, "groups", "conv2d")
    stride_h, stride_w = _args.pair(stride, "stride", "conv2d")
    dil_h, dil_w = _args.pair(dilation, "dilation", "conv2d")
    pads = _args.padding(padding, "conv2d")
    nthreads = _args.threads(threads, "conv2d")
    path = _paths.active_path_index()

    xt = _operands.as_operand(x, "x", 4, dense=True)
    _args.shape(xt.shape, "x", "conv2d")
    n, c, h, width = xt.shape
    inputs: list[tuple[Any, Operand]] = [(x, xt)]
    packed = w if isinstance(w, PackedConv2d) else None
    w_shape: tuple[int, ...]
    if packed is not None:
        if packed.path != _paths.path():
            raise ValueError(f"conv2d: w was packed for path {packed.path!r} but the active path "
                             f"is {_paths.path()!r}; pack it again under this path")
        if packed.groups != groups:
            raise ValueError(f"conv2d: w was packed for groups={packed.groups}, "
                             f"the call has groups={groups}")
        w_shape, w_ptr = packed.shape, packed.address
    else:
        wt = _operands.as_operand(w, "w", 4, dense=True)
        _args.shape(wt.shape, "w", "conv2d")
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
    out_h, out_w = _args.output_hw("conv2d", (h, width), pads, (kh, kw), (dil_h, dil_w),
                                   (stride_h, stride_w))
    _args.output_bytes((n, cout, out_h, out_w), "conv2d")
    bias_ptr = 0
    if bias is not None:
        bt = _operands.as_operand(bias, "bias", 1, dense=True)
        if bt.shape != (cout,):
            raise ValueError(f"conv2d: bias has shape {bt.shape}, expected ({cout},) for w of "
                             f"shape {w_shape}")
        bias_ptr = bt.ptr
        inputs.append((bias, bt))

    numpy_result = is_numpy(x) or (packed._numpy_source if packed is not None else is_numpy(w))
    output = _operands.Output(out, (n, cout, out_h, out_w), numpy_result, inputs, "conv2d")
    library = _lib.lib if code == _lib.MODE_EXACT else _lib.fast_lib
    args = _abi.Conv2dArgs(path, code, nthreads, n, c, h, width, cout, kh, kw, groups, stride_h,
                           stride_w, dil_h, dil_w, pads[0], pads[1], pads[2], pads[3], xt.ptr,
                           w_ptr, 1 if packed is not None else 0, bias_ptr,
                           act, output.ptr)
    return library, args, output, inputs


def _span(a: Any, ptr: int) -> tuple[int, int]:
    return ptr, ptr + a.nbytes


def _conv2d_numpy(x: Any, w: Any, bias: Any, stride: int, padding: int, dilation: int,
                  groups: int, activation: Any, mode: Any, threads: Optional[int],
                  out: Any = None) -> Any:
    """conv2d's fast path; None where the general path must decide."""
    call = _CONV_CALLS.get(mode) if type(mode) is str else None
    act = ACTIVATIONS.get(activation) if activation is None or type(activation) is str else None
    f32 = _matmul._FLOAT32
    limit = _LIMIT
    if (call is None or act is None or x.dtype is not f32 or x.ndim != 4
            or not x.flags.c_contiguous or not 1 <= stride <= limit
            or not 1 <= dilation <= limit or not 0 <= padding <= limit
            or not 1 <= groups <= limit):
        return None
    if type(w) is PackedConv2d:
        if w.groups != groups or w.path != _paths.path():
            return None
        w_shape, w_ptr, packed = w.shape, w.address, 1
    elif (type(w) is _matmul._NDARRAY and w.dtype is f32 and w.ndim == 4
            and w.flags.c_contiguous):
        w_shape, w_ptr, packed = w.shape, _matmul._data_address(w), 0
    else:
        return None
    n, c, h, width = x.shape
    cout, cin_g, kh, kw = w_shape
    if (not (n and c and cout and h and width) or c % groups or cout % groups
            or cin_g * groups != c or kh < 1 or kw < 1
            or (n | c | h | width | cout | kh | kw) >= limit):   # all below 2**40
        return None
    out_h = _args.window_output_size(h, padding, padding, kh, dilation, stride)
    out_w = _args.window_output_size(width, padding, padding, kw, dilation, stride)
    if out_h < 1 or out_w < 1 or n * cout * out_h * out_w > _MAX_ELEMENTS:
        return None
    bias_ptr = 0
    if bias is not None:
        if (type(bias) is not _matmul._NDARRAY or bias.dtype is not f32
                or bias.shape != (cout,) or not bias.flags.c_contiguous):
            return None
        bias_ptr = _matmul._data_address(bias)
    x_ptr = _matmul._data_address(x)
    path = (_matmul._DEFAULT_PATH if _paths.forced_path() is None
            else _paths.active_path_index())
    nthreads = _threads.fast_default if threads is None else _args.threads(threads, "conv2d")
    if (x_ptr | w_ptr | bias_ptr) % _matmul._ITEM or path is None or nthreads is None:
        return None
    if out is None:
        try:
            y = _matmul._np_empty((n, cout, out_h, out_w), f32)
        except MemoryError:
            return None   # the general path says what could not be allocated
    else:
        if (type(out) is not _matmul._NDARRAY or out.dtype is not f32
                or out.shape != (n, cout, out_h, out_w) or not out.flags.c_contiguous
                or not out.flags.writeable):
            return None
        y_lo, y_hi = _span(out, _matmul._data_address(out))
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
        act, _matmul._data_address(y)))
    if status:
        _lib.check_status(status, "conv2d")
    return y
