"""ONNX Dropout with its mask output (inference: every element kept). The
output is the input's bits; the mask is all true: bool from opset 10, the
input's type holding 1 before (ONNX's T). onnx.reference is the oracle for
the values; ONNX Runtime gives a mask of zeros at opsets 7 to 10 (checked
below as a disagreement, not followed). Tested on a graph input, on an
intermediate value, with the mask feeding another node and both outputs as
graph outputs, in both modes on every path at 1 and 2 threads."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("onnx")

from onnx import TensorProto, helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

from onnx_cases import bits, model, run_everywhere, value  # noqa: E402

F, B = TensorProto.FLOAT, TensorProto.BOOL


def _model(opset: int, place: str) -> bytes:
    mask_type = B if opset >= 10 else F
    if place == "input":
        nodes = [helper.make_node("Dropout", ["x"], ["y", "mask"])]
        outs = [value("y", F), value("mask", mask_type)]
    else:   # on an intermediate; the mask also feeds a Cast -> Mul
        nodes = [helper.make_node("Neg", ["x"], ["t"]),
                 helper.make_node("Dropout", ["t"], ["y", "mask"]),
                 helper.make_node("Cast", ["mask"], ["mf"], to=F),
                 helper.make_node("Mul", ["y", "mf"], ["z"])]
        outs = [value("y", F), value("mask", mask_type), value("z", F)]
    return model(nodes, [value("x", F, [3, 5])], outs, opset=opset)


@pytest.mark.parametrize("opset", [7, 9, 10, 12, 13, 22])
@pytest.mark.parametrize("place", ["input", "intermediate"])
def test_dropout_mask_keeps_everything(opset, place):
    x = np.linspace(-3, 3, 15, dtype=np.float32).reshape(3, 5)
    x[0, 0] = -0.0
    data = _model(opset, place)
    ref = dict(zip(["y", "mask", "z"], ReferenceEvaluator(data).run(None, {"x": x})))
    want_y = -x if place == "intermediate" else x
    for what, out in run_everywhere(data, {"x": x}):
        assert np.array_equal(bits(out["y"]), bits(want_y)), what
        mask = out["mask"]
        assert mask.shape == x.shape, what
        if opset >= 10:
            assert mask.dtype == np.bool_ and mask.all(), what
        else:
            assert mask.dtype == np.float32 and np.array_equal(mask, np.ones_like(x)), what
        assert np.array_equal(mask.astype(bool), np.asarray(ref["mask"]).astype(bool)), what
        if place == "intermediate":
            assert np.array_equal(bits(out["z"]), bits(want_y * 1.0)), what


def test_onnx_runtime_drops_the_mask_before_opset_11():
    """ONNX Runtime's old Dropout kernels give zeros for the mask; samebits
    follows the operator's definition (and onnx.reference)."""
    ort = pytest.importorskip("onnxruntime")
    x = np.ones((3, 5), np.float32)
    got = ort.InferenceSession(_model(10, "input"), providers=["CPUExecutionProvider"]).run(None, {"x": x})
    assert not got[1].any()
