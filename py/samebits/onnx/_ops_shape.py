"""Shapes, constants, casts and data movement: Shape, Size, Reshape, Flatten,
Squeeze, Unsqueeze, Identity, Dropout, Constant, ConstantOfShape, Cast,
CastLike, Range, Concat, Split, Slice, Gather, Transpose, Expand, Tile,
Where, Pad, the comparisons and the logical operators.

Integer tensors are computed in Python (exactly); float32 tensors move
through samebits' C copies (values untouched, NaN payloads included), or,
where there is no C kernel, through numpy or, without numpy, Python over
the binary32 bit patterns. Either way the bits are the input's bits.
"""
from __future__ import annotations

import math
import struct
from typing import TYPE_CHECKING, Any, Callable, Optional, cast, overload

from .. import _movement, _operands
from .. import _args
from . import _flat
from . import _model as M
from . import _values as V
from ._ops_index import pad_by_index
from ._registry import (Builder, Inputs, Kernel, NodeContext, axis_index, need_floats,
                        need_ints, normalize_axes, op, required)
from ._values import Floats, Ints, Value

if TYPE_CHECKING:
    import numpy as np
else:
    from ._values import np   # None without numpy

import samebits as _sb


def _operand(t: Floats) -> _operands.Operand:
    return _operands.as_operand(t.data, "x")


def copy_view(x: Floats, shape: tuple[int, ...], offset: int, strides: list[int],
               ctx: NodeContext) -> Floats:
    """A new tensor of `shape` read from x at element offset + sum(i * strides)."""
    out = V.empty_floats(shape)
    if out.size == 0:
        return out
    t = _operand(x)
    o = _operands.as_operand(out.data, "out")
    _movement.copy_strided(shape, t.ptr + 4 * offset, strides, o.ptr, list(o.strides),
                           _args.threads(ctx.threads, ctx.where), ctx.where)
    return out


def _x_strides(x: Floats) -> list[int]:
    return list(_operand(x).strides) if x.size else _flat.c_strides(x.shape)


def shape_ints(v: Any, ctx: NodeContext, what: str) -> list[int]:
    t = need_ints(v, ctx, what)
    if len(t.shape) > 1:
        raise ValueError(f"{ctx.where}: input {what} must be 1-D, got shape {t.shape}")
    return list(t.values)


# ---- shapes -------------------------------------------------------------

@op("Shape")
def _shape(ctx: NodeContext) -> Kernel:
    start = ctx.int("start", 0)
    end = ctx.int("end", None)

    def run(inputs: Inputs) -> list[Value]:
        shape = list(required(inputs[0]).shape)
        r = len(shape)
        s = min(max(start + r if start < 0 else start, 0), r)
        e = r if end is None else min(max(end + r if end < 0 else end, 0), r)
        dims = shape[s:e] if e > s else []
        return [Ints((len(dims),), dims)]
    return run


@op("Size")
def _size(ctx: NodeContext) -> Kernel:
    return lambda inputs: [Ints((), [V.size_of(required(inputs[0]).shape)])]


@overload
def _reshape_value(v: Floats, shape: tuple[int, ...]) -> Floats: ...
@overload
def _reshape_value(v: Ints, shape: tuple[int, ...]) -> Ints: ...
@overload
def _reshape_value(v: Value, shape: tuple[int, ...]) -> Value: ...


def _reshape_value(v: Value, shape: tuple[int, ...]) -> Value:
    if isinstance(v, Floats):
        return V.reshape(v, shape)
    return Ints(shape, v.values, v.dtype)


@op("Reshape")
def _reshape(ctx: NodeContext) -> Kernel:
    allowzero = ctx.int("allowzero", 0)

    def run(inputs: Inputs) -> list[Value]:
        x = required(inputs[0])
        target = shape_ints(inputs[1], ctx, "shape")
        out, unknown = [], -1
        for i, d in enumerate(target):
            if d == 0 and not allowzero:
                if i >= len(x.shape):
                    raise ValueError(f"{ctx.where}: shape {target} copies dimension {i} of "
                                     f"{x.shape}, which it lacks")
                d = x.shape[i]
            elif d == -1:
                if unknown >= 0:
                    raise ValueError(f"{ctx.where}: shape {target} has two -1 entries")
                unknown = i
            elif d < 0:
                raise ValueError(f"{ctx.where}: shape {target} has a negative entry")
            out.append(d)
        if unknown >= 0:
            known = V.size_of([d for i, d in enumerate(out) if i != unknown])
            if known == 0 or V.size_of(x.shape) % known:
                raise ValueError(f"{ctx.where}: cannot reshape {x.shape} to {target}")
            out[unknown] = V.size_of(x.shape) // known
        if V.size_of(out) != V.size_of(x.shape):
            raise ValueError(f"{ctx.where}: cannot reshape {x.shape} ({V.size_of(x.shape)} "
                             f"elements) to {tuple(out)}")
        return [_reshape_value(x, tuple(out))]
    return run


@op("Flatten")
def _flatten(ctx: NodeContext) -> Kernel:
    axis = ctx.int("axis", 1)

    def run(inputs: Inputs) -> list[Value]:
        x = required(inputs[0])
        r = len(x.shape)
        if not -r <= axis <= r:
            raise ValueError(f"{ctx.where}: axis {axis} is out of range for rank {r}")
        a = axis + r if axis < 0 else axis
        return [_reshape_value(x, (V.size_of(x.shape[:a]), V.size_of(x.shape[a:])))]
    return run


def _axes_from(ctx: NodeContext, inputs: Inputs, attr_until: int) -> Optional[list[int]]:
    """Axes as an attribute (before opset `attr_until`) or as input 1."""
    if ctx.opset < attr_until:
        return None
    if len(inputs) > 1 and inputs[1] is not None:
        return shape_ints(inputs[1], ctx, "axes")
    return None


@op("Squeeze")
def _squeeze(ctx: NodeContext) -> Kernel:
    attr_axes = ctx.ints("axes", None) if ctx.opset < 13 else None

    def run(inputs: Inputs) -> list[Value]:
        x = required(inputs[0])
        axes = attr_axes if ctx.opset < 13 else _axes_from(ctx, inputs, 13)
        r = len(x.shape)
        if axes is None:
            drop = [i for i, d in enumerate(x.shape) if d == 1]
        else:
            drop = normalize_axes(axes, r, ctx)
            for a in drop:
                if x.shape[a] != 1:
                    raise ValueError(f"{ctx.where}: cannot squeeze axis {a} of shape {x.shape}")
        return [_reshape_value(x, tuple(d for i, d in enumerate(x.shape) if i not in drop))]
    return run


@op("Unsqueeze")
def _unsqueeze(ctx: NodeContext) -> Kernel:
    attr_axes = ctx.ints("axes") if ctx.opset < 13 else None

    def run(inputs: Inputs) -> list[Value]:
        x = required(inputs[0])
        axes = attr_axes if ctx.opset < 13 else _axes_from(ctx, inputs, 13)
        if axes is None:
            raise ValueError(f"{ctx.where}: axes are required")
        r = len(x.shape) + len(axes)
        new = normalize_axes(axes, r, ctx)
        it = iter(x.shape)
        shape = tuple(1 if i in new else next(it) for i in range(r))
        return [_reshape_value(x, shape)]
    return run


@op("Identity")
def _identity(ctx: NodeContext) -> Kernel:
    return lambda inputs: [required(inputs[0])]


@op("Dropout")
def _dropout(ctx: NodeContext) -> Kernel:
    # inference: the input passes through; `seed` draws nothing without training
    ctx.ignore("seed", "is_test")
    if ctx.opset < 12 and ctx.has("ratio"):
        ctx.float("ratio")
    ctx.only_first_output("mask")

    def run(inputs: Inputs) -> list[Value]:
        if len(inputs) > 2 and inputs[2] is not None and any(need_ints(inputs[2], ctx,
                                                                        "training_mode").values):
            raise ValueError(f"{ctx.where}: training_mode=True is not supported (inference only)")
        return [required(inputs[0])]
    return run


# ---- constants and casts ----------------------------------------------------

@op("Constant")
def _constant(ctx: NodeContext) -> Kernel:
    present = [n for n in ("value", "value_float", "value_floats", "value_int", "value_ints",
                           "sparse_value", "value_string", "value_strings")
               if ctx.has(n)]
    if len(present) != 1:
        raise ctx.error(f"needs exactly one value attribute, has {present or 'none'}")
    name = present[0]
    if name == "value":
        value = V.from_proto(ctx.attr("value", M.A_TENSOR), ctx.where)
    elif name == "value_float":
        value = V.floats_from_list([ctx.float(name)], ())
    elif name == "value_floats":
        vals = ctx.attr(name, M.A_FLOATS)
        value = V.floats_from_list(vals, (len(vals),))
    elif name == "value_int":
        value = Ints((), [ctx.int(name)])
    elif name == "value_ints":
        vals = ctx.ints(name)
        value = Ints((len(vals),), vals)
    else:
        raise ctx.error(f"attribute {name!r} is not supported (no sparse or string tensors)")
    return lambda inputs: [value]


@op("ConstantOfShape")
def _constant_of_shape(ctx: NodeContext) -> Kernel:
    proto = ctx.attr("value", M.A_TENSOR, None)
    fill = V.from_proto(proto, ctx.where) if proto is not None else V.floats_from_list([0.0], (1,))
    if V.size_of(fill.shape) != 1:
        raise ctx.error("attribute 'value' must hold one element")

    def run(inputs: Inputs) -> list[Value]:
        shape = tuple(shape_ints(inputs[0], ctx, "input"))
        if any(d < 0 for d in shape):
            raise ValueError(f"{ctx.where}: negative dimension in {shape}")
        if isinstance(fill, Floats):
            return [V.floats_from_bits(V.float_bits(fill) * V.size_of(shape), shape)]
        return [Ints(shape, fill.values * V.size_of(shape), fill.dtype)]
    return run


def float32_of_int(v: int) -> float:
    """The float32 nearest to the integer v (ties to even): one rounding,
    also beyond 2^53 where int -> float64 -> float32 could round twice."""
    if abs(v) < (1 << 53):
        return V._to_float32(float(v))
    sign = -1 if v < 0 else 1
    a = abs(v)
    shift = a.bit_length() - 24
    q, r = divmod(a, 1 << shift)
    half = 1 << (shift - 1)
    if r > half or (r == half and q & 1):
        q += 1
    return sign * math.ldexp(float(q), shift)   # |v| < 2^64: never beyond float32's range


def int_of_float(x: float, dtype: int) -> int:
    """A C-style cast of a float32 value to an integer type: truncation toward
    zero. NaN and values beyond the type give the type's minimum for signed
    types and 0 for unsigned ones (the x86 conversion's 'indefinite' value;
    ONNX leaves them undefined)."""
    lo, hi = V.INT_RANGES[dtype]
    if dtype == M.BOOL:
        return 0 if x == 0.0 else 1     # NaN is true, as C's (bool) cast
    if math.isnan(x) or math.isinf(x):
        return lo if lo < 0 else 0
    v = int(x)
    if not lo <= v <= hi:
        return V.wrap_int(v, dtype) if dtype in (M.UINT8, M.INT8, M.INT16, M.UINT16) else (
            lo if lo < 0 else 0)
    return v


_CASTABLE = set(V.INT_TYPES) | {M.FLOAT}


def cast_value(v: Optional[Value], to: int, ctx: NodeContext) -> Value:
    v = required(v)
    if to == M.FLOAT:
        if isinstance(v, Floats):
            return v
        if v.size == 0:
            return Floats(v.shape, None)
        if np is not None:
            return Floats(v.shape, np.array([float32_of_int(i) for i in v.values],
                                            dtype=np.float32).reshape(v.shape))
        return V.floats_from_list([float32_of_int(i) for i in v.values], v.shape)
    if isinstance(v, Floats):
        values = V.float_list(v) if v.size else []
        return Ints(v.shape, [int_of_float(x, to) for x in values], to)
    if to == M.BOOL:
        return Ints(v.shape, [1 if i else 0 for i in v.values], to)
    return Ints(v.shape, [V.wrap_int(i, to) for i in v.values], to)


@op("Cast")
def _cast(ctx: NodeContext) -> Kernel:
    to = ctx.int("to")
    ctx.ignore("saturate")   # only for float8 targets, which are refused
    if to not in _CASTABLE:
        raise ctx.error(f"Cast to {M.DTYPE_NAMES.get(to, to)} is not supported "
                        f"(float32, integer and bool tensors are)")
    return lambda inputs: [cast_value(inputs[0], to, ctx)]


@op("CastLike")
def _cast_like(ctx: NodeContext) -> Kernel:
    ctx.ignore("saturate")

    def run(inputs: Inputs) -> list[Value]:
        like = required(inputs[1])
        to = M.FLOAT if isinstance(like, Floats) else like.dtype
        return [cast_value(inputs[0], to, ctx)]
    return run


@op("Range")
def _range(ctx: NodeContext) -> Kernel:
    def run(inputs: Inputs) -> list[Value]:
        a, b, d = required(inputs[0]), required(inputs[1]), required(inputs[2])
        if isinstance(a, Ints) and isinstance(b, Ints) and isinstance(d, Ints):
            first, stop, step = a.values[0], b.values[0], d.values[0]
            if step == 0:
                raise ValueError(f"{ctx.where}: delta is 0")
            count = max(0, -(-(stop - first) // step))
            return [Ints((count,), [first + i * step for i in range(count)], a.dtype)]
        fa, fb, fd = (V.float_list(need_floats(t, ctx, w)) for t, w in
                      ((a, "start"), (b, "limit"), (d, "delta")))
        start, limit, delta = fa[0], fb[0], fd[0]
        if delta == 0 or not all(math.isfinite(v) for v in (start, limit, delta)):
            raise ValueError(f"{ctx.where}: start, limit and delta must be finite, delta nonzero")
        n = max(0, math.ceil((limit - start) / delta))
        if n == 0:
            return [Floats((0,), None)]
        # output[i] = start + i * delta: one float32 multiply and one add (samebits)
        idx = V.floats_from_list([float(i) for i in range(n)], (n,))
        prod = _sb.mul(idx.data, delta, mode="exact")
        return [Floats.wrap(_sb.add(prod, start, mode="exact"))]
    return run


# ---- joining, splitting, slicing ------------------------------------------------

@op("Concat")
def _concat(ctx: NodeContext) -> Kernel:
    axis = ctx.int("axis")

    def run(inputs: Inputs) -> list[Value]:
        parts = [t for t in inputs if t is not None]
        r = len(parts[0].shape)
        a = axis_index(axis, r, ctx)
        for t in parts:
            if len(t.shape) != r or any(t.shape[i] != parts[0].shape[i] for i in range(r)
                                        if i != a):
                raise ValueError(f"{ctx.where}: shapes {[p.shape for p in parts]} do not "
                                 f"concatenate along axis {a}")
        dims = list(parts[0].shape)
        dims[a] = sum(t.shape[a] for t in parts)
        shape = tuple(dims)
        if all(isinstance(t, Floats) for t in parts):
            nonempty = [cast(Floats, t).data for t in parts if t.size]
            if V.size_of(shape) == 0 or not nonempty:
                return [Floats(shape, None)]
            return [Floats.wrap(_sb.concatenate(nonempty, a, threads=ctx.threads))]
        if not all(isinstance(t, Ints) for t in parts):
            raise TypeError(f"{ctx.where}: cannot concatenate float32 with integer tensors")
        outer = V.size_of(shape[:a])
        values: list[int] = []
        for o in range(outer):
            for t in parts:
                inner = V.size_of(t.shape[a:])
                values += cast(Ints, t).values[o * inner:(o + 1) * inner]
        return [Ints(shape, values, cast(Ints, parts[0]).dtype)]
    return run


@overload
def slice_value(x: Floats, starts: list[int], counts: list[int], steps: list[int],
                ctx: NodeContext) -> Floats: ...
@overload
def slice_value(x: Ints, starts: list[int], counts: list[int], steps: list[int],
                ctx: NodeContext) -> Ints: ...
@overload
def slice_value(x: Value, starts: list[int], counts: list[int], steps: list[int],
                ctx: NodeContext) -> Value: ...


def slice_value(x: Value, starts: list[int], counts: list[int], steps: list[int],
                ctx: NodeContext) -> Value:
    """x[starts[d] :: steps[d]] with counts[d] elements on every dimension d."""
    shape = tuple(counts)
    if isinstance(x, Floats):
        if V.size_of(shape) == 0:
            return Floats(shape, None)
        strides = _x_strides(x)
        offset = sum(s * st for s, st in zip(starts, strides))
        return copy_view(x, shape, offset, [st * k for st, k in zip(strides, steps)], ctx)
    strides = _flat.c_strides(x.shape)
    offset = sum(s * st for s, st in zip(starts, strides))
    m = _flat.strided_map(shape, offset, [st * k for st, k in zip(strides, steps)])
    return Ints(shape, _flat.take(x.values, m), x.dtype)


@op("Slice")
def _slice(ctx: NodeContext) -> Kernel:
    if ctx.opset < 10:
        attr = (ctx.ints("starts"), ctx.ints("ends"), ctx.ints("axes", None))
    else:
        attr = None

    def run(inputs: Inputs) -> list[Value]:
        x = required(inputs[0])
        r = len(x.shape)
        if attr is not None:
            starts, ends, axes = attr
            steps = None
        else:
            starts = shape_ints(inputs[1], ctx, "starts")
            ends = shape_ints(inputs[2], ctx, "ends")
            axes = shape_ints(inputs[3], ctx, "axes") if len(inputs) > 3 and inputs[3] is not None \
                else None
            steps = shape_ints(inputs[4], ctx, "steps") if len(inputs) > 4 and \
                inputs[4] is not None else None
        if axes is None:
            axes = list(range(len(starts)))
        if steps is None:
            steps = [1] * len(starts)
        if not len(starts) == len(ends) == len(axes) == len(steps):
            raise ValueError(f"{ctx.where}: starts, ends, axes and steps differ in length")
        axes = normalize_axes(axes, r, ctx)
        first = [0] * r
        counts = list(x.shape)
        step_all = [1] * r
        for a, s, e, k in zip(axes, starts, ends, steps):
            if k == 0:
                raise ValueError(f"{ctx.where}: a step is 0")
            first[a], counts[a] = _flat.slice_bounds(x.shape[a], s, e, k)
            step_all[a] = k
        return [slice_value(x, first, counts, step_all, ctx)]
    return run


@op("Split")
def _split(ctx: NodeContext) -> Kernel:
    axis = ctx.int("axis", 0)
    attr_split = ctx.ints("split", None) if ctx.opset < 13 else None
    num_outputs = ctx.int("num_outputs", None) if ctx.opset >= 18 else None
    outputs = len(ctx.node.outputs)

    def run(inputs: Inputs) -> list[Value]:
        x = required(inputs[0])
        r = len(x.shape)
        a = axis_index(axis, r, ctx)
        size = x.shape[a]
        split = attr_split
        if ctx.opset >= 13 and len(inputs) > 1 and inputs[1] is not None:
            split = shape_ints(inputs[1], ctx, "split")
        if split is None:
            n = num_outputs or outputs
            chunk = -(-size // n)
            split = [min(chunk, max(0, size - i * chunk)) for i in range(n)]
        if len(split) != outputs or sum(split) != size or any(s < 0 for s in split):
            raise ValueError(f"{ctx.where}: split {split} does not cut dimension {a} of "
                             f"{x.shape} into {outputs} outputs")
        out, at = [], 0
        for length in split:
            first = [0] * r
            counts = list(x.shape)
            first[a], counts[a] = at, length
            out.append(slice_value(x, first, counts, [1] * r, ctx))
            at += length
        return out
    return run


@op("Transpose")
def _transpose(ctx: NodeContext) -> Kernel:
    perm_attr = ctx.ints("perm", None)

    def run(inputs: Inputs) -> list[Value]:
        x = required(inputs[0])
        r = len(x.shape)
        perm = list(range(r))[::-1] if perm_attr is None else perm_attr
        if sorted(perm) != list(range(r)):
            raise ValueError(f"{ctx.where}: perm {perm} is not a permutation of {r} axes")
        if isinstance(x, Floats):
            shape = tuple(x.shape[p] for p in perm)
            if x.size == 0:
                return [Floats(shape, None)]
            return [Floats.wrap(_sb.permute(x.data, perm, threads=ctx.threads))]
        shape, m = _flat.transpose_map(x.shape, perm)
        return [Ints(shape, _flat.take(x.values, m), x.dtype)]
    return run


@overload
def _permuted(x: Floats, shape: tuple[int, ...], perm: list[int], out_shape: tuple[int, ...],
              ctx: NodeContext) -> Floats: ...
@overload
def _permuted(x: Value, shape: tuple[int, ...], perm: list[int], out_shape: tuple[int, ...],
              ctx: NodeContext) -> Value: ...


def _permuted(x: Value, shape: tuple[int, ...], perm: list[int], out_shape: tuple[int, ...],
              ctx: NodeContext) -> Value:
    """x viewed as `shape`, its axes permuted, viewed as `out_shape` (a copy)."""
    y = _reshape_value(x, shape)
    if isinstance(y, Floats):
        if y.size == 0:
            return Floats(out_shape, None)
        z: Value = Floats.wrap(_sb.permute(y.data, perm, threads=ctx.threads))
    else:
        z_shape, m = _flat.transpose_map(y.shape, perm)
        z = Ints(z_shape, _flat.take(y.values, m), y.dtype)
    return _reshape_value(z, out_shape)


@op("DepthToSpace")
def _depth_to_space(ctx: NodeContext) -> Kernel:
    b = ctx.int("blocksize")
    mode = ctx.str("mode", "DCR")
    if b < 1 or mode not in ("DCR", "CRD"):
        raise ctx.error(f"blocksize {b} and mode {mode!r} are not supported")

    def run(inputs: Inputs) -> list[Value]:
        x = required(inputs[0])
        if len(x.shape) != 4 or x.shape[1] % (b * b):
            raise ValueError(f"{ctx.where}: input {x.shape} is not (N, C, H, W) with C a "
                             f"multiple of {b * b}")
        n, c, h, w = x.shape
        out = (n, c // (b * b), h * b, w * b)
        if mode == "DCR":
            return [_permuted(x, (n, b, b, c // (b * b), h, w), [0, 3, 4, 1, 5, 2], out, ctx)]
        return [_permuted(x, (n, c // (b * b), b, b, h, w), [0, 1, 4, 2, 5, 3], out, ctx)]
    return run


@op("SpaceToDepth")
def _space_to_depth(ctx: NodeContext) -> Kernel:
    b = ctx.int("blocksize")
    if b < 1:
        raise ctx.error(f"blocksize {b} is not supported")

    def run(inputs: Inputs) -> list[Value]:
        x = required(inputs[0])
        if len(x.shape) != 4 or x.shape[2] % b or x.shape[3] % b:
            raise ValueError(f"{ctx.where}: input {x.shape} is not (N, C, H, W) with H and W "
                             f"multiples of {b}")
        n, c, h, w = x.shape
        return [_permuted(x, (n, c, h // b, b, w // b, b), [0, 3, 5, 1, 2, 4],
                          (n, c * b * b, h // b, w // b), ctx)]
    return run


@op("Gather")
def _gather(ctx: NodeContext) -> Kernel:
    axis = ctx.int("axis", 0)

    def run(inputs: Inputs) -> list[Value]:
        x, idx = required(inputs[0]), need_ints(inputs[1], ctx, "indices")
        r = len(x.shape)
        a = axis_index(axis, r, ctx)
        size = x.shape[a]
        for i in idx.values:
            if not -size <= i < size:
                raise IndexError(f"{ctx.where}: index {i} is out of range for axis {a} "
                                 f"of size {size}")
        shape = x.shape[:a] + idx.shape + x.shape[a + 1:]
        if isinstance(x, Floats):
            if V.size_of(shape) == 0:
                return [Floats(shape, None)]
            if idx.shape == ():
                return [Floats.wrap(_sb.take(x.data, idx.values[0], a, threads=ctx.threads))]
            index_buffer = memoryview(struct.pack(f"<{idx.size}q", *idx.values)).cast(
                "q", idx.shape)
            return [Floats.wrap(_sb.take(x.data, index_buffer, a, threads=ctx.threads))]
        outer, inner = V.size_of(x.shape[:a]), V.size_of(x.shape[a + 1:])
        values: list[int] = []
        for o in range(outer):
            for i in idx.values:
                i = i + size if i < 0 else i
                start = (o * size + i) * inner
                values += x.values[start:start + inner]
        return [Ints(shape, values, x.dtype)]
    return run


@overload
def expand_value(x: Floats, shape: tuple[int, ...], ctx: NodeContext) -> Floats: ...
@overload
def expand_value(x: Ints, shape: tuple[int, ...], ctx: NodeContext) -> Ints: ...
@overload
def expand_value(x: Value, shape: tuple[int, ...], ctx: NodeContext) -> Value: ...


def expand_value(x: Value, shape: tuple[int, ...], ctx: NodeContext) -> Value:
    """x broadcast to `shape` (a copy)."""
    if isinstance(x, Floats):
        if V.size_of(shape) == 0:
            return Floats(shape, None)
        strides = _x_strides(x)
        pad = len(shape) - len(x.shape)
        st = [0] * pad + [0 if d == 1 else s for d, s in zip(x.shape, strides)]
        return copy_view(x, shape, 0, st, ctx)
    return Ints(shape, _flat.take(x.values, _flat.broadcast_map(shape, x.shape)), x.dtype)


@op("Expand")
def _expand(ctx: NodeContext) -> Kernel:
    def run(inputs: Inputs) -> list[Value]:
        x = required(inputs[0])
        target = shape_ints(inputs[1], ctx, "shape")
        shape = _flat.broadcast_shape([x.shape, target], ctx.where)
        return [expand_value(x, shape, ctx)]
    return run


@op("Tile")
def _tile(ctx: NodeContext) -> Kernel:
    def run(inputs: Inputs) -> list[Value]:
        x = required(inputs[0])
        reps = shape_ints(inputs[1], ctx, "repeats")
        if len(reps) != len(x.shape) or any(k < 0 for k in reps):
            raise ValueError(f"{ctx.where}: repeats {reps} do not match rank {len(x.shape)}")
        # tile = expand over interleaved (rep, dim) axes, then merge the pairs
        inter_shape: list[int] = []
        for k, d in zip(reps, x.shape):
            inter_shape += [k, d]
        src = _reshape_value(x, tuple(v for d in x.shape for v in (1, d)))
        y = expand_value(src, tuple(inter_shape), ctx)
        return [_reshape_value(y, tuple(k * d for k, d in zip(reps, x.shape)))]
    return run


@op("Pad")
def _pad(ctx: NodeContext) -> Kernel:
    mode = ctx.str("mode", "constant")
    modes = ("constant", "reflect", "edge") + (("wrap",) if ctx.opset >= 19 else ())
    if mode not in modes:
        raise ctx.error(f"mode {mode!r} is not supported ({', '.join(modes)} are)")
    attr_pads = ctx.ints("pads") if ctx.opset < 11 else None
    attr_value = ctx.float("value", 0.0) if ctx.opset < 11 else None

    def run(inputs: Inputs) -> list[Value]:
        x = required(inputs[0])
        r = len(x.shape)
        if attr_pads is not None:
            pads, value = attr_pads, cast(float, attr_value)   # both given before opset 11
            axes = list(range(r))
        else:
            pads = shape_ints(inputs[1], ctx, "pads")
            value = 0.0
            if len(inputs) > 2 and inputs[2] is not None:
                c = required(inputs[2])
                value = V.float_list(c)[0] if isinstance(c, Floats) else c.values[0]
            axes = list(range(r))
            if len(inputs) > 3 and inputs[3] is not None:
                axes = normalize_axes(shape_ints(inputs[3], ctx, "axes"), r, ctx)
        if len(pads) != 2 * len(axes):
            raise ValueError(f"{ctx.where}: pads {pads} do not match {len(axes)} axes")
        before, after = [0] * r, [0] * r
        for i, a in enumerate(axes):
            before[a], after[a] = pads[i], pads[i + len(axes)]
        if mode != "constant":
            return [pad_by_index(x, before, after, mode, ctx)]
        if isinstance(x, Ints):
            if any(p < 0 for p in before + after):
                raise ValueError(f"{ctx.where}: negative pads on integer tensors are not "
                                 f"supported")
            shape = tuple(d + b + e for d, b, e in zip(x.shape, before, after))
            out = [int(value)] * V.size_of(shape)
            strides = _flat.c_strides(shape)
            offset = sum(b * s for b, s in zip(before, strides))
            for src, dst in enumerate(_flat.strided_map(x.shape, offset, strides)):
                out[dst] = x.values[src]
            return [Ints(shape, out, x.dtype)]
        torch_pads: list[int] = []
        for a in reversed(range(r)):
            torch_pads += [before[a], after[a]]
        shape = tuple(d + b + e for d, b, e in zip(x.shape, before, after))
        if any(d < 0 for d in shape):
            raise ValueError(f"{ctx.where}: pads {pads} crop {x.shape} below zero")
        if V.size_of(shape) == 0:
            return [Floats(shape, None)]
        if x.size == 0:
            return [V.full_floats(shape, value)]
        return [Floats.wrap(_sb.pad(x.data, torch_pads, value, threads=ctx.threads))]
    return run


# ---- selection, comparisons, logic ---------------------------------------------

def _bits_or_ints(v: Value) -> list[int]:
    return V.float_bits(v) if isinstance(v, Floats) else v.values


@op("Where")
def _where(ctx: NodeContext) -> Kernel:
    def run(inputs: Inputs) -> list[Value]:
        cond = need_ints(inputs[0], ctx, "condition")
        x, y = required(inputs[1]), required(inputs[2])
        if isinstance(x, Floats) != isinstance(y, Floats):
            raise TypeError(f"{ctx.where}: X and Y must have the same type")
        shape = _flat.broadcast_shape([cond.shape, x.shape, y.shape], ctx.where)
        if isinstance(x, Floats):
            if V.size_of(shape) == 0:
                return [Floats(shape, None)]
            if np is not None:
                c = np.array(cond.values, dtype=bool).reshape(cond.shape)
                y = cast(Floats, y)   # the same type as x, checked above
                xs: Any = x.data if x.size else np.zeros(x.shape, np.float32)   # numpy arrays
                ys: Any = y.data if y.size else np.zeros(y.shape, np.float32)
                return [Floats(shape, V.c_order(np.where(c, xs, ys)))]
        n = V.size_of(shape)
        cm = _flat.broadcast_map(shape, cond.shape)
        xm = _flat.broadcast_map(shape, x.shape)
        ym = _flat.broadcast_map(shape, y.shape)
        xv, yv, cv = _bits_or_ints(x), _bits_or_ints(y), cond.values
        out = [xv[xm[i]] if cv[cm[i]] else yv[ym[i]] for i in range(n)]
        if isinstance(x, Floats):
            return [V.floats_from_bits(out, shape)]
        return [Ints(shape, out, x.dtype)]
    return run


_COMPARE: dict[str, Callable[[Any, Any], Any]] = {"Equal": lambda a, b: a == b, "Less": lambda a, b: a < b,
            "Greater": lambda a, b: a > b, "LessOrEqual": lambda a, b: a <= b,
            "GreaterOrEqual": lambda a, b: a >= b}


def _compare_builder(name: str) -> Builder:
    fn = _COMPARE[name]

    def build(ctx: NodeContext) -> Kernel:
        def run(inputs: Inputs) -> list[Value]:
            a, b = required(inputs[0]), required(inputs[1])
            if isinstance(a, Floats) != isinstance(b, Floats):
                raise TypeError(f"{ctx.where}: inputs must have the same type")
            shape = _flat.broadcast_shape([a.shape, b.shape], ctx.where)
            if isinstance(a, Floats):
                b = cast(Floats, b)   # the same type as a, checked above
                av: Any   # numpy arrays, else lists of numbers
                bv: Any
                if np is not None and V.size_of(shape):
                    av = a.data if a.size else np.zeros(a.shape, np.float32)
                    bv = b.data if b.size else np.zeros(b.shape, np.float32)
                    with np.errstate(invalid="ignore"):
                        r = fn(np.asarray(av), np.asarray(bv))
                    return [Ints(shape, [int(v) for v in np.broadcast_to(r, shape).reshape(-1)],
                                 M.BOOL)]
                av, bv = V.float_list(a) if a.size else [], V.float_list(b) if b.size else []
            else:
                av, bv = a.values, cast(Ints, b).values
            am, bm = _flat.broadcast_map(shape, a.shape), _flat.broadcast_map(shape, b.shape)
            return [Ints(shape, [1 if fn(av[i], bv[j]) else 0 for i, j in zip(am, bm)], M.BOOL)]
        return run
    return build


for _name in _COMPARE:
    op(_name)(_compare_builder(_name))

_LOGIC: dict[str, Callable[[int, int], Any]] = {"And": lambda a, b: a and b, "Or": lambda a, b: a or b,
          "Xor": lambda a, b: bool(a) != bool(b)}


def _logic_builder(name: str) -> Builder:
    fn = _LOGIC[name]

    def build(ctx: NodeContext) -> Kernel:
        def run(inputs: Inputs) -> list[Value]:
            a, b = need_ints(inputs[0], ctx, "A"), need_ints(inputs[1], ctx, "B")
            shape = _flat.broadcast_shape([a.shape, b.shape], ctx.where)
            am, bm = _flat.broadcast_map(shape, a.shape), _flat.broadcast_map(shape, b.shape)
            return [Ints(shape, [1 if fn(a.values[i], b.values[j]) else 0
                                 for i, j in zip(am, bm)], M.BOOL)]
        return run
    return build


for _name in _LOGIC:
    op(_name)(_logic_builder(_name))


@op("Not")
def _not(ctx: NodeContext) -> Kernel:
    def run(inputs: Inputs) -> list[Value]:
        a = need_ints(inputs[0], ctx, "X")
        return [Ints(a.shape, [0 if v else 1 for v in a.values], M.BOOL)]
    return run
