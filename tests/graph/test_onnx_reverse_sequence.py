"""ONNX ReverseSequence (docs/onnx.md): per batch entry the first
sequence_lens[b] elements along the time axis reversed, the rest copied,
bits untouched (NaN payloads kept). Against numpy, with both axis orders,
float32 and int64, on graph inputs, an intermediate (Identity after Neg)
and two consumers, both modes, every path, 1 and 2 threads; against ONNX
Runtime and onnx.reference."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("onnx")

from onnx import TensorProto, helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

import samebits.onnx as so  # noqa: E402
from onnx_cases import bits, model, run_everywhere, value  # noqa: E402


def definition(x, lens, batch_axis, time_axis):
    y = x.copy()
    for b, n in enumerate(lens):
        for t in range(n):
            src = [slice(None)] * x.ndim
            dst = [slice(None)] * x.ndim
            src[batch_axis] = dst[batch_axis] = b
            src[time_axis], dst[time_axis] = n - 1 - t, t
            y[tuple(dst)] = x[tuple(src)]
    return y


@pytest.mark.parametrize("batch_axis,time_axis", [(1, 0), (0, 1)])
@pytest.mark.parametrize("dtype", [np.float32, np.int64])
def test_reverse_sequence(batch_axis, time_axis, dtype):
    ort = pytest.importorskip("onnxruntime")
    rng = np.random.default_rng(batch_axis)
    shape = [0, 0, 3]
    shape[batch_axis], shape[time_axis] = 4, 5
    x = (rng.standard_normal(shape) * 10).astype(dtype)
    if dtype == np.float32:
        x.reshape(-1)[:2] = np.array([0x7FC12345, 0x80000000], np.uint32).view(np.float32)
    lens = np.array([5, 0, 3, 1], np.int64)
    tt = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    lens_init = helper.make_tensor("lens", TensorProto.INT64, [4], lens.tolist())
    want = definition(x, lens, batch_axis, time_axis)
    for place in ("inputs", "intermediate", "consumers"):
        nodes = []
        src = "x"
        if place == "intermediate":
            nodes += [helper.make_node("Neg", ["x"], ["xn"]), helper.make_node("Neg", ["xn"], ["xnn"])]
            src = "xnn"
        nodes.append(helper.make_node("ReverseSequence", [src, "lens"], ["y"], batch_axis=batch_axis,
                                      time_axis=time_axis))
        outs = [value("y", tt)]
        if place == "consumers":
            nodes += [helper.make_node("Identity", ["y"], ["c1"]), helper.make_node("Neg", ["y"], ["c2"])]
            outs += [value("c1", tt), value("c2", tt)]
        data = model(nodes, [value("x", tt, shape)], outs, [lens_init], opset=10)
        expect = want if place != "intermediate" else definition(-(-x), lens, batch_axis, time_axis)
        for what, out in run_everywhere(data, {"x": x}):
            got = out["y"]
            if dtype == np.float32 and place != "intermediate":
                assert np.array_equal(bits(got), bits(expect)), (place, what)
            else:
                assert np.array_equal(got, expect, equal_nan=dtype == np.float32), (place, what)
        if place == "inputs":
            with_ort = ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(None, {"x": x})
            for other in (with_ort[0], ReferenceEvaluator(data).run(None, {"x": x})[0]):
                assert np.array_equal(got, other, equal_nan=dtype == np.float32)


def test_a_length_out_of_range_is_an_error():
    x = np.zeros((3, 2), np.float32)
    data = model([helper.make_node("ReverseSequence", ["x", "lens"], ["y"])],
                 [value("x", TensorProto.FLOAT, [3, 2])], [value("y", TensorProto.FLOAT)],
                 [helper.make_tensor("lens", TensorProto.INT64, [2], [4, 1])], opset=10)
    with pytest.raises(ValueError, match=r"sequence_lens\[0\] = 4 is outside \[0, 3\]"):
        so.load(data).run({"x": x})
