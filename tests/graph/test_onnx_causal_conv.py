"""ONNX CausalConvWithState (opset 27; docs/onnx.md): bit for bit the ONNX
function body it stands for (Concat of the past state or zeros, a depthwise
Conv with no padding, Sigmoid and Mul for silu/swish, Slice for the present
state), written here as those nodes and run by samebits; with and without
bias, past state and activation, k = 1, inputs shorter than k - 1, special
values; on an intermediate (the input after Neg) with both outputs read by
a second node, in both modes, every path, 1 and 2 threads; and within
float32 rounding of ONNX Runtime and onnx.reference."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

import samebits.onnx as so  # noqa: E402
from onnx_cases import bits, graph_model, normal_floats, run_everywhere  # noqa: E402

F, I64 = TensorProto.FLOAT, TensorProto.INT64


def _inputs(b, c, t, k, bias, past):
    names = {"x": (F, [b, c, t]), "w": (F, [c, 1, k])}
    if bias:
        names["bias"] = (F, [c])
    if past:
        names["past"] = (F, [b, c, k - 1])
    return names


def _model(b, c, t, k, bias, past, activation):
    ins = ["xn", "w", "bias" if bias else "", "past" if past else ""]
    while ins[-1] == "":
        ins.pop()
    nodes = [helper.make_node("Neg", ["x"], ["xn"]),
             helper.make_node("CausalConvWithState", ins, ["y", "state"], activation=activation),
             helper.make_node("Abs", ["y"], ["ya"]), helper.make_node("Neg", ["state"], ["sn"])]
    return graph_model(nodes, _inputs(b, c, t, k, bias, past),
                       {"y": (F, None), "state": (F, None), "ya": (F, None), "sn": (F, None)},
                       opset=27)


def _body(b, c, t, k, bias, past, activation):
    """The function body's nodes (onnx's CausalConvWithState function)."""
    inits = {"km1": np.array([k - 1], np.int64), "axis2": np.array([2], np.int64),
             "lenP": np.array([k - 1 + t], np.int64)}
    nodes = [helper.make_node("Neg", ["x"], ["xn"])]
    if past:
        nodes.append(helper.make_node("Concat", ["past", "xn"], ["P"], axis=2))
    else:
        inits["zeros"] = np.zeros((b, c, k - 1), np.float32)
        nodes.append(helper.make_node("Concat", ["zeros", "xn"], ["P"], axis=2))
    nodes.append(helper.make_node("Conv", ["P", "w"] + (["bias"] if bias else []), ["conv"], group=c))
    if activation in ("silu", "swish"):
        nodes += [helper.make_node("Sigmoid", ["conv"], ["sig"]),
                  helper.make_node("Mul", ["conv", "sig"], ["y"])]
    else:
        nodes.append(helper.make_node("Identity", ["conv"], ["y"]))
    nodes += [helper.make_node("Sub", ["lenP", "km1"], ["start"]),
              helper.make_node("Slice", ["P", "start", "lenP", "axis2"], ["state"])]
    return graph_model(nodes, _inputs(b, c, t, k, bias, past), {"y": (F, None), "state": (F, None)},
                       inits=inits, opset=21)


CASES = [
    # (batch, channels, length, k, bias, past, activation)
    (2, 4, 8, 4, False, False, "none"),
    (2, 4, 8, 4, True, True, "silu"),
    (1, 3, 2, 4, False, True, "swish"),      # shorter than k - 1
    (2, 5, 6, 1, True, False, "silu"),       # k = 1: an empty state
    (1, 1, 1, 3, True, True, "none"),        # one decode step
    (3, 7, 33, 3, False, True, "silu"),
]


@pytest.mark.parametrize("case", range(len(CASES)))
def test_causal_conv_is_its_function_body(case):
    b, c, t, k, bias, past, activation = CASES[case]
    rng = np.random.default_rng(case)
    feeds = {"x": normal_floats(rng, (b, c, t)), "w": normal_floats(rng, (c, 1, k))}
    feeds["x"].reshape(-1)[:3] = [np.inf, -0.0, 1e-40][: feeds["x"].size]
    if bias:
        feeds["bias"] = normal_floats(rng, (c,))
    if past:
        feeds["past"] = normal_floats(rng, (b, c, k - 1))
    data = _model(b, c, t, k, bias, past, activation)
    body = _body(b, c, t, k, bias, past, activation)
    want = so.load(body, mode="exact").run(feeds)
    assert want["y"].shape == (b, c, t) and want["state"].shape == (b, c, k - 1)
    for what, out in run_everywhere(data, feeds):
        check = np.array_equal if what.startswith("exact") else None
        if check:
            assert check(bits(out["y"]), bits(want["y"])), what
            assert check(bits(out["ya"]), bits(np.abs(want["y"]))), what
        else:
            np.testing.assert_allclose(out["y"], want["y"], rtol=1e-5, atol=1e-6, err_msg=what)
        assert np.array_equal(bits(out["state"]), bits(want["state"])), what
        assert np.array_equal(bits(out["sn"]), bits(-want["state"])), what
    with np.errstate(invalid="ignore"):      # its silu of inf: inf * 1
        ref = ReferenceEvaluator(data).run(["y", "state"], feeds)
    got = ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(["y", "state"], feeds)
    for theirs in (ref, got):
        np.testing.assert_allclose(theirs[0], want["y"], rtol=1e-5, atol=1e-6)
        np.testing.assert_array_equal(theirs[1], want["state"])


def test_bad_operands_are_clear_errors():
    data = graph_model([helper.make_node("CausalConvWithState", ["x", "w", "", "past"], ["y", "s"])],
                       {"x": (F, None), "w": (F, None), "past": (F, None)},
                       {"y": (F, None), "s": (F, None)}, opset=27)
    feeds = {"x": np.zeros((1, 2, 4), np.float32), "w": np.zeros((2, 1, 3), np.float32),
             "past": np.zeros((1, 2, 3), np.float32)}
    with pytest.raises(ValueError, match="past_state must be"):
        so.load(data).run(feeds)
    bad = graph_model([helper.make_node("CausalConvWithState", ["x", "w"], ["y", "s"], activation="gelu")],
                      {"x": (F, [1, 2, 4]), "w": (F, [2, 1, 3])}, {"y": (F, None), "s": (F, None)},
                      opset=27)
    with pytest.raises((ValueError, so.UnsupportedModelError), match="activation='gelu'"):
        so.load(bad)
