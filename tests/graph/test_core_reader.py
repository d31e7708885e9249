"""The C protobuf reader (csrc/graph/onnx_reader.c), field by field against
the onnx package's parse of the same bytes, as test_onnx_reader.py checks the
Python reader: reference networks, hand-made models with every attribute
type, tensor storage form and value-info shape, nested graphs, IR-version-1
attributes, repeated fields split over occurrences, merged messages, unknown
fields, rewrites of a model's wire form, and malformed bytes.

sb_onnx_describe (samebits.h, csrc/graph/onnx_describe.c) writes what the
reader holds as JSON; the expected JSON is built here from onnx's
ModelProto. Floats travel as bit patterns, bytes as hex, raw_data over
64 KiB as its length and 64-bit FNV-1a hash.

Where the two readers differ by design the tests say so: the C reader
refuses strings that are not UTF-8 or hold a NUL, a known field of the wrong
wire type, groups and a model without a graph (onnx accepts them all) and
graphs nested over 32 deep; it reads an attribute given only types outside
the enum as type -1 (onnx sets them aside as unknown fields, leaving the
type unset); and it skips the messages it does not read (sparse tensors,
type protos, function bodies, ...) without checking them."""
from __future__ import annotations

import ctypes
import json
import math
import random
import struct

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from google.protobuf import unknown_fields  # noqa: E402
from google.protobuf.descriptor import FieldDescriptor  # noqa: E402
from onnx import AttributeProto, TensorProto, TypeProto, helper, numpy_helper  # noqa: E402

from samebits._binding import lib as _lib  # noqa: E402
from samebits.onnx import reference  # noqa: E402

STATUS_DECODE = -4
RAW_HEX_MAX = 64 << 10
MAX_DEPTH = 32


# ---- the C side ------------------------------------------------------------------


def describe(data: bytes):
    """(0, the description) or (status, sb_last_error's message)."""
    text = ctypes.c_void_p()
    buf = ctypes.c_char_p(data)         # points into data, which outlives the call
    pointer = ctypes.cast(buf, ctypes.c_void_p) if data else None
    status = _lib.lib.sb_onnx_describe(pointer, len(data), ctypes.byref(text))
    if status:
        assert not text.value
        return status, _lib.lib.sb_last_error().decode()
    try:
        return 0, json.loads(ctypes.string_at(text.value).decode("utf-8"))
    finally:
        _lib.lib.sb_buffer_free(text)


# ---- the expected description, from onnx's parse ------------------------------------


def fnv1a64(data: bytes) -> int:
    h = 0xCBF29CE484222325
    for byte in data:
        h = ((h ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def _f32_bits(v: float) -> int:
    return struct.unpack("<I", struct.pack("<f", v))[0]


def _f64_bits(v: float) -> int:
    return struct.unpack("<Q", struct.pack("<d", v))[0]


def _read_varint(b: bytes, i: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        byte = b[i]
        i += 1
        result |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return result & 0xFFFFFFFFFFFFFFFF, i


def _exact_bits(msg, field: str, width: int):
    """A float (width 4) or double (8) field's bit patterns as onnx stores
    them. Python floats would quiet a signaling NaN, so a field holding a NaN
    is serialized again on its own and its bytes read."""
    values = getattr(msg, field)
    single = isinstance(values, float)
    if not any(math.isnan(v) for v in ([values] if single else values)):
        bits = _f32_bits if width == 4 else _f64_bits
        return bits(values) if single else [bits(v) for v in values]
    alone = type(msg)()
    alone.CopyFrom(msg)
    for fd, _ in alone.ListFields():
        if fd.name != field:
            alone.ClearField(fd.name)
    alone.DiscardUnknownFields()
    b, i, out = alone.SerializeToString(), 0, []
    while i < len(b):
        key, i = _read_varint(b, i)
        if key & 7 == 2:
            n, i = _read_varint(b, i)
            chunk, i = b[i:i + n], i + n
        else:
            chunk, i = b[i:i + width], i + width
        out += [int.from_bytes(chunk[k:k + width], "little") for k in range(0, len(chunk), width)]
    return out[0] if single else out


def expect_tensor(t) -> dict:
    d = {"name": t.name, "dims": list(t.dims), "data_type": t.data_type,
         "has_raw": int(t.HasField("raw_data")), "raw_size": len(t.raw_data)}
    if len(t.raw_data) <= RAW_HEX_MAX:
        d["raw_data"] = t.raw_data.hex()
    else:
        d["raw_fnv1a64"] = fnv1a64(t.raw_data)
    d.update(float_data=_exact_bits(t, "float_data", 4), int32_data=list(t.int32_data),
             int64_data=list(t.int64_data), uint64_data=list(t.uint64_data),
             double_data=_exact_bits(t, "double_data", 8), string_count=len(t.string_data),
             external_data=[[e.key, e.value] for e in t.external_data],
             data_location=t.data_location, has_segment=int(t.HasField("segment")))
    return d


_KINDS = {"tensor_type": "tensor", "sequence_type": "sequence", "map_type": "map",
          "opaque_type": "opaque", "sparse_tensor_type": "sparse tensor",
          "optional_type": "optional", None: "tensor"}


def expect_value_info(v) -> dict:
    case = v.type.WhichOneof("value")
    tt = v.type.tensor_type
    has_shape = case == "tensor_type" and tt.HasField("shape")
    dims, params = [], []
    for dim in tt.shape.dim if has_shape else ():
        which = dim.WhichOneof("value")
        dims.append(dim.dim_value if which == "dim_value" and dim.dim_value >= 0 else -1)
        params.append(dim.dim_param if which == "dim_param" else None)
    return {"name": v.name, "elem_type": tt.elem_type if case == "tensor_type" else 0,
            "kind": _KINDS[case], "has_shape": int(has_shape), "dims": dims, "dim_params": params}


_SINGLE_KINDS = {"f": 1, "i": 2, "s": 3, "t": 4, "g": 5, "sparse_tensor": 11, "tp": 13}
_LIST_KINDS = {"floats": 6, "ints": 7, "strings": 8, "tensors": 9, "graphs": 10,
               "sparse_tensors": 12, "type_protos": 14}


def expect_attribute_type(a) -> int:
    """The declared type; an IR version 1 attribute's (no type) is the one
    value field it sets, or 0. Types outside the enum, which onnx sets
    aside as unknown fields, read as -1 in C when no known one is given."""
    if a.type:
        return a.type
    if not a.HasField("type") and any(u.field_number == 20
                                      for u in unknown_fields.UnknownFieldSet(a)):
        return -1
    present = [k for f, k in _SINGLE_KINDS.items() if a.HasField(f)] + \
        [k for f, k in _LIST_KINDS.items() if len(getattr(a, f))]
    return present[0] if len(present) == 1 else 0


def expect_attribute(a) -> dict:
    return {"name": a.name, "type": expect_attribute_type(a), "f": _exact_bits(a, "f", 4),
            "i": a.i, "s": a.s.hex(), "t": expect_tensor(a.t) if a.HasField("t") else None,
            "g": expect_graph(a.g) if a.HasField("g") else None,
            "floats": _exact_bits(a, "floats", 4), "ints": list(a.ints),
            "strings": [s.hex() for s in a.strings], "tensors": [expect_tensor(t) for t in a.tensors],
            "graphs": [expect_graph(g) for g in a.graphs],
            "ref_attr_name": a.ref_attr_name if a.HasField("ref_attr_name") else None}


def expect_graph(g) -> dict:
    return {"name": g.name,
            "nodes": [{"op_type": n.op_type, "domain": n.domain, "name": n.name,
                       "inputs": list(n.input), "outputs": list(n.output),
                       "attributes": [expect_attribute(a) for a in n.attribute]} for n in g.node],
            "initializers": [expect_tensor(t) for t in g.initializer],
            "inputs": [expect_value_info(v) for v in g.input],
            "outputs": [expect_value_info(v) for v in g.output],
            "value_info": [expect_value_info(v) for v in g.value_info],
            "sparse_initializer_count": len(g.sparse_initializer)}


def expect_model(m) -> dict:
    return {"ir_version": m.ir_version, "producer_name": m.producer_name,
            "producer_version": m.producer_version,
            "opset_import": [[o.domain, o.version] for o in m.opset_import],
            "functions": [f.name for f in m.functions], "graph": expect_graph(m.graph)}


def differences(mine, theirs, path: str = "model") -> list[str]:
    if type(mine) is not type(theirs):
        return [f"{path}: C {mine!r}, onnx {theirs!r}"]
    if isinstance(mine, dict):
        out = []
        for k in sorted(set(mine) | set(theirs)):
            if k not in mine or k not in theirs:
                out.append(f"{path}.{k}: only in {'C' if k in mine else 'onnx'}")
            else:
                out += differences(mine[k], theirs[k], f"{path}.{k}")
        return out
    if isinstance(mine, list):
        if len(mine) != len(theirs):
            return [f"{path}: C has {len(mine)} entries, onnx {len(theirs)}"]
        return [d for i, (a, b) in enumerate(zip(mine, theirs))
                for d in differences(a, b, f"{path}[{i}]")]
    return [] if mine == theirs else [f"{path}: C {mine!r}, onnx {theirs!r}"]


def check(data: bytes) -> dict:
    """Both readers accept the bytes and agree on every field; the C side's
    description."""
    theirs = onnx.load_from_string(data)
    status, mine = describe(data)
    assert status == 0, mine
    found = differences(mine, expect_model(theirs))
    assert not found, "\n".join(found[:30])
    return mine


# ---- the wire format by hand ----------------------------------------------------------


def varint(v: int) -> bytes:
    v &= (1 << 64) - 1
    out = bytearray()
    while True:
        byte, v = v & 0x7F, v >> 7
        out.append(byte | (0x80 if v else 0))
        if not v:
            return bytes(out)


def key(number: int, wire: int) -> bytes:
    return varint(number << 3 | wire)


def ld(number: int, payload: bytes) -> bytes:          # wire type 2
    return key(number, 2) + varint(len(payload)) + payload


def vi(number: int, value: int) -> bytes:               # wire type 0
    return key(number, 0) + varint(value)


def fx32(number: int, bits: int) -> bytes:              # wire type 5
    return key(number, 5) + bits.to_bytes(4, "little")


def fx64(number: int, bits: int) -> bytes:              # wire type 1
    return key(number, 1) + bits.to_bytes(8, "little")


def f32(v: float) -> int:
    return _f32_bits(v)


def packed_f32(*bits: int) -> bytes:
    return b"".join(b.to_bytes(4, "little") for b in bits)


def packed_varints(*values: int) -> bytes:
    return b"".join(varint(v) for v in values)


def relu_node(x: bytes = b"x", y: bytes = b"y") -> bytes:
    return ld(1, x) + ld(2, y) + ld(4, b"Relu")


def wire_model(graph: bytes, before: bytes = b"", after: bytes = b"") -> bytes:
    """ModelProto: ir_version 8, the graph, opset 17."""
    return vi(1, 8) + before + ld(7, graph) + ld(8, vi(2, 17)) + after


def wire_graph(*nodes: bytes, rest: bytes = b"") -> bytes:
    return b"".join(ld(1, n) for n in nodes) + ld(2, b"g") + rest


def with_attribute(attr: bytes) -> bytes:
    return wire_model(wire_graph(relu_node() + ld(5, attr)))


def with_initializer(tensor: bytes) -> bytes:
    return wire_model(wire_graph(relu_node(), rest=ld(5, tensor)))


def with_input(value_info: bytes) -> bytes:
    return wire_model(wire_graph(relu_node(), rest=ld(11, value_info)))


def nested(depth: int) -> bytes:
    """Graphs nested `depth` deep in If branches below the main graph,
    written by hand as tools/make_fuzz_seeds.py does."""
    graph = ld(1, relu_node()) + ld(2, b"inner")
    for _ in range(depth):
        attr = ld(1, b"then_branch") + vi(20, AttributeProto.GRAPH) + ld(6, graph)
        graph = ld(1, ld(1, b"c") + ld(2, b"y") + ld(4, b"If") + ld(5, attr)) + ld(2, b"g")
    return wire_model(graph)


# ---- hand-made models ----------------------------------------------------------------


def _sub_graph(name: str, inner=None) -> onnx.GraphProto:
    nodes = [helper.make_node("Identity", ["a"], ["b"], name=f"{name}_id")]
    if inner is not None:
        nodes.append(helper.make_node("If", ["c"], ["d"], then_branch=inner, else_branch=inner))
    return helper.make_graph(
        nodes, name, [helper.make_tensor_value_info("a", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("b", TensorProto.FLOAT, ["K"])],
        [numpy_helper.from_array(np.array([1.5, -2.0], np.float32), f"{name}_w")],
        value_info=[helper.make_tensor_value_info("t", TensorProto.INT64, [None])])


def _nan32(bits: int) -> float:
    """A float32 NaN with the given (quiet) bits, as a Python float."""
    return float(np.frombuffer(bits.to_bytes(4, "little"), np.float32)[0])


def storage_tensors() -> list[TensorProto]:
    """Every way a TensorProto holds its values."""
    T = TensorProto
    out = [
        numpy_helper.from_array(np.array([[1.25, np.nan], [-0.0, 3e38]], np.float32), "raw_f32"),
        numpy_helper.from_array(np.arange(6, dtype=np.int64).reshape(2, 3), "raw_i64"),
        numpy_helper.from_array(np.array([1, 0, 1], np.bool_), "raw_bool"),
        numpy_helper.from_array(np.array([1.5, -2.25], np.float16), "raw_f16"),
        numpy_helper.from_array(np.array(7.0, np.float32), "raw_scalar"),
        numpy_helper.from_array(np.zeros((0, 3), np.float32), "raw_empty"),
        helper.make_tensor("float_data", T.FLOAT, [4], [1.5, -0.0, float("inf"), _nan32(0x7FC12345)]),
        helper.make_tensor("int32", T.INT32, [2, 2], [-5, 7, 2 ** 31 - 1, -(2 ** 31)]),
        helper.make_tensor("int8", T.INT8, [3], [-128, 0, 127]),
        helper.make_tensor("int16", T.INT16, [2], [-32768, 32767]),
        helper.make_tensor("uint8", T.UINT8, [3], [0, 255, 7]),
        helper.make_tensor("uint16", T.UINT16, [2], [0, 65535]),
        helper.make_tensor("bool", T.BOOL, [2], [True, False]),
        helper.make_tensor("float16", T.FLOAT16, [3], [1.0, -65504.0, float("inf")]),
        helper.make_tensor("bfloat16", T.BFLOAT16, [2], [1.0, -3.0]),
        helper.make_tensor("int64", T.INT64, [3], [-(2 ** 63), -1, 2 ** 63 - 1]),
        helper.make_tensor("uint32", T.UINT32, [2], [0, 2 ** 32 - 1]),
        helper.make_tensor("uint64", T.UINT64, [3], [0, 2 ** 63, 2 ** 64 - 1]),
        helper.make_tensor("double", T.DOUBLE, [3], [0.1, -2.5, float("-inf")]),
        helper.make_tensor("complex64", T.COMPLEX64, [1], [1 + 2j]),
        helper.make_tensor("complex128", T.COMPLEX128, [1], [3 - 4j]),
        helper.make_tensor("strings", T.STRING, [3], [b"ab", b"", b"\xff\x00"]),
    ]
    ext = helper.make_tensor("external", T.FLOAT, [2], [0.0, 0.0])
    ext.ClearField("float_data")
    ext.data_location = T.EXTERNAL
    for k, v in (("location", "weights.bin"), ("offset", "16"), ("length", "8"),
                 ("checksum", "abc"), ("", "")):
        entry = ext.external_data.add()
        entry.key, entry.value = k, v
    out.append(ext)
    listed = helper.make_tensor("external_listed_default", T.FLOAT, [1], [2.0])
    entry = listed.external_data.add()
    entry.key, entry.value = "location", "élan.bin"
    out.append(listed)
    seg = helper.make_tensor("segment", T.FLOAT, [1], [1.0])
    seg.segment.begin, seg.segment.end = 1, 2
    seg.doc_string = "not read"
    seg.metadata_props.add(key="k", value="v")
    out.append(seg)
    empty_raw = TensorProto(name="empty_raw", data_type=T.FLOAT, dims=[0], raw_data=b"")
    out.append(empty_raw)
    nameless = TensorProto(data_type=T.INT64, dims=[1, 0, 2 ** 40])
    out.append(nameless)
    for size in (RAW_HEX_MAX, RAW_HEX_MAX + 1):     # hex at 64 KiB, the hash above
        raw = random.Random(size).randbytes(size)
        out.append(TensorProto(name=f"raw_{size}", data_type=T.UINT8, dims=[size], raw_data=raw))
    return out


def _storage(name: str) -> TensorProto:
    return next(t for t in storage_tensors() if t.name == name)


def all_attributes() -> list[AttributeProto]:
    """One attribute of every type, and special values."""
    sub = _sub_graph("sub")
    sparse = helper.make_sparse_tensor(
        helper.make_tensor("values", TensorProto.FLOAT, [2], [1.0, 2.0]),
        helper.make_tensor("indices", TensorProto.INT64, [2], [0, 3]), [4])
    tp = helper.make_tensor_type_proto(TensorProto.FLOAT, [2, "n"])
    attrs = [
        helper.make_attribute("f", 0.1), helper.make_attribute("f_neg0", -0.0),
        helper.make_attribute("f_nan", _nan32(0x7FC0BEEF)), helper.make_attribute("f_tiny", 1e-45),
        helper.make_attribute("i", -7), helper.make_attribute("i_max", 2 ** 63 - 1),
        helper.make_attribute("i_min", -(2 ** 63)),
        helper.make_attribute("s", b"text\xff\x00"), helper.make_attribute("s_empty", b""),
        helper.make_attribute("t", _storage("raw_f32")),
        helper.make_attribute("t_strings", _storage("strings")),
        helper.make_attribute("g", sub),
        helper.make_attribute("floats", [1.0, -2.5, 1e-40, float("inf"), -0.0, _nan32(0x7FC00001)]),
        helper.make_attribute("ints", [-1, 0, 2 ** 40, -(2 ** 63), 2 ** 63 - 1]),
        helper.make_attribute("strings", [b"a", b"", b"\xff"]),
        helper.make_attribute("tensors", [_storage(n) for n in ("float_data", "int32", "int8")]),
        helper.make_attribute("graphs", [sub, _sub_graph("other")]),
        helper.make_attribute("sparse_tensor", sparse),
        helper.make_attribute("sparse_tensors", [sparse, sparse]),
        helper.make_attribute("tp", tp),
        helper.make_attribute("type_protos", [tp, helper.make_sequence_type_proto(tp)]),
        helper.make_attribute_ref("ref", AttributeProto.FLOAT, doc_string="a reference"),
        helper.make_attribute("doc", 3, doc_string="documented"),
        helper.make_attribute("ü", "naïve ☃"),
    ]
    for kind in ("floats", "ints", "strings", "tensors", "graphs"):     # typed, empty
        attrs.append(helper.make_attribute(f"empty_{kind}", [],
                                           attr_type=getattr(AttributeProto, kind.upper())))
    return attrs


def all_value_infos() -> list[onnx.ValueInfoProto]:
    T = TensorProto
    out = [
        helper.make_tensor_value_info("symbolic", T.FLOAT, ["N", 3, None, 0, 2 ** 40]),
        helper.make_tensor_value_info("scalar", T.INT64, []),
        helper.make_tensor_value_info("rank_unknown", T.BOOL, None),
        helper.make_tensor_value_info("no_elem_type", T.UNDEFINED, [2]),
        helper.make_tensor_sequence_value_info("sequence", T.FLOAT, [2]),
        helper.make_value_info("map", helper.make_map_type_proto(
            T.INT64, helper.make_tensor_type_proto(T.FLOAT, [1]))),
        helper.make_value_info("optional", helper.make_optional_type_proto(
            helper.make_tensor_type_proto(T.FLOAT, [1]))),
        helper.make_sparse_tensor_value_info("sparse", T.FLOAT, [4, 4]),
        onnx.ValueInfoProto(name="bare"),
        onnx.ValueInfoProto(),
    ]
    opaque = onnx.ValueInfoProto(name="opaque")
    opaque.type.opaque_type.domain, opaque.type.opaque_type.name = "d", "o"
    out.append(opaque)
    negative = helper.make_tensor_value_info("negative", T.FLOAT, [1, 2])
    negative.type.tensor_type.shape.dim[0].dim_value = -5       # unknown, as -1
    negative.type.tensor_type.shape.dim[1].denotation = "DATA_BATCH"
    negative.type.denotation = "TENSOR"
    negative.doc_string = "not read"
    out.append(negative)
    dim_nothing = helper.make_tensor_value_info("dim_nothing", T.FLOAT, [1])
    dim_nothing.type.tensor_type.shape.dim[0].Clear()
    out.append(dim_nothing)
    return out


def rich_model(big: bool = True) -> onnx.ModelProto:
    """Everything the reader reads, in one model (without the tensors over
    64 KiB unless big)."""
    sub = _sub_graph("sub", _sub_graph("sub2", _sub_graph("sub3")))
    loop = helper.make_node("Loop", ["n", "cond", "v"], ["v_out"], name="loop", body=sub)
    custom = helper.make_node("Custom", ["x", "", "y"], ["z", ""], name="n0", domain="my.domain")
    custom.attribute.extend(all_attributes())
    constant = helper.make_node("Constant", [], ["c"], value=_storage("float_data"))
    graph = helper.make_graph(
        [custom, loop, constant, helper.make_node("Relu", ["z"], ["w"])], "main",
        all_value_infos()[:4], all_value_infos()[4:8],
        [t for t in storage_tensors() if big or len(t.raw_data) < RAW_HEX_MAX],
        value_info=all_value_infos()[8:],
        sparse_initializer=[helper.make_sparse_tensor(
            helper.make_tensor("sv", TensorProto.FLOAT, [1], [1.0]),
            helper.make_tensor("si", TensorProto.INT64, [1], [0]), [2])])
    graph.doc_string = "not read"
    fn = helper.make_function("my.domain", "MyFn", ["a"], ["b"],
                              [helper.make_node("Relu", ["a"], ["b"])],
                              [helper.make_opsetid("", 17)])
    model = helper.make_model(graph, producer_name="samebits-test", producer_version="1.2",
                              opset_imports=[helper.make_opsetid("", 17),
                                             helper.make_opsetid("ai.onnx", 16),
                                             helper.make_opsetid("my.domain", 2)],
                              functions=[fn, helper.make_function(
                                  "my.domain", "Other", [], [], [], [])])
    model.doc_string, model.domain, model.model_version = "not read", "test", 3
    model.metadata_props.add(key="k", value="v")
    model.training_info.add().algorithm.CopyFrom(helper.make_graph([], "train", [], []))
    return model


# ---- the reference networks ------------------------------------------------------------

# Building bert_base and whisper_small_encoder is slow; these are those that
# build in about a second.
NETWORKS = ["resnet50", "mobilenet_v3_large", "minilm_l6", *sorted(reference.SMALL_NETWORKS)]


@pytest.mark.parametrize("name", NETWORKS)
def test_reference_networks_read_as_onnx_reads_them(name):
    mine = check(reference.build(name))
    sizes = [t["raw_size"] for t in mine["graph"]["initializers"]]
    assert sizes and sum(sizes) > 0
    if name == "resnet50":     # both forms of raw_data, the hash and the hex
        assert any("raw_fnv1a64" in t for t in mine["graph"]["initializers"])
        assert any("raw_data" in t and t["raw_size"] for t in mine["graph"]["initializers"])


# ---- hand-made models ---------------------------------------------------------------


def test_rich_model():
    mine = check(rich_model().SerializeToString())
    attrs = {a["name"]: a for a in mine["graph"]["nodes"][0]["attributes"]}
    assert set(range(1, 15)) <= {a["type"] for a in attrs.values()}     # every type
    assert attrs["ref"]["ref_attr_name"] == "ref"
    assert attrs["f_nan"]["f"] == 0x7FC0BEEF
    assert mine["graph"]["nodes"][1]["attributes"][0]["g"]["nodes"][1]["attributes"][0]["g"][
        "nodes"][1]["attributes"][0]["g"]["name"] == "sub3"
    assert mine["functions"] == ["MyFn", "Other"]
    kinds = {v["name"]: v["kind"] for g in ("inputs", "outputs", "value_info")
             for v in mine["graph"][g]}
    assert {"tensor", "sequence", "map", "optional", "sparse tensor", "opaque"} == set(kinds.values())


@pytest.mark.parametrize("index", range(len(storage_tensors())),
                         ids=[t.name or "nameless" for t in storage_tensors()])
def test_every_tensor_storage_form(index):
    t = storage_tensors()[index]
    model = helper.make_model(helper.make_graph(
        [helper.make_node("Constant", [], ["c"], value=t),
         helper.make_node("Custom", [], ["d"], ts=[t, t])], "g", [], [], [t]))
    mine = check(model.SerializeToString())
    assert mine["graph"]["initializers"][0] == mine["graph"]["nodes"][0]["attributes"][0]["t"]


@pytest.mark.parametrize("attr", all_attributes(), ids=lambda a: a.name)
def test_every_attribute_type(attr):
    check(with_attribute(attr.SerializeToString()))


@pytest.mark.parametrize("info", all_value_infos(), ids=lambda v: v.name or "nameless")
def test_every_value_info_shape(info):
    model = helper.make_model(helper.make_graph([], "g", [info], [info], value_info=[info]))
    check(model.SerializeToString())


def test_graphs_nested_32_deep_are_read():
    mine = check(nested(MAX_DEPTH))
    g, depth = mine["graph"], 0
    while g["nodes"][0]["op_type"] == "If":
        g, depth = g["nodes"][0]["attributes"][0]["g"], depth + 1
    assert depth == MAX_DEPTH and g["name"] == "inner"


def _untyped(**kw) -> bytes:
    a = helper.make_attribute("a", **kw) if kw else AttributeProto(name="a")
    a.ClearField("type")
    return a.SerializeToString()


_UNTYPED = [
    (_untyped(value=1.5), AttributeProto.FLOAT),
    (_untyped(value=0.0), AttributeProto.FLOAT),        # present, though zero
    (_untyped(value=3), AttributeProto.INT),
    (_untyped(value=0), AttributeProto.INT),
    (_untyped(value=b"s"), AttributeProto.STRING),
    (_untyped(value=b""), AttributeProto.STRING),
    (_untyped(value=_storage("int32")), AttributeProto.TENSOR),
    (_untyped(value=_sub_graph("s")), AttributeProto.GRAPH),
    (_untyped(value=[1.0, 2.0]), AttributeProto.FLOATS),
    (_untyped(value=[1, 2]), AttributeProto.INTS),
    (_untyped(value=[b"x"]), AttributeProto.STRINGS),
    (_untyped(value=[_storage("float_data"), _storage("int32")]), AttributeProto.TENSORS),
    (_untyped(value=[_sub_graph("s")]), AttributeProto.GRAPHS),
    (_untyped(value=helper.make_tensor_type_proto(1, [1])), AttributeProto.TYPE_PROTO),
    (_untyped(), AttributeProto.UNDEFINED),                        # no value at all
    (ld(1, b"a") + fx32(2, f32(1.0)) + vi(3, 2), AttributeProto.UNDEFINED),   # two values
    (ld(1, b"a") + vi(20, 0) + vi(3, 2), AttributeProto.INT),      # type 0 given: inferred
    (ld(1, b"a") + vi(20, 2 ** 32 + 2) + vi(3, 2), AttributeProto.INT),  # an enum's low 32 bits
    (ld(1, b"a") + vi(20, 3) + vi(20, 2) + vi(3, 2), AttributeProto.INT),   # the last wins
]


@pytest.mark.parametrize("attr,kind", _UNTYPED,
                         ids=[f"{i}-{AttributeProto.AttributeType.Name(k)}"
                              for i, (_, k) in enumerate(_UNTYPED)])
def test_ir_version_1_attributes_get_their_type_from_their_value(attr, kind):
    mine = check(with_attribute(attr))
    assert mine["graph"]["nodes"][0]["attributes"][0]["type"] == kind


@pytest.mark.parametrize("types,kind", [
    ([99], -1), ([-3], -1), ([2 ** 31], -1), ([15], -1), ([99, 15], -1),
    ([2, 99], AttributeProto.INT), ([99, 2], AttributeProto.INT), ([99, 0], AttributeProto.INT),
])
def test_an_attribute_type_outside_the_enum_is_set_aside(types, kind):
    """onnx sets a type outside the enum aside as an unknown field (a known
    one given too stays); the C reader does the same, and reads an attribute
    given only unknown types as type -1, which no kind matches."""
    data = with_attribute(ld(1, b"a") + b"".join(vi(20, t) for t in types) + vi(3, 2))
    mine = check(data)
    assert mine["graph"]["nodes"][0]["attributes"][0]["type"] == kind


def test_repeated_numbers_split_over_packed_and_unpacked_occurrences():
    snan, qnan = 0x7F812345, 0x7FC54321            # a signaling NaN's bits survive
    tensor = (vi(1, 2) + ld(1, packed_varints(3, 4)) + vi(1, 5) + vi(2, 1) +
              ld(4, packed_f32(f32(1.0), snan)) + fx32(4, qnan) + ld(4, packed_f32(f32(-0.0))) +
              ld(5, packed_varints(1, 2 ** 64 - 1)) + vi(5, 2 ** 32 + 7) + ld(5, b"") +
              vi(7, 2 ** 63) + ld(7, packed_varints(1, 2)) +
              ld(10, (0x7FF0000000000001).to_bytes(8, "little")) + fx64(10, _f64_bits(0.5)) +
              ld(11, packed_varints(2 ** 64 - 1)) + vi(11, 3) +
              ld(6, b"a") + ld(8, b"t") + ld(6, b"b"))
    attr = (ld(1, b"a") + fx32(7, snan) + ld(7, packed_f32(f32(2.0), f32(3.0))) + fx32(7, 1) +
            ld(9, b"x") + vi(8, 2 ** 64 - 1) + ld(8, packed_varints(5, 6)) + vi(8, 7) +
            ld(9, b"") + ld(10, tensor) + vi(20, AttributeProto.INTS) + ld(10, tensor))
    node = (ld(1, b"x") + ld(4, b"Custom") + ld(2, b"y") + ld(5, attr) + ld(1, b"") +
            ld(2, b"z") + ld(5, attr) + ld(1, b"w") + ld(7, b"d"))
    graph = (ld(5, tensor) + ld(1, node) + ld(11, ld(1, b"x")) + ld(5, tensor) +
             ld(1, relu_node()) + ld(12, ld(1, b"y")) + ld(2, b"g") + ld(11, ld(1, b"w")))
    data = ld(8, ld(1, b"a") + vi(2, 1)) + wire_model(graph, after=ld(8, vi(2, 3)))
    mine = check(data)
    t = mine["graph"]["initializers"][0]
    assert t["dims"] == [2, 3, 4, 5] and t["float_data"] == [f32(1.0), snan, qnan, f32(-0.0)]
    assert t["int32_data"] == [1, -1, 7] and t["uint64_data"] == [2 ** 64 - 1, 3]
    assert mine["graph"]["nodes"][0]["attributes"][0]["ints"] == [-1, 5, 6, 7]
    assert len(mine["opset_import"]) == 3


def test_repeated_scalars_the_last_wins():
    tensor = vi(2, 1) + ld(8, b"first") + vi(2, 7) + ld(8, b"second") + ld(9, b"ab") + ld(9, b"c")
    node = (ld(3, b"n1") + ld(4, b"Relu") + ld(3, b"n2") + ld(4, b"Custom") + ld(7, b"a") +
            ld(7, b""))
    dims = ld(1, vi(1, 3) + ld(2, b"N") + ld(2, b"M") + vi(1, 4)) + \
        ld(1, ld(2, b"P") + vi(1, 2) + ld(2, b"Q"))
    info = ld(1, b"v1") + ld(2, ld(1, vi(1, 1) + vi(1, 7) + ld(2, dims))) + ld(1, b"v2")
    attr = (ld(1, b"a") + fx32(2, f32(1.0)) + fx32(2, f32(2.0)) + vi(3, 1) + vi(3, 2) +
            ld(4, b"s1") + ld(4, b"s2") + ld(21, b"r1") + ld(21, b"r2") + ld(1, b"b"))
    graph = ld(1, node + ld(5, attr)) + ld(2, b"g1") + ld(5, tensor) + ld(11, info) + ld(2, b"g2")
    data = (vi(1, 3) + ld(2, b"p1") + ld(3, b"v1") + wire_model(graph) + vi(1, 9) +
            ld(2, b"p2") + ld(3, b"v2"))
    mine = check(data)
    assert mine["ir_version"] == 9 and mine["graph"]["name"] == "g2"
    info = mine["graph"]["inputs"][0]
    assert info["name"] == "v2" and info["elem_type"] == 7
    assert info["dims"] == [4, -1] and info["dim_params"] == [None, "Q"]


def test_a_message_that_occurs_twice_is_merged():
    """protobuf merges a singular message field given more than once: a
    graph, an attribute's tensor and graph, a value's type, its tensor type
    and shape (the dimensions joined)."""
    graph_a = ld(1, relu_node(b"x", b"y")) + ld(2, b"first") + ld(5, vi(1, 2) + vi(2, 1))
    graph_b = ld(1, relu_node(b"y", b"z")) + ld(2, b"second") + ld(11, ld(1, b"x"))
    tensor_a = vi(1, 2) + vi(2, 1) + ld(8, b"t")
    tensor_b = vi(1, 3) + ld(4, packed_f32(f32(1.0), f32(2.0))) + ld(9, b"raw")
    attr_t = ld(1, b"t") + ld(5, tensor_a) + vi(20, AttributeProto.TENSOR) + ld(5, tensor_b)
    attr_g = ld(1, b"g") + ld(6, graph_a) + vi(20, AttributeProto.GRAPH) + ld(6, graph_b)
    shape_a, shape_b = ld(1, vi(1, 1)), ld(1, ld(2, b"N")) + ld(1, vi(1, 3))
    two_shapes = ld(1, b"a") + ld(2, ld(1, vi(1, 1) + ld(2, shape_a) + ld(2, shape_b)))
    two_tensor_types = ld(1, b"b") + ld(2, ld(1, vi(1, 1) + ld(2, shape_a)) +
                                        ld(1, ld(2, shape_b)))
    two_types = ld(1, b"c") + ld(2, ld(1, vi(1, 1) + ld(2, shape_a))) + \
        ld(2, ld(1, vi(1, 7) + ld(2, shape_b)))
    long_shape = ld(1, vi(1, 5)) * 3000                     # grows past an arena block
    big = ld(1, b"d") + ld(2, ld(1, ld(2, shape_a))) + ld(2, ld(1, ld(2, long_shape)))
    graph = (ld(1, relu_node() + ld(5, attr_t) + ld(5, attr_g)) + ld(2, b"g") +
             ld(11, two_shapes) + ld(11, two_tensor_types) + ld(11, two_types) + ld(12, big))
    data = wire_model(graph, after=ld(7, ld(1, relu_node(b"w", b"v")) + ld(2, b"g2")))
    mine = check(data)
    g = mine["graph"]
    assert g["name"] == "g2" and len(g["nodes"]) == 2
    assert [v["dims"] for v in g["inputs"]] == [[1, -1, 3]] * 3
    assert g["outputs"][0]["dims"] == [1] + [5] * 3000
    attrs = g["nodes"][0]["attributes"]
    assert attrs[0]["t"]["dims"] == [2, 3] and attrs[0]["t"]["raw_data"] == b"raw".hex()
    assert [n["op_type"] for n in attrs[1]["g"]["nodes"]] == ["Relu", "Relu"]


@pytest.mark.parametrize("cases", [
    [ld(1, vi(1, 1) + ld(2, ld(1, vi(1, 2)))), ld(4, ld(1, ld(1, vi(1, 1))))],   # tensor, sequence
    [ld(4, b""), ld(1, vi(1, 1) + ld(2, ld(1, vi(1, 2))))],                        # sequence, tensor
    [ld(1, vi(1, 1)), ld(4, b""), ld(1, ld(2, ld(1, vi(1, 4))))],                 # cleared between
    [ld(1, vi(1, 1) + ld(2, b"")), ld(7, ld(1, b"d"))],                           # opaque
    [ld(5, vi(1, 7)), ld(8, vi(1, 1)), ld(9, b"")],                               # the last: optional
    [ld(1, vi(1, 1)), ld(6, b"DENOTATION"), ld(1, vi(1, 3))],                     # denotation is no case
], ids=["tensor-sequence", "sequence-tensor", "tensor-sequence-tensor", "tensor-opaque",
        "map-sparse-optional", "tensor-denotation-tensor"])
def test_a_type_keeps_its_last_case(cases):
    check(with_input(ld(1, b"v") + ld(2, b"".join(cases))))


# Fields no ONNX reader knows, and fields the C reader does not read, of
# every wire type.
UNKNOWN = (vi(99, 5) + fx64(100, 1) + ld(101, b"\xff\xfe") + fx32(102, 7) +
           vi((1 << 29) - 1, 2 ** 64 - 1) + ld(1000, ld(1, b"x")))


def _with_unknown_fields(data: bytes, desc, rng: random.Random) -> bytes:
    """Unknown fields at the start, at random places and at the end of every
    message in data (of type desc)."""
    out = [UNKNOWN]
    for number, wire, value, sub in _decode(data, desc):
        if isinstance(value, list):
            out.append(ld(number, _with_unknown_fields(_encode(value), sub, rng)))
        else:
            out.append(_encode([(number, wire, value, sub)]))
        if rng.random() < 0.2:
            out.append(UNKNOWN)
    return b"".join(out) + UNKNOWN


def test_unknown_fields_are_skipped_everywhere():
    data = _with_unknown_fields(rich_model().SerializeToString(), onnx.ModelProto.DESCRIPTOR,
                                random.Random(1))
    theirs = onnx.load_from_string(data)
    assert len(unknown_fields.UnknownFieldSet(theirs)) >= 12
    check(data)


# ---- rewrites of a model's wire form ------------------------------------------------------
#
# The model's bytes as a tree of fields, using onnx's descriptors to tell
# nested messages from strings: (number, wire, value, message descriptor or
# None) with value an int (varints), bytes, or a list of fields.

_NUMERIC = {FieldDescriptor.TYPE_INT32: 0, FieldDescriptor.TYPE_INT64: 0,
            FieldDescriptor.TYPE_UINT64: 0, FieldDescriptor.TYPE_ENUM: 0,
            FieldDescriptor.TYPE_FLOAT: 4, FieldDescriptor.TYPE_DOUBLE: 8}


def _decode(data: bytes, desc) -> list:
    out, i = [], 0
    while i < len(data):
        k, i = _read_varint(data, i)
        number, wire = k >> 3, k & 7
        fd = desc.fields_by_number.get(number) if desc is not None else None
        if wire == 0:
            value, i = _read_varint(data, i)
            out.append((number, wire, value, fd))
        elif wire == 2:
            n, i = _read_varint(data, i)
            payload, i = data[i:i + n], i + n
            if fd is not None and fd.type == FieldDescriptor.TYPE_MESSAGE:
                out.append((number, wire, _decode(payload, fd.message_type), fd.message_type))
            else:
                out.append((number, wire, payload, fd))
        else:
            width = 8 if wire == 1 else 4
            out.append((number, wire, data[i:i + width], fd))
            i += width
    return out


def _encode(fields: list) -> bytes:
    out = []
    for number, wire, value, _ in fields:
        if wire == 0:
            out.append(vi(number, value))
        elif wire == 2:
            out.append(ld(number, _encode(value) if isinstance(value, list) else value))
        else:
            out.append(key(number, wire) + value)
    return b"".join(out)


def _messages(fields: list, found: list) -> list:
    found.append(fields)
    for f in fields:
        if isinstance(f[2], list):
            _messages(f[2], found)
    return found


def _split_packed(value: bytes, width: int) -> list[bytes]:
    """The values of a packed run, each as its own bytes."""
    if width:
        return [value[i:i + width] for i in range(0, len(value), width)]
    out, i = [], 0
    while i < len(value):
        _, j = _read_varint(value, i)
        out.append(value[i:j])
        i = j
    return out


def _packable(desc) -> bool:
    if not isinstance(desc, FieldDescriptor) or desc.type not in _NUMERIC:
        return False
    label = getattr(desc, "label", None)    # newer protobufs have only is_repeated
    return desc.is_repeated if label is None else label == FieldDescriptor.LABEL_REPEATED


def _rewrite(fields: list, rng: random.Random) -> None:
    """One well-formed change to one message of the tree."""
    messages = _messages(fields, [])
    msg = rng.choice(messages)
    op = rng.choice(["duplicate", "delete", "swap", "unknown", "split", "split", "pack"])
    if op == "unknown" or not msg:
        msg.insert(rng.randint(0, len(msg)), rng.choice(_decode(UNKNOWN, None)))
        return
    i = rng.randrange(len(msg))
    number, wire, value, desc = msg[i]
    if op == "duplicate":
        msg.insert(rng.randint(0, len(msg)), msg[i])
    elif op == "delete":
        del msg[i]
    elif op == "swap" and i + 1 < len(msg):
        msg[i], msg[i + 1] = msg[i + 1], msg[i]
    elif op == "split" and isinstance(value, list) and len(value) > 1:
        # a message as two occurrences: merged (singular) or two entries (repeated)
        cut = rng.randrange(1, len(value))
        msg[i:i + 1] = [(number, wire, value[:cut], desc), (number, wire, value[cut:], desc)]
    elif op == "pack" and wire != 2 and _packable(desc):
        # this and the following occurrences of the field, as one packed run
        j = i
        while j < len(msg) and msg[j][0] == number and msg[j][1] == wire:
            j += 1
        run = b"".join(varint(v) if wire == 0 else v for _, _, v, _ in msg[i:j])
        msg[i:j] = [(number, 2, run, desc)]
    elif op == "split" and wire == 2 and _packable(desc):
        parts = _split_packed(value, _NUMERIC[desc.type])
        if rng.random() < 0.5 and len(parts) > 1:       # two packed runs
            cut = rng.randrange(1, len(parts))
            msg[i:i + 1] = [(number, 2, b"".join(parts[:cut]), desc),
                            (number, 2, b"".join(parts[cut:]), desc)]
        else:                                           # one value per occurrence
            width = _NUMERIC[desc.type]
            msg[i:i + 1] = [(number, 0, _read_varint(p, 0)[0], desc) if width == 0 else
                            (number, 5 if width == 4 else 1, p, desc) for p in parts]


def _rewrites(count: int, seed: int):
    rng = random.Random(seed)
    base = _decode(rich_model(big=False).SerializeToString(), onnx.ModelProto.DESCRIPTOR)
    for _ in range(count):
        fields = _decode(_encode(base), onnx.ModelProto.DESCRIPTOR)
        for _ in range(rng.randint(1, 4)):
            _rewrite(fields, rng)
        yield _encode(fields)


@pytest.mark.parametrize("seed", range(4))
def test_rewritten_models_read_the_same(seed):
    """Well-formed variants of the rich model (fields duplicated, deleted,
    swapped, unknown ones added, messages and packed runs split): onnx reads
    each, and so must the C reader, to the same fields."""
    for data in _rewrites(100, seed):
        theirs = onnx.load_from_string(data)
        if not theirs.HasField("graph"):
            assert describe(data) == (STATUS_DECODE, "the model has no graph (is this an ONNX file?)")
            continue
        check(data)


# ---- malformed bytes ----------------------------------------------------------------------

_NON_UTF8 = b"\xc3\x28"
_TEXT_FIELDS = {
    "ModelProto.producer_name": lambda s: wire_model(wire_graph(relu_node()), before=ld(2, s)),
    "ModelProto.producer_version": lambda s: wire_model(wire_graph(relu_node()), before=ld(3, s)),
    "OperatorSetIdProto.domain": lambda s: wire_model(wire_graph(relu_node()), before=ld(8, ld(1, s))),
    "FunctionProto.name": lambda s: wire_model(wire_graph(relu_node()), after=ld(25, ld(1, s))),
    "GraphProto.name": lambda s: wire_model(ld(1, relu_node()) + ld(2, s)),
    "NodeProto.input": lambda s: wire_model(wire_graph(relu_node(x=s))),
    "NodeProto.output": lambda s: wire_model(wire_graph(relu_node(y=s))),
    "NodeProto.name": lambda s: wire_model(wire_graph(relu_node() + ld(3, s))),
    "NodeProto.op_type": lambda s: wire_model(wire_graph(ld(4, s))),
    "NodeProto.domain": lambda s: wire_model(wire_graph(relu_node() + ld(7, s))),
    "AttributeProto.name": lambda s: with_attribute(ld(1, s) + vi(3, 1)),
    "AttributeProto.ref_attr_name": lambda s: with_attribute(ld(1, b"a") + ld(21, s)),
    "TensorProto.name": lambda s: with_initializer(ld(8, s)),
    "StringStringEntryProto.key": lambda s: with_initializer(ld(13, ld(1, s))),
    "StringStringEntryProto.value": lambda s: with_initializer(ld(13, ld(1, b"k") + ld(2, s))),
    "ValueInfoProto.name": lambda s: with_input(ld(1, s)),
    "Dimension.dim_param": lambda s: with_input(ld(2, ld(1, ld(2, ld(1, ld(2, s)))))),
}


@pytest.mark.parametrize("field", sorted(_TEXT_FIELDS))
def test_strings_that_are_not_utf8_or_hold_a_nul_are_refused(field):
    make = _TEXT_FIELDS[field]
    assert describe(make(b"ok"))[0] == 0
    for bad in (_NON_UTF8, b"a\xff", b"\xe2\x82", b"\x80", b"\xc0\x80", b"\xc1\xbf",
                b"\xe0\x80\x80", b"\xe0\x9f\xbf", b"\xed\xa0\x80", b"\xed\xbf\xbf",
                b"\xf0\x80\x80\x80", b"\xf0\x8f\xbf\xbf", b"\xf4\x90\x80\x80",
                b"\xf5\x80\x80\x80", b"\xf8\x88\x80\x80", b"\xe2\x28\xa1", b"\xf0\x9d\x84"):
        assert describe(make(bad)) == (STATUS_DECODE, f"{field}: not UTF-8"), bad
    assert describe(make(b"a\x00b")) == (STATUS_DECODE, f"{field}: contains a NUL character")
    for good in ("ünï☃𝄞", "\u0800\ud7ff\ue000\uffff\U00010000\U0010ffff", "\x7f\x01"):
        status, mine = describe(make(good.encode()))
        assert status == 0, mine


_MODEL = wire_model(wire_graph(relu_node()))


_MALFORMED = [
    (b"", "the model has no graph"),
    (vi(1, 8) + ld(8, vi(2, 17)), "the model has no graph"),
    (b"\x08", "a varint runs past the end of its message"),
    (b"\x08\x80", "a varint runs past the end of its message"),
    (b"\x80", "a varint runs past the end of its message"),
    (b"\x3a\x05ab", "field 7: 5 bytes run past the end of the message"),
    (b"\x3a" + varint(2 ** 64 - 1), "field 7: 18446744073709551615 bytes run past the end"),
    (wire_model(wire_graph(b"\x0a\x05")), "field 1: 5 bytes run past the end"),
    (with_attribute(ld(1, b"a") + b"\x2a\x09" + vi(1, 1)), "field 5: 9 bytes run past the end"),
    (with_input(b"\x12\x02\x0a\x07"), "field 1: 7 bytes run past the end"),
    (b"\x0d\x01\x02", "field 1: truncated 4-byte value"),
    (b"\x09\x01\x02\x03\x04\x05\x06\x07", "field 1: truncated 8-byte value"),
    (b"\x0b" + _MODEL, "field 1: unsupported wire type 3"),
    (b"\x0c" + _MODEL, "field 1: unsupported wire type 4"),
    (b"\x0e" + _MODEL, "field 1: unsupported wire type 6"),
    (b"\x0f" + _MODEL, "field 1: unsupported wire type 7"),
    (key(99, 3) + key(99, 4) + _MODEL, "field 99: unsupported wire type 3"),
    (with_input(ld(2, ld(1, key(5, 7)))), "field 5: unsupported wire type 7"),
    (with_attribute(ld(1, b"a") + key(40, 6)), "field 40: unsupported wire type 6"),
    (b"\x08" + b"\xff" * 10 + b"\x01" + _MODEL, "a varint is longer than 10 bytes"),
    (b"\xff" * 11 + _MODEL, "a varint is longer than 10 bytes"),
    (with_initializer(ld(1, b"\xff" * 10 + b"\x01")), "a varint is longer than 10 bytes"),
    (b"\x00\x01" + _MODEL, "field number 0"),
    (b"\x02\x00" + _MODEL, "field number 0"),
    (with_initializer(b"\x00"), "field number 0"),
    (key(1 << 29, 0) + b"\x00" + _MODEL, "a field number beyond 2^29"),
    (nested(MAX_DEPTH + 1), "graphs are nested more than 32 deep"),
    (nested(100), "graphs are nested more than 32 deep"),
    # a known field of the wrong wire type (onnx sets it aside as unknown)
    (fx32(1, 8) + _MODEL, "ModelProto.ir_version: expected a varint"),
    (vi(7, 1) + _MODEL, "ModelProto.graph: expected a nested message"),
    (vi(2, 1) + _MODEL, "ModelProto.producer_name: expected a string"),
    (wire_model(wire_graph(relu_node()), after=vi(8, 1)), "ModelProto.opset_import: expected"),
    (wire_model(wire_graph(relu_node()), after=ld(8, ld(2, b""))),
     "OperatorSetIdProto.version: expected a varint"),
    (wire_model(vi(1, 1)), "GraphProto field 1: expected a nested message"),
    (wire_model(vi(15, 1)), "GraphProto field 15: expected a nested message"),
    (with_attribute(ld(1, b"a") + vi(2, 1)), "attribute a: expected a 4-byte float"),
    (with_attribute(ld(1, b"a") + fx32(3, 1)), "AttributeProto.i: expected a varint"),
    (with_attribute(ld(1, b"a") + ld(20, b"")), "AttributeProto.type: expected a varint"),
    (with_attribute(ld(1, b"a") + vi(5, 1)), "AttributeProto.t: expected a nested message"),
    (with_attribute(ld(1, b"a") + vi(6, 1)), "AttributeProto.g: expected a nested message"),
    (with_attribute(ld(1, b"a") + fx64(7, 1)), "AttributeProto.floats: expected packed 4-byte"),
    (with_attribute(ld(1, b"a") + ld(7, b"abc")), "AttributeProto.floats: expected packed 4-byte"),
    (with_attribute(ld(1, b"a") + fx32(8, 1)), "AttributeProto.ints: expected integers"),
    (with_attribute(ld(1, b"a") + ld(8, b"\x80")), "a varint runs past the end"),
    (with_attribute(ld(1, b"a") + vi(9, 1)), "AttributeProto.strings: expected a nested message"),
    (with_attribute(ld(1, b"a") + vi(11, 1)), "AttributeProto.graphs: expected a nested message"),
    (with_attribute(ld(1, b"a") + fx64(22, 1)), "AttributeProto.sparse_tensor: expected"),
    (with_attribute(ld(1, b"a") + vi(14, 1)), "AttributeProto.tp: expected"),
    (with_initializer(ld(2, b"")), "TensorProto.data_type: expected a varint"),
    (with_initializer(vi(3, 1)), "TensorProto.segment: expected a nested message"),
    (with_initializer(vi(6, 1)), "TensorProto.string_data: expected a nested message"),
    (with_initializer(vi(9, 1)), "TensorProto.raw_data: expected a nested message"),
    (with_initializer(fx32(14, 1)), "TensorProto.data_location: expected a varint"),
    (with_initializer(ld(10, b"1234567")), "TensorProto.double_data: expected packed 8-byte"),
    (with_initializer(fx64(5, 1)), "TensorProto.int32_data: expected integers"),
    (with_initializer(vi(13, 1)), "TensorProto.external_data: expected a nested message"),
    (with_input(vi(2, 1)), "TypeProto: expected a nested message"),
    (with_input(ld(2, vi(1, 1))), "TypeProto.tensor_type: expected a nested message"),
    (with_input(ld(2, fx32(9, 1))), "TypeProto.optional_type: expected a nested message"),
    (with_input(ld(2, ld(1, ld(1, b"")))), "TypeProto.Tensor.elem_type: expected a varint"),
    (with_input(ld(2, ld(1, vi(2, 1)))), "TensorShapeProto: expected a nested message"),
    (with_input(ld(2, ld(1, ld(2, vi(1, 1))))), "TensorShapeProto.dim: expected a nested message"),
]


@pytest.mark.parametrize("data,message", _MALFORMED, ids=[m for _, m in _MALFORMED])
def test_malformed_bytes_are_a_decode_error_naming_the_problem(data, message):
    status, text = describe(data)
    assert status == STATUS_DECODE and text.startswith(message), (status, text)


def test_arguments_are_checked():
    text = ctypes.c_void_p()
    buf = ctypes.c_char_p(_MODEL)
    model = ctypes.cast(buf, ctypes.c_void_p)
    assert _lib.lib.sb_onnx_describe(None, 5, ctypes.byref(text)) == _lib.STATUS_ARGUMENT
    assert _lib.lib.sb_onnx_describe(model, -1, ctypes.byref(text)) == _lib.STATUS_ARGUMENT
    assert _lib.lib.sb_onnx_describe(model, len(_MODEL), None) == _lib.STATUS_ARGUMENT
    assert b"sb_onnx_describe" in _lib.lib.sb_last_error()
    assert _lib.lib.sb_onnx_describe(model, len(_MODEL), ctypes.byref(text)) == 0
    _lib.lib.sb_buffer_free(text)


def test_a_tenth_varint_byte_keeps_the_low_64_bits_as_protobuf_does():
    # ir_version as 10 bytes whose last carries bits beyond 64: onnx keeps 1
    mine = check(b"\x08" + b"\x81" + b"\x80" * 8 + b"\x7f" + _MODEL[2:])
    assert mine["ir_version"] == 1 - (1 << 63)


def test_every_truncation_is_refused_or_read_as_onnx_reads_it():
    data = rich_model(big=False).SerializeToString()
    cuts = sorted({*range(0, 64), *range(0, len(data), 7), len(data) - 1})
    for cut in cuts:
        prefix = data[:cut]
        try:
            theirs = onnx.load_from_string(prefix)
        except Exception:       # protobuf's DecodeError
            status, message = describe(prefix)
            assert status == STATUS_DECODE and message, cut
            continue
        if not theirs.HasField("graph"):
            assert describe(prefix) == (STATUS_DECODE, "the model has no graph (is this an ONNX file?)")
        else:
            check(prefix)


# The messages by which the C reader is stricter than onnx, which accepts
# these bytes (the module's docstring).
_STRICTER = ("not UTF-8", "contains a NUL character", "expected a", "unsupported wire type",
             "the model has no graph", "graphs are nested more than")


@pytest.mark.parametrize("seed", range(3))
def test_corrupted_bytes_are_refused_cleanly_or_read_as_onnx_reads_them(seed):
    """Random byte changes to the rich model: the C reader never crashes;
    where it refuses bytes onnx reads, it says which rule; where both read
    them, they agree."""
    rng = random.Random(seed)
    base = bytearray(rich_model(big=False).SerializeToString())
    read = 0
    for _ in range(400):
        data = bytearray(base)
        for _ in range(rng.randint(1, 3)):
            i = rng.randrange(len(data))
            op = rng.random()
            if op < 0.5:
                data[i] = rng.randrange(256)
            elif op < 0.8:
                data[i] ^= 1 << rng.randrange(8)
            elif op < 0.9:
                del data[i]
            else:
                data.insert(i, rng.randrange(256))
        data = bytes(data)
        status, mine = describe(data)
        assert status in (0, STATUS_DECODE), (status, mine)
        try:
            theirs = onnx.load_from_string(data)
        except Exception:
            continue    # the C reader may accept: it skips what it does not read unchecked
        if status:
            assert any(rule in mine for rule in _STRICTER), mine
            continue
        found = differences(mine, expect_model(theirs))
        assert not found, "\n".join(found[:30])
        read += 1
    assert read > 20
