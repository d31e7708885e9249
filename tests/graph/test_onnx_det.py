"""ONNX Det (csrc/kernels/det.c, docs/onnx.md): bit for bit against a
pure-Python binary64 oracle of the written elimination (partial pivoting,
first largest pivot, factor, product, difference, then the pivots'
product rounded once), batched and single matrices, singular ones, NaN;
on an intermediate read by two nodes, both modes, every path, 1 and 2
threads; numpy's float64 determinant and ONNX Runtime within float32
rounding."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper  # noqa: E402

from onnx_cases import bits, graph_model, run_everywhere  # noqa: E402

F = TensorProto.FLOAT
NAN = np.uint32(0x7FC00000).view(np.float32)


def oracle_one(m: np.ndarray) -> np.float32:
    n = m.shape[0]
    a = [[float(v) for v in row] for row in m]
    if any(v != v for row in a for v in row):
        return NAN
    sign = 1.0
    for k in range(n):
        p = k
        for i in range(k + 1, n):
            if abs(a[i][k]) > abs(a[p][k]):
                p = i
        if a[p][k] == 0.0:
            return np.float32(sign * 0.0)
        if p != k:
            a[k], a[p] = a[p], a[k]
            sign = -sign
        for i in range(k + 1, n):
            f = a[i][k] / a[k][k]
            for j in range(k + 1, n):
                a[i][j] = a[i][j] - f * a[k][j]
    d = sign
    for k in range(n):
        d = d * a[k][k]
    return np.float32(d)


@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 5, 5), (1, 1), (6, 2, 2)])
def test_det(shape):
    rng = np.random.default_rng(len(shape) * 10 + shape[-1])
    x = rng.standard_normal(shape).astype(np.float32)
    flat = x.reshape(-1, shape[-1], shape[-1])
    if len(flat) > 2:
        flat[1, 0] = flat[1, 1]                                 # singular
        flat[2, 0, 0] = np.nan
    nodes = [helper.make_node("Identity", ["x"], ["xi"]), helper.make_node("Det", ["xi"], ["y"]),
             helper.make_node("Neg", ["y"], ["yn"]), helper.make_node("Identity", ["y"], ["y2"])]
    data = graph_model(nodes, {"x": (F, list(shape))}, {"y": (F, None), "yn": (F, None), "y2": (F, None)})
    want = np.array([oracle_one(m) for m in flat], np.float32).reshape(shape[:-2])
    for what, out in run_everywhere(data, {"x": x}):
        assert np.array_equal(bits(out["y"]), bits(want)), what
        assert np.array_equal(bits(out["y2"]), bits(want)), what
    finite = ~np.isnan(want)
    np.testing.assert_allclose(want[finite], np.linalg.det(x.astype(np.float64))[finite], rtol=1e-5,
                               atol=1e-6)
    clean = np.nan_to_num(x)
    got = ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(["y"], {"x": clean})[0]
    np.testing.assert_allclose(got, np.linalg.det(clean.astype(np.float64)), rtol=1e-4, atol=1e-5)
