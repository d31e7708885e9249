"""LayerNormalization's Mean and InvStdDev outputs (docs/onnx.md): exact
mode's statistics in both modes, bit for bit against their definition
written here (per row of the normalized axes: mean = serial float32 sum /
float32(n); var = serial sum of (x - mean)^2 / float32(n); 1 / sqrt(var +
eps)), of x's shape with the normalized axes 1; output Y is unchanged by
asking for them. On graph inputs, on an intermediate (Neg of x), with the
statistics feeding another node, both modes, every path, 1 and 2 threads;
within 1e-5 of onnx.reference and ONNX Runtime."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("onnx")

from onnx import TensorProto, helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

from onnx_cases import bits, model, run_everywhere, value  # noqa: E402

F = TensorProto.FLOAT


def stats_definition(x: np.ndarray, axis: int, eps: float) -> tuple[np.ndarray, np.ndarray]:
    a = axis % x.ndim
    rows = x.reshape(int(np.prod(x.shape[:a], dtype=np.int64)), -1)
    n = np.float32(rows.shape[1])
    mean = np.zeros(rows.shape[0], np.float32)
    rstd = np.zeros(rows.shape[0], np.float32)
    for r, row in enumerate(rows):
        s = np.float32(0)
        for v in row:
            s = np.float32(s + v)
        m = np.float32(s / n)
        q = np.float32(0)
        for v in row:
            d = np.float32(v - m)
            q = np.float32(q + np.float32(d * d))
        mean[r] = m
        rstd[r] = np.float32(np.float32(1) / np.sqrt(np.float32(np.float32(q / n) + np.float32(eps))))
    shape = x.shape[:a] + (1,) * (x.ndim - a)
    return mean.reshape(shape), rstd.reshape(shape)


def _model(shape, axis, eps, place, outs=("y", "mean", "rstd")):
    norm = shape[axis % len(shape):]
    inits = [helper.make_tensor("s", F, norm, np.linspace(0.5, 1.5, int(np.prod(norm))).tolist())]
    nodes = []
    src = "x"
    if place == "intermediate":
        nodes.append(helper.make_node("Neg", ["x"], ["xn"]))
        src = "xn"
    nodes.append(helper.make_node("LayerNormalization", [src, "s"], list(outs), axis=axis, epsilon=eps))
    graph_outs = [value(o, F) for o in outs if o]
    if place == "consumers":
        nodes.append(helper.make_node("Mul", ["mean", "rstd"], ["prod"]))
        graph_outs.append(value("prod", F))
    return model(nodes, [value("x", F, shape)], graph_outs, inits, opset=17)


@pytest.mark.parametrize("shape,axis", [((3, 8), -1), ((2, 3, 5), 1), ((2, 3, 4, 2), -2), ((4, 16), 0)])
@pytest.mark.parametrize("place", ["inputs", "intermediate", "consumers"])
def test_mean_and_inv_std_dev_are_their_definition(shape, axis, place):
    rng = np.random.default_rng(len(shape) * 10 + axis)
    x = (rng.standard_normal(shape) * 3 + 1).astype(np.float32)
    eps = 1e-5
    src = -x if place == "intermediate" else x
    mean, rstd = stats_definition(src, axis, eps)
    data = _model(shape, axis, eps, place)
    plain = _model(shape, axis, eps, place if place != "consumers" else "inputs", outs=("y",))
    ref = ReferenceEvaluator(data).run(None, {"x": x})
    for (what, out), (_, only_y) in zip(run_everywhere(data, {"x": x}), run_everywhere(plain, {"x": x})):
        assert np.array_equal(bits(out["mean"]), bits(mean)), what
        assert np.array_equal(bits(out["rstd"]), bits(rstd)), what
        assert np.array_equal(bits(out["y"]), bits(only_y["y"])), what
        if place == "consumers":
            assert np.array_equal(bits(out["prod"]), bits(mean * rstd)), what
        for got, want in zip((out["y"], out["mean"], out["rstd"]), ref):
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5, err_msg=what)


def test_inv_std_dev_alone_and_onnx_runtime():
    ort = pytest.importorskip("onnxruntime")
    x = np.random.default_rng(1).standard_normal((5, 6)).astype(np.float32)
    data = _model((5, 6), -1, 1e-3, "inputs", outs=("y", "", "rstd"))
    want = ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(None, {"x": x})
    for what, out in run_everywhere(data, {"x": x}):
        assert set(out) == {"y", "rstd"}, what
        assert np.array_equal(bits(out["rstd"]), bits(stats_definition(x, -1, 1e-3)[1])), what
        np.testing.assert_allclose(out["y"], want[0], rtol=1e-5, atol=1e-5, err_msg=what)
        np.testing.assert_allclose(out["rstd"], want[1], rtol=1e-5, atol=1e-5, err_msg=what)
