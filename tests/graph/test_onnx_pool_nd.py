"""ONNX MaxPool and AveragePool over 3 spatial axes, and AveragePool in the
forms torch's avg_pool2d refuses (a padding above half the kernel,
dilations): csrc/kernels/pool_nd.c, docs/onnx.md. Bit for bit against a
numpy float32 oracle of the written definition (taps in row-major order,
max as docs/maxpool.md, the average a serial float32 sum divided once by
the count), with strides, dilations, asymmetric padding, ceil_mode,
count_include_pad and special values; on an intermediate read by two nodes
and returned, both modes, every path, 1 and 2 threads; ONNX Runtime
within float32 rounding."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper  # noqa: E402

import samebits.onnx as so  # noqa: E402
from onnx_cases import bits, graph_model, run_everywhere  # noqa: E402

F = TensorProto.FLOAT
NAN = np.uint32(0x7FC00000).view(np.float32)


def _out_size(n, k, s, d, pb, pe, ceil):
    extent = (k - 1) * d + 1
    span = n + pb + pe - extent
    o = (-(-span // s) if ceil else span // s) + 1
    if ceil and (o - 1) * s >= n + pb:
        o -= 1
    return o


def oracle(x, kind, kernel, strides, dilations, pads, ceil, count_include_pad):
    dims = len(kernel)
    spatial = x.shape[2:]
    outs = [_out_size(spatial[d], kernel[d], strides[d], dilations[d], pads[d], pads[dims + d], ceil)
            for d in range(dims)]
    y = np.zeros(x.shape[:2] + tuple(outs), np.float32)
    for n, c in itertools.product(range(x.shape[0]), range(x.shape[1])):
        for o in itertools.product(*(range(k) for k in outs)):
            best, seen, all_nan = np.float32(-3.4028235e38), False, True
            total, count = np.float32(0.0), 0
            for j in itertools.product(*(range(k) for k in kernel)):
                pos = [o[d] * strides[d] - pads[d] + j[d] * dilations[d] for d in range(dims)]
                inside = all(0 <= pos[d] < spatial[d] for d in range(dims))
                padded = all(pos[d] < spatial[d] + pads[dims + d] for d in range(dims))
                if inside:
                    v = x[(n, c) + tuple(pos)]
                    seen = True
                    if not np.isnan(v):
                        if all_nan or v > best:
                            best = v
                        all_nan = False
                    with np.errstate(invalid="ignore"):
                        total = np.float32(total + v)
                count += padded if count_include_pad else inside
            if kind == "MaxPool":
                y[(n, c) + o] = NAN if seen and all_nan else best
            else:
                with np.errstate(all="ignore"):
                    r = np.float32(total / np.float32(count))
                y[(n, c) + o] = NAN if np.isnan(r) else r
    return y


CASES = [
    # kind, input shape, kernel, strides, dilations, pads, ceil_mode, count_include_pad
    ("MaxPool", (1, 2, 5, 6, 7), [2, 3, 2], [1, 2, 2], [1, 1, 2], [0, 1, 1, 1, 0, 1], 0, 0),
    ("MaxPool", (2, 1, 4, 5, 4), [3, 2, 2], [2, 2, 1], [1, 2, 1], [1, 0, 0, 1, 1, 0], 1, 0),
    ("AveragePool", (1, 2, 5, 6, 7), [2, 3, 3], [2, 1, 2], [1, 1, 1], [1, 1, 0, 0, 1, 2], 0, 0),
    ("AveragePool", (2, 1, 4, 5, 6), [3, 3, 2], [1, 2, 2], [1, 1, 1], [1, 1, 1, 1, 1, 1], 1, 1),
    ("AveragePool", (1, 2, 6, 6, 5), [2, 2, 2], [1, 1, 1], [2, 1, 2], [0, 0, 0, 0, 0, 0], 0, 1),
    # 2-D forms avg_pool2d refuses: padding above half the kernel, dilations
    ("AveragePool", (1, 3, 5, 5), [3, 3], [1, 1], [1, 1], [2, 2, 2, 2], 0, 0),
    ("AveragePool", (1, 3, 5, 5), [3, 3], [1, 1], [1, 1], [2, 2, 2, 2], 0, 1),
    ("AveragePool", (2, 2, 7, 6), [2, 3], [2, 1], [2, 2], [1, 0, 1, 2], 1, 1),
]


@pytest.mark.parametrize("case", range(len(CASES)))
def test_pool_nd(case):
    kind, shape, kernel, strides, dil, pads, ceil, cip = CASES[case]
    rng = np.random.default_rng(case)
    x = rng.standard_normal(shape).astype(np.float32)
    x.reshape(-1)[:6] = [np.nan, np.inf, -np.inf, -0.0, 1e-40, np.nan]
    attrs = {"kernel_shape": kernel, "strides": strides, "pads": pads, "ceil_mode": ceil}
    if any(d != 1 for d in dil):
        attrs["dilations"] = dil
    if kind == "AveragePool":
        attrs["count_include_pad"] = cip
    nodes = [helper.make_node("Neg", ["x"], ["xn"]), helper.make_node(kind, ["xn"], ["y"], **attrs),
             helper.make_node("Abs", ["y"], ["ya"]), helper.make_node("Neg", ["y"], ["yn"])]
    data = graph_model(nodes, {"x": (F, list(shape))},
                       {"y": (F, None), "ya": (F, None), "yn": (F, None)}, opset=19)
    want = oracle(-x, kind, kernel, strides, dil, pads, ceil, cip)
    negated = np.where(np.isnan(want), NAN, -want)
    for what, out in run_everywhere(data, {"x": x}):
        assert np.array_equal(bits(out["y"]), bits(want)), what
        assert np.array_equal(bits(out["yn"]), bits(negated)), what
    clean = np.nan_to_num(x, nan=0.5, posinf=3.0, neginf=-3.0)   # ONNX Runtime on finite input
    got = ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(["y"], {"x": clean})[0]
    mine = so.load(data).run({"x": clean})["y"]
    np.testing.assert_allclose(mine, got, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("p", [1, 2, 3])
def test_three_d_lp_pool(p):
    """3-D LpPool: over a depth of one it gives the 2-D LpPool's bits (held to
    its definition in test_onnx_lp_pool.py); over three axes ONNX Runtime's
    values within float32 rounding."""
    rng = np.random.default_rng(p)
    x = rng.standard_normal((2, 3, 1, 6, 5)).astype(np.float32)
    attrs = {"kernel_shape": [1, 2, 3], "strides": [1, 2, 1], "pads": [0, 1, 0, 0, 0, 1], "p": p}
    three = graph_model([helper.make_node("Neg", ["x"], ["xn"]), helper.make_node("LpPool", ["xn"], ["y"], **attrs),
                         helper.make_node("Abs", ["y"], ["ya"])],
                        {"x": (F, list(x.shape))}, {"y": (F, None), "ya": (F, None)}, opset=19)
    two = graph_model([helper.make_node("Neg", ["x"], ["xn"]),
                       helper.make_node("LpPool", ["xn"], ["y"], kernel_shape=[2, 3], strides=[2, 1],
                                        pads=[1, 0, 0, 1], p=p)],
                      {"x": (F, [2, 3, 6, 5])}, {"y": (F, None)}, opset=19)
    want = so.load(two, mode="exact").run({"x": x[:, :, 0]})["y"]
    for what, out in run_everywhere(three, {"x": x}):
        assert np.array_equal(bits(out["y"][:, :, 0]), bits(want)), what
    x3 = rng.standard_normal((1, 2, 4, 5, 4)).astype(np.float32)
    model = graph_model([helper.make_node("LpPool", ["x"], ["y"], kernel_shape=[2, 2, 3], strides=[2, 1, 1],
                                          p=p)], {"x": (F, list(x3.shape))}, {"y": (F, None)}, opset=19)
    got = ort.InferenceSession(model, providers=["CPUExecutionProvider"]).run(["y"], {"x": x3})[0]
    np.testing.assert_allclose(so.load(model).run({"x": x3})["y"], got, rtol=1e-5, atol=1e-6)


def test_rank_mismatch_is_clear():
    data = graph_model([helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[2, 2, 2])],
                       {"x": (F, None)}, {"y": (F, None)}, opset=19)
    with pytest.raises(ValueError, match="X must be 5-D"):
        so.load(data).run({"x": np.zeros((1, 1, 3, 3), np.float32)})


def _argmax_oracle(x, kernel, strides, pads, column_major):
    """MaxPool's Indices: the kept tap's flat position in the input (the
    first tap inside when every one is NaN), padding not counted."""
    dims = len(kernel)
    spatial = x.shape[2:]
    outs = [_out_size(spatial[d], kernel[d], strides[d], 1, pads[d], pads[dims + d], 0)
            for d in range(dims)]
    idx = np.zeros(x.shape[:2] + tuple(outs), np.int64)
    plane = int(np.prod(spatial))
    for n, c in itertools.product(range(x.shape[0]), range(x.shape[1])):
        for o in itertools.product(*(range(k) for k in outs)):
            best, keep, first = None, -1, -1
            for j in itertools.product(*(range(k) for k in kernel)):
                pos = [o[d] * strides[d] - pads[d] + j[d] for d in range(dims)]
                if not all(0 <= pos[d] < spatial[d] for d in range(dims)):
                    continue
                order = reversed(range(dims)) if column_major else range(dims)
                at = 0
                for d in order:
                    at = at * spatial[d] + pos[d]
                if first < 0:
                    first = at
                v = x[(n, c) + tuple(pos)]
                if not np.isnan(v) and (best is None or v > best):
                    best, keep = v, at
            idx[(n, c) + o] = (n * x.shape[1] + c) * plane + (keep if keep >= 0 else first)
    return idx


@pytest.mark.parametrize("shape,kernel,strides,pads", [
    ((2, 3, 5, 6), [2, 3], [2, 1], [0, 1, 1, 1]),
    ((1, 2, 4, 5, 3), [2, 2, 2], [1, 2, 1], [1, 0, 0, 0, 1, 1]),
])
@pytest.mark.parametrize("storage_order", [0, 1])
def test_max_pool_indices(shape, kernel, strides, pads, storage_order):
    rng = np.random.default_rng(len(shape) + storage_order)
    x = rng.standard_normal(shape).astype(np.float32)
    x.reshape(-1)[:3] = [np.nan, np.inf, -0.0]
    attrs = {"kernel_shape": kernel, "strides": strides, "pads": pads}
    nodes = [helper.make_node("Identity", ["x"], ["xi"]),
             helper.make_node("MaxPool", ["xi"], ["y", "i"], storage_order=storage_order, **attrs),
             helper.make_node("MaxPool", ["xi"], ["y_only"], **attrs),
             helper.make_node("Identity", ["i"], ["i2"])]
    data = graph_model(nodes, {"x": (F, list(shape))},
                       {"y": (F, None), "i": (TensorProto.INT64, None), "y_only": (F, None),
                        "i2": (TensorProto.INT64, None)}, opset=12)
    want_i = _argmax_oracle(x, kernel, strides, pads, storage_order == 1)
    want_y = oracle(x, "MaxPool", kernel, strides, [1] * len(kernel), pads, 0, 0)
    for what, out in run_everywhere(data, {"x": x}):
        assert np.array_equal(out["i"], want_i) and np.array_equal(out["i2"], want_i), what
        assert np.array_equal(bits(out["y"]), bits(want_y)), what
        assert np.array_equal(bits(out["y_only"]), bits(out["y"])), what   # the 2-D kernel's bits
    clean = rng.standard_normal(shape).astype(np.float32)
    got = ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(["y", "i"], {"x": clean})
    mine = so.load(data).run({"x": clean})
    assert np.array_equal(mine["y"], got[0]) and np.array_equal(mine["i"], got[1])
