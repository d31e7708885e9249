"""ONNX BitShift, BitwiseAnd/Or/Xor/Not, Sign, IsNaN, IsInf, Shrink,
ThresholdedRelu, Celu and Swish (docs/onnx.md), each where users put it: on
graph inputs, on an intermediate value (Max(x, x), which keeps every value),
feeding two consumers beside being a graph output, in both modes on every
path at 1 and 2 threads.

The oracles are numpy, bit for bit, for the exact integer and select
operators (written from ONNX's definitions, which BitShift's opset 28 text
spells out for shifts out of range and signed values); Celu and Swish are
compositions of samebits' exact kernels (exp through elu, sigmoid) and are
held to onnx.reference within 1e-6 relative, and to ONNX Runtime."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("onnx")

from onnx import TensorProto, helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

from onnx_cases import bits, model, run_everywhere, value  # noqa: E402

INT_TYPES = [np.uint8, np.uint16, np.uint32, np.uint64, np.int8, np.int16, np.int32, np.int64]
NAN = np.uint32(0x7FC00000).view(np.float32)


def _tt(dtype) -> int:
    return helper.np_dtype_to_tensor_dtype(np.dtype(dtype))


def _models(op: str, attrs: dict, inputs: dict, out_dtype) -> dict[str, tuple[bytes, str]]:
    """{place: (model, the output to read)}: the node on the graph inputs, on
    Max(x, x) of its first input, and with its output feeding Identity and
    a second Max (Not for bool) beside being an output itself."""
    names = list(inputs)
    ins = [value(n, _tt(a.dtype), a.shape) for n, a in inputs.items()]
    ot = _tt(out_dtype)
    out = {}
    node = helper.make_node(op, names, ["y"], **attrs)
    out["inputs"] = (model([node], ins, [value("y", ot)], opset=28), "y")
    pre = helper.make_node("Max", [names[0], names[0]], ["t"])
    node = helper.make_node(op, ["t"] + names[1:], ["y"], **attrs)
    out["intermediate"] = (model([pre, node], ins, [value("y", ot)], opset=28), "y")
    node = helper.make_node(op, names, ["y"], **attrs)
    ident = helper.make_node("Identity", ["y"], ["c1"])
    again = (helper.make_node("Not", ["y"], ["c2"]) if out_dtype == np.bool_
             else helper.make_node("Max", ["y", "y"], ["c2"]))
    out["consumers"] = (model([node, ident, again], ins, [value("y", ot), value("c1", ot), value("c2", ot)],
                              opset=28), "y")
    return out


def _same(got: np.ndarray, want: np.ndarray) -> bool:
    if got.dtype != want.dtype or got.shape != want.shape:
        return False
    if got.dtype == np.float32:
        return np.array_equal(bits(got), bits(want))
    return np.array_equal(got, want)


def _check(op: str, attrs: dict, inputs: dict, oracle) -> None:
    want = oracle(*inputs.values())
    for place, (data, name) in _models(op, attrs, inputs, want.dtype).items():
        for what, out in run_everywhere(data, inputs):
            assert _same(out[name], want), (op, place, what, out[name], want)
            if place == "consumers":
                assert _same(out["c1"], want), (op, what)


def _ints(dtype, shape, rng) -> np.ndarray:
    info = np.iinfo(dtype)
    x = rng.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)
    flat = x.reshape(-1)
    flat[:3] = [info.min, info.max, 0]
    return x


def _shift_oracle(direction: str, dtype):
    bitcount = 8 * np.dtype(dtype).itemsize
    signed = np.issubdtype(dtype, np.signedinteger)

    def run(x, y):
        x = np.asarray(x)
        out = np.zeros(np.broadcast(x, y).shape, dtype)
        xb, yb = np.broadcast_arrays(x, y)
        for idx in np.ndindex(out.shape):
            v, s = int(xb[idx]), int(yb[idx])
            if s < 0 or s >= bitcount:
                r = -1 if direction == "RIGHT" and signed and v < 0 else 0
            elif direction == "LEFT":
                r = (v << s) & ((1 << bitcount) - 1)
                if signed and r >= 1 << (bitcount - 1):
                    r -= 1 << bitcount
            else:
                r = v >> s   # Python's >> is arithmetic on negative ints
            out[idx] = r
        return out
    return run


@pytest.mark.parametrize("dtype", INT_TYPES)
@pytest.mark.parametrize("direction", ["LEFT", "RIGHT"])
def test_bitshift(dtype, direction):
    rng = np.random.default_rng(5)
    x = _ints(dtype, (4, 6), rng)
    bitcount = 8 * np.dtype(dtype).itemsize
    amounts = np.array([0, 1, 3, bitcount - 1, bitcount, bitcount + 5], dtype)
    if np.issubdtype(dtype, np.signedinteger):
        amounts[-1] = -2
    _check("BitShift", {"direction": direction}, {"x": x, "s": amounts}, _shift_oracle(direction, dtype))


@pytest.mark.parametrize("dtype", INT_TYPES)
@pytest.mark.parametrize("op,fn", [("BitwiseAnd", np.bitwise_and), ("BitwiseOr", np.bitwise_or),
                                   ("BitwiseXor", np.bitwise_xor)])
def test_bitwise_binary(dtype, op, fn):
    rng = np.random.default_rng(6)
    a, b = _ints(dtype, (3, 5), rng), _ints(dtype, (5,), rng)
    _check(op, {}, {"a": a, "b": b}, lambda u, v: fn(u, v).astype(dtype))


@pytest.mark.parametrize("dtype", INT_TYPES)
def test_bitwise_not(dtype):
    x = _ints(dtype, (3, 5), np.random.default_rng(7))
    _check("BitwiseNot", {}, {"x": x}, lambda u: np.invert(u))


def _special(shape, rng) -> np.ndarray:
    x = (rng.standard_normal(shape) * 3).astype(np.float32).reshape(-1)
    x[:12] = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-40, -1e-40, 3.4e38, -3.4e38, 0.5, -0.5, 1.0]
    x[12] = np.uint32(0xFFC12345).view(np.float32)   # a negative NaN with a payload
    return x.reshape(shape)


def _canonical(y: np.ndarray) -> np.ndarray:
    y = y.astype(np.float32)
    y[np.isnan(y)] = NAN
    return y


def test_sign():
    rng = np.random.default_rng(8)
    x = _special((4, 8), rng)
    _check("Sign", {}, {"x": x}, lambda u: _canonical(np.where(u == 0, np.float32(0), np.sign(u))))
    for dtype in INT_TYPES:
        xi = _ints(dtype, (3, 4), rng)
        _check("Sign", {}, {"x": xi}, lambda u: np.sign(u).astype(u.dtype))


def test_isnan_and_isinf():
    x = _special((4, 8), np.random.default_rng(9))
    _check("IsNaN", {}, {"x": x}, np.isnan)
    for pos, neg in ((1, 1), (1, 0), (0, 1), (0, 0)):
        def inf(u, pos=pos, neg=neg):
            return (np.isposinf(u) & bool(pos)) | (np.isneginf(u) & bool(neg))
        _check("IsInf", {"detect_positive": pos, "detect_negative": neg}, {"x": x}, inf)


def test_shrink_and_thresholded_relu():
    x = _special((4, 8), np.random.default_rng(10))
    for lambd, bias in ((0.5, 0.0), (1.5, 0.25), (0.0, -1.0)):
        def shrink(u, lambd=lambd, bias=bias):
            with np.errstate(invalid="ignore"):
                y = np.where(u < -np.float32(lambd), u + np.float32(bias),
                             np.where(u > np.float32(lambd), u - np.float32(bias), np.float32(0)))
            return _canonical(y)
        _check("Shrink", {"lambd": lambd, "bias": bias}, {"x": x}, shrink)
    for alpha in (1.0, 0.0, -2.0):
        _check("ThresholdedRelu", {"alpha": alpha}, {"x": x},
               lambda u, a=alpha: _canonical(np.where(u > np.float32(a), u, np.float32(0))))


@pytest.mark.parametrize("op,attrs", [("Celu", {"alpha": 1.0}), ("Celu", {"alpha": 0.3}),
                                      ("Swish", {"alpha": 1.0}), ("Swish", {"alpha": 1.7})])
def test_celu_and_swish_near_the_reference(op, attrs):
    rng = np.random.default_rng(11)
    x = (rng.standard_normal((5, 7)) * 4).astype(np.float32)
    x.reshape(-1)[:4] = [0.0, -0.0, 30.0, -30.0]
    data = model([helper.make_node(op, ["x"], ["y"], **attrs)], [value("x", TensorProto.FLOAT, x.shape)],
                 [value("y", TensorProto.FLOAT)], opset=24)
    want = ReferenceEvaluator(data).run(None, {"x": x})[0]
    first = None
    for what, out in run_everywhere(data, {"x": x}):
        np.testing.assert_allclose(out["y"], want, rtol=1e-6, atol=1e-7, err_msg=what)
        if what.startswith("exact"):
            first = out["y"] if first is None else first
            assert np.array_equal(bits(out["y"]), bits(first)), what
    # NaN stays NaN (canonical), infinities follow the formula
    special = np.array([np.nan, np.inf, -np.inf], np.float32)
    data = model([helper.make_node(op, ["x"], ["y"], **attrs)], [value("x", TensorProto.FLOAT, [3])],
                 [value("y", TensorProto.FLOAT)], opset=24)
    got = next(iter(run_everywhere(data, {"x": special})))[1]["y"]
    assert bits(got)[0] == 0x7FC00000 and got[1] == np.inf
    if op == "Celu":
        assert got[2] == np.float32(-attrs["alpha"])
    else:   # -inf * sigmoid(-inf) = -inf * 0: NaN, as onnx.reference gives
        assert bits(got)[2] == 0x7FC00000


def test_celu_swish_agree_with_onnx_runtime():
    ort = pytest.importorskip("onnxruntime")
    x = (np.random.default_rng(12).standard_normal((6, 6)) * 3).astype(np.float32)
    for op, attrs, opset in (("Celu", {"alpha": 0.7}, 12), ("Shrink", {"lambd": 0.4, "bias": 0.1}, 9),
                             ("ThresholdedRelu", {"alpha": 0.3}, 10), ("Sign", {}, 13), ("IsNaN", {}, 13)):
        out_type = TensorProto.BOOL if op == "IsNaN" else TensorProto.FLOAT
        data = model([helper.make_node(op, ["x"], ["y"], **attrs)], [value("x", TensorProto.FLOAT, x.shape)],
                     [value("y", out_type)], opset=opset)
        want = ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
        for what, out in run_everywhere(data, {"x": x}, threads=(1,)):
            np.testing.assert_allclose(out["y"], want, rtol=1e-6, atol=1e-7, err_msg=f"{op} {what}")


def test_type_errors_are_clear():
    import samebits.onnx as so
    x = np.ones(3, np.uint8)
    s = np.ones(3, np.uint16)
    data = model([helper.make_node("BitShift", ["x", "s"], ["y"], direction="LEFT")],
                 [value("x", TensorProto.UINT8, [3]), value("s", TensorProto.UINT16, [3])],
                 [value("y", TensorProto.UINT8)], opset=11)
    with pytest.raises(TypeError, match="uint8 and uint16: both must have one type"):
        so.load(data).run({"x": x, "s": s})
    data = model([helper.make_node("BitShift", ["x", "x"], ["y"], direction="UP")],
                 [value("x", TensorProto.UINT8, [3])], [value("y", TensorProto.UINT8)], opset=11)
    with pytest.raises(so.UnsupportedModelError, match="direction 'UP' is not LEFT or RIGHT"):
        so.load(data)
