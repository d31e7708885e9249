"""ONNX Pow of an integer base with a float32 exponent (docs/onnx.md): the
base rounded to float32, samebits.pow's float32 bits, then Cast's
conversion to the base's type (truncation toward zero; NaN and values out
of range give the type's minimum). Held to that composition of
samebits.pow and numpy's truncation, on an intermediate read twice, both
modes, every path, 1 and 2 threads; ONNX Runtime (which computes in
float64) agrees where the float32 result is an exact integer."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper  # noqa: E402

import samebits  # noqa: E402
from onnx_cases import graph_model, run_everywhere  # noqa: E402

F = TensorProto.FLOAT
TYPES = {np.int32: TensorProto.INT32, np.int64: TensorProto.INT64}   # ONNX's integer bases


def oracle(x, y, dtype):
    p = np.asarray(samebits.pow(x.astype(np.float32), y, mode="exact"), np.float32).astype(np.float64)
    info = np.iinfo(dtype)
    out = np.zeros(p.shape, dtype)
    for i, v in np.ndenumerate(p):
        t = np.trunc(v) if np.isfinite(v) else None
        if t is None or not (info.min <= t <= info.max):
            out[i] = info.min
        else:
            out[i] = dtype(t)
    return out


@pytest.mark.parametrize("dtype", list(TYPES))
def test_pow_of_an_integer_base(dtype):
    x = np.array([[1, 2, 3, 7], [-4, 5, 2, 9]], dtype)
    y = np.array([4.0, 0.5, -1.0, 10.0], np.float32)
    nodes = [helper.make_node("Identity", ["x"], ["xi"]), helper.make_node("Pow", ["xi", "y"], ["z"]),
             helper.make_node("Identity", ["z"], ["z2"])]
    t = TYPES[dtype]
    data = graph_model(nodes, {"x": (t, [2, 4]), "y": (F, [4])}, {"z": (t, None), "z2": (t, None)},
                       opset=15)
    want = oracle(x, y, dtype)
    for what, out in run_everywhere(data, {"x": x, "y": y}):
        assert out["z"].dtype == dtype and np.array_equal(out["z"], want), (what, out["z"], want)
        assert np.array_equal(out["z2"], want), what
    got = ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(["z"], {"x": x, "y": y})[0]
    exact_int = np.asarray(samebits.pow(x.astype(np.float32), y, mode="exact"))
    same = np.isfinite(exact_int) & (exact_int == np.trunc(exact_int)) & (np.abs(exact_int) < 2**24)
    assert np.array_equal(got[same], want[same])
