"""ONNX LinearAttention (opset 27; docs/onnx.md, csrc/kernels/linear_attention.c):
exact mode gives, bit for bit, ONNX's own function body for the node (onnx's
function_testcase_helper expands it into Reshape, Transpose, Scan with Exp,
Mul, MatMul, Sub and Add; samebits runs those nodes), for every update
rule, GQA and MQA, per-key and per-head decay, beta per head or shared,
with and without past state, explicit and default scale; on intermediates
(query, key and value after Neg) with both outputs read by a second node,
every path, 1 and 2 threads; fast mode within float32 rounding of it; and
ONNX Runtime and onnx.reference within float32 rounding."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

import onnx  # noqa: E402
from onnx import TensorProto, helper  # noqa: E402
from onnx.backend.test.case.node import function_testcase_helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

import samebits.onnx as so  # noqa: E402
from onnx_cases import bits, graph_model, normal_floats, run_everywhere  # noqa: E402

F = TensorProto.FLOAT
OPSET = 27


def _case(rule, hq, hkv, dk, dv, b, t, past, per_head_decay, shared_beta, scale):
    ins = {"q": [b, t, hq * dk], "k": [b, t, hkv * dk], "v": [b, t, hkv * dv]}
    node_ins = ["qn", "kn", "vn", "past" if past else "", "", ""]
    if past:
        ins["past"] = [b, hkv, dk, dv]
    if rule in ("gated", "gated_delta"):
        ins["decay"] = [b, t, hkv if per_head_decay else hkv * dk]
        node_ins[4] = "decay"
    if rule in ("delta", "gated_delta"):
        ins["beta"] = [b, t, 1 if shared_beta else hkv]
        node_ins[5] = "beta"
    while node_ins[-1] == "":
        node_ins.pop()
    attrs = {"q_num_heads": hq, "kv_num_heads": hkv, "update_rule": rule}
    if scale:
        attrs["scale"] = scale
    node = helper.make_node("LinearAttention", node_ins, ["y", "state"], **attrs)
    pre = [helper.make_node("Neg", [n], [n + "n"]) for n in ("q", "k", "v")]
    post = [helper.make_node("Abs", ["y"], ["ya"]), helper.make_node("Neg", ["state"], ["sn"])]
    inputs = {n: (F, s) for n, s in ins.items()}
    outputs = {"y": (F, None), "state": (F, None), "ya": (F, None), "sn": (F, None)}
    model = graph_model(pre + [node] + post, inputs, outputs, opset=OPSET)
    types = [helper.make_tensor_type_proto(F, ins[n.removesuffix("n")]) if n else
             onnx.TypeProto() for n in node_ins]
    expansions, _ = function_testcase_helper(node, types, "t",
                                             [helper.make_opsetid("", OPSET)])
    body_nodes = expansions[0][0]
    body = graph_model(pre + body_nodes + post, inputs, outputs, opset=OPSET)
    return model, body, ins


CASES = [
    # rule, q heads, kv heads, d_k, d_v, batch, length, past, per-head decay, shared beta, scale
    ("gated_delta", 2, 2, 4, 3, 2, 5, True, False, False, 0.0),
    ("gated_delta", 4, 2, 3, 4, 1, 3, False, True, True, 0.0),      # GQA
    ("gated_delta", 3, 1, 4, 4, 2, 2, True, False, False, 0.5),     # MQA, explicit scale
    ("delta", 2, 2, 5, 2, 1, 4, False, False, True, 0.0),
    ("gated", 2, 1, 3, 3, 2, 3, True, True, False, 0.0),
    ("linear", 1, 1, 6, 5, 3, 1, False, False, False, 0.0),         # one decode step
]


@pytest.mark.parametrize("case", range(len(CASES)))
def test_linear_attention_is_its_function_body(case):
    model, body, shapes = _case(*CASES[case])
    rng = np.random.default_rng(case)
    feeds = {n: normal_floats(rng, s, 0.5) for n, s in shapes.items()}
    if "beta" in feeds:
        feeds["beta"] = 1 / (1 + np.exp(-feeds["beta"]))            # a sigmoid output, as used
    if "decay" in feeds:
        feeds["decay"] = -np.abs(feeds["decay"])                    # log-space decay
    feeds["v"].reshape(-1)[:3] = [np.inf, -0.0, 1e-40]
    want = so.load(body, mode="exact").run(feeds)
    for what, out in run_everywhere(model, feeds):
        if what.startswith("exact"):
            for name in ("y", "state", "ya", "sn"):
                assert np.array_equal(bits(out[name]), bits(want[name])), (what, name)
        else:
            for name in ("y", "state"):
                np.testing.assert_allclose(out[name], want[name], rtol=1e-4, atol=1e-5,
                                           err_msg=what)
    with np.errstate(all="ignore"):
        ref = ReferenceEvaluator(model).run(["y", "state"], feeds)
    got = ort.InferenceSession(model, providers=["CPUExecutionProvider"]).run(["y", "state"], feeds)
    for theirs in (ref, got):
        for i, name in enumerate(("y", "state")):
            np.testing.assert_allclose(theirs[i], want[name], rtol=1e-4, atol=1e-5)


def test_bad_operands_are_clear_errors():
    model, _, shapes = _case("gated_delta", 2, 2, 4, 3, 1, 2, False, False, False, 0.0)
    feeds = {n: np.zeros(s, np.float32) for n, s in shapes.items()}
    feeds.pop("decay")
    with pytest.raises(ValueError, match="decay"):
        so.load(model).run(feeds | {"decay": np.zeros((1, 2, 3), np.float32)})
    bad = graph_model([helper.make_node("LinearAttention", ["q", "k", "v"], ["y", "s"], q_num_heads=3,
                                        kv_num_heads=2, update_rule="linear")],
                      {n: (F, [1, 2, 6]) for n in "qkv"}, {"y": (F, None), "s": (F, None)},
                      opset=OPSET)
    with pytest.raises((ValueError, so.UnsupportedModelError), match="positive multiple"):
        so.load(bad)
    bad = graph_model([helper.make_node("LinearAttention", ["q", "k", "v"], ["y", "s"], q_num_heads=2,
                                        kv_num_heads=2, update_rule="mamba")],
                      {n: (F, [1, 2, 6]) for n in "qkv"}, {"y": (F, None), "s": (F, None)},
                      opset=OPSET)
    with pytest.raises((ValueError, so.UnsupportedModelError), match="update_rule='mamba'"):
        so.load(bad)
