"""samebits.onnx's errors for bytes that are not a model and for models with
a missing input or a wrong feed type: a clear, named exception from
samebits.onnx.load and run (the C reader is checked field by field against
the onnx package in test_core_reader.py)."""
from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

import samebits.onnx as so  # noqa: E402
from samebits.onnx import DecodeError  # noqa: E402


@pytest.mark.parametrize("data,match", [
    (b"\x08", "varint runs past"),
    (b"\x3a\x05ab", "run past the end"),
    (b"\x0b", "wire type 3"),
    (b"\x08\x01", "no graph"),
    (b"\x00\x01", "field number 0"),
    (b"\x08" + b"\xff" * 11, "longer than 10 bytes"),
])
def test_malformed_bytes_raise_decode_error(data, match):
    with pytest.raises(DecodeError, match=match):
        so.load(data)


def test_decode_error_is_a_value_error():
    assert issubclass(DecodeError, ValueError)


@pytest.mark.parametrize("inputs", [["", "shape"], ["x", ""]])
def test_an_omitted_required_input_is_a_named_error(inputs):
    """A node whose required input is left empty: a ValueError naming the
    node and its operator, whether the node folds at load (its only other
    input is a constant) or runs (x is fed)."""
    shape = numpy_helper.from_array(np.array([2, 3], np.int64), "shape")
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [6])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])
    node = helper.make_node("Reshape", inputs, ["y"], name="reshape0")
    model = helper.make_model(helper.make_graph([node], "g", [x], [y], [shape]),
                              opset_imports=[helper.make_opsetid("", 17)])
    with pytest.raises(ValueError, match=r"node 0 'reshape0' \(Reshape\): a required input is "
                                         r"missing"):
        session = so.load(model.SerializeToString(), mode="exact")
        session.run({"x": np.arange(6, dtype=np.float32)})


def test_float64_feed_and_float_resize_sizes_are_named_errors():
    """A float64 feed gets the astype hint; Resize's sizes as float32 is a
    TypeError naming the input (was an AttributeError)."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 2, 3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    relu = helper.make_model(helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g",
                                               [x], [y]),
                             opset_imports=[helper.make_opsetid("", 17)])
    with pytest.raises(TypeError, match=r"input 'x': dtype float64 is not supported .*"
                                        r"the model wants float32\): convert with "
                                        r"\.astype\(np\.float32\)"):
        so.load(relu.SerializeToString()).run({"x": np.zeros((1, 1, 2, 3))})
    sizes = numpy_helper.from_array(np.array([1, 1, 4, 6], np.float32), "sizes")
    node = helper.make_node("Resize", ["x", "", "", "sizes"], ["y"], name="rs",
                            coordinate_transformation_mode="asymmetric", nearest_mode="floor")
    resize = helper.make_model(helper.make_graph([node], "g", [x], [y], [sizes]),
                               opset_imports=[helper.make_opsetid("", 13)])
    with pytest.raises(TypeError, match=r"'rs' \(Resize\): input sizes must be an integer "
                                        r"tensor, got float32"):
        so.load(resize.SerializeToString()).run({"x": np.zeros((1, 1, 2, 3), np.float32)})
