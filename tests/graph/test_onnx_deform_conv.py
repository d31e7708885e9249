"""ONNX DeformConv (opsets 19 and 22; csrc/kernels/deform_conv.c,
docs/onnx.md): bit for bit against a numpy float32 oracle of the written
steps (the sampling point as one float32 add, the bilinear sample's four
products summed left to right, the mask, a serial sum over channels and taps
from +0, then the bias), with groups, offset groups, strides, dilations,
pads, points outside the image, integer points, NaN offsets and special
values; X, weights, offsets and mask computed by other nodes, the output
read by two nodes and returned, both modes, every path, 1 and 2 threads;
ONNX Runtime and onnx.reference within float32 rounding; bad shapes are
clear errors."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

import samebits.onnx as so  # noqa: E402
from onnx_cases import bits, graph_model, run_everywhere  # noqa: E402

F = TensorProto.FLOAT
NAN = np.uint32(0x7FC00000).view(np.float32)
f32 = np.float32


def sample(plane, p, q):
    h, w = plane.shape
    if np.isnan(p) or np.isnan(q):
        return f32(np.nan)
    if p <= -1 or p >= h or q <= -1 or q >= w:
        return f32(0)
    h0, w0 = int(np.floor(p)), int(np.floor(q))
    lh, lw = f32(p - f32(h0)), f32(q - f32(w0))
    hh, hw = f32(f32(1) - lh), f32(f32(1) - lw)

    def at(y, x):
        return plane[y, x] if 0 <= y < h and 0 <= x < w else f32(0)

    terms = [(f32(hh * hw), at(h0, w0)), (f32(hh * lw), at(h0, w0 + 1)),
             (f32(lh * hw), at(h0 + 1, w0)), (f32(lh * lw), at(h0 + 1, w0 + 1))]
    v = f32(terms[0][0] * terms[0][1])
    for wt, px in terms[1:]:
        v = f32(v + f32(wt * px))
    return v


def oracle(x, w, off, b, mask, strides, pads, dil, group, offset_group):
    n, c, h, wd = x.shape
    m, cg, kh, kw = w.shape
    oh, ow = off.shape[2:]
    y = np.zeros((n, m, oh, ow), np.float32)
    per_og = c // offset_group
    with np.errstate(all="ignore"):
        for b_, mi, oy, ox in itertools.product(range(n), range(m), range(oh), range(ow)):
            first = mi // (m // group) * cg
            acc = f32(0)
            for ci, i, j in itertools.product(range(cg), range(kh), range(kw)):
                c_ = first + ci
                t = c_ // per_og * kh * kw + i * kw + j
                p = f32(f32(oy * strides[0] - pads[0] + i * dil[0]) + off[b_, 2 * t, oy, ox])
                q = f32(f32(ox * strides[1] - pads[1] + j * dil[1]) + off[b_, 2 * t + 1, oy, ox])
                v = sample(x[b_, c_], p, q)
                if mask is not None:
                    v = f32(v * mask[b_, t, oy, ox])
                acc = f32(acc + f32(w[mi, ci, i, j] * v))
            if b is not None:
                acc = f32(acc + b[mi])
            y[b_, mi, oy, ox] = acc
    return np.where(np.isnan(y), NAN, y)


CASES = [
    # N, C, H, W, M, kh, kw, strides, pads, dilations, group, offset_group, mask, bias
    (1, 1, 4, 4, 1, 2, 2, [1, 1], [0, 0, 0, 0], [1, 1], 1, 1, False, False),
    (2, 4, 5, 6, 4, 3, 3, [1, 2], [1, 1, 1, 0], [1, 1], 2, 2, True, True),
    (1, 2, 6, 5, 3, 2, 3, [2, 1], [0, 1, 2, 1], [2, 1], 1, 2, True, False),
    (1, 3, 3, 4, 6, 1, 2, [1, 1], [1, 0, 0, 1], [1, 2], 3, 1, False, True),
]


def _shapes(case):
    n, c, h, w, m, kh, kw, st, pads, dil, group, og, has_mask, has_bias = CASES[case]
    oh = (h + pads[0] + pads[2] - ((kh - 1) * dil[0] + 1)) // st[0] + 1
    ow = (w + pads[1] + pads[3] - ((kw - 1) * dil[1] + 1)) // st[1] + 1
    return oh, ow


@pytest.mark.parametrize("case", range(len(CASES)))
def test_deform_conv(case):
    n, c, h, w, m, kh, kw, st, pads, dil, group, og, has_mask, has_bias = CASES[case]
    oh, ow = _shapes(case)
    rng = np.random.default_rng(case)
    x = rng.standard_normal((n, c, h, w)).astype(np.float32)
    wt = rng.standard_normal((m, c // group, kh, kw)).astype(np.float32)
    off = (rng.standard_normal((n, og * kh * kw * 2, oh, ow)) * 1.5).astype(np.float32)
    off.reshape(-1)[::7] = np.round(off.reshape(-1)[::7])          # integer points
    off.reshape(-1)[3] = -4.0                                      # outside the image
    off.reshape(-1)[5] = 0.5
    bias = rng.standard_normal(m).astype(np.float32)
    mask = rng.uniform(0, 1, (n, og * kh * kw, oh, ow)).astype(np.float32)
    x.reshape(-1)[:3] = [-0.0, 1e-40, 3e38]
    if case == 1:
        off.reshape(-1)[10] = np.nan
        x.reshape(-1)[7] = np.inf
    # every operand computed by another node: the graph's inputs are negated
    feeds = {"xn": -x, "wn": -wt, "offn": -off}
    nodes = [helper.make_node("Neg", ["xn"], ["x"]), helper.make_node("Neg", ["wn"], ["w"]),
             helper.make_node("Neg", ["offn"], ["off"])]
    ins = ["x", "w", "off"]
    inputs = {"xn": (F, list(x.shape)), "wn": (F, list(wt.shape)), "offn": (F, list(off.shape))}
    inits = {}
    if has_bias:
        ins.append("b")
        inits["b"] = bias
    if has_mask:
        if not has_bias:
            ins.append("")
        nodes.append(helper.make_node("Neg", ["maskn"], ["mask"]))
        ins.append("mask")
        feeds["maskn"] = -mask
        inputs["maskn"] = (F, list(mask.shape))
    nodes += [helper.make_node("DeformConv", ins, ["y"], strides=st, pads=pads, dilations=dil, group=group,
                               offset_group=og, kernel_shape=[kh, kw]),
              helper.make_node("Abs", ["y"], ["ya"]), helper.make_node("Neg", ["y"], ["yn"])]
    data = graph_model(nodes, inputs, {"y": (F, None), "ya": (F, None), "yn": (F, None)}, inits=inits, opset=22)
    want = oracle(x, wt, off, bias if has_bias else None, mask if has_mask else None, st, pads, dil, group, og)
    for what, out in run_everywhere(data, feeds):
        assert np.array_equal(bits(out["y"]), bits(want)), what
        assert np.array_equal(bits(out["yn"]), bits(np.where(np.isnan(want), NAN, -want))), what
        assert np.array_equal(bits(out["ya"]), bits(np.where(np.isnan(want), NAN, np.abs(want)))), what
    # ONNX Runtime and onnx.reference on finite values (both differ in the order of the sums)
    finite = {k: np.nan_to_num(v, nan=0.25, posinf=2.0, neginf=-2.0) for k, v in feeds.items()}
    finite["xn"].reshape(-1)[:3] = 0.5
    mine = so.load(data).run(finite)["y"]
    got = ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(["y"], finite)[0]
    np.testing.assert_allclose(mine, got, rtol=1e-5, atol=1e-5)
    ref = ReferenceEvaluator(data).run(["y"], finite)[0]
    np.testing.assert_allclose(mine, ref, rtol=1e-5, atol=1e-5)


def test_deform_conv_constant_weights_opset19():
    rng = np.random.default_rng(7)
    x = rng.standard_normal((1, 2, 5, 5)).astype(np.float32)
    wt = rng.standard_normal((2, 2, 3, 3)).astype(np.float32)
    off = rng.standard_normal((1, 18, 3, 3)).astype(np.float32)
    nodes = [helper.make_node("DeformConv", ["x", "w", "off"], ["y"])]
    data = graph_model(nodes, {"x": (F, [1, 2, 5, 5]), "off": (F, [1, 18, 3, 3])}, {"y": (F, None)},
                       inits={"w": wt}, opset=19)
    want = oracle(x, wt, off, None, None, [1, 1], [0, 0, 0, 0], [1, 1], 1, 1)
    for what, out in run_everywhere(data, {"x": x, "off": off}):
        assert np.array_equal(bits(out["y"]), bits(want)), what


def test_deform_conv_bad_inputs():
    nodes = [helper.make_node("DeformConv", ["x", "w", "off"], ["y"])]
    data = graph_model(nodes, {"x": (F, None), "w": (F, None), "off": (F, None)}, {"y": (F, None)}, opset=19)
    x, w = np.zeros((1, 2, 4, 4), np.float32), np.zeros((1, 2, 2, 2), np.float32)
    with pytest.raises(ValueError, match=r"offset \(1, 8, 3, 3\) must be .* = \(1, 18, 2, 2\)"):
        so.load(data).run({"x": x, "w": np.zeros((1, 2, 3, 3), np.float32), "off": np.zeros((1, 8, 3, 3),
                                                                                           np.float32)})
    with pytest.raises(ValueError, match=r"W .* must be \(M, C / group, kH, kW\)"):
        so.load(data).run({"x": x, "w": np.zeros((1, 3, 2, 2), np.float32), "off": np.zeros((1, 8, 3, 3),
                                                                                           np.float32)})
    with pytest.raises(so.UnsupportedModelError, match="two spatial axes"):
        so.load(data).run({"x": np.zeros((1, 2, 4), np.float32), "w": np.zeros((1, 2, 2), np.float32),
                           "off": np.zeros((1, 4, 3), np.float32)})
    bad = [helper.make_node("DeformConv", ["x", "w", "off"], ["y"], strides=[1, 1, 1])]
    with pytest.raises(so.UnsupportedModelError, match="strides must have 2 values"):
        so.load(graph_model(bad, {"x": (F, None), "w": (F, None), "off": (F, None)}, {"y": (F, None)}, opset=19))


def test_samples_outside_the_input_ignore_its_nan():
    """A sampling point wholly outside the input reads only zero padding, so
    it adds 0 even where the input holds NaN (the oracle's rule; ONNX Runtime
    gives NaN there, seed 942 of the differential pass). A point partly
    inside reads the NaN."""
    offsets = f32([[0.0067, -1.161], [1.59, -0.81], [-2.1, 0.3], [0.78, 0.47], [0.3, -0.99]])
    n = len(offsets)
    x = np.full((n, 1, 1, 1), np.nan, np.float32)
    w = f32([[[[1.5]]]])
    b = f32([0.25])
    mask = np.full((n, 1, 1, 1), 0.5, np.float32)
    nodes = [helper.make_node("DeformConv", ["x", "w", "o", "b", "m"], ["y"], kernel_shape=[1, 1])]
    data = graph_model(nodes, {k: (F, None) for k in ("x", "w", "o", "b", "m")}, {"y": (F, None)},
                       opset=22)
    feeds = {"x": x, "w": w, "o": offsets.reshape(n, 2, 1, 1), "b": b, "m": mask}
    want = np.array([b[0], b[0], b[0], NAN, NAN], np.float32).reshape(n, 1, 1, 1)
    assert [float(sample(x[i, 0], *offsets[i])) == 0 for i in range(3)] == [True] * 3
    for what, out in run_everywhere(data, feeds):
        assert np.array_equal(bits(out["y"]), bits(want)), what
