"""The C graph runtime's nn operators (csrc/graph/ops/nn/: Conv,
ConvTranspose, Gemm, MatMul, MaxPool, AveragePool, Resize, Upsample)
against the Python runner's recorded outcomes (python_runner_record) bit
for bit, in both modes, and against ONNX
Runtime within a tolerance: the fused epilogues and biases graph_fuse.c
makes, packed and non-constant weights, batched MatMul broadcasting, 1-D
operands, empty operands, odd sizes, the attribute forms, and the errors."""
from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto as TP  # noqa: E402
from onnx import helper, numpy_helper  # noqa: E402

import samebits.onnx as so  # noqa: E402
from samebits.onnx import UnsupportedModelError, _core  # noqa: E402
import python_runner_record  # noqa: E402  (the Python runner's outcomes: the reference)

from conftest import bits  # noqa: E402
from onnx_cases import normal_floats  # noqa: E402
from onnx_cases import graph_model  # noqa: E402

try:
    import onnxruntime as ort
except ImportError:   # the bit comparisons with the Python runner still run
    ort = None

RNG = np.random.default_rng(20240611)
RESEED_RNG_PER_TEST = True   # conftest: per-test inputs, for python_runner_record
F = TP.FLOAT
I64 = TP.INT64


def model(nodes, inputs: dict, outputs: dict, inits: dict | None = None, opset: int = 17) -> bytes:
    """onnx_cases.graph_model at IR version 8 whatever the opset (the record's keys)."""
    return graph_model(nodes, inputs, outputs, inits, opset, ir_version=8)


def rand(*shape, scale=1.0):
    return normal_floats(RNG, shape, scale)


def check(data: bytes, feeds: dict, rtol=2e-5, atol=2e-6, use_ort=True, nodes=None):
    """C runtime == the Python runner's recorded outcomes bit for bit (exact
    at 1 and 2 threads, fast), and close to ONNX Runtime. Returns the exact
    outputs."""
    results = {}
    for mode, threads in (("exact", 1), ("exact", 2), ("fast", None)):
        sess = so.load(data, mode=mode, threads=threads)
        if nodes is not None and mode == "exact":
            assert sess.node_count == nodes, sess.node_count
        got = list(sess.run(feeds).values())
        python_runner_record.check(data, feeds, mode, got)
        results[(mode, threads)] = got
    if use_ort and ort is not None:
        want = ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(None, feeds)
        for w, e, f in zip(want, results[("exact", 1)], results[("fast", None)]):
            for got in (e, f):
                assert got.shape == w.shape, (got.shape, w.shape)
                assert np.array_equal(np.isnan(got), np.isnan(w))
                np.testing.assert_allclose(got, w, rtol=rtol, atol=atol)
    return results[("exact", 1)]


def one(op, inputs, attrs=None, inits=None, opset=17, order=None, **kw):
    inits = inits or {}
    names = order if order is not None else list(inputs) + list(inits)
    node = helper.make_node(op, names, ["y"], **(attrs or {}))
    ins = {n: (helper.np_dtype_to_tensor_dtype(v.dtype), list(v.shape)) for n, v in inputs.items()}
    return check(model([node], ins, {"y": (F, None)}, inits, opset), inputs, **kw)


def same_error(data: bytes, feeds: dict | None, kind, match: str):
    """The model is refused (at load, or at run with feeds) with that kind
    of error and a message that matches."""
    with pytest.raises(kind, match=match):
        sess = so.load(data, mode="exact")
        if feeds is not None:
            sess.run(feeds)


# ---- Conv --------------------------------------------------------------------------------

@pytest.mark.parametrize("xshape,wshape,attrs", [
    ((1, 3, 7, 5), (4, 3, 3, 3), {}),
    ((2, 5, 11, 13), (7, 5, 3, 2), {"pads": [1, 0, 2, 1], "strides": [2, 3]}),
    ((1, 4, 9, 9), (4, 1, 3, 3), {"group": 4, "pads": [1, 1, 1, 1]}),            # depthwise
    ((1, 4, 9, 9), (8, 1, 3, 3), {"group": 4, "auto_pad": "SAME_LOWER"}),       # multiplier 2
    ((2, 6, 10, 7), (6, 3, 2, 3), {"group": 2, "dilations": [2, 1], "strides": [1, 2]}),
    ((1, 3, 8, 8), (5, 3, 1, 1), {}),
    ((1, 1, 1, 1), (1, 1, 1, 1), {}),
    ((3, 2, 17, 1), (5, 2, 4, 1), {"auto_pad": "SAME_UPPER", "strides": [3, 1]}),
    ((1, 3, 5, 6), (2, 3, 5, 6), {"auto_pad": "VALID"}),
])
@pytest.mark.parametrize("weights", ["const", "input"])
def test_conv_forms(xshape, wshape, attrs, weights):
    x, w, b = rand(*xshape), rand(*wshape, scale=0.5), rand(wshape[0])
    if weights == "const":
        one("Conv", {"X": x}, attrs, {"W": w, "B": b}, order=["X", "W", "B"])
        one("Conv", {"X": x}, attrs, {"W": w})
    else:
        a = dict(attrs, kernel_shape=list(wshape[2:]))
        one("Conv", {"X": x, "W": w, "B": b}, a)
        one("Conv", {"X": x, "W": w}, a)


def test_conv_1d_forms():
    one("Conv", {"X": rand(2, 3, 19)}, {"pads": [2, 1], "strides": [3], "dilations": [2]},
        {"W": rand(4, 3, 3), "B": rand(4)})
    one("Conv", {"X": rand(1, 4, 9)}, {"group": 2, "auto_pad": "SAME_UPPER"}, {"W": rand(6, 2, 4)})
    one("Conv", {"X": rand(1, 2, 8), "W": rand(3, 2, 2)}, {"kernel_shape": [2]})


@pytest.mark.parametrize("act,attrs,extra,opset", [
    ("Relu", {}, [], 17), ("LeakyRelu", {"alpha": 0.3}, [], 17), ("Sigmoid", {}, [], 17),
    ("Clip", {}, ["lo", "hi"], 17), ("Clip", {"min": 0.0, "max": 6.0}, [], 10),
])
def test_conv_fused_activation(act, attrs, extra, opset):
    x = rand(2, 3, 8, 7, scale=3)
    inits = {"W": rand(5, 3, 3, 3), "B": rand(5), "lo": np.array(0.0, np.float32),
             "hi": np.array(6.0, np.float32)}
    if not extra:
        del inits["lo"], inits["hi"]
    nodes = [helper.make_node("Conv", ["X", "W", "B"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node(act, ["c"] + extra, ["y"], **attrs)]
    data = model(nodes, {"X": (F, list(x.shape))}, {"y": (F, None)}, inits, opset)
    check(data, {"X": x}, rtol=1e-4, atol=1e-5, nodes=1)
    # the same with the weights as an input: still fused (Conv needs no constant weights)
    nodes[0] = helper.make_node("Conv", ["X", "Wi", "B"], ["c"], pads=[1, 1, 1, 1],
                                kernel_shape=[3, 3])
    data = model(nodes, {"X": (F, list(x.shape)), "Wi": (F, [5, 3, 3, 3])}, {"y": (F, None)},
                 {k: v for k, v in inits.items() if k != "W"}, opset)
    check(data, {"X": x, "Wi": inits["W"]}, rtol=1e-4, atol=1e-5, nodes=1)


def test_fast_mode_folds_batch_norm_into_the_packed_conv():
    """Fast mode folds Conv + BatchNormalization (+ Relu) into one conv with
    new constant weights: the C runtime loads and runs that one node with
    the Python runner's bits. (Exact mode keeps BatchNormalization as its
    own node.)"""
    inits = {"W": rand(4, 3, 3, 3), "B": rand(4), "s": rand(4), "b": rand(4), "m": rand(4),
             "v": np.abs(rand(4)) + 0.5}
    for with_bias in (True, False):
        conv_in = ["X", "W", "B"] if with_bias else ["X", "W"]
        nodes = [helper.make_node("Conv", conv_in, ["c"], pads=[1, 1, 1, 1]),
                 helper.make_node("BatchNormalization", ["c", "s", "b", "m", "v"], ["n"],
                                  epsilon=1e-3),
                 helper.make_node("Relu", ["n"], ["y"])]
        init = {k: v for k, v in inits.items() if with_bias or k != "B"}
        data = model(nodes, {"X": (F, [2, 3, 6, 5])}, {"y": (F, None)}, init)
        x = rand(2, 3, 6, 5)
        sess = so.load(data, mode="fast")
        assert sess.node_count == 1
        got = sess.run({"X": x})["y"]
        python_runner_record.check(data, {"X": x}, "fast", [got])
        if ort is not None:
            ref = ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(None, {"X": x})
            np.testing.assert_allclose(got, ref[0], rtol=1e-4, atol=1e-5)


def test_conv_weights_packed_once_and_shared():
    """Two convolutions reading one constant: each packs its own; the run
    gets the same bits as the Python runner."""
    w = rand(3, 3, 3, 3)
    nodes = [helper.make_node("Conv", ["X", "W"], ["a"], pads=[1, 1, 1, 1]),
             helper.make_node("Conv", ["a", "W"], ["y"], strides=[2, 2])]
    data = model(nodes, {"X": (F, [1, 3, 9, 9])}, {"y": (F, None)}, {"W": w})
    check(data, {"X": rand(1, 3, 9, 9)}, rtol=1e-4, atol=1e-5)


# ---- ConvTranspose -------------------------------------------------------------------------

@pytest.mark.parametrize("xshape,wshape,attrs", [
    ((1, 2, 5, 4), (2, 3, 3, 3), {}),
    ((2, 4, 3, 5), (4, 2, 3, 2), {"strides": [2, 3], "pads": [1, 0, 0, 1]}),
    ((1, 4, 4, 4), (4, 1, 3, 3), {"group": 4, "strides": [2, 2], "output_padding": [1, 1]}),
    ((1, 2, 4, 6), (2, 3, 4, 4), {"strides": [2, 2], "auto_pad": "SAME_LOWER"}),
    ((1, 2, 4, 6), (2, 3, 4, 4), {"strides": [2, 2], "auto_pad": "SAME_UPPER"}),
    ((1, 2, 3, 3), (2, 2, 3, 3), {"strides": [2, 2], "output_shape": [8, 6]}),
    ((1, 3, 6, 5), (3, 2, 2, 2), {"pads": [2, 3, 1, 2]}),   # pads beyond the kernel: a crop
    ((1, 2, 4, 4), (2, 3, 3, 3), {"auto_pad": "VALID", "dilations": [2, 1]}),
])
def test_conv_transpose_forms(xshape, wshape, attrs):
    x = rand(*xshape)
    group = attrs.get("group", 1)
    inits = {"W": rand(*wshape, scale=0.5), "B": rand(wshape[1] * group)}
    one("ConvTranspose", {"X": x}, attrs, inits)
    one("ConvTranspose", {"X": x}, attrs, {"W": inits["W"]})


def test_conv_transpose_1d_and_bias_input():
    one("ConvTranspose", {"X": rand(2, 3, 7)}, {"strides": [2], "output_padding": [1]},
        {"W": rand(3, 4, 3)})
    x, b = rand(1, 2, 5, 5), rand(3)
    node = helper.make_node("ConvTranspose", ["X", "W", "B"], ["y"], strides=[2, 2])
    data = model([node], {"X": (F, [1, 2, 5, 5]), "B": (F, [3])}, {"y": (F, None)},
                 {"W": rand(2, 3, 2, 2)})
    check(data, {"X": x, "B": b})


# ---- MatMul ---------------------------------------------------------------------------------

@pytest.mark.parametrize("ashape,bshape", [
    ((5, 7), (7, 3)), ((1, 7), (7, 1)), ((2, 3, 5, 7), (7, 4)), ((7,), (7, 9)),
    ((3, 1, 6), (6, 33)), ((67, 129), (129, 33)), ((1, 1), (1, 1)),
])
def test_matmul_packed(ashape, bshape):
    one("MatMul", {"A": rand(*ashape)}, None, {"B": rand(*bshape)}, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("ashape,bshape", [
    ((5, 7), (7, 3)), ((2, 1, 5, 7), (3, 7, 4)), ((5, 7), (2, 7, 3)), ((7,), (7,)),
    ((7,), (2, 7, 3)), ((3, 5, 7), (7,)), ((4, 1, 3), (1, 3, 2)), ((2, 3, 1, 4), (1, 3, 4, 5)),
    ((1, 1, 2, 3), (5, 1, 3, 2)), ((3, 9, 1), (3, 1, 8)),
])
def test_matmul_broadcasting(ashape, bshape):
    one("MatMul", {"A": rand(*ashape), "B": rand(*bshape)}, rtol=1e-4, atol=1e-5)


def test_matmul_constant_b_that_is_not_packed():
    """3-D constant B (not packed: the general product), and a constant B
    read by a node whose A is 1-D."""
    one("MatMul", {"A": rand(2, 5, 7)}, None, {"B": rand(2, 7, 3)})
    one("MatMul", {"A": rand(4, 7)}, None, {"B": rand(7)})


@pytest.mark.parametrize("ashape,bshape", [
    ((0, 7), (7, 3)), ((5, 0), (0, 3)), ((2, 0, 4), (4, 3)), ((3, 4), (4, 0)), ((0,), (0,)),
])
def test_matmul_empty_operands(ashape, bshape):
    a, b = rand(*ashape), rand(*bshape)
    got = one("MatMul", {"A": a, "B": b}, use_ort=False)
    assert got[0].shape == np.matmul(a, b).shape and not np.any(bits(got[0]))


def test_matmul_empty_a_with_packed_b():
    got = one("MatMul", {"A": rand(0, 7)}, None, {"B": rand(7, 3)}, use_ort=False)
    assert got[0].shape == (0, 3)


@pytest.mark.parametrize("bias_first", [False, True])
@pytest.mark.parametrize("act", [None, "Relu", "Tanh"])
def test_matmul_add_activation_fused(bias_first, act):
    x = rand(3, 5, 8, scale=2)
    inits = {"W": rand(8, 6), "B": rand(6)}
    add_in = ["B", "m"] if bias_first else ["m", "B"]
    nodes = [helper.make_node("MatMul", ["X", "W"], ["m"]),
             helper.make_node("Add", add_in, ["p" if act else "y"])]
    if act:
        nodes.append(helper.make_node(act, ["p"], ["y"]))
    data = model(nodes, {"X": (F, list(x.shape))}, {"y": (F, None)}, inits)
    check(data, {"X": x}, rtol=1e-4, atol=1e-5, nodes=1)


def test_matmul_relu_fused_without_bias_and_unfused_when_shared():
    x = rand(4, 8)
    inits = {"W": rand(8, 5)}
    nodes = [helper.make_node("MatMul", ["X", "W"], ["m"]), helper.make_node("Relu", ["m"], ["y"])]
    check(model(nodes, {"X": (F, [4, 8])}, {"y": (F, None)}, inits), {"X": x}, nodes=1)
    # the product is also an output: nothing fused, the same bits
    data = model(nodes, {"X": (F, [4, 8])}, {"y": (F, None), "m": (F, None)}, inits)
    check(data, {"X": x}, nodes=2)


# ---- Gemm -----------------------------------------------------------------------------------

@pytest.mark.parametrize("attrs,ashape,bshape,cshape", [
    ({}, (5, 7), (7, 3), None),
    ({"transA": 1}, (7, 5), (7, 3), (3,)),
    ({"transB": 1}, (5, 7), (3, 7), (5, 3)),
    ({"transA": 1, "transB": 1, "alpha": 0.7}, (7, 5), (3, 7), (5, 1)),
    ({"alpha": 2.0, "beta": -0.5}, (4, 6), (6, 9), (9,)),
    ({"beta": 0.0}, (4, 6), (6, 9), (4, 9)),
    ({"beta": 1.0}, (1, 1), (1, 1), ()),
    ({"transB": 1}, (33, 65), (17, 65), (17,)),
])
@pytest.mark.parametrize("b_const", [True, False])
def test_gemm_forms(attrs, ashape, bshape, cshape, b_const):
    inputs = {"A": rand(*ashape)}
    inits = {}
    if b_const:
        inits["B"] = rand(*bshape)
    else:
        inputs["B"] = rand(*bshape)
    if cshape is not None:
        inits["C"] = rand(*cshape) if cshape else np.array(0.25, np.float32)
    one("Gemm", inputs, attrs, inits, order=["A", "B"] + (["C"] if cshape is not None else []),
        rtol=1e-4, atol=1e-5)


def test_gemm_c_as_an_input():
    one("Gemm", {"A": rand(4, 6), "C": rand(4, 3)}, {"transB": 1}, {"B": rand(3, 6)},
        order=["A", "B", "C"])
    one("Gemm", {"A": rand(4, 6), "C": rand(3)}, {}, {"B": rand(6, 3)}, order=["A", "B", "C"])


@pytest.mark.parametrize("act,attrs", [("LeakyRelu", {"alpha": 0.2}), ("Relu", {}),
                                       ("HardSigmoid", {"alpha": 0.3, "beta": 0.5})])
@pytest.mark.parametrize("with_c", [True, False])
def test_gemm_fused_activation(act, attrs, with_c):
    x = rand(6, 10, scale=2)
    inits = {"W": rand(4, 10)}
    gin = ["X", "W"]
    if with_c:
        inits["C"] = rand(4)
        gin.append("C")
    nodes = [helper.make_node("Gemm", gin, ["g"], transB=1),
             helper.make_node(act, ["g"], ["y"], **attrs)]
    check(model(nodes, {"X": (F, [6, 10])}, {"y": (F, None)}, inits), {"X": x}, rtol=1e-4,
          atol=1e-5, nodes=1)


def test_gemm_not_plain_keeps_the_activation_apart():
    """alpha != 1: not fused (the Python runner's rule), the same bits."""
    inits = {"W": rand(10, 4), "C": rand(4)}
    nodes = [helper.make_node("Gemm", ["X", "W", "C"], ["g"], alpha=0.5),
             helper.make_node("Relu", ["g"], ["y"])]
    check(model(nodes, {"X": (F, [3, 10])}, {"y": (F, None)}, inits), {"X": rand(3, 10)}, nodes=2)


# ---- pooling ---------------------------------------------------------------------------------

@pytest.mark.parametrize("attrs,xshape", [
    ({"kernel_shape": [3, 3], "strides": [2, 2], "ceil_mode": 1, "pads": [1, 0, 0, 1]}, (1, 2, 8, 9)),
    ({"kernel_shape": [2, 3], "auto_pad": "SAME_LOWER", "strides": [2, 2]}, (2, 3, 7, 7)),
    ({"kernel_shape": [3, 2], "dilations": [2, 3], "ceil_mode": 1, "strides": [2, 2]}, (1, 1, 11, 10)),
    ({"kernel_shape": [1, 1]}, (1, 1, 1, 1)),
    ({"kernel_shape": [4]}, (2, 3, 13)),
    ({"kernel_shape": [3], "strides": [2], "ceil_mode": 1, "pads": [1, 1]}, (1, 2, 10)),
])
def test_max_pool_forms(attrs, xshape):
    x = rand(*xshape)
    one("MaxPool", {"X": x}, attrs)
    x.flat[::7] = np.nan   # ignored by samebits' max (docs/maxpool.md), not by ONNX Runtime
    one("MaxPool", {"X": x}, attrs, use_ort=False)


@pytest.mark.parametrize("attrs,xshape", [
    ({"kernel_shape": [3, 3], "strides": [2, 2], "ceil_mode": 1}, (1, 2, 8, 9)),
    ({"kernel_shape": [3, 3], "pads": [1, 1, 1, 1], "count_include_pad": 1}, (2, 3, 5, 6)),
    ({"kernel_shape": [3, 2], "pads": [1, 0, 1, 1], "strides": [2, 1]}, (1, 2, 9, 7)),
    ({"kernel_shape": [2, 2], "auto_pad": "SAME_UPPER"}, (1, 1, 5, 5)),
    ({"kernel_shape": [5]}, (2, 3, 13)),
    ({"kernel_shape": [3], "strides": [2], "pads": [1, 1], "count_include_pad": 1}, (1, 2, 10)),
])
def test_average_pool_forms(attrs, xshape):
    one("AveragePool", {"X": rand(*xshape)}, attrs)


# ---- Resize, Upsample ----------------------------------------------------------------------

@pytest.mark.parametrize("attrs,scales,sizes", [
    ({"mode": "nearest", "coordinate_transformation_mode": "asymmetric", "nearest_mode": "floor"},
     [1, 1, 0.5, 0.75], None),
    ({"mode": "nearest", "coordinate_transformation_mode": "asymmetric", "nearest_mode": "floor"},
     None, [1, 3, 11, 3]),
    ({"mode": "linear"}, [1, 1, 0.6, 1.7], None),
    ({"mode": "linear", "coordinate_transformation_mode": "align_corners"}, [1, 1, 3, 0.5], None),
    ({"mode": "linear", "coordinate_transformation_mode": "align_corners"}, None, [1, 3, 1, 9]),
    ({"mode": "linear", "coordinate_transformation_mode": "pytorch_half_pixel"}, None,
     [1, 3, 4, 13]),
])
def test_resize_forms(attrs, scales, sizes):
    x = rand(1, 3, 6, 5)
    inits = {"roi": np.zeros(0, np.float32)}
    order = ["X", "roi"]
    if scales is not None:
        inits["scales"] = np.array(scales, np.float32)
        order.append("scales")
    else:
        inits["sizes"] = np.array(sizes, np.int64)
        order += ["", "sizes"]
    if attrs.get("coordinate_transformation_mode") == "align_corners" and scales is not None:
        # ONNX divides by the fractional resized length less 1 (W * 0.5 - 1 =
        # 1.5, not OH - 1 = 1): the Python runner's record and ONNX Runtime
        # divided by OH - 1, so the oracle is onnx.reference
        from onnx.reference import ReferenceEvaluator
        node = helper.make_node("Resize", order, ["y"], **attrs)
        data = model([node], {"X": (F, list(x.shape))}, {"y": (F, None)}, inits, 17)
        want = ReferenceEvaluator(data).run(None, {"X": x})[0]
        for mode, threads in (("exact", 1), ("exact", 2), ("fast", None)):
            got = so.load(data, mode=mode, threads=threads).run({"X": x})["y"]
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=2e-6)
        return
    one("Resize", {"X": x}, attrs, inits, order=order, rtol=1e-5, atol=2e-6)


def test_resize_axes_and_two_sizes():
    node = helper.make_node("Resize", ["X", "", "", "sizes"], ["y"], mode="linear", axes=[2, 3])
    data = model([node], {"X": (F, [2, 3, 4, 5])}, {"y": (F, None)},
                 {"sizes": np.array([7, 3], np.int64)}, opset=18)
    check(data, {"X": rand(2, 3, 4, 5)})


def test_resize_scales_known_only_at_run():
    """Scales that are a graph input: the shape is inferred when the run
    reaches the node (SB_NEEDS_VALUES), once per set of values."""
    node = helper.make_node("Resize", ["X", "", "s"], ["y"], mode="linear")
    data = model([node], {"X": (F, [1, 2, 4, 4]), "s": (F, [4])}, {"y": (F, None)})
    x = rand(1, 2, 4, 4)
    for s in ([1, 1, 2, 2], [1, 1, 0.5, 3], [1, 1, 2, 2]):
        check(data, {"X": x, "s": np.array(s, np.float32)})
    # sizes computed from the input's shape (folded at plan time)
    nodes = [helper.make_node("Shape", ["X"], ["sh"]),
             helper.make_node("Mul", ["sh", "two"], ["sz"]),
             helper.make_node("Resize", ["X", "", "", "sz"], ["y"], mode="nearest",
                              coordinate_transformation_mode="asymmetric", nearest_mode="floor")]
    data = model(nodes, {"X": (F, [1, 2, "h", "w"])}, {"y": (F, None)},
                 {"two": np.array([1, 1, 2, 3], np.int64)})
    check(data, {"X": rand(1, 2, 3, 5)})


def test_resize_10_and_upsample_forms():
    x = rand(1, 2, 3, 4)
    one("Resize", {"X": x}, {"mode": "linear", "coordinate_transformation_mode": "half_pixel"},
        {"scales": np.array([1, 1, 2, 1.5], np.float32)}, opset=10, use_ort=False)
    one("Resize", {"X": x}, {}, {"scales": np.array([1, 1, 3, 2], np.float32)}, opset=10)
    one("Upsample", {"X": x}, {"mode": "nearest", "scales": [1.0, 1.0, 2.0, 3.0]}, opset=7)
    one("Upsample", {"X": x}, {}, {"scales": np.array([1, 1, 1.5, 2], np.float32)}, opset=9)


# ---- errors --------------------------------------------------------------------------------------

def test_load_errors_name_the_node_and_attribute():
    def m(node, inits=None, shape=(1, 2, 4, 4), opset=17):
        ins = {"X": (F, list(shape))}
        if "V" in node.input:
            ins["V"] = (F, [3, 2, 3, 3])
        return model([node], ins, {"y": (F, None)}, inits, opset)
    w = {"W": rand(3, 2, 3, 3)}
    same_error(m(helper.make_node("Conv", ["X", "W"], ["y"], name="c", auto_pad="FOO"), w), None,
               UnsupportedModelError, r"'c' \(Conv\): auto_pad='FOO' is not supported")
    same_error(m(helper.make_node("Conv", ["X", "W"], ["y"], strides=[1, 1, 1]), w), None,
               UnsupportedModelError, r"strides \[1, 1, 1\], dilations \[1, 1\] and pads "
                                      r"\[0, 0, 0, 0\] do not fit 2 spatial dimensions")
    same_error(m(helper.make_node("Conv", ["X", "W"], ["y"], kernel_shape=[2, 2]), w), None,
               UnsupportedModelError, r"weights of shape \(3, 2, 3, 3\) do not match "
                                      r"kernel_shape \[2, 2\]")
    same_error(m(helper.make_node("Conv", ["X", "W"], ["y"]), {"W": rand(3, 2, 2, 2, 2, 2)}), None,
               UnsupportedModelError, r"4-D convolution is not supported \(1-D to 3-D are\)")
    same_error(m(helper.make_node("Conv", ["X", "W"], ["y"], group=2), {"W": rand(3, 1, 3, 3)}),
               None, ValueError, r"groups=2 does not divide the 3 output channels")
    # (weights from the graph without kernel_shape run now: test_onnx_conv_weights.py)
    # (ConvTranspose's too: test_onnx_conv_weights.py)
    same_error(m(helper.make_node("ConvTranspose", ["X", "W"], ["y"], output_padding=[1]), w), None,
               UnsupportedModelError, r"output_padding \[1\] does not fit 2 dimensions")
    same_error(m(helper.make_node("Gemm", ["X", "B"], ["y"]), {"B": rand(2, 3, 4)},
                 shape=(3, 2)), None, UnsupportedModelError, r"B must be 2-D, got \(2, 3, 4\)")
    same_error(m(helper.make_node("MaxPool", ["X"], ["y"])), None, UnsupportedModelError,
               "attribute 'kernel_shape' is required")
    same_error(m(helper.make_node("MaxPool", ["X"], ["y"], kernel_shape=[2, 2, 2, 2])), None,
               UnsupportedModelError, r"4-D pooling is not supported \(1-D to 3-D are\)")
    # (a dilated AveragePool runs now: test_onnx_pool_nd.py)
    same_error(m(helper.make_node("MaxPool", ["X"], ["y"], kernel_shape=[2, 2], bogus=1)), None,
               UnsupportedModelError, "attribute 'bogus' is not supported")
    same_error(m(helper.make_node("MaxPool", ["X"], ["y"], kernel_shape="ab")), None,
               UnsupportedModelError, "attribute 'kernel_shape' has type string, expected ints")
    s = {"s": np.array([1, 1, 2, 2], np.float32)}
    same_error(m(helper.make_node("Resize", ["X", "", "s"], ["y"], mode="area"), s), None,
               UnsupportedModelError, r"mode 'area' is not supported \(nearest, linear and cubic are\)")
    same_error(m(helper.make_node("Resize", ["X", "", "s"], ["y"], mode="linear",
                                  coordinate_transformation_mode="tf_half_pixel_for_nn"), s), None,
               UnsupportedModelError, r"coordinate_transformation_mode='tf_half_pixel_for_nn' is not "
                                      r"supported")
    same_error(m(helper.make_node("Resize", ["X", "", "s"], ["y"], mode="nearest", antialias=1),
                 s, opset=18), None, UnsupportedModelError,
               r"antialias=1 with mode 'nearest': ONNX defines antialiasing for the linear and cubic")
    same_error(m(helper.make_node("Resize", ["X", "", "s"], ["y"], mode="linear", axes=[1, 3]),
                 s, opset=18), None, UnsupportedModelError, r"axes \[1, 3\] are not supported")
    same_error(m(helper.make_node("Upsample", ["X", "s"], ["y"], mode="linear"), s, opset=9),
               None, UnsupportedModelError, "Upsample mode 'linear' is not supported")


def test_run_errors():
    def run_error(nodes, inputs, kind, match, inits=None, opset=17):
        data = model(nodes, {n: (helper.np_dtype_to_tensor_dtype(v.dtype), list(v.shape))
                             for n, v in inputs.items()}, {"y": (F, None)}, inits, opset)
        same_error(data, inputs, kind, match)
    x = rand(1, 2, 4, 4)
    run_error([helper.make_node("Conv", ["X", "W"], ["y"])], {"X": x}, ValueError,
              r"X has 2 channels, W \(3, 3, 3, 3\) with group=1 expects 3", {"W": rand(3, 3, 3, 3)})
    run_error([helper.make_node("Conv", ["X", "W"], ["y"])], {"X": rand(1, 2, 2, 2)}, ValueError,
              "conv2d: the output size 0 x 0 is below 1", {"W": rand(3, 2, 3, 3)})
    run_error([helper.make_node("Conv", ["X", "W"], ["y"])], {"X": rand(2, 4)}, ValueError,
              r"X must be 3-D or 4-D \(N, C, \.\.\.\), got \(2, 4\)", {"W": rand(3, 4, 1, 1)})
    run_error([helper.make_node("Conv", ["X", "W", "B"], ["y"])], {"X": x}, ValueError,
              r"conv2d: bias has shape \(2,\), expected \(3,\)",
              {"W": rand(3, 2, 1, 1), "B": rand(2)})
    run_error([helper.make_node("MatMul", ["X", "W"], ["y"])], {"X": rand(3, 4)}, ValueError,
              r"A \(3, 4\) and B \(5, 2\) do not multiply", {"W": rand(5, 2)})
    run_error([helper.make_node("MatMul", ["X", "W"], ["y"])], {"X": rand(3, 4), "W": rand(5, 2)},
              ValueError, r"mismatch in its core dimension 0.*\(size 5 is different from 4\)")
    run_error([helper.make_node("MatMul", ["X", "W"], ["y"])],
              {"X": rand(2, 3, 4), "W": rand(3, 4, 2)}, ValueError,
              r"could not be broadcast together: batch dimensions \(2,\) and \(3,\)")
    run_error([helper.make_node("MatMul", ["X", "W"], ["y"])],
              {"X": np.array(1.5, np.float32), "W": rand(3)}, ValueError,
              "Input operand 0 does not have enough dimensions")
    run_error([helper.make_node("Gemm", ["X", "W"], ["y"])], {"X": rand(2, 3, 4)}, ValueError,
              r"A must be 2-D, got \(2, 3, 4\)", {"W": rand(4, 2)})
    run_error([helper.make_node("Gemm", ["X", "W", "C"], ["y"])], {"X": rand(3, 4)}, ValueError,
              r"linear: bias has shape \(1,\), expected \(2,\)", {"W": rand(4, 2), "C": rand(1)})
    run_error([helper.make_node("Gemm", ["X", "W", "C"], ["y"], beta=2.0)], {"X": rand(3, 4)},
              ValueError, r"shapes \(3, 2\) and \(4, 2\) do not broadcast",
              {"W": rand(4, 2), "C": rand(4, 2)})
    run_error([helper.make_node("MaxPool", ["X"], ["y"], kernel_shape=[5, 5])], {"X": x},
              ValueError, "max_pool2d: the output size 0 x 0 is below 1")
    run_error([helper.make_node("AveragePool", ["X"], ["y"], kernel_shape=[2, 2], dilations=[8, 8],
                                pads=[1, 1, 1, 1])], {"X": x}, ValueError,
              r"the output size along spatial axis 0 is below 1")
    s = {"s": np.array([1, 1, 2, 2], np.float32)}
    run_error([helper.make_node("Resize", ["X", "", "s", "z"], ["y"], mode="linear")], {"X": x},
              ValueError, "give exactly one of scales and sizes",
              dict(s, z=np.array([1, 2, 8, 8], np.int64)))
    run_error([helper.make_node("Resize", ["X", "", "s"], ["y"], mode="linear")],
              {"X": rand(2, 4, 4)}, ValueError,
              r"only 4-D \(N, C, H, W\) inputs are supported, got \(2, 4, 4\)", s)
    run_error([helper.make_node("Resize", ["X", "", "s"], ["y"], mode="linear")], {"X": x},
              ValueError, r"scales \[2\.0, 1\.0, 2\.0, 2\.0\] must be 4 values starting 1, 1",
              {"s": np.array([2, 1, 2, 2], np.float32)})
    run_error([helper.make_node("Resize", ["X", "", "", "z"], ["y"], mode="linear")], {"X": x},
              ValueError, r"sizes \[1, 3, 8, 8\] must keep N and C of \(1, 2, 4, 4\)",
              {"z": np.array([1, 3, 8, 8], np.int64)})
    run_error([helper.make_node("Resize", ["X", "s"], ["y"], mode="nearest")], {"X": x},
              ValueError, r"opset-10 nearest Resize with scales \[1\.0, 1\.0, 0\.5, 2\.0\] below 1",
              {"s": np.array([1, 1, 0.5, 2], np.float32)}, opset=10)
    run_error([helper.make_node("Upsample", ["X", "s"], ["y"])], {"X": x}, ValueError,
              r"Upsample scales \[1\.0, 1\.0, 0\.30000001192092896, 2\.0\] below 1",
              {"s": np.array([1, 1, 0.3, 2], np.float32)}, opset=9)
    run_error([helper.make_node("Resize", ["X", "", "s"], ["y"], mode="linear")], {"X": x},
              TypeError, "input scales must be float32, got int64",
              {"s": np.array([1, 1, 2, 2], np.int64)})
    run_error([helper.make_node("MaxPool", ["X"], ["y"], kernel_shape=[2, 2])],
              {"X": np.zeros((1, 1, 4, 4), np.int64)}, TypeError,
              "input X must be float32, got int64")
    run_error([helper.make_node("MatMul", ["X", "W"], ["y"])], {"X": rand(3, 4)}, TypeError,
              "input B must be float32, got int64", {"W": np.ones((4, 2), np.int64)})
    run_error([helper.make_node("Conv", ["X", "W"], ["y"])], {"X": rand(1, 2, 4, 9)}, ValueError,
              r"cannot reshape \(1, 3, 4, 7\) to \(1, 3, 7\)", {"W": rand(3, 2, 3)})
    run_error([helper.make_node("ConvTranspose", ["X", "W"], ["y"], group=2)],
              {"X": rand(1, 3, 4, 4)}, ValueError, "group=2 does not divide the 3 input channels",
              {"W": rand(3, 1, 2, 2)})


def test_forms_onnxruntime_refuses():
    """Shapes the Python runner accepts beyond ONNX's rules: the same bits."""
    one("Conv", {"X": rand(1, 2, 9)}, {}, {"W": rand(3, 2, 1, 3)}, use_ort=False)   # 3-D X, 2-D W
    one("Conv", {"X": rand(1, 2, 1, 9)}, {}, {"W": rand(3, 2, 3)}, use_ort=False)   # 4-D X, 1-D W
    one("Gemm", {"A": rand(3, 4)}, {"beta": 2.0}, {"B": rand(4, 2), "C": rand(2, 3, 2)},
        use_ort=False)                                                             # C broadcasts up
    one("ConvTranspose", {"X": rand(1, 2, 3, 3)}, {}, {"W": rand(2, 1, 2, 2), "B": rand(3)},
        use_ort=False)                                                             # bias broadcasts up


@pytest.mark.parametrize("op,inits,attrs", [
    ("Conv", {"X0": rand(1, 2, 5, 5), "W": rand(3, 2, 3, 3), "B": rand(3)}, {}),
    ("ConvTranspose", {"X0": rand(1, 2, 5, 5), "W": rand(2, 3, 3, 3), "B": rand(3)},
     {"strides": [2, 2]}),
    ("MatMul", {"X0": rand(2, 4, 5), "W": rand(5, 3)}, {}),
    ("Gemm", {"X0": rand(4, 5), "W": rand(3, 5), "B": rand(3)}, {"transB": 1, "alpha": 0.5}),
    ("MaxPool", {"X0": rand(1, 2, 5, 5)}, {"kernel_shape": [2, 2]}),
    ("AveragePool", {"X0": rand(1, 2, 5, 5)}, {"kernel_shape": [2, 2]}),
    ("Resize", {"X0": rand(1, 2, 3, 3), "r": np.zeros(0, np.float32),
                "s": np.array([1, 1, 2, 2], np.float32)}, {"mode": "linear"}),
])
def test_folded_at_load(op, inits, attrs):
    """Every input a constant: computed once at load (the packed weights
    included), with the bits of a run."""
    node = helper.make_node(op, list(inits), ["c"], **attrs)
    shape = so.load(model([node], {}, {"c": (F, None)}, inits)).run({})["c"].shape
    add = helper.make_node("Add", ["c", "Z"], ["y"])
    data = model([node, add], {"Z": (F, list(shape))}, {"y": (F, None)}, inits)
    check(data, {"Z": rand(*shape)}, rtol=1e-4, atol=1e-5, nodes=1)
