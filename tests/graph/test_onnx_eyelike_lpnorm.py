"""ONNX EyeLike and LpNormalization (docs/onnx.md). EyeLike: 1 where the
column minus the row is k, of `dtype`, exact. LpNormalization: per line
along the axis, s = the serial float32 sum of |x| (p=1) or of x * x (p=2,
then sqrt), y = x / s, +0 where s is 0; bit for bit against that loop in
numpy, on graph inputs, an intermediate (Neg) and two consumers, both
modes, every path, 1 and 2 threads; within 1e-6 of ONNX Runtime (onnx.reference
sums x, not |x|, for p=1: not an oracle there)."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("onnx")

from onnx import TensorProto, helper  # noqa: E402

import samebits.onnx as so  # noqa: E402
from onnx_cases import bits, model, run_everywhere, value  # noqa: E402

F = TensorProto.FLOAT


def lp_definition(x: np.ndarray, axis: int, p: int) -> np.ndarray:
    moved = np.moveaxis(x, axis, -1)
    y = np.empty_like(moved)
    for idx in np.ndindex(moved.shape[:-1]):
        line = moved[idx]
        s = np.float32(0)
        for v in line:
            s = np.float32(s + (np.abs(v) if p == 1 else np.float32(v * v)))
        norm = s if p == 1 else np.sqrt(s)
        y[idx] = 0 if norm == 0 else (line / norm).astype(np.float32)
    y = np.moveaxis(y, -1, axis)
    y[np.isnan(y)] = np.uint32(0x7FC00000).view(np.float32)
    return y


@pytest.mark.parametrize("p", [1, 2])
@pytest.mark.parametrize("axis", [-1, 0, 1])
def test_lp_normalization_is_its_definition(p, axis):
    ort = pytest.importorskip("onnxruntime")
    rng = np.random.default_rng(p * 10 + axis)
    x = rng.standard_normal((3, 4, 5)).astype(np.float32)
    x[0, :, 0] = 0.0                 # a zero line along axis 1
    x[1, 2, :] = 0.0                 # and along axis 2
    for place in ("inputs", "intermediate", "consumers"):
        nodes = [helper.make_node("Neg", ["x"], ["xn"])] if place == "intermediate" else []
        nodes.append(helper.make_node("LpNormalization", ["xn" if nodes else "x"], ["y"], axis=axis, p=p))
        outs = [value("y", F)]
        if place == "consumers":
            nodes += [helper.make_node("Identity", ["y"], ["c1"]), helper.make_node("Neg", ["y"], ["c2"])]
            outs += [value("c1", F), value("c2", F)]
        data = model(nodes, [value("x", F, x.shape)], outs, opset=13)
        want = lp_definition(-x if place == "intermediate" else x, axis, p)
        for what, out in run_everywhere(data, {"x": x}):
            assert np.array_equal(bits(out["y"]), bits(want)), (place, what)
            if place == "consumers":
                assert np.array_equal(bits(out["c1"]), bits(want)), what
        if place == "inputs":
            ref = ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
            finite = np.isfinite(ref)
            np.testing.assert_allclose(out["y"][finite], ref[finite], rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("k", [0, 1, -2, 7])
@pytest.mark.parametrize("dtype", [None, TensorProto.INT64, TensorProto.FLOAT, TensorProto.BOOL])
def test_eye_like(k, dtype):
    x = np.zeros((4, 6), np.int32)
    attrs = {"k": k} | ({"dtype": dtype} if dtype is not None else {})
    nodes = [helper.make_node("EyeLike", ["x"], ["y"], **attrs), helper.make_node("Identity", ["y"], ["c"])]
    out_type = dtype if dtype is not None else TensorProto.INT32
    data = model(nodes, [value("x", TensorProto.INT32, x.shape)], [value("y", out_type), value("c", out_type)],
                 opset=9)
    np_type = helper.tensor_dtype_to_np_dtype(out_type)
    want = np.eye(4, 6, k=k, dtype=np_type)
    for what, out in run_everywhere(data, {"x": x}):
        assert out["y"].dtype == np_type and np.array_equal(out["y"], want), what
        assert np.array_equal(out["c"], want), what


def test_errors():
    bad = model([helper.make_node("LpNormalization", ["x"], ["y"], p=3)], [value("x", F, [2, 3])],
                [value("y", F)], opset=13)
    with pytest.raises(so.UnsupportedModelError, match="p=3 is not supported"):
        so.load(bad).run({"x": np.ones((2, 3), np.float32)})
    bad = model([helper.make_node("EyeLike", ["x"], ["y"])], [value("x", F, [2, 3, 4])], [value("y", F)],
                opset=9)
    with pytest.raises(ValueError, match=r"input \(2, 3, 4\) is not 2-D"):
        so.load(bad).run({"x": np.ones((2, 3, 4), np.float32)})
