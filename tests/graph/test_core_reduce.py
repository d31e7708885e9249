"""The C graph runtime's reductions and normalizations (csrc/graph/ops/reduce/):
ReduceSum/Mean/Max/Min/Prod/SumSquare/L1/L2, GlobalAveragePool,
GlobalMaxPool, CumSum, ArgMax/ArgMin, LayerNormalization, RMSNormalization,
BatchNormalization, GroupNormalization, InstanceNormalization and LRN.

Every output must have the bits (and dtype and shape) the Python runner
gave (its recorded outcomes: python_runner_record) in both modes, exact mode
the same bits at 1 and 2 threads, and be close to ONNX Runtime's where ONNX
Runtime runs the case; errors must have their type and text."""
from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
from onnx import TensorProto as TP  # noqa: E402
from onnx import helper, numpy_helper  # noqa: E402

import samebits.onnx as so  # noqa: E402
import python_runner_record  # noqa: E402  (the Python runner's outcomes: the reference)
from onnx_cases import bits, normal_floats  # noqa: E402
from onnx_cases import graph_model as make  # noqa: E402

F, I64 = TP.FLOAT, TP.INT64
RNG = np.random.default_rng(2024)
RESEED_RNG_PER_TEST = True   # conftest: per-test inputs, for python_runner_record


def rand(*shape, scale=1.0):
    return normal_floats(RNG, shape, scale)


def f32_bits(*values):
    return np.array(values, np.uint32).view(np.float32)


# NaN (canonical, with a payload, negative), infinities, zeros of both signs
SPECIAL = np.concatenate([
    np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 3.5, -2.25, 1e-40, -1e-40, 1e30,
              -1e30, 7.0], np.float32),
    f32_bits(0x7FC00001, 0xFFC00000, 0x7F800001)])


def special(*shape):
    """rand(shape) with the special values spread over it."""
    x = rand(*shape).ravel()
    idx = RNG.choice(x.size, size=min(x.size, SPECIAL.size), replace=False)
    x[idx] = SPECIAL[:idx.size]
    return x.reshape(shape)


def tensor_type(a: np.ndarray) -> int:
    return helper.np_dtype_to_tensor_dtype(a.dtype)


def node_model(op, inputs: dict, attrs=None, inits=None, opset=17, out_type=F, n_out=1,
               order=None, name=""):
    inits = inits or {}
    names = order if order is not None else list(inputs) + list(inits)
    attrs = dict(attrs or {})
    empty = [k for k, v in attrs.items() if isinstance(v, list) and not v]
    node = helper.make_node(op, names, [f"y{i}" for i in range(n_out)], name=name,
                            **{k: v for k, v in attrs.items() if k not in empty})
    node.attribute.extend(helper.make_attribute(k, [], attr_type=onnx.AttributeProto.INTS)
                          for k in empty)
    ins = {n: (tensor_type(v), list(v.shape)) for n, v in inputs.items()}
    return make([node], ins, {f"y{i}": (out_type, None) for i in range(n_out)}, inits, opset)


def c_run(data, feeds, mode, threads=None):
    return list(so.load(data, mode=mode, threads=threads).run(feeds).values())


def same(got, want, what):
    assert got.dtype == want.dtype, (what, got.dtype, want.dtype)
    assert got.shape == want.shape, (what, got.shape, want.shape)
    if want.dtype == np.float32:
        assert bits(got).tobytes() == bits(want).tobytes(), (what, got, want)
    else:
        assert np.array_equal(got, want), (what, got, want)


def check(data, feeds, use_ort=True, rtol=2e-5, atol=2e-6):
    """The C runtime against the Python runner's recorded outcomes (bits,
    both modes), itself at 1 and 2 threads, and ONNX Runtime (close) when
    use_ort."""
    outs = {}
    for mode in ("exact", "fast"):
        got = c_run(data, feeds, mode)
        python_runner_record.check(data, feeds, mode, got)
        outs[mode] = got
    for g, w in zip(c_run(data, feeds, "exact", threads=1), c_run(data, feeds, "exact", threads=2)):
        same(g, w, "threads")
    if use_ort:
        ref = ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(None, feeds)
        for g, w in zip(outs["exact"], ref):
            assert g.shape == w.shape, (g.shape, w.shape)
            if w.dtype.kind in "iub":
                assert g.dtype == w.dtype and np.array_equal(g, w)
            else:
                np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, equal_nan=True)
    return outs["exact"]


def one(op, inputs, attrs=None, inits=None, opset=17, out_type=F, use_ort=True, **kw):
    data = node_model(op, inputs, attrs, inits, opset, out_type, order=kw.pop("order", None))
    return check(data, inputs, use_ort, **kw)


def raises_both(data, feeds, exc, match):
    """The model is refused, at load or at run, with exc matching `match`."""
    with pytest.raises(exc, match=match):
        so.load(data, mode="exact").run(feeds)


def ints(values, dtype=np.int64):
    return np.array(values, dtype=dtype)


# ---- the Reduce family ------------------------------------------------------------------

FLOAT_REDUCTIONS = ["ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceSumSquare",
                    "ReduceL1", "ReduceL2"]
AXES = [None, [], [0], [1], [-1], [0, 2], [2, 0], [-3, -1], [1, 2], [0, 1], [0, 1, 2]]


def reduce_model(op, x, axes, keepdims, opset, noop=None, axes_as_graph_input=False):
    """axes as an attribute before the op's input opset (13 for ReduceSum, 18
    for the others), else as a constant input (or a graph input)."""
    attrs = {"keepdims": keepdims}
    if noop is not None:
        attrs["noop_with_empty_axes"] = noop
    as_input = opset >= (13 if op == "ReduceSum" else 18)
    inputs, inits, order = {"X": x}, {}, ["X"]
    if axes is not None:
        if as_input:
            a = ints(axes)
            if axes_as_graph_input:
                inputs["axes"] = a
            else:
                inits["axes"] = a
            order.append("axes")
        else:
            attrs["axes"] = axes
    return node_model(op, inputs, attrs, inits, opset, tensor_type(x), order=order), inputs


@pytest.mark.parametrize("op", FLOAT_REDUCTIONS)
@pytest.mark.parametrize("opset", [11, 13, 18])
@pytest.mark.parametrize("keepdims", [0, 1])
def test_float_reductions_every_axes_form(op, opset, keepdims):
    x = special(3, 4, 5)
    for axes in AXES:
        data, feeds = reduce_model(op, x, axes, keepdims, opset)
        # ONNX Runtime's ReduceMax/Min skip NaN on some builds; L1/L2/SumSquare with
        # a NaN input are NaN in both
        check(data, feeds, use_ort=False)
        y = rand(3, 4, 5)
        data, feeds = reduce_model(op, y, axes, keepdims, opset)
        check(data, {"X": y}, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("op", FLOAT_REDUCTIONS)
def test_reductions_of_one_element_keep_payloads(op):
    # Max / Min of one element is a copy (its bits as they are), the sums canonical
    x = f32_bits(0x7FC00001, 0xFFC00000, 0x80000000, 0x7F800001, 0x3F800000, 0x00000001)
    x = x.reshape(2, 3, 1)
    for axes in ([2], [0, 2], None):
        data, feeds = reduce_model(op, x, axes, 1, 18)
        check(data, feeds, use_ort=False)


@pytest.mark.parametrize("op", FLOAT_REDUCTIONS + ["ReduceProd"])
def test_noop_with_empty_axes(op):
    x = special(2, 3, 4)
    for opset in (13, 18):
        for axes in (None, []):
            data, feeds = reduce_model(op, x, axes, 1, opset, noop=1)
            check(data, feeds, use_ort=False)
    xi = ints(np.arange(24).reshape(2, 3, 4) - 7, np.int32)
    data, feeds = reduce_model(op, xi, [], 0, 18, noop=1)
    check(data, feeds, use_ort=False)


@pytest.mark.parametrize("op", FLOAT_REDUCTIONS)
def test_axes_as_a_graph_input(op):
    # the axes are known only when the run reaches the node
    x = rand(2, 3, 4, 5)
    opset = 18
    for axes in ([1, 3], [-1], [0, 1, 2, 3], []):
        data, feeds = reduce_model(op, x, axes, 0, opset, axes_as_graph_input=True)
        check(data, feeds, rtol=1e-5, atol=1e-5)
    data, feeds = reduce_model(op, x, [2], 1, opset, noop=1, axes_as_graph_input=True)
    check(data, feeds)


@pytest.mark.parametrize("op", FLOAT_REDUCTIONS)
def test_larger_reductions(op):
    x = rand(7, 33, 65, scale=3)
    for axes in ([1], [0, 2], [2], None):
        data, feeds = reduce_model(op, x, axes, 0, 18)
        check(data, feeds, rtol=1e-4, atol=1e-4)


def test_reductions_of_scalars():
    # (a 0-d graph input reaches the C runtime as shape (1,): Reshape it to ())
    for op in FLOAT_REDUCTIONS + ["ReduceSum", "ReduceMax", "ReduceProd", "ReduceL1"]:
        for x in (np.array([-2.5], np.float32), np.array([-7], np.int64)):
            if x.dtype == np.int64 and op in ("ReduceL2", "ReduceSumSquare", "ReduceMean"):
                continue
            if x.dtype == np.float32 and op == "ReduceProd":
                continue
            t = tensor_type(x)
            nodes = [helper.make_node("Reshape", ["X", "shape"], ["s"]),
                     helper.make_node(op, ["s"], ["y"], keepdims=1)]
            data = make(nodes, {"X": (t, [1])}, {"y": (t, None)}, {"shape": ints([])}, opset=18)
            check(data, {"X": x})


INT_DTYPES = [np.int64, np.int32, np.int16, np.int8, np.uint8, np.uint16, np.uint32, np.uint64]
INT_REDUCTIONS = ["ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd",
                  "ReduceSumSquare", "ReduceL1"]


@pytest.mark.parametrize("dtype", INT_DTYPES + [np.bool_])
@pytest.mark.parametrize("op", INT_REDUCTIONS)
def test_integer_reductions_wrap_like_the_type(op, dtype):
    info = np.iinfo(dtype) if dtype is not np.bool_ else None
    if info is None:
        x = RNG.integers(0, 2, (3, 4, 5)).astype(np.bool_)
    else:
        x = RNG.integers(info.min, info.max, (3, 4, 5), dtype=dtype, endpoint=True)
        x.ravel()[:4] = [info.min, info.max, 0, 1]
    for axes in ([1], [0, 2], [-1], None):
        for keepdims in (0, 1):
            data, feeds = reduce_model(op, x, axes, keepdims, 18)
            # ONNX Runtime covers int32 and int64 only (and wraps differently for means)
            ort_ok = dtype in (np.int64, np.int32) and op in ("ReduceMax", "ReduceMin")
            check(data, feeds, use_ort=ort_ok)


def test_integer_mean_is_the_exact_sum_divided():
    # int64 sums beyond 2^63: Python's exact sum, then a truncating division
    x = ints([[2 ** 62, 2 ** 62, 2 ** 62 - 1], [-(2 ** 63), -(2 ** 63), 5], [-7, 0, 0]])
    data, feeds = reduce_model("ReduceMean", x, [1], 0, 18)
    got = check(data, feeds, use_ort=False)[0]
    assert got.tolist() == [(3 * 2 ** 62 - 1) // 3, -((2 ** 64 - 5) // 3), -2]
    xu = ints([[2 ** 64 - 1, 2 ** 64 - 1, 2 ** 64 - 1]], np.uint64)
    data, feeds = reduce_model("ReduceMean", xu, [1], 0, 18)
    assert check(data, feeds, use_ort=False)[0].tolist() == [2 ** 64 - 1]


def test_integer_reductions_against_onnx_runtime():
    x = RNG.integers(-50, 50, (3, 4, 5)).astype(np.int64)
    for op in ("ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceSumSquare",
               "ReduceL1"):
        for axes in ([1], [0, 2], None):
            data, feeds = reduce_model(op, x if op != "ReduceProd" else x % 5, axes, 1, 18)
            check(data, {"X": feeds["X"]})


@pytest.mark.parametrize("axes,keepdims", [([1], 1), ([0, 2], 0), (None, 1), ([-1], 0)])
def test_float_reduce_prod(axes, keepdims):
    """ReduceProd on float32: per output, p = 1 then p = p * x_j over the
    reduced elements in C order (the reduced axes moved last), each product
    rounded; NaN canonical. Bit for bit against that loop in numpy, and
    within 1e-6 of ONNX Runtime."""
    x = special(3, 4, 5)
    x[np.abs(x) > 1e20] = 2.0   # keep most products finite
    data, feeds = reduce_model("ReduceProd", x, axes, keepdims, 18)
    red = list(range(3)) if axes is None else [a % 3 for a in axes]
    keep = [d for d in range(3) if d not in red]
    rows = np.transpose(x, keep + red).reshape(int(np.prod([x.shape[d] for d in keep])), -1)
    want = np.ones(rows.shape[0], np.float32)
    for r, row in enumerate(rows):
        p = np.float32(1)
        for v in row:
            p = np.float32(p * v)
        want[r] = p
    want[np.isnan(want)] = np.uint32(0x7FC00000).view(np.float32)
    for mode in ("exact", "fast"):
        got = so.load(data, mode=mode).run(feeds)["y0"]
        assert np.array_equal(bits(got).ravel(), bits(want)), mode
    ref = ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(None, feeds)[0]
    np.testing.assert_allclose(got, ref, rtol=1e-6)


def test_reductions_over_empty_axes():
    x = np.zeros((3, 0, 2), np.float32)
    for op in ("ReduceSum", "ReduceMean", "ReduceSumSquare", "ReduceL1", "ReduceL2"):
        for axes in ([1], [0, 1], None):
            data, feeds = reduce_model(op, x, axes, 0, 18)
            check(data, feeds, use_ort=False)
    # ONNX's opset 18 text: the max of nothing is -inf, the min +inf
    for op, fill in (("ReduceMax", -np.inf), ("ReduceMin", np.inf)):
        data, feeds = reduce_model(op, x, [1], 0, 18)
        for mode in ("exact", "fast"):
            got = so.load(data, mode=mode).run(feeds)["y0"]
            assert np.array_equal(got, np.full((3, 2), fill, np.float32)), (op, mode)
        ref = ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(None, feeds)[0]
        assert np.array_equal(ref, np.full((3, 2), fill, np.float32))
    data, feeds = reduce_model("ReduceProd", x, [1], 0, 18)   # the empty product: 1
    assert np.array_equal(so.load(data).run(feeds)["y0"], np.ones((3, 2), np.float32))
    # an empty output: nothing to reduce, no error
    for op in FLOAT_REDUCTIONS + ["ReduceProd"]:
        data, feeds = reduce_model(op, np.zeros((0, 3), np.float32), [1], 0, 18)
        check(data, feeds, use_ort=False)
    xi = np.zeros((3, 0), np.int64)
    for op in ("ReduceSum", "ReduceMean", "ReduceProd", "ReduceL1"):
        data, feeds = reduce_model(op, xi, [1], 1, 18)
        check(data, feeds, use_ort=False)
    # integers: the type's minimum (max) and maximum (min); bool: false < true
    for dtype in (np.int64, np.int32, np.int8, np.uint8, np.bool_):
        xe = np.zeros((3, 0), dtype)
        lo, hi = (False, True) if dtype is np.bool_ else (np.iinfo(dtype).min, np.iinfo(dtype).max)
        for op, fill in (("ReduceMax", lo), ("ReduceMin", hi)):
            data, feeds = reduce_model(op, xe, [1], 1, 18)
            got = so.load(data).run(feeds)["y0"]
            assert got.dtype == dtype and np.array_equal(got, np.full((3, 1), fill, dtype)), (op, dtype)


def test_reduction_errors():
    x = rand(2, 3)
    data, feeds = reduce_model("ReduceSum", x, [2], 1, 13)
    raises_both(data, feeds, ValueError, "axes 2 is out of range for rank 2")
    data, feeds = reduce_model("ReduceMean", x, [-3], 1, 11)
    raises_both(data, feeds, ValueError, "axes -3 is out of range for rank 2")
    data, feeds = reduce_model("ReduceMax", x, [1, -1], 1, 18)
    raises_both(data, feeds, ValueError, r"axes \[1, -1\] repeats an axis")
    data, feeds = reduce_model("ReduceProd", x, [1], 1, 18)   # runs (test_float_reduce_prod)
    so.load(data).run(feeds)
    data, feeds = reduce_model("ReduceL2", ints([[1, 2]]), [1], 1, 18)
    raises_both(data, feeds, TypeError, "ReduceL2 on integers is not supported")
    node = helper.make_node("ReduceSum", ["X", "a"], ["y"])
    data = make([node], {"X": (F, [2, 3])}, {"y": (F, None)}, {"a": np.array([1.0], np.float32)})
    raises_both(data, {"X": x}, TypeError, "input axes must be an integer tensor, got float32")
    node = helper.make_node("ReduceSum", ["X", "a"], ["y"])
    data = make([node], {"X": (F, [2, 3])}, {"y": (F, None)}, {"a": ints([[1]])})
    raises_both(data, {"X": x}, ValueError, r"input axes must be 1-D, got shape \(1, 1\)")
    # attributes of the other opset's form are refused
    node = helper.make_node("ReduceMean", ["X"], ["y"], axes=[1])
    data = make([node], {"X": (F, [2, 3])}, {"y": (F, None)}, opset=18)
    raises_both(data, {"X": x}, so.UnsupportedModelError, "attribute 'axes' is not supported")
    node = helper.make_node("ReduceSum", ["X"], ["y"], noop_with_empty_axes=1)
    data = make([node], {"X": (F, [2, 3])}, {"y": (F, None)}, opset=11)
    raises_both(data, {"X": x}, so.UnsupportedModelError,
                "attribute 'noop_with_empty_axes' is not supported")


# ---- global pools ------------------------------------------------------------------------

@pytest.mark.parametrize("op", ["GlobalAveragePool", "GlobalMaxPool"])
def test_global_pools(op):
    for shape in ((2, 3, 4, 5), (2, 3, 7), (1, 2, 1, 1, 3), (2, 4, 1, 1), (1, 3, 9, 17)):
        one(op, {"X": rand(*shape)})
        one(op, {"X": special(*shape)}, use_ort=False)


def test_global_pool_errors_and_empty_inputs():
    for op in ("GlobalAveragePool", "GlobalMaxPool"):
        data = node_model(op, {"X": rand(2, 3)})
        raises_both(data, {"X": rand(2, 3)}, ValueError, r"X must be \(N, C, \.\.\.\), got \(2, 3\)")
        xi = ints(np.zeros((1, 2, 3)))
        data = node_model(op, {"X": xi}, out_type=I64)
        raises_both(data, {"X": xi}, TypeError, "input X must be float32, got int64")
        check(node_model(op, {"X": np.zeros((0, 3, 4), np.float32)}),
              {"X": np.zeros((0, 3, 4), np.float32)}, use_ort=False)
    x = np.zeros((2, 3, 0), np.float32)
    check(node_model("GlobalAveragePool", {"X": x}), {"X": x}, use_ort=False)
    raises_both(node_model("GlobalMaxPool", {"X": x}), {"X": x}, ValueError,
                "ReduceMax over an empty axis")


# ---- CumSum --------------------------------------------------------------------------------

@pytest.mark.parametrize("exclusive,reverse", [(0, 0), (1, 0), (0, 1), (1, 1)])
def test_cumsum(exclusive, reverse):
    attrs = {"exclusive": exclusive, "reverse": reverse}
    for shape in ((3, 7, 4), (1, 9), (9,), (4, 1, 3)):
        for axis in range(-len(shape), len(shape)):
            one("CumSum", {"X": rand(*shape)}, attrs, {"axis": ints(axis)})
            one("CumSum", {"X": special(*shape)}, attrs, {"axis": ints([axis])}, use_ort=False)
    # the axis as a graph input (known at run), int32
    x = rand(3, 5)
    one("CumSum", {"X": x, "axis": ints([1], np.int32)}, attrs)
    for dtype in (np.int64, np.int32):
        xi = RNG.integers(-100, 100, (3, 4, 5)).astype(dtype)
        for axis in (0, 1, -1):
            one("CumSum", {"X": xi}, attrs, {"axis": ints(axis)}, out_type=tensor_type(xi))


@pytest.mark.parametrize("dtype", INT_DTYPES + [np.bool_])
def test_cumsum_integers_wrap(dtype):
    if dtype is np.bool_:
        x = RNG.integers(0, 2, (3, 6)).astype(np.bool_)
    else:
        info = np.iinfo(dtype)
        x = RNG.integers(info.min, info.max, (3, 6), dtype=dtype, endpoint=True)
    for exclusive in (0, 1):
        for reverse in (0, 1):
            one("CumSum", {"X": x}, {"exclusive": exclusive, "reverse": reverse},
                {"axis": ints(1)}, out_type=tensor_type(x), use_ort=False)


def test_cumsum_empty_and_errors():
    for shape in ((0, 3), (3, 0)):
        x = np.zeros(shape, np.float32)
        one("CumSum", {"X": x}, None, {"axis": ints(1)}, use_ort=False)
    x = rand(2, 3)
    data = node_model("CumSum", {"X": x}, None, {"axis": ints([0, 1])})
    raises_both(data, {"X": x}, ValueError, r"axis must hold one value, got shape \(2,\)")
    data = node_model("CumSum", {"X": x}, None, {"axis": ints(2)})
    raises_both(data, {"X": x}, ValueError, "axis 2 is out of range for rank 2")
    data = node_model("CumSum", {"X": x}, None, {"axis": np.array(1.0, np.float32)})
    raises_both(data, {"X": x}, TypeError, "input axis must be an integer tensor, got float32")
    data = node_model("CumSum", {"X": x, "axis": ints([-3])})
    raises_both(data, {"X": x, "axis": ints([-3])}, ValueError,
                "axis -3 is out of range for rank 2")


# ---- ArgMax, ArgMin ---------------------------------------------------------------------------

@pytest.mark.parametrize("op", ["ArgMax", "ArgMin"])
@pytest.mark.parametrize("last", [0, 1])
@pytest.mark.parametrize("keepdims", [0, 1])
def test_arg_max_min(op, last, keepdims):
    x = rand(3, 4, 5)
    x[0, :, 0] = 1.5                          # ties
    x[1, 1, :] = -2.0
    x[2, 0, 0], x[2, 1, 0] = 0.0, -0.0       # -0 and +0 are equal
    attrs = {"keepdims": keepdims, "select_last_index": last}
    for axis in (0, 1, 2, -1, -3):
        one(op, {"X": x}, {**attrs, "axis": axis}, out_type=I64)
    # NaN wins (the first, or the last with select_last_index)
    xs = special(4, 6)
    xs[1, 2] = xs[1, 4] = np.nan
    for axis in (0, 1):
        one(op, {"X": xs}, {**attrs, "axis": axis}, out_type=I64, use_ort=False)
    for dtype in (np.int64, np.int32, np.uint8, np.int8, np.uint64, np.uint32):
        info = np.iinfo(dtype)
        xi = RNG.integers(info.min, info.max, (4, 6), dtype=dtype, endpoint=True)
        xi[0, :3] = xi[0, 3]
        for axis in (0, 1):
            one(op, {"X": xi}, {**attrs, "axis": axis}, out_type=I64,
                use_ort=dtype in (np.int64, np.int32, np.uint8, np.int8))


def test_arg_errors():
    x = rand(2, 3)
    data = node_model("ArgMax", {"X": x}, {"axis": 2}, out_type=I64)
    raises_both(data, {"X": x}, ValueError, "axis 2 is out of range for rank 2")
    x = np.zeros((2, 0), np.float32)
    one("ArgMin", {"X": x}, {"axis": 0}, out_type=I64, use_ort=False)


# ---- LayerNormalization, RMSNormalization ---------------------------------------------------

@pytest.mark.parametrize("axis", [-1, -2, 1, 0, 2])
@pytest.mark.parametrize("bias", [True, False])
def test_layer_norm(axis, bias):
    x = rand(2, 5, 16, scale=3)
    norm = x.shape[axis:]
    inits = {"s": rand(*norm)}
    if bias:
        inits["b"] = rand(*norm)
    one("LayerNormalization", {"X": x}, {"axis": axis, "epsilon": 1e-5}, inits, rtol=1e-4,
        atol=1e-5)
    xs = special(2, 5, 16)
    one("LayerNormalization", {"X": xs}, {"axis": axis}, inits, use_ort=False)


def test_layer_norm_scale_shapes_and_inputs():
    x = rand(3, 4, 8)
    # a scale of the normalized elements under a broadcasting shape; scale as an input
    one("LayerNormalization", {"X": rand(3, 1, 8)}, {"axis": 1}, {"s": rand(8)}, use_ort=False)
    data = node_model("LayerNormalization", {"X": x}, {"axis": 1}, {"s": rand(1, 8)})
    raises_both(data, {"X": x}, ValueError,
                r"Scale \(1, 8\) does not match the normalized shape \(4, 8\)")
    one("LayerNormalization", {"X": x, "s": rand(8), "b": rand(8)}, rtol=1e-4, atol=1e-5)
    one("LayerNormalization", {"X": x}, {"epsilon": 0.5}, {"s": rand(8)}, opset=17,
        rtol=1e-4, atol=1e-5)
    one("LayerNormalization", {"X": np.zeros((0, 8), np.float32)}, None, {"s": rand(8)},
        use_ort=False)


def test_layer_norm_errors():
    x = rand(3, 4)
    data = node_model("LayerNormalization", {"X": x}, None, {"s": rand(5)})
    raises_both(data, {"X": x}, ValueError,
                r"Scale \(5,\) does not match the normalized shape \(4,\)")
    data = node_model("LayerNormalization", {"X": x}, {"axis": 0}, {"s": rand(12)})
    raises_both(data, {"X": x}, ValueError, r"shapes \(12,\) and \(3, 4\) do not broadcast")
    data = node_model("LayerNormalization", {"X": x}, None, {"s": rand(4), "b": rand(3)})
    raises_both(data, {"X": x}, ValueError, r"B \(3,\) does not match the normalized shape")
    data = node_model("LayerNormalization", {"X": x}, {"axis": 2}, {"s": rand(4)})
    raises_both(data, {"X": x}, ValueError, "axis 2 is out of range for rank 2")
    data = node_model("LayerNormalization", {"X": x}, {"stash_type": 0}, {"s": rand(4)})
    raises_both(data, {"X": x}, so.UnsupportedModelError, r"stash_type=0 is not supported")
    data = node_model("LayerNormalization", {"X": x}, None, {"s": rand(4)}, n_out=3)
    # Mean and InvStdDev run (test_onnx_layer_norm_stats.py checks their bits)
    assert [v.shape for v in so.load(data).run({"X": x}).values()] == [x.shape, (3, 1), (3, 1)]
    xi = ints([[1, 2]])
    data = node_model("LayerNormalization", {"X": xi}, None, {"s": rand(2)})
    raises_both(data, {"X": xi}, TypeError, "input X must be float32, got int64")


@pytest.mark.parametrize("axis", [-1, 1, 0, -2])
def test_rms_norm(axis):
    x = rand(2, 3, 8)
    norm = x.shape[axis:]
    for scale in (rand(*norm), rand(norm[-1]), np.array(1.5, np.float32)):
        one("RMSNormalization", {"X": x}, {"axis": axis, "epsilon": 1e-4}, {"s": scale},
            opset=23, rtol=1e-5, atol=1e-6)
    one("RMSNormalization", {"X": special(2, 3, 8)}, {"axis": axis}, {"s": rand(*norm)},
        opset=23, use_ort=False)


def test_rms_norm_errors():
    x = rand(2, 3, 8)
    data = node_model("RMSNormalization", {"X": x}, None, {"s": rand(3, 1)}, opset=23)
    raises_both(data, {"X": x}, ValueError,
                r"scale \(3, 1\) does not broadcast to the normalized shape \(8,\)")
    data = node_model("RMSNormalization", {"X": x}, None, {"s": rand(5)}, opset=23)
    raises_both(data, {"X": x}, ValueError, r"shapes \(5,\) and \(8,\) do not broadcast")
    data = node_model("RMSNormalization", {"X": x}, {"stash_type": 0}, {"s": rand(8)}, opset=23)
    raises_both(data, {"X": x}, so.UnsupportedModelError, "stash_type other than 1")
    one("RMSNormalization", {"X": np.zeros((0, 8), np.float32)}, None, {"s": rand(8)},
        opset=23, use_ort=False)


# ---- BatchNormalization, GroupNormalization, InstanceNormalization -----------------------------

@pytest.mark.parametrize("shape", [(2, 6, 9, 11), (5, 6), (3, 6, 7), (1, 6, 2, 3, 4)])
def test_batch_norm(shape):
    c = shape[1]
    inits = {"s": rand(c), "b": rand(c), "m": rand(c), "v": np.abs(rand(c)) + 0.5}
    one("BatchNormalization", {"X": rand(*shape)}, {"epsilon": 1e-3}, inits)
    one("BatchNormalization", {"X": special(*shape)}, {"momentum": 0.7}, inits, use_ort=False)
    one("BatchNormalization", {"X": rand(*shape)}, None, inits, opset=9)
    feeds = {"X": rand(*shape), **inits}
    one("BatchNormalization", feeds)      # statistics as graph inputs


def test_batch_norm_errors():
    x = rand(2, 4, 3)
    inits = {"s": rand(4), "b": rand(4), "m": rand(4), "v": np.abs(rand(4))}
    bad = dict(inits, m=rand(5))
    data = node_model("BatchNormalization", {"X": x}, None, bad)
    raises_both(data, {"X": x}, ValueError,
                r"batch_norm: running_mean must have shape \(4,\) \(one value per channel\), "
                r"got \(5,\)")
    bad = dict(inits, s=rand(2, 2))
    data = node_model("BatchNormalization", {"X": x}, None, bad)
    raises_both(data, {"X": x}, ValueError, r"batch_norm: weight must have shape \(4,\)")
    x1 = rand(4)
    data = node_model("BatchNormalization", {"X": x1}, None, inits)
    raises_both(data, {"X": x1}, ValueError, r"x must be at least 2-D, got shape \(4,\)")
    # (training_mode=1 runs: test_onnx_batch_norm_training.py)
    data = node_model("BatchNormalization", {"X": x}, {"spatial": 0}, inits, opset=7)
    raises_both(data, {"X": x}, so.UnsupportedModelError, "spatial=0 is not supported")
    data = node_model("BatchNormalization", {"X": x}, None, inits, n_out=3, opset=9)
    raises_both(data, {"X": x}, so.UnsupportedModelError, r"\(running mean/var\) is not supported")
    one("BatchNormalization", {"X": np.zeros((0, 4, 3), np.float32)}, None, inits, use_ort=False)


@pytest.mark.parametrize("opset,per_group", [(18, True), (18, False), (21, False)])
@pytest.mark.parametrize("groups", [1, 2, 3, 6])
def test_group_norm(opset, per_group, groups):
    x = rand(2, 6, 5, 4)
    c = groups if per_group else 6
    # ONNX Runtime's opset-18 kernel takes per-group scales only
    ort_ok = opset == 21 or per_group or groups == 6
    one("GroupNormalization", {"X": x}, {"num_groups": groups, "epsilon": 1e-3},
        {"s": rand(c), "b": rand(c)}, opset=opset, rtol=1e-4, atol=1e-5, use_ort=ort_ok)
    one("GroupNormalization", {"X": special(2, 6, 3)}, {"num_groups": groups},
        {"s": rand(c), "b": rand(c)}, opset=opset, use_ort=False)


def test_group_norm_errors():
    x = rand(2, 6, 4)
    data = node_model("GroupNormalization", {"X": x}, {"num_groups": 4}, {"s": rand(6), "b": rand(6)},
                      opset=21)
    raises_both(data, {"X": x}, ValueError,
                r"num_groups=4 does not divide the channels of \(2, 6, 4\)")
    data = node_model("GroupNormalization", {"X": x}, {"num_groups": 3}, {"s": rand(3), "b": rand(3)},
                      opset=21)
    raises_both(data, {"X": x}, ValueError, r"scale \(3,\) and bias \(3,\) do not fit 6 channels")
    data = node_model("GroupNormalization", {"X": x}, {"num_groups": 3}, {"s": rand(3), "b": rand(6)},
                      opset=18)
    raises_both(data, {"X": x}, ValueError, r"cannot reshape \(6,\) to \(3, 1\)")
    data = node_model("GroupNormalization", {"X": x}, None, {"s": rand(6), "b": rand(6)}, opset=21)
    raises_both(data, {"X": x}, so.UnsupportedModelError, "attribute 'num_groups' is required")
    data = node_model("GroupNormalization", {"X": x}, {"num_groups": 3, "stash_type": 0},
                      {"s": rand(6), "b": rand(6)}, opset=21)
    raises_both(data, {"X": x}, so.UnsupportedModelError, "stash_type other than 1")


def test_instance_norm():
    for shape in ((2, 3, 5), (2, 3, 4, 5), (1, 4, 1), (3, 2, 2, 2, 3)):
        c = shape[1]
        inits = {"s": rand(c), "b": rand(c)}
        one("InstanceNormalization", {"X": rand(*shape, scale=2)}, {"epsilon": 1e-4}, inits,
            rtol=1e-4, atol=1e-5)
        one("InstanceNormalization", {"X": special(*shape)}, None, inits, use_ort=False)
    x = rand(2, 3, 4)
    data = node_model("InstanceNormalization", {"X": x}, None, {"s": rand(4), "b": rand(3)})
    raises_both(data, {"X": x}, ValueError, r"group_norm: weight must have shape \(3,\)")
    one("InstanceNormalization", {"X": np.zeros((0, 3, 4), np.float32)}, None,
        {"s": rand(3), "b": rand(3)}, use_ort=False)


# ---- LRN ------------------------------------------------------------------------------------------

def test_lrn():
    x = rand(2, 7, 5, 4)
    for size in (1, 3, 5, 7, 9):
        one("LRN", {"X": x}, {"size": size, "alpha": 1e-3, "beta": 0.75, "bias": 2.0},
            opset=13, rtol=1e-5, atol=1e-6)
    for size in (2, 4):       # (ONNX Runtime refuses even sizes)
        one("LRN", {"X": x}, {"size": size, "alpha": 0.3, "beta": 0.5}, use_ort=False)
    one("LRN", {"X": x}, {"size": 5}, opset=13, rtol=1e-5, atol=1e-6)
    one("LRN", {"X": rand(3, 4, 6)}, {"size": 3, "alpha": 0.7, "beta": 1.3, "bias": 0.5},
        use_ort=False)     # (ONNX Runtime takes 4-D inputs only)
    one("LRN", {"X": special(1, 5, 3, 3)}, {"size": 3}, use_ort=False)
    one("LRN", {"X": np.zeros((0, 3, 2), np.float32)}, {"size": 3}, use_ort=False)


def test_lrn_errors():
    x = rand(2, 3)
    data = node_model("LRN", {"X": x}, {"size": 3})
    raises_both(data, {"X": x}, ValueError, r"X must be \(N, C, \.\.\.\), got \(2, 3\)")
    data = node_model("LRN", {"X": rand(1, 2, 3)}, {"size": 0})
    raises_both(data, {"X": rand(1, 2, 3)}, so.UnsupportedModelError, "size=0 must be positive")
    data = node_model("LRN", {"X": rand(1, 2, 3)})
    raises_both(data, {"X": rand(1, 2, 3)}, so.UnsupportedModelError,
                "attribute 'size' is required")


# ---- graphs of several nodes ------------------------------------------------------------------------

def test_reductions_in_a_graph():
    """A reduction whose axes come from the graph (Shape -> ...) and a chain of norms."""
    nodes = [helper.make_node("LayerNormalization", ["X", "s"], ["ln"], axis=-1),
             helper.make_node("ReduceMean", ["ln", "axes"], ["m"], keepdims=1),
             helper.make_node("Sub", ["ln", "m"], ["d"]),
             helper.make_node("ReduceL2", ["d"], ["n"], keepdims=0),
             helper.make_node("ArgMax", ["d"], ["am"], axis=1),
             helper.make_node("CumSum", ["d", "ax"], ["cs"], reverse=1)]
    data = make(nodes, {"X": (F, [3, 4, 8])},
                {"n": (F, None), "am": (I64, None), "cs": (F, None)},
                {"s": rand(8), "axes": ints([0, 2]), "ax": ints(1)}, opset=18)
    check(data, {"X": rand(3, 4, 8)}, rtol=1e-4, atol=1e-5)


def _total_order_extreme(x: np.ndarray, is_max: bool) -> np.ndarray:
    """Rows' maximum / minimum in IEEE's total order (-0 below +0), NaN
    canonical if any: the largest (smallest) signed key of the bits, the
    negative values' magnitude bits flipped (an oracle on integers)."""
    b = x.view(np.int32)
    nan = np.isnan(x).any(axis=-1)
    key = np.where(b < 0, b ^ np.int32(0x7FFFFFFF), b)
    pick = key.argmax(axis=-1) if is_max else key.argmin(axis=-1)
    out = np.take_along_axis(b, pick[..., None], axis=-1)[..., 0].view(np.uint32).copy()
    out[nan] = 0x7FC00000
    return out


@pytest.mark.parametrize("op", ["ReduceMax", "ReduceMin", "GlobalMaxPool"])
@pytest.mark.parametrize("length", [2, 15, 16, 17, 64, 508])
def test_extremes_in_total_order_over_long_rows(op, length):
    """Rows long enough for vector lanes (which keep partial extremes by
    value, however the ISA's max or min orders -0 and +0): every row of
    zeros of mixed signs, of -0 only, of negatives with a zero, with NaN
    payloads and infinities gives the total-order extreme's bits, at 1 and 2
    threads, as a graph output and read by a second node."""
    rows = 12
    x = RNG.standard_normal((1, rows, length)).astype(np.float32)
    x[0, 0] = 0.0
    x[0, 0, ::3] = -0.0                                  # mixed zeros
    x[0, 1] = -0.0                                       # -0 only
    x[0, 2] = -np.abs(x[0, 2])
    x[0, 2, length // 2] = 0.0                           # negatives and one +0
    x[0, 3] = np.abs(x[0, 3])
    x[0, 3, length - 1] = -0.0                           # positives and one -0
    x[0, 4].view(np.uint32)[length // 3] = 0x7FA00001    # a signaling NaN payload
    x[0, 5, 0] = np.inf
    x[0, 6, length - 1] = -np.inf
    x[0, 7].view(np.uint32)[:] = 0x80000001              # -subnormals
    x[0, 8] = 0.0
    x[0, 8, length - 1] = -0.0
    is_max = op != "ReduceMin"
    want = _total_order_extreme(x, is_max).reshape(rows)
    if op == "GlobalMaxPool":
        node = helper.make_node(op, ["x"], ["y"])
    else:
        node = helper.make_node(op, ["x", "axes"], ["y"], keepdims=1)
    data = make([node, helper.make_node("Neg", ["y"], ["n"])], {"x": (F, [1, rows, length])},
                {"y": (F, None), "n": (F, None)},
                inits=None if op == "GlobalMaxPool" else {"axes": np.array([-1], np.int64)},
                opset=18)
    for mode in ("exact", "fast"):
        for threads in (1, 2):
            out = so.load(data, mode=mode, threads=threads).run({"x": x})
            got = bits(out["y"]).reshape(rows)
            assert np.array_equal(got, want), (mode, threads, got, want)
            neg = bits(out["n"]).reshape(rows)
            assert np.array_equal(neg[~np.isnan(out["y"].reshape(rows))],
                                  (want ^ 0x80000000)[~np.isnan(out["y"].reshape(rows))])
