"""samebits: float32 kernels for whole networks (matrix products,
convolutions, attention, the transcendentals, activations, normalizations and
pooling between them) with the same bits everywhere in exact mode, and near
the hardware's peak in fast mode.

>>> import numpy as np, samebits
>>> a = np.ones((2, 3), np.float32); b = np.ones((3, 4), np.float32)
>>> samebits.matmul(a, b, mode="exact").tolist()[0]
[3.0, 3.0, 3.0, 3.0]
"""
from __future__ import annotations

from ._ops.arith import add, div, maximum, minimum, mul, pow, sqrt, sub
from ._ops.attention import scaled_dot_product_attention
from ._ops.avgpool import adaptive_avg_pool2d, avg_pool2d
from ._ops.conv import PackedConv2d, conv2d, pack_conv2d
from ._ops.elementwise import (
    cos, elu, erf, exp, gelu, hardsigmoid, hardswish, leaky_relu, log, mish, relu, relu6,
    sigmoid, silu, sin, softplus, tanh)
from ._ops.explain import Plan, explain
from ._binding.info import info
from ._ops.linear import linear
from ._ops.matmul import matmul
from ._ops.maxpool import max_pool2d
from ._ops.movement import concatenate, pad, permute, slice, split, take, transpose
from ._ops.norm import batch_norm, group_norm
from ._ops.packed import PackedMatrix, pack, pack_linear
from ._binding.paths import path, paths, use_path
from ._ops.reduce import layer_norm, log_softmax, mean, softmax, sum
from ._ops.resize import interpolate
from ._binding.threads import get_num_threads, set_num_threads
from ._version import __version__
from ._binding import threadpoolctl as _threadpoolctl

__all__ = [
    "__version__",
    "adaptive_avg_pool2d",
    "add",
    "avg_pool2d",
    "batch_norm",
    "concatenate",
    "cos",
    "conv2d",
    "div",
    "elu",
    "erf",
    "exp",
    "explain",
    "gelu",
    "get_num_threads",
    "group_norm",
    "hardsigmoid",
    "hardswish",
    "info",
    "interpolate",
    "layer_norm",
    "leaky_relu",
    "linear",
    "log",
    "log_softmax",
    "matmul",
    "max_pool2d",
    "maximum",
    "mean",
    "minimum",
    "mish",
    "mul",
    "pack",
    "pack_conv2d",
    "pack_linear",
    "PackedConv2d",
    "PackedMatrix",
    "pad",
    "path",
    "paths",
    "permute",
    "Plan",
    "pow",
    "relu",
    "relu6",
    "scaled_dot_product_attention",
    "set_num_threads",
    "sigmoid",
    "silu",
    "sin",
    "slice",
    "softmax",
    "softplus",
    "split",
    "sqrt",
    "sub",
    "sum",
    "take",
    "tanh",
    "transpose",
    "use_path",
]

_threadpoolctl.register()   # threadpool_info/threadpool_limits see samebits (when installed)


def __getattr__(name: str) -> object:
    """samebits.onnx is loaded on first use, so that ``import samebits``
    stays light and ``samebits.onnx.load`` works without its own import."""
    if name == "onnx":
        import importlib
        return importlib.import_module(".onnx", __name__)
    raise AttributeError(f"module 'samebits' has no attribute {name!r}")
