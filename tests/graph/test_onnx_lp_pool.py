"""ONNX LpPool and GlobalLpPool (docs/onnx.md; csrc/kernels/lp_pool.c): over
each window's inside taps in row-major order, s = the serial float32 sum of
|x| (p 1), x * x (p 2) or pow(|x|, p); y = s, sqrt(s) or pow(s, 1/p). Bit for
bit against that loop in numpy for p 1 and 2 (pow is samebits' exact pow,
checked against ONNX Runtime for p 3), on graph inputs, an intermediate and
two consumers, both modes, every path, 1 and 2 threads; within 1e-5 of ONNX
Runtime."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("onnx")

from onnx import TensorProto, helper  # noqa: E402

from onnx_cases import bits, model, run_everywhere, value  # noqa: E402

F = TensorProto.FLOAT


def lp_definition(x, k, stride, pads, p):
    n, c, h, w = x.shape
    oh = (h + pads[0] + pads[2] - k[0]) // stride[0] + 1
    ow = (w + pads[1] + pads[3] - k[1]) // stride[1] + 1
    y = np.zeros((n, c, oh, ow), np.float32)
    for b in range(n):
        for ch in range(c):
            for i in range(oh):
                for j in range(ow):
                    s = np.float32(0)
                    for ky in range(k[0]):
                        r = i * stride[0] - pads[0] + ky
                        if not 0 <= r < h:
                            continue
                        for kx in range(k[1]):
                            col = j * stride[1] - pads[1] + kx
                            if 0 <= col < w:
                                v = x[b, ch, r, col]
                                s = np.float32(s + (np.abs(v) if p == 1 else np.float32(v * v)))
                    y[b, ch, i, j] = s if p == 1 else np.sqrt(s)
    return y


@pytest.mark.parametrize("p", [1, 2])
@pytest.mark.parametrize("k,stride,pads", [((2, 2), (1, 1), (0, 0, 0, 0)), ((3, 2), (2, 1), (1, 0, 1, 1))])
def test_lp_pool_is_its_definition(p, k, stride, pads):
    ort = pytest.importorskip("onnxruntime")
    x = np.random.default_rng(p).standard_normal((2, 3, 6, 5)).astype(np.float32)
    want = lp_definition(x, k, stride, pads, p)
    for place in ("inputs", "intermediate", "consumers"):
        nodes = [helper.make_node("Neg", ["x"], ["xn"])] if place == "intermediate" else []
        nodes.append(helper.make_node("LpPool", ["xn" if nodes else "x"], ["y"], kernel_shape=list(k),
                                      strides=list(stride), pads=list(pads), p=p))
        outs = [value("y", F)]
        if place == "consumers":
            nodes += [helper.make_node("Identity", ["y"], ["c1"]), helper.make_node("Neg", ["y"], ["c2"])]
            outs += [value("c1", F), value("c2", F)]
        data = model(nodes, [value("x", F, x.shape)], outs, opset=18)
        for what, out in run_everywhere(data, {"x": x}):
            assert np.array_equal(bits(out["y"]), bits(want)), (place, what)
        if place == "inputs":
            ref = ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
            np.testing.assert_allclose(out["y"], ref, rtol=1e-5, atol=1e-6)


def test_global_lp_pool_and_p3_near_onnx_runtime():
    ort = pytest.importorskip("onnxruntime")
    x = np.random.default_rng(3).standard_normal((2, 3, 4, 5)).astype(np.float32)
    for op, attrs in (("GlobalLpPool", {"p": 2}), ("GlobalLpPool", {"p": 1}),
                      ("LpPool", {"p": 3, "kernel_shape": [2, 2]})):
        data = model([helper.make_node(op, ["x"], ["y"], **attrs)], [value("x", F, x.shape)], [value("y", F)],
                     opset=18)
        want = ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
        first = None
        for what, out in run_everywhere(data, {"x": x}):
            np.testing.assert_allclose(out["y"], want, rtol=1e-5, atol=1e-6, err_msg=f"{op} {what}")
            first = out["y"] if first is None else first
            assert np.array_equal(bits(out["y"]), bits(first)), what
