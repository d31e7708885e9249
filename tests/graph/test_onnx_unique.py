"""ONNX Unique (docs/onnx.md; csrc/kernels/unique.c): against numpy.unique
(sorted) and first-occurrence order (sorted=0), flattened and along each
axis, float32 (NaN, -0, +0) and int64/uint8, all four outputs; a constant
input (planned) and a fed one (found at run), feeding two consumers, both
modes, every path, 1 and 2 threads; against onnx.reference and ONNX
Runtime where they run."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("onnx")

from onnx import TensorProto, helper  # noqa: E402

from onnx_cases import model, run_everywhere, value  # noqa: E402

I64 = TensorProto.INT64


def definition(x: np.ndarray, axis, sorted_: int):
    y, idx, inv, cnt = np.unique(x, return_index=True, return_inverse=True, return_counts=True, axis=axis)
    inv = inv.reshape(-1)
    if not sorted_:
        order = np.argsort(idx, kind="stable")
        rank = np.empty_like(order)
        rank[order] = np.arange(len(order))
        idx, cnt, inv = idx[order], cnt[order], rank[inv]
        y = np.take(x.reshape(-1) if axis is None else x, idx, axis=0 if axis is None else axis)
    return y, idx.astype(np.int64), inv.astype(np.int64), cnt.astype(np.int64)


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.uint8])
@pytest.mark.parametrize("axis", [None, 0, 1, -1])
@pytest.mark.parametrize("sorted_", [1, 0])
def test_unique(dtype, axis, sorted_):
    rng = np.random.default_rng(7)
    x = rng.integers(0, 3, (4, 5, 2)).astype(dtype)
    x[2] = x[0]                      # repeated slices along axis 0
    x[:, 3] = x[:, 1]                # and along axis 1
    if dtype == np.float32 and axis is None:
        x.reshape(-1)[5:9] = [np.nan, -0.0, 0.0, np.nan]
    tt = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    attrs = {"sorted": sorted_} | ({} if axis is None else {"axis": axis})
    want = definition(x, axis, sorted_)
    for fed in (True, False):
        nodes = [helper.make_node("Unique", ["x"], ["y", "idx", "inv", "cnt"], **attrs),
                 helper.make_node("Identity", ["y"], ["c1"]), helper.make_node("Neg", ["cnt"], ["c2"])]
        ins = [value("x", tt, x.shape)] if fed else []
        inits = [] if fed else [helper.make_tensor("x", tt, x.shape, x.reshape(-1).tolist())]
        outs = [value("y", tt), value("idx", I64), value("inv", I64), value("cnt", I64), value("c1", tt),
                value("c2", I64)]
        data = model(nodes, ins, outs, inits, opset=11)
        for what, out in run_everywhere(data, {"x": x} if fed else {}):
            for name, w in zip(("y", "idx", "inv", "cnt"), want):
                got = out[name]
                if dtype == np.float32 and name == "y":
                    same = got.shape == w.shape and np.array_equal(got, w, equal_nan=True)
                else:
                    same = np.array_equal(got, w)
                assert same, (name, what, fed, got, w)
            assert np.array_equal(out["c2"], -want[3]), what
