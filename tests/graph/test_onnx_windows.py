"""ONNX HannWindow, HammingWindow and BlackmanWindow (opset 17; docs/onnx.md):
bit for bit the node's own function body (onnx's expansion: Range, Mul,
Cos, Sub, Add in float32, run by samebits), periodic and symmetric, sizes
0 to 33, the size an int32 or int64 graph input; the output read by two
nodes, both modes, every path, 1 and 2 threads; numpy's float64 formula
within float32 rounding."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("onnx")

from onnx import TensorProto, helper  # noqa: E402
from onnx.backend.test.case.node import function_testcase_helper  # noqa: E402

import samebits.onnx as so  # noqa: E402
from onnx_cases import bits, graph_model, run_everywhere  # noqa: E402

F, I64 = TensorProto.FLOAT, TensorProto.INT64
A = {"HannWindow": (0.5, 0.5, 0.0), "HammingWindow": (25 / 46, 21 / 46, 0.0),
     "BlackmanWindow": (0.42, 0.5, 0.08)}


@pytest.mark.parametrize("op", list(A))
@pytest.mark.parametrize("periodic", [0, 1])
def test_window(op, periodic):
    node = helper.make_node(op, ["n"], ["w"], periodic=periodic)
    post = [helper.make_node("Neg", ["w"], ["wn"]), helper.make_node("Identity", ["w"], ["w2"])]
    outs = {"w": (F, None), "wn": (F, None), "w2": (F, None)}
    model = graph_model([node] + post, {"n": (I64, [])}, outs, opset=17)
    body_nodes = function_testcase_helper(node, [helper.make_tensor_type_proto(I64, [])], "t",
                                          [helper.make_opsetid("", 17)])[0][0][0]
    body = graph_model(body_nodes + post, {"n": (I64, [])}, outs, opset=17)
    for size in (0, 1, 2, 5, 16, 33):
        feeds = {"n": np.array(size, np.int64)}
        want = so.load(body, mode="exact").run(feeds)
        for what, out in run_everywhere(model, feeds):
            for name in outs:
                assert np.array_equal(bits(out[name]), bits(want[name])), (what, size, name)
        if size > 1:
            N = size if periodic else size - 1
            n = np.arange(size)
            a0, a1, a2 = A[op]
            ref = a0 - a1 * np.cos(2 * np.pi * n / N) + a2 * np.cos(4 * np.pi * n / N)
            np.testing.assert_allclose(want["w"], ref, rtol=1e-5, atol=2e-6)
