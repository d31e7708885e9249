"""The differential tester's operator builders: one function per operator
(or a few alike), each adding one valid node to a Graph from the values it
has, or returning False when none fits. BUILDERS lists them with the
families they belong to (compare.py's tolerances)."""
from __future__ import annotations

import numpy as np

from generate import (Graph, Value, broadcast_shape, derived, is_float, merge, other_operand,
                      rand_floats)

# family -> relative error one operator of the family may add (compare.py):
# "exact" operators are IEEE-exact or move bits only.
TRANSCENDENTAL = ("Exp", "Log", "Tanh", "Sigmoid", "Erf", "Sin", "Cos", "Softplus", "Mish",
                  "Elu", "Selu", "Gelu", "HardSwish", "HardSigmoid", "Softsign", "LeakyRelu", "Celu")
EXACT_UNARY = ("Neg", "Abs", "Relu", "Identity")
# jump on tiny differences: exact inputs only
STEP_UNARY = ("Floor", "Ceil", "Round", "Sign", "Shrink", "ThresholdedRelu")
CORRECTLY_ROUNDED = ("Sqrt", "Reciprocal")
BOUNDED_OUTPUT = ("Tanh", "Sigmoid", "Erf", "Sin", "Cos", "HardSigmoid", "Softsign", "Atan", "Asin",
                  "Acos")
# math/inverse_trig.h's functions: on exact inputs only (steep near their
# domain's edges and Tan near its poles, where the oracles' own rounding of
# an inexact input would decide)
INVERSE_TRIG = ("Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh", "Acosh", "Atanh")


def _float(v: Value) -> bool:
    return is_float(v)


# operators newer than the oldest opset drawn (generate.OPSETS): their first version
SINCE = {"Celu": 12, "HardSwish": 14, "CastLike": 15, "GreaterOrEqual": 12, "LessOrEqual": 12,
         "Gelu": 20, "Mish": 18, "LayerNormalization": 17, "Trilu": 14, "GroupNormalization": 21, "Einsum": 12,
         "Attention": 23, "RotaryEmbedding": 23, "CausalConvWithState": 27,
         "LinearAttention": 27, "DeformConv": 19}


def unary(g: Graph, op: str) -> bool:
    if op in STEP_UNARY or op in ("Reciprocal", "Log") or op in INVERSE_TRIG:
        # jumps, or a huge relative error where an inexact value cancels to
        # near 0: exact inputs only
        x = g.pick(lambda v: _float(v) and v.exact)
    elif op in ("Sin", "Cos", "Exp"):
        x = g.pick(lambda v: _float(v) and (v.bounded or v.exact))   # no chaos from huge arguments
    else:
        x = g.pick(_float)
    if x is None:
        return False
    attrs = {}
    if op == "LeakyRelu":
        attrs["alpha"] = float(g.rng.choice([0.01, 0.2, 1.5]))
    if op == "Elu":
        attrs["alpha"] = float(g.rng.choice([1.0, 0.5]))
    if op == "HardSigmoid":
        attrs["alpha"], attrs["beta"] = float(g.rng.choice([0.2, 1 / 6])), 0.5
    if op == "Shrink":
        attrs["lambd"], attrs["bias"] = float(g.rng.choice([0.5, 1.5])), float(g.rng.choice([0.0, 0.25]))
    if op == "ThresholdedRelu":
        attrs["alpha"] = float(g.rng.choice([1.0, 0.0, -0.5]))
    if op == "Celu":
        if g.opset < 12:
            return False
        attrs["alpha"] = float(g.rng.choice([1.0, 0.5]))
    if op == "Gelu" and g.opset < 20:
        return False
    if op == "Mish" and g.opset < 18:
        return False
    if op in TRANSCENDENTAL or op in INVERSE_TRIG:
        out = derived(x, g, exact=False, family="transcendental")
        out.bounded = op in BOUNDED_OUTPUT   # whatever the input's magnitude
    elif op in CORRECTLY_ROUNDED:
        out = derived(x, g, bounded=False)
    else:
        out = derived(x, g)
    g.node(op, [x.name], [out], **attrs)
    return True


BINARY_FLOAT = ("Add", "Sub", "Mul", "Div", "Max", "Min", "Pow", "Sum", "Mean", "PRelu")


def binary(g: Graph, op: str) -> bool:
    dtypes = ("float32",) if op in ("Pow", "Sum", "Mean", "PRelu", "Div") else \
        ("float32", "float32", "float32", "int64", "int32")
    dtype = str(g.rng.choice(dtypes))
    if dtype != "float32" and op in ("Max", "Min") and g.opset < 12:
        return False
    x = g.pick(lambda v: v.dtype == dtype and (op != "Mul" or v.bounded or dtype == "float32"))
    if x is None:
        return False
    if op == "Pow":
        e = float(g.rng.choice([2.0, 3.0, 0.5, 1.5]))   # (no negative powers: 1/-0 vs 1/+0)
        name, y = g.const(np.array(e, np.float32)), None
        out = derived(x, g, exact=False, bounded=False, family="transcendental")
        g.node(op, [x.name, name], [out])
        return True
    if op == "PRelu":
        shape = [1] * len(x.shape)
        if len(x.shape) >= 2 and not x.sym[1]:
            shape[1] = x.shape[1]
        slope = g.const(rand_floats(g.rng, shape[1:] if len(shape) > 1 else shape, 0.5)
                        .reshape(shape[1:] if len(shape) > 1 else shape))
        out = derived(x, g)
        g.node(op, [x.name, slope], [out])
        return True
    name, y = other_operand(g, x, dtype)
    if dtype != "float32" and op == "Div":
        return False
    if op == "Div" and not y.exact:
        return False      # a divisor that cancels to near 0: no oracle agrees
    out = derived(x, g, bounded=op in ("Max", "Min", "Add", "Sub", "Mul", "Sum", "Mean"),
                  exact=op not in ("Mean",))
    merge(out, y)
    if op == "Mean":
        out.exact = False
        out.families = out.families | {"transcendental"}
    if op in ("Div",):
        out.bounded = False
    ins = [x.name, name]
    if op in ("Sum", "Mean") and g.rng.random() < 0.4:
        ins.append(x.name)   # three operands
    g.node(op, ins, [out])
    return True


def compare(g: Graph, op: str) -> bool:
    dtype = str(g.rng.choice(["float32", "int64"]))
    x = g.pick(lambda v: v.dtype == dtype and v.exact)
    if x is None:
        return False
    name, y = other_operand(g, x, dtype)
    if not y.exact:
        return False
    out = derived(x, g, dtype="bool")
    g.node(op, [x.name, name], [out])
    return True


def logic(g: Graph, op: str) -> bool:
    x = g.pick(lambda v: v.dtype == "bool")
    if x is None:
        return False
    if op == "Not":
        g.node(op, [x.name], [derived(x, g)])
    else:
        name, y = other_operand(g, x, "bool")
        g.node(op, [x.name, name], [derived(x, g)])
    return True


def where(g: Graph, op: str) -> bool:
    c = g.pick(lambda v: v.dtype == "bool")
    if c is None:
        return False
    x = g.pick(lambda v: v.dtype == "float32" and v.shape == c.shape and v.sym == c.sym)
    if x is None:     # a constant of the condition's shape (N: 1, broadcast)
        shape = [1 if y else d for d, y in zip(c.shape, c.sym)]
        xname = g.const(rand_floats(g.rng, shape))
        name, y = other_operand(g, Value("", "float32", c.shape, c.sym), "float32")
        out = merge(derived(c, g, dtype="float32"), y)
        g.node("Where", [c.name, xname, name], [out])
        return True
    name, y = other_operand(g, x, "float32")
    out = merge(derived(x, g), y, c)
    g.node("Where", [c.name, x.name, name], [out])
    return True


def cast(g: Graph, op: str) -> bool:
    rng = g.rng
    x = g.pick(lambda v: True)
    if x is None:
        return False
    if x.dtype == "float32":
        if not (x.exact and x.bounded):
            return False
        to = str(rng.choice(["int64", "int32", "bool", "float32"]))
    else:
        to = str(rng.choice(["float32", "int64", "int32"] + (["bool"] if x.dtype != "bool" else [])))
    codes = {"float32": 1, "int64": 7, "int32": 6, "bool": 9}
    out = derived(x, g, dtype=to)
    if op == "CastLike":
        like = g.const(np.zeros((), to if to != "bool" else np.bool_))
        g.node("CastLike", [x.name, like], [out])
    else:
        g.node("Cast", [x.name], [out], to=codes[to])
    return True


def clip(g: Graph, op: str) -> bool:
    x = g.pick(_float)
    if x is None:
        return False
    lo, hi = sorted(float(v) for v in g.rng.uniform(-3, 3, 2))
    out = derived(x, g)
    out.bounded = True
    if g.opset < 11:
        g.node("Clip", [x.name], [out], min=lo, max=hi)
    elif g.rng.random() < 0.3:
        g.node("Clip", [x.name, g.const(np.float32(0)), g.const(np.float32(6))], [out])
    else:
        g.node("Clip", [x.name, g.const(np.float32(lo)), g.const(np.float32(hi))], [out])
    return True


# ---- reductions and normalizations ----------------------------------------------------

def reduce(g: Graph, op: str) -> bool:
    int_ok = op in ("ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd")   # not the logs: float only
    float_ok = True
    x = g.pick(lambda v: ((float_ok and _float(v)) or
                          (int_ok and v.dtype in ("int64", "int32") and v.bounded))
               and len(v.shape) >= 1)
    if x is None:
        return False
    rng = g.rng
    r = len(x.shape)
    axes = sorted(set(int(a) for a in rng.choice(r, size=int(rng.integers(1, r + 1)))))
    axes = [a for a in axes if not x.sym[a]] or None
    if axes is None and any(x.sym):
        return False
    keep = int(rng.integers(0, 2))
    all_axes = list(range(r)) if axes is None else axes
    shape = [1 if d in all_axes else s for d, s in enumerate(x.shape) if keep or d not in all_axes]
    sym = [False if d in all_axes else s for d, s in enumerate(x.sym) if keep or d not in all_axes]
    exact = op in ("ReduceMax", "ReduceMin") or x.dtype != "float32"
    out = derived(x, g, shape=shape, sym=sym, exact=exact,
                  bounded=op in ("ReduceMax", "ReduceMin", "ReduceMean") or x.dtype != "float32",
                  family=None if exact else "reduction")
    written = [a - r if rng.random() < 0.3 else a for a in all_axes]
    takes_input = g.opset >= 18 or (op == "ReduceSum" and g.opset >= 13)
    if axes is None and rng.random() < 0.5:
        g.node(op, [x.name], [out], keepdims=keep)
    elif takes_input:
        g.node(op, [x.name, g.const(np.array(written, np.int64))], [out], keepdims=keep)
    else:
        g.node(op, [x.name], [out], keepdims=keep, axes=written)
    return True


def hardmax(g: Graph, op: str) -> bool:
    # exact inputs only, as ArgMax: the 1 marks a comparison's winner
    x = g.pick(lambda v: _float(v) and v.exact and len(v.shape) >= 1)
    if x is None:
        return False
    r = len(x.shape)
    # before opset 13 the input is seen as 2-D at axis (as Softmax)
    choices = [a for a in range(r) if not any(x.sym[a:])] if g.opset < 13 else list(range(r))
    if not choices:
        return False
    axis = int(g.rng.choice(choices))
    out = derived(x, g, exact=True, bounded=True)
    g.node(op, [x.name], [out], axis=axis - r if g.rng.random() < 0.5 else axis)
    return True


def argmax(g: Graph, op: str) -> bool:
    x = g.pick(lambda v: v.dtype in ("float32", "int64") and v.exact and len(v.shape) >= 1)
    if x is None:
        return False
    r = len(x.shape)
    choices = [a for a in range(r) if not x.sym[a]]
    if not choices:
        return False
    axis = int(g.rng.choice(choices))
    keep = int(g.rng.integers(0, 2))
    shape = [1 if d == axis else s for d, s in enumerate(x.shape) if keep or d != axis]
    sym = [False if d == axis else s for d, s in enumerate(x.sym) if keep or d != axis]
    out = derived(x, g, dtype="int64", shape=shape, sym=sym)
    attrs = {"axis": axis - r if g.rng.random() < 0.3 else axis, "keepdims": keep}
    if g.opset >= 12 and g.rng.random() < 0.3:
        attrs["select_last_index"] = 1
    g.node(op, [x.name], [out], **attrs)
    return True


def softmax(g: Graph, op: str) -> bool:
    x = g.pick(lambda v: _float(v) and len(v.shape) >= 1)
    if x is None:
        return False
    r = len(x.shape)
    if g.opset < 13:
        # before opset 13: the input flattened to 2-D at axis; the flattened
        # block must not hold N
        choices = [a for a in range(r) if not any(x.sym[a:])]
    else:
        choices = list(range(r))
    if not choices:
        return False
    axis = int(g.rng.choice(choices))
    out = derived(x, g, exact=False, bounded=op == "Softmax", family="reduction")
    g.node(op, [x.name], [out], axis=axis - r if g.rng.random() < 0.5 else axis)
    return True


def layer_norm(g: Graph, op: str) -> bool:
    if g.opset < 17:
        return False
    x = g.pick(lambda v: _float(v) and len(v.shape) >= 1 and not v.sym[-1])
    if x is None:
        return False
    r = len(x.shape)
    first = r - 1
    while first > 0 and not x.sym[first - 1] and g.rng.random() < 0.4:
        first -= 1
    norm = x.shape[first:]
    ins = [x.name, g.const(rand_floats(g.rng, norm, 1.0))]
    if g.rng.random() < 0.6:
        ins.append(g.const(rand_floats(g.rng, norm, 1.0)))
    out = derived(x, g, exact=False, family="reduction")
    g.node(op, ins, [out], axis=first - r if g.rng.random() < 0.5 else first,
           epsilon=float(g.rng.choice([1e-5, 1e-3])))
    return True


def _per_channel(g: Graph, c: int, count: int) -> list[str]:
    """`count` constants of c random values (scales, biases, means)."""
    return [g.const(rand_floats(g.rng, [c], 1.0)) for _ in range(count)]


def batch_norm(g: Graph, op: str) -> bool:
    x = g.pick(lambda v: _float(v) and len(v.shape) >= 2 and not v.sym[1])
    if x is None:
        return False
    c = x.shape[1]
    var = np.abs(rand_floats(g.rng, [c], 1.0)) + 0.1
    ins = [x.name] + _per_channel(g, c, 3) + [g.const(var.astype(np.float32))]
    out = derived(x, g, exact=False, family="reduction")
    g.node(op, ins, [out], epsilon=1e-5)
    return True


# ---- products, convolutions, pools ----------------------------------------------------

def matmul(g: Graph, op: str) -> bool:
    rng = g.rng
    x = g.pick(lambda v: _float(v) and len(v.shape) >= 2 and not v.sym[-1])
    if x is None:
        return False
    k = x.shape[-1]
    n = int(rng.choice([1, 3, 8, 17, 33]))
    if op == "Gemm":
        if len(x.shape) != 2:
            return False
        trans_b = int(rng.integers(0, 2))
        w = rand_floats(rng, [n, k] if trans_b else [k, n], 0.5)
        ins = [x.name, g.const(w)]
        attrs = {"transB": trans_b}
        if rng.random() < 0.7:
            ins.append(g.const(rand_floats(rng, [n] if rng.random() < 0.7 else [1, n], 0.5)))
        if rng.random() < 0.2:
            attrs["alpha"], attrs["beta"] = 0.5, 2.0
        out = derived(x, g, shape=[x.shape[0], n], sym=[x.sym[0], False], exact=False,
                      bounded=False, family="product")
        g.node("Gemm", ins, [out], **attrs)
        return True
    # MatMul: by a constant (k, n), or by another value of matching shape
    other = g.pick(lambda v: _float(v) and len(v.shape) == 2 and v.shape[0] == k and not any(v.sym)
                   and v.name != x.name)
    if other is not None and rng.random() < 0.3:
        b, n = other.name, other.shape[1]
    else:
        b, other = g.const(rand_floats(rng, [k, n], 0.5)), None
    out = derived(x, g, shape=x.shape[:-1] + [n], sym=x.sym[:-1] + [False], exact=False,
                  bounded=False, family="product")
    if other is not None:
        merge(out, other)
    g.node("MatMul", [x.name, b], [out])
    return True


def _pick_nchw(g: Graph) -> "Value | None":
    """A 4-D float32 value whose C, H and W are fixed (N may be symbolic)."""
    return g.pick(lambda v: _float(v) and len(v.shape) == 4 and not any(v.sym[1:]))


def conv(g: Graph, op: str) -> bool:
    rng = g.rng
    x = _pick_nchw(g)
    if x is None:
        return False
    n, c, h, w = x.shape
    if min(c, h, w) == 0:   # an empty image: no kernel fits
        return False
    kh, kw = int(rng.integers(1, min(3, h) + 1)), int(rng.integers(1, min(3, w) + 1))
    sh, sw = int(rng.integers(1, 3)), int(rng.integers(1, 3))
    pads = [int(rng.integers(0, k)) for k in (kh, kw, kh, kw)]
    oh = (h + pads[0] + pads[2] - kh) // sh + 1
    ow = (w + pads[1] + pads[3] - kw) // sw + 1
    if oh < 1 or ow < 1:
        return False
    if op in ("MaxPool", "AveragePool"):
        attrs = {"kernel_shape": [kh, kw], "strides": [sh, sw], "pads": pads}
        if op == "AveragePool" and rng.random() < 0.5:
            attrs["count_include_pad"] = 1
        exact = op == "MaxPool"
        out = derived(x, g, shape=[n, c, oh, ow], exact=None if exact else False,
                      family=None if exact else "reduction")
        g.node(op, [x.name], [out], **attrs)
        return True
    group = c if (c > 1 and rng.random() < 0.3) else 1
    cout = c * int(rng.integers(1, 3)) if group > 1 else int(rng.choice([1, 4, 8, 16]))
    ins = [x.name, g.const(rand_floats(rng, [cout, c // group, kh, kw], 0.5))]
    if rng.random() < 0.6:
        ins.append(g.const(rand_floats(rng, [cout], 0.5)))
    out = derived(x, g, shape=[n, cout, oh, ow], exact=False, bounded=False, family="product")
    attrs = {"strides": [sh, sw], "pads": pads, "group": group}
    if rng.random() < 0.25:
        # weights computed in the graph, no kernel_shape (as function bodies
        # write a convolution): the rank from the strides and pads
        w = g.add_value("float32", [cout, c // group, kh, kw], [False] * 4)
        g.node("Neg", [ins[1]], [w])
        ins[1] = w.name
    else:
        attrs["kernel_shape"] = [kh, kw]
    g.node("Conv", ins, [out], **attrs)
    return True


def conv_block(g: Graph, op: str) -> bool:
    """The block CNNs are made of, which the runtime runs as one node
    (graph_fuse.c): Conv with constant weights -> BatchNormalization ->
    often an Add of a computed residual of the output's shape (another
    value, or the block's input when the shapes allow), sometimes one that
    broadcasts -> often Relu, Clip(0, 6) or HardSwish."""
    rng = g.rng
    x = _pick_nchw(g)
    if x is None:
        return False
    n, c, h, w = x.shape
    k = int(rng.choice([1, 3])) if min(h, w) >= 3 else 1
    group = c if (c > 1 and rng.random() < 0.3) else 1
    cout = c if (group > 1 or rng.random() < 0.5) else int(rng.choice([2, 4, 8]))
    ins = [x.name, g.const(rand_floats(rng, [cout, c // group, k, k], 0.5))]
    if rng.random() < 0.4:
        ins.append(g.const(rand_floats(rng, [cout], 0.5)))
    conv_out = derived(x, g, shape=[n, cout, h, w], exact=False, bounded=False, family="product")
    p = k // 2
    g.node("Conv", ins, [conv_out], kernel_shape=[k, k], pads=[p, p, p, p], group=group)
    var = np.abs(rand_floats(rng, [cout], 1.0)) + 0.1
    bn_out = derived(conv_out, g, exact=False, family="reduction")
    g.node("BatchNormalization", [conv_out.name] + _per_channel(g, cout, 3) +
           [g.const(var.astype(np.float32))], [bn_out], epsilon=1e-5)
    last = bn_out
    if rng.random() < 0.7:
        same = [v for v in g.values if _float(v) and v.shape == last.shape and v.sym == last.sym
                and v.name not in (last.name, conv_out.name)]
        if same and rng.random() < 0.8:
            r = same[int(rng.integers(len(same)))]
        elif c == cout:   # a computed residual that broadcasts: run unfused by the node
            r = derived(x, g, shape=[n, c, 1, 1], sym=[x.sym[0], False, False, False],
                        exact=False, family="reduction")
            g.node("GlobalAveragePool", [x.name], [r])
        else:             # a constant one: not absorbed
            shape, _ = broadcast_shape(rng, last)
            r = Value(g.const(rand_floats(rng, shape)), "float32", shape, [False] * len(shape))
        out = merge(derived(last, g), r)
        g.node("Add", [last.name, r.name] if rng.random() < 0.5 else [r.name, last.name], [out])
        last = out
    u = rng.random()
    if u < 0.75:
        out = derived(last, g)
        if u < 0.45 or (u >= 0.6 and g.opset < 14):
            g.node("Relu", [last.name], [out])
        elif u < 0.6:
            g.node("Clip", [last.name, g.const(np.float32(0)), g.const(np.float32(6))], [out])
        else:
            g.node("HardSwish", [last.name], [out])
    return True


def causal_conv(g: Graph, op: str) -> bool:
    """CausalConvWithState over a 3-D value (batch, channels, length), with
    or without bias, past state and silu; the present state is a second
    output."""
    rng = g.rng
    x = g.pick(lambda v: _float(v) and len(v.shape) == 3 and not any(v.sym[1:]))
    if x is None:
        return False
    b, c, t = x.shape
    k = int(rng.integers(1, 5))
    ins = [x.name, g.const(rand_floats(rng, [c, 1, k], 0.5)), "", ""]
    if rng.random() < 0.5:
        ins[2] = g.const(rand_floats(rng, [c], 0.5))
    if rng.random() < 0.5 and not x.sym[0]:
        ins[3] = g.const(rand_floats(rng, [b, c, k - 1], 1.0))
    while ins[-1] == "":
        ins.pop()
    out = derived(x, g, exact=False, bounded=False, family="product")
    state = derived(x, g, shape=[b, c, k - 1], sym=x.sym[:1] + [False, False])
    g.node("CausalConvWithState", ins, [out, state],
           activation=str(rng.choice(["none", "silu", "swish"])))
    return True


def deform_conv(g: Graph, op: str) -> bool:
    """DeformConv over a 4-D value with a fixed batch: constant weights,
    offsets (some points outside the image), optional bias and mask;
    groups, offset groups, strides, pads and dilations."""
    rng = g.rng
    x = g.pick(lambda v: _float(v) and len(v.shape) == 4 and not any(v.sym))
    if x is None:
        return False
    n, c, h, w = x.shape
    if min(c, h, w) == 0:   # an empty image: no kernel fits
        return False
    kh, kw = int(rng.integers(1, min(3, h) + 1)), int(rng.integers(1, min(3, w) + 1))
    sh, sw = int(rng.integers(1, 3)), int(rng.integers(1, 3))
    dh, dw = int(rng.choice([1, 2])), int(rng.choice([1, 2]))
    pads = [int(rng.integers(0, k)) for k in (kh, kw, kh, kw)]
    oh = (h + pads[0] + pads[2] - ((kh - 1) * dh + 1)) // sh + 1
    ow = (w + pads[1] + pads[3] - ((kw - 1) * dw + 1)) // sw + 1
    if oh < 1 or ow < 1:
        return False
    group = int(rng.choice([d for d in (1, 2, c) if c % d == 0]))
    og = int(rng.choice([d for d in (1, 2) if c % d == 0]))
    cout = group * int(rng.integers(1, 4))
    taps = kh * kw
    ins = [x.name, g.const(rand_floats(rng, [cout, c // group, kh, kw], 0.5)),
           g.const(rand_floats(rng, [n, og * taps * 2, oh, ow], 1.0)), "", ""]
    if rng.random() < 0.5:
        ins[3] = g.const(rand_floats(rng, [cout], 0.5))
    if rng.random() < 0.5:
        ins[4] = g.const(rng.uniform(0.0, 1.0, [n, og * taps, oh, ow]).astype(np.float32))
    while ins[-1] == "":
        ins.pop()
    out = derived(x, g, shape=[n, cout, oh, ow], sym=[False] * 4, exact=False, bounded=False, family="product")
    g.node("DeformConv", ins, [out], strides=[sh, sw], pads=pads, dilations=[dh, dw], group=group,
           offset_group=og, kernel_shape=[kh, kw])
    return True


def global_pool(g: Graph, op: str) -> bool:
    x = g.pick(lambda v: _float(v) and len(v.shape) == 4)
    if x is None:
        return False
    exact = op == "GlobalMaxPool"
    out = derived(x, g, shape=x.shape[:2] + [1, 1], sym=x.sym[:2] + [False, False],
                  exact=None if exact else False, family=None if exact else "reduction")
    g.node(op, [x.name], [out])
    return True


def resize(g: Graph, op: str) -> bool:
    if g.opset < 13:
        return False
    rng = g.rng
    x = g.pick(lambda v: _float(v) and len(v.shape) == 4)
    if x is None:
        return False
    h, w = x.shape[2:]
    form = int(rng.integers(0, 3))
    if form == 0:   # nearest, asymmetric + floor (torch's export), upsampling scales
        s = [1.0, 1.0, float(rng.choice([1, 2, 3])), float(rng.choice([1, 2, 3]))]
        attrs = dict(mode="nearest", coordinate_transformation_mode="asymmetric",
                     nearest_mode="floor")
        ins = [x.name, "", g.const(np.array(s, np.float32))]
        oh, ow = int(h * s[2]), int(w * s[3])
        exact = True
    else:
        coord = "half_pixel" if form == 1 else "align_corners"
        attrs = dict(mode="linear", coordinate_transformation_mode=coord)
        exact = False
        if rng.random() < 0.5:     # scales (align_corners then divides by H * scale - 1)
            s = [1.0, 1.0] + [float(rng.choice([0.5, 0.6, 0.75, 1.5, 2.0, 2.5])) for _ in range(2)]
            oh, ow = int(np.floor(h * np.float32(s[2]))), int(np.floor(w * np.float32(s[3])))
            if oh < 1 or ow < 1:
                return False
            ins = [x.name, "", g.const(np.array(s, np.float32))]
        else:
            oh, ow = int(rng.integers(1, 2 * h + 2)), int(rng.integers(1, 2 * w + 2))
            if any(x.sym[:2]):
                return False   # sizes name N
            ins = [x.name, "", "", g.const(np.array(x.shape[:2] + [oh, ow], np.int64))]
    out = derived(x, g, shape=x.shape[:2] + [oh, ow], exact=None if exact else False,
                  family=None if exact else "resize")
    g.node("Resize", ins, [out], **attrs)
    return True


# ---- views and movement -----------------------------------------------------------------

def transpose(g: Graph, op: str) -> bool:
    x = g.pick(lambda v: len(v.shape) >= 2)
    if x is None:
        return False
    perm = [int(p) for p in g.rng.permutation(len(x.shape))]
    out = derived(x, g, shape=[x.shape[p] for p in perm], sym=[x.sym[p] for p in perm])
    g.node("Transpose", [x.name], [out], perm=perm)
    return True


def reshape(g: Graph, op: str) -> bool:
    x = g.pick(lambda v: len(v.shape) >= 1 and not any(v.sym[1:]))
    if x is None:
        return False
    rng = g.rng
    lead = 1 if (x.sym and x.sym[0]) else 0
    rest = int(np.prod(x.shape[lead:]))
    if rest == 0:   # an empty value: no divisors to draw from (the long pass's seed 28324)
        return False
    dims = []
    left = rest
    for _ in range(int(rng.integers(1, 4))):
        divs = [d for d in range(1, left + 1) if left % d == 0]
        d = int(rng.choice(divs))
        dims.append(d)
        left //= d
    dims[-1] *= left
    shape = ([x.shape[0]] if lead else []) + dims
    sym = ([True] if lead else []) + [False] * len(dims)
    written = ([0] if lead else []) + dims
    if len(dims) > 1 and rng.random() < 0.4:
        written[lead + int(rng.integers(len(dims)))] = -1
    if op == "Flatten" and lead:
        return False
    out = derived(x, g, shape=shape, sym=sym)
    if op == "Flatten":
        axis = int(rng.integers(0, len(x.shape) + 1))
        a, b = int(np.prod(x.shape[:axis])), int(np.prod(x.shape[axis:]))
        out.shape, out.sym = [a, b], [False, False]
        g.node("Flatten", [x.name], [out], axis=axis)
        return True
    g.node("Reshape", [x.name, g.const(np.array(written, np.int64))], [out])
    return True


def squeeze(g: Graph, op: str) -> bool:
    rng = g.rng
    if op == "Unsqueeze":
        x = g.pick(lambda v: len(v.shape) <= 4)
        if x is None:
            return False
        r = len(x.shape) + 1
        axis = int(rng.integers(0, r))
        shape = x.shape[:axis] + [1] + x.shape[axis:]
        sym = x.sym[:axis] + [False] + x.sym[axis:]
        axes = [axis - r if rng.random() < 0.3 else axis]
    else:
        x = g.pick(lambda v: any(s == 1 and not y for s, y in zip(v.shape, v.sym)))
        if x is None:
            return False
        ones = [d for d, (s, y) in enumerate(zip(x.shape, x.sym)) if s == 1 and not y]
        axes = sorted(set(int(a) for a in rng.choice(ones, size=int(rng.integers(1, len(ones) + 1)))))
        shape = [s for d, s in enumerate(x.shape) if d not in axes]
        sym = [y for d, y in enumerate(x.sym) if d not in axes]
    out = derived(x, g, shape=shape, sym=sym)
    if g.opset >= 13:
        g.node(op, [x.name, g.const(np.array(axes, np.int64))], [out])
    else:
        g.node(op, [x.name], [out], axes=axes)
    return True


def slice_(g: Graph, op: str) -> bool:
    rng = g.rng
    x = g.pick(lambda v: len(v.shape) >= 1 and not all(v.sym))
    if x is None:
        return False
    dims = [d for d in range(len(x.shape)) if not x.sym[d]]
    axis = int(rng.choice(dims))
    n = x.shape[axis]
    if n == 0:          # an empty value: nothing to slice (and no start to draw)
        return False
    step = int(rng.choice([1, 1, 2, -1]))
    start = int(rng.integers(-n, n))
    end = int(rng.integers(-n - 2, n + 3))
    # ONNX's rule: negative ends count from the end, then clamped
    s0, e0 = (start + n if start < 0 else start), (end + n if end < 0 else end)
    if step > 0:
        s0, e0 = min(max(s0, 0), n), min(max(e0, 0), n)
    else:
        s0, e0 = min(max(s0, 0), n - 1), min(max(e0, -1), n - 1)
    size = len(range(s0, e0, step))
    if size < 1:
        return False
    shape = list(x.shape)
    shape[axis] = size
    out = derived(x, g, shape=shape)
    ins = [x.name, g.const(np.array([start], np.int64)), g.const(np.array([end], np.int64)),
           g.const(np.array([axis], np.int64))]
    if step != 1 or rng.random() < 0.3:
        ins.append(g.const(np.array([step], np.int64)))
    g.node("Slice", ins, [out])
    return True


def expand(g: Graph, op: str) -> bool:
    x = g.pick(lambda v: len(v.shape) >= 1 and 1 in v.shape and not any(v.sym))
    if x is None:
        return False
    shape = [int(g.rng.integers(2, 5)) if s == 1 and g.rng.random() < 0.6 else s for s in x.shape]
    out = derived(x, g, shape=shape)
    g.node("Expand", [x.name, g.const(np.array(shape, np.int64))], [out])
    return True


def concat(g: Graph, op: str) -> bool:
    x = g.pick(lambda v: len(v.shape) >= 1)
    if x is None:
        return False
    dims = [d for d in range(len(x.shape)) if not x.sym[d]]
    if not dims:
        return False
    axis = int(g.rng.choice(dims))
    partners = [v for v in g.values if v.dtype == x.dtype and len(v.shape) == len(x.shape) and
                v.sym == x.sym and all(a == b for d, (a, b) in enumerate(zip(v.shape, x.shape))
                                       if d != axis)]
    y = partners[int(g.rng.integers(len(partners)))]
    shape = list(x.shape)
    shape[axis] += y.shape[axis]
    out = merge(derived(x, g, shape=shape), y)
    g.node("Concat", [x.name, y.name], [out], axis=axis - len(x.shape) if g.rng.random() < 0.3 else axis)
    return True


def split(g: Graph, op: str) -> bool:
    x = g.pick(lambda v: any(s >= 2 and not y for s, y in zip(v.shape, v.sym)))
    if x is None:
        return False
    dims = [d for d, (s, y) in enumerate(zip(x.shape, x.sym)) if s >= 2 and not y]
    axis = int(g.rng.choice(dims))
    n = x.shape[axis]
    first = int(g.rng.integers(1, n))
    parts = [first, n - first]
    outs = []
    for p in parts:
        shape = list(x.shape)
        shape[axis] = p
        outs.append(derived(x, g, shape=shape))
    if g.opset >= 13:
        g.node("Split", [x.name, g.const(np.array(parts, np.int64))], outs, axis=axis)
    else:
        g.node("Split", [x.name], outs, axis=axis, split=parts)
    return True


def pad(g: Graph, op: str) -> bool:
    x = g.pick(lambda v: _float(v) and len(v.shape) >= 1)
    if x is None:
        return False
    rng = g.rng
    r = len(x.shape)
    pads = [0 if x.sym[d % r] else int(rng.integers(0, 3)) for d in range(2 * r)]
    mode = str(rng.choice(["constant", "constant", "reflect", "edge"]))
    if mode == "reflect" and any(x.shape[d % r] <= pads[d] for d in range(2 * r)):
        mode = "edge"
    shape = [s + pads[d] + pads[d + r] for d, s in enumerate(x.shape)]
    out = derived(x, g, shape=shape)
    ins = [x.name, g.const(np.array(pads, np.int64))]
    if mode == "constant" and rng.random() < 0.5:
        ins.append(g.const(np.array(float(rng.choice([0.0, 1.5, -2.0])), np.float32)))
    g.node("Pad", ins, [out], mode=mode)
    return True


def gather(g: Graph, op: str) -> bool:
    x = g.pick(lambda v: len(v.shape) >= 1 and not all(v.sym))
    if x is None:
        return False
    dims = [d for d in range(len(x.shape)) if not x.sym[d]]
    axis = int(g.rng.choice(dims))
    n = x.shape[axis]
    if n == 0:          # an empty axis: no index to draw
        return False
    ishape = [int(s) for s in g.rng.integers(1, 4, int(g.rng.integers(0, 3)))]
    idx = g.rng.integers(-n, n, ishape).astype(np.int64)
    shape = x.shape[:axis] + ishape + x.shape[axis + 1:]
    sym = x.sym[:axis] + [False] * len(ishape) + x.sym[axis + 1:]
    out = derived(x, g, shape=shape, sym=sym)
    g.node("Gather", [x.name, g.const(idx)], [out], axis=axis)
    return True


def shape_chain(g: Graph, op: str) -> bool:
    """Shape -> Gather -> (Concat with constants) -> Reshape: the constant-
    foldable shape arithmetic exporters write, folded at load or planning."""
    x = g.pick(lambda v: len(v.shape) >= 2 and not any(v.sym[1:]))
    if x is None:
        return False
    shp = g.add_value("int64", [len(x.shape)], [False])
    g.node("Shape", [x.name], [shp])
    first = g.add_value("int64", [1], [False])
    g.node("Gather", [shp.name, g.const(np.array([0], np.int64))], [first], axis=0)
    target = g.add_value("int64", [2], [False])
    g.node("Concat", [first.name, g.const(np.array([-1], np.int64))], [target], axis=0)
    out = derived(x, g, shape=[x.shape[0], int(np.prod(x.shape[1:]))],
                  sym=[x.sym[0], False])
    g.node("Reshape", [x.name, target.name], [out])
    return True


def dropout(g: Graph, op: str) -> bool:
    x = g.pick(_float)
    if x is None:
        return False
    out = derived(x, g)
    g.node("Dropout", [x.name], [out])
    return True


# (builder, operator, weight)
BUILDERS = (
    [(unary, op, 1.0) for op in TRANSCENDENTAL + EXACT_UNARY + STEP_UNARY + CORRECTLY_ROUNDED]
    + [(binary, op, 3.0 if op in ("Add", "Mul", "Sub") else 1.5) for op in BINARY_FLOAT]
    + [(compare, op, 1.0) for op in ("Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual")]
    + [(logic, op, 0.7) for op in ("And", "Or", "Xor", "Not")]
    + [(where, "Where", 2.0), (cast, "Cast", 1.5), (cast, "CastLike", 0.5), (clip, "Clip", 1.5)]
    + [(reduce, op, 1.0) for op in ("ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin",
                                    "ReduceL2", "ReduceSumSquare", "ReduceLogSumExp")]
    + [(reduce, "ReduceLogSum", 0.5)]
    + [(argmax, op, 0.7) for op in ("ArgMax", "ArgMin")] + [(hardmax, "Hardmax", 0.7)]
    + [(softmax, "Softmax", 2.0), (softmax, "LogSoftmax", 2.0),
       (layer_norm, "LayerNormalization", 1.5), (batch_norm, "BatchNormalization", 1.0)]
    + [(matmul, "MatMul", 3.0), (matmul, "Gemm", 2.0), (conv, "Conv", 3.0),
       (conv_block, "Conv", 1.5),
       (conv, "MaxPool", 1.5), (conv, "AveragePool", 1.0),
       (global_pool, "GlobalAveragePool", 1.0), (global_pool, "GlobalMaxPool", 0.5),
       (resize, "Resize", 3.0)]
    + [(transpose, "Transpose", 2.0), (reshape, "Reshape", 2.0), (reshape, "Flatten", 1.0),
       (squeeze, "Squeeze", 1.0), (squeeze, "Unsqueeze", 1.0), (slice_, "Slice", 2.0),
       (expand, "Expand", 1.0), (concat, "Concat", 1.5), (split, "Split", 1.0),
       (pad, "Pad", 1.0), (gather, "Gather", 1.0), (shape_chain, "Shape", 0.7),
       (dropout, "Dropout", 0.3)]
)


# ---- more operators -----------------------------------------------------------------------

def tile(g: Graph, op: str) -> bool:
    x = g.pick(lambda v: 1 <= len(v.shape) <= 4 and not any(v.sym))
    if x is None:
        return False
    reps = [int(g.rng.integers(1, 3)) for _ in x.shape]
    out = derived(x, g, shape=[s * r for s, r in zip(x.shape, reps)])
    g.node("Tile", [x.name, g.const(np.array(reps, np.int64))], [out])
    return True


def topk(g: Graph, op: str) -> bool:
    x = g.pick(lambda v: v.dtype in ("float32", "int64") and v.exact and len(v.shape) >= 1
               and not v.sym[-1])
    if x is None or g.opset < 11:
        return False
    n = x.shape[-1]
    k = int(g.rng.integers(1, n + 1))
    shape = x.shape[:-1] + [k]
    values = derived(x, g, shape=shape)
    indices = derived(x, g, dtype="int64", shape=shape)
    g.node("TopK", [x.name, g.const(np.array([k], np.int64))], [values, indices],
           axis=-1, largest=int(g.rng.integers(0, 2)), sorted=1)
    return True


def trilu(g: Graph, op: str) -> bool:
    x = g.pick(lambda v: len(v.shape) >= 2 and not any(v.sym[-2:]))
    if x is None or g.opset < 14:
        return False
    out = derived(x, g)
    ins = [x.name]
    if g.rng.random() < 0.6:
        ins.append(g.const(np.array(int(g.rng.integers(-2, 3)), np.int64)))
    g.node("Trilu", ins, [out], upper=int(g.rng.integers(0, 2)))
    return True


def cumsum(g: Graph, op: str) -> bool:
    x = g.pick(lambda v: v.dtype in ("float32", "int64", "int32") and len(v.shape) >= 1)
    if x is None:
        return False
    dims = [d for d in range(len(x.shape)) if not x.sym[d]]
    if not dims:
        return False
    axis = int(g.rng.choice(dims))
    fl = x.dtype == "float32"
    out = derived(x, g, exact=None if not fl else False, bounded=False,
                  family="reduction" if fl else None)
    g.node("CumSum", [x.name, g.const(np.array(axis, np.int64))], [out],
           exclusive=int(g.rng.integers(0, 2)), reverse=int(g.rng.integers(0, 2)))
    return True


def depth_space(g: Graph, op: str) -> bool:
    rng = g.rng
    if op == "DepthToSpace":
        x = g.pick(lambda v: len(v.shape) == 4 and not any(v.sym[1:]) and v.shape[1] % 4 == 0)
        if x is None:
            return False
        n, c, h, w = x.shape
        out = derived(x, g, shape=[n, c // 4, h * 2, w * 2])
        g.node(op, [x.name], [out], blocksize=2, mode=str(rng.choice(["DCR", "CRD"])))
        return True
    x = g.pick(lambda v: len(v.shape) == 4 and not any(v.sym[1:]) and v.shape[2] % 2 == 0
               and v.shape[3] % 2 == 0)
    if x is None:
        return False
    n, c, h, w = x.shape
    out = derived(x, g, shape=[n, c * 4, h // 2, w // 2])
    g.node(op, [x.name], [out], blocksize=2)
    return True


def gather_elements(g: Graph, op: str) -> bool:
    x = g.pick(lambda v: len(v.shape) >= 1 and not any(v.sym))
    if x is None:
        return False
    axis = int(g.rng.integers(0, len(x.shape)))
    shape = list(x.shape)
    shape[axis] = int(g.rng.integers(1, x.shape[axis] + 2))
    idx = g.rng.integers(-x.shape[axis], x.shape[axis], shape).astype(np.int64)
    out = derived(x, g, shape=shape)
    g.node("GatherElements", [x.name, g.const(idx)], [out], axis=axis)
    return True


def instance_norm(g: Graph, op: str) -> bool:
    x = g.pick(lambda v: _float(v) and len(v.shape) >= 3 and not v.sym[1])
    if x is None:
        return False
    c = x.shape[1]
    attrs = {}
    if op == "GroupNormalization":
        if g.opset < 21:
            return False      # opset 18's per-group scale is deprecated; 21's is per channel
        attrs["num_groups"] = int(g.rng.choice([d for d in range(1, c + 1) if c % d == 0]))
    ins = [x.name] + _per_channel(g, c, 2)
    out = derived(x, g, exact=False, family="reduction")
    g.node(op, ins, [out], epsilon=1e-5, **attrs)
    return True


def mod(g: Graph, op: str) -> bool:
    dtype = str(g.rng.choice(["int64", "int32", "float32"]))
    x = g.pick(lambda v: v.dtype == dtype and v.exact and v.bounded)
    if x is None:
        return False
    fmod = 1 if dtype == "float32" else int(g.rng.integers(0, 2))
    d = np.array(float(g.rng.choice([3, -2, 5, 1.5])) if dtype == "float32"
                 else int(g.rng.choice([3, -2, 5, 7])), dtype)
    out = derived(x, g)
    g.node("Mod", [x.name, g.const(d)], [out], fmod=fmod)
    return True


def einsum(g: Graph, op: str) -> bool:
    x = g.pick(lambda v: _float(v) and len(v.shape) == 2 and not v.sym[1])
    if x is None:
        return False
    k = x.shape[1]
    n = int(g.rng.choice([1, 4, 9]))
    eq, w = ("ij,jk->ik", rand_floats(g.rng, [k, n], 0.5)) if g.rng.random() < 0.5 else \
        ("ij,kj->ik", rand_floats(g.rng, [n, k], 0.5))
    out = derived(x, g, shape=[x.shape[0], n], sym=[x.sym[0], False], exact=False,
                  bounded=False, family="product")
    g.node("Einsum", [x.name, g.const(w)], [out], equation=eq)
    return True


def conv_transpose(g: Graph, op: str) -> bool:
    rng = g.rng
    x = _pick_nchw(g)
    if x is None:
        return False
    n, c, h, w = x.shape
    k, s = int(rng.integers(1, 4)), int(rng.integers(1, 3))
    p = int(rng.integers(0, k))
    cout = int(rng.choice([1, 3, 8]))
    oh, ow = (h - 1) * s - 2 * p + k, (w - 1) * s - 2 * p + k
    if oh < 1 or ow < 1:
        return False
    ins = [x.name, g.const(rand_floats(rng, [c, cout, k, k], 0.5))]
    if rng.random() < 0.5:
        ins.append(g.const(rand_floats(rng, [cout], 0.5)))
    out = derived(x, g, shape=[n, cout, oh, ow], exact=False, bounded=False, family="product")
    g.node("ConvTranspose", ins, [out], kernel_shape=[k, k], strides=[s, s], pads=[p, p, p, p])
    return True


def constant_of_shape(g: Graph, op: str) -> bool:
    x = g.pick(lambda v: len(v.shape) >= 1 and not any(v.sym))
    if x is None:
        return False
    shp = g.add_value("int64", [len(x.shape)], [False])
    g.node("Shape", [x.name], [shp])
    out = g.add_value("float32", x.shape, [False] * len(x.shape))
    from onnx import helper as _h, TensorProto as _T
    g.node("ConstantOfShape", [shp.name], [out],
           value=_h.make_tensor("value", _T.FLOAT, [1], [float(g.rng.choice([0.0, 1.5, -2.0]))]))
    return True


def fused_patterns(g: Graph, op: str) -> bool:
    """The patterns the loader rewrites: Conv + Add (a per-channel bias or a
    residual) + Relu, MatMul + Add of a 1-D constant bias + an activation,
    and a Conv followed by the SiLU pair (Sigmoid and Mul) or paddle2onnx's
    HardSwish chain (Add 3, Clip 0-6, Mul, Div 6)."""
    rng = g.rng
    if op == "Conv+SiLU":
        if not conv(g, "Conv"):
            return False
        y = g.values[-1]
        if rng.random() < 0.5:
            s = derived(y, g, exact=False, family="transcendental")
            g.node("Sigmoid", [y.name], [s])
            out = merge(derived(y, g), s)
            g.node("Mul", [y.name, s.name] if rng.random() < 0.5 else [s.name, y.name], [out])
            return True
        a = derived(y, g)
        g.node("Add", [y.name, g.const(np.float32([3.0]))], [a])
        c = derived(a, g)
        if g.opset < 11:
            g.node("Clip", [a.name], [c], min=0.0, max=6.0)
        else:
            g.node("Clip", [a.name, g.const(np.float32(0)), g.const(np.float32(6))], [c])
        m = merge(derived(y, g), c)
        g.node("Mul", [y.name, c.name] if rng.random() < 0.5 else [c.name, y.name], [m])
        out = derived(m, g)
        g.node("Div", [m.name, g.const(np.float32([6.0]))], [out])
        return True
    if op == "Conv+Add+Relu":
        if not conv(g, "Conv"):
            return False
        y = g.values[-1]
        bias = g.const(rand_floats(rng, [1, y.shape[1], 1, 1], 0.5))
        s = merge(derived(y, g), y)
        g.node("Add", [y.name, bias] if rng.random() < 0.5 else [bias, y.name], [s])
        act = str(rng.choice(["Relu", "Sigmoid", "Tanh", "Clip", "LeakyRelu"]))
        return unary(g, act) if act not in ("Clip",) else clip(g, "Clip")
    x = g.pick(lambda v: _float(v) and len(v.shape) >= 2 and not v.sym[-1])
    if x is None:
        return False
    k, n = x.shape[-1], int(rng.choice([3, 16, 40]))
    y = derived(x, g, shape=x.shape[:-1] + [n], sym=x.sym[:-1] + [False], exact=False,
                bounded=False, family="product")
    g.node("MatMul", [x.name, g.const(rand_floats(rng, [k, n], 0.5))], [y])
    s = derived(y, g)
    g.node("Add", [y.name, g.const(rand_floats(rng, [n], 0.5))], [s])
    act = str(rng.choice(["Relu", "Sigmoid", "Tanh", "HardSwish", "HardSigmoid"]))
    if SINCE.get(act, 0) <= g.opset and rng.random() < 0.7:
        unary(g, act)
    return True


BUILDERS += (
    [(tile, "Tile", 0.7), (topk, "TopK", 0.7), (trilu, "Trilu", 0.5), (cumsum, "CumSum", 0.7),
     (depth_space, "DepthToSpace", 0.5), (depth_space, "SpaceToDepth", 0.5),
     (gather_elements, "GatherElements", 0.7), (instance_norm, "InstanceNormalization", 0.7),
     (instance_norm, "GroupNormalization", 0.5), (mod, "Mod", 0.7), (einsum, "Einsum", 0.5),
     (conv_transpose, "ConvTranspose", 0.7), (constant_of_shape, "ConstantOfShape", 0.4),
     (fused_patterns, "Conv+Add+Relu", 1.5), (fused_patterns, "MatMul+Add", 1.5),
     (fused_patterns, "Conv+SiLU", 1.0)]
    + [(reduce, op, 0.5) for op in ("ReduceL1", "ReduceProd")]
)


def _scatter_reduction(g: Graph, x: Value) -> str:
    """none, or (opset 16: add, mul; 18: max, min) a reduction; integers
    only where they cannot overflow (bounded values, add and max/min)."""
    choices = ["none", "none"]
    if g.opset >= 16 and x.dtype != "bool":
        choices += ["add"] + (["mul"] if x.dtype == "float32" else [])
    if g.opset >= 18 and x.dtype != "bool":
        choices += ["max", "min"]
    return str(g.rng.choice(choices))


def indexing(g: Graph, op: str) -> bool:
    """GatherND, ScatterElements, ScatterND with constant indices; OneHot of
    constant indices; Range and Size; Constant; LRN. (Not NonZero: its
    output's length depends on the values, and the generator's shapes are
    static.)"""
    rng = g.rng
    if op == "Range":
        start, delta = float(rng.integers(-3, 3)), float(rng.choice([1, 2, -1, 0.5]))
        count = int(rng.integers(1, 9))
        dtype = "float32" if delta == 0.5 or rng.random() < 0.5 else "int64"
        limit = start + delta * count
        out = g.add_value(dtype, [count], [False])
        g.node("Range", [g.const(np.array(v, dtype)) for v in (start, limit, delta)], [out])
        return True
    if op == "Constant":
        shape = [int(s) for s in rng.integers(1, 5, int(rng.integers(0, 3)))]
        out = g.add_value("float32", shape, [False] * len(shape))
        from onnx import numpy_helper as _nh
        g.node("Constant", [], [out], value=_nh.from_array(rand_floats(rng, shape)))
        return True
    x = g.pick(lambda v: len(v.shape) >= 1 and not any(v.sym))
    if x is None:
        return False
    if op == "Size":
        g.node("Size", [x.name], [derived(x, g, dtype="int64", shape=[], sym=[])])
        return True
    if op == "LRN":
        if not (_float(x) and len(x.shape) == 4):
            return False
        out = derived(x, g, exact=False, family="reduction")
        g.node("LRN", [x.name], [out], size=int(rng.choice([1, 3, 5])), alpha=1e-3, beta=0.75, bias=1.0)
        return True
    if op == "OneHot":
        if x.dtype != "int64" or len(x.shape) > 3:
            return False
        depth = int(rng.integers(2, 8))
        axis = int(rng.integers(-1, len(x.shape) + 1))
        shape = list(x.shape)
        shape.insert(axis if axis >= 0 else len(shape) + 1 + axis, depth)
        out = derived(x, g, dtype="float32", shape=shape, sym=[False] * len(shape))
        g.node("OneHot", [x.name, g.const(np.array(depth, np.int64)),
                          g.const(np.array([0.0, 1.5], np.float32))], [out], axis=axis)
        return True
    r = len(x.shape)
    if 0 in x.shape:    # an empty value: no index to draw (GatherND, the scatters)
        return False
    if op == "GatherND":
        k = int(rng.integers(1, r + 1))
        lead = [int(rng.integers(1, 4))]
        idx = np.stack([rng.integers(-d, d, lead) for d in x.shape[:k]], axis=-1).astype(np.int64)
        out = derived(x, g, shape=lead + x.shape[k:], sym=[False] * (1 + r - k))
        g.node("GatherND", [x.name, g.const(idx)], [out])
        return True
    reduction = _scatter_reduction(g, x)
    if op == "ScatterElements":
        axis = int(rng.integers(0, r))
        shape = list(x.shape)
        n = x.shape[axis]
        # distinct positions along the axis (duplicates have no defined order
        # without a reduction; with one they accumulate)
        count = int(rng.integers(1, n + 1))
        pos = rng.permutation(n)[:count]
        if reduction != "none" and rng.random() < 0.5:
            pos = rng.integers(0, n, count)
        shape[axis] = count
        idx = np.broadcast_to(pos.reshape([-1 if d == axis else 1 for d in range(r)]), shape)
        upd = rand_floats(rng, shape) if x.dtype == "float32" else rng.integers(-5, 5, shape)
        out = derived(x, g)
        attrs = {"reduction": reduction} if reduction != "none" else {}
        g.node("ScatterElements", [x.name, g.const(np.ascontiguousarray(idx).astype(np.int64)),
                                   g.const(np.asarray(upd).astype(x.dtype if x.dtype != "bool" else "bool"))],
               [out], axis=axis, **attrs)
        return True
    if op == "ScatterND":
        if x.dtype == "bool":
            return False
        n = x.shape[0]
        count = int(rng.integers(1, n + 1))
        rows = rng.permutation(n)[:count] if reduction == "none" or rng.random() < 0.5 else \
            rng.integers(0, n, count)
        idx = rows.reshape(count, 1).astype(np.int64)
        upd = rand_floats(rng, [count] + x.shape[1:]) if x.dtype == "float32" else \
            rng.integers(-5, 5, [count] + x.shape[1:])
        out = derived(x, g)
        attrs = {"reduction": reduction} if reduction != "none" else {}
        g.node("ScatterND", [x.name, g.const(idx), g.const(np.asarray(upd).astype(x.dtype))], [out],
               **attrs)
        return True
    return False


BUILDERS += [(indexing, op, 0.6) for op in ("Range", "Constant", "Size", "LRN", "OneHot",
                                            "GatherND", "ScatterElements", "ScatterND")]


def control_if(g: Graph, op: str) -> bool:
    """If on a condition computed from a value's shape (its first dimension
    above 1 to 3: the pattern of exported models, known only once the input
    shapes are, and different between the feeds of a symbolic batch), whose
    branches read that value from the outer scope: Neg in one, Relu or Abs
    in the other (the same shape either way)."""
    from onnx import TensorProto, helper
    x = g.pick(lambda v: _float(v) and len(v.shape) >= 1)
    if x is None:
        return False
    shape = g.add_value("int64", [len(x.shape)], [False])
    g.node("Shape", [x.name], [shape])
    first = g.add_value("int64", [], [])
    g.node("Gather", [shape.name, g.const(np.array(0, np.int64))], [first], axis=0)
    cond = g.add_value("bool", [], [])
    g.node("Greater", [first.name, g.const(np.array(int(g.rng.integers(1, 4)), np.int64))], [cond])
    out = derived(x, g)
    other = str(g.rng.choice(["Relu", "Abs"]))
    then_out, else_out = g.fresh("t"), g.fresh("e")
    then_g = helper.make_graph([helper.make_node("Neg", [x.name], [then_out])], g.fresh("then"), [],
                               [helper.make_tensor_value_info(then_out, TensorProto.FLOAT, None)])
    else_g = helper.make_graph([helper.make_node(other, [x.name], [else_out])], g.fresh("else"), [],
                               [helper.make_tensor_value_info(else_out, TensorProto.FLOAT, None)])
    x.readers += 1   # read from inside the branches
    g.node("If", [cond.name], [out], then_branch=then_g, else_branch=else_g)
    return True


def attention(g: Graph, op: str) -> bool:
    """Attention over a 4-D value as Q, K and V (batch, heads, length, head
    size), causal or not; RotaryEmbedding of a 4-D value with constant
    caches and position ids."""
    x = g.pick(lambda v: _float(v) and len(v.shape) == 4 and not any(v.sym[1:]) and v.exact)
    if x is None:
        return False
    if op == "Attention":
        out = derived(x, g, exact=False, family="reduction")
        g.node("Attention", [x.name, x.name, x.name], [out], is_causal=int(g.rng.random() < 0.5))
        return True
    d = x.shape[3]
    if d % 2:
        return False
    half = d // 2
    positions = int(g.rng.integers(x.shape[2], x.shape[2] + 4))
    angles = g.rng.uniform(-3.0, 3.0, (positions, half))
    cos, sin = np.cos(angles).astype(np.float32), np.sin(angles).astype(np.float32)
    batch = x.shape[0]
    if x.sym[0]:
        return False
    pos = g.rng.integers(0, positions, (batch, x.shape[2])).astype(np.int64)
    out = derived(x, g, exact=False, family="reduction")
    g.node("RotaryEmbedding", [x.name, g.const(cos), g.const(sin), g.const(pos)], [out],
           interleaved=int(g.rng.random() < 0.5))
    return True


# (Attention and RotaryEmbedding are drawn at opset 23 only: weighted up)
def linear_attention(g: Graph, op: str) -> bool:
    """LinearAttention over a 3-D value (batch, length, heads * head size)
    as query, key and value, each update rule, constant decay and beta."""
    rng = g.rng
    x = g.pick(lambda v: _float(v) and len(v.shape) == 3 and not any(v.sym[1:]) and v.bounded)
    if x is None or x.sym[0]:
        return False
    b, t, d = x.shape
    heads = int(rng.choice([h for h in (1, 2, 3, 4) if d % h == 0]))
    rule = str(rng.choice(["linear", "gated", "delta", "gated_delta"]))
    ins = [x.name, x.name, x.name, "", "", ""]
    if rule in ("gated", "gated_delta"):
        ins[4] = g.const(-np.abs(rand_floats(rng, [b, t, d if rng.random() < 0.5 else heads], 0.5)))
    if rule in ("delta", "gated_delta"):
        ins[5] = g.const(rng.uniform(0.0, 1.0, [b, t, heads]).astype(np.float32))
    while ins[-1] == "":
        ins.pop()
    out = derived(x, g, exact=False, bounded=False, family="product")
    state = derived(x, g, shape=[b, heads, d // heads, d // heads], sym=[False] * 4, exact=False,
                    bounded=False, family="product")
    g.node("LinearAttention", ins, [out, state], q_num_heads=heads, kv_num_heads=heads,
           update_rule=rule)
    return True


BUILDERS += [(unary, op, 0.4) for op in INVERSE_TRIG]
BUILDERS += [(control_if, "If", 0.5), (attention, "Attention", 3.0), (attention, "RotaryEmbedding", 3.0),
             (causal_conv, "CausalConvWithState", 3.0), (linear_attention, "LinearAttention", 3.0)]
BUILDERS += [(deform_conv, "DeformConv", 1.0)]
