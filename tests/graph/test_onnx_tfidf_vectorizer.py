"""ONNX TfIdfVectorizer (csrc/kernels/tfidf.c, docs/onnx.md), integer
input: equal to ONNX Runtime value for value, and to onnx.reference (its
trie walk) wherever the two readings of `weights` agree (onnx.reference
weighs output position i by weights[i], ONNX's text and ONNX Runtime the
i-th n-gram's output; onnx.reference alone where ONNX Runtime refuses a
repeated n-gram), over random pools and rows: TF, IDF and
TFIDF with and without weights, skip counts 0 to 3, n-gram lengths 1 to 3,
[C] and [B, C] inputs of int32 and int64, a repeated pool n-gram (which
ONNX Runtime refuses: there onnx.reference alone); on an
intermediate read by two nodes, both modes, every path, 1 and 2 threads."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

import samebits.onnx as so  # noqa: E402
from onnx_cases import graph_model, run_everywhere  # noqa: E402

F, I32, I64 = TensorProto.FLOAT, TensorProto.INT32, TensorProto.INT64


def _pool(rng, max_n, repeat=False):
    """ngram_counts and pool_int64s for distinct n-grams of lengths 1 .. max_n
    (with `repeat`, the first bigram again at the end: ONNX Runtime refuses
    that, onnx.reference counts it at the later index)."""
    counts, pool = [], []
    for n in range(1, max_n + 1):
        counts.append(len(pool))
        seen = set()
        for _ in range(int(rng.integers(1, 5))):
            g = tuple(int(v) for v in rng.integers(0, 6, n))
            if g not in seen:
                seen.add(g)
                pool.extend(g)
    if repeat and max_n == 2:           # (the bigrams are last)
        pool.extend(pool[counts[1]:counts[1] + 2])
    return counts, pool


CASES = [(mode, skip, lo, hi, weighted, batched)
         for mode in ("TF", "IDF", "TFIDF") for skip in (0, 3) for lo, hi in ((1, 1), (1, 3), (2, 2))
         for weighted in (False, True) for batched in (False, True)]


@pytest.mark.parametrize("case", range(len(CASES)))
def test_tfidf_vectorizer(case):
    mode, skip, lo, hi, weighted, batched = CASES[case]
    rng = np.random.default_rng(case)
    repeat = weighted and not batched
    counts, pool = _pool(rng, hi, repeat)
    total = 0
    for i, start in enumerate(counts):
        end = counts[i + 1] if i + 1 < len(counts) else len(pool)
        total += (end - start) // (i + 1)
    # the output index of each n-gram: shuffled, but in order where ONNX Runtime cannot run (a
    # repeated n-gram): onnx.reference reads the i-th weight by output position, not as the i-th
    # n-gram's, and the two readings agree only then
    indexes = list(range(total)) if repeat else rng.permutation(total).tolist()
    out_size = max(indexes) + 1
    attrs = {"mode": mode, "min_gram_length": lo, "max_gram_length": hi, "max_skip_count": skip,
             "ngram_counts": counts, "ngram_indexes": indexes, "pool_int64s": pool}
    if weighted:
        attrs["weights"] = rng.uniform(0.1, 3.0, out_size).astype(np.float32).tolist()
    dtype, t = (np.int32, I32) if case % 2 else (np.int64, I64)
    shape = [3, 9] if batched else [11]
    x = rng.integers(0, 6, shape).astype(dtype)
    nodes = [helper.make_node("Identity", ["x"], ["xi"]),
             helper.make_node("TfIdfVectorizer", ["xi"], ["y"], **attrs),
             helper.make_node("Identity", ["y"], ["y2"]), helper.make_node("Neg", ["y"], ["yn"])]
    data = graph_model(nodes, {"x": (t, shape)}, {"y": (F, None), "y2": (F, None), "yn": (F, None)},
                       opset=9)
    ort_y = None
    if not (repeat and hi == 2):
        ort_y = ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(["y"], {"x": x})[0]
    ref = None
    if mode == "TF" or weighted:         # (onnx.reference fails without weights: len(None))
        ref = ReferenceEvaluator(data).run(["y"], {"x": x})[0]
    if ort_y is not None and ref is not None and (mode == "TF" or indexes == sorted(indexes)):
        np.testing.assert_array_equal(ort_y, ref)
    want = ort_y if ort_y is not None else ref
    for what, out in run_everywhere(data, {"x": x}):
        assert out["y"].dtype == np.float32 and np.array_equal(out["y"], want), (what, out["y"], want)
        assert np.array_equal(out["y2"], want) and np.array_equal(out["yn"], -want), what



def test_tfidf_refusals():
    base = {"mode": "TF", "min_gram_length": 1, "max_gram_length": 1, "max_skip_count": 0,
            "ngram_counts": [0], "ngram_indexes": [0, 1]}
    strings = graph_model([helper.make_node("TfIdfVectorizer", ["x"], ["y"], pool_strings=["a", "b"],
                                            **base)], {"x": (I64, [3])}, {"y": (F, None)}, opset=9)
    with pytest.raises(so.UnsupportedModelError, match="pool_strings is not supported"):
        so.load(strings)
    bad = graph_model([helper.make_node("TfIdfVectorizer", ["x"], ["y"], pool_int64s=[1, 2, 3], **base)],
                      {"x": (I64, [3])}, {"y": (F, None)}, opset=9)
    with pytest.raises((ValueError, so.UnsupportedModelError), match="ngram_indexes has 2 values for 3"):
        so.load(bad)
