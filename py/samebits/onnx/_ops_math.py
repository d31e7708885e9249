"""Elementwise arithmetic, activations, reductions and normalizations.

float32 tensors go through samebits' kernels (their exact definitions are in
docs/exact-ops.md; docs/onnx.md says how each ONNX operator maps onto them).
Integer tensors (shape arithmetic) are computed in Python with int64
wrap-around, as C computes them.
"""
from __future__ import annotations

import math
import struct
from typing import TYPE_CHECKING, Any, Callable, Optional, Union, cast

import samebits as _sb
from .._elementwise import _unary

from . import _flat
from . import _model as M
from . import _values as V
from ._ops_shape import cast_value, copy_view, expand_value, shape_ints
from ._registry import (Builder, Inputs, Kernel, NodeContext, axis_index, need_floats, need_ints,
                        normalize_axes, op, required)
from ._values import Floats, Ints, Value

if TYPE_CHECKING:
    import numpy as np
else:
    from ._values import np   # None without numpy

CANONICAL_NAN = 0x7FC00000
FLT_MAX = 3.4028234663852886e38


def _mode(ctx: NodeContext) -> dict[str, Any]:
    return {"mode": ctx.mode, "threads": ctx.threads}


def _arg(t: Floats) -> Any:
    """What a samebits kernel takes for t (a 0-d tensor as a Python float
    would lose nothing, but its array form keeps the code uniform)."""
    return t.data


# ---- binary arithmetic ----------------------------------------------------------

def _int_div(a: int, b: int) -> int:
    if b == 0:
        raise ZeroDivisionError("integer division by zero")
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def _int_pow(a: int, b: int) -> int:
    if b < 0:
        return 0 if abs(a) != 1 else (a if b % 2 else 1)
    return pow(a, b, 1 << 64)


_INT_OPS: dict[str, Callable[[int, int], int]] = {
    "Add": lambda a, b: a + b, "Sub": lambda a, b: a - b, "Mul": lambda a, b: a * b,
    "Div": _int_div, "Pow": _int_pow, "Max": max, "Min": min,
}
_FLOAT_OPS: dict[str, Callable[..., Any]] = {"Add": _sb.add, "Sub": _sb.sub, "Mul": _sb.mul, "Div": _sb.div, "Pow": _sb.pow,
              "Max": _sb.maximum, "Min": _sb.minimum}


def int_binary(name: str, a: Ints, b: Ints, ctx: NodeContext) -> Ints:
    shape = _flat.broadcast_shape([a.shape, b.shape], ctx.where)
    am, bm = _flat.broadcast_map(shape, a.shape), _flat.broadcast_map(shape, b.shape)
    fn = _INT_OPS[name]
    try:
        values = [V.wrap_int(fn(a.values[i], b.values[j]), a.dtype) for i, j in zip(am, bm)]
    except ZeroDivisionError:
        raise ValueError(f"{ctx.where}: integer division by zero") from None
    return Ints(shape, values, a.dtype)


def float_binary(name: str, a: Floats, b: Floats, ctx: NodeContext) -> Floats:
    shape = _flat.broadcast_shape([a.shape, b.shape], ctx.where)
    if V.size_of(shape) == 0:
        return Floats(shape, None)
    return Floats.wrap(_FLOAT_OPS[name](_arg(a), _arg(b), **_mode(ctx)))


def binary(name: str, a: Optional[Value], b: Optional[Value], ctx: NodeContext) -> Value:
    if isinstance(a, Floats) and isinstance(b, Ints) and name == "Pow":
        b = cast_value(b, M.FLOAT, ctx)   # Pow's exponent may be an integer tensor
    if isinstance(a, Floats) and isinstance(b, Floats):
        return float_binary(name, a, b, ctx)
    if isinstance(a, Ints) and isinstance(b, Ints):
        if name == "Pow" or a.dtype != M.BOOL:
            return int_binary(name, a, b, ctx)
    raise TypeError(f"{ctx.where}: inputs of types {a!r} and {b!r} cannot be combined")


def _binary_builder(name: str) -> Builder:
    def build(ctx: NodeContext) -> Kernel:
        ctx.ignore("broadcast", "axis") if ctx.opset < 7 else None
        return lambda inputs: [binary(name, inputs[0], inputs[1], ctx)]
    return build


for _name in ("Add", "Sub", "Mul", "Div", "Pow"):
    op(_name)(_binary_builder(_name))


def _variadic_builder(name: str) -> Builder:
    def build(ctx: NodeContext) -> Kernel:
        def run(inputs: Inputs) -> list[Value]:
            args = [t for t in inputs if t is not None]
            if not args:
                raise ValueError(f"{ctx.where}: needs at least one input")
            acc = args[0]
            for t in args[1:]:
                acc = binary(name, acc, t, ctx)
            return [acc]
        return run
    return build


for _name in ("Max", "Min"):
    op(_name)(_variadic_builder(_name))


@op("Sum")
def _sum(ctx: NodeContext) -> Kernel:
    return _variadic_builder("Add")(ctx)


@op("Mean")
def _mean(ctx: NodeContext) -> Kernel:
    add = _variadic_builder("Add")(ctx)

    def run(inputs: Inputs) -> list[Value]:
        n = len([t for t in inputs if t is not None])
        total = need_floats(add(inputs)[0], ctx, "data_0")
        return [float_binary("Div", total, V.floats_from_list([float(n)], ()), ctx)]
    return run


@op("Mod")
def _mod(ctx: NodeContext) -> Kernel:
    fmod = ctx.int("fmod", 0)

    def run(inputs: Inputs) -> list[Value]:
        a, b = need_ints(inputs[0], ctx, "A"), need_ints(inputs[1], ctx, "B")
        shape = _flat.broadcast_shape([a.shape, b.shape], ctx.where)
        am, bm = _flat.broadcast_map(shape, a.shape), _flat.broadcast_map(shape, b.shape)
        out = []
        for i, j in zip(am, bm):
            x, y = a.values[i], b.values[j]
            if y == 0:
                raise ValueError(f"{ctx.where}: modulo by zero")
            out.append(x - y * _int_div(x, y) if fmod else x % y)
        return [Ints(shape, out, a.dtype)]
    return run


# ---- unary ------------------------------------------------------------------------

def _unary_builder(fn: Callable[..., Any], int_fn: Optional[Callable[[int], int]] = None
                   ) -> Builder:
    def build(ctx: NodeContext) -> Kernel:
        def run(inputs: Inputs) -> list[Value]:
            x = required(inputs[0])
            if isinstance(x, Ints):
                if int_fn is None:
                    raise TypeError(f"{ctx.where}: input must be float32")
                return [Ints(x.shape, [V.wrap_int(int_fn(v), x.dtype) for v in x.values],
                             x.dtype)]
            if x.size == 0:
                return [x]
            return [Floats.wrap(fn(x.data, **_mode(ctx)))]
        return run
    return build


for _name, _fn in (("Relu", _sb.relu), ("Sigmoid", _sb.sigmoid), ("Tanh", _sb.tanh),
                   ("Erf", _sb.erf), ("Exp", _sb.exp), ("Log", _sb.log), ("Sqrt", _sb.sqrt),
                   ("Sin", _sb.sin), ("Cos", _sb.cos)):
    op(_name)(_unary_builder(_fn, (lambda v: max(v, 0)) if _name == "Relu" else None))

for _name, _fn in (("Softplus", _sb.softplus), ("Mish", _sb.mish)):
    op(_name)(_unary_builder(_fn))

op("Neg")(_unary_builder(lambda x, **kw: _sb.mul(x, -1.0, **kw), lambda v: -v))
op("Reciprocal")(_unary_builder(lambda x, **kw: _sb.div(1.0, x, **kw)))


def float_abs(x: Floats, ctx: NodeContext) -> Floats:
    """|x| with the sign bit cleared and NaN canonical: maximum(x, x * -1),
    which gives exactly those bits (maximum(-0, +0) is +0; NaN wins, canonical)."""
    return Floats.wrap(_sb.maximum(x.data, _sb.mul(x.data, -1.0, **_mode(ctx)), **_mode(ctx)))


@op("Abs")
def _abs(ctx: NodeContext) -> Kernel:
    def run(inputs: Inputs) -> list[Value]:
        x = required(inputs[0])
        if isinstance(x, Ints):
            return [Ints(x.shape, [V.wrap_int(abs(v), x.dtype) for v in x.values], x.dtype)]
        return [float_abs(x, ctx) if x.size else x]
    return run


def _integral(kind: str, v: float) -> float:
    """floor/ceil/round-half-even of a float32 value, IEEE style: integers,
    infinities and zeros unchanged, a zero result keeping the input's sign."""
    if v != v:
        return v
    if v == 0.0 or abs(v) >= 8388608.0:     # 2^23: already an integer
        return v
    r = float(math.floor(v) if kind == "Floor" else math.ceil(v) if kind == "Ceil"
              else round(v))
    return math.copysign(0.0, v) if r == 0.0 else r


@op("Floor", "Ceil", "Round")
def _rounding(ctx: NodeContext) -> Kernel:
    kind = ctx.node.op_type

    def run(inputs: Inputs) -> list[Value]:
        x = need_floats(inputs[0], ctx, "X")
        if not x.size:
            return [x]
        if np is not None:
            fn = {"Floor": np.floor, "Ceil": np.ceil, "Round": np.rint}[kind]
            y = fn(np.asarray(x.data, np.float32)).astype(np.float32)
            bits = y.view(np.uint32)
            bits[np.isnan(y)] = CANONICAL_NAN
            return [Floats(x.shape, y)]
        vals = [_integral(kind, v) for v in V.float_list(x)]
        bits = [CANONICAL_NAN if v != v else b for v, b in
                zip(vals, V.float_bits(V.floats_from_list(vals, x.shape)))]
        return [V.floats_from_bits(bits, x.shape)]
    return run


@op("LeakyRelu")
def _leaky_relu(ctx: NodeContext) -> Kernel:
    alpha = ctx.float("alpha", 0.01)
    return lambda inputs: [Floats.wrap(_sb.leaky_relu(need_floats(inputs[0], ctx, "X").data,
                                                      alpha, **_mode(ctx)))
                           if required(inputs[0]).size else required(inputs[0])]


def _hard_sigmoid(x: Floats, alpha: float, beta: float, ctx: NodeContext) -> Floats:
    """ONNX's max(0, min(1, alpha * x + beta)): a float32 multiply, an add,
    then the clamp with samebits.maximum/minimum's rules. With beta = 0.5 (as
    every common exporter writes) one C kernel computes exactly these steps."""
    if beta == 0.5:
        bits = struct.unpack("<I", struct.pack("<f", alpha))[0]
        return Floats.wrap(_unary("hardsigmoid_onnx", x.data, ctx.mode, None, ctx.threads,
                                  param=bits))
    t = _sb.mul(x.data, alpha, **_mode(ctx))
    t = _sb.add(t, beta, **_mode(ctx))
    t = _sb.minimum(_sb.maximum(t, 0.0, **_mode(ctx)), 1.0, **_mode(ctx))
    return Floats.wrap(t)


@op("Elu")
def _elu(ctx: NodeContext) -> Kernel:
    alpha = ctx.float("alpha", 1.0)
    return lambda inputs: [Floats.wrap(_sb.elu(need_floats(inputs[0], ctx, "X").data,
                                               alpha, **_mode(ctx)))
                           if required(inputs[0]).size else required(inputs[0])]


@op("Selu")
def _selu(ctx: NodeContext) -> Kernel:
    """gamma * elu_alpha(x): the Elu kernel, then one float32 multiply by gamma
    (for x > 0 that is gamma * x rounded once, as ONNX's formula)."""
    alpha = ctx.float("alpha", 1.67326319217681884765625)
    gamma = V.floats_from_list([ctx.float("gamma", 1.05070102214813232421875)], ())

    def run(inputs: Inputs) -> list[Value]:
        x = need_floats(inputs[0], ctx, "X")
        if not x.size:
            return [x]
        e = Floats.wrap(_sb.elu(x.data, alpha, **_mode(ctx)))
        return [float_binary("Mul", e, gamma, ctx)]
    return run


@op("Softsign")
def _softsign(ctx: NodeContext) -> Kernel:
    """x / (1 + |x|): three float32 operations (abs, add, divide)."""
    def run(inputs: Inputs) -> list[Value]:
        x = need_floats(inputs[0], ctx, "X")
        if not x.size:
            return [x]
        d = Floats.wrap(_sb.add(float_abs(x, ctx).data, 1.0, **_mode(ctx)))
        return [Floats.wrap(_sb.div(x.data, d.data, **_mode(ctx)))]
    return run


@op("HardSigmoid")
def _hardsigmoid(ctx: NodeContext) -> Kernel:
    alpha, beta = ctx.float("alpha", 0.2), ctx.float("beta", 0.5)

    def run(inputs: Inputs) -> list[Value]:
        x = need_floats(inputs[0], ctx, "X")
        return [_hard_sigmoid(x, alpha, beta, ctx) if x.size else x]
    return run


@op("HardSwish")
def _hardswish(ctx: NodeContext) -> Kernel:
    def run(inputs: Inputs) -> list[Value]:
        x = need_floats(inputs[0], ctx, "X")
        if not x.size:
            return [x]
        # x * HardSigmoid(x) with alpha = 1/6, beta = 0.5 (ONNX's definition)
        return [Floats.wrap(_unary("hardswish_onnx", x.data, ctx.mode, None, ctx.threads))]
    return run


@op("Clip")
def _clip(ctx: NodeContext) -> Kernel:
    if ctx.opset < 11:
        lo_attr = ctx.float("min", None)
        hi_attr = ctx.float("max", None)

    def run(inputs: Inputs) -> list[Value]:
        x = required(inputs[0])
        lo: Union[float, Value, None]   # a float attribute before opset 11, else an input
        hi: Union[float, Value, None]
        if ctx.opset < 11:
            lo, hi = lo_attr, hi_attr
        else:
            lo = inputs[1] if len(inputs) > 1 else None
            hi = inputs[2] if len(inputs) > 2 else None
        if isinstance(x, Ints):
            lo_v = None if lo is None else need_ints(lo, ctx, "min").values[0]
            hi_v = None if hi is None else need_ints(hi, ctx, "max").values[0]
            out = [v if lo_v is None or v >= lo_v else lo_v for v in x.values]
            out = [v if hi_v is None or v <= hi_v else hi_v for v in out]
            return [Ints(x.shape, out, x.dtype)]
        if not x.size:
            return [x]
        # minimum(maximum(x, min), max), each with samebits' NaN and signed-zero
        # rules; an absent bound is float32's lowest or largest finite value
        # (ONNX's default), so infinities are clipped to them
        lo_b: Any = -FLT_MAX if lo is None else (lo if isinstance(lo, float)
                                                 else need_floats(lo, ctx, "min").data)
        hi_b: Any = FLT_MAX if hi is None else (hi if isinstance(hi, float)
                                                else need_floats(hi, ctx, "max").data)
        y = _sb.maximum(x.data, lo_b, **_mode(ctx))
        return [Floats.wrap(_sb.minimum(y, hi_b, **_mode(ctx)))]
    return run


@op("Gelu")
def _gelu(ctx: NodeContext) -> Kernel:
    approximate = ctx.str("approximate", "none")
    if approximate not in ("none", "tanh"):
        raise ctx.error(f"approximate={approximate!r} is not supported")

    def run(inputs: Inputs) -> list[Value]:
        x = need_floats(inputs[0], ctx, "X")
        return [Floats.wrap(_sb.gelu(x.data, approximate, **_mode(ctx))) if x.size else x]
    return run


@op("PRelu")
def _prelu(ctx: NodeContext) -> Kernel:
    def run(inputs: Inputs) -> list[Value]:
        x, slope = need_floats(inputs[0], ctx, "X"), need_floats(inputs[1], ctx, "slope")
        if not x.size:
            return [x]
        # slope * x (one float32 multiply) where x < 0, x elsewhere; NaN canonical
        shape = _flat.broadcast_shape([x.shape, slope.shape], ctx.where)
        if shape != x.shape:
            raise ValueError(f"{ctx.where}: slope {slope.shape} must broadcast to X {x.shape}")
        scaled = Floats.wrap(_sb.mul(x.data, slope.data, **_mode(ctx)))
        same = Floats.wrap(_sb.mul(x.data, 1.0, **_mode(ctx)))
        xb, sb_, kb = V.float_bits(x), V.float_bits(scaled), V.float_bits(same)
        out = [s if (b & 0x80000000 and (b & 0x7FFFFFFF) and b & 0x7FFFFFFF <= 0x7F800000) else k
               for b, s, k in zip(xb, sb_, kb)]
        return [V.floats_from_bits(out, x.shape)]
    return run


# ---- reductions ---------------------------------------------------------------------

def _reduce_axes(ctx: NodeContext, inputs: Inputs, rank: int, attr_axes: Optional[list[int]],
                 axes_input_from: int) -> Optional[list[int]]:
    axes = attr_axes
    if ctx.opset >= axes_input_from and len(inputs) > 1 and inputs[1] is not None:
        axes = shape_ints(inputs[1], ctx, "axes")
    return axes


def _moved_to_end(x: Floats, axes: list[int], ctx: NodeContext) -> tuple[Floats, int]:
    """x with `axes` (sorted) moved to the end and merged into one: (tensor, n).
    The reduced elements of an output are then in row-major order of `axes`."""
    r = len(x.shape)
    keep = [a for a in range(r) if a not in axes]
    if axes != list(range(r - len(axes), r)):
        x = Floats.wrap(_sb.permute(x.data, keep + axes, threads=ctx.threads))
    n = V.size_of(x.shape[len(keep):])
    return V.reshape(x, tuple(x.shape[:len(keep)]) + (n,)), n


def _reduce_builder(name: str) -> Builder:
    def build(ctx: NodeContext) -> Kernel:
        keepdims = ctx.int("keepdims", 1)
        noop = ctx.int("noop_with_empty_axes", 0) if ctx.opset >= 13 else 0
        axes_input_from = 13 if name == "ReduceSum" else 18
        attr_axes = ctx.ints("axes", None) if ctx.opset < axes_input_from else None

        def run(inputs: Inputs) -> list[Value]:
            x = required(inputs[0])
            r = len(x.shape)
            axes = _reduce_axes(ctx, inputs, r, attr_axes, axes_input_from)
            if not axes:
                if noop:
                    return [x]
                axes = list(range(r))
            axes = sorted(normalize_axes(axes, r, ctx))
            out_shape = tuple(1 if i in axes else d for i, d in enumerate(x.shape)) if keepdims \
                else tuple(d for i, d in enumerate(x.shape) if i not in axes)
            if isinstance(x, Ints):
                return [_int_reduce(name, x, axes, out_shape, ctx)]
            return [_float_reduce(name, x, axes, out_shape, ctx)]
        return run
    return build


def _int_reduce(name: str, x: Ints, axes: list[int], out_shape: tuple[int, ...],
                ctx: NodeContext) -> Ints:
    r = len(x.shape)
    keep = [a for a in range(r) if a not in axes]
    shape_t, m = _flat.transpose_map(x.shape, keep + axes)
    vals = _flat.take(x.values, m)
    n = V.size_of([x.shape[a] for a in axes])
    outer = V.size_of([x.shape[a] for a in keep])
    out = []
    for o in range(outer):
        group = vals[o * n:(o + 1) * n]
        if name == "ReduceSum":
            v = sum(group)
        elif name == "ReduceSumSquare":
            v = sum(g * g for g in group)
        elif name == "ReduceL1":
            v = sum(abs(g) for g in group)
        elif name == "ReduceProd":
            v = 1
            for g in group:
                v *= g
        elif name in ("ReduceMax", "ReduceMin"):
            if not group:
                raise ValueError(f"{ctx.where}: {name} over an empty axis")
            v = max(group) if name == "ReduceMax" else min(group)
        elif name == "ReduceMean":
            v = _int_div(sum(group), n) if n else 0
        else:
            raise TypeError(f"{ctx.where}: {name} on integers is not supported")
        out.append(V.wrap_int(v, x.dtype))
    return Ints(out_shape, out, x.dtype)


def _float_reduce(name: str, x: Floats, axes: list[int], out_shape: tuple[int, ...],
                  ctx: NodeContext) -> Floats:
    if V.size_of(out_shape) == 0:
        return Floats(out_shape, None)
    if x.size == 0:   # reducing an empty axis: sums are +0, the mean NaN (0 / 0)
        fill = {"ReduceSum": 0.0, "ReduceMean": float("nan"), "ReduceSumSquare": 0.0,
                "ReduceL1": 0.0, "ReduceL2": 0.0}.get(name)
        if fill is None:
            raise ValueError(f"{ctx.where}: {name} over an empty axis")
        return V.full_floats(out_shape, fill)
    y, n = _moved_to_end(x, axes, ctx)
    if name in ("ReduceSumSquare", "ReduceL2"):
        y = Floats.wrap(_sb.mul(y.data, y.data, **_mode(ctx)))
        name = "ReduceSum" if name == "ReduceSumSquare" else "L2"
    elif name == "ReduceL1":
        y = float_abs(y, ctx)
        name = "ReduceSum"
    if name == "L2":
        out = Floats.wrap(_sb.sqrt(_sb.sum(y.data, -1, **_mode(ctx)), **_mode(ctx)))
    elif name in ("ReduceSum", "ReduceMean"):
        fn: Callable[..., Any] = _sb.sum if name == "ReduceSum" else _sb.mean
        out = Floats.wrap(fn(y.data, -1, **_mode(ctx)))
    elif name in ("ReduceMax", "ReduceMin"):
        # maximum/minimum are order-free bit for bit (NaN canonical, max(-0,
        # +0) = +0, min = -0), so a fold over the reduced elements is exact
        fn = _sb.maximum if name == "ReduceMax" else _sb.minimum
        acc = _sb.slice(y.data, -1, 0, 1)
        for j in range(1, n):
            acc = fn(acc, _sb.slice(y.data, -1, j, j + 1), **_mode(ctx))
        out = Floats.wrap(acc)
    else:
        raise ctx.error(f"{name} is not supported on float32")
    return V.reshape(out, out_shape)


for _name in ("ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd",
              "ReduceSumSquare", "ReduceL1", "ReduceL2"):
    op(_name)(_reduce_builder(_name))


@op("CumSum")
def _cumsum(ctx: NodeContext) -> Kernel:
    """Running sums along axis, one float32 add per step in the axis order
    (reversed with reverse=1): y0 = x0 (a copy, NaN canonical as every sum),
    y_i = y_(i-1) + x_i; exclusive=1 shifts by one and starts from +0."""
    exclusive, reverse = ctx.int("exclusive", 0), ctx.int("reverse", 0)

    def run(inputs: Inputs) -> list[Value]:
        x = required(inputs[0])
        axes = need_ints(inputs[1], ctx, "axis")
        if axes.size != 1:
            raise ValueError(f"{ctx.where}: axis must hold one value, got shape {axes.shape}")
        a = axis_index(axes.values[0], len(x.shape), ctx)
        n = x.shape[a]
        outer, inner = V.size_of(x.shape[:a]), V.size_of(x.shape[a + 1:])
        order = list(range(n))[::-1] if reverse else list(range(n))
        if isinstance(x, Ints):
            out = list(x.values)
            for o in range(outer):
                for i in range(inner):
                    acc = 0
                    for j in order:
                        p = (o * n + j) * inner + i
                        v = x.values[p]
                        out[p] = acc if exclusive else V.wrap_int(acc + v, x.dtype)
                        acc = V.wrap_int(acc + v, x.dtype)
            return [Ints(x.shape, out, x.dtype)]
        if x.size == 0:
            return [x]
        x3 = V.reshape(x, (outer, n, inner))
        columns = [copy_view(x3, (outer, 1, inner), j * inner, [n * inner, inner, 1], ctx)
                   for j in range(n)]
        sums: list[Optional[Floats]] = [None] * n
        running = V.full_floats((outer, 1, inner), 0.0)
        for step, j in enumerate(order):
            if exclusive:
                sums[j] = running
                running = float_binary("Add", running, columns[j], ctx)
            else:
                running = float_binary("Add", running, columns[j], ctx) if step else \
                    float_binary("Max", columns[j], columns[j], ctx)
                sums[j] = running
        y = Floats.wrap(_sb.concatenate([cast(Floats, s).data for s in sums], axis=1,
                                        threads=ctx.threads))
        return [V.reshape(y, x.shape)]
    return run


@op("ArgMax", "ArgMin")
def _argmax(ctx: NodeContext) -> Kernel:
    axis = ctx.int("axis", 0)
    keepdims = ctx.int("keepdims", 1)
    last = ctx.int("select_last_index", 0)
    is_max = ctx.node.op_type == "ArgMax"

    def run(inputs: Inputs) -> list[Value]:
        x = required(inputs[0])
        r = len(x.shape)
        a = axis_index(axis, r, ctx)
        vals = V.float_list(x) if isinstance(x, Floats) else x.values
        shape_t, m = _flat.transpose_map(x.shape, [i for i in range(r) if i != a] + [a])
        vals = _flat.take(vals, m)
        n = x.shape[a]
        out = []
        for o in range(len(vals) // n if n else 0):
            group = vals[o * n:(o + 1) * n]
            best = 0
            for j, v in enumerate(group):
                b = group[best]
                if v != v:           # NaN wins (the first, or the last with select_last_index)
                    if b == b or last:
                        best = j
                    continue
                if b != b:
                    continue
                better = v > b if is_max else v < b
                if better or (last and v == b):
                    best = j
            out.append(best)
        shape = tuple(1 if i == a else d for i, d in enumerate(x.shape)) if keepdims else \
            tuple(d for i, d in enumerate(x.shape) if i != a)
        return [Ints(shape, out, M.INT64)]
    return run


# ---- softmax and normalizations ---------------------------------------------------------

def _softmax_builder(log: bool) -> Builder:
    def build(ctx: NodeContext) -> Kernel:
        axis = ctx.int("axis", 1 if ctx.opset < 13 else -1)
        fn = _sb.log_softmax if log else _sb.softmax

        def run(inputs: Inputs) -> list[Value]:
            x = need_floats(inputs[0], ctx, "input")
            r = len(x.shape)
            if x.size == 0:
                return [x]
            if ctx.opset < 13:   # the input as 2-D, [:axis] by [axis:], softmax over rows
                a = axis_index(axis, r, ctx) if r else 0
                flat = V.reshape(x, (V.size_of(x.shape[:a]), V.size_of(x.shape[a:])))
                return [V.reshape(Floats.wrap(fn(flat.data, -1, **_mode(ctx))), x.shape)]
            return [Floats.wrap(fn(x.data, axis_index(axis, r, ctx), **_mode(ctx)))]
        return run
    return build


op("Softmax")(_softmax_builder(False))
op("LogSoftmax")(_softmax_builder(True))


@op("LayerNormalization")
def _layer_norm(ctx: NodeContext) -> Kernel:
    axis = ctx.int("axis", -1)
    eps = ctx.float("epsilon", 1e-5)
    stash = ctx.int("stash_type", 1)
    if stash != 1:
        raise ctx.error(f"stash_type={stash} is not supported (1: float32)")
    ctx.only_first_output("Mean/InvStdDev")

    def run(inputs: Inputs) -> list[Value]:
        x = need_floats(inputs[0], ctx, "X")
        r = len(x.shape)
        a = axis_index(axis, r, ctx)
        norm = x.shape[a:]
        scale = need_floats(inputs[1], ctx, "Scale")
        bias = inputs[2] if len(inputs) > 2 else None
        if x.size == 0:
            return [x]

        def fit(t: Floats, what: str) -> Any:
            if t.shape == norm:
                return t.data
            if V.size_of(t.shape) == V.size_of(norm) and \
                    _flat.broadcast_shape([t.shape, norm], ctx.where) == tuple(norm):
                return V.reshape(t, tuple(norm)).data
            raise ValueError(f"{ctx.where}: {what} {t.shape} does not match the normalized "
                             f"shape {tuple(norm)}")
        b = None if bias is None else fit(need_floats(bias, ctx, "B"), "B")
        return [Floats.wrap(_sb.layer_norm(x.data, tuple(norm), fit(scale, "Scale"), b, eps,
                                           **_mode(ctx)))]
    return run


@op("RMSNormalization")
def _rms_norm(ctx: NodeContext) -> Kernel:
    """Over the axes from `axis` on (n elements per row): ms = mean(x * x)
    (the products, then the serial sum from +0, then / float32(n));
    y = (x / sqrt(ms + eps)) * scale."""
    axis = ctx.int("axis", -1)
    eps = ctx.float("epsilon", 1e-5)
    if ctx.int("stash_type", 1) != 1:
        raise ctx.error("stash_type other than 1 (float32) is not supported")

    def run(inputs: Inputs) -> list[Value]:
        x = need_floats(inputs[0], ctx, "X")
        a = axis_index(axis, len(x.shape), ctx)
        norm = tuple(x.shape[a:])
        scale = need_floats(inputs[1], ctx, "scale")
        if _flat.broadcast_shape([scale.shape, norm], ctx.where) != norm:
            raise ValueError(f"{ctx.where}: scale {scale.shape} does not broadcast to the "
                             f"normalized shape {norm}")
        if x.size == 0:
            return [x]
        n = V.size_of(norm)
        rows = V.reshape(x, (x.size // n, n))
        ms = _sb.mean(_sb.mul(rows.data, rows.data, **_mode(ctx)), -1, keepdims=True, **_mode(ctx))
        d = _sb.sqrt(_sb.add(ms, eps, **_mode(ctx)), **_mode(ctx))
        y = V.reshape(Floats.wrap(_sb.div(rows.data, d, **_mode(ctx))), x.shape)
        return [float_binary("Mul", y, scale, ctx)]
    return run


@op("BatchNormalization")
def _batch_norm(ctx: NodeContext) -> Kernel:
    eps = ctx.float("epsilon", 1e-5)
    ctx.ignore("momentum")        # updates running statistics in training only
    if ctx.has("spatial") and ctx.int("spatial") != 1:
        raise ctx.error("spatial=0 is not supported")
    if ctx.int("training_mode", 0):
        raise ctx.error("training_mode=1 is not supported (inference only)")
    if ctx.opset < 7:
        ctx.ignore("is_test", "consumed_inputs")
    ctx.only_first_output("running mean/var")

    def run(inputs: Inputs) -> list[Value]:
        x = need_floats(inputs[0], ctx, "X")
        scale, bias, mean, var = (need_floats(inputs[i], ctx, n).data for i, n in
                                  ((1, "scale"), (2, "B"), (3, "input_mean"), (4, "input_var")))
        if x.size == 0:
            return [x]
        return [Floats.wrap(_sb.batch_norm(x.data, mean, var, scale, bias, eps=eps,
                                           **_mode(ctx)))]
    return run


@op("GroupNormalization")
def _group_norm(ctx: NodeContext) -> Kernel:
    """group_norm. Opset 18 gives scale and bias per group: each channel takes
    its group's (a copy); opset 21 per channel, as torch."""
    eps = ctx.float("epsilon", 1e-5)
    groups = ctx.int("num_groups")
    if ctx.opset >= 21 and ctx.int("stash_type", 1) != 1:
        raise ctx.error("stash_type other than 1 (float32 statistics) is not supported")

    def run(inputs: Inputs) -> list[Value]:
        x = need_floats(inputs[0], ctx, "X")
        scale, bias = need_floats(inputs[1], ctx, "scale"), need_floats(inputs[2], ctx, "bias")
        if len(x.shape) < 2 or groups < 1 or x.shape[1] % groups:
            raise ValueError(f"{ctx.where}: num_groups={groups} does not divide the channels "
                             f"of {x.shape}")
        c = x.shape[1]
        if ctx.opset < 21 and scale.shape == (groups,) and c != groups:
            # one value per group, repeated over the group's channels
            per = c // groups
            scale = V.reshape(expand_value(V.reshape(scale, (groups, 1)), (groups, per), ctx), (c,))
            bias = V.reshape(expand_value(V.reshape(bias, (groups, 1)), (groups, per), ctx), (c,))
        if scale.shape != (c,) or bias.shape != (c,):
            raise ValueError(f"{ctx.where}: scale {scale.shape} and bias {bias.shape} do not fit "
                             f"{c} channels")
        if x.size == 0:
            return [x]
        return [Floats.wrap(_sb.group_norm(x.data, groups, scale.data, bias.data, eps,
                                           **_mode(ctx)))]
    return run


@op("InstanceNormalization")
def _instance_norm(ctx: NodeContext) -> Kernel:
    eps = ctx.float("epsilon", 1e-5)

    def run(inputs: Inputs) -> list[Value]:
        x = need_floats(inputs[0], ctx, "input")
        scale, bias = need_floats(inputs[1], ctx, "scale"), need_floats(inputs[2], ctx, "B")
        if x.size == 0:
            return [x]
        # one group per channel: group_norm's statistics are instance norm's
        return [Floats.wrap(_sb.group_norm(x.data, x.shape[1], scale.data, bias.data, eps,
                                           **_mode(ctx)))]
    return run
