"""ONNX MaxUnpool (csrc/graph/ops/nn/max_unpool.c, docs/onnx.md) after a
MaxPool that gives its indices, in a graph: equal to onnx.reference value
for value, 2-D and 3-D, strides, pads, with and without output_shape (the
unpooled tensor at the origin of a larger output, where ONNX Runtime 1.32
differs from onnx.reference); the result read by two nodes and returned,
both modes, every path, 1 and 2 threads; ONNX Runtime agrees without
output_shape; an index out of range is an IndexError."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

import samebits.onnx as so  # noqa: E402
from onnx_cases import bits, graph_model, run_everywhere  # noqa: E402

F, I64 = TensorProto.FLOAT, TensorProto.INT64


@pytest.mark.parametrize("shape,kernel,strides,pads,output_shape", [
    ((1, 2, 6, 4), [2, 2], [2, 2], [0, 0, 0, 0], None),
    ((2, 1, 5, 7), [3, 2], [2, 1], [1, 0, 1, 0], None),
    ((1, 2, 6, 4), [2, 2], [2, 2], [0, 0, 0, 0], [1, 2, 7, 6]),
    ((1, 1, 4, 4, 6), [2, 2, 3], [2, 2, 3], [0, 0, 0, 0, 0, 0], None),
])
def test_max_unpool(shape, kernel, strides, pads, output_shape):
    rng = np.random.default_rng(len(shape))
    x = rng.standard_normal(shape).astype(np.float32)
    attrs = {"kernel_shape": kernel, "strides": strides, "pads": pads}
    ins = ["p", "i"] + (["os"] if output_shape else [])
    nodes = [helper.make_node("MaxPool", ["x"], ["p", "i"], **attrs),
             helper.make_node("MaxUnpool", ins, ["y"], **attrs),
             helper.make_node("Neg", ["y"], ["yn"]), helper.make_node("Identity", ["y"], ["y2"])]
    inits = {"os": np.array(output_shape, np.int64)} if output_shape else {}
    data = graph_model(nodes, {"x": (F, list(shape))}, {"y": (F, None), "yn": (F, None), "y2": (F, None)},
                       inits=inits, opset=12)
    want = ReferenceEvaluator(data).run(["y"], {"x": x})[0]
    for what, out in run_everywhere(data, {"x": x}):
        assert np.array_equal(bits(out["y"]), bits(want)), what
        assert np.array_equal(out["yn"], -want) and np.array_equal(bits(out["y2"]), bits(want)), what
    if output_shape is None:
        got = ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(["y"], {"x": x})[0]
        np.testing.assert_array_equal(got, want)


def test_max_unpool_index_out_of_range():
    nodes = [helper.make_node("MaxUnpool", ["x", "i"], ["y"], kernel_shape=[2, 2], strides=[2, 2])]
    data = graph_model(nodes, {"x": (F, [1, 1, 2, 2]), "i": (I64, [1, 1, 2, 2])}, {"y": (F, None)}, opset=12)
    with pytest.raises(IndexError, match="index 16 is out of range"):
        so.load(data).run({"x": np.ones((1, 1, 2, 2), np.float32),
                           "i": np.array([0, 1, 2, 16], np.int64).reshape(1, 1, 2, 2)})
