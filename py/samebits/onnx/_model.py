"""The parts of an ONNX ModelProto that the runner reads, parsed from the
wire format (onnx.proto's field numbers; unknown fields are skipped, as
protobuf readers do). Tensor payloads stay memoryview slices of the file's
bytes until the runner converts them (_values.py)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional, Union

from . import _wire as w

# TensorProto.DataType
FLOAT, UINT8, INT8, UINT16, INT16, INT32, INT64, STRING, BOOL = 1, 2, 3, 4, 5, 6, 7, 8, 9
FLOAT16, DOUBLE, UINT32, UINT64, COMPLEX64, COMPLEX128, BFLOAT16 = 10, 11, 12, 13, 14, 15, 16
DTYPE_NAMES = {FLOAT: "float32", UINT8: "uint8", INT8: "int8", UINT16: "uint16", INT16: "int16",
               INT32: "int32", INT64: "int64", STRING: "string", BOOL: "bool",
               FLOAT16: "float16", DOUBLE: "float64", UINT32: "uint32", UINT64: "uint64",
               COMPLEX64: "complex64", COMPLEX128: "complex128", BFLOAT16: "bfloat16"}

# AttributeProto.AttributeType
A_FLOAT, A_INT, A_STRING, A_TENSOR, A_GRAPH = 1, 2, 3, 4, 5
A_FLOATS, A_INTS, A_STRINGS, A_TENSORS, A_GRAPHS = 6, 7, 8, 9, 10
A_SPARSE_TENSOR, A_SPARSE_TENSORS, A_TYPE_PROTO, A_TYPE_PROTOS = 11, 12, 13, 14

Dim = Union[int, str, None]       # a size, a symbolic name, or unknown


@dataclass
class Tensor:
    """TensorProto: a constant (initializer, Constant's value, attribute)."""
    name: str = ""
    dims: tuple[int, ...] = ()
    data_type: int = 0
    raw_data: Optional[memoryview] = None
    float_data: list[float] = field(default_factory=list)
    int32_data: list[int] = field(default_factory=list)
    int64_data: list[int] = field(default_factory=list)
    uint64_data: list[int] = field(default_factory=list)
    double_data: list[float] = field(default_factory=list)
    string_data: list[bytes] = field(default_factory=list)
    external_data: dict[str, str] = field(default_factory=dict)
    data_location: int = 0        # 1: EXTERNAL (the bytes are in another file)
    has_segment: bool = False


@dataclass
class ValueInfo:
    """ValueInfoProto of a tensor: name, element type and shape when given."""
    name: str = ""
    elem_type: Optional[int] = None
    shape: Optional[tuple[Dim, ...]] = None      # None: rank unknown
    kind: str = "tensor"                           # or the TypeProto case it holds


@dataclass
class Attribute:
    name: str
    type: int
    value: Any


@dataclass
class Node:
    op_type: str = ""
    domain: str = ""
    name: str = ""
    inputs: list[str] = field(default_factory=list)
    outputs: list[str] = field(default_factory=list)
    attributes: dict[str, Attribute] = field(default_factory=dict)
    fused: dict[str, Any] = field(default_factory=dict)   # set by _fuse.py, not in the file
    index: int = -1                                        # position in the file's graph


@dataclass
class Graph:
    name: str = ""
    nodes: list[Node] = field(default_factory=list)
    initializers: list[Tensor] = field(default_factory=list)
    inputs: list[ValueInfo] = field(default_factory=list)
    outputs: list[ValueInfo] = field(default_factory=list)
    value_info: list[ValueInfo] = field(default_factory=list)
    sparse_initializers: int = 0


@dataclass
class Model:
    ir_version: int = 0
    opset: dict[str, int] = field(default_factory=dict)   # domain ("" = ai.onnx) -> version
    producer_name: str = ""
    producer_version: str = ""
    graph: Graph = field(default_factory=Graph)
    functions: list[str] = field(default_factory=list)    # names of model-local functions


def parse_tensor(buf: memoryview) -> Tensor:
    t = Tensor()
    dims: list[int] = []
    for number, wire, value in w.fields(buf):
        if number == 1:
            dims += w.ints(wire, value, "TensorProto.dims")
        elif number == 2:
            t.data_type = w.signed64(value)  # type: ignore[arg-type]
        elif number == 3:
            t.has_segment = True
        elif number == 4:
            t.float_data += w.floats(wire, value, "TensorProto.float_data")
        elif number == 5:
            t.int32_data += w.ints(wire, value, "TensorProto.int32_data")
        elif number == 6:
            t.string_data.append(bytes(w.message(value, "TensorProto.string_data")))
        elif number == 7:
            t.int64_data += w.ints(wire, value, "TensorProto.int64_data")
        elif number == 8:
            t.name = w.text(value, "TensorProto.name")
        elif number == 9:
            t.raw_data = w.message(value, "TensorProto.raw_data")
        elif number == 10:
            t.double_data += w.doubles(wire, value, "TensorProto.double_data")
        elif number == 11:
            t.uint64_data += w.uints(wire, value, "TensorProto.uint64_data")
        elif number == 13:
            key = val = ""
            for n2, _, v2 in w.fields(w.message(value, "TensorProto.external_data")):
                if n2 == 1:
                    key = w.text(v2, "StringStringEntryProto.key")
                elif n2 == 2:
                    val = w.text(v2, "StringStringEntryProto.value")
            t.external_data[key] = val
        elif number == 14:
            t.data_location = w.signed64(value)  # type: ignore[arg-type]
    t.dims = tuple(dims)
    return t


def _parse_shape(buf: memoryview) -> tuple[Dim, ...]:
    dims: list[Dim] = []
    for number, _, value in w.fields(buf):
        if number != 1:
            continue
        dim: Dim = None
        for n2, wire2, v2 in w.fields(w.message(value, "TensorShapeProto.dim")):
            if n2 == 1 and wire2 == w.VARINT:
                dim = w.signed64(v2)  # type: ignore[arg-type]
            elif n2 == 2:
                dim = w.text(v2, "Dimension.dim_param")
        dims.append(dim)
    return tuple(dims)


def parse_value_info(buf: memoryview) -> ValueInfo:
    info = ValueInfo()
    for number, _, value in w.fields(buf):
        if number == 1:
            info.name = w.text(value, "ValueInfoProto.name")
        elif number == 2:
            for n2, _, v2 in w.fields(w.message(value, "TypeProto")):
                if n2 == 1:
                    for n3, _, v3 in w.fields(w.message(v2, "TypeProto.Tensor")):
                        if n3 == 1:
                            info.elem_type = w.signed64(v3)  # type: ignore[arg-type]
                        elif n3 == 2:
                            info.shape = _parse_shape(w.message(v3, "TensorShapeProto"))
                elif n2 in (4, 5, 8, 9):
                    info.kind = {4: "sequence", 5: "map", 8: "sparse tensor", 9: "optional"}[n2]
    return info


_ATTRIBUTE_FIELDS = {2: A_FLOAT, 3: A_INT, 4: A_STRING, 5: A_TENSOR, 6: A_GRAPH, 7: A_FLOATS,
                     8: A_INTS, 9: A_STRINGS, 10: A_TENSORS, 11: A_GRAPHS,
                     22: A_SPARSE_TENSOR, 23: A_SPARSE_TENSORS, 14: A_TYPE_PROTO,
                     15: A_TYPE_PROTOS}


def parse_attribute(buf: memoryview) -> Attribute:
    name, declared = "", 0
    seen: dict[int, Any] = {}
    lists: dict[int, list[Any]] = {A_FLOATS: [], A_INTS: [], A_STRINGS: [], A_TENSORS: [],
                              A_GRAPHS: []}
    for number, wire, value in w.fields(buf):
        if number == 1:
            name = w.text(value, "AttributeProto.name")
        elif number == 20:
            declared = w.signed64(value)  # type: ignore[arg-type]
        elif number == 2:
            seen[A_FLOAT] = w.float32(wire, value, f"attribute {name}")
        elif number == 3:
            seen[A_INT] = w.signed64(value)  # type: ignore[arg-type]
        elif number == 4:
            seen[A_STRING] = bytes(w.message(value, f"attribute {name}"))
        elif number == 5:
            seen[A_TENSOR] = parse_tensor(w.message(value, f"attribute {name}"))
        elif number == 6:
            seen[A_GRAPH] = parse_graph(w.message(value, f"attribute {name}"))
        elif number == 7:
            lists[A_FLOATS] += w.floats(wire, value, f"attribute {name}")
        elif number == 8:
            lists[A_INTS] += w.ints(wire, value, f"attribute {name}")
        elif number == 9:
            lists[A_STRINGS].append(bytes(w.message(value, f"attribute {name}")))
        elif number == 10:
            lists[A_TENSORS].append(parse_tensor(w.message(value, f"attribute {name}")))
        elif number == 11:
            lists[A_GRAPHS].append(parse_graph(w.message(value, f"attribute {name}")))
        elif number in (22, 23, 14, 15):
            seen[_ATTRIBUTE_FIELDS[number]] = None   # kept only to name it in errors
        elif number == 21:
            # a reference to an attribute of an enclosing function: model-local
            # functions are refused at load, so this never needs resolving
            seen[-1] = w.text(value, "AttributeProto.ref_attr_name")
    kind = declared
    if not kind:   # IR version 1 files carry no type: infer it from the field set
        present = [k for k in seen if k > 0] + [k for k, v in lists.items() if v]
        kind = present[0] if len(present) == 1 else 0
    if kind in lists:
        value_out: Any = lists[kind]
    else:
        value_out = seen.get(kind)
    return Attribute(name, kind, value_out)


def parse_node(buf: memoryview) -> Node:
    node = Node()
    for number, _, value in w.fields(buf):
        if number == 1:
            node.inputs.append(w.text(value, "NodeProto.input"))
        elif number == 2:
            node.outputs.append(w.text(value, "NodeProto.output"))
        elif number == 3:
            node.name = w.text(value, "NodeProto.name")
        elif number == 4:
            node.op_type = w.text(value, "NodeProto.op_type")
        elif number == 5:
            a = parse_attribute(w.message(value, "NodeProto.attribute"))
            node.attributes[a.name] = a
        elif number == 7:
            node.domain = w.text(value, "NodeProto.domain")
    return node


def parse_graph(buf: memoryview) -> Graph:
    g = Graph()
    for number, _, value in w.fields(buf):
        if number == 1:
            g.nodes.append(parse_node(w.message(value, "GraphProto.node")))
            g.nodes[-1].index = len(g.nodes) - 1
        elif number == 2:
            g.name = w.text(value, "GraphProto.name")
        elif number == 5:
            g.initializers.append(parse_tensor(w.message(value, "GraphProto.initializer")))
        elif number == 11:
            g.inputs.append(parse_value_info(w.message(value, "GraphProto.input")))
        elif number == 12:
            g.outputs.append(parse_value_info(w.message(value, "GraphProto.output")))
        elif number == 13:
            g.value_info.append(parse_value_info(w.message(value, "GraphProto.value_info")))
        elif number == 15:
            g.sparse_initializers += 1
    return g


def parse_model(data: Any) -> Model:
    """A Model from the bytes of an .onnx file (bytes, bytearray, memoryview)."""
    buf = memoryview(data).cast("B") if not isinstance(data, memoryview) else data.cast("B")
    m = Model()
    seen_graph = False
    for number, _, value in w.fields(buf):
        if number == 1:
            m.ir_version = w.signed64(value)  # type: ignore[arg-type]
        elif number == 2:
            m.producer_name = w.text(value, "ModelProto.producer_name")
        elif number == 3:
            m.producer_version = w.text(value, "ModelProto.producer_version")
        elif number == 7:
            m.graph = parse_graph(w.message(value, "ModelProto.graph"))
            seen_graph = True
        elif number == 8:
            domain, version = "", 0
            for n2, _, v2 in w.fields(w.message(value, "OperatorSetIdProto")):
                if n2 == 1:
                    domain = w.text(v2, "OperatorSetIdProto.domain")
                elif n2 == 2:
                    version = w.signed64(v2)  # type: ignore[arg-type]
            m.opset["" if domain == "ai.onnx" else domain] = version
        elif number == 25:
            for n2, _, v2 in w.fields(w.message(value, "FunctionProto")):
                if n2 == 1:
                    m.functions.append(w.text(v2, "FunctionProto.name"))
    if not seen_graph:
        raise w.DecodeError("the model has no graph (is this an ONNX file?)")
    return m
