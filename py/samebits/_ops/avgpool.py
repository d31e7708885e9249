"""avg_pool2d and adaptive_avg_pool2d over float32 NCHW (or CHW) tensors
(csrc/kernels/avgpool.c), with torch's signatures and semantics."""
from __future__ import annotations

import ctypes
from typing import Any, Optional, Sequence, Union

from .._binding import abi as _abi, args as _args, lib as _lib, operands as _operands
from .._binding.args import pooled_size
from .._binding.operands import is_numpy

IntOrPair = Union[int, Sequence[int]]


def _input(x: Any, what: str) -> tuple[_operands.Operand, tuple[int, ...], bool]:
    t = _operands.as_operand(x, "x", min_ndim=3, dense=True)
    if t.ndim > 4:
        raise ValueError(f"{what}: x must be (N, C, H, W) or (C, H, W), got shape {t.shape}")
    _args.shape(t.shape, "x", what)
    unbatched = t.ndim == 3
    shape = (1, *t.shape) if unbatched else t.shape
    if shape[2] < 1 or shape[3] < 1:
        raise ValueError(f"{what}: the input height and width must be at least 1, got "
                         f"{shape[2]} x {shape[3]}")
    return t, shape, unbatched


def _run(what: str, x: Any, t: Any, shape: tuple[int, ...], unbatched: bool, oh: int, ow: int,
         fields: dict[str, int], out: Any, threads: Any) -> Any:
    nthreads = _args.threads(threads, what)
    n, c, h, w = shape
    out_shape = (c, oh, ow) if unbatched else (n, c, oh, ow)
    _args.output_bytes(out_shape, what)
    output = _operands.Output(out, out_shape, is_numpy(x), [(x, t)], what)
    args = _abi.AvgPool2dArgs(n=n, c=c, h=h, w=w, oh=oh, ow=ow, x=t.ptr, y=output.ptr,
                              max_threads=nthreads, **fields)
    _lib.check_status(_lib.lib.sb_avg_pool2d(ctypes.addressof(args)), what)
    return output.finish()


def avg_pool2d(x: Any, kernel_size: IntOrPair, stride: Optional[IntOrPair] = None,
               padding: IntOrPair = 0, ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override: Optional[int] = None, *, out: Any = None,
               threads: int | None = None) -> Any:
    """2-D average pooling, torch's signature and semantics (padding may also
    be a 4-tuple (top, bottom, left, right) as ONNX allows).

    Each output sums the window's taps that lie inside the input in
    row-major order from +0 (float32 adds), then divides once by: divisor_override
    when given; else the window's size clipped to the padded input when
    count_include_pad, or the number of inside taps otherwise. Each padding
    must be at most half the kernel (as torch requires). The same bits in
    both modes, everywhere (docs/exact-ops.md)."""
    what = "avg_pool2d"
    kh, kw = _args.pair(kernel_size, "kernel_size", what)
    sh, sw = (kh, kw) if stride is None else _args.pair(stride, "stride", what)
    pt, pb, pl, pr = _args.padding(padding, what)
    if max(pt, pb) > kh // 2 or max(pl, pr) > kw // 2:
        raise ValueError(f"{what}: padding {(pt, pb, pl, pr)} must be at most half the kernel "
                         f"{kh} x {kw}")
    for flag, name in ((ceil_mode, "ceil_mode"), (count_include_pad, "count_include_pad")):
        if type(flag) is not bool:
            raise TypeError(f"{what}: {name} must be a bool, got {type(flag).__name__}")
    divisor = 0
    if divisor_override is not None:
        divisor = _args.bounded(divisor_override, "divisor_override", what)
    t, shape, unbatched = _input(x, what)
    h, w = shape[2], shape[3]
    oh = pooled_size(h, kh, sh, pt, pb, ceil_mode)
    ow = pooled_size(w, kw, sw, pl, pr, ceil_mode)
    if oh < 1 or ow < 1:
        raise ValueError(f"{what}: the output size {oh} x {ow} is below 1 (input {h} x {w}, "
                         f"kernel {kh} x {kw}, padding {(pt, pb, pl, pr)})")
    fields = dict(kh=kh, kw=kw, stride_h=sh, stride_w=sw, pad_top=pt, pad_bottom=pb,
                  pad_left=pl, pad_right=pr, count_include_pad=int(count_include_pad),
                  divisor_override=divisor, adaptive=0)
    return _run(what, x, t, shape, unbatched, oh, ow, fields, out, threads)


def adaptive_avg_pool2d(x: Any, output_size: Union[int, Sequence[Optional[int]]], *,
                        out: Any = None, threads: int | None = None) -> Any:
    """torch's adaptive_avg_pool2d: output (oh, ow) (an int for both; None
    keeps that input size); output row i averages input rows
    floor(i H / oh) to ceil((i + 1) H / oh) - 1, columns likewise, summed in
    row-major order from +0 and divided once by the window's size.
    output_size=1 is global average pooling."""
    what = "adaptive_avg_pool2d"
    t, shape, unbatched = _input(x, what)
    if isinstance(output_size, (list, tuple)):
        if len(output_size) != 2:
            raise ValueError(f"{what}: output_size must be an int or a pair, got {output_size!r}")
        sizes = [shape[2 + i] if s is None else _args.bounded(s, "output_size", what)
                 for i, s in enumerate(output_size)]
    else:
        sizes = [_args.bounded(output_size, "output_size", what)] * 2
    fields = dict(kh=0, kw=0, stride_h=0, stride_w=0, pad_top=0, pad_bottom=0, pad_left=0,
                  pad_right=0, count_include_pad=0, divisor_override=0, adaptive=1)
    return _run(what, x, t, shape, unbatched, sizes[0], sizes[1], fields, out, threads)
