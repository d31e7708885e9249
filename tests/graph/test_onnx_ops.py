"""samebits.onnx operator by operator: one-node (or few-node) models in the
attribute forms exporters emit, run by samebits in both modes and by ONNX
Runtime. Integer outputs must be equal; float32 outputs close (exact mode's
own bits are pinned by the operator tests and the models suite); exact mode
must give the same bits at 1 and 2 threads. Plus the errors a model gets for
what the runner lacks."""
from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
from onnx import TensorProto as TP  # noqa: E402
from onnx import helper, numpy_helper  # noqa: E402

import samebits.onnx as so  # noqa: E402

import python_runner_record  # noqa: E402
from conftest import bits  # noqa: E402
from onnx_cases import normal_floats  # noqa: E402
from onnx_cases import graph_model  # noqa: E402

RNG = np.random.default_rng(1234)
RESEED_RNG_PER_TEST = True   # conftest: per-test inputs, for python_runner_record
F = TP.FLOAT
I64 = TP.INT64


def model(nodes, inputs: dict, outputs: dict, inits: dict | None = None, opset: int = 17) -> bytes:
    """onnx_cases.graph_model at IR version 8 whatever the opset (the record's keys)."""
    return graph_model(nodes, inputs, outputs, inits, opset, ir_version=8)


def rand(*shape, scale=1.0):
    return normal_floats(RNG, shape, scale)


def compare(data: bytes, feeds: dict, rtol=2e-5, atol=2e-6):
    """Runs samebits (exact at 1 and 2 threads, fast) and ONNX Runtime."""
    want = ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(None, feeds)
    exact1 = list(so.load(data, mode="exact", threads=1).run(feeds).values())
    exact2 = list(so.load(data, mode="exact", threads=2).run(feeds).values())
    fast = list(so.load(data, mode="fast").run(feeds).values())
    same_bits_as_python_runner(data, feeds, exact1, fast)
    for w, e1, e2, f in zip(want, exact1, exact2, fast):
        for got in (e1, f):
            assert got.shape == w.shape, (got.shape, w.shape)
            if w.dtype.kind in "iub":
                assert got.dtype == w.dtype and np.array_equal(got, w)
            else:
                assert got.dtype == np.float32
                assert np.array_equal(np.isnan(got), np.isnan(w))
                np.testing.assert_allclose(got, w, rtol=rtol, atol=atol)
        assert bits(e1).tobytes() == bits(e2).tobytes() if e1.dtype == np.float32 else \
            np.array_equal(e1, e2)
    return exact1


def same_bits_as_python_runner(data: bytes, feeds: dict, exact: list, fast: list) -> None:
    """Both modes' outputs of the C graph runtime have the bits of the
    Python runner it replaced (python_runner_record)."""
    python_runner_record.check(data, feeds, "exact", exact)
    python_runner_record.check(data, feeds, "fast", fast)


def one(op, inputs, attrs=None, inits=None, opset=17, out_type=F, n_out=1, **kw):
    """A one-node model over `inputs` (name -> array); initializers are
    constants. Returns what compare() returns."""
    inits = inits or {}
    names = list(inputs) + list(inits)
    node = helper.make_node(op, kw.pop("order", names), [f"y{i}" for i in range(n_out)],
                            **(attrs or {}))
    ins = {n: (helper.np_dtype_to_tensor_dtype(v.dtype), list(v.shape)) for n, v in
           inputs.items()}
    types = out_type if isinstance(out_type, (list, tuple)) else [out_type] * n_out
    outs = {f"y{i}": (types[i], None) for i in range(n_out)}
    return compare(model([node], ins, outs, inits, opset), inputs, **kw)


X4 = rand(2, 6, 9, 11)


@pytest.mark.parametrize("attrs,wshape", [
    ({"pads": [1, 1, 1, 1]}, (8, 6, 3, 3)),
    ({"pads": [0, 1, 2, 1], "strides": [2, 1]}, (8, 6, 3, 3)),
    ({"auto_pad": "SAME_UPPER", "strides": [2, 2]}, (8, 6, 4, 4)),
    ({"auto_pad": "SAME_LOWER", "strides": [2, 2]}, (8, 6, 4, 4)),
    ({"auto_pad": "VALID", "dilations": [2, 2]}, (4, 6, 3, 3)),
    ({"group": 6, "pads": [2, 2, 2, 2]}, (6, 1, 5, 5)),
    ({"group": 2, "kernel_shape": [1, 1]}, (4, 3, 1, 1)),
])
@pytest.mark.parametrize("bias", [True, False])
def test_conv(attrs, wshape, bias):
    inits = {"W": rand(*wshape, scale=0.3)}
    if bias:
        inits["B"] = rand(wshape[0])
    one("Conv", {"X": X4}, attrs, inits)


def test_conv_1d_and_weights_as_input():
    one("Conv", {"X": rand(2, 4, 30)}, {"pads": [1, 2], "strides": [2]},
        {"W": rand(5, 4, 4), "B": rand(5)})
    one("Conv", {"X": X4, "W": rand(3, 6, 2, 2)}, {"kernel_shape": [2, 2]})


@pytest.mark.parametrize("attrs,wshape", [
    ({"strides": [2, 2], "pads": [1, 1, 1, 1]}, (6, 4, 4, 4)),
    ({"strides": [2, 2]}, (6, 3, 2, 2)),
    ({"strides": [2, 2], "output_padding": [1, 1], "pads": [1, 1, 1, 1]}, (6, 2, 3, 3)),
    ({"group": 2, "strides": [1, 2], "dilations": [2, 1]}, (6, 2, 3, 3)),
    ({"strides": [2, 2], "output_shape": [19, 23]}, (6, 2, 3, 3)),
    ({"strides": [2, 2], "auto_pad": "SAME_UPPER"}, (6, 2, 3, 3)),
])
def test_conv_transpose(attrs, wshape):
    one("ConvTranspose", {"X": X4}, attrs, {"W": rand(*wshape, scale=0.3), "B": rand(wshape[1] *
                                                                                    attrs.get(
                                                                                        "group",
                                                                                        1))})


def test_conv_transpose_1d():
    one("ConvTranspose", {"X": rand(2, 4, 10)}, {"strides": [3], "pads": [1, 0]},
        {"W": rand(4, 5, 4)})


@pytest.mark.parametrize("attrs,ashape,bshape,cshape", [
    ({"transB": 1}, (5, 7), (3, 7), (3,)),
    ({}, (5, 7), (7, 3), (1, 3)),
    ({"transA": 1, "alpha": 0.5, "beta": 2.0}, (7, 5), (7, 3), (5, 3)),
    ({"alpha": 1.5}, (5, 7), (7, 3), None),
    ({"beta": 0.25}, (5, 7), (7, 3), ()),
])
def test_gemm(attrs, ashape, bshape, cshape):
    inits = {"B": rand(*bshape)}
    if cshape is not None:
        inits["C"] = rand(*cshape) if cshape else np.array(1.5, np.float32)
    one("Gemm", {"A": rand(*ashape)}, attrs, inits)
    one("Gemm", {"A": rand(*ashape), "B": rand(*bshape)}, attrs,
        {k: v for k, v in inits.items() if k == "C"})


@pytest.mark.parametrize("ashape,bshape,const_b", [
    ((5, 7), (7, 3), True), ((2, 4, 5, 7), (7, 3), True), ((7,), (7, 3), True),
    ((2, 3, 5, 7), (2, 3, 7, 4), False), ((3, 5, 7), (7,), False), ((1, 5, 7), (3, 7, 2), False),
])
def test_matmul(ashape, bshape, const_b):
    if const_b:
        one("MatMul", {"A": rand(*ashape)}, None, {"B": rand(*bshape)})
    else:
        one("MatMul", {"A": rand(*ashape), "B": rand(*bshape)})


def test_batch_norm_4d_and_2d():
    for x in (X4, rand(5, 6)):
        one("BatchNormalization", {"X": x}, {"epsilon": 1e-3},
            {"s": rand(6), "b": rand(6), "m": rand(6), "v": np.abs(rand(6)) + 0.5})


@pytest.mark.parametrize("op", ["Add", "Sub", "Mul", "Div"])
def test_arithmetic_broadcasts_float_and_int(op):
    one(op, {"A": rand(2, 3, 4), "B": rand(3, 1)})
    one(op, {"A": rand(4)}, inits={"B": np.array(2.5, np.float32)})
    a = RNG.integers(-50, 50, (2, 3)).astype(np.int64)
    b = RNG.integers(1, 9, (3,)).astype(np.int64) * np.array([1, -1, 1])
    one(op, {"A": a}, inits={"B": b}, out_type=I64)


def test_pow_float_and_integer_exponents():
    one("Pow", {"A": np.abs(rand(3, 4)) + 0.1, "B": rand(4)}, rtol=1e-5)
    one("Pow", {"A": rand(3, 4)}, inits={"B": np.array(2.0, np.float32)})
    one("Pow", {"A": rand(3, 4)}, inits={"B": np.array(3, np.int64)})


SPECIAL = np.array([0.0, -0.0, 1.0, -1.0, 3.0, -3.0, 7.0, -7.0, 0.5, 1e-30, np.inf, -np.inf,
                    np.nan, 50.0, -50.0, 88.0, -104.0], np.float32)


@pytest.mark.parametrize("op,attrs", [
    ("Relu", {}), ("LeakyRelu", {"alpha": 0.2}), ("LeakyRelu", {}), ("Sigmoid", {}),
    ("HardSigmoid", {}), ("HardSigmoid", {"alpha": 1 / 6, "beta": 0.5}), ("HardSwish", {}),
    ("Tanh", {}), ("Erf", {}), ("Exp", {}), ("Neg", {}), ("Abs", {}), ("Reciprocal", {}),
    ("Elu", {}), ("Elu", {"alpha": 0.3}), ("Selu", {}), ("Selu", {"alpha": 1.5, "gamma": 2.0}),
    ("Softplus", {}), ("Softsign", {}), ("Sin", {}), ("Cos", {}),
])
def test_unary(op, attrs):
    x = np.concatenate([SPECIAL, rand(200, scale=4)]).reshape(1, -1)
    one(op, {"X": x}, attrs, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("op", ["Floor", "Ceil", "Round"])
def test_rounding(op):
    x = np.concatenate([SPECIAL, np.array([-0.5, 0.5, 1.5, 2.5, -2.5, -0.2, 8388607.5,
                                           -8388609.0], np.float32), rand(100, scale=5)])
    one(op, {"X": x})


@pytest.mark.parametrize("op", ["Log", "Sqrt"])
def test_unary_positive(op):
    one(op, {"X": np.abs(rand(3, 50)) + 1e-3})


def test_clip_forms():
    x = np.concatenate([SPECIAL, rand(50, scale=8)])
    one("Clip", {"X": x}, inits={"lo": np.array(0.0, np.float32), "hi": np.array(6.0,
                                                                                 np.float32)})
    one("Clip", {"X": x}, inits={"lo": np.array(-1.0, np.float32)})
    one("Clip", {"X": x}, {"min": -2.0, "max": 2.0}, opset=10)
    one("Clip", {"X": x}, {"max": 2.0}, opset=10)
    node = helper.make_node("Clip", ["X", "", "hi"], ["y0"])
    compare(model([node], {"X": (F, [x.size])}, {"y0": (F, None)},
                  {"hi": np.array(1.0, np.float32)}), {"X": x})


def test_prelu():
    one("PRelu", {"X": np.concatenate([SPECIAL, rand(7)]).reshape(1, 24, 1)},
        inits={"slope": rand(24, 1)})


@pytest.mark.parametrize("opset,axis,shape", [(11, 1, (2, 3, 5)), (13, 1, (2, 3, 5)),
                                              (13, -1, (4, 7)), (11, -1, (2, 3, 5))])
@pytest.mark.parametrize("op", ["Softmax", "LogSoftmax"])
def test_softmax_axis_rules(op, opset, axis, shape):
    one(op, {"X": rand(*shape, scale=3)}, {"axis": axis}, opset=opset)


@pytest.mark.parametrize("axis,bias", [(-1, True), (-2, True), (-1, False)])
def test_layer_norm(axis, bias):
    x = rand(2, 5, 16, scale=3)
    norm = x.shape[axis:]
    inits = {"s": rand(*norm)}
    if bias:
        inits["b"] = rand(*norm)
    one("LayerNormalization", {"X": x}, {"axis": axis, "epsilon": 1e-5}, inits, rtol=1e-4,
        atol=1e-5)


@pytest.mark.parametrize("op", ["ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin"])
@pytest.mark.parametrize("axes,keepdims", [([1], 1), ([0, 2], 0), ([-1], 0), (None, 1)])
def test_reductions(op, axes, keepdims):
    x = rand(3, 4, 5)
    attrs = {"keepdims": keepdims}
    if op == "ReduceSum":
        if axes is None:
            one(op, {"X": x}, attrs)
        else:
            one(op, {"X": x}, attrs, {"axes": np.array(axes, np.int64)})
    else:
        if axes is not None:
            attrs["axes"] = axes
        one(op, {"X": x}, attrs)


@pytest.mark.parametrize("attrs", [
    {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]},
    {"kernel_shape": [3, 3], "strides": [2, 2], "ceil_mode": 1},
    {"kernel_shape": [2, 3], "pads": [0, 1, 1, 0]},
    {"kernel_shape": [3, 3], "auto_pad": "SAME_UPPER", "strides": [2, 2]},
    {"kernel_shape": [2, 2], "dilations": [2, 2]},
    {"kernel_shape": [5, 5], "strides": [1, 1], "pads": [2, 2, 2, 2]},
])
def test_max_pool(attrs):
    one("MaxPool", {"X": X4}, attrs)


@pytest.mark.parametrize("attrs", [
    {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]},
    {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1], "count_include_pad": 1},
    {"kernel_shape": [3, 3], "strides": [2, 2], "ceil_mode": 1},
    {"kernel_shape": [2, 2], "strides": [2, 2]},
])
def test_average_pool(attrs):
    one("AveragePool", {"X": X4}, attrs)


def test_pools_1d_and_global():
    one("MaxPool", {"X": rand(2, 3, 20)}, {"kernel_shape": [3], "strides": [2]})
    one("AveragePool", {"X": rand(2, 3, 20)}, {"kernel_shape": [4], "strides": [2],
                                                "pads": [1, 1]})
    one("GlobalAveragePool", {"X": X4})
    one("GlobalMaxPool", {"X": X4})
    one("GlobalAveragePool", {"X": rand(2, 5, 7)})


@pytest.mark.parametrize("attrs,scales,sizes", [
    ({"mode": "nearest", "coordinate_transformation_mode": "asymmetric",
      "nearest_mode": "floor"}, [1, 1, 2, 2], None),
    ({"mode": "linear"}, [1, 1, 2, 2], None),
    ({"mode": "linear"}, None, [2, 6, 13, 7]),
    ({"mode": "linear", "coordinate_transformation_mode": "align_corners"}, None, [2, 6, 20, 5]),
    ({"mode": "linear", "coordinate_transformation_mode": "pytorch_half_pixel"}, [1, 1, 1.5, 2],
     None),
])
def test_resize(attrs, scales, sizes):
    inits = {"roi": np.zeros(0, np.float32)}
    node_inputs = ["X", "roi"]
    if scales is not None:
        inits["scales"] = np.array(scales, np.float32)
        node_inputs.append("scales")
    else:
        node_inputs.append("")
        inits["sizes"] = np.array(sizes, np.int64)
        node_inputs.append("sizes")
    one("Resize", {"X": X4}, attrs, inits, order=node_inputs, rtol=1e-5, atol=2e-6)


@pytest.mark.parametrize("scales", [[1, 1, 2, 2], [1, 1, 3, 2], [1, 1, 2.5, 1.5]])
def test_resize_10_and_upsample_nearest(scales):
    """Opset 10's Resize and Upsample (opset 9) have no nearest_mode: both
    pick floor(x / scale) when upsampling, as ONNX Runtime does."""
    s = np.array(scales, np.float32)
    one("Resize", {"X": X4}, {"mode": "nearest"}, {"scales": s}, opset=10)
    one("Upsample", {"X": X4}, {"mode": "nearest"}, {"scales": s}, opset=9)


def test_depth_to_space_and_back():
    x = rand(2, 12, 3, 5)
    one("DepthToSpace", {"X": x}, {"blocksize": 2})
    one("DepthToSpace", {"X": x}, {"blocksize": 2, "mode": "CRD"})
    one("SpaceToDepth", {"X": rand(2, 3, 6, 4)}, {"blocksize": 2})


def test_movement_ops():
    x = rand(2, 3, 4, 5)
    one("Transpose", {"X": x}, {"perm": [0, 3, 1, 2]})
    one("Transpose", {"X": x})
    one("Concat", {"A": x, "B": rand(2, 1, 4, 5)}, {"axis": 1})
    one("Concat", {"A": np.arange(3, dtype=np.int64), "B": np.arange(2, dtype=np.int64)},
        {"axis": 0}, out_type=I64)
    one("Split", {"X": x}, {"axis": 3, "split": [2, 3]}, opset=11, n_out=2)
    one("Split", {"X": x}, {"axis": 2}, {"split": np.array([1, 3], np.int64)}, n_out=2)
    one("Split", {"X": x}, {"axis": 1}, n_out=3)
    one("Flatten", {"X": x}, {"axis": 2})
    one("Flatten", {"X": x}, {"axis": 0})
    one("Reshape", {"X": x}, None, {"shape": np.array([0, -1, 5], np.int64)})
    one("Identity", {"X": x})
    one("Squeeze", {"X": rand(2, 1, 3, 1)}, None, {"axes": np.array([1, -1], np.int64)})
    one("Squeeze", {"X": rand(2, 1, 3, 1)}, {"axes": [1]}, opset=11)
    one("Unsqueeze", {"X": rand(2, 3)}, None, {"axes": np.array([0, -1], np.int64)})
    one("Unsqueeze", {"X": rand(2, 3)}, {"axes": [1]}, opset=11)
    one("Expand", {"X": rand(3, 1)}, None, {"shape": np.array([2, 1, 4], np.int64)})
    one("Tile", {"X": rand(2, 3)}, None, {"r": np.array([2, 3], np.int64)})
    one("Pad", {"X": x}, {"mode": "constant"}, {"p": np.array([0, 1, 0, 2, 0, 0, 1, 1],
                                                              np.int64),
                                                "v": np.array(1.5, np.float32)})


@pytest.mark.parametrize("starts,ends,axes,steps", [
    ([1], [3], [1], [1]), ([0, -3], [2, 100], [0, 3], [1, 2]), ([-1], [-1000], [2], [-1]),
    ([3, 4], [0, -100], [2, 3], [-2, -3]), ([0], [2 ** 62], [1], None),
])
def test_slice(starts, ends, axes, steps):
    x = rand(2, 3, 4, 5)
    inits = {"s": np.array(starts, np.int64), "e": np.array(ends, np.int64),
             "a": np.array(axes, np.int64)}
    if steps is not None:
        inits["k"] = np.array(steps, np.int64)
    one("Slice", {"X": x}, None, inits)
    one("Slice", {"X": np.arange(120, dtype=np.int64).reshape(2, 3, 4, 5)}, None, inits,
        out_type=I64)


def test_gather_float_and_int():
    x = rand(5, 4, 3)
    one("Gather", {"X": x}, {"axis": 1}, {"i": np.array([[0, -1], [2, 2]], np.int64)})
    one("Gather", {"X": x}, {"axis": 0}, {"i": np.array(-2, np.int64)})
    one("Gather", {"X": np.arange(12, dtype=np.int64).reshape(3, 4)}, {"axis": 1},
        {"i": np.array([3, 0], np.int64)}, out_type=I64)


def test_shape_subgraph_ops():
    x = rand(2, 3, 4)
    one("Shape", {"X": x}, out_type=I64)
    one("Shape", {"X": x}, {"start": 1, "end": -1}, out_type=I64)
    one("Size", {"X": x}, out_type=I64)
    one("Range", {"a": np.array(2, np.int64), "b": np.array(11, np.int64),
                  "c": np.array(3, np.int64)}, out_type=I64)
    one("Range", {"a": np.array(0.5, np.float32), "b": np.array(3.0, np.float32),
                  "c": np.array(0.3, np.float32)})
    one("ConstantOfShape", {"s": np.array([2, 3], np.int64)},
        {"value": helper.make_tensor("v", I64, [1], [7])}, out_type=I64)
    one("ConstantOfShape", {"s": np.array([2, 3], np.int64)},
        {"value": helper.make_tensor("v", F, [1], [-0.0])})
    one("Cast", {"X": np.array([1.7, -2.9, 0.0, 3e9], np.float32)}, {"to": I64}, out_type=I64)
    one("Cast", {"X": np.array([1, -2, 2 ** 40 + 1], np.int64)}, {"to": F})
    one("Cast", {"X": np.array([0, 3], np.int64)}, {"to": TP.BOOL}, out_type=TP.BOOL)
    a, b = np.array([[1, 2, 3]], np.int64), np.array([[1], [3]], np.int64)
    for op in ("Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual"):
        one(op, {"A": a, "B": b}, out_type=TP.BOOL)
        one(op, {"A": rand(2, 3), "B": rand(3)}, out_type=TP.BOOL)
    c = np.array([[True, False, True]])
    one("Where", {"c": c, "a": rand(2, 3), "b": rand(2, 1)})
    one("Where", {"c": c, "a": a, "b": b}, out_type=I64)
    one("Not", {"c": c}, out_type=TP.BOOL)
    one("And", {"a": c, "b": np.array([[True], [False]])}, out_type=TP.BOOL)


def test_constant_forms():
    for attrs in ({"value": numpy_helper.from_array(rand(2, 3), "v")}, {"value_float": 2.5},
                  {"value_floats": [1.0, 2.0]}, {"value_int": 4}, {"value_ints": [1, -2]}):
        out_type = I64 if "int" in next(iter(attrs)) else F
        node = helper.make_node("Constant", [], ["y0"], **attrs)
        compare(model([node], {}, {"y0": (out_type, None)}), {})


def test_bert_style_mask_and_attention_block():
    """Unsqueeze, Cast, Sub, Mul of an int mask feeding Softmax: the pattern
    HF exporters emit."""
    nodes = [helper.make_node("Unsqueeze", ["m", "ax"], ["m1"]),
             helper.make_node("Cast", ["m1"], ["m2"], to=F),
             helper.make_node("Sub", ["one", "m2"], ["m3"]),
             helper.make_node("Mul", ["m3", "low"], ["m4"]),
             helper.make_node("Add", ["s", "m4"], ["s2"]),
             helper.make_node("Softmax", ["s2"], ["y0"], axis=-1)]
    inits = {"ax": np.array([1, 2], np.int64), "one": np.array(1.0, np.float32),
             "low": np.array(np.finfo(np.float32).min, np.float32)}
    mask = np.array([[1, 1, 1, 0], [1, 1, 0, 0]], np.int64)
    data = model(nodes, {"m": (I64, [2, 4]), "s": (F, [2, 3, 4, 4])}, {"y0": (F, None)}, inits)
    compare(data, {"m": mask, "s": rand(2, 3, 4, 4)})


# ---- fusions at load -------------------------------------------------------------

@pytest.mark.parametrize("act,attrs,extra", [
    ("Relu", {}, {}), ("LeakyRelu", {"alpha": 0.1}, {}), ("Sigmoid", {}, {}), ("Tanh", {}, {}),
    ("HardSwish", {}, {}), ("HardSigmoid", {"alpha": 1 / 6, "beta": 0.5}, {}),
    ("Clip", {}, {"lo": np.array(0.0, np.float32), "hi": np.array(6.0, np.float32)}),
])
@pytest.mark.parametrize("product", ["Conv", "Gemm", "MatMulAdd"])
def test_fused_epilogues_keep_the_exact_bits(product, act, attrs, extra):
    """A product followed by its activation runs fused (the activation as the
    product's epilogue, MatMul's Add as its bias); exact mode must give the
    bits of the unfused graph, which the runner keeps when the product's
    output is also a graph output. Fast mode stays close."""
    x = rand(2, 4, 6, 6, scale=3) if product == "Conv" else rand(5, 8, scale=3)
    inits = dict(extra)
    if product == "Conv":
        inits.update(W=rand(3, 4, 3, 3), B=rand(3))
        nodes = [helper.make_node("Conv", ["X", "W", "B"], ["p"], pads=[1, 1, 1, 1])]
    elif product == "Gemm":
        inits.update(W=rand(7, 8), B=rand(7))
        nodes = [helper.make_node("Gemm", ["X", "W", "B"], ["p"], transB=1)]
    else:
        inits.update(W=rand(8, 7), B=rand(7))
        nodes = [helper.make_node("MatMul", ["X", "W"], ["m"]),
                 helper.make_node("Add", ["B", "m"], ["p"])]
    act_inputs = ["p", "lo", "hi"] if act == "Clip" else ["p"]
    nodes.append(helper.make_node(act, act_inputs, ["y"], **attrs))
    ins = {"X": (F, list(x.shape))}
    fused = model(nodes, ins, {"y": (F, None)}, inits)
    unfused = model(nodes, ins, {"y": (F, None), "p": (F, None)}, inits)
    a = so.load(fused, mode="exact")
    assert a.node_count == 1                # one fused node ran
    got = a.run({"X": x})["y"]
    b = so.load(unfused, mode="exact")
    assert b.node_count > 1                 # the activation ran on its own
    want = b.run({"X": x})["y"]
    assert bits(got).tobytes() == bits(want).tobytes()
    compare(fused, {"X": x}, rtol=1e-4, atol=2e-5)


def test_fast_mode_folds_batch_norm_into_conv():
    inits = {"W": rand(3, 4, 3, 3), "B": rand(3), "s": rand(3), "b": rand(3), "m": rand(3),
             "v": np.abs(rand(3)) + 0.5}
    nodes = [helper.make_node("Conv", ["X", "W", "B"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("BatchNormalization", ["c", "s", "b", "m", "v"], ["n"]),
             helper.make_node("Relu", ["n"], ["y"])]
    data = model(nodes, {"X": (F, [2, 4, 6, 6])}, {"y": (F, None)}, inits)
    assert so.load(data, mode="fast").node_count == 1         # Conv + BN + Relu as one conv
    # exact: the BatchNormalization's own steps in the convolution's epilogue
    # (the graph's bits: tests/graph/test_conv_fusion.py)
    assert so.load(data, mode="exact").node_count == 1
    compare(data, {"X": rand(2, 4, 6, 6)}, rtol=1e-4, atol=1e-5)


# ---- errors -----------------------------------------------------------------------------

def test_unsupported_operator_names_the_node():
    node = helper.make_node("Bernoulli", ["A"], ["y0"], name="mix")
    data = model([node], {"A": (F, [1, 1, 2, 2])}, {"y0": (F, None)}, opset=19)
    with pytest.raises(so.UnsupportedModelError, match=r"node 0 'mix' \(Bernoulli\): operator "
                                                       r"'Bernoulli' is not supported"):
        so.load(data)


def test_unsupported_attribute_names_it():
    node = helper.make_node("MaxPool", ["X"], ["y0"], name="pool", kernel_shape=[2, 2],
                            storage_order=2)
    data = model([node], {"X": (F, [1, 1, 4, 4])}, {"y0": (F, None)})
    with pytest.raises(ValueError, match=r"'pool' \(MaxPool\).*storage_order=2"):
        so.load(data)
    node = helper.make_node("Relu", ["X"], ["y0"], name="r", bogus=3)
    data = model([node], {"X": (F, [2])}, {"y0": (F, None)})
    with pytest.raises(so.UnsupportedModelError, match=r"'r' \(Relu\): attribute 'bogus' is "
                                                       r"not supported"):
        so.load(data)
    node = helper.make_node("Resize", ["X", "", "s"], ["y0"], name="rs", mode="area")
    data = model([node], {"X": (F, [1, 1, 2, 2])}, {"y0": (F, None)},
                 {"s": np.array([1, 1, 2, 2], np.float32)})
    with pytest.raises(so.UnsupportedModelError, match=r"'rs' \(Resize\): mode 'area'"):
        so.load(data)


def test_unsupported_second_output_names_it():
    node = helper.make_node("BatchNormalization", ["X", "s", "b", "m", "v"], ["y0", "rm"], name="bn")
    data = model([node], {"X": (F, [1, 3, 2, 2])}, {"y0": (F, None)},
                 {n: np.abs(rand(3)) + 0.5 for n in ("s", "b", "m", "v")}, 14)
    with pytest.raises(so.UnsupportedModelError,
                       match=r"'bn' \(BatchNormalization\): output 'rm' \(running mean/var\) is not "
                             r"supported"):
        so.load(data)
    node = helper.make_node("LayerNormalization", ["X", "s"], ["y0", "", "inv"], name="ln")
    data = model([node], {"X": (F, [2, 3])}, {"y0": (F, None)}, {"s": rand(3)})
    so.load(data)   # InvStdDev runs now (test_onnx_layer_norm_stats.py)


def test_below_opset_7_the_unchanged_operators_run():
    """Relu at opset 6 is Relu-6, the operator opset 7 runs: the same bits."""
    x = rand(3, 4)
    node = helper.make_node("Relu", ["X"], ["y0"])
    for mode in ("exact", "fast"):
        six, seven = (so.load(model([node], {"X": (F, [3, 4])}, {"y0": (F, None)}, opset=v),
                              mode=mode).run({"X": x}) for v in (6, 7))
        assert bits(six["y0"]).tobytes() == bits(seven["y0"]).tobytes()


def test_unsupported_opset_domain_and_types():
    node = helper.make_node("Relu", ["X"], ["y0"])
    # Relu got a new version at opset 6 (consumed_inputs dropped): refused at 5
    with pytest.raises(so.UnsupportedModelError,
                       match=r"opset 5 has an older 'Relu' \(ONNX changed it at opset 6\)"):
        so.load(model([node], {"X": (F, [2])}, {"y0": (F, None)}, opset=5))
    with pytest.raises(so.UnsupportedModelError, match="imports opset 29 of the default domain"):
        so.load(model([node], {"X": (F, [2])}, {"y0": (F, None)}, opset=29))
    add = helper.make_node("Add", ["X", "X"], ["y0"])   # legacy broadcast until opset 7
    with pytest.raises(so.UnsupportedModelError, match=r"older 'Add' \(ONNX changed it at opset 7\)"):
        so.load(model([add], {"X": (F, [2])}, {"y0": (F, None)}, opset=6))
    expand = helper.make_node("Expand", ["X", "X"], ["y0"])
    with pytest.raises(so.UnsupportedModelError, match="'Expand' is not defined at opset 6"):
        so.load(model([expand], {"X": (F, [2])}, {"y0": (F, None)}, opset=6))
    node = helper.make_node("FusedConv", ["X"], ["y0"], domain="com.microsoft")
    g = helper.make_graph([node], "t", [helper.make_tensor_value_info("X", F, [2])],
                          [helper.make_tensor_value_info("y0", F, None)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17),
                                            helper.make_opsetid("com.microsoft", 1)])
    with pytest.raises(so.UnsupportedModelError, match="domain 'com.microsoft'"):
        so.load(m.SerializeToString())
    node = helper.make_node("Identity", ["X"], ["y0"])
    data = model([node], {"X": (F, [2])}, {"y0": (F, None)},
                 {"W": np.zeros(2, np.float16)})
    with pytest.raises(so.UnsupportedModelError, match=r"Cast to float64"):
        so.load(model([helper.make_node("Cast", ["X"], ["y0"], to=TP.DOUBLE)],
                      {"X": (F, [2])}, {"y0": (TP.DOUBLE, None)}))
    so.load(data)   # a float16 initializer nobody reads is converted, not refused


def test_run_checks_inputs():
    node = helper.make_node("Relu", ["X"], ["y0"])
    sess = so.load(model([node], {"X": (F, ["N", 3])}, {"y0": (F, None)}))
    assert sess.inputs[0].name == "X" and sess.inputs[0].shape == ("N", 3)
    assert sess.inputs[0].dtype == "float32" and sess.outputs[0].name == "y0"
    with pytest.raises(ValueError, match="input 'X' is missing"):
        sess.run({})
    with pytest.raises(ValueError, match="'Z' is not an input"):
        sess.run({"X": rand(2, 3), "Z": rand(1)})
    with pytest.raises(ValueError, match=r"wants shape \(N, 3\), got \(2, 4\)"):
        sess.run({"X": rand(2, 4)})
    with pytest.raises(TypeError, match="wants float32, got int64"):
        sess.run({"X": np.zeros((2, 3), np.int64)})
    with pytest.raises(TypeError, match="float64"):
        sess.run({"X": np.zeros((2, 3))})
    with pytest.raises(ValueError, match="mode must be"):
        so.load(model([node], {"X": (F, [2])}, {"y0": (F, None)}), mode="quick")
    with pytest.raises(TypeError, match="path or bytes"):
        so.load(12)


def test_buffers_in_buffers_out():
    node = helper.make_node("Relu", ["X"], ["y0"])
    sess = so.load(model([node], {"X": (F, [2, 3])}, {"y0": (F, None)}))
    x = rand(2, 3)
    out = sess.run({"X": memoryview(x)})["y0"]
    assert isinstance(out, memoryview) and out.shape == (2, 3) and out.format in ("f", "<f")
    assert np.array_equal(np.asarray(out), np.maximum(x, 0))
    assert np.array_equal(sess.run({"X": x})["y0"], np.maximum(x, 0))
