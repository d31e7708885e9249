"""ONNX CumProd (opset 26; docs/onnx.md): running products along an axis,
one float32 multiply per step in the axis order (from the end with
`reverse`), `exclusive` starting from 1; integers wrap like their type. Bit
for bit against that loop in numpy, on graph inputs, on an intermediate
(Neg) and feeding two consumers, both modes, every path, 1 and 2 threads;
within 1e-6 of onnx.reference."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("onnx")

from onnx import TensorProto, helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

from onnx_cases import bits, model, run_everywhere, value  # noqa: E402


def cumprod_definition(x: np.ndarray, axis: int, exclusive: int, reverse: int) -> np.ndarray:
    x = np.moveaxis(x, axis, 0)
    y = np.empty_like(x)
    one = np.ones_like(x[0])
    acc = one.copy()
    order = range(x.shape[0] - 1, -1, -1) if reverse else range(x.shape[0])
    for j in order:
        nxt = (acc * x[j]).astype(x.dtype)
        y[j] = acc if exclusive else nxt
        acc = nxt
    y = np.moveaxis(y, 0, axis)
    if y.dtype == np.float32:
        y[np.isnan(y)] = np.uint32(0x7FC00000).view(np.float32)
    return y


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.int32])
@pytest.mark.parametrize("exclusive,reverse", [(0, 0), (1, 0), (0, 1), (1, 1)])
def test_cumprod_is_its_definition(dtype, exclusive, reverse):
    rng = np.random.default_rng(exclusive * 2 + reverse)
    if dtype == np.float32:
        x = rng.uniform(0.5, 1.5, (3, 5, 4)).astype(np.float32)
        x[0, 1, 1], x[1, 2, 0], x[2, 0, 3] = np.nan, np.inf, -0.0
    else:
        x = rng.integers(-40, 40, (3, 5, 4)).astype(dtype)   # products wrap
    tt = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    for axis in (1, -1, 0):
        ax = helper.make_tensor("ax", TensorProto.INT64, [], [axis])
        for place in ("inputs", "intermediate", "consumers"):
            nodes = [helper.make_node("Neg", ["x"], ["xn"])] if place == "intermediate" else []
            src = "xn" if nodes else "x"
            nodes.append(helper.make_node("CumProd", [src, "ax"], ["y"], exclusive=exclusive,
                                          reverse=reverse))
            outs = [value("y", tt)]
            if place == "consumers":
                nodes += [helper.make_node("Identity", ["y"], ["c1"]), helper.make_node("Neg", ["y"], ["c2"])]
                outs += [value("c1", tt), value("c2", tt)]
            data = model(nodes, [value("x", tt, x.shape)], outs, [ax], opset=26)
            src_x = -x if place == "intermediate" else x
            want = cumprod_definition(src_x, axis % 3, exclusive, reverse)
            for what, out in run_everywhere(data, {"x": x}):
                got = out["y"]
                same = np.array_equal(bits(got), bits(want)) if dtype == np.float32 \
                    else np.array_equal(got, want)
                assert same, (axis, place, what)
            if dtype != np.float32 or place != "inputs":
                continue
            ref = ReferenceEvaluator(data).run(None, {"x": x})[0]
            np.testing.assert_allclose(got, ref, rtol=1e-6)
