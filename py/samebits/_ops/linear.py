"""samebits.linear: a dense layer, torch.nn.functional.linear's convention."""
from __future__ import annotations

from typing import Any, Optional

from . import products as _products
from .._typing import Mode


def linear(x: Any, weight: Any, bias: Any = None, *, activation: Any = None,
           mode: Mode = "fast", out: Any = None, threads: Optional[int] = None) -> Any:
    """``x @ weight.T + bias``, then the activation: a dense (fully connected) layer.

    Parameters
    ----------
    x
        float32 input of shape (..., in_features), any strides (a numpy array,
        or a buffer-protocol object of format 'f'); 1-D gives a 1-D result.
    weight
        float32 (out_features, in_features), as torch stores it, read in place
        whatever its strides; or a PackedMatrix from
        ``samebits.pack_linear(weight)`` (same bits).
    bias
        Optional float32 (out_features,), added to every row after the sum as
        one rounded add.
    activation
        None, or the name of an activation applied after the bias, with the
        bits of the standalone function (docs/exact-ops.md): "relu", "relu6",
        "leaky_relu" (slope 0.01) or ("leaky_relu", slope), "gelu",
        "gelu_tanh" (torch's approximate="tanh"), "silu", "hardswish",
        "hardsigmoid", "sigmoid", "tanh"; and "swish_onnx", ONNX's
        ``x * sigmoid(x)`` as two operations (the sigmoid rounded, then one
        multiply; in fast mode with fast mode's sigmoid). NaN stays NaN.
    mode
        ``"exact"``: each output is the product as ``matmul`` defines it (its
        in_features products summed in increasing order from +0, every product
        and sum rounded to float32, no fused multiply-add), then the bias
        (one rounded add), then the activation; NaN stored as 0x7FC00000. The
        same bits on every machine, path, thread count and runtime.
        ``"fast"`` (default): the same order, fused where the path fuses.
    out
        Optional writable float32 array of shape (..., out_features), not
        overlapping an input, filled in place and returned.
    threads
        Maximum number of threads; the result never depends on it.

    Returns
    -------
    The (..., out_features) result: ``out`` if given; else a numpy array when
    x or weight is one, or a memoryview of format 'f'.

    Raises
    ------
    TypeError
        A dtype other than float32, a non-buffer argument, a bad threads type.
    ValueError
        weight not 2-D; x's last dimension not in_features; a bias of another
        shape; a bad mode, activation or out; weights packed under another path.
    """
    return _products.run(_products.prepare_linear(x, weight, bias, activation, mode, out,
                                                  threads))
