"""Graph rewrites at load, before the nodes are built.

Exact mode allows only rewrites that give the same bits as the graph as
written; fast mode adds those that change bits:

- both modes: an activation (Relu, Clip to [0, 6], LeakyRelu, Sigmoid,
  Tanh, HardSwish, HardSigmoid with beta 0.5) that is the only reader of a Conv, Gemm or MatMul output runs as
  that product's epilogue (samebits applies the standalone function's
  definition there: docs/exact-ops.md); an Add of a constant 1-D bias that
  is the only reader of a MatMul with constant 2-D weights becomes the
  product's bias (one rounded add after each sum, as the Add does). Clip to
  [0, 6] equals relu6 bit for bit (maximum(-0, +0) is +0, NaN stays NaN).
- fast mode only: a BatchNormalization (inference, constant statistics) that
  is the only reader of a Conv with constant weights is folded into the
  weights and bias.

The fused node keeps its name; `Node.fused` carries what it absorbed.
"""
from __future__ import annotations

import math
from typing import Optional, Union, cast

import samebits as _sb

from . import _model as M
from . import _values as V
from ._values import Floats

_PRODUCTS = ("Conv", "Gemm", "MatMul")


def _readers(nodes: list[M.Node]) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for i, node in enumerate(nodes):
        for name in node.inputs:
            if name:
                out.setdefault(name, []).append(i)
    return out


def _scalar(constants: dict[str, V.Value], name: str) -> Optional[float]:
    v = constants.get(name)
    if isinstance(v, Floats) and v.size == 1:
        return V.float_list(v)[0]
    return None


# A samebits activation: its name, or (name, parameter).
Activation = Union[str, tuple[str, float]]


def _activation(node: M.Node, constants: dict[str, V.Value], opset: int) -> Optional[Activation]:
    """The samebits activation equal to this node bit for bit, or None."""
    if node.op_type in ("Relu", "Sigmoid", "Tanh") and not node.attributes:
        return node.op_type.lower()
    if node.op_type == "HardSwish" and not node.attributes:
        return "hardswish_onnx"
    if node.op_type == "HardSigmoid" and set(node.attributes) <= {"alpha", "beta"}:
        a, b = node.attributes.get("alpha"), node.attributes.get("beta")
        alpha = a.value if a is not None and a.type == M.A_FLOAT else 0.2
        beta = b.value if b is not None and b.type == M.A_FLOAT else 0.5
        return ("hardsigmoid_onnx", alpha) if beta == 0.5 else None
    if node.op_type == "LeakyRelu" and set(node.attributes) <= {"alpha"}:
        a = node.attributes.get("alpha")
        alpha = a.value if a is not None and a.type == M.A_FLOAT else 0.01
        return ("leaky_relu", alpha)
    if node.op_type == "Clip":
        if opset < 11:
            lo = node.attributes.get("min")
            hi = node.attributes.get("max")
            bounds = (lo.value if lo and lo.type == M.A_FLOAT else None,
                      hi.value if hi and hi.type == M.A_FLOAT else None)
            if set(node.attributes) - {"min", "max"}:
                return None
        else:
            if node.attributes or len(node.inputs) != 3:
                return None
            bounds = (_scalar(constants, node.inputs[1]), _scalar(constants, node.inputs[2]))
        if bounds == (0.0, 6.0):
            return "relu6"
    return None


def _fold_batch_norm(conv: M.Node, bn: M.Node, constants: dict[str, V.Value]) -> bool:
    """Fast mode: Conv(W, B) then BatchNormalization as one Conv with new
    constant weights; True when done."""
    if len(bn.inputs) != 5 or any(n not in constants for n in bn.inputs[1:]):
        return False
    if set(bn.attributes) - {"epsilon", "momentum"} or any(o for o in bn.outputs[1:]):
        return False
    w = constants.get(conv.inputs[1]) if len(conv.inputs) > 1 else None
    if not isinstance(w, Floats) or len(w.shape) < 3 or not w.size:
        return False
    eps_attr = bn.attributes.get("epsilon")
    eps = eps_attr.value if eps_attr is not None else 1e-5
    gamma, beta, mean, var = (V.float_list(cast(Floats, constants[n])) for n in bn.inputs[1:])
    cout = w.shape[0]
    if not len(gamma) == len(beta) == len(mean) == len(var) == cout:
        return False
    bias = [0.0] * cout
    if len(conv.inputs) > 2 and conv.inputs[2]:
        b = constants.get(conv.inputs[2])
        if not isinstance(b, Floats):
            return False
        bias = V.float_list(b)
    scale = [g / math.sqrt(v + eps) for g, v in zip(gamma, var)]
    shape = (cout,) + (1,) * (len(w.shape) - 1)
    new_w = Floats.wrap(_sb.mul(w.data, V.floats_from_list(scale, shape).data, mode="fast"))
    new_b = V.floats_from_list([(b - m) * s + bt for b, m, s, bt in
                                zip(bias, mean, scale, beta)], (cout,))
    w_name, b_name = f"{conv.inputs[1]}::bn_folded:{bn.name}", f"{bn.name}::bn_folded_bias"
    constants[w_name], constants[b_name] = new_w, new_b
    conv.inputs = [conv.inputs[0], w_name, b_name]
    conv.outputs = list(bn.outputs[:1])
    conv.fused["batch_norm"] = bn.name or bn.outputs[0]
    return True


def fuse(nodes: list[M.Node], constants: dict[str, V.Value], mode: str, opset: int,
         graph_outputs: set[str]) -> list[M.Node]:
    """The node list with the rewrites above applied (nodes are modified)."""
    nodes = list(nodes)
    if mode == "fast":
        readers = _readers(nodes)
        gone: set[int] = set()
        for i, node in enumerate(nodes):
            j = None if node.op_type != "Conv" or i in gone else \
                _only_reader(node.outputs[0], readers, graph_outputs)
            if j is not None and nodes[j].op_type == "BatchNormalization" and \
                    _fold_batch_norm(node, nodes[j], constants):
                gone.add(j)
        nodes = [n for i, n in enumerate(nodes) if i not in gone]

    readers = _readers(nodes)
    gone = set()
    for i, node in enumerate(nodes):
        if node.op_type not in _PRODUCTS or i in gone:
            continue
        j = _only_reader(node.outputs[0], readers, graph_outputs)
        if j is None:
            continue
        user = nodes[j]
        # MatMul with packed weights, then Add of a constant 1-D bias
        if node.op_type == "MatMul" and user.op_type == "Add" and "bias" not in node.fused:
            w = constants.get(node.inputs[1])
            other = [n for n in user.inputs if n != node.outputs[0]]
            b = constants.get(other[0]) if len(other) == 1 else None
            if isinstance(w, Floats) and len(w.shape) == 2 and isinstance(b, Floats) and \
                    b.shape == (w.shape[1],) and not user.attributes:
                node.fused["bias"] = other[0]
                node.outputs = list(user.outputs)
                gone.add(j)
                j = _only_reader(node.outputs[0], readers, graph_outputs)
                if j is None:
                    continue
                user = nodes[j]
        act = _activation(user, constants, opset)
        if act is None:
            continue
        if node.op_type == "Gemm" and not _gemm_plain(node, constants):
            continue
        if node.op_type == "MatMul" and not isinstance(constants.get(node.inputs[1]), Floats):
            continue
        node.fused["activation"] = act
        node.outputs = list(user.outputs)
        gone.add(j)
    return [n for i, n in enumerate(nodes) if i not in gone]


def _only_reader(name: str, readers: dict[str, list[int]],
                 graph_outputs: set[str]) -> Optional[int]:
    """The index of the one node that reads `name`, or None when it has no
    reader, several, or is a graph output (its value must then stay)."""
    users = readers.get(name, [])
    return users[0] if len(users) == 1 and name not in graph_outputs else None


def _gemm_plain(node: M.Node, constants: dict[str, V.Value]) -> bool:
    """A Gemm that samebits runs as one linear (constant B, alpha = beta = 1,
    no transA, a 1-D C or none): its activation can be the epilogue."""
    attrs = {k: a.value for k, a in node.attributes.items()}
    if attrs.get("alpha", 1.0) != 1.0 or attrs.get("beta", 1.0) != 1.0 or attrs.get("transA", 0):
        return False
    if not isinstance(constants.get(node.inputs[1]), Floats):
        return False
    if len(node.inputs) > 2 and node.inputs[2]:
        c = constants.get(node.inputs[2])
        return isinstance(c, Floats) and len(c.shape) == 1
    return True
