"""ONNX Col2Im (opset 18; csrc/kernels/col2im.c, docs/onnx.md): bit for bit
against a numpy float32 oracle of the written order (rows of the input in
order, blocks in order, each contribution one rounded add from +0), 2-D and
3-D images, strides, dilations, pads, special values; on an intermediate
read by two nodes and returned, both modes, every path, 1 and 2 threads;
onnx.reference within float32 rounding, and ONNX Runtime on 2-D images (on
the 3-D case here ONNX Runtime 1.32 differs from both, by up to 4.1); bad
shapes are clear errors."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

import samebits.onnx as so  # noqa: E402
from onnx_cases import bits, graph_model, run_everywhere  # noqa: E402

F, I64 = TensorProto.FLOAT, TensorProto.INT64
NAN = np.uint32(0x7FC00000).view(np.float32)


def oracle(x, image, block, strides, dilations, pads):
    d = len(image)
    grid = [(image[i] + pads[i] + pads[d + i] - ((block[i] - 1) * dilations[i] + 1)) // strides[i] + 1
            for i in range(d)]
    n, ck, _ = x.shape
    K = int(np.prod(block))
    c = ck // K
    y = np.zeros((n, c, *image), np.float32)
    with np.errstate(all="ignore"):
        for b_, ci in itertools.product(range(n), range(c)):
            for k, kpos in enumerate(itertools.product(*(range(v) for v in block))):
                for l, lpos in enumerate(itertools.product(*(range(v) for v in grid))):
                    p = [lpos[i] * strides[i] - pads[i] + kpos[i] * dilations[i] for i in range(d)]
                    if all(0 <= p[i] < image[i] for i in range(d)):
                        at = (b_, ci, *p)
                        y[at] = np.float32(y[at] + x[b_, ci * K + k, l])
    return np.where(np.isnan(y), NAN, y)


CASES = [
    # image, block, strides, dilations, pads, N, C
    ([5, 5], [2, 2], [1, 1], [1, 1], [0, 0, 0, 0], 1, 1),
    ([6, 7], [3, 2], [2, 1], [1, 2], [1, 0, 1, 2], 2, 2),
    ([4, 3, 5], [2, 2, 3], [1, 2, 1], [1, 1, 2], [0, 1, 1, 1, 0, 1], 1, 2),
]


@pytest.mark.parametrize("case", range(len(CASES)))
def test_col2im(case):
    image, block, strides, dil, pads, n, c = CASES[case]
    d = len(image)
    grid = [(image[i] + pads[i] + pads[d + i] - ((block[i] - 1) * dil[i] + 1)) // strides[i] + 1
            for i in range(d)]
    rng = np.random.default_rng(case)
    x = rng.standard_normal((n, c * int(np.prod(block)), int(np.prod(grid)))).astype(np.float32)
    x.reshape(-1)[:4] = [np.inf, -0.0, 1e-40, -np.inf]
    nodes = [helper.make_node("Neg", ["x"], ["xn"]),
             helper.make_node("Col2Im", ["xn", "image", "block"], ["y"], strides=strides,
                              dilations=dil, pads=pads),
             helper.make_node("Abs", ["y"], ["ya"]), helper.make_node("Neg", ["y"], ["yn"])]
    data = graph_model(nodes, {"x": (F, list(x.shape))}, {"y": (F, None), "ya": (F, None), "yn": (F, None)},
                       inits={"image": np.array(image, np.int64), "block": np.array(block, np.int64)},
                       opset=18)
    want = oracle(-x, image, block, strides, dil, pads)
    for what, out in run_everywhere(data, {"x": x}):
        assert np.array_equal(bits(out["y"]), bits(want)), what
        assert np.array_equal(bits(out["yn"]), bits(np.where(np.isnan(want), NAN, -want))), what
    finite = np.nan_to_num(x, posinf=2.0, neginf=-2.0)
    mine = so.load(data).run({"x": finite})["y"]
    ref = ReferenceEvaluator(data).run(["y"], {"x": finite})[0]
    np.testing.assert_allclose(mine, ref, rtol=1e-6, atol=1e-6)
    if d == 2:   # ONNX Runtime 1.32 misplaces 3-D blocks with these strides and dilations
        got = ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(["y"], {"x": finite})[0]
        np.testing.assert_allclose(mine, got, rtol=1e-6, atol=1e-6)


def test_col2im_bad_shapes():
    nodes = [helper.make_node("Col2Im", ["x", "image", "block"], ["y"])]
    data = graph_model(nodes, {"x": (F, None)}, {"y": (F, None)},
                       inits={"image": np.array([4, 4], np.int64), "block": np.array([2, 2], np.int64)},
                       opset=18)
    with pytest.raises(ValueError, match="number of blocks, 9"):
        so.load(data).run({"x": np.zeros((1, 4, 8), np.float32)})
