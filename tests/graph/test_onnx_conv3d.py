"""ONNX Conv over three spatial axes (csrc/kernels/conv3d.c; docs/onnx.md,
docs/convolution.md's order with a depth axis): bit for bit against a numpy
float32 oracle of that order (a serial sum from +0 over channel, depth,
row, column; padding taps real products with +0; then one add of the bias
and the activation), with groups, strides, dilations, asymmetric and
automatic padding, special values, constant and computed weights, a Relu
the graph fuses into it; on an intermediate read by two nodes and returned,
both modes, every path, 1 and 2 threads; ONNX Runtime within float32
rounding."""
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


def oracle(x, w, b, strides, dil, pads, group, relu):
    n, c = x.shape[:2]
    cout, cg = w.shape[:2]
    k = w.shape[2:]
    outs = [(x.shape[2 + d] + pads[d] + pads[3 + d] - ((k[d] - 1) * dil[d] + 1)) // strides[d] + 1
            for d in range(3)]
    y = np.zeros((n, cout, *outs), np.float32)
    og = cout // group
    with np.errstate(all="ignore"):
        for b_, oc in itertools.product(range(n), range(cout)):
            g = oc // og
            for o in itertools.product(*(range(v) for v in outs)):
                acc = np.float32(0.0)
                for ci in range(cg):
                    for j in itertools.product(*(range(v) for v in k)):
                        pos = [o[d] * strides[d] + j[d] * dil[d] - pads[d] for d in range(3)]
                        inside = all(0 <= pos[d] < x.shape[2 + d] for d in range(3))
                        v = x[(b_, g * cg + ci, *pos)] if inside else np.float32(0.0)
                        acc = np.float32(acc + np.float32(w[(oc, ci, *j)] * v))
                if b is not None:
                    acc = np.float32(acc + b[oc])
                if relu:
                    acc = np.float32(0.0) if acc <= 0 else acc
                y[(b_, oc, *o)] = NAN if np.isnan(acc) else acc
    return y


CASES = [
    # x shape, w shape, strides, dilations, pads, group, bias, relu, computed weights
    ((1, 2, 4, 5, 4), (3, 2, 2, 3, 2), [1, 1, 1], [1, 1, 1], [0, 1, 0, 1, 1, 0], 1, True, False, False),
    ((2, 4, 5, 4, 4), (4, 2, 3, 2, 2), [2, 1, 2], [1, 2, 1], [1, 0, 1, 1, 1, 0], 2, False, True, False),
    ((1, 3, 3, 4, 5), (2, 3, 1, 2, 3), [1, 2, 1], [2, 1, 1], [1, 1, 1, 1, 0, 0], 1, True, True, True),
    ((1, 2, 4, 4, 4), (2, 1, 3, 3, 3), [1, 1, 1], [1, 1, 1], "SAME_UPPER", 2, True, False, True),
]


@pytest.mark.parametrize("case", range(len(CASES)))
def test_conv3d(case):
    xs, ws, strides, dil, pads, group, with_bias, relu, computed = CASES[case]
    rng = np.random.default_rng(case)
    x = rng.standard_normal(xs).astype(np.float32)
    x.reshape(-1)[:4] = [np.inf, -0.0, 1e-40, np.nan]
    w = (rng.standard_normal(ws) * 0.5).astype(np.float32)
    b = rng.standard_normal(ws[0]).astype(np.float32)
    attrs = {"strides": strides, "dilations": dil, "group": group}
    if pads == "SAME_UPPER":
        attrs["auto_pad"] = "SAME_UPPER"
        total = [k - 1 for k in ws[2:]]          # stride 1, dilation 1
        pads = [t // 2 for t in total] + [t - t // 2 for t in total]
    else:
        attrs["pads"] = pads
    inputs = {"x": (F, list(xs))}
    inits = {}
    if computed:
        inputs["w"] = (F, list(ws))
    else:
        inits["w"] = w
    conv_in = ["xn", "wn" if computed else "w"] + (["b"] if with_bias else [])
    if with_bias:
        inits["b"] = b
    nodes = [helper.make_node("Neg", ["x"], ["xn"])]
    if computed:
        nodes.append(helper.make_node("Identity", ["w"], ["wn"]))
    nodes.append(helper.make_node("Conv", conv_in, ["c"], **attrs))
    nodes += [helper.make_node("Relu" if relu else "Identity", ["c"], ["y"]),
              helper.make_node("Neg", ["y"], ["yn"]), helper.make_node("Abs", ["y"], ["ya"])]
    data = graph_model(nodes, inputs, {"y": (F, None), "yn": (F, None), "ya": (F, None)}, inits=inits)
    feeds = {"x": x} | ({"w": w} if computed else {})
    want = oracle(-x, w, b if with_bias else None, strides, dil, pads, group, relu)
    negated = np.where(np.isnan(want), NAN, -want)
    for what, out in run_everywhere(data, feeds):
        assert np.array_equal(bits(out["y"]), bits(want)), what
        assert np.array_equal(bits(out["yn"]), bits(negated)), what
    finite = {"x": np.nan_to_num(x, nan=0.5, posinf=2.0)} | ({"w": w} if computed else {})
    got = ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(["y"], finite)[0]
    np.testing.assert_allclose(so.load(data).run(finite)["y"], got, rtol=1e-5, atol=1e-5)


def test_conv3d_bad_shapes_are_clear():
    nodes = [helper.make_node("Conv", ["x", "w"], ["y"], group=2)]
    data = graph_model(nodes, {"x": (F, None), "w": (F, None)}, {"y": (F, None)})
    with pytest.raises(ValueError, match="do not fit group=2"):
        so.load(data).run({"x": np.zeros((1, 3, 2, 2, 2), np.float32),
                           "w": np.zeros((2, 1, 1, 1, 1), np.float32)})


@pytest.mark.parametrize("strides,dil,pads,opad,group,computed", [
    ([1, 1, 1], [1, 1, 1], [0, 0, 0, 0, 0, 0], [0, 0, 0], 1, False),
    ([2, 1, 2], [1, 2, 1], [1, 0, 1, 0, 1, 0], [1, 0, 0], 2, True),
])
def test_conv_transpose_3d(strides, dil, pads, opad, group, computed):
    """3-D ConvTranspose: the convolution of the zero-stuffed, padded input
    with the swapped and flipped weights (the 2-D definition over three
    axes), bit for bit against test_conv3d's oracle run that way; ONNX
    Runtime within float32 rounding."""
    rng = np.random.default_rng(3)
    c, mg = 4, 3
    x = rng.standard_normal((1, c, 3, 4, 3)).astype(np.float32)
    w = (rng.standard_normal((c, mg, 2, 3, 2)) * 0.5).astype(np.float32)
    b = rng.standard_normal(mg * group).astype(np.float32)
    attrs = {"strides": strides, "dilations": dil, "pads": pads, "output_padding": opad, "group": group}
    inputs = {"x": (F, list(x.shape))}
    inits = {"b": b}
    if computed:
        inputs["w"] = (F, list(w.shape))
    else:
        inits["w"] = w
    nodes = [helper.make_node("Neg", ["x"], ["xn"]),
             helper.make_node("ConvTranspose", ["xn", "w", "b"], ["y"], **attrs),
             helper.make_node("Neg", ["y"], ["yn"])]
    data = graph_model(nodes, inputs, {"y": (F, None), "yn": (F, None)}, inits=inits)
    feeds = {"x": x} | ({"w": w} if computed else {})
    # the oracle: z = -x with stride - 1 zeros between, the swapped and flipped weights
    k = w.shape[2:]
    z = np.zeros((1, c) + tuple((x.shape[2 + d] - 1) * strides[d] + 1 for d in range(3)), np.float32)
    z[:, :, ::strides[0], ::strides[1], ::strides[2]] = -x
    cg = c // group
    wt = np.zeros((mg * group, cg) + k, np.float32)
    for g in range(group):
        for m in range(mg):
            for cc in range(cg):
                wt[g * mg + m, cc] = w[g * cg + cc, m][::-1, ::-1, ::-1]
    lo = [(k[d] - 1) * dil[d] - pads[d] for d in range(3)]
    hi = [(k[d] - 1) * dil[d] - pads[3 + d] + opad[d] for d in range(3)]
    want = oracle(z, wt, b, [1, 1, 1], dil, lo + hi, group, False)
    for what, out in run_everywhere(data, feeds):
        assert np.array_equal(bits(out["y"]), bits(want)), what
    got = ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(["y"], feeds)[0]
    np.testing.assert_allclose(want, got, rtol=1e-5, atol=1e-5)
