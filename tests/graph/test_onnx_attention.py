"""ONNX Attention (opset 23 on; docs/onnx.md, csrc/graph/ops/nn/attention.c).

Exact mode's Attention is, bit for bit, the composition of the exact ops
that ONNX's own function body for it writes (the conformance suite's
`_expanded` twin of every Attention case: Mul, MatMul, Div/Tanh/Mul for the
softcap, the bias adds, Softmax, Where): every float32 case of the installed
onnx's suite is checked so, and a few on every path at 1 and 2 threads.
A graph of users' shape (Q, K and V computed from one intermediate that
feeds all three, the output read by two consumers and returned, GQA, a
causal mask over a past cache) is held to ONNX Runtime and onnx.reference
within float32 rounding, with the same bits on every path and thread count
in exact mode."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

import conformance  # noqa: E402
import samebits  # noqa: E402
import samebits.onnx as so  # noqa: E402
from onnx_cases import graph_model, normal_floats, run_everywhere  # noqa: E402

F, B = TensorProto.FLOAT, TensorProto.BOOL


def _twins() -> list[str]:
    cases = conformance.cases()
    names = []
    for n in sorted(cases):
        if (n.startswith("test_attention") and not n.endswith("_expanded") and n + "_expanded" in cases
                and conformance.float_family(cases[n]) and conformance.float_family(cases[n + "_expanded"])):
            names.append(n)
    return names


TWINS = _twins()


def _exact(case, ins, threads: int = 2) -> list[np.ndarray]:
    return list(so.load(case.model, mode="exact", threads=threads).run(conformance._feeds(case, ins)).values())


def test_every_float32_attention_case_has_its_function_bodys_bits():
    cases = conformance.cases()
    assert len(TWINS) >= 70, TWINS
    checked = 0
    for name in TWINS:
        op, body = cases[name], cases[name + "_expanded"]
        try:
            so.load(body.model)
        except so.UnsupportedModelError as e:   # a float64 softmax: the body casts to float64
            assert "Cast to float64" in str(e), (name, e)
            continue
        for ins, _ in op.data_sets:
            got, want = _exact(op, ins), _exact(body, ins)
            assert len(got) == len(want)
            for g, w in zip(got, want):
                assert g.shape == w.shape and g.tobytes() == w.tobytes(), name
            checked += 1
    assert checked >= 70


@pytest.mark.parametrize("name", ["test_attention_4d_gqa_with_past_and_present",
                                  "test_attention_3d_diff_heads_sizes_softcap",
                                  "test_attention_4d_with_past_and_present_qk_matmul_bias_4d_mask_causal",
                                  "test_attention_4d_causal_nonpad_batch_prefill"])
def test_attention_bits_on_every_path_and_thread_count(name):
    cases = conformance.cases()
    op, body = cases[name], cases[name + "_expanded"]
    ins = op.data_sets[0][0]
    want = _exact(body, ins, threads=1)
    for path in samebits.paths():
        for threads in (1, 2):
            with samebits.use_path(path):
                got = _exact(op, ins, threads)
            for g, w in zip(got, want):
                assert g.tobytes() == w.tobytes(), (name, path, threads)


def _user_graph() -> bytes:
    # x -> h = x @ W (one intermediate feeding Q, K and V: several consumers);
    # 3-D GQA attention (4 query heads, 2 kv heads), causal over a past cache;
    # Y returned and read by two consumers
    nodes = [helper.make_node("MatMul", ["x", "w"], ["h"]),
             helper.make_node("Neg", ["h"], ["hn"]),
             helper.make_node("Slice", ["h", "s0", "e0", "ax"], ["q"]),
             helper.make_node("Slice", ["hn", "s1", "e1", "ax"], ["k"]),
             helper.make_node("Slice", ["h", "s1", "e1", "ax"], ["v"]),
             helper.make_node("Attention", ["q", "k", "v", "", "pk", "pv"], ["y", "pk_out", "pv_out"],
                              q_num_heads=4, kv_num_heads=2, is_causal=1, softcap=3.0),
             helper.make_node("Relu", ["y"], ["r"]),
             helper.make_node("Add", ["y", "y"], ["yy"])]
    inits = {"s0": np.array([0], np.int64), "e0": np.array([16], np.int64),
             "s1": np.array([16], np.int64), "e1": np.array([24], np.int64),
             "ax": np.array([2], np.int64),
             "w": normal_floats(np.random.default_rng(5), (8, 24), 0.5)}
    return graph_model(nodes, {"x": (F, [2, 3, 8]), "pk": (F, [2, 2, 5, 4]), "pv": (F, [2, 2, 5, 4])},
                       {"y": (F, None), "pk_out": (F, None), "pv_out": (F, None), "r": (F, None),
                        "yy": (F, None)}, inits=inits, opset=23)


def test_attention_where_users_put_it_agrees_with_onnx_runtime_and_reference():
    rng = np.random.default_rng(9)
    feeds = {"x": normal_floats(rng, (2, 3, 8)), "pk": normal_floats(rng, (2, 2, 5, 4)),
             "pv": normal_floats(rng, (2, 2, 5, 4))}
    data = _user_graph()
    want_ort = ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(None, feeds)
    want_ref = ReferenceEvaluator(data).run(None, feeds)
    exact_bits = None
    for what, out in run_everywhere(data, feeds):
        got = list(out.values())
        for g, o, r in zip(got, want_ort, want_ref):
            np.testing.assert_allclose(g, o, rtol=2e-5, atol=2e-6, err_msg=what)
            np.testing.assert_allclose(g, r, rtol=2e-5, atol=2e-6, err_msg=what)
        if what.startswith("exact"):
            b = [g.tobytes() for g in got]
            exact_bits = exact_bits or b
            assert b == exact_bits, what


def test_attention_float64_softmax():
    """softmax_precision 11: the softmax in binary64, each probability rounded
    once (docs/onnx.md); against a numpy float64 oracle of the probabilities
    (the scores from softmax_precision 1's qk_matmul_output mode 2), the same
    bits on every path and thread count, and ONNX Runtime's values."""
    rng = np.random.default_rng(5)
    feeds = {n: normal_floats(rng, (1, 2, 5, 4)) for n in ("q", "k", "v")}
    def model(precision, mode):
        node = helper.make_node("Attention", ["q", "k", "v"], ["y", "", "", "s"], softmax_precision=precision,
                                qk_matmul_output_mode=mode, is_causal=1)
        return graph_model([node], {n: (F, [1, 2, 5, 4]) for n in ("q", "k", "v")},
                           {"y": (F, None), "s": (F, None)}, opset=23)
    scores = so.load(model(1, 2), mode="exact").run(feeds)["s"].astype(np.float64)
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    want = (e / e.sum(axis=-1, keepdims=True)).astype(np.float32)
    data = model(11, 3)
    first = None
    for what, out in run_everywhere(data, feeds):
        np.testing.assert_allclose(out["s"], want, rtol=0, atol=6e-8, err_msg=what)
        if what.startswith("exact"):
            first = first if first is not None else out["y"].tobytes()
            assert out["y"].tobytes() == first, what
    got = ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(["y"], feeds)[0]
    np.testing.assert_allclose(so.load(data).run(feeds)["y"], got, rtol=2e-5, atol=2e-6)


def test_attention_refusals_and_errors():
    q = helper.make_node("Attention", ["q", "k", "v"], ["y"], softmax_precision=10)
    data = graph_model([q], {"q": (F, [1, 2, 3, 4]), "k": (F, [1, 2, 3, 4]), "v": (F, [1, 2, 3, 4])},
                       {"y": (F, None)}, opset=23)
    with pytest.raises(so.UnsupportedModelError, match="softmax_precision=10 is not supported"):
        so.load(data)
    q = helper.make_node("Attention", ["q", "k", "v"], ["y"])
    data = graph_model([q], {"q": (F, [1, 3, 8]), "k": (F, [1, 3, 8]), "v": (F, [1, 3, 8])},
                       {"y": (F, None)}, opset=23)
    x = np.ones((1, 3, 8), np.float32)
    with pytest.raises(ValueError, match="3-D inputs need q_num_heads and kv_num_heads"):
        so.load(data).run({"q": x, "k": x, "v": x})
    data = graph_model([q], {"q": (F, [1, 3, 2, 4]), "k": (F, [1, 2, 2, 4]), "v": (F, [1, 2, 2, 4])},
                       {"y": (F, None)}, opset=23)
    with pytest.raises(ValueError, match=r"q heads \(3\) must be a multiple of kv heads \(2\)"):
        so.load(data).run({"q": np.ones((1, 3, 2, 4), np.float32), "k": np.ones((1, 2, 2, 4), np.float32),
                           "v": np.ones((1, 2, 2, 4), np.float32)})
