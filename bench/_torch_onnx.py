"""torch eager, running an ONNX graph node by node: the torch baseline of
bench/bench_models.py. Each node becomes the torch function with its ONNX
meaning, on the graph's own weights, so that torch computes the same network
as samebits and ONNX Runtime without a separate model definition. Only the
operators (and attribute forms) of samebits' reference networks are mapped;
anything else raises.
"""
from __future__ import annotations

from typing import Callable

import numpy as np
import torch
import torch.nn.functional as F
from onnx import numpy_helper


def _attrs(node) -> dict:
    from onnx import helper
    return {a.name: helper.get_attribute_value(a) for a in node.attribute}


def _conv(a, x, w, b=None):
    pads = a.get("pads", [0] * (2 * (w.dim() - 2)))
    dims = w.dim() - 2
    if pads[:dims] != pads[dims:]:
        raise NotImplementedError("asymmetric pads")
    fn = F.conv1d if dims == 1 else F.conv2d
    return fn(x, w, b, stride=a.get("strides", 1), padding=pads[:dims],
              dilation=a.get("dilations", 1), groups=a.get("group", 1))


def _gemm(a, x, w, c=None):
    x = x.t() if a.get("transA", 0) else x
    w = w.t() if a.get("transB", 0) else w
    y = a.get("alpha", 1.0) * (x @ w)
    return y if c is None else y + a.get("beta", 1.0) * c


def _reshape(a, x, shape):
    target = [int(s) if int(s) != 0 else x.shape[i] for i, s in enumerate(shape.tolist())]
    return x.reshape(target)


OPS: dict[str, Callable] = {
    "Conv": _conv,
    "BatchNormalization": lambda a, x, s, b, m, v: F.batch_norm(x, m, v, s, b, False, 0.0,
                                                                a.get("epsilon", 1e-5)),
    "Relu": lambda a, x: torch.relu(x),
    "MaxPool": lambda a, x: F.max_pool2d(x, a["kernel_shape"], a.get("strides", 1),
                                         a.get("pads", [0, 0])[:2]),
    "Add": lambda a, x, y: x + y,
    "Sub": lambda a, x, y: x - y,
    "Mul": lambda a, x, y: x * y,
    "Div": lambda a, x, y: x / y,
    "GlobalAveragePool": lambda a, x: x.mean(dim=tuple(range(2, x.dim())), keepdim=True),
    "Flatten": lambda a, x: x.flatten(a.get("axis", 1)),
    "Gemm": _gemm,
    "HardSwish": lambda a, x: F.hardswish(x),
    "HardSigmoid": lambda a, x: torch.clamp(a.get("alpha", 0.2) * x + a.get("beta", 0.5), 0, 1),
    "Shape": lambda a, x: torch.tensor(x.shape, dtype=torch.int64),
    "Gather": lambda a, x, i: torch.index_select(x, a.get("axis", 0), i.reshape(-1)).reshape(
        x.shape[:a.get("axis", 0)] + i.shape + x.shape[a.get("axis", 0) + 1:]),
    "Range": lambda a, s, l, d: torch.arange(int(s), int(l), int(d), dtype=torch.int64),
    "Unsqueeze": lambda a, x, axes: x.reshape(_unsqueezed(x.shape, axes.tolist())),
    "ConstantOfShape": lambda a, s: torch.full(s.tolist(), numpy_helper.to_array(
        a["value"]).item(), dtype=torch.int64),
    "LayerNormalization": lambda a, x, s, b: F.layer_norm(x, s.shape, s, b, a.get("epsilon",
                                                                                  1e-5)),
    "Cast": lambda a, x: x.to(torch.float32),
    "MatMul": lambda a, x, y: x @ y,
    "Concat": lambda a, *xs: torch.cat(xs, a["axis"]),
    "Reshape": _reshape,
    "Transpose": lambda a, x: x.permute(a["perm"]),
    "Softmax": lambda a, x: torch.softmax(x, a.get("axis", -1)),
    "Erf": lambda a, x: torch.erf(x),
    "Identity": lambda a, x: x,
}


def _unsqueezed(shape, axes) -> list[int]:
    out = list(shape)
    for ax in sorted(a % (len(shape) + len(axes)) for a in axes):
        out.insert(ax, 1)
    return out


class TorchGraph:
    """model: an onnx.ModelProto. __call__(feeds: {name: numpy}) -> [numpy outputs]."""

    def __init__(self, model) -> None:
        g = model.graph
        self.consts = {t.name: torch.from_numpy(numpy_helper.to_array(t).copy())
                       for t in g.initializer}
        self.steps = []
        for node in g.node:
            if node.op_type not in OPS:
                raise NotImplementedError(f"torch baseline: {node.op_type}")
            self.steps.append((OPS[node.op_type], _attrs(node), list(node.input),
                               list(node.output)))
        self.outputs = [o.name for o in g.output]
        # each intermediate is dropped after its last reader (Whisper at batch
        # 8 holds 864 MB per attention score tensor)
        self.last = {}
        for k, (_, _, ins, _) in enumerate(self.steps):
            for n in ins:
                self.last[n] = k

    def __call__(self, feeds: dict) -> list:
        values = dict(self.consts)
        values.update({k: torch.from_numpy(np.asarray(v)) for k, v in feeds.items()})
        with torch.inference_mode():
            for k, (fn, attrs, ins, outs) in enumerate(self.steps):
                values[outs[0]] = fn(attrs, *[values[n] for n in ins if n])
                for n in ins:
                    if n and self.last.get(n) == k and n not in self.consts and \
                            n not in self.outputs:
                        values.pop(n, None)
        return [values[n].numpy() for n in self.outputs]
