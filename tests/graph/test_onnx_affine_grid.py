"""ONNX AffineGrid (opset 20; csrc/kernels/affine_grid.c, docs/onnx.md):
exact mode gives, bit for bit, ONNX's own function body for the node
(onnx's function_testcase_helper expansion, run by samebits), 2-D and 3-D,
with and without align_corners, special values in theta; on an
intermediate with the grid read by two nodes, every path, 1 and 2 threads;
ONNX Runtime and onnx.reference within float32 rounding. Where the body
divides by zero (an axis of one point with align_corners) samebits gives
torch's coordinate -1; that case is held to it."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

import onnx  # noqa: E402
from onnx import TensorProto, helper  # noqa: E402
from onnx.backend.test.case.node import function_testcase_helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

import samebits.onnx as so  # noqa: E402
from onnx_cases import bits, graph_model, run_everywhere  # noqa: E402

F, I64 = TensorProto.FLOAT, TensorProto.INT64
OPSET = 20


def _models(size, align):
    dims = len(size) - 2
    node = helper.make_node("AffineGrid", ["tn", "size"], ["g"], align_corners=align)
    pre = [helper.make_node("Neg", ["theta"], ["tn"])]
    post = [helper.make_node("Abs", ["g"], ["ga"]), helper.make_node("Neg", ["g"], ["gn"])]
    inputs = {"theta": (F, [size[0], dims, dims + 1])}
    outputs = {"g": (F, None), "ga": (F, None), "gn": (F, None)}
    inits = {"size": np.array(size, np.int64)}
    model = graph_model(pre + [node] + post, inputs, outputs, inits=inits, opset=OPSET)
    types = [helper.make_tensor_type_proto(F, [size[0], dims, dims + 1]),
             helper.make_tensor_type_proto(I64, [len(size)])]
    body = function_testcase_helper(node, types, "t", [helper.make_opsetid("", OPSET)])[0][0][0]
    return model, graph_model(pre + body + post, inputs, outputs, inits=inits, opset=OPSET)


@pytest.mark.parametrize("size", [[2, 3, 4, 5], [1, 1, 3, 4, 2], [3, 2, 7, 1 + 5]])
@pytest.mark.parametrize("align", [0, 1])
def test_affine_grid_is_its_function_body(size, align):
    model, body = _models(size, align)
    dims = len(size) - 2
    rng = np.random.default_rng(len(size) * 2 + align)
    theta = rng.standard_normal((size[0], dims, dims + 1)).astype(np.float32)
    theta.reshape(-1)[:3] = [np.inf, -0.0, 1e-40]
    feeds = {"theta": theta}
    want = so.load(body, mode="exact").run(feeds)
    for what, out in run_everywhere(model, feeds):
        for name in ("g", "ga", "gn"):
            assert np.array_equal(bits(out[name]), bits(want[name])), (what, name)
    finite = {"theta": np.nan_to_num(theta, posinf=2.0)}
    mine = so.load(model).run(finite)["g"]
    for theirs in (ReferenceEvaluator(model).run(["g"], finite)[0],
                   ort.InferenceSession(model, providers=["CPUExecutionProvider"]).run(["g"], finite)[0]):
        np.testing.assert_allclose(mine, theirs, rtol=1e-6, atol=1e-6)


def test_one_point_axis_with_align_corners_is_minus_one():
    """size (1, 1, 1, 3), align_corners: the body's 2 / (1 - 1) would make
    every y NaN; torch's linspace(-1, 1, 1) is [-1]."""
    model, _ = _models([1, 1, 1, 3], 1)
    theta = np.array([[[1, 0, 0], [0, 1, 0]]], np.float32)   # identity: the grid is the base
    g = so.load(model).run({"theta": -theta})["g"]
    assert np.array_equal(g[0, 0, :, 1], np.array([-1, -1, -1], np.float32))
    assert np.array_equal(g[0, 0, :, 0], np.array([-1, 0, 1], np.float32))
