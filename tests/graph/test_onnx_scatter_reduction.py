"""ScatterElements and ScatterND with `reduction` add, mul, max, min
(docs/onnx.md): each update combined with the element it lands on, once, in
the order the updates come (repeated indices accumulate), float32 rounded
once per update, integers wrapping (add, mul) or compared with their type's
sign (max, min), max/min NaN-propagating with +0 above -0 (numpy's maximum
and minimum). Held bit for bit to a numpy oracle of that definition, with
special values and repeated indices, on graph inputs and on intermediates
(the data after Neg, feeding two consumers), in both modes, every path, 1
and 2 threads; and to ONNX Runtime and onnx.reference where they agree on
the finite cases."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

from onnx_cases import bits, graph_model, run_everywhere  # noqa: E402

F, I64, I32 = TensorProto.FLOAT, TensorProto.INT64, TensorProto.INT32
COMBINE = {"add": np.add, "mul": np.multiply, "max": np.maximum, "min": np.minimum}


def _combine(a, b, reduction):
    if reduction in ("max", "min") and a.dtype == np.float32 and a == b == 0:
        # +0 above -0
        pick = (np.signbit(a) == (reduction == "max"))
        return b if pick else a
    with np.errstate(all="ignore"):
        return COMBINE[reduction](a, b)


def scatter_elements_oracle(data, idx, upd, axis, reduction):
    out = data.copy()
    for pos in np.ndindex(idx.shape):
        at = list(pos)
        k = int(idx[pos])
        at[axis] = k + data.shape[axis] if k < 0 else k
        out[tuple(at)] = _combine(out[tuple(at)], upd[pos], reduction)
    return out


def scatter_nd_oracle(data, idx, upd, reduction):
    out = data.copy()
    for pos in np.ndindex(idx.shape[:-1]):
        at = tuple(int(v) for v in idx[pos])
        block = out[at]
        for e in np.ndindex(np.shape(block)):
            out[at + e] = _combine(out[at + e], upd[pos][e], reduction)
    return out


def _same(got, want, what):
    """Bit for bit, every NaN counted as one (samebits' NaNs are canonical)."""
    assert np.array_equal(np.isnan(got), np.isnan(want)), what
    keep = ~np.isnan(want)
    np.testing.assert_array_equal(bits(got[keep]), bits(want[keep]), err_msg=what)


def _floats(rng, shape):
    x = rng.standard_normal(shape).astype(np.float32)
    flat = x.reshape(-1)
    specials = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-45, 3e38], np.float32)
    flat[: len(specials)] = specials[: flat.size]
    return x


@pytest.mark.parametrize("reduction", ["add", "mul", "max", "min"])
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.int64])
def test_scatter_elements_reductions(reduction, dtype):
    rng = np.random.default_rng(7)
    if dtype == np.float32:
        data, upd = _floats(rng, (3, 4)), _floats(rng, (3, 5))
    else:
        info = np.iinfo(dtype)
        data = rng.integers(info.min, info.max, (3, 4), dtype=dtype)
        upd = rng.integers(info.min, info.max, (3, 5), dtype=dtype)
    idx = np.array([[0, 1, 1, 3, -1], [2, 2, 2, 0, 1], [3, 3, 0, 0, 1]], np.int64)   # repeats
    t = {np.float32: F, np.int32: I32, np.int64: I64}[dtype]
    nodes = [helper.make_node("Neg", ["d"], ["dn"]) if dtype == np.float32 else
             helper.make_node("Identity", ["d"], ["dn"]),
             helper.make_node("ScatterElements", ["dn", "i", "u"], ["y"], axis=1, reduction=reduction),
             helper.make_node("Identity", ["dn"], ["dn2"]),
             helper.make_node("Add", ["y", "y"], ["yy"]) if dtype == np.float32 else
             helper.make_node("Identity", ["y"], ["yy"])]
    data_m = graph_model(nodes, {"d": (t, [3, 4]), "i": (I64, [3, 5]), "u": (t, [3, 5])},
                         {"y": (t, None), "dn2": (t, None), "yy": (t, None)}, opset=18)
    dn = -data if dtype == np.float32 else data
    want = scatter_elements_oracle(dn, idx, upd, 1, reduction)
    feeds = {"d": data, "i": idx, "u": upd}
    for what, out in run_everywhere(data_m, feeds):
        if dtype == np.float32:
            _same(out["y"], want, what)
            _same(out["dn2"], dn, what)
        else:
            np.testing.assert_array_equal(out["y"], want, err_msg=what)
    if dtype != np.float32 or reduction in ("add", "mul"):
        finite = {"d": np.nan_to_num(data, posinf=2.0, neginf=-2.0), "i": idx,
                  "u": np.nan_to_num(upd, posinf=2.0, neginf=-2.0)}
        if dtype == np.float32:
            finite = {k: (v.astype(np.float32) if v.dtype == np.float32 else v) for k, v in finite.items()}
        dn_f = -finite["d"] if dtype == np.float32 else finite["d"]
        w = scatter_elements_oracle(dn_f, idx, finite["u"], 1, reduction)
        got_ort = ort.InferenceSession(data_m, providers=["CPUExecutionProvider"]).run(["y"], finite)[0]
        got_ref = ReferenceEvaluator(data_m).run(["y"], finite)[0]
        np.testing.assert_allclose(got_ort, w, rtol=1e-6)
        np.testing.assert_allclose(got_ref, w, rtol=1e-6)


@pytest.mark.parametrize("reduction", ["add", "mul", "max", "min"])
def test_scatter_nd_reductions(reduction):
    rng = np.random.default_rng(11)
    data = _floats(rng, (4, 3))
    idx = np.array([[1], [3], [1], [0], [1]], np.int64)   # row 1 three times
    upd = _floats(rng, (5, 3))
    nodes = [helper.make_node("ScatterND", ["d", "i", "u"], ["y"], reduction=reduction),
             helper.make_node("Neg", ["y"], ["n"]), helper.make_node("Abs", ["y"], ["a"])]
    m = graph_model(nodes, {"d": (F, [4, 3]), "i": (I64, [5, 1]), "u": (F, [5, 3])},
                    {"y": (F, None), "n": (F, None), "a": (F, None)}, opset=18)
    want = scatter_nd_oracle(data, idx, upd, reduction)
    for what, out in run_everywhere(m, {"d": data, "i": idx, "u": upd}):
        _same(out["y"], want, what)
        _same(out["n"], -want, what)
    finite = {"d": np.nan_to_num(data, posinf=2.0, neginf=-2.0), "i": idx,
              "u": np.nan_to_num(upd, posinf=2.0, neginf=-2.0)}
    w = scatter_nd_oracle(finite["d"], idx, finite["u"], reduction)
    np.testing.assert_allclose(ReferenceEvaluator(m).run(["y"], finite)[0], w, rtol=1e-6)
    np.testing.assert_allclose(
        ort.InferenceSession(m, providers=["CPUExecutionProvider"]).run(["y"], finite)[0], w, rtol=1e-6)
