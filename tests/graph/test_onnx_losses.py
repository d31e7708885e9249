"""ONNX NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (docs/onnx.md;
csrc/kernels/nll.c). NLL is exact against its definition written here in
numpy float32 (w = weight[t], 0 where ignored; loss = (-x) * w; serial sums
from +0 in C order; mean = sum / sum of w); SoftmaxCrossEntropyLoss is NLL
of samebits' log_softmax, checked bit for bit against NLL over that
log_softmax output, and within 1e-5 of onnx.reference and ONNX Runtime. On
graph inputs, on intermediates (the scores after Neg), with the loss feeding
two consumers and as a graph output, in both modes, every path, 1 and 2
threads."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("onnx")

from onnx import TensorProto, helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

import samebits.onnx as so  # noqa: E402
from onnx_cases import bits, model, run_everywhere, value  # noqa: E402

F, I64, I32 = TensorProto.FLOAT, TensorProto.INT64, TensorProto.INT32
NAN = np.uint32(0x7FC00000).view(np.float32)


def nll_definition(x, t, weight, reduction, ignore):
    n, c = x.shape[:2]
    x3 = x.reshape(n, c, -1)
    t2 = t.reshape(n, -1).astype(np.int64)
    losses = np.zeros(t2.shape, np.float32)
    total, weights = np.float32(0), np.float32(0)
    for i in range(n):
        for d in range(t2.shape[1]):
            k = t2[i, d]
            loss, w = np.float32(0), np.float32(0)
            if ignore is None or k != ignore:
                w = np.float32(1) if weight is None else weight[k]
                loss = np.float32(-x3[i, k, d]) * w
            losses[i, d] = loss
            total = np.float32(total + loss)
            weights = np.float32(weights + w)
    with np.errstate(all="ignore"):
        out = {"none": losses.reshape(t.shape), "sum": np.array(total, np.float32),
               "mean": np.array(np.float32(total / weights), np.float32)}[reduction]
    out = np.array(out, np.float32)
    out[np.isnan(out)] = NAN
    return out


def _cases():
    rng = np.random.default_rng(3)
    for shape in ((4, 5), (3, 4, 6), (2, 3, 2, 3)):
        x = rng.standard_normal(shape).astype(np.float32)
        t = rng.integers(0, shape[1], size=(shape[0],) + shape[2:]).astype(np.int64)
        t.reshape(-1)[0] = 1
        weight = rng.uniform(0.2, 2.0, shape[1]).astype(np.float32)
        for reduction in ("none", "sum", "mean"):
            for w in (None, weight):
                for ignore in (None, 1):
                    yield x, t, w, reduction, ignore


def _nll_model(x, t, w, reduction, ignore, place, op="NegativeLogLikelihoodLoss", log_prob=False,
               ttype=I64):
    attrs = {"reduction": reduction}
    if ignore is not None:
        attrs["ignore_index"] = ignore
    ins = [value("x", F, x.shape), value("t", ttype, t.shape)]
    names = ["x", "t"] + (["w"] if w is not None else [])
    if w is not None:
        ins.append(value("w", F, w.shape))
    nodes = []
    if place == "intermediate":
        nodes.append(helper.make_node("Neg", ["x"], ["xn"]))
        names[0] = "xn"
    outs = ["loss"] + (["logp"] if log_prob else [])
    nodes.append(helper.make_node(op, names, outs, **attrs))
    graph_outs = [value("loss", F)] + ([value("logp", F)] if log_prob else [])
    if place == "consumers":
        nodes += [helper.make_node("Identity", ["loss"], ["c1"]), helper.make_node("Neg", ["loss"], ["c2"])]
        graph_outs += [value("c1", F), value("c2", F)]
    return model(nodes, ins, graph_outs, opset=13)


def _feeds(x, t, w):
    return {"x": x, "t": t} | ({"w": w} if w is not None else {})


@pytest.mark.parametrize("place", ["inputs", "intermediate", "consumers"])
def test_nll_loss_is_its_definition(place):
    for x, t, w, reduction, ignore in _cases():
        data = _nll_model(x, t, w, reduction, ignore, place)
        want = nll_definition(-x if place == "intermediate" else x, t, w, reduction, ignore)
        for what, out in run_everywhere(data, _feeds(x, t, w)):
            assert np.array_equal(bits(out["loss"]), bits(want)), (reduction, w is None, ignore, what)
            if place == "consumers":
                assert np.array_equal(bits(out["c1"]), bits(want)), what


def test_nll_int32_targets_and_reference():
    for x, t, w, reduction, ignore in _cases():
        t32 = t.astype(np.int32)
        data = _nll_model(x, t32, w, reduction, ignore, "inputs", ttype=I32)
        ref = ReferenceEvaluator(data).run(None, _feeds(x, t32, w))[0]
        got = so.load(data).run(_feeds(x, t32, w))["loss"]
        np.testing.assert_allclose(got, ref, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("place", ["inputs", "intermediate", "consumers"])
def test_softmax_cross_entropy_is_nll_of_log_softmax(place):
    ort = pytest.importorskip("onnxruntime")
    for x, t, w, reduction, ignore in _cases():
        data = _nll_model(x, t, w, reduction, ignore, place, op="SoftmaxCrossEntropyLoss", log_prob=True)
        feeds = _feeds(x, t, w)
        ref = ReferenceEvaluator(data).run(None, feeds)
        want_ort = ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(None, feeds)
        for what, out in run_everywhere(data, feeds):
            want = nll_definition(out["logp"], t, w, reduction, ignore)
            assert np.array_equal(bits(out["loss"]), bits(want)), (reduction, what)
            for other in (ref, want_ort):
                np.testing.assert_allclose(out["loss"], other[0], rtol=1e-5, atol=1e-6, err_msg=what)
                np.testing.assert_allclose(out["logp"], other[1], rtol=1e-5, atol=1e-6, err_msg=what)


def test_without_the_log_prob_output_the_loss_is_the_same():
    x, t, w, reduction, ignore = next(_cases())
    with_lp = so.load(_nll_model(x, t, w, "sum", None, "inputs", op="SoftmaxCrossEntropyLoss",
                                 log_prob=True)).run(_feeds(x, t, w))
    without = so.load(_nll_model(x, t, w, "sum", None, "inputs", op="SoftmaxCrossEntropyLoss")
                      ).run(_feeds(x, t, w))
    assert bits(with_lp["loss"]).tobytes() == bits(without["loss"]).tobytes()


def test_errors():
    x = np.zeros((2, 3), np.float32)
    t = np.array([0, 3], np.int64)
    data = _nll_model(x, t, None, "mean", None, "inputs")
    with pytest.raises(IndexError, match="target 3 is out of range for 3 classes"):
        so.load(data).run({"x": x, "t": t})
    data = _nll_model(x, np.zeros((3,), np.int64), None, "mean", None, "inputs")
    with pytest.raises(ValueError, match=r"are not \(N, C, d1, ...\) and \(N, d1, ...\)"):
        so.load(data).run({"x": x, "t": np.zeros((3,), np.int64)})
    bad = model([helper.make_node("NegativeLogLikelihoodLoss", ["x", "t"], ["loss"], reduction="max")],
                [value("x", F, [2, 3]), value("t", I64, [2])], [value("loss", F)], opset=13)
    with pytest.raises(so.UnsupportedModelError, match="reduction 'max' is not none, sum or mean"):
        so.load(bad)
    # an ignored target may lie outside [0, C)
    data = _nll_model(x, np.array([0, -100], np.int64), None, "mean", -100, "inputs")
    assert so.load(data).run({"x": x, "t": np.array([0, -100], np.int64)})["loss"] == 0.0
