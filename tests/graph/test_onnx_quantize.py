"""ONNX QuantizeLinear and DequantizeLinear (docs/onnx.md;
csrc/kernels/quantize.c), bit for bit against their definition written here
in numpy: DequantizeLinear y = float32(float32(x) - float32(zero_point)) *
scale; QuantizeLinear y = saturate(round_half_even(float32(x / scale)) +
zero_point), NaN giving the zero point. Per tensor, per axis and in blocks,
int8, uint8, int16, uint16 (int32 to dequantize), with and without zero
points; on graph inputs, on an intermediate (Neg), through a Q -> DQ pair
feeding two consumers, in both modes on every path at 1 and 2 threads;
against ONNX Runtime and onnx.reference."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("onnx")

from onnx import TensorProto, helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

import samebits.onnx as so  # noqa: E402
from onnx_cases import bits, model, run_everywhere, value  # noqa: E402

F = TensorProto.FLOAT
TYPES = [np.int8, np.uint8, np.int16, np.uint16]


def _tt(dtype) -> int:
    return helper.np_dtype_to_tensor_dtype(np.dtype(dtype))


def _param(a: np.ndarray, shape, axis: int, block: int) -> np.ndarray:
    """scale or zero point broadcast to x's shape."""
    if a.size == 1 and not block:
        return np.broadcast_to(a.reshape(()), shape)
    axis %= len(shape)
    if block:
        return np.repeat(a, block, axis=axis).take(range(shape[axis]), axis=axis)
    view = [1] * len(shape)
    view[axis] = shape[axis]
    return np.broadcast_to(a.reshape(view), shape)


def dequantize_definition(x, scale, zp, axis=1, block=0):
    s = _param(scale, x.shape, axis, block)
    z = np.zeros(x.shape, np.float32) if zp is None else _param(zp, x.shape, axis, block).astype(np.float32)
    return ((x.astype(np.float32) - z).astype(np.float32) * s).astype(np.float32)


def quantize_definition(x, scale, zp, dtype, axis=1, block=0):
    s = _param(scale, x.shape, axis, block)
    z = np.zeros(x.shape, np.float64) if zp is None else _param(zp, x.shape, axis, block).astype(np.float64)
    with np.errstate(all="ignore"):
        q = (x / s).astype(np.float32)
        r = np.rint(q).astype(np.float64) + z   # numpy's rint: half to even
        r = np.where(np.isnan(q), z, r)
    info = np.iinfo(dtype)
    return np.clip(r, info.min, info.max).astype(dtype)


def _floats(shape, rng):
    x = (rng.standard_normal(shape) * 200).astype(np.float32)
    flat = x.reshape(-1)
    flat[:8] = [0.5, 1.5, 2.5, -0.5, -2.5, np.inf, -np.inf, np.nan]   # ties go to even
    return x


def _layouts():
    """(x shape, scale, zero point shape, axis, block) for the three forms."""
    rng = np.random.default_rng(4)
    yield (3, 4, 5), np.array(0.37, np.float32), (), 1, 0
    yield (3, 4, 5), np.array(1.0, np.float32), (), 1, 0   # x / scale = x: the ties stay ties
    yield (3, 4, 5), rng.uniform(0.1, 2, 4).astype(np.float32), (4,), 1, 0
    yield (3, 4, 5), rng.uniform(0.1, 2, 5).astype(np.float32), (5,), -1, 0
    yield (3, 8, 2), rng.uniform(0.1, 2, (3, 3, 2)).astype(np.float32), (3, 3, 2), 1, 3


def _zero_point(dtype, shape, rng):
    info = np.iinfo(dtype)
    return rng.integers(max(info.min, -100), min(info.max, 100), size=shape, endpoint=True).astype(dtype)


@pytest.mark.parametrize("dtype", TYPES)
@pytest.mark.parametrize("with_zp", [True, False])
def test_quantize_is_its_definition(dtype, with_zp):
    rng = np.random.default_rng(1)
    for shape, scale, zshape, axis, block in _layouts():
        x = _floats(shape, rng)
        zp = _zero_point(dtype, zshape, rng) if with_zp else None
        attrs = {"axis": axis} | ({"block_size": block} if block else {})
        inputs = ["x", "s"] + (["z"] if with_zp else [])
        inits = [helper.make_tensor("s", F, scale.shape, scale.reshape(-1).tolist())]
        if with_zp:
            inits.append(helper.make_tensor("z", _tt(dtype), zp.shape, zp.reshape(-1).tolist()))
        out_dtype = dtype if with_zp else np.uint8
        if not with_zp and dtype != np.uint8:
            attrs["output_dtype"] = _tt(dtype)
            out_dtype = dtype
        want = quantize_definition(x, scale, zp, out_dtype, axis, block)
        for place in ("inputs", "intermediate"):
            nodes = [helper.make_node("Neg", ["x"], ["xn"])] if place == "intermediate" else []
            nodes.append(helper.make_node("QuantizeLinear", ["xn" if nodes else "x"] + inputs[1:], ["y"],
                                          **attrs))
            data = model(nodes, [value("x", F, shape)], [value("y", _tt(out_dtype))], inits, opset=21)
            expect = quantize_definition(-x, scale, zp, out_dtype, axis, block) if place == "intermediate" \
                else want
            for what, out in run_everywhere(data, {"x": x}):
                assert out["y"].dtype == out_dtype and np.array_equal(out["y"], expect), (place, what)


@pytest.mark.parametrize("dtype", TYPES + [np.int32])
@pytest.mark.parametrize("with_zp", [True, False])
def test_dequantize_is_its_definition(dtype, with_zp):
    rng = np.random.default_rng(2)
    info = np.iinfo(dtype)
    for shape, scale, zshape, axis, block in _layouts():
        x = rng.integers(info.min, info.max, size=shape, endpoint=True).astype(dtype)
        x.reshape(-1)[:2] = [info.min, info.max]
        zp = _zero_point(dtype, zshape, rng) if with_zp and dtype != np.int32 else None
        attrs = {"axis": axis} | ({"block_size": block} if block else {})
        inits = [helper.make_tensor("s", F, scale.shape, scale.reshape(-1).tolist())]
        names = ["x", "s"]
        if zp is not None:
            inits.append(helper.make_tensor("z", _tt(dtype), zp.shape, zp.reshape(-1).tolist()))
            names.append("z")
        nodes = [helper.make_node("DequantizeLinear", names, ["y"], **attrs),
                 helper.make_node("Identity", ["y"], ["c1"]), helper.make_node("Neg", ["y"], ["c2"])]
        data = model(nodes, [value("x", _tt(dtype), shape)], [value("y", F), value("c1", F), value("c2", F)],
                     inits, opset=21)
        want = dequantize_definition(x, scale, zp, axis, block)
        for what, out in run_everywhere(data, {"x": x}):
            assert np.array_equal(bits(out["y"]), bits(want)), what
            assert np.array_equal(bits(out["c1"]), bits(want)), what


def test_q_dq_pair_agrees_with_onnx_runtime_and_the_reference():
    ort = pytest.importorskip("onnxruntime")
    rng = np.random.default_rng(3)
    for shape, scale, zshape, axis, block in _layouts():
        if block:
            continue   # (ONNX Runtime's blocked quantization needs opset 21 kernels for both)
        x = _floats(shape, rng)
        x[np.isnan(x) | np.isinf(x)] = 1.0
        zp = _zero_point(np.uint8, zshape, rng)
        inits = [helper.make_tensor("s", F, scale.shape, scale.reshape(-1).tolist()),
                 helper.make_tensor("z", TensorProto.UINT8, zp.shape, zp.reshape(-1).tolist())]
        nodes = [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"], axis=axis),
                 helper.make_node("DequantizeLinear", ["q", "s", "z"], ["y"], axis=axis)]
        data = model(nodes, [value("x", F, shape)], [value("q", TensorProto.UINT8), value("y", F)], inits,
                     opset=19)
        want = ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(None, {"x": x})
        ref = ReferenceEvaluator(data).run(None, {"x": x})
        got = so.load(data).run({"x": x})
        for other in (want, ref):
            assert np.array_equal(got["q"], other[0])
            np.testing.assert_allclose(got["y"], other[1], rtol=1e-6)


def test_errors():
    x = np.ones((2, 3), np.float32)
    bad = model([helper.make_node("QuantizeLinear", ["x", "s"], ["y"], axis=1)], [value("x", F, [2, 3])],
                [value("y", TensorProto.UINT8)],
                [helper.make_tensor("s", F, [2], [1.0, 2.0])], opset=13)
    with pytest.raises(ValueError, match=r"scale \(2,\) is neither one value nor one per element of axis 1"):
        so.load(bad).run({"x": x})
    bad = model([helper.make_node("DequantizeLinear", ["x", "s"], ["y"], output_dtype=TensorProto.FLOAT16)],
                [value("x", TensorProto.INT8, [2, 3])], [value("y", TensorProto.FLOAT16)],
                [helper.make_tensor("s", F, [], [1.0])], opset=23)
    with pytest.raises(so.UnsupportedModelError, match="output_dtype 10 is not supported"):
        so.load(bad)
