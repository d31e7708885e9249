"""ONNX RotaryEmbedding (opset 23; docs/onnx.md, csrc/kernels/rotary.c):
held bit for bit to a numpy float32 oracle of its definition (real = cos*x1
- sin*x2, imag = sin*x1 + cos*x2, each product and sum rounded once), with
and without position ids, interleaved or halves, partial rotary dims, 3-D
and 4-D inputs, special values; on an intermediate (the input after Neg)
with the output returned and read by two consumers, in both modes, every
path, 1 and 2 threads; and within float32 rounding of ONNX Runtime and
onnx.reference."""
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


def oracle(x, cos, sin, pos, interleaved, rdim, heads):
    shape = x.shape
    x4 = x.reshape(shape[0], shape[1], heads, -1) if x.ndim == 3 else x.transpose(0, 2, 1, 3)
    x4 = x4.copy()
    d = x4.shape[3]
    r = rdim or d
    c = cos[pos] if pos is not None else cos
    s = sin[pos] if pos is not None else sin
    c, s = c[:, :, None, :], s[:, :, None, :]
    rot = x4[..., :r]
    x1, x2 = (rot[..., 0::2], rot[..., 1::2]) if interleaved else (rot[..., : r // 2], rot[..., r // 2:])
    real = (c * x1) - (s * x2)
    imag = (s * x1) + (c * x2)
    out = x4.copy()
    if interleaved:
        out[..., 0:r:2], out[..., 1:r:2] = real, imag
    else:
        out[..., : r // 2], out[..., r // 2: r] = real, imag
    return out.reshape(shape) if x.ndim == 3 else out.transpose(0, 2, 1, 3)


@pytest.mark.parametrize("three_d", [False, True])
@pytest.mark.parametrize("with_pos", [False, True])
@pytest.mark.parametrize("interleaved", [0, 1])
@pytest.mark.parametrize("rdim", [0, 4])
def test_rotary_embedding(three_d, with_pos, interleaved, rdim):
    rng = np.random.default_rng(17)
    b, s, h, d = 2, 3, 2, 8
    x = normal_floats(rng, (b, s, h * d) if three_d else (b, h, s, d))
    x.reshape(-1)[:5] = [np.inf, -np.inf, 0.0, -0.0, 1e-40]
    half = (rdim or d) // 2
    if with_pos:
        cos, sin = normal_floats(rng, (6, half)), normal_floats(rng, (6, half))
        pos = np.array([[0, 1, 5], [2, 2, 3]], np.int64)
    else:
        cos, sin = normal_floats(rng, (b, s, half)), normal_floats(rng, (b, s, half))
        pos = None
    attrs = {"interleaved": interleaved}
    if rdim:
        attrs["rotary_embedding_dim"] = rdim
    if three_d:
        attrs["num_heads"] = h
    ins = ["xn", "cos", "sin"] + (["pos"] if with_pos else [])
    nodes = [helper.make_node("Neg", ["x"], ["xn"]),
             helper.make_node("RotaryEmbedding", ins, ["y"], **attrs),
             helper.make_node("Abs", ["y"], ["a"]), helper.make_node("Neg", ["y"], ["n"])]
    inputs = {"x": (F, list(x.shape)), "cos": (F, list(cos.shape)), "sin": (F, list(sin.shape))}
    feeds = {"x": x, "cos": cos, "sin": sin}
    if with_pos:
        inputs["pos"] = (I64, [b, s])
        feeds["pos"] = pos
    data = graph_model(nodes, inputs, {"y": (F, None), "a": (F, None), "n": (F, None)}, opset=23)
    with np.errstate(all="ignore"):
        want = oracle(-x, cos, sin, pos, interleaved, rdim, h)
    for what, out in run_everywhere(data, feeds):
        np.testing.assert_array_equal(np.isnan(out["y"]), np.isnan(want), err_msg=what)
        keep = ~np.isnan(want)
        np.testing.assert_array_equal(bits(out["y"][keep]), bits(want[keep]), err_msg=what)
    finite = dict(feeds, x=np.nan_to_num(x, posinf=1.0, neginf=-1.0))
    with np.errstate(all="ignore"):
        w = oracle(-finite["x"], cos, sin, pos, interleaved, rdim, h)
    np.testing.assert_allclose(ReferenceEvaluator(data).run(["y"], finite)[0], w, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(ort.InferenceSession(data, providers=["CPUExecutionProvider"])
                               .run(["y"], finite)[0], w, rtol=1e-6, atol=1e-7)


def test_rotary_embedding_errors():
    node = helper.make_node("RotaryEmbedding", ["x", "cos", "sin", "pos"], ["y"])
    data = graph_model([node], {"x": (F, [1, 1, 2, 4]), "cos": (F, None), "sin": (F, None),
                                "pos": (I64, [1, 2])}, {"y": (F, None)}, opset=23)
    s = so.load(data)
    feeds = {"x": np.ones((1, 1, 2, 4), np.float32), "cos": np.ones((3, 2), np.float32),
             "sin": np.ones((3, 2), np.float32), "pos": np.array([[0, 7]], np.int64)}
    with pytest.raises(IndexError, match="position id 7 is out of range for 3 cached positions"):
        s.run(feeds)
    with pytest.raises(ValueError, match="cos_cache and sin_cache must be"):
        s.run(dict(feeds, cos=np.ones((3, 3), np.float32), sin=np.ones((3, 3), np.float32),
                   pos=np.array([[0, 1]], np.int64)))
