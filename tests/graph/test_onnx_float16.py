"""float16 and bfloat16 models (docs/onnx.md, "float16 and bfloat16";
csrc/graph/narrow.c, csrc/math/narrow_float.h): every result of the narrow
type rounded to it once, to nearest even, from the float32 computation.

For the correctly rounded operators (Add, Sub, Mul, Div, Sqrt) that is the
correctly rounded narrow result, so numpy's float16 arithmetic (and, for
bfloat16, float32 arithmetic rounded by a bit-level oracle written here) is a
bit-for-bit oracle: held in both modes, on every path at 1 and 2 threads,
with an intermediate read twice and returned, inf, NaN, subnormals and
values that overflow the type; a value crossing into an If branch is
rounded there too. Graphs with MatMul and Softmax are held to ONNX Runtime
within the type's precision and to the same bits everywhere in exact mode.
"""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper, numpy_helper  # noqa: E402

import samebits.onnx as so  # noqa: E402
from onnx_cases import bits, graph_model, run_everywhere  # noqa: E402

F, H, BF, I64 = TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.BFLOAT16, TensorProto.INT64


def to_bfloat16(x: np.ndarray) -> np.ndarray:
    """float32 -> the nearest bfloat16 value (ties to even) as float32."""
    b = np.ascontiguousarray(x, np.float32).view(np.uint32).astype(np.uint64)
    nan = (b & 0x7FFFFFFF) > 0x7F800000
    r = ((b + 0x7FFF + ((b >> 16) & 1)) & 0xFFFF0000).astype(np.uint32)
    r[nan] = 0x7FC00000
    return r.view(np.float32)


def _same(got: np.ndarray, want: np.ndarray, what: str) -> None:
    assert got.dtype == want.dtype, (what, got.dtype, want.dtype)
    assert got.shape == want.shape, (what, got.shape, want.shape)
    assert np.array_equal(np.isnan(got), np.isnan(want)), what
    keep = ~np.isnan(want)
    np.testing.assert_array_equal(got[keep].view(np.uint16 if got.dtype == np.float16 else np.uint32),
                                  want[keep].view(np.uint16 if want.dtype == np.float16 else np.uint32),
                                  err_msg=what)


def _half_input(rng) -> np.ndarray:
    x = (rng.standard_normal((3, 7)) * 30).astype(np.float16)
    x.reshape(-1)[:6] = [np.inf, -np.inf, np.nan, 6e-8, -0.0, 60000]
    return x


def test_a_float16_model_rounds_every_result_once():
    rng = np.random.default_rng(31)
    c = np.float16(1.3)
    nodes = [helper.make_node("Mul", ["x", "c"], ["y"]),
             helper.make_node("Add", ["y", "x"], ["z"]),
             helper.make_node("Div", ["z", "d"], ["q"]),
             helper.make_node("Sub", ["q", "y"], ["s"]),
             helper.make_node("Abs", ["s"], ["a"]),
             helper.make_node("Sqrt", ["a"], ["r"])]
    data = graph_model(nodes, {"x": (H, [3, 7]), "d": (H, [7])},
                       {"y": (H, None), "r": (H, None), "s": (H, None)},
                       inits={"c": np.array(c, np.float16)}, opset=17)
    x = _half_input(rng)
    d = (rng.uniform(0.1, 3.0, 7) * np.sign(rng.standard_normal(7))).astype(np.float16)
    with np.errstate(all="ignore"):
        y = x * c
        z = y + x
        q = z / d
        s = q - y
        r = np.sqrt(np.abs(s))
    for what, out in run_everywhere(data, {"x": x, "d": d}):
        _same(out["y"], y, what)
        _same(out["s"], s, what)
        _same(out["r"], r, what)
    # and float32 feeds for float16 inputs: rounded to float16 once
    x32 = rng.standard_normal((3, 7)).astype(np.float32) * 1000
    got = so.load(data, mode="exact").run({"x": x32, "d": d})
    with np.errstate(all="ignore"):
        _same(got["y"], x32.astype(np.float16) * c, "float32 feed")


def test_a_bfloat16_model_through_casts():
    rng = np.random.default_rng(37)
    nodes = [helper.make_node("Cast", ["x"], ["xb"], to=BF),
             helper.make_node("Mul", ["xb", "xb"], ["m"]),
             helper.make_node("Add", ["m", "xb"], ["t"]),
             helper.make_node("Cast", ["t"], ["out"], to=F),
             helper.make_node("Cast", ["m"], ["mi"], to=I64)]
    data = graph_model(nodes, {"x": (F, [4, 5])}, {"out": (F, None), "mi": (I64, None)}, opset=17)
    x = (rng.standard_normal((4, 5)) * 100).astype(np.float32)
    x.reshape(-1)[:4] = [np.inf, np.nan, 1e-40, 3.3e38]
    xb = to_bfloat16(x)
    with np.errstate(all="ignore"):
        m = to_bfloat16(xb * xb)
        t = to_bfloat16(m + xb)
    for what, out in run_everywhere(data, {"x": x}):
        _same(out["out"], t, what)
    finite = np.isfinite(m)
    got = so.load(data, mode="exact").run({"x": x})["mi"]
    np.testing.assert_array_equal(got[finite], m[finite].astype(np.int64))


def test_bfloat16_inputs_and_outputs():
    """bfloat16 graph inputs take float32 values (rounded once) or a
    bfloat16 numpy dtype's bits; outputs come back as float32 holding
    bfloat16 values (numpy has no bfloat16)."""
    nodes = [helper.make_node("Add", ["x", "x"], ["y"])]
    data = graph_model(nodes, {"x": (BF, [5])}, {"y": (BF, None)}, opset=17)
    x = np.array([1.0, 1.00390625, 1.005859375, -3.14159, 70000.0], np.float32)
    y = so.load(data, mode="exact").run({"x": x})["y"]
    assert y.dtype == np.float32
    np.testing.assert_array_equal(bits(y), bits(to_bfloat16(to_bfloat16(x) * 2)))


def test_a_float16_value_is_rounded_inside_an_if_branch():
    then_g = helper.make_graph([helper.make_node("Mul", ["x", "x"], ["t"])], "then", [],
                               [helper.make_tensor_value_info("t", H, None)])
    else_g = helper.make_graph([helper.make_node("Add", ["x", "x"], ["e"])], "else", [],
                               [helper.make_tensor_value_info("e", H, None)])
    nodes = [helper.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g),
             helper.make_node("Sub", ["y", "x"], ["z"])]
    data = graph_model(nodes, {"c": (TensorProto.BOOL, []), "x": (H, [6])}, {"z": (H, None)}, opset=17)
    x = np.array([1.001, 300.5, -7.3, 0.0003, 255.9, 2.5], np.float16)
    for cond in (True, False):
        with np.errstate(all="ignore"):
            want = ((x * x) if cond else (x + x)) - x
        for what, out in run_everywhere(data, {"c": np.array(cond), "x": x}, threads=(2,)):
            _same(out["z"], want, f"{what} cond={cond}")


def test_float16_matmul_and_softmax_agree_with_onnx_runtime():
    rng = np.random.default_rng(41)
    w = (rng.standard_normal((16, 8)) * 0.3).astype(np.float16)
    nodes = [helper.make_node("MatMul", ["x", "w"], ["h"]),
             helper.make_node("Softmax", ["h"], ["p"], axis=-1),
             helper.make_node("Relu", ["h"], ["r"])]
    data = graph_model(nodes, {"x": (H, [4, 16])}, {"p": (H, None), "r": (H, None)},
                       inits={"w": w}, opset=17)
    x = rng.standard_normal((4, 16)).astype(np.float16)
    want = ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(None, {"x": x})
    first = None
    for what, out in run_everywhere(data, {"x": x}):
        for g, o in zip(out.values(), want):
            assert g.dtype == np.float16
            np.testing.assert_allclose(g.astype(np.float32), o.astype(np.float32), rtol=4e-3, atol=1e-3,
                                       err_msg=what)
        if what.startswith("exact"):
            b = [g.tobytes() for g in out.values()]
            first = first or b
            assert b == first, what


def test_float16_input_errors():
    data = graph_model([helper.make_node("Neg", ["x"], ["y"])], {"x": (H, [2])}, {"y": (H, None)},
                       opset=17)
    s = so.load(data)
    with pytest.raises(TypeError, match="input 'x'"):
        s.run({"x": np.array([1, 2], np.int32)})
    with pytest.raises(TypeError, match="the model wants float16"):
        s.run({"x": np.array([1.0, 2.0], np.float64)})
    # a Cast to float16 of an integer beyond its range: inf
    data = graph_model([helper.make_node("Cast", ["i"], ["h"], to=H)], {"i": (I64, [3])},
                       {"h": (H, None)}, opset=17)
    got = so.load(data).run({"i": np.array([70000, -65519, 65520], np.int64)})["h"]
    np.testing.assert_array_equal(got, np.array([np.inf, -65504, np.inf], np.float16))


def test_float16_weights_cast_to_float32_compute_in_float32():
    """Mixed precision as exporters write it: float16 weights, a Cast to
    float32, float32 arithmetic that is not rounded to float16."""
    w = np.array([0.1, 65504, 6e-8, -2.5], np.float16)
    nodes = [helper.make_node("Cast", ["w"], ["w32"], to=F),
             helper.make_node("Mul", ["x", "w32"], ["y"])]
    data = graph_model(nodes, {"x": (F, [4])}, {"y": (F, None)}, inits={"w": w}, opset=17)
    x = np.array([3.0, 0.5, 1.0, 1.0 / 3.0], np.float32)
    for what, out in run_everywhere(data, {"x": x}, threads=(2,)):
        np.testing.assert_array_equal(bits(out["y"]), bits(x * w.astype(np.float32)), err_msg=what)
