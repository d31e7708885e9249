"""ONNX Compress (docs/onnx.md): numpy.compress, bits untouched. With and
without an axis, a condition shorter than the axis, a constant condition
(planned) and a condition fed at run (its length known only then), on an
intermediate and feeding two consumers, both modes, every path, 1 and 2
threads; against numpy, ONNX Runtime and onnx.reference."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("onnx")

from onnx import TensorProto, helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

import samebits.onnx as so  # noqa: E402
from onnx_cases import bits, model, run_everywhere, value  # noqa: E402

F, B = TensorProto.FLOAT, TensorProto.BOOL


@pytest.mark.parametrize("axis", [None, 0, 1, -1])
@pytest.mark.parametrize("constant", [True, False])
def test_compress_is_numpy_compress(axis, constant):
    ort = pytest.importorskip("onnxruntime")
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 4, 5)).astype(np.float32)
    x.reshape(-1)[0] = np.uint32(0x7FC12345).view(np.float32)
    length = 3 if axis is None else x.shape[axis] - 1        # shorter than the axis
    cond = rng.integers(0, 2, length).astype(bool)
    cond[0] = True
    attrs = {} if axis is None else {"axis": axis}
    nodes = [helper.make_node("Neg", ["x"], ["xn"]), helper.make_node("Neg", ["xn"], ["xnn"]),
             helper.make_node("Compress", ["xnn", "c"], ["y"], **attrs),
             helper.make_node("Identity", ["y"], ["c1"]), helper.make_node("Neg", ["y"], ["c2"])]
    ins = [value("x", F, x.shape)] + ([] if constant else [value("c", B, [length])])
    inits = [helper.make_tensor("c", B, [length], cond.tolist())] if constant else []
    data = model(nodes, ins, [value("y", F), value("c1", F), value("c2", F)], inits, opset=11)
    feeds = {"x": x} | ({} if constant else {"c": cond})
    want = np.compress(cond, -(-x), axis=axis)
    for what, out in run_everywhere(data, feeds):
        assert out["y"].shape == want.shape, what
        assert np.array_equal(out["y"], want, equal_nan=True), what
        assert np.array_equal(out["c1"], out["y"], equal_nan=True), what
    for other in (ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(None, feeds)[0],
                  ReferenceEvaluator(data).run(None, feeds)[0]):
        assert np.array_equal(out["y"], other, equal_nan=True)


def test_bits_move_untouched_and_errors():
    x = np.array([1.0, -0.0, 3.0], np.float32)
    x[2] = np.uint32(0x7FC12345).view(np.float32)
    data = model([helper.make_node("Compress", ["x", "c"], ["y"])], [value("x", F, [3]), value("c", B, [3])],
                 [value("y", F)], opset=11)
    got = so.load(data).run({"x": x, "c": np.array([False, True, True])})["y"]
    assert bits(got).tolist() == [0x80000000, 0x7FC12345]
    data = model([helper.make_node("Compress", ["x", "c"], ["y"])], [value("x", F, [3]), value("c", B, None)],
                 [value("y", F)], opset=11)
    with pytest.raises(ValueError, match=r"condition \(4,\) is longer than the 3 elements"):
        so.load(data).run({"x": x, "c": np.ones(4, bool)})
