"""samebits.onnx's own protobuf reader, field by field against the onnx
package's parse of the same bytes: reference networks and hand-made models
with every attribute type, tensor storage form and value-info shape."""
from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from samebits.onnx import _model as M  # noqa: E402
from samebits.onnx import _values as V  # noqa: E402
from samebits.onnx import _wire  # noqa: E402
from samebits.onnx import DecodeError, reference  # noqa: E402


def _dims(shape_proto) -> tuple:
    out = []
    for d in shape_proto.dim:
        kind = d.WhichOneof("value")
        out.append(d.dim_value if kind == "dim_value" else d.dim_param if kind == "dim_param"
                   else None)
    return tuple(out)


def _check_value_info(mine: M.ValueInfo, theirs) -> None:
    assert mine.name == theirs.name
    tt = theirs.type.tensor_type
    assert mine.elem_type == (tt.elem_type or None)
    assert mine.shape == (_dims(tt.shape) if tt.HasField("shape") else None)


def _check_tensor(mine: M.Tensor, theirs) -> None:
    assert mine.name == theirs.name
    assert mine.dims == tuple(theirs.dims)
    assert mine.data_type == theirs.data_type
    assert (bytes(mine.raw_data) if mine.raw_data is not None else b"") == theirs.raw_data
    assert mine.float_data == pytest.approx(list(theirs.float_data), abs=0)
    assert mine.int32_data == list(theirs.int32_data)
    assert mine.int64_data == list(theirs.int64_data)
    assert mine.uint64_data == list(theirs.uint64_data)
    assert mine.double_data == list(theirs.double_data)
    assert mine.string_data == list(theirs.string_data)
    assert mine.external_data == {e.key: e.value for e in theirs.external_data}
    assert mine.data_location == theirs.data_location
    value = V.from_proto(mine, "test") if mine.data_type in (1, 6, 7, 9, 11) and \
        mine.data_location == 0 else None
    if value is not None:
        want = numpy_helper.to_array(theirs)
        if isinstance(value, V.Floats):
            got = np.frombuffer(V.float_bytes(value), np.float32).reshape(value.shape)
            assert np.array_equal(got.view(np.uint32), want.astype(np.float32).view(np.uint32))
        else:
            assert value.values == [int(v) for v in want.reshape(-1).tolist()]


def _check_attribute(mine: M.Attribute, theirs) -> None:
    assert mine.name == theirs.name and mine.type == theirs.type
    kind = theirs.type
    if kind == M.A_FLOAT:
        assert mine.value == np.float32(theirs.f)
    elif kind == M.A_INT:
        assert mine.value == theirs.i
    elif kind == M.A_STRING:
        assert mine.value == theirs.s
    elif kind == M.A_TENSOR:
        _check_tensor(mine.value, theirs.t)
    elif kind == M.A_GRAPH:
        _check_graph(mine.value, theirs.g)
    elif kind == M.A_FLOATS:
        assert mine.value == [float(np.float32(v)) for v in theirs.floats]
    elif kind == M.A_INTS:
        assert mine.value == list(theirs.ints)
    elif kind == M.A_STRINGS:
        assert mine.value == list(theirs.strings)
    elif kind == M.A_TENSORS:
        assert len(mine.value) == len(theirs.tensors)
        for a, b in zip(mine.value, theirs.tensors):
            _check_tensor(a, b)


def _check_graph(mine: M.Graph, theirs) -> None:
    assert mine.name == theirs.name
    assert len(mine.nodes) == len(theirs.node)
    for a, b in zip(mine.nodes, theirs.node):
        assert (a.op_type, a.domain, a.name) == (b.op_type, b.domain, b.name)
        assert a.inputs == list(b.input) and a.outputs == list(b.output)
        assert list(a.attributes) == [x.name for x in b.attribute]
        for x in b.attribute:
            _check_attribute(a.attributes[x.name], x)
    assert len(mine.initializers) == len(theirs.initializer)
    for a, b in zip(mine.initializers, theirs.initializer):
        _check_tensor(a, b)
    for group_mine, group_theirs in ((mine.inputs, theirs.input), (mine.outputs, theirs.output),
                                     (mine.value_info, theirs.value_info)):
        assert len(group_mine) == len(group_theirs)
        for a, b in zip(group_mine, group_theirs):
            _check_value_info(a, b)


def _check_model(data: bytes) -> None:
    theirs = onnx.load_from_string(data)
    mine = M.parse_model(data)
    assert mine.ir_version == theirs.ir_version
    assert mine.producer_name == theirs.producer_name
    assert mine.opset == {("" if o.domain == "ai.onnx" else o.domain): o.version
                          for o in theirs.opset_import}
    _check_graph(mine.graph, theirs.graph)


@pytest.mark.parametrize("name", ["mobilenet_v3_large", "minilm_l6"])
def test_reference_networks_parse_as_onnx_does(name):
    _check_model(reference.build(name))


def test_every_attribute_and_storage_form():
    sub = helper.make_graph([helper.make_node("Identity", ["a"], ["b"])], "sub",
                            [helper.make_tensor_value_info("a", TensorProto.FLOAT, [2])],
                            [helper.make_tensor_value_info("b", TensorProto.FLOAT, [2])])
    ints = helper.make_tensor("i64", TensorProto.INT64, [3], [-(2 ** 63), -1, 2 ** 63 - 1])
    i32 = helper.make_tensor("i32", TensorProto.INT32, [2, 2], [-5, 7, 2 ** 31 - 1, -(2 ** 31)])
    f32 = helper.make_tensor("f32", TensorProto.FLOAT, [3], [1.5, -0.0, float("inf")])
    raw = numpy_helper.from_array(np.array([[1.25, np.nan]], np.float32), "raw")
    dbl = helper.make_tensor("dbl", TensorProto.DOUBLE, [2], [0.1, -2.5])
    bools = helper.make_tensor("bools", TensorProto.BOOL, [2], [True, False])
    u8 = numpy_helper.from_array(np.array([0, 255, 7], np.uint8), "u8")
    ext = helper.make_tensor("ext", TensorProto.FLOAT, [2], [0.0, 0.0])
    ext.ClearField("float_data")
    ext.data_location = TensorProto.EXTERNAL
    for k, v in (("location", "weights.bin"), ("offset", "16"), ("length", "8")):
        entry = ext.external_data.add()
        entry.key, entry.value = k, v
    node = helper.make_node(
        "Custom", ["x", "", "y"], ["z", ""], name="n0", domain="my.domain",
        f=0.1, i=-7, s=b"text\xff", t=raw, g=sub, fs=[1.0, -2.5, 1e-40], is_=[-1, 0, 2 ** 40],
        ss=[b"a", b""], ts=[ints, f32])
    node.attribute[-3].name = "is"        # keyword 'is' is reserved in Python
    graph = helper.make_graph(
        [node], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, None, 5]),
         helper.make_tensor_value_info("y", TensorProto.INT64, [])],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, None)],
        [ints, i32, f32, raw, dbl, bools, u8, ext],
        value_info=[helper.make_tensor_value_info("w", TensorProto.BOOL, [1])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13),
                                                    helper.make_opsetid("my.domain", 2)],
                              producer_name="samebits-test")
    _check_model(model.SerializeToString())


def test_unpacked_repeated_fields_and_unknown_fields_are_read():
    # dims as separate varints (unpacked) and an unknown field 99, as older
    # writers and future versions may produce
    t = helper.make_tensor("t", TensorProto.FLOAT, [2, 1], [3.0, 4.0])
    packed = t.SerializeToString()
    mine = M.parse_tensor(memoryview(packed))
    assert mine.dims == (2, 1) and mine.float_data == [3.0, 4.0]
    unpacked = bytes([0x08, 2, 0x08, 1]) + bytes([0x10, 1]) + bytes([0x25]) + \
        np.float32(3.0).tobytes() + bytes([0x25]) + np.float32(4.0).tobytes() + \
        bytes([0x98, 0x06, 5])   # field 99, varint 5
    mine = M.parse_tensor(memoryview(unpacked))
    assert mine.dims == (2, 1) and mine.float_data == [3.0, 4.0] and mine.data_type == 1


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
        M.parse_model(data)


def test_decode_error_is_a_value_error():
    assert issubclass(DecodeError, ValueError)
    assert _wire.signed64(2 ** 64 - 1) == -1


@pytest.mark.parametrize("inputs", [["", "shape"], ["x", ""]])
def test_an_omitted_required_input_is_a_named_error(inputs):
    """A node whose required input is left empty: a ValueError naming the
    node and its operator, whether the node folds at load (its only other
    input is a constant) or runs (x is fed)."""
    import samebits.onnx as so
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
    import samebits.onnx as so
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
