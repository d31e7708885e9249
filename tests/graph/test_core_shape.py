"""The C graph runtime's shape, cast and data-movement operators (csrc/graph/
ops/shape/) against the recorded outcomes of the Python runner they replaced
(python_runner_record), bit for bit and in both
modes, and against ONNX Runtime where it runs the model: every integer type,
negative axes and steps, empty tensors, the opset-dependent forms
(attributes before opset N, inputs after) and the errors (exception type and
message)."""
from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto as TP  # noqa: E402
from onnx import helper, numpy_helper  # noqa: E402

import samebits.onnx as so  # noqa: E402
from samebits._binding import lib as _lib  # noqa: E402
import python_runner_record  # noqa: E402  (the Python runner's outcomes: the reference)

if not hasattr(_lib.lib, "sb_session_load"):
    pytest.skip("the library has no C graph runtime", allow_module_level=True)

try:
    import onnxruntime as ort
    from onnxruntime.capi import onnxruntime_pybind11_state as ORT_ERRORS
except ImportError:  # pragma: no cover
    ort = None

RNG = np.random.default_rng(77)
RESEED_RNG_PER_TEST = True   # conftest: per-test inputs, for python_runner_record
INT_TYPES = [np.int64, np.int32, np.int16, np.int8, np.uint8, np.uint16, np.uint32, np.uint64,
             np.bool_]
ALL_TYPES = [np.float32] + INT_TYPES
F, I64 = TP.FLOAT, TP.INT64


def tensor_type(dtype) -> int:
    return helper.np_dtype_to_tensor_dtype(np.dtype(dtype))


def sample(shape, dtype, low=-100, high=100):
    """Values of dtype (float32 with a NaN payload, -0 and infinities)."""
    dtype = np.dtype(dtype)
    n = int(np.prod(shape, dtype=np.int64))
    if dtype == np.float32:
        x = RNG.standard_normal(n).astype(np.float32)
        special = np.array([0x7FC00123, 0x80000000, 0x7F800000, 0xFF800000, 0xFFC0BEEF],
                           np.uint32).view(np.float32)
        x[:min(n, 5)] = special[:min(n, 5)]
        return RNG.permutation(x).reshape(shape)
    if dtype == np.bool_:
        return RNG.integers(0, 2, n).astype(np.bool_).reshape(shape)
    info = np.iinfo(dtype)
    x = RNG.integers(max(low, info.min), min(high, info.max) + 1, n).astype(dtype)
    if n >= 2:
        x[0], x[1] = info.min, info.max
    return x.reshape(shape)


def model(nodes, feeds: dict, outputs, inits: dict | None = None, opset: int = 17) -> bytes:
    """feeds: name -> array (graph inputs of its type and shape); outputs: names."""
    g = helper.make_graph(
        nodes, "t",
        [helper.make_tensor_value_info(n, tensor_type(v.dtype), list(v.shape))
         for n, v in feeds.items()],
        [helper.make_empty_tensor_value_info(n) for n in outputs],
        [numpy_helper.from_array(np.asarray(v), n) for n, v in (inits or {}).items()])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m.SerializeToString()


def raw(a) -> bytes:
    a = np.ascontiguousarray(np.asarray(a))
    return a.view(np.uint8).tobytes()


def same(got, want, what):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, (what, got.dtype, want.dtype)
    assert got.shape == want.shape, (what, got.shape, want.shape)
    assert raw(got) == raw(want), (what, got, want)


def check(data: bytes, feeds: dict, ort_too: bool = True, nan_payloads: bool = True,
          close: bool = False) -> list:
    """The C runtime against the Python runner's recorded outcomes (bits,
    both modes, 1 and 2 threads) and, with ort_too, ONNX Runtime where it has the operator for
    the type (integers equal, floats bit for bit; NaN only as NaN when
    nan_payloads is false; floats close with close)."""
    results = []
    for mode in ("exact", "fast"):
        for threads in (1, 2):
            got = list(so.load(data, mode=mode, threads=threads).run(feeds).values())
            python_runner_record.check(data, feeds, mode, got)
            results = got
    if ort_too and ort is not None:
        try:
            ref = ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(None, feeds)
        except (ORT_ERRORS.NotImplemented, ORT_ERRORS.InvalidGraph) as e:
            if "implementation for" in str(e) or "Type Error" in str(e):
                return results   # a type ONNX Runtime lacks for this operator
            raise
        for k, (g, w) in enumerate(zip(results, ref)):
            w = np.asarray(w)
            assert g.shape == w.shape and g.dtype == w.dtype, (k, g.shape, w.shape, g.dtype, w.dtype)
            if g.dtype == np.float32 and close:
                np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-6)
            elif g.dtype == np.float32 and not nan_payloads:
                assert np.array_equal(g, w, equal_nan=True), k
            else:
                same(g, w, f"ort output {k}")
    return results


def check_error(data: bytes, feeds: dict, exc, match: str):
    """The model is refused (at load or run) with exc matching `match`."""
    with pytest.raises(exc, match=match):
        so.load(data, mode="exact").run(feeds)


def one(op, feeds, attrs=None, inits=None, opset=17, n_out=1, order=None, **kw):
    names = order if order is not None else list(feeds) + list(inits or {})
    node = helper.make_node(op, names, [f"y{i}" for i in range(n_out)], **(attrs or {}))
    return check(model([node], feeds, [f"y{i}" for i in range(n_out)], inits, opset), feeds, **kw)


def one_error(op, feeds, exc, match, attrs=None, inits=None, opset=17, n_out=1, order=None):
    names = order if order is not None else list(feeds) + list(inits or {})
    node = helper.make_node(op, names, [f"y{i}" for i in range(n_out)], name="n",
                            **(attrs or {}))
    check_error(model([node], feeds, [f"y{i}" for i in range(n_out)], inits, opset), feeds, exc,
                match)


def ints(v, dtype=np.int64):
    return np.array(v, dtype=dtype)


# ---- views: Flatten, Squeeze, Unsqueeze, Dropout, Size ------------------------------

@pytest.mark.parametrize("dtype", ALL_TYPES)
def test_views_every_type(dtype):
    x = sample((2, 1, 3, 1), dtype)
    one("Flatten", {"X": x}, {"axis": 2})
    one("Flatten", {"X": x}, {"axis": -1})
    one("Flatten", {"X": x}, {"axis": 4})
    one("Squeeze", {"X": x}, inits={"a": ints([1, -1])}, opset=13)
    one("Squeeze", {"X": x}, opset=13)
    one("Unsqueeze", {"X": x}, inits={"a": ints([0, -1, 3])}, opset=13)
    one("Size", {"X": x})


@pytest.mark.parametrize("opset", [7, 11, 13, 21])
def test_squeeze_unsqueeze_forms(opset):
    x = sample((1, 3, 1, 2), np.float32)
    if opset < 13:
        one("Squeeze", {"X": x}, {"axes": [0, -2]}, opset=opset)
        one("Squeeze", {"X": x}, opset=opset)
        one("Unsqueeze", {"X": x}, {"axes": [-1, 0]}, opset=opset)
    else:
        one("Squeeze", {"X": x}, inits={"a": ints([2])}, opset=opset)
        one("Unsqueeze", {"X": x}, inits={"a": ints([1, 5])}, opset=opset)
        one("Unsqueeze", {"X": x, "a": ints([1, 5])}, opset=opset, ort_too=False)
    one("Flatten", {"X": x}, {"axis": 0}, opset=opset)


def test_view_errors():
    x = sample((2, 1, 3), np.float32)
    one_error("Squeeze", {"X": x}, ValueError, r"node 0 'n' \(Squeeze\): cannot squeeze axis 0 "
              r"of shape \(2, 1, 3\)", inits={"a": ints([0])})
    one_error("Squeeze", {"X": x}, ValueError, r"axes 3 is out of range for rank 3",
              inits={"a": ints([3])})
    one_error("Squeeze", {"X": x}, ValueError, r"axes \[1, -2\] repeats an axis",
              inits={"a": ints([1, -2])})
    one_error("Unsqueeze", {"X": x}, ValueError, r"axes -5 is out of range for rank 4",
              inits={"a": ints([-5])})
    one_error("Unsqueeze", {"X": x}, ValueError, r"axes are required", opset=13)
    one_error("Unsqueeze", {"X": x}, Exception, r"attribute 'axes' is required", opset=11)
    one_error("Flatten", {"X": x}, ValueError, r"axis 4 is out of range for rank 3",
              {"axis": 4})
    one_error("Squeeze", {"X": x}, TypeError, r"input axes must be an integer tensor",
              inits={"a": np.array([1.0], np.float32)})


@pytest.mark.parametrize("opset", [7, 12, 13])
def test_dropout(opset):
    x = sample((3, 4), np.float32)
    attrs = {"ratio": 0.3} if opset < 12 else {}
    one("Dropout", {"X": x}, attrs, opset=opset)
    if opset >= 12:
        one("Dropout", {"X": x}, inits={"r": np.array(0.5, np.float32),
                                        "t": np.array(False)}, opset=opset)
        one_error("Dropout", {"X": x}, ValueError, r"training_mode=True is not supported",
                  inits={"r": np.array(0.5, np.float32), "t": np.array(True)}, opset=opset)
    # a used mask runs (test_onnx_dropout_mask.py): y is still the input's bits
    node = helper.make_node("Dropout", ["X"], ["y", "mask"], name="d")
    out = so.load(model([node], {"X": x}, ["y", "mask"], opset=opset)).run({"X": x})
    assert out["y"].tobytes() == x.tobytes() and np.all(out["mask"])
    node = helper.make_node("Dropout", ["X"], ["y", ""])
    check(model([node], {"X": x}, ["y"], opset=opset), {"X": x})
    if opset >= 12:   # a constant's Dropout runs (and refuses) at run, not at load
        node = helper.make_node("Dropout", ["c", "r", "t"], ["y"], name="d")
        data = model([node], {}, ["y"], {"c": x, "r": np.array(0.5, np.float32),
                                         "t": np.array(True)}, opset=opset)
        with pytest.raises(ValueError, match=r"training_mode=True is not supported"):
            so.load(data).run({})
        node = helper.make_node("Dropout", ["c"], ["y"])
        check(model([node], {}, ["y"], {"c": x}, opset=opset), {})


def test_size_and_empty():
    for shape in [(0,), (2, 0, 3), (5,), (1, 1)]:
        one("Size", {"X": sample(shape, np.int8)})


# ---- constants and casts ---------------------------------------------------------

@pytest.mark.parametrize("dtype", ALL_TYPES)
def test_constant_of_shape_every_type(dtype):
    value = sample((1,), dtype)
    attrs = {"value": numpy_helper.from_array(value, "v")}
    for shape in ([2, 3], [0, 4], []):
        if shape:   # the shape fed (inferred at run)
            one("ConstantOfShape", {"s": ints(shape)}, attrs)
        node = helper.make_node("ConstantOfShape", ["s"], ["y"], **attrs)
        # the shape as a constant (folded at load) and computed (Shape of an input)
        check(model([node], {}, ["y"], {"s": ints(shape)}), {})
    x = sample((3, 0, 2), np.float32)
    nodes = [helper.make_node("Shape", ["x"], ["s"]),
             helper.make_node("ConstantOfShape", ["s"], ["y"], **attrs)]
    check(model(nodes, {"x": x}, ["y"]), {"x": x})


def test_constant_of_shape_default_and_errors():
    one("ConstantOfShape", {"s": ints([3, 2])})
    one_error("ConstantOfShape", {"s": ints([3, -2])}, ValueError,
              r"negative dimension in \(3, -2\)")
    one_error("ConstantOfShape", {"s": ints([3])}, Exception,
              r"attribute 'value' must hold one element",
              {"value": numpy_helper.from_array(ints([1, 2]), "v")})


CAST_FLOATS = np.array([0.0, -0.0, 1.5, -1.5, 2.9, -2.9, 127.0, 128.0, 255.0, 256.0, -129.0,
                        300.7, -300.7, 32767.0, 32768.0, 65535.0, 65536.0, 70000.25, -70000.25,
                        2.0 ** 31, -(2.0 ** 31), 2.0 ** 32, 2.0 ** 40 + 4096, -(2.0 ** 40),
                        2.0 ** 63, -(2.0 ** 63), 2.0 ** 64, 1e30, -1e30, np.inf, -np.inf,
                        np.nan, -np.nan, 1e-30, 0.5, -0.5, 8388607.5], np.float32)


@pytest.mark.parametrize("to", INT_TYPES)
def test_cast_float_to_every_int_type(to):
    """Beyond the type (ONNX leaves it undefined): the runner's C-style rule."""
    x = CAST_FLOATS.reshape(1, -1)
    one("Cast", {"X": x}, {"to": tensor_type(to)}, ort_too=False)
    if to == np.bool_:
        one("Cast", {"X": x}, {"to": tensor_type(to)})
        return
    info = np.iinfo(to)
    fits = x[np.isfinite(x) & (np.trunc(x) >= info.min) & (np.trunc(x) <= info.max)]
    one("Cast", {"X": fits}, {"to": tensor_type(to)})


@pytest.mark.parametrize("src", INT_TYPES)
def test_cast_int_to_float_and_ints(src):
    info = np.iinfo(src) if src != np.bool_ else None
    if info is not None:
        vals = [info.min, info.max, 0, 1, info.max - 1, info.min + 1]
        if info.bits == 64:
            vals += [2 ** 53 + 1, 2 ** 60 + 2 ** 36 + 1, (1 << 40) + 1, 2 ** 24 + 1, 2 ** 25 + 3]
            if src == np.uint64:
                vals += [2 ** 63 + 2 ** 39 + 1, 2 ** 64 - 1, 2 ** 64 - 2 ** 39]
            else:
                vals += [-(2 ** 53) - 1, -(2 ** 62) - 2 ** 38 - 1]
        x = np.array(vals, dtype=object).astype(src)
    else:
        x = np.array([True, False, True])
    one("Cast", {"X": x}, {"to": F})
    for to in INT_TYPES:
        one("Cast", {"X": x}, {"to": tensor_type(to)})


def test_cast_forms_and_errors():
    x = sample((2, 3), np.float32)
    one("Cast", {"X": x}, {"to": F})
    one("Cast", {"X": sample((0, 3), np.float32)}, {"to": TP.INT32})
    one("Cast", {"X": sample((0,), np.int16)}, {"to": F})
    one("Cast", {"X": x}, {"to": TP.INT8}, opset=7, ort_too=False)
    one("Cast", {"X": x}, {"to": TP.INT8, "saturate": 1}, opset=19, ort_too=False)
    one("CastLike", {"X": sample((4,), np.int32), "L": sample((2,), np.float32)}, opset=15)
    one("CastLike", {"X": CAST_FLOATS[:8], "L": sample((1,), np.uint8)}, opset=15, ort_too=False)
    one("CastLike", {"X": sample((3,), np.int64), "L": sample((1,), np.bool_)}, opset=15)
    one_error("Cast", {"X": x}, Exception, r"Cast to float64 is not supported", {"to": TP.DOUBLE})
    one_error("Cast", {"X": x}, Exception, r"Cast to 99 is not supported", {"to": 99})
    one_error("Cast", {"X": x}, Exception, r"attribute 'to' is required")


def test_range():
    for a, b, d, t in [(2, 11, 3, np.int64), (10, -3, -4, np.int32), (5, 5, 1, np.int64),
                       (5, 1, 1, np.int16), (-7, 8, 5, np.int64), (0, 10, 20, np.uint8)]:
        inits = {"a": np.array(a, t), "b": np.array(b, t), "d": np.array(d, t)}
        node = helper.make_node("Range", ["a", "b", "d"], ["y"])
        check(model([node], {}, ["y"], inits), {}, ort_too=t != np.uint8)   # (no uint8 Range)
    for a, b, d in [(0.5, 3.0, 0.3), (1.0, -2.0, -0.7), (0.0, 1.0, 0.1), (3.0, 3.0, 1.0),
                    (-1e6, 1e6, 777.7), (0.0, 5.0, 10.0)]:
        inits = {"a": np.array(a, np.float32), "b": np.array(b, np.float32),
                 "d": np.array(d, np.float32)}
        node = helper.make_node("Range", ["a", "b", "d"], ["y"])
        # (ONNX Runtime accumulates delta: close, not the same bits; far off over long ranges)
        check(model([node], {}, ["y"], inits), {}, close=True, ort_too=abs(b - a) / d < 100)


def test_range_at_run_time():
    """Limits computed at run (0-d from a fed 1-element tensor): the node's
    shape is inferred with the data."""
    for t in (np.int64, np.int32, np.float32):
        feeds = {"a": np.array([1], t), "b": np.array([9], t), "d": np.array([2], t)}
        nodes = [helper.make_node("Squeeze", [n, "ax"], [n + "0"]) for n in "abd"] + \
            [helper.make_node("Range", ["a0", "b0", "d0"], ["r"]),
             helper.make_node("Mul", ["r", "r"], ["y"])]
        data = model(nodes, feeds, ["y", "r"], {"ax": ints([0])}, opset=13)
        check(data, feeds, close=True)
        sess = so.load(data)
        for limit in (5, 13, 1):
            feeds["b"] = np.array([limit], t)
            python_runner_record.check(data, feeds, "exact", sess.run(feeds))


def test_range_errors():
    for inits, exc, match in [
        ({"a": ints(1), "b": ints(5), "d": ints(0)}, ValueError, r"delta is 0"),
        ({"a": np.float32(1), "b": np.float32(5), "d": np.float32(0)}, ValueError,
         r"start, limit and delta must be finite, delta nonzero"),
        ({"a": np.float32(1), "b": np.float32(np.inf), "d": np.float32(1)}, ValueError,
         r"must be finite"),
        ({"a": np.float32(1), "b": ints(5), "d": np.float32(1)}, TypeError,
         r"input limit must be float32, got int64"),
    ]:
        node = helper.make_node("Range", ["a", "b", "d"], ["y"], name="n")
        check_error(model([node], {}, ["y"], {k: np.asarray(v) for k, v in inits.items()}), {},
                    exc, match)


# ---- joining and splitting -------------------------------------------------------------

@pytest.mark.parametrize("dtype", ALL_TYPES)
def test_concat_every_type(dtype):
    a, b, c = sample((2, 3, 4), dtype), sample((2, 1, 4), dtype), sample((2, 0, 4), dtype)
    one("Concat", {"A": a, "B": b, "C": c}, {"axis": 1})
    one("Concat", {"A": a, "B": a}, {"axis": -1})
    one("Concat", {"A": a, "B": a, "C": a}, {"axis": 0}, opset=7)
    one("Concat", {"A": c, "B": c}, {"axis": 2})
    one("Concat", {"A": a}, {"axis": 2}, opset=13)


def test_concat_errors_and_mixed_ints():
    a = sample((2, 3), np.float32)
    one_error("Concat", {"A": a, "B": sample((3, 3), np.float32)}, ValueError,
              r"shapes \[\(2, 3\), \(3, 3\)\] do not concatenate along axis 1", {"axis": 1})
    one_error("Concat", {"A": a, "B": sample((2, 3, 1), np.float32)}, ValueError,
              r"do not concatenate along axis 0", {"axis": 0})
    one_error("Concat", {"A": a}, ValueError, r"axis 2 is out of range for rank 2", {"axis": 2})
    one_error("Concat", {"A": a}, Exception, r"attribute 'axis' is required")
    # (ONNX Runtime refuses mixed types; the runner concatenates the values)
    one("Concat", {"A": ints([1, 2, 300]), "B": ints([7, 8], np.int32)}, {"axis": 0},
        ort_too=False)
    node = helper.make_node("Concat", ["A", "B"], ["y"], name="n", axis=0)
    check_error(model([node], {"A": ints([1]), "B": np.array([1.0], np.float32)}, ["y"]),
                {"A": ints([1]), "B": np.array([1.0], np.float32)}, TypeError,
                r"cannot concatenate float32 with integer tensors")


@pytest.mark.parametrize("dtype", ALL_TYPES)
def test_split_every_type(dtype):
    x = sample((2, 7, 3), dtype)
    one("Split", {"X": x}, {"axis": 1, "split": [2, 5]}, opset=11, n_out=2)
    one("Split", {"X": x}, {"axis": -1}, n_out=3)
    one("Split", {"X": x}, {"axis": 1}, {"s": ints([3, 0, 4])}, n_out=3, opset=13)
    one("Split", {"X": x}, {"axis": 1, "num_outputs": 3}, n_out=3, opset=18)
    one("Split", {"X": x}, {"axis": 0}, opset=7, n_out=2)


def test_split_forms_and_errors():
    x = sample((8, 2), np.float32)
    one("Split", {"X": x}, {"num_outputs": 3}, n_out=3, opset=18)     # 3, 3, 2
    one("Split", {"X": x}, {"num_outputs": 5}, n_out=5, opset=18, ort_too=False)
    one("Split", {"X": sample((0, 2), np.int32)}, n_out=2)
    node = helper.make_node("Split", ["X"], ["a", "", "c"], axis=0)
    check(model([node], {"X": x}, ["a", "c"]), {"X": x}, ort_too=False)
    one_error("Split", {"X": x}, ValueError, r"split \[3, 4\] does not cut dimension 0 of "
              r"\(8, 2\) into 2 outputs", {"axis": 0}, {"s": ints([3, 4])}, n_out=2)
    one_error("Split", {"X": x}, ValueError, r"split \[8\] does not cut dimension 0",
              {"split": [8]}, opset=11, n_out=2)
    one_error("Split", {"X": x}, ValueError, r"axis 2 is out of range for rank 2", {"axis": 2},
              n_out=2)
    one_error("Split", {"X": x}, Exception, r"attribute 'num_outputs' is not supported",
              {"num_outputs": 2}, n_out=2, opset=13)


# ---- slicing ------------------------------------------------------------------------------

SLICES = [([1], [3], [1], [1]), ([0, -3], [2, 100], [0, 3], [1, 2]), ([-1], [-1000], [2], [-1]),
          ([3, 4], [0, -100], [2, 3], [-2, -3]), ([0], [2 ** 62], [1], None),
          ([10], [-10], [-1], [-1]), ([2], [1], [0], [1]), ([-100], [100], [3], [7]),
          ([4, -1, 0], [-2 ** 63, -2 ** 63, 2 ** 63 - 1], [3, 2, 1], [-2 ** 63, -1, 2 ** 63 - 1]),
          ([1], [2], [-4], None)]


@pytest.mark.parametrize("dtype", ALL_TYPES)
@pytest.mark.parametrize("starts,ends,axes,steps", SLICES)
def test_slice_every_type(dtype, starts, ends, axes, steps):
    x = sample((2, 3, 4, 5), dtype)
    inits = {"s": ints(starts), "e": ints(ends), "a": ints(axes)}
    if steps is not None:
        inits["k"] = ints(steps)
    one("Slice", {"X": x}, None, inits)


def test_slice_forms():
    x = sample((4, 6), np.float32)
    one("Slice", {"X": x}, {"starts": [1, -2], "ends": [3, 1000]}, opset=7)
    one("Slice", {"X": x}, {"starts": [1], "ends": [-1], "axes": [-1]}, opset=9)
    one("Slice", {"X": x}, None, {"s": ints([1], np.int32), "e": ints([5], np.int32)}, opset=10)
    one("Slice", {"X": x}, None, {"s": ints([5]), "e": ints([0]), "a": ints([1]),
                                  "k": ints([-2])}, opset=11)
    one("Slice", {"X": x}, None, {"s": ints([0]), "e": ints([9]), "k": ints([3])},
        order=["X", "s", "e", "", "k"], opset=13)
    one("Slice", {"X": sample((0, 3), np.int8)}, None, {"s": ints([0]), "e": ints([2]),
                                                       "a": ints([1])})
    # uint64 ends beyond 2^63 (runner only: ONNX Runtime takes int32 and int64)
    one("Slice", {"X": x}, None, {"s": ints([1], np.uint64), "e": ints([2 ** 64 - 1], np.uint64)},
        ort_too=False)
    # starts from a computed value: inferred at run
    feeds = {"X": x, "s": ints([2, 1])}
    node = helper.make_node("Slice", ["X", "s", "e"], ["y"])
    data = model([node], feeds, ["y"], {"e": ints([4, 6])})
    check(data, feeds)
    sess = so.load(data)
    for s in ([0, 0], [3, 5], [-1, -6]):
        feeds["s"] = ints(s)
        python_runner_record.check(data, feeds, "exact", sess.run(feeds))


def test_slice_errors():
    x = sample((4, 6), np.float32)
    for inits, match in [
        ({"s": ints([0]), "e": ints([1, 2])}, r"starts, ends, axes and steps differ in length"),
        ({"s": ints([0]), "e": ints([1]), "a": ints([2])}, r"axes 2 is out of range for rank 2"),
        ({"s": ints([0, 0]), "e": ints([1, 1]), "a": ints([0, -2])}, r"axes \[0, -2\] repeats"),
        ({"s": ints([0]), "e": ints([1]), "a": ints([0]), "k": ints([0])}, r"a step is 0"),
        ({"s": ints([[0]]), "e": ints([1])}, r"input starts must be 1-D, got shape \(1, 1\)"),
    ]:
        one_error("Slice", {"X": x}, ValueError, match, inits=inits)
    one_error("Slice", {"X": x}, Exception, r"attribute 'starts' is required", {"ends": [1]},
              opset=9)


# ---- permutations ----------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ALL_TYPES)
def test_transpose_every_type(dtype):
    x = sample((2, 3, 4, 5), dtype)
    one("Transpose", {"X": x}, {"perm": [0, 3, 1, 2]})
    one("Transpose", {"X": x})
    one("Transpose", {"X": sample((3, 1, 0), dtype)}, {"perm": [2, 0, 1]})
    one("Transpose", {"X": sample((6,), dtype)}, {"perm": [0]})
    one("DepthToSpace", {"X": sample((2, 8, 3, 2), dtype)}, {"blocksize": 2})
    one("DepthToSpace", {"X": sample((1, 18, 2, 2), dtype)}, {"blocksize": 3, "mode": "CRD"})
    one("SpaceToDepth", {"X": sample((2, 3, 4, 6), dtype)}, {"blocksize": 2})


def test_transpose_high_rank_int64():
    """16 dimensions of 8-byte elements that do not merge."""
    x = sample((2,) * 16, np.int64)
    perm = list(range(16))[::-1]
    one("Transpose", {"X": x}, {"perm": perm})
    one("Transpose", {"X": x}, {"perm": [1, 0] + list(range(2, 16))[::-1]})


def test_permutation_errors():
    x = sample((2, 3, 4), np.float32)
    one_error("Transpose", {"X": x}, ValueError, r"perm \[0, 1\] is not a permutation of 3 axes",
              {"perm": [0, 1]})
    one_error("Transpose", {"X": x}, ValueError, r"perm \[0, 1, 1\] is not a permutation",
              {"perm": [0, 1, 1]})
    one_error("DepthToSpace", {"X": x}, ValueError, r"input \(2, 3, 4\) is not \(N, C, H, W\) "
              r"with C a multiple of 4", {"blocksize": 2})
    one_error("DepthToSpace", {"X": sample((1, 4, 2, 2), np.float32)}, Exception,
              r"blocksize 2 and mode 'XYZ' are not supported", {"blocksize": 2, "mode": "XYZ"})
    one_error("SpaceToDepth", {"X": sample((1, 4, 3, 2), np.float32)}, ValueError,
              r"with H and W multiples of 2", {"blocksize": 2})
    one_error("SpaceToDepth", {"X": x}, Exception, r"blocksize 0 is not supported",
              {"blocksize": 0})


# ---- Gather -----------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ALL_TYPES)
def test_gather_every_type(dtype):
    x = sample((5, 4, 3), dtype)
    one("Gather", {"X": x}, {"axis": 1}, {"i": ints([[0, -1], [2, 2]])})
    one("Gather", {"X": x}, {"axis": 0}, {"i": ints(-2)})
    one("Gather", {"X": x}, {"axis": -1}, {"i": ints([2, 0, 1, 0], np.int32)})
    one("Gather", {"X": x}, {"axis": 2}, {"i": ints([], np.int64)})
    one("Gather", {"X": sample((0, 3), dtype)}, {"axis": 1}, {"i": ints([1, 2])})
    one("Gather", {"X": x, "i": ints([4, -5, 0])}, {"axis": 0})


def test_gather_errors():
    x = sample((3, 4), np.float32)
    node = helper.make_node("Gather", ["X", "i"], ["y"], name="g", axis=0)
    for i, match in (([0, 5], r"node 0 'g' \(Gather\): index 5 is out of range for axis 0 of "
                      r"size 3"), ([-4], r"index -4 is out of range for axis 0 of size 3")):
        feeds = {"X": x, "i": ints(i)}
        check_error(model([node], feeds, ["y"]), feeds, IndexError, match)
    one_error("Gather", {"X": x}, ValueError, r"axis -3 is out of range for rank 2", {"axis": -3},
              {"i": ints([0])})
    one_error("Gather", {"X": x}, TypeError, r"input indices must be an integer tensor",
              {"axis": 0}, {"i": np.array([0.0], np.float32)})


# ---- Expand, Tile -------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ALL_TYPES)
def test_expand_tile_every_type(dtype):
    one("Expand", {"X": sample((3, 1), dtype)}, None, {"s": ints([2, 1, 4])})
    one("Expand", {"X": sample((2, 3, 1), dtype)}, None, {"s": ints([3, 5])})
    one("Expand", {"X": sample((1, 1), dtype)}, None, {"s": ints([1])})
    one("Expand", {"X": sample((4, 1), dtype)}, None, {"s": ints([0, 1, 6])}, ort_too=False)
    one("Tile", {"X": sample((2, 3), dtype)}, None, {"r": ints([2, 3])})
    one("Tile", {"X": sample((2, 1, 3), dtype)}, None, {"r": ints([1, 4, 0])})
    one("Tile", {"X": sample((3,), dtype)}, None, {"r": ints([1])})


def test_expand_tile_forms_and_errors():
    x = sample((3, 1), np.float32)
    one("Expand", {"X": x}, None, {"s": ints([3, 4], np.int32)}, opset=8)
    one("Tile", {"X": sample((2, 2, 2, 2, 2, 2, 2, 2, 2), np.int64)}, None,
        {"r": ints([2] * 9)})
    feeds = {"X": x, "s": ints([2, 3, 5])}
    node = helper.make_node("Expand", ["X", "s"], ["y"])
    check(model([node], feeds, ["y"]), feeds)
    one_error("Expand", {"X": x}, ValueError, r"shapes \(3, 1\) and \(2, 5\) do not broadcast",
              inits={"s": ints([2, 5])})
    one_error("Tile", {"X": x}, ValueError, r"repeats \[2\] do not match rank 2",
              inits={"r": ints([2])})
    one_error("Tile", {"X": x}, ValueError, r"repeats \[2, -1\] do not match rank 2",
              inits={"r": ints([2, -1])})


# ---- Pad ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ALL_TYPES)
@pytest.mark.parametrize("mode", ["constant", "reflect", "edge", "wrap"])
def test_pad_every_type(dtype, mode):
    x = sample((2, 3, 4), dtype)
    pads = ints([0, 1, 2, 1, 2, 3])
    opset = 19 if mode == "wrap" else 13
    inits = {"p": pads}
    if mode == "constant" and dtype != np.bool_:
        inits["v"] = sample((1,), dtype).reshape(())
    one("Pad", {"X": x}, {"mode": mode}, inits, opset=opset)
    one("Pad", {"X": x}, {"mode": mode}, {"p": ints([0, 0, 0, 0, 0, 0])}, opset=opset)
    if mode != "constant" or dtype == np.float32:
        # cropping (negative pads): ONNX Runtime refuses some forms; the runner crops
        one("Pad", {"X": x}, {"mode": mode}, {"p": ints([0, -1, 1, 0, 2, -2])}, opset=opset,
            ort_too=mode == "constant")


@pytest.mark.parametrize("opset", [7, 11, 13, 18, 19, 21])
def test_pad_forms(opset):
    x = sample((2, 3, 4, 5), np.float32)
    if opset < 11:
        one("Pad", {"X": x}, {"pads": [0, 0, 1, 2, 0, 1, 2, 0], "value": -2.5}, opset=opset)
        one("Pad", {"X": x}, {"pads": [0, 0, 1, 2, 0, 1, 2, 0], "mode": "edge"}, opset=opset)
        one("Pad", {"X": x}, {"pads": [0, 0, 1, 2, 0, 1, 2, 0], "mode": "reflect"}, opset=opset)
        return
    one("Pad", {"X": x}, None, {"p": ints([0, 0, 1, 2, 0, 1, 2, 0]),
                                "v": np.array(7.25, np.float32)}, opset=opset)
    one("Pad", {"X": x}, {"mode": "reflect"}, {"p": ints([0, 1, 3, 4, 0, 1, 3, 4])}, opset=opset)
    if opset >= 18:
        one("Pad", {"X": x}, {"mode": "edge"}, {"p": ints([1, 2, 3, 1]), "v": np.float32(0),
                                                "a": ints([-1, 1])}, opset=opset)
        one("Pad", {"X": x}, None, {"p": ints([1, 2]), "a": ints([2])},
            order=["X", "p", "", "a"], opset=opset)


def test_pad_values_keep_bits():
    x = sample((2, 3), np.float32)
    for bits in (0x7FC01234, 0xFFC00000, 0x80000000, 0x7F800001, 0xFF812345):
        v = np.array(bits, np.uint32).view(np.float32).reshape(())
        one("Pad", {"X": x}, None, {"p": ints([1, 1, 1, 1]), "v": v}, ort_too=False)
        one("Pad", {"X": sample((0, 2), np.float32)}, None, {"p": ints([1, 1, 1, 1]), "v": v},
            ort_too=False)
    # an integer value for a float tensor, a float value for an integer one (runner only)
    one("Pad", {"X": x}, None, {"p": ints([1, 1, 1, 1]), "v": ints(2 ** 60 + 1)}, ort_too=False)
    one("Pad", {"X": ints([[1, 2], [3, 4]], np.int16)}, None,
        {"p": ints([1, 0, 0, 1]), "v": np.float32(-3.7)}, ort_too=False)
    one("Pad", {"X": x}, {"pads": [1, 1, 1, 1], "value": float(np.float32(0.1))}, opset=10)


def test_pad_errors():
    x = sample((2, 3), np.float32)
    one_error("Pad", {"X": x}, ValueError, r"pads \[1, 1\] do not match 2 axes",
              inits={"p": ints([1, 1])})
    one_error("Pad", {"X": x}, ValueError, r"pads \[0, -3, 0, -1\] crop \(2, 3\) below zero",
              inits={"p": ints([0, -3, 0, -1])})
    one_error("Pad", {"X": x}, ValueError, r"pads crop \(2, 3\) below zero", {"mode": "edge"},
              inits={"p": ints([0, -4, 0, 0])})
    one_error("Pad", {"X": sample((0, 3), np.float32)}, ValueError,
              r"mode 'reflect' cannot pad an empty axis of \(0, 3\)", {"mode": "reflect"},
              inits={"p": ints([1, 0, 0, 0])})
    one_error("Pad", {"X": ints([[1, 2]])}, ValueError,
              r"negative pads on integer tensors are not supported", inits={"p": ints([0, -1, 0, 0])})
    one_error("Pad", {"X": x}, Exception, r"mode 'wrap' is not supported \(constant, reflect, "
              r"edge are\)", {"mode": "wrap"}, inits={"p": ints([0, 0, 0, 0])}, opset=18)
    one_error("Pad", {"X": ints([[1, 2]])}, ValueError, r"cannot convert float NaN to integer",
              inits={"p": ints([0, 1, 0, 0]), "v": np.float32(np.nan)})
    one_error("Pad", {"X": x}, ValueError, r"axes \[1, -1\] repeats an axis",
              inits={"p": ints([0, 0, 0, 0]), "v": np.float32(0), "a": ints([1, -1])}, opset=18)
    one_error("Pad", {"X": x}, Exception, r"attribute 'pads' is required", opset=10)


# ---- shape subgraphs of exporters -----------------------------------------------------------------

def test_shape_subgraph_chain():
    """Shape -> Gather -> Unsqueeze -> Concat -> Reshape, with an integer
    Slice and Range: the pattern exporters emit, inferred while planning."""
    x = sample((2, 3, 4), np.float32)
    nodes = [helper.make_node("Shape", ["x"], ["s"]),
             helper.make_node("Gather", ["s", "i0"], ["d0"], axis=0),
             helper.make_node("Unsqueeze", ["d0", "ax"], ["d0u"]),
             helper.make_node("Slice", ["s", "one", "big"], ["rest"]),
             helper.make_node("ReduceProd", ["rest"], ["p"], keepdims=1),
             helper.make_node("Concat", ["d0u", "p"], ["shape"], axis=0),
             helper.make_node("Reshape", ["x", "shape"], ["y"]),
             helper.make_node("Size", ["x"], ["n"]),
             helper.make_node("Cast", ["n"], ["nf"], to=F),
             helper.make_node("Range", ["zero", "d0", "onei"], ["r"])]
    inits = {"i0": ints(0), "ax": ints([0]), "one": ints([1]), "big": ints([100]),
             "zero": ints(0), "onei": ints(1)}
    data = model(nodes, {"x": x}, ["y", "nf", "r", "shape"], inits, opset=13)
    try:
        check(data, {"x": x})
    except Exception as e:   # ReduceProd is another family's operator
        if "ReduceProd" in str(e) and "not supported" in str(e):
            pytest.skip("ReduceProd is not in this build")
        raise


# ---- 0-d tensors at run time, omitted inputs, extremes, larger copies -------------------------

def scalar_model(op_nodes, x, outputs, inits=None, opset=13):
    """A graph whose input X (1 element) is squeezed to 0-d as "s" before op_nodes."""
    nodes = [helper.make_node("Squeeze", ["X", "ax0"], ["s"])] + op_nodes
    return model(nodes, {"X": x}, outputs, dict(inits or {}, ax0=ints([0])), opset)


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.uint8, np.bool_])
def test_zero_d_tensors(dtype):
    x = sample((1,), dtype)
    nodes = [helper.make_node("Transpose", ["s"], ["t"]),
             helper.make_node("Tile", ["s", "none"], ["ti"]),
             helper.make_node("Pad", ["s", "none"], ["p"]),
             helper.make_node("Expand", ["s", "e"], ["ex"]),
             helper.make_node("Flatten", ["s"], ["f"], axis=0),
             helper.make_node("Unsqueeze", ["s", "ax0"], ["u"]),
             helper.make_node("Cast", ["s"], ["c"], to=TP.INT32),
             helper.make_node("Size", ["s"], ["n"]),
             helper.make_node("Concat", ["u", "u"], ["cc"], axis=0),
             helper.make_node("Gather", ["cc", "zero"], ["g"], axis=0),
             helper.make_node("Slice", ["s", "none", "none"], ["sl"])]
    data = scalar_model(nodes, x, ["t", "ti", "p", "ex", "f", "u", "c", "n", "cc", "g", "sl"],
                        {"none": ints([]), "e": ints([2, 3]), "zero": ints(0)})
    check(data, {"X": x}, ort_too=False)


def test_zero_d_errors():
    x = sample((1,), np.float32)
    for node, exc, match in [
        (helper.make_node("Concat", ["s", "s"], ["y"], axis=0), IndexError,
         r"tuple index out of range"),
        (helper.make_node("Gather", ["s", "zero"], ["y"], axis=0), IndexError,
         r"tuple index out of range"),
        (helper.make_node("Squeeze", ["s", "ax0"], ["y"]), IndexError, r"tuple index out of range"),
        (helper.make_node("Split", ["s"], ["y", "z"]), IndexError, r"tuple index out of range"),
        (helper.make_node("Flatten", ["s"], ["y"]), ValueError, r"axis 1 is out of range for rank 0"),
    ]:
        check_error(scalar_model([node], x, ["y"], {"zero": ints(0)}), {"X": x}, exc, match)


def test_omitted_concat_input_and_index_types():
    a, b = sample((2, 3), np.int16), sample((2, 2), np.int16)
    node = helper.make_node("Concat", ["A", "", "B"], ["y"], axis=1)
    check(model([node], {"A": a, "B": b}, ["y"]), {"A": a, "B": b}, ort_too=False)
    x = sample((4, 3), np.float32)
    for t in (np.uint8, np.int8, np.uint16, np.uint64, np.bool_):
        one("Gather", {"X": x}, {"axis": 0}, {"i": np.array([1, 0, 1], t)}, ort_too=False)
    node = helper.make_node("Gather", ["X", "i"], ["y"], name="g", axis=0)
    feeds = {"X": x, "i": np.array([2 ** 64 - 1], np.uint64)}
    check_error(model([node], feeds, ["y"]), feeds, IndexError,
                r"index 18446744073709551615 is out of range for axis 0 of size 4")


def test_range_extremes():
    big = 2 ** 63 - 1
    for a, b, d, t in [(-big - 1, big, 2 ** 62, np.int64), (big, -big - 1, -(2 ** 61), np.int64),
                       (2 ** 64 - 10, 2 ** 64 - 1, 3, np.uint64), (-5, 2 ** 31 - 1, 2 ** 29, np.int32),
                       (0, big, big, np.int64), (0, -big, big, np.int64)]:
        inits = {"a": np.array(a, t), "b": np.array(b, t), "d": np.array(d, t)}
        node = helper.make_node("Range", ["a", "b", "d"], ["y"])
        check(model([node], {}, ["y"], inits), {}, ort_too=t != np.uint64)


def test_larger_copies_at_two_threads():
    x = sample((64, 129, 33), np.float32)
    one("Transpose", {"X": x}, {"perm": [2, 0, 1]})
    one("Concat", {"A": x, "B": x[:, :7]}, {"axis": 1})
    one("Slice", {"X": x}, None, {"s": ints([-1, 100]), "e": ints([-1000, 3]), "a": ints([0, 1]),
                                  "k": ints([-3, -5])})
    one("Pad", {"X": x}, {"mode": "reflect"}, {"p": ints([0, 5, 7, 0, 9, 3])})
    one("Split", {"X": x}, {"axis": 0}, n_out=4)
    one("Gather", {"X": x}, {"axis": 1}, {"i": RNG.integers(-129, 129, 300)})
    one("Tile", {"X": x[:8]}, None, {"r": ints([2, 1, 3])})
    one("Expand", {"X": x[:, :1]}, None, {"s": ints([2, 64, 50, 33])})
    one("DepthToSpace", {"X": sample((2, 16, 31, 17), np.float32)}, {"blocksize": 2})
    one("Cast", {"X": x}, {"to": TP.INT16}, ort_too=False)


@pytest.mark.parametrize("seed", range(4))
def test_random_forms_match_the_runner(seed):
    """Random shapes, types and parameters (many invalid): the same outputs,
    or the same error with the same text."""
    rng = np.random.default_rng(seed)
    for _ in range(60):
        dtype = ALL_TYPES[rng.integers(len(ALL_TYPES))]
        r = int(rng.integers(0, 5))
        x = sample(tuple(int(s) for s in rng.integers(0, 5, r)), dtype)
        op = str(rng.choice(["Slice", "Pad", "Transpose", "Gather", "Tile", "Expand", "Squeeze",
                             "Unsqueeze", "Split", "Cast"]))
        attrs, inits, opset, n_out = {}, {}, 19, 1
        if op == "Slice":
            k = int(rng.integers(0, r + 2))
            inits = {"s": ints(rng.integers(-7, 7, k)), "e": ints(rng.integers(-7, 7, k)),
                     "a": ints(rng.integers(-r - 1, r + 1, k)),
                     "k": ints(rng.choice([-3, -1, 1, 2, 0], k))}
        elif op == "Pad":
            attrs = {"mode": str(rng.choice(["constant", "reflect", "edge", "wrap"]))}
            inits = {"p": ints(rng.integers(-2, 4, 2 * r + int(rng.integers(0, 2))))}
        elif op == "Transpose" and r and rng.integers(3):
            attrs = {"perm": [int(p) for p in (rng.permutation(r) if rng.integers(4)
                                               else rng.integers(0, r + 1, r))]}
        elif op == "Gather":
            attrs = {"axis": int(rng.integers(-r - 1, r + 1))}
            inits = {"i": ints(rng.integers(-5, 5, tuple(rng.integers(0, 3, int(rng.integers(3))))))}
        elif op == "Tile":
            inits = {"r": ints(rng.integers(-1, 3, max(0, r + int(rng.integers(-1, 2)))))}
        elif op == "Expand":
            inits = {"s": ints(rng.integers(0, 4, int(rng.integers(0, 5))))}
        elif op in ("Squeeze", "Unsqueeze"):
            inits = {"a": ints(rng.integers(-r - 2, r + 2, int(rng.integers(0, 3))))}
        elif op == "Split":
            n_out = int(rng.integers(1, 4))
            attrs = {"axis": int(rng.integers(-r - 1, r + 1)), "num_outputs": n_out}
            opset = 18
        elif op == "Cast":
            attrs = {"to": tensor_type(ALL_TYPES[rng.integers(len(ALL_TYPES))])}
        names = ["X"] + list(inits)
        node = helper.make_node(op, names, [f"y{i}" for i in range(n_out)], **attrs)
        data = model([node], {"X": x}, [f"y{i}" for i in range(n_out)], inits, opset)
        python_runner_record.check_outcome(data, {"X": x}, "exact",
                                           lambda: so.load(data, mode="exact").run({"X": x}))
