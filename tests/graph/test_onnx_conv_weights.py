"""ONNX Conv (and ConvTranspose, at the end) whose weights are not a constant and whose kernel_shape is not
given (docs/onnx.md): the spatial rank then comes from the strides,
dilations or pads given, or, with none of them, from W at run time (every
spatial attribute is then its default, whatever the rank). That is how
ONNX's function bodies write a convolution (CausalConvWithState's, for
one). Held bit for bit to samebits.conv2d on the same operands (the
convolution's exact definition, docs/convolution.md), with W a graph input
and an intermediate, the output read by two consumers and returned, in both
modes, every path, 1 and 2 threads; within float32 rounding of ONNX
Runtime."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper  # noqa: E402

import samebits  # noqa: E402
import samebits.onnx as so  # noqa: E402
from onnx_cases import bits, graph_model, normal_floats, run_everywhere  # noqa: E402

F = TensorProto.FLOAT


def _conv_model(x_shape, w_shape, with_bias, w_intermediate, attrs):
    ins = ["x", "wn" if w_intermediate else "w"] + (["b"] if with_bias else [])
    nodes = ([helper.make_node("Neg", ["w"], ["wn"])] if w_intermediate else []) + [
        helper.make_node("Conv", ins, ["y"], **attrs),
        helper.make_node("Abs", ["y"], ["a"]), helper.make_node("Neg", ["y"], ["n"])]
    inputs = {"x": (F, list(x_shape)), "w": (F, list(w_shape))}
    if with_bias:
        inputs["b"] = (F, [w_shape[0]])
    return graph_model(nodes, inputs, {"y": (F, None), "a": (F, None), "n": (F, None)})


CASES = [
    # (x shape, w shape, attributes)
    ((2, 4, 9), (6, 2, 3), {"group": 2}),                           # 1-D, rank from W
    ((1, 3, 7, 6), (4, 3, 3, 2), {}),                               # 2-D, rank from W
    ((1, 4, 7, 6), (4, 1, 3, 3), {"group": 4, "auto_pad": "SAME_UPPER"}),
    ((2, 3, 8), (5, 3, 2), {"strides": [2]}),                       # rank from strides
    ((1, 2, 6, 7), (3, 2, 2, 3), {"pads": [1, 0, 2, 1], "dilations": [1, 2]}),
]


@pytest.mark.parametrize("case", range(len(CASES)))
@pytest.mark.parametrize("w_intermediate", [False, True])
@pytest.mark.parametrize("with_bias", [False, True])
def test_conv_weights_from_the_graph(case, w_intermediate, with_bias):
    x_shape, w_shape, attrs = CASES[case]
    rng = np.random.default_rng(case)
    x = normal_floats(rng, x_shape)
    x.reshape(-1)[:4] = [np.inf, -0.0, 1e-40, np.nan]
    w = normal_floats(rng, w_shape)
    b = normal_floats(rng, (w_shape[0],))
    data = _conv_model(x_shape, w_shape, with_bias, w_intermediate, attrs)
    feeds = {"x": x, "w": w} | ({"b": b} if with_bias else {})
    w_used = -w if w_intermediate else w
    one_d = len(x_shape) == 3
    x4, w4 = (x[:, :, None, :], w_used[:, :, None, :]) if one_d else (x, w_used)
    stride = attrs.get("strides", [1] * (len(x_shape) - 2))
    dil = attrs.get("dilations", [1] * (len(x_shape) - 2))
    pads = attrs.get("pads", [0] * 2 * (len(x_shape) - 2))
    if attrs.get("auto_pad") == "SAME_UPPER":     # stride 1: the kernel's extent less 1, split
        total = [k - 1 for k in w_shape[2:]]
        pads = [t // 2 for t in total] + [t - t // 2 for t in total]
    if one_d:
        stride, dil, padding = (1, stride[0]), (1, dil[0]), (0, 0, pads[0], pads[1])
    else:
        padding = (pads[0], pads[2], pads[1], pads[3])
    want = samebits.conv2d(x4, w4, b if with_bias else None, stride=tuple(stride), padding=padding,
                           dilation=tuple(dil), groups=attrs.get("group", 1), mode="exact")
    want = np.asarray(want)[:, :, 0, :] if one_d else np.asarray(want)
    negated = np.where(np.isnan(want), np.float32(np.nan), -want)   # the canonical NaN
    for what, out in run_everywhere(data, feeds, modes=("exact",)):
        assert np.array_equal(bits(out["y"]), bits(want)), what
        assert np.array_equal(bits(out["n"]), bits(negated)), what
    for what, out in run_everywhere(data, feeds, modes=("fast",), threads=(1,)):
        np.testing.assert_allclose(out["y"], want, rtol=1e-5, atol=1e-5, err_msg=what)
    got = ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(["y"], feeds)[0]
    np.testing.assert_allclose(want, got, rtol=1e-5, atol=1e-5, equal_nan=True)


def test_four_d_weights_are_refused_clearly():
    data = _conv_model((1, 2, 3, 3, 3, 3), (3, 2, 2, 2, 2, 2), False, True, {})
    x = np.zeros((1, 2, 3, 3, 3, 3), np.float32)
    w = np.zeros((3, 2, 2, 2, 2, 2), np.float32)
    with pytest.raises((so.UnsupportedModelError, ValueError), match="4-D convolution is not supported"):
        so.load(data).run({"x": x, "w": w})


CONVT_CASES = [
    # (x shape, w shape, attributes)
    ((1, 2, 3, 3), (2, 3, 3, 3), {}),                                # rank from W at run
    ((2, 4, 5), (4, 2, 3), {"group": 2, "strides": [2], "output_padding": [1]}),
    ((1, 2, 4, 3), (2, 2, 3, 2), {"strides": [2, 1], "pads": [1, 0, 0, 1], "dilations": [1, 2]}),
    ((1, 1, 3, 3), (1, 2, 3, 3), {"strides": [3, 2], "output_shape": [10, 8]}),
    ((1, 3, 4, 4), (3, 1, 2, 2), {"auto_pad": "SAME_UPPER", "strides": [2, 2]}),
]


@pytest.mark.parametrize("case", range(len(CONVT_CASES)))
@pytest.mark.parametrize("w_intermediate", [False, True])
def test_conv_transpose_weights_from_the_graph(case, w_intermediate):
    """ConvTranspose's weights a graph input or an intermediate: the bits of
    the same node with them as a constant (that form is held to its
    definition in test_core_nn.py), and ONNX Runtime's values."""
    x_shape, w_shape, attrs = CONVT_CASES[case]
    rng = np.random.default_rng(100 + case)
    x = normal_floats(rng, x_shape)
    x.reshape(-1)[:3] = [np.inf, -0.0, 1e-40]
    w = normal_floats(rng, w_shape)
    b = normal_floats(rng, (w_shape[1] * attrs.get("group", 1),))
    w_name = "wn" if w_intermediate else "w"
    nodes = ([helper.make_node("Neg", ["w"], ["wn"])] if w_intermediate else []) + [
        helper.make_node("ConvTranspose", ["x", w_name, "b"], ["y"], **attrs),
        helper.make_node("Neg", ["y"], ["n"])]
    outs = {"y": (F, None), "n": (F, None)}
    data = graph_model(nodes, {"x": (F, list(x_shape)), "w": (F, list(w_shape)),
                               "b": (F, [b.size])}, outs)
    w_used = -w if w_intermediate else w
    const = graph_model([helper.make_node("ConvTranspose", ["x", "wc", "b"], ["y"], **attrs),
                         helper.make_node("Neg", ["y"], ["n"])],
                        {"x": (F, list(x_shape)), "b": (F, [b.size])}, outs, inits={"wc": w_used})
    feeds = {"x": x, "w": w, "b": b}
    want = so.load(const, mode="exact").run({"x": x, "b": b})
    for what, out in run_everywhere(data, feeds, modes=("exact",)):
        assert np.array_equal(bits(out["y"]), bits(want["y"])), what
        assert np.array_equal(bits(out["n"]), bits(want["n"])), what
    for path in samebits.paths():       # fast mode: the constant form's bits on each path
        with samebits.use_path(path):
            fast = so.load(const, mode="fast").run({"x": x, "b": b})
            for threads in (1, 2):
                out = so.load(data, mode="fast", threads=threads).run(feeds)
                assert np.array_equal(bits(out["y"]), bits(fast["y"])), (path, threads)
    got = ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(["y"], feeds)[0]
    np.testing.assert_allclose(want["y"], got, rtol=1e-5, atol=1e-5, equal_nan=True)


def test_conv_transpose_computed_weights_checked_at_run():
    nodes = [helper.make_node("Neg", ["w"], ["wn"]), helper.make_node("ConvTranspose", ["x", "wn"], ["y"])]
    data = graph_model(nodes, {"x": (F, None), "w": (F, None)}, {"y": (F, None)})
    s = so.load(data)
    with pytest.raises(ValueError, match="X has 3 channels, W"):
        s.run({"x": np.zeros((1, 3, 4, 4), np.float32), "w": np.zeros((2, 1, 2, 2), np.float32)})
    with pytest.raises((so.UnsupportedModelError, ValueError), match="4-D transposed convolution"):
        s.run({"x": np.zeros((1, 2, 3, 3, 3, 3), np.float32), "w": np.zeros((2, 1, 2, 2, 2, 2), np.float32)})
