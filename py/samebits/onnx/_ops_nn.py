"""The products and layers: Conv, ConvTranspose, Gemm, MatMul, MaxPool,
AveragePool, GlobalAveragePool, GlobalMaxPool, Resize, Upsample.

Constant weights are packed once at load (pack_conv2d, pack, pack_linear)
for the path active then; the session runs on that path. One-dimensional
convolutions and pools run as two-dimensional ones of height 1, which
computes the same sums in the same order.
"""
from __future__ import annotations

import math
import struct
from typing import TYPE_CHECKING, Any, Optional, cast

import samebits as _sb

from .. import _args, _movement, _operands
from . import _model as M
from . import _values as V
from ._ops_math import _float_reduce, float_binary
from ._ops_shape import copy_view
from ._registry import Builder, Inputs, Kernel, NodeContext, need_floats, need_ints, op, required
from ._values import Floats, Ints, Value

if TYPE_CHECKING:
    import numpy as np
else:
    from ._values import np   # None without numpy


def _mode(ctx: NodeContext) -> dict[str, Any]:
    return {"mode": ctx.mode, "threads": ctx.threads}


# ---- geometry ---------------------------------------------------------------------

def _spatial_attrs(ctx: NodeContext, dims: int, kernel: Optional[list[int]]
                   ) -> tuple[list[int], list[int], list[int], str]:
    strides = ctx.ints("strides", [1] * dims)
    dilations = ctx.ints("dilations", [1] * dims)
    pads = ctx.ints("pads", [0] * (2 * dims))
    auto_pad = ctx.str("auto_pad", "NOTSET")
    if auto_pad not in ("NOTSET", "VALID", "SAME_UPPER", "SAME_LOWER"):
        raise ctx.error(f"auto_pad={auto_pad!r} is not supported")
    if len(strides) != dims or len(dilations) != dims or len(pads) != 2 * dims:
        raise ctx.error(f"strides {strides}, dilations {dilations} and pads {pads} do not fit "
                        f"{dims} spatial dimensions")
    if any(s < 1 for s in strides) or any(d < 1 for d in dilations) or any(p < 0 for p in pads):
        raise ctx.error(f"strides {strides} and dilations {dilations} must be positive, pads "
                        f"{pads} non-negative")
    if kernel is not None and (len(kernel) != dims or any(k < 1 for k in kernel)):
        raise ctx.error(f"kernel_shape {kernel} does not fit {dims} spatial dimensions")
    return strides, dilations, pads, auto_pad


def resolve_pads(in_sizes: list[int], kernel: list[int], strides: list[int],
                 dilations: list[int], pads: list[int], auto_pad: str) -> list[int]:
    """[begin..., end...] pads, auto_pad applied for these input sizes."""
    dims = len(in_sizes)
    if auto_pad == "NOTSET":
        return list(pads)
    if auto_pad == "VALID":
        return [0] * (2 * dims)
    begin, end = [], []
    for size, k, s, d in zip(in_sizes, kernel, strides, dilations):
        out = -(-size // s)
        total = max(0, (out - 1) * s + (k - 1) * d + 1 - size)
        small, large = total // 2, total - total // 2
        if auto_pad == "SAME_UPPER":
            begin.append(small)
            end.append(large)
        else:
            begin.append(large)
            end.append(small)
    return begin + end


def _as_2d(x: Floats, ctx: NodeContext, what: str) -> tuple[Floats, int]:
    """(N, C, L) as (N, C, 1, L); (N, C, H, W) as is. Returns (x, dims)."""
    if len(x.shape) == 3:
        return V.reshape(x, (x.shape[0], x.shape[1], 1, x.shape[2])), 1
    if len(x.shape) == 4:
        return x, 2
    raise ValueError(f"{ctx.where}: {what} must be 3-D or 4-D (N, C, ...), got {x.shape}")


def _from_2d(y: Floats, dims: int) -> Floats:
    """The inverse of _as_2d: a height-1 result back to (N, C, L) for 1-D."""
    return V.reshape(y, (y.shape[0], y.shape[1], y.shape[3])) if dims == 1 else y


def _spatial_sizes(x: Floats, dims: int) -> list[int]:
    """The spatial sizes of an _as_2d view, as the ONNX node sees them."""
    return list(x.shape[2:]) if dims == 2 else [x.shape[3]]


def _pairs(dims: int, values: list[int], fill: int) -> list[int]:
    """Per-dimension values for 2-D from 1-D or 2-D ones (height first)."""
    return [fill] + list(values) if dims == 1 else list(values)


def _torch_padding(dims: int, pads: list[int]) -> tuple[int, int, int, int]:
    """(top, bottom, left, right) from ONNX's [begins..., ends...]."""
    if dims == 1:
        return (0, 0, pads[0], pads[1])
    return (pads[0], pads[2], pads[1], pads[3])


# ---- convolution ---------------------------------------------------------------------

@op("Conv")
def _conv(ctx: NodeContext) -> Kernel:
    w_const = ctx.const(1)
    kernel = ctx.ints("kernel_shape", None)
    group = ctx.int("group", 1)
    dims = len(kernel) if kernel is not None else (
        len(w_const.shape) - 2 if w_const is not None else None)
    if dims is None:
        raise ctx.error("the weights must be a constant or kernel_shape given")
    if dims not in (1, 2):
        raise ctx.error(f"{dims}-D convolution is not supported (1-D and 2-D are)")
    strides, dilations, pads, auto_pad = _spatial_attrs(ctx, dims, kernel)
    if group < 1:
        raise ctx.error(f"group={group} must be positive")
    packed = None
    w4_shape = None
    if w_const is not None:
        w = need_floats(w_const, ctx, "W")
        if len(w.shape) != dims + 2 or (kernel is not None and list(w.shape[2:]) != kernel):
            raise ctx.error(f"weights of shape {w.shape} do not match kernel_shape {kernel}")
        w4 = V.reshape(w, (w.shape[0], w.shape[1], 1, w.shape[2])) if dims == 1 else w
        w4_shape = w4.shape
        packed = _sb.pack_conv2d(w4.data, groups=group)
        ctx.consume(1)
    bias_const = ctx.const(2)
    activation = ctx.node.fused.get("activation")   # an epilogue (_fuse.py)

    def run(inputs: Inputs) -> list[Value]:
        x, d = _as_2d(need_floats(inputs[0], ctx, "X"), ctx, "X")
        weights: Any   # a PackedConv2d or the weights' data
        if packed is not None:
            weights, wshape = packed, cast("tuple[int, ...]", w4_shape)   # set with packed
        else:
            w = need_floats(inputs[1], ctx, "W")
            if len(w.shape) != dims + 2:
                raise ValueError(f"{ctx.where}: W {w.shape} is not {dims}-D weights")
            w4 = V.reshape(w, (w.shape[0], w.shape[1], 1, w.shape[2])) if dims == 1 else w
            weights, wshape = w4.data, w4.shape
        b = bias_const if bias_const is not None else (inputs[2] if len(inputs) > 2 else None)
        kdims = list(wshape[2:]) if dims == 2 else [wshape[3]]
        p = resolve_pads(_spatial_sizes(x, dims), kdims, strides, dilations, pads, auto_pad)
        if x.shape[1] != wshape[1] * group:
            raise ValueError(f"{ctx.where}: X has {x.shape[1]} channels, W {wshape} with "
                             f"group={group} expects {wshape[1] * group}")
        if x.size == 0:
            raise ValueError(f"{ctx.where}: empty input {x.shape}")
        y = _sb.conv2d(x.data, weights, None if b is None else need_floats(b, ctx, "B").data,
                       stride=tuple(_pairs(dims, strides, 1)),
                       padding=_torch_padding(dims, p),
                       dilation=tuple(_pairs(dims, dilations, 1)), groups=group,
                       activation=activation, **_mode(ctx))
        return [_from_2d(Floats.wrap(y), dims)]
    return run


def _transposed_weights(w: Floats, group: int, ctx: NodeContext) -> Floats:
    """ConvTranspose's (C, M/g, kH, kW) weights as the equivalent convolution's
    (M, C/g, kH, kW), flipped in both spatial dimensions (a permutation of
    the values: bits untouched)."""
    c, mg, kh, kw = w.shape
    if c % group:
        raise ValueError(f"{ctx.where}: group={group} does not divide the {c} input channels")
    cg = c // group
    # w as (group, C/g, M/g, kH, kW) read into (group, M/g, C/g, kH, kW), both
    # kernel axes backwards: one strided copy
    sg, sc, sm, sh, sw = cg * mg * kh * kw, mg * kh * kw, kh * kw, kw, 1
    out = copy_view(V.reshape(w, (group, cg, mg, kh, kw)), (group, mg, cg, kh, kw),
                    (kh - 1) * sh + (kw - 1) * sw, [sg, sm, sc, -sh, -sw], ctx)
    return V.reshape(out, (mg * group, cg, kh, kw))


@op("ConvTranspose")
def _conv_transpose(ctx: NodeContext) -> Kernel:
    w_const = ctx.const(1)
    if w_const is None:
        raise ctx.error("the weights must be a constant")
    w = need_floats(w_const, ctx, "W")
    dims = len(w.shape) - 2
    if dims not in (1, 2):
        raise ctx.error(f"{dims}-D transposed convolution is not supported (1-D and 2-D are)")
    kernel = ctx.ints("kernel_shape", None)
    if kernel is not None and list(w.shape[2:]) != kernel:
        raise ctx.error(f"weights of shape {w.shape} do not match kernel_shape {kernel}")
    group = ctx.int("group", 1)
    strides, dilations, pads, auto_pad = _spatial_attrs(ctx, dims, list(w.shape[2:]))
    output_padding = ctx.ints("output_padding", [0] * dims)
    output_shape = ctx.ints("output_shape", None)
    if len(output_padding) != dims:
        raise ctx.error(f"output_padding {output_padding} does not fit {dims} dimensions")
    w4 = V.reshape(w, (w.shape[0], w.shape[1], 1, w.shape[2])) if dims == 1 else w
    wt = _transposed_weights(w4, group, ctx)
    packed = _sb.pack_conv2d(wt.data, groups=group)
    k2 = list(w4.shape[2:])
    s2, d2 = _pairs(dims, strides, 1), _pairs(dims, dilations, 1)
    op2 = _pairs(dims, output_padding, 0)

    def run(inputs: Inputs) -> list[Value]:
        x, _ = _as_2d(need_floats(inputs[0], ctx, "X"), ctx, "X")
        n, c, h, wd = x.shape
        if c != w4.shape[0]:
            raise ValueError(f"{ctx.where}: X has {c} channels, W {w.shape} expects "
                             f"{w4.shape[0]}")
        sizes = [h, wd]
        begin, end = [0, 0], [0, 0]
        raw = _pairs(dims, pads[:dims], 0), _pairs(dims, pads[dims:], 0)
        for i in range(2):
            full = s2[i] * (sizes[i] - 1) + op2[i] + (k2[i] - 1) * d2[i] + 1
            if output_shape is not None or auto_pad in ("SAME_UPPER", "SAME_LOWER"):
                target = (_pairs(dims, output_shape, 1)[i] if output_shape is not None
                          else sizes[i] * s2[i])
                total = full - target
                if auto_pad == "SAME_UPPER":
                    begin[i], end[i] = total // 2, total - total // 2
                else:
                    begin[i], end[i] = total - total // 2, total // 2
            elif auto_pad != "VALID":
                begin[i], end[i] = raw[0][i], raw[1][i]
        # the zero-stuffed input: x's values at multiples of the stride
        zh, zw = (h - 1) * s2[0] + 1, (wd - 1) * s2[1] + 1
        z = V.full_floats((n, c, zh, zw), 0.0)
        xo = _operands.as_operand(x.data, "X")
        zo = _operands.as_operand(z.data, "z")
        _movement.copy_strided(x.shape, xo.ptr, list(xo.strides), zo.ptr,
                               [zo.strides[0], zo.strides[1], zo.strides[2] * s2[0],
                                zo.strides[3] * s2[1]], _args.threads(ctx.threads, ctx.where),
                               ctx.where)
        lo = [(k2[i] - 1) * d2[i] - begin[i] for i in range(2)]
        hi = [(k2[i] - 1) * d2[i] - end[i] + op2[i] for i in range(2)]
        y = _sb.conv2d(z.data, packed, None, stride=1,
                       padding=(max(lo[0], 0), max(hi[0], 0), max(lo[1], 0), max(hi[1], 0)),
                       dilation=tuple(d2), groups=group, **_mode(ctx))
        out = Floats.wrap(y)
        if min(lo + hi) < 0:   # negative padding: crop the result
            for axis, (a, b) in enumerate(zip(lo, hi)):
                size = out.shape[2 + axis]
                start, stop = max(-a, 0), size - max(-b, 0)
                out = Floats.wrap(_sb.slice(out.data, 2 + axis, start, stop,
                                            threads=ctx.threads))
        b_in = inputs[2] if len(inputs) > 2 else None
        if b_in is not None:
            bias = need_floats(b_in, ctx, "B")
            out = float_binary("Add", out, V.reshape(bias, (bias.shape[0], 1, 1)), ctx)
        return [_from_2d(out, dims)]
    return run


# ---- products ---------------------------------------------------------------------------

@op("Gemm")
def _gemm(ctx: NodeContext) -> Kernel:
    alpha, beta = ctx.float("alpha", 1.0), ctx.float("beta", 1.0)
    trans_a, trans_b = ctx.int("transA", 0), ctx.int("transB", 0)
    if ctx.opset < 7:
        ctx.ignore("broadcast")
    b_const = ctx.const(1)
    packed = None
    if b_const is not None:
        b = need_floats(b_const, ctx, "B")
        if len(b.shape) != 2:
            raise ctx.error(f"B must be 2-D, got {b.shape}")
        packed = _sb.pack_linear(b.data) if trans_b else _sb.pack(b.data)
        ctx.consume(1)
    activation = ctx.node.fused.get("activation")   # only with packed B (_fuse.py)

    def run(inputs: Inputs) -> list[Value]:
        a = need_floats(inputs[0], ctx, "A")
        if len(a.shape) != 2:
            raise ValueError(f"{ctx.where}: A must be 2-D, got {a.shape}")
        if trans_a:
            a = Floats.wrap(_sb.permute(a.data, (1, 0), threads=ctx.threads))
        c = inputs[2] if len(inputs) > 2 else None
        # alpha = beta = 1 and a 1-D C: the bias of linear, one rounded add
        # after each sum, the same bits as the separate Add below
        fuse = (packed is not None and c is not None and alpha == 1.0 and beta == 1.0
                and len(c.shape) == 1)
        if packed is not None:
            y = Floats.wrap(_sb.linear(a.data, packed,
                                       need_floats(c, ctx, "C").data if fuse else None,
                                       activation=activation, **_mode(ctx)))
        else:
            b = need_floats(inputs[1], ctx, "B")
            if len(b.shape) != 2:
                raise ValueError(f"{ctx.where}: B must be 2-D, got {b.shape}")
            if trans_b:
                bt = b.data.T if np is not None else _sb.permute(b.data, (1, 0))
            else:
                bt = b.data
            y = Floats.wrap(_sb.matmul(a.data, bt, **_mode(ctx)))
        if alpha != 1.0:
            y = float_binary("Mul", y, V.floats_from_list([alpha], ()), ctx)
        if c is not None and not fuse and beta != 0.0:
            cc = need_floats(c, ctx, "C")
            if beta != 1.0:
                cc = float_binary("Mul", cc, V.floats_from_list([beta], ()), ctx)
            y = float_binary("Add", y, cc, ctx)
        return [y]
    return run


@op("MatMul")
def _matmul(ctx: NodeContext) -> Kernel:
    b_const = ctx.const(1)
    packed = None
    b_shape: tuple[int, ...] = ()   # B's shape when packed
    if b_const is not None and len(b_const.shape) == 2 and isinstance(b_const, Floats) \
            and b_const.size:
        packed, b_shape = _sb.pack(b_const.data), b_const.shape
        ctx.consume(1)
    # a bias and an activation absorbed at load (_fuse.py; only with packed B)
    bias_name = ctx.node.fused.get("bias")
    bias = need_floats(ctx.constant(bias_name), ctx, "bias").data if bias_name else None
    activation = ctx.node.fused.get("activation")

    def run(inputs: Inputs) -> list[Value]:
        a = need_floats(inputs[0], ctx, "A")
        if packed is not None and len(a.shape) >= 1:
            if a.shape[-1] != b_shape[0]:
                raise ValueError(f"{ctx.where}: A {a.shape} and B {b_shape} do not multiply")
            if a.size == 0:
                return [Floats(a.shape[:-1] + (b_shape[1],), None)]
            return [Floats.wrap(_sb.linear(a.data, packed, bias, activation=activation,
                                           **_mode(ctx)))]
        b = need_floats(inputs[1], ctx, "B")
        if a.size == 0 or b.size == 0:
            y = _sb.matmul(np.zeros(a.shape, np.float32), np.zeros(b.shape, np.float32)) \
                if np is not None else None
            if y is None:
                raise ValueError(f"{ctx.where}: empty operands are not supported without numpy")
            return [Floats(tuple(y.shape), None) if y.size == 0 else Floats.wrap(y)]
        return [Floats.wrap(_sb.matmul(a.data, b.data, **_mode(ctx)))]
    return run


# ---- pooling ------------------------------------------------------------------------------

def _pool_attrs(ctx: NodeContext) -> tuple[list[int], list[int], list[int], list[int], str, int]:
    """kernel_shape (1-D or 2-D), then _spatial_attrs' strides, dilations,
    pads, auto_pad, then ceil_mode."""
    kernel = ctx.ints("kernel_shape")
    if len(kernel) not in (1, 2):
        raise ctx.error(f"{len(kernel)}-D pooling is not supported (1-D and 2-D are)")
    return (kernel, *_spatial_attrs(ctx, len(kernel), kernel), ctx.int("ceil_mode", 0))


def _pool_geometry(x: Floats, dims: int, kernel: list[int], strides: list[int],
                   dilations: list[int], pads: list[int], auto_pad: str, ceil_mode: int
                   ) -> tuple[list[int], list[int], list[int]]:
    in_sizes = _spatial_sizes(x, dims)
    p = resolve_pads(in_sizes, kernel, strides, dilations, pads, auto_pad)
    begin, end = p[:dims], p[dims:]
    extra = [0] * dims
    if ceil_mode:
        for i in range(dims):
            extra[i] = _args.ceil_end_padding(in_sizes[i], (kernel[i] - 1) * dilations[i] + 1,
                                              strides[i], begin[i], end[i])
    return begin, end, extra


@op("MaxPool")
def _max_pool(ctx: NodeContext) -> Kernel:
    kernel, strides, dilations, pads, auto_pad, ceil_mode = _pool_attrs(ctx)
    dims = len(kernel)
    if ctx.int("storage_order", 0) != 0:
        raise ctx.error("storage_order=1 is not supported")
    ctx.only_first_output("Indices")

    def run(inputs: Inputs) -> list[Value]:
        x, _ = _as_2d(need_floats(inputs[0], ctx, "X"), ctx, "X")
        begin, end, extra = _pool_geometry(x, dims, kernel, strides, dilations, pads, auto_pad,
                                           ceil_mode)
        # padding is never a value (docs/maxpool.md): the ceil-mode tail too
        padding = _torch_padding(dims, begin + [e + x_ for e, x_ in zip(end, extra)])
        y = Floats.wrap(_sb.max_pool2d(x.data, tuple(_pairs(dims, kernel, 1)),
                                       tuple(_pairs(dims, strides, 1)), padding,
                                       tuple(_pairs(dims, dilations, 1)), threads=ctx.threads))
        return [_from_2d(y, dims)]
    return run


@op("AveragePool")
def _avg_pool(ctx: NodeContext) -> Kernel:
    kernel, strides, dilations, pads, auto_pad, ceil_mode = _pool_attrs(ctx)
    dims = len(kernel)
    if any(d != 1 for d in dilations):
        raise ctx.error(f"dilations {dilations} are not supported for AveragePool")
    include = ctx.int("count_include_pad", 0)

    def run(inputs: Inputs) -> list[Value]:
        x, _ = _as_2d(need_floats(inputs[0], ctx, "X"), ctx, "X")
        p = resolve_pads(_spatial_sizes(x, dims), kernel, strides, dilations, pads, auto_pad)
        y = Floats.wrap(_sb.avg_pool2d(x.data, tuple(_pairs(dims, kernel, 1)),
                                       tuple(_pairs(dims, strides, 1)),
                                       _torch_padding(dims, p), bool(ceil_mode), bool(include),
                                       threads=ctx.threads))
        return [_from_2d(y, dims)]
    return run


def _global_builder(name: str) -> Builder:
    def build(ctx: NodeContext) -> Kernel:
        def run(inputs: Inputs) -> list[Value]:
            x = need_floats(inputs[0], ctx, "X")
            if len(x.shape) < 3:
                raise ValueError(f"{ctx.where}: X must be (N, C, ...), got {x.shape}")
            axes = list(range(2, len(x.shape)))
            out_shape = x.shape[:2] + (1,) * len(axes)
            return [_float_reduce(name, x, axes, out_shape, ctx)]
        return run
    return build


op("GlobalAveragePool")(_global_builder("ReduceMean"))
op("GlobalMaxPool")(_global_builder("ReduceMax"))


# ---- resize ---------------------------------------------------------------------------

def _resize_plan(ctx: NodeContext, mode: str, coord: str, nearest_mode: str) -> tuple[str, Any]:
    """(samebits mode, align_corners) for the attribute combinations that
    samebits.interpolate defines."""
    if mode == "nearest":
        if coord == "asymmetric" and nearest_mode == "floor":
            return "nearest", None
        raise ctx.error(f"mode 'nearest' with coordinate_transformation_mode={coord!r} and "
                        f"nearest_mode={nearest_mode!r} is not supported (asymmetric with floor, "
                        f"as torch exports, is)")
    if mode == "linear":
        if coord in ("half_pixel", "pytorch_half_pixel"):
            return "bilinear", False
        if coord == "align_corners":
            return "bilinear", True
        raise ctx.error(f"mode 'linear' with coordinate_transformation_mode={coord!r} is not "
                        f"supported (half_pixel, pytorch_half_pixel and align_corners are)")
    raise ctx.error(f"mode {mode!r} is not supported (nearest and linear are)")


def _resize_run(ctx: NodeContext, x: Floats, scales: Optional[list[float]],
                sizes: Optional[list[int]], plan: tuple[str, Any], coord: str) -> Floats:
    if len(x.shape) != 4:
        raise ValueError(f"{ctx.where}: only 4-D (N, C, H, W) inputs are supported, got "
                         f"{x.shape}")
    mode, align = plan
    if sizes is not None:
        if len(sizes) != 4 or list(sizes[:2]) != list(x.shape[:2]):
            raise ValueError(f"{ctx.where}: sizes {sizes} must keep N and C of {x.shape}")
        if coord == "pytorch_half_pixel" and min(sizes[2:]) == 1:
            raise ValueError(f"{ctx.where}: pytorch_half_pixel to an output of size 1 is not "
                             f"supported")
        return Floats.wrap(_sb.interpolate(x.data, size=tuple(sizes[2:]), mode=mode,
                                           align_corners=align, threads=ctx.threads))
    if scales is None or len(scales) != 4 or scales[0] != 1.0 or scales[1] != 1.0:
        raise ValueError(f"{ctx.where}: scales {scales} must be 4 values starting 1, 1")
    out = [math.floor(d * s) for d, s in zip(x.shape[2:], scales[2:])]
    if coord == "pytorch_half_pixel" and min(out) == 1:
        raise ValueError(f"{ctx.where}: pytorch_half_pixel to an output of size 1 is not "
                         f"supported")
    return Floats.wrap(_sb.interpolate(x.data, scale_factor=tuple(scales[2:]), mode=mode,
                                       align_corners=align, threads=ctx.threads))


@op("Resize")
def _resize(ctx: NodeContext) -> Kernel:
    mode = ctx.str("mode", "nearest")
    coord = ctx.str("coordinate_transformation_mode",
                    "asymmetric" if ctx.opset < 11 else "half_pixel")
    # Resize-10 has no nearest_mode: it picks floor(x / scale) when upsampling
    # (as Upsample does, and ONNX Runtime's opset-10 kernel); downsampling
    # with it is refused at run
    nearest_mode = ctx.str("nearest_mode", "floor" if ctx.opset < 11 else "round_prefer_floor")
    ctx.ignore("cubic_coeff_a", "extrapolation_value")   # cubic and crop-and-resize only
    if ctx.int("exclude_outside", 0):
        raise ctx.error("exclude_outside=1 is not supported")
    if ctx.int("antialias", 0):
        raise ctx.error("antialias=1 is not supported")
    if ctx.has("axes"):
        axes = ctx.ints("axes")
        if sorted(a % 4 for a in axes) != [0, 1, 2, 3] and sorted(a % 4 for a in axes) != [2, 3]:
            raise ctx.error(f"axes {axes} are not supported")
    policy = ctx.str("keep_aspect_ratio_policy", "stretch")
    if policy != "stretch":
        raise ctx.error(f"keep_aspect_ratio_policy={policy!r} is not supported")
    plan = _resize_plan(ctx, mode, coord, nearest_mode)
    scales_at = 1 if ctx.opset < 11 else 2

    def run(inputs: Inputs) -> list[Value]:
        x = need_floats(inputs[0], ctx, "X")
        scales: Optional[list[float]] = None
        sizes: Optional[list[int]] = None
        if len(inputs) > scales_at and inputs[scales_at] is not None and \
                required(inputs[scales_at]).size:
            scales = V.float_list(need_floats(inputs[scales_at], ctx, "scales"))
        if ctx.opset >= 11 and len(inputs) > 3 and inputs[3] is not None and \
                required(inputs[3]).size:
            sizes = list(need_ints(inputs[3], ctx, "sizes").values)
        if (scales is None) == (sizes is None):
            raise ValueError(f"{ctx.where}: give exactly one of scales and sizes")
        if sizes is not None and len(sizes) == 2:
            sizes = list(x.shape[:2]) + sizes
        if scales is not None and len(scales) == 2:
            scales = [1.0, 1.0] + scales
        if ctx.opset < 11 and plan[0] == "nearest" and any(v < 1.0 for v in scales or []):
            raise ValueError(f"{ctx.where}: opset-10 nearest Resize with scales {scales} below "
                             f"1 (downsampling) is not supported")
        return [_resize_run(ctx, x, scales, sizes, plan, coord)]
    return run


@op("Upsample")
def _upsample(ctx: NodeContext) -> Kernel:
    mode = ctx.str("mode", "nearest")
    if mode != "nearest":
        raise ctx.error(f"Upsample mode {mode!r} is not supported (nearest is)")
    plan = ("nearest", None)
    attr_scales = ctx.attr("scales", M.A_FLOATS, None) if ctx.opset < 9 else None

    def run(inputs: Inputs) -> list[Value]:
        x = need_floats(inputs[0], ctx, "X")
        scales = attr_scales if attr_scales is not None else V.float_list(
            need_floats(inputs[1], ctx, "scales"))
        if any(v < 1.0 for v in scales):
            raise ValueError(f"{ctx.where}: Upsample scales {list(scales)} below 1")
        return [_resize_run(ctx, x, list(scales), None, plan, "asymmetric")]
    return run


# ---- local response normalization ------------------------------------------------------

@op("LRN")
def _lrn(ctx: NodeContext) -> Kernel:
    """y = x * (bias + s * sum)^(-beta) with s = float32(alpha / size) and sum the
    serial sum, from +0, of x^2 over the channels c - floor((size - 1) / 2) ..
    c + ceil((size - 1) / 2) that exist (increasing channel): every step one
    float32 operation (the products, the sums, multiply, add, pow, multiply)."""
    size = ctx.int("size")
    alpha, beta, bias = ctx.float("alpha", 1e-4), ctx.float("beta", 0.75), ctx.float("bias", 1.0)
    if size < 1:
        raise ctx.error(f"size={size} must be positive")

    def run(inputs: Inputs) -> list[Value]:
        x = need_floats(inputs[0], ctx, "X")
        if len(x.shape) < 3:
            raise ValueError(f"{ctx.where}: X must be (N, C, ...), got {x.shape}")
        if x.size == 0:
            return [x]
        n, c = x.shape[0], x.shape[1]
        inner = V.size_of(x.shape[2:])
        x3 = V.reshape(x, (n, c, inner))
        sq = Floats.wrap(_sb.mul(x3.data, x3.data, **_mode(ctx)))
        before, after = (size - 1) // 2, size - 1 - (size - 1) // 2
        # zero channels around, so that every window has `size` terms: the
        # padding's +0 terms leave each serial sum unchanged (+0 + v = v, and
        # the sum starts at +0)
        padded = Floats.wrap(_sb.pad(sq.data, [0, 0, before, after], 0.0, threads=ctx.threads))
        acc = V.full_floats((n, c, inner), 0.0)
        for k in range(size):
            window = _sb.slice(padded.data, 1, k, k + c)
            acc = Floats.wrap(_sb.add(acc.data, window, **_mode(ctx)))
        scale = struct.unpack("<f", struct.pack("<f", alpha))[0] / size
        t = Floats.wrap(_sb.add(_sb.mul(acc.data, float(scale), **_mode(ctx)), bias, **_mode(ctx)))
        p = Floats.wrap(_sb.pow(t.data, -beta, **_mode(ctx)))
        return [V.reshape(Floats.wrap(_sb.mul(x3.data, p.data, **_mode(ctx))), x.shape)]
    return run

