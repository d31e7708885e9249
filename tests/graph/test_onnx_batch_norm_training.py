"""ONNX BatchNormalization with training_mode=1 (docs/onnx.md): the batch's
mean and population variance per channel as serial float32 sums (a numpy
float32 loop oracle, bit for bit), Y bit for bit the inference form fed
those statistics, the running statistics input * momentum + batch *
(1 - momentum); on an intermediate, every output read by a second node,
both modes, every path, 1 and 2 threads; ONNX Runtime and onnx.reference
within float32 rounding."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

import samebits.onnx as so  # noqa: E402
from onnx_cases import bits, graph_model, run_everywhere  # noqa: E402

F = TensorProto.FLOAT


def _stats(x):
    n, c = x.shape[:2]
    flat = x.reshape(n, c, -1)
    count = np.float32(flat.shape[0] * flat.shape[2])
    mean, var = np.zeros(c, np.float32), np.zeros(c, np.float32)
    for ch in range(c):
        s = np.float32(0)
        for v in flat[:, ch].reshape(-1):
            s = np.float32(s + v)
        m = np.float32(s / count)
        q = np.float32(0)
        for v in flat[:, ch].reshape(-1):
            d = np.float32(v - m)
            q = np.float32(q + np.float32(d * d))
        mean[ch], var[ch] = m, np.float32(q / count)
    return mean, var


@pytest.mark.parametrize("shape", [(2, 3, 4, 5), (3, 2, 7), (4, 3)])
def test_batch_norm_training(shape):
    rng = np.random.default_rng(len(shape))
    x = rng.standard_normal(shape).astype(np.float32) * 3 + 1
    c = shape[1]
    p = {k: rng.standard_normal(c).astype(np.float32) for k in ("s", "b", "m")}
    p["v"] = rng.uniform(0.5, 2, c).astype(np.float32)
    nodes = [helper.make_node("Neg", ["x"], ["xn"]),
             helper.make_node("BatchNormalization", ["xn", "s", "b", "m", "v"], ["y", "rm", "rv"],
                              training_mode=1, momentum=0.8, epsilon=1e-3),
             helper.make_node("Abs", ["y"], ["ya"]), helper.make_node("Neg", ["rm"], ["rmn"]),
             helper.make_node("Neg", ["rv"], ["rvn"])]
    outs = {k: (F, None) for k in ("y", "rm", "rv", "ya", "rmn", "rvn")}
    data = graph_model(nodes, {"x": (F, list(shape))}, outs, inits=p, opset=15)
    mean, var = _stats(-x)
    inference = graph_model([helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"],
                                              epsilon=1e-3)],
                            {"x": (F, list(shape))}, {"y": (F, None)},
                            inits={"s": p["s"], "b": p["b"], "m": mean, "v": var}, opset=15)
    want_y = so.load(inference, mode="exact").run({"x": -x})["y"]
    take = np.float32(1) - np.float32(0.8)
    want_rm = np.float32(p["m"] * np.float32(0.8)) + np.float32(mean * take)
    want_rv = np.float32(p["v"] * np.float32(0.8)) + np.float32(var * take)
    for what, out in run_everywhere(data, {"x": x}, modes=("exact",)):
        assert np.array_equal(bits(out["y"]), bits(want_y)), what
        assert np.array_equal(bits(out["rm"]), bits(want_rm)), what
        assert np.array_equal(bits(out["rv"]), bits(want_rv)), what
        assert np.array_equal(bits(out["rvn"]), bits(-want_rv)), what
    for theirs in (ReferenceEvaluator(data).run(["y", "rm", "rv"], {"x": x}),
                   ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(["y", "rm", "rv"],
                                                                                      {"x": x})):
        for got, want in zip(theirs, (want_y, want_rm, want_rv)):
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
