"""ONNX MeanVarianceNormalization (docs/onnx.md): bit for bit the node's own
function body (onnx's expansion: ReduceMean, Pow, Sub, Sqrt, Add, Div, run by
samebits), default and explicit axes, 3-D and 4-D inputs, special values;
on an intermediate read by two nodes, both modes, every path, 1 and 2
threads; ONNX Runtime within float32 rounding."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper  # noqa: E402
from onnx.backend.test.case.node import function_testcase_helper  # noqa: E402

import samebits.onnx as so  # noqa: E402
from onnx_cases import bits, graph_model, run_everywhere  # noqa: E402

F = TensorProto.FLOAT


@pytest.mark.parametrize("shape,axes", [((2, 3, 4, 5), None), ((2, 3, 4, 5), [1]), ((3, 4, 6), [0, 2]),
                                        ((2, 3, 4, 5), [0, 1, 2, 3])])
def test_mvn_is_its_function_body(shape, axes):
    attrs = {} if axes is None else {"axes": axes}
    node = helper.make_node("MeanVarianceNormalization", ["xn"], ["y"], **attrs)
    pre = [helper.make_node("Neg", ["x"], ["xn"])]
    post = [helper.make_node("Abs", ["y"], ["ya"]), helper.make_node("Identity", ["y"], ["y2"])]
    outs = {"y": (F, None), "ya": (F, None), "y2": (F, None)}
    model = graph_model(pre + [node] + post, {"x": (F, list(shape))}, outs, opset=13)
    body_nodes = function_testcase_helper(node, [helper.make_tensor_type_proto(F, list(shape))], "t",
                                          [helper.make_opsetid("", 13)])[0][0][0]
    body = graph_model(pre + body_nodes + post, {"x": (F, list(shape))}, outs, opset=13)
    rng = np.random.default_rng(len(shape))
    x = (rng.standard_normal(shape) * 2 + 1).astype(np.float32)
    x.reshape(-1)[:2] = [1e-40, -0.0]
    want = so.load(body, mode="exact").run({"x": x})
    for what, out in run_everywhere(model, {"x": x}):
        for name in outs:
            assert np.array_equal(bits(out[name]), bits(want[name])), (what, name)
    got = ort.InferenceSession(model, providers=["CPUExecutionProvider"]).run(["y"], {"x": x})[0]
    np.testing.assert_allclose(want["y"], got, rtol=1e-4, atol=1e-4)
