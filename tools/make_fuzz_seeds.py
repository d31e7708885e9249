"""Writes the seed corpus of the graph runtime's fuzz target (tests/fuzz/):
small models built with onnx.helper over the operators the runtime loads, and
broken variants of them that a reader must refuse cleanly: truncations,
flipped length prefixes, huge and negative dimensions, cyclic graphs,
duplicate and missing value names, wrong element types, deep nesting.

    python tools/make_fuzz_seeds.py DIR
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from onnx import TensorProto as TP
from onnx import helper, numpy_helper

F, I64 = TP.FLOAT, TP.INT64
RNG = np.random.default_rng(7)


def rand(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def _varint(v: int) -> bytes:
    out = bytearray()
    while True:
        byte = v & 0x7F
        v >>= 7
        out.append(byte | (0x80 if v else 0))
        if not v:
            return bytes(out)


def model(nodes, inputs, outputs, inits=None, opset=17):
    g = helper.make_graph(
        nodes, "fuzz",
        [helper.make_tensor_value_info(n, t, s) for n, (t, s) in inputs.items()],
        [helper.make_tensor_value_info(n, t, s) for n, (t, s) in outputs.items()],
        [numpy_helper.from_array(v, n) for n, v in (inits or {}).items()])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def node(op, ins, outs, **attrs):
    return helper.make_node(op, ins, outs, **attrs)


def seeds() -> dict[str, bytes]:
    x4 = {"x": (F, [1, 2, 5, 5])}
    y = {"y": (F, None)}
    out: dict[str, object] = {
        "add_relu": model([node("Add", ["x", "b"], ["s"]), node("Relu", ["s"], ["y"])],
                          {"x": (F, ["n", 4])}, y, {"b": rand(4)}),
        "conv_relu": model([node("Conv", ["x", "w", "bias"], ["c"], pads=[1, 1, 1, 1]),
                            node("Relu", ["c"], ["y"])], x4, y,
                           {"w": rand(3, 2, 3, 3), "bias": rand(3)}),
        "matmul_add": model([node("MatMul", ["x", "w"], ["m"]), node("Add", ["m", "b"], ["y"])],
                            {"x": (F, ["n", 6])}, y, {"w": rand(6, 3), "b": rand(3)}),
        "shape_chain": model([node("Shape", ["x"], ["s"]),
                              node("Gather", ["s", "zero"], ["n"], axis=0),
                              node("Unsqueeze", ["n", "axes"], ["n1"]),
                              node("Concat", ["n1", "minus1"], ["shape"], axis=0),
                              node("Reshape", ["x", "shape"], ["y"])],
                             {"x": (F, ["n", 3, 4])}, y,
                             {"zero": np.array(0, np.int64), "axes": np.array([0], np.int64),
                              "minus1": np.array([-1], np.int64)}),
        "softmax": model([node("Softmax", ["x"], ["y"], axis=-1)], {"x": (F, [2, 7])}, y),
        "pools": model([node("MaxPool", ["x"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
                        node("GlobalAveragePool", ["p"], ["y"])], x4, y),
        "batchnorm": model([node("BatchNormalization", ["x", "g", "b", "m", "v"], ["y"])], x4, y,
                           {"g": rand(2), "b": rand(2), "m": rand(2),
                            "v": np.abs(rand(2)) + 0.5}),
        "movement": model([node("Transpose", ["x"], ["t"], perm=[0, 2, 3, 1]),
                           node("Slice", ["t", "st", "en"], ["s"]),
                           node("Concat", ["s", "s"], ["y"], axis=1)], x4, y,
                          {"st": np.array([0, 1], np.int64), "en": np.array([1, 4], np.int64)}),
        "cast_where": model([node("Cast", ["x"], ["i"], to=I64),
                             node("Equal", ["i", "z"], ["e"]),
                             node("Where", ["e", "x", "x"], ["y"])],
                            {"x": (F, [3, 3])}, y, {"z": np.zeros((1,), np.int64)}),
        "reduce": model([node("ReduceMean", ["x"], ["y"], axes=[1], keepdims=0)],
                        {"x": (F, [2, 3, 4])}, y, opset=13),
        "nonzero": model([node("NonZero", ["x"], ["y"])], {"x": (F, [3, 4])},
                         {"y": (I64, None)}),
        "topk": model([node("TopK", ["x", "k"], ["v", "i"])], {"x": (F, [2, 6])},
                      {"v": (F, None), "i": (I64, None)}, {"k": np.array([3], np.int64)}),
        "lstm": model([node("LSTM", ["x", "w", "r"], ["y"], hidden_size=3)],
                      {"x": (F, [2, 1, 4])}, y, {"w": rand(1, 12, 4), "r": rand(1, 12, 3)}),
        "layernorm": model([node("LayerNormalization", ["x", "s", "b"], ["y"], axis=-1)],
                           {"x": (F, [2, 5])}, y, {"s": rand(5), "b": rand(5)}),
        "gemm": model([node("Gemm", ["x", "w", "c"], ["y"], transB=1, alpha=0.5)],
                      {"x": (F, [2, 4])}, y, {"w": rand(3, 4), "c": rand(3)}),
        "int_inputs": model([node("Mul", ["a", "b"], ["y"])], {"a": (I64, [4]), "b": (I64, [4])},
                            {"y": (I64, None)}),
    }
    data = {name: m.SerializeToString() for name, m in out.items()}  # type: ignore[attr-defined]

    # broken variants
    raw = data["conv_relu"]
    for cut in (1, 7, len(raw) // 3, len(raw) // 2, len(raw) - 3):
        data[f"truncated_{cut}"] = raw[:cut]
    for at in (1, 3, 10, 40):
        flipped = bytearray(raw)
        flipped[at] ^= 0x7F
        data[f"flipped_{at}"] = bytes(flipped)
    for dim in (1 << 40, 1 << 62, -1, -(1 << 62)):
        m = model([node("Relu", ["x"], ["y"])], {"x": (F, [dim, 2])}, y)
        data[f"input_dim_{dim}"] = m.SerializeToString()
        t = helper.make_tensor("w", F, [3], vals=b"\0" * 12, raw=True)
        del t.dims[:]
        t.dims.extend([dim, 3])
        g = helper.make_graph([node("Add", ["x", "w"], ["y"])], "big",
                              [helper.make_tensor_value_info("x", F, [1, 3])],
                              [helper.make_tensor_value_info("y", F, None)], [t])
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
        m.ir_version = 8
        data[f"init_dim_{dim}"] = m.SerializeToString()
    data["cyclic"] = model([node("Relu", ["b"], ["a"]), node("Relu", ["a"], ["b"]),
                            node("Add", ["x", "a"], ["y"])], {"x": (F, [2])}, y).SerializeToString()
    data["duplicate_output"] = model([node("Relu", ["x"], ["a"]), node("Neg", ["x"], ["a"]),
                                      node("Relu", ["a"], ["y"])], {"x": (F, [2])},
                                     y).SerializeToString()
    data["missing_input"] = model([node("Add", ["x", "nowhere"], ["y"])], {"x": (F, [2])},
                                  y).SerializeToString()
    data["string_input"] = model([node("Identity", ["x"], ["y"])], {"x": (TP.STRING, [2])},
                                 {"y": (TP.STRING, None)}).SerializeToString()
    data["float16_input"] = model([node("Relu", ["x"], ["y"])], {"x": (TP.FLOAT16, [2])},
                                  {"y": (TP.FLOAT16, None)}).SerializeToString()
    data["wrong_attr_type"] = model([node("Softmax", ["x"], ["y"], axis=1.5)],
                                    {"x": (F, [2, 3])}, y).SerializeToString()
    data["opset_99"] = model([node("Relu", ["x"], ["y"])], {"x": (F, [2])}, y,
                             opset=99).SerializeToString()
    # graphs nested 40 deep in If branches (the reader bounds the depth),
    # written on the wire by hand: protobuf's own reader refuses such depth
    def field(number: int, payload: bytes) -> bytes:
        return _varint(number << 3 | 2) + _varint(len(payload)) + payload
    graph = field(1, field(4, b"Relu") + field(1, b"x") + field(2, b"y"))
    for _ in range(40):
        attr = field(1, b"then_branch") + _varint(20 << 3) + _varint(5) + field(6, graph)
        graph = field(1, field(4, b"If") + field(1, b"c") + field(2, b"y") + field(5, attr))
    data["deep_nesting"] = (_varint(1 << 3) + _varint(8) + field(7, graph) +
                            field(8, _varint(2 << 3) + _varint(17)))
    return data


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    out = Path(argv[0])
    out.mkdir(parents=True, exist_ok=True)
    for name, blob in seeds().items():
        (out / f"{name}.onnx").write_bytes(blob)
    print(f"make_fuzz_seeds.py: {len(seeds())} seeds in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
