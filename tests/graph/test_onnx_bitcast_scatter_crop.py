"""ONNX BitCast (opset 26), TensorScatter (opset 24) and CenterCropPad
(opset 18), docs/onnx.md: operators that move bytes. Each is held to a
numpy oracle of its ONNX text (numpy's view for BitCast, the spec's
pseudocode for TensorScatter, slicing and zero padding for CenterCropPad),
on graph inputs and on intermediates, read by two nodes and returned, in
both modes, every path, 1 and 2 threads; ONNX Runtime agrees; bad operands
are clear errors. BitCast keeps a NaN's payload: its result is the bits."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

import samebits.onnx as so  # noqa: E402
from onnx_cases import graph_model, run_everywhere  # noqa: E402

F, I64, I32, I16, U16, I8, U8, B = (TensorProto.FLOAT, TensorProto.INT64, TensorProto.INT32,
                                    TensorProto.INT16, TensorProto.UINT16, TensorProto.INT8,
                                    TensorProto.UINT8, TensorProto.BOOL)
NP = {F: np.float32, I64: np.int64, I32: np.int32, I16: np.int16, U16: np.uint16, I8: np.int8,
      U8: np.uint8, B: np.bool_}


def _same(got, want, what=""):
    assert got.dtype == want.dtype and got.shape == want.shape, (what, got.dtype, got.shape)
    assert np.array_equal(got.view(np.uint8), want.view(np.uint8)), what


def _ort(data, feeds, names):
    return ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(names, feeds)


@pytest.mark.parametrize("src,dst", [(F, I32), (I32, F), (U16, I16), (I8, U8), (B, U8)])
def test_bitcast(src, dst):
    rng = np.random.default_rng(src * 10 + dst)
    if src == F:
        x = rng.standard_normal((3, 5)).astype(np.float32)
        x.reshape(-1)[:5] = [np.inf, -0.0, 1e-40, np.nan, -np.nan]
    elif src == B:
        x = rng.random((3, 5)) < 0.5
    else:
        info = np.iinfo(NP[src])
        x = rng.integers(info.min, info.max, (3, 5), endpoint=True).astype(NP[src])
        if src == I32:
            x.reshape(-1)[:2] = [0x7FC00001, np.int32(-0x00400001)]   # NaNs with payloads
    # on an intermediate (a view of the input), returned and read by a second node
    nodes = [helper.make_node("Reshape", ["x", "shape"], ["xr"]),
             helper.make_node("BitCast", ["xr"], ["y"], to=dst),
             helper.make_node("Identity", ["y"], ["y2"]), helper.make_node("Shape", ["y"], ["s"])]
    data = graph_model(nodes, {"x": (src, [3, 5])}, {"y": (dst, None), "y2": (dst, None),
                                                      "s": (I64, None)},
                       inits={"shape": np.array([5, 3], np.int64)}, opset=26)
    want = x.reshape(5, 3).view(NP[dst])
    for what, out in run_everywhere(data, {"x": x}):
        _same(out["y"], want, what)
        _same(out["y2"], want, what)
        assert out["s"].tolist() == [5, 3]
    _same(ReferenceEvaluator(data).run(["y"], {"x": x})[0], want)
    if src != B:    # (ONNX Runtime 1.32 has no BitCast from bool)
        _same(_ort(data, {"x": x}, ["y"])[0], want)


def test_bitcast_refusals():
    for src, dst, message in [(F, I64, "widths differ"), (I32, B, "is not supported")]:
        data = graph_model([helper.make_node("BitCast", ["x"], ["y"], to=dst)], {"x": (src, [2])},
                           {"y": (dst, None)}, opset=26)
        with pytest.raises((ValueError, so.UnsupportedModelError), match=message):
            so.load(data).run({"x": np.zeros(2, NP[src])})


def _scatter_oracle(past, update, write, axis, circular):
    out = past.copy()
    axis = axis % past.ndim
    max_len, length = past.shape[axis], update.shape[axis]
    for prefix in np.ndindex(past.shape[:axis]):
        start = 0 if write is None else int(write[prefix[0]])
        for s in range(length):
            at = (start + s) % max_len if circular else start + s
            out[prefix + (at,)] = update[prefix + (s,)]
    return out


@pytest.mark.parametrize("axis", [-2, 2, 1])
@pytest.mark.parametrize("mode", ["linear", "circular"])
@pytest.mark.parametrize("with_indices", [False, True])
def test_tensor_scatter(axis, mode, with_indices):
    rng = np.random.default_rng(7)
    past = rng.standard_normal((2, 3, 6, 4)).astype(np.float32)
    up_shape = [2, 3, 6, 4]
    up_shape[axis % 4] = 2
    update = rng.standard_normal(up_shape).astype(np.float32)
    update.reshape(-1)[:3] = [np.inf, -0.0, 1e-40]
    cache_len = past.shape[axis % 4]
    write = np.array([cache_len - 2, 1] if mode == "linear" else [cache_len - 1, 0], np.int64)
    ins = ["pastn", "updn"] + (["w"] if with_indices else [])
    nodes = [helper.make_node("Neg", ["past"], ["pastn"]), helper.make_node("Neg", ["upd"], ["updn"]),
             helper.make_node("TensorScatter", ins, ["y"], axis=axis, mode=mode),
             helper.make_node("Neg", ["y"], ["yn"]), helper.make_node("Abs", ["y"], ["ya"])]
    inputs = {"past": (F, list(past.shape)), "upd": (F, up_shape)}
    feeds = {"past": past, "upd": update}
    if with_indices:
        inputs["w"] = (I64, [2])
        feeds["w"] = write
    data = graph_model(nodes, inputs, {"y": (F, None), "yn": (F, None), "ya": (F, None)}, opset=24)
    want = _scatter_oracle(-past, -update, write if with_indices else None, axis, mode == "circular")
    for what, out in run_everywhere(data, feeds):
        _same(out["y"], want, what)
        _same(out["yn"], -want, what)
    _same(_ort(data, feeds, ["y"])[0], want)


def test_tensor_scatter_int64_cache_and_range_error():
    past = np.arange(2 * 5, dtype=np.int64).reshape(2, 5)
    update = np.array([[100], [200]], np.int64)
    nodes = [helper.make_node("TensorScatter", ["past", "upd", "w"], ["y"], axis=1)]
    data = graph_model(nodes, {"past": (I64, [2, 5]), "upd": (I64, [2, 1]), "w": (I64, [2])},
                       {"y": (I64, None)}, opset=24)
    feeds = {"past": past, "upd": update, "w": np.array([4, 0], np.int64)}
    _same(so.load(data).run(feeds)["y"], _scatter_oracle(past, update, feeds["w"], 1, False))
    with pytest.raises(IndexError, match="out of range"):
        so.load(data).run(feeds | {"w": np.array([5, 0], np.int64)})


def _crop_pad_oracle(x, shape, axes):
    out = x
    for k, a in enumerate(axes):
        a %= x.ndim
        n, t = out.shape[a], int(shape[k])
        if n > t:
            start = (n - t) // 2
            out = np.take(out, np.arange(start, start + t), axis=a)
        elif n < t:
            widths = [(0, 0)] * x.ndim
            widths[a] = ((t - n) // 2, t - n - (t - n) // 2)
            out = np.pad(out, widths)
    return out


@pytest.mark.parametrize("shape,axes", [([4, 9, 2], None), ([2, 7], [0, -2]), ([6], [-1]),
                                         ([5, 5, 3], None)])
@pytest.mark.parametrize("dtype", [F, I64])
def test_center_crop_pad(shape, axes, dtype):
    rng = np.random.default_rng(3)
    x = (rng.standard_normal((5, 6, 3)) * 10).astype(NP[dtype])
    attrs = {} if axes is None else {"axes": axes}
    nodes = [helper.make_node("Identity", ["x"], ["xi"]),
             helper.make_node("CenterCropPad", ["xi", "shape"], ["y"], **attrs),
             helper.make_node("Identity", ["y"], ["y2"]), helper.make_node("Shape", ["y"], ["s"])]
    data = graph_model(nodes, {"x": (dtype, [5, 6, 3]), "shape": (I64, [len(shape)])},
                       {"y": (dtype, None), "y2": (dtype, None), "s": (I64, None)}, opset=18)
    feeds = {"x": x, "shape": np.array(shape, np.int64)}
    want = _crop_pad_oracle(x, shape, axes if axes is not None else range(3))
    for what, out in run_everywhere(data, feeds):
        _same(out["y"], want, what)
        _same(out["y2"], want, what)
    _same(_ort(data, feeds, ["y"])[0], want)


def test_center_crop_pad_bad_shape():
    data = graph_model([helper.make_node("CenterCropPad", ["x", "shape"], ["y"], axes=[0, 1])],
                       {"x": (F, [2, 3]), "shape": (I64, [3])}, {"y": (F, None)}, opset=18)
    with pytest.raises(ValueError, match="shape has 3 values for 2 axes"):
        so.load(data).run({"x": np.zeros((2, 3), np.float32), "shape": np.array([1, 2, 3], np.int64)})
