"""The C graph runtime's elementwise, comparison, logic and softmax operators
(csrc/graph/ops/math/) against the Python runner's recorded outcomes (python_runner_record), bit
for bit in both
modes: special float values (NaN payloads, +-inf, +-0, subnormals), every
integer type with wrap-around, broadcasting, empty and 0-d tensors, the
opset forms, and the errors (same exception type and text). ONNX Runtime
checks the values where it supports the case."""
from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto as TP  # noqa: E402
from onnx import helper, numpy_helper  # noqa: E402

from samebits._binding import lib as _lib  # noqa: E402
import samebits.onnx as so  # noqa: E402
from samebits.onnx import UnsupportedModelError  # noqa: E402
import python_runner_record  # noqa: E402  (the Python runner's outcomes: the reference)

if not hasattr(_lib.lib, "sb_session_load"):
    pytest.skip("the library has no C graph runtime", allow_module_level=True)


try:
    import onnxruntime as ort
except ImportError:  # pragma: no cover
    ort = None

RNG = np.random.default_rng(20240601)
RESEED_RNG_PER_TEST = True   # conftest: per-test inputs, for python_runner_record
F = TP.FLOAT
B = TP.BOOL

INT_TYPES = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]

# float32 special values, as bits: zeros, ones, infinities, NaNs (quiet,
# negative, signaling, with payloads), subnormals, the smallest normal, the
# largest finite, halves, values near 2^23 and 2^24.
SPECIAL_BITS = [
    0x00000000, 0x80000000, 0x3F800000, 0xBF800000, 0x7F800000, 0xFF800000,
    0x7FC00000, 0xFFC00000, 0x7FA00001, 0xFF812345, 0x7FFFFFFF, 0x7FC00001,
    0x00000001, 0x80000001, 0x007FFFFF, 0x807FFFFF, 0x00400000, 0x80400000,
    0x00800000, 0x80800000, 0x7F7FFFFF, 0xFF7FFFFF,
]
SPECIAL_VALUES = [0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 3.5, -3.5, 0.49999997, -0.49999997,
                  0.50000006, -0.50000006, 0.2, -0.2, 0.99999994, -0.99999994, 1.0000001,
                  -1.0000001, 8388607.5, -8388607.5, 8388608.0, -8388609.0, 4194303.5,
                  -4194304.5, 16777216.0, 1e30, -1e30, 3.0, -3.0, 6.0, -6.0, 88.0, -104.0,
                  20.0, -20.0, 1e-30, -1e-30]


def special() -> np.ndarray:
    x = np.array(SPECIAL_BITS, np.uint32).view(np.float32)
    return np.concatenate([x, np.array(SPECIAL_VALUES, np.float32),
                           (RNG.standard_normal(64) * 5).astype(np.float32)])


def bits(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a)
    return a.view(np.uint32) if a.dtype == np.float32 else a


def dt(a: np.ndarray) -> int:
    return helper.np_dtype_to_tensor_dtype(a.dtype)


def model(op, inputs: dict, attrs=None, inits=None, opset=17, out_type=F, order=None) -> bytes:
    """One node over graph inputs `inputs` and initializers `inits` (name ->
    array), in `order` (names; "" for an omitted input). A 0-d graph input
    is fed as shape (1,) and reshaped to () in the graph (see feeds())."""
    inits = dict(inits or {})
    names = order if order is not None else list(inputs) + list(inits)
    nodes = []
    for n, v in inputs.items():
        if v.ndim == 0:
            nodes.append(helper.make_node("Reshape", [n + "_1d", "scalar_shape"], [n]))
            inits["scalar_shape"] = np.zeros(0, np.int64)
    nodes.append(helper.make_node(op, names, ["y"], **(attrs or {})))
    g = helper.make_graph(
        nodes, "t",
        [helper.make_tensor_value_info(n + "_1d" if v.ndim == 0 else n, dt(v),
                                       [1] if v.ndim == 0 else list(v.shape))
         for n, v in inputs.items()],
        [helper.make_tensor_value_info("y", out_type, None)],
        [numpy_helper.from_array(v, n) for n, v in inits.items()])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m.SerializeToString()


def feeds(inputs: dict) -> dict:
    """What model() feeds (0-d inputs as shape (1,): samebits.onnx._core
    turns a 0-d numpy feed into shape (1,) through np.ascontiguousarray)."""
    return {(n + "_1d" if v.ndim == 0 else n): (v.reshape(1) if v.ndim == 0 else v)
            for n, v in inputs.items()}


def same(data: bytes, feeds: dict) -> np.ndarray:
    """The C runtime's output, checked bit for bit against the Python runner's
    recorded outcome in both modes (and exact mode at 2 threads)."""
    result = None
    for mode, threads in (("exact", 1), ("exact", 2), ("fast", None)):
        got = list(so.load(data, mode=mode, threads=threads).run(feeds).values())
        assert len(got) == 1
        python_runner_record.check(data, feeds, mode, got)
        if result is None:
            result = got[0]
    return result


def same_as_ort(data: bytes, feeds: dict, got: np.ndarray, rtol=1e-5, atol=1e-6) -> None:
    if ort is None:
        return
    want = ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(None, feeds)[0]
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, want.shape)
    if want.dtype.kind in "iub":
        assert np.array_equal(got, want)
    else:
        assert np.array_equal(np.isnan(got), np.isnan(want))
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)


def check(op, inputs, attrs=None, inits=None, opset=17, out_type=F, order=None, with_ort=True,
          rtol=1e-5, atol=1e-6) -> np.ndarray:
    data = model(op, inputs, attrs, inits, opset, out_type, order)
    got = same(data, feeds(inputs))
    if with_ort:
        same_as_ort(data, feeds(inputs), got, rtol, atol)
    return got


def both_raise(exc, match, op, inputs, attrs=None, inits=None, opset=17, out_type=F, order=None):
    data = model(op, inputs, attrs, inits, opset, out_type, order)
    for mode in ("exact", "fast"):
        with pytest.raises(exc, match=match):
            so.load(data, mode=mode).run(feeds(inputs))


def int_values(t) -> np.ndarray:
    """Every integer type's edge values, then small and random ones."""
    info = np.iinfo(t)
    edge = [info.min, info.min + 1, info.max - 1, info.max, 0, 1, 2, 3, 7]
    if info.min < 0:
        edge += [-1, -2, -3, -7]
    rand = RNG.integers(info.min, info.max, 20, dtype=t, endpoint=True)
    return np.concatenate([np.array(edge, dtype=t), rand])


def assert_bits(got: np.ndarray, want: np.ndarray) -> None:
    assert got.dtype == want.dtype and got.shape == want.shape
    assert np.array_equal(bits(got), bits(want)), (got, want)


# ---- functions of one float32 input --------------------------------------------------------

UNARY_CASES = [
    ("Neg", {}, 17), ("Reciprocal", {}, 17), ("Abs", {}, 17), ("Floor", {}, 17), ("Ceil", {}, 17),
    ("Round", {}, 17), ("LeakyRelu", {}, 17), ("LeakyRelu", {"alpha": 0.3}, 17),
    ("LeakyRelu", {"alpha": -2.5}, 17), ("HardSigmoid", {}, 17),
    ("HardSigmoid", {"alpha": 1 / 6}, 17), ("HardSigmoid", {"alpha": 0.3, "beta": 0.25}, 17),
    ("HardSigmoid", {"alpha": -1.5, "beta": 2.0}, 17), ("Elu", {}, 17), ("Elu", {"alpha": 0.3}, 17),
    ("Selu", {}, 17), ("Selu", {"alpha": 1.5, "gamma": 2.0}, 17), ("Softsign", {}, 17),
    ("HardSwish", {}, 17), ("Gelu", {}, 20), ("Gelu", {"approximate": "tanh"}, 20),
    ("Gelu", {"approximate": "none"}, 20), ("Relu", {}, 17), ("Clip", {}, 13),
]


@pytest.mark.parametrize("op,attrs,opset", UNARY_CASES)
def test_unary_special_values(op, attrs, opset):
    x = special().reshape(3, -1)
    got = check(op, {"X": x}, attrs, opset=opset, with_ort=False)
    finite = x[np.isfinite(x)].reshape(1, -1)   # ONNX Runtime's infinities differ for some
    check(op, {"X": finite}, attrs, opset=opset, rtol=2e-5, atol=2e-6)
    # every NaN result is 0x7FC00000
    assert np.all(bits(got)[np.isnan(got)] == 0x7FC00000)


@pytest.mark.parametrize("op,attrs,opset", UNARY_CASES)
@pytest.mark.parametrize("shape", [(0,), (2, 0, 3), ()])
def test_unary_empty_and_scalar(op, attrs, opset, shape):
    x = np.full(shape, -1.25, np.float32)
    if shape == () and op in ("Floor", "Ceil", "Round"):
        # the Python runner fails on a 0-d input here (numpy gives it a scalar)
        data = model(op, {"X": x}, attrs, opset=opset)
        for mode in ("exact", "fast"):
            got = list(so.load(data, mode=mode).run(feeds({"X": x})).values())[0]
            want = {"Floor": np.floor, "Ceil": np.ceil, "Round": np.rint}[op](x)
            assert_bits(got, np.asarray(want, np.float32))
        return
    check(op, {"X": x}, attrs, opset=opset)


@pytest.mark.parametrize("op", ["Floor", "Ceil", "Round"])
def test_rounding_bits(op):
    """IEEE floor / ceil / round-half-even of every kind of float32: zeros keep
    the input's sign, NaN is canonical (numpy's functions, NaN canonicalized)."""
    x = np.concatenate([special(), (RNG.standard_normal(2000) * 3e4).astype(np.float32),
                        RNG.integers(0, 1 << 32, 4000, dtype=np.uint64).astype(np.uint32)
                        .view(np.float32)])
    got = check(op, {"X": x}, with_ort=False)
    fn = {"Floor": np.floor, "Ceil": np.ceil, "Round": np.rint}[op]
    with np.errstate(invalid="ignore"):
        want = fn(x)
    want.view(np.uint32)[np.isnan(want)] = 0x7FC00000
    assert_bits(got, want)


def test_neg_abs_bits():
    x = special()
    assert_bits(check("Neg", {"X": x}), np.where(np.isnan(x), np.float32(np.nan), -x))
    want = np.abs(x)
    want.view(np.uint32)[np.isnan(want)] = 0x7FC00000
    assert_bits(check("Abs", {"X": x}), want)


def test_unary_in_graph_reuses_buffers():
    """Chains of the functions (buffers reused in place where allowed)."""
    x = special().reshape(1, -1)
    nodes = [helper.make_node("Abs", ["X"], ["a"]), helper.make_node("Neg", ["a"], ["b"]),
             helper.make_node("Softsign", ["b"], ["c"]), helper.make_node("Selu", ["c"], ["d"]),
             helper.make_node("Floor", ["d"], ["e"]), helper.make_node("Abs", ["e"], ["f"]),
             helper.make_node("HardSigmoid", ["f"], ["g"], alpha=0.3, beta=0.1),
             helper.make_node("Add", ["g", "X"], ["y"])]
    g = helper.make_graph(nodes, "t", [helper.make_tensor_value_info("X", F, list(x.shape))],
                          [helper.make_tensor_value_info("y", F, None)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    data = m.SerializeToString()
    same(data, {"X": x})
    x = (RNG.standard_normal(x.shape) * 4).astype(np.float32)    # (ONNX Runtime's Elu of
    same_as_ort(data, {"X": x}, same(data, {"X": x}))            # subnormals differs)


# ---- integer Neg, Abs, Relu ----------------------------------------------------------------

@pytest.mark.parametrize("t", INT_TYPES)
@pytest.mark.parametrize("op", ["Neg", "Abs", "Relu"])
def test_integer_unary_wraps(op, t):
    x = int_values(t).reshape(1, -1)
    out_type = dt(x)
    got = check(op, {"X": x}, out_type=out_type, with_ort=False)
    with np.errstate(over="ignore"):
        want = {"Neg": np.negative, "Abs": np.abs, "Relu": lambda v: np.maximum(v, t(0))}[op](x)
    assert_bits(got, want.astype(t))


@pytest.mark.parametrize("op", ["Neg", "Abs", "Relu"])
def test_integer_unary_bool_and_empty(op):
    check(op, {"X": np.array([True, False, True])}, out_type=B, with_ort=False)
    check(op, {"X": np.zeros((0, 2), np.int32)}, out_type=TP.INT32, with_ort=False)


@pytest.mark.parametrize("op", ["Neg", "Abs", "Relu"])
def test_integer_unary_onnxruntime(op):
    x = np.array([[-5, 0, 3, -2 ** 31, 2 ** 31 - 1]], np.int32)
    check(op, {"X": x}, out_type=TP.INT32, opset=14)


# ---- Mod ------------------------------------------------------------------------------------

@pytest.mark.parametrize("t", INT_TYPES)
@pytest.mark.parametrize("fmod", [0, 1])
def test_mod_every_integer_type(t, fmod):
    a = int_values(t)
    b = int_values(t)
    b = np.where(b == 0, t(3), b).astype(t)
    a2, b2 = a.reshape(-1, 1), b.reshape(1, -1)   # every pair, broadcast
    got = check("Mod", {"A": a2, "B": b2}, {"fmod": fmod}, out_type=dt(a), with_ort=False)
    with np.errstate(all="ignore"):
        want = (np.fmod if fmod else np.mod)(a2, b2)
    assert_bits(got, want.astype(t))


@pytest.mark.parametrize("fmod", [0, 1])
def test_mod_onnxruntime(fmod):
    a = np.array([[-7, 7, -7, 7, 0, 5, -1, 9223372036854775807, -9223372036854775808]], np.int64)
    b = np.array([[3, -3, -3, 3, 4, 5, 7, -2, -1]], np.int64)
    check("Mod", {"A": a, "B": b}, {"fmod": fmod}, out_type=TP.INT64)
    check("Mod", {"A": a.astype(np.int32) % 100, "B": b.astype(np.int32)}, {"fmod": fmod},
          out_type=TP.INT32)


def test_mod_bool_empty_scalar():
    check("Mod", {"A": np.array([True, False]), "B": np.array(True)}, out_type=B, with_ort=False)
    check("Mod", {"A": np.zeros((0, 3), np.int64), "B": np.ones((1, 3), np.int64)},
          out_type=TP.INT64, with_ort=False)
    check("Mod", {"A": np.array(-9, np.int16), "B": np.array(4, np.int16)}, out_type=TP.INT16,
          with_ort=False)


def test_mod_errors():
    both_raise(ValueError, "modulo by zero", "Mod",
               {"A": np.array([1, 2], np.int64), "B": np.array([1, 0], np.int64)},
               out_type=TP.INT64)
    both_raise(ValueError, "modulo by zero", "Mod",
               {"A": np.array([1, 2], np.uint8), "B": np.array(0, np.uint8)}, {"fmod": 1},
               out_type=TP.UINT8)
    # float32 runs (test_onnx_mod_float.py); its divisor must be float32 too
    both_raise(TypeError, "input B must be float32", "Mod",
               {"A": np.ones(2, np.float32), "B": np.ones(2, np.int64)}, {"fmod": 1})
    both_raise(ValueError, r"shapes \(2,\) and \(3,\) do not broadcast", "Mod",
               {"A": np.ones(2, np.int64), "B": np.ones(3, np.int64)}, out_type=TP.INT64)


# ---- Pow with an integer exponent -------------------------------------------------------------

@pytest.mark.parametrize("t", INT_TYPES + [np.bool_])
def test_pow_integer_exponent_every_type(t):
    base = np.concatenate([special(), np.array([-1.0, 1.0, 2.0, -2.0, 0.5], np.float32)])
    if t is np.bool_:
        e = np.array([True, False])
    else:
        info = np.iinfo(t)
        e = np.array([0, 1, 2, 3, info.max, info.max - 1] + ([-1, -2, -3, info.min] if info.min else []),
                     dtype=t)
    got = check("Pow", {"A": base.reshape(-1, 1), "B": e.reshape(1, -1)}, with_ort=False)
    assert got.shape == (base.size, e.size)


def test_pow_integer_exponent_rounds_once():
    """int64 2^24 + 1 is float32 2^24 (even): (-1) to it is +1; uint64 2^64 - 1
    is float32 2^64."""
    base = np.array([-1.0, 1.0, 0.5, 2.0, -0.0, np.inf], np.float32).reshape(-1, 1)
    e = np.array([2 ** 24 + 1, 2 ** 53 + 1, -(2 ** 24) - 1, 2 ** 63 - 1], np.int64)
    got = check("Pow", {"A": base}, inits={"B": e}, with_ort=False)
    assert got[0, 0] == 1.0 and got[0, 2] == 1.0
    got = check("Pow", {"A": base, "B": np.array([2 ** 64 - 1, 3], np.uint64)}, with_ort=False)
    assert got[0, 0] == 1.0 and got[0, 1] == -1.0


@pytest.mark.parametrize("t", [np.int32, np.int64])
def test_pow_integer_exponent_onnxruntime(t):
    check("Pow", {"A": (RNG.standard_normal((3, 4)) * 2).astype(np.float32),
                  "B": np.array([0, 1, 2, -3], t)}, rtol=1e-5)
    check("Pow", {"A": np.zeros((0, 4), np.float32), "B": np.array([0, 1, 2, -3], t)})
    check("Pow", {"A": np.array(1.5, np.float32)}, inits={"B": np.array(3, t)})


# ---- Clip ---------------------------------------------------------------------------------------

def test_clip_float_forms():
    x = special()
    lo, hi = np.array(-1.5, np.float32), np.array(6.0, np.float32)
    for opset in (11, 12, 13):
        check("Clip", {"X": x}, inits={"lo": lo, "hi": hi}, opset=opset)
        check("Clip", {"X": x}, inits={"lo": lo}, opset=opset)
        check("Clip", {"X": x}, inits={"hi": hi}, opset=opset, order=["X", "", "hi"])
        check("Clip", {"X": x}, opset=opset)
        check("Clip", {"X": x, "lo": lo, "hi": hi}, opset=opset)   # bounds as graph inputs
    for opset in (7, 10):
        check("Clip", {"X": x}, {"min": -2.0, "max": 2.0}, opset=opset)
        check("Clip", {"X": x}, {"max": 0.0}, opset=opset)
        check("Clip", {"X": x}, {"min": -0.0}, opset=opset)
        check("Clip", {"X": x}, opset=opset)


def test_clip_special_bounds():
    """NaN and signed-zero bounds follow maximum / minimum's rules; min above max gives max."""
    x = special()
    for lo, hi in ((np.nan, 1.0), (0.0, -0.0), (-0.0, 0.0), (2.0, 1.0), (-np.inf, np.inf),
                   (1e-45, 2e-45)):
        check("Clip", {"X": x}, inits={"lo": np.array(lo, np.float32),
                                       "hi": np.array(hi, np.float32)}, with_ort=False)
    check("Clip", {"X": x}, {"min": float("nan")}, opset=10, with_ort=False)


def test_clip_float_bounds_broadcast():
    """The Python runner broadcasts tensor bounds (maximum, then minimum)."""
    x = (RNG.standard_normal((2, 3)) * 3).astype(np.float32)
    got = check("Clip", {"X": x}, inits={"lo": (RNG.standard_normal((4, 1, 3))).astype(np.float32),
                                         "hi": np.array([5.0], np.float32)}, with_ort=False)
    assert got.shape == (4, 2, 3)
    got = check("Clip", {"X": x}, inits={"lo": np.array(-1.0, np.float32),
                                         "hi": np.ones((5, 1, 1), np.float32)}, with_ort=False)
    assert got.shape == (5, 2, 3)
    both_raise(ValueError, r"maximum: operands could not be broadcast together with shapes "
               r"\(2, 3\) and \(4,\)", "Clip", {"X": x}, inits={"lo": np.zeros(4, np.float32)})


@pytest.mark.parametrize("t", INT_TYPES)
def test_clip_integers(t):
    x = int_values(t)
    info = np.iinfo(t)
    for lo, hi in ((info.min, info.max), (0, 5), (info.max, info.min), (1, 1)):
        lo_a, hi_a = np.array(lo, t), np.array(hi, t)
        got = check("Clip", {"X": x}, inits={"lo": lo_a, "hi": hi_a}, out_type=dt(x), opset=13,
                    with_ort=False)
        assert_bits(got, np.minimum(np.maximum(x, lo_a), hi_a))
        got = check("Clip", {"X": x}, inits={"hi": hi_a}, out_type=dt(x), opset=13,
                    order=["X", "", "hi"], with_ort=False)
        assert_bits(got, np.minimum(x, hi_a))
    check("Clip", {"X": x}, out_type=dt(x), opset=13, with_ort=False)
    check("Clip", {"X": x}, out_type=dt(x), opset=10, with_ort=False)
    check("Clip", {"X": np.zeros((0, 2), t)}, inits={"lo": np.array(1, t)}, out_type=dt(x),
          opset=13, with_ort=False)


def test_clip_integers_onnxruntime():
    x = np.array([-9, -1, 0, 3, 100, 2 ** 40], np.int64)
    check("Clip", {"X": x}, inits={"lo": np.array(-2, np.int64), "hi": np.array(50, np.int64)},
          out_type=TP.INT64, opset=13)
    x = np.array([0, 7, 200, 255], np.uint8)
    check("Clip", {"X": x}, inits={"lo": np.array(5, np.uint8), "hi": np.array(201, np.uint8)},
          out_type=TP.UINT8, opset=13)


def test_clip_errors():
    x = np.array([1, 2, 3], np.int64)
    both_raise(TypeError, "input min must be an integer tensor, got float32", "Clip", {"X": x},
               {"min": 1.0}, opset=10, out_type=TP.INT64)
    both_raise(TypeError, "input max must be an integer tensor, got float32", "Clip", {"X": x},
               inits={"hi": np.array(1.0, np.float32)}, order=["X", "", "hi"], out_type=TP.INT64)
    both_raise(TypeError, "input min must be float32, got int64", "Clip",
               {"X": np.ones(3, np.float32)}, inits={"lo": np.array(1, np.int64)})


# ---- PRelu ------------------------------------------------------------------------------------------

def test_prelu_special_values():
    x = special().reshape(1, -1, 1)
    check("PRelu", {"X": x}, inits={"slope": np.float32(0.25) * np.ones((x.shape[1], 1), np.float32)})
    slope = np.array(SPECIAL_BITS[:8], np.uint32).view(np.float32)   # NaN, inf and zero slopes
    xs = np.repeat(x.reshape(-1, 1), slope.size, axis=1)
    check("PRelu", {"X": xs}, inits={"slope": slope}, with_ort=False)


def test_prelu_forms():
    x = (RNG.standard_normal((2, 3, 4, 5)) * 3).astype(np.float32)
    check("PRelu", {"X": x}, inits={"slope": RNG.standard_normal((3, 1, 1)).astype(np.float32)})
    check("PRelu", {"X": x}, inits={"slope": np.array([0.1], np.float32)})
    check("PRelu", {"X": x, "slope": RNG.standard_normal((5,)).astype(np.float32)})
    check("PRelu", {"X": x}, inits={"slope": np.array([0.1], np.float32)}, opset=7)
    check("PRelu", {"X": np.zeros((0, 3), np.float32)}, inits={"slope": np.ones(7, np.float32)},
          with_ort=False)   # empty: passed through before the shapes are checked
    both_raise(ValueError, r"slope \(2, 1, 5\) must broadcast to X \(3, 5\)", "PRelu",
               {"X": np.ones((3, 5), np.float32)}, inits={"slope": np.ones((2, 1, 5), np.float32)})
    both_raise(ValueError, r"shapes \(3, 5\) and \(4,\) do not broadcast", "PRelu",
               {"X": np.ones((3, 5), np.float32)}, inits={"slope": np.ones(4, np.float32)})
    both_raise(TypeError, "input slope must be float32, got int64", "PRelu",
               {"X": np.ones((3, 5), np.float32)}, inits={"slope": np.ones(5, np.int64)})


# ---- Where ----------------------------------------------------------------------------------------

def test_where_float_bits_and_broadcasting():
    x = special()
    c = RNG.integers(0, 2, x.size).astype(bool)
    y = np.flip(x).copy()
    got = check("Where", {"c": c, "a": x, "b": y})
    assert_bits(got, np.where(c, x, y))   # NaN payloads copied
    c3 = RNG.integers(0, 2, (2, 1, 4)).astype(bool)
    a3, b3 = RNG.standard_normal((3, 1)).astype(np.float32), RNG.standard_normal((4,)).astype(np.float32)
    got = check("Where", {"c": c3, "a": a3, "b": b3})
    assert_bits(got, np.where(c3, a3, b3))
    check("Where", {"c": np.array(True), "a": np.array(1.0, np.float32),
                    "b": np.array(-0.0, np.float32)})
    check("Where", {"c": np.zeros((0, 1), bool), "a": np.ones((1, 3), np.float32),
                    "b": np.ones(3, np.float32)})
    c6 = RNG.integers(0, 2, (2, 1, 3, 1, 2, 1)).astype(bool)
    check("Where", {"c": c6, "a": RNG.standard_normal((1, 2, 1, 4, 1, 3)).astype(np.float32),
                    "b": RNG.standard_normal((3, 1, 2, 1)).astype(np.float32)})


@pytest.mark.parametrize("t", INT_TYPES + [np.bool_])
def test_where_integers(t):
    x = int_values(t) if t is not np.bool_ else np.array([True, False, True, True])
    y = np.flip(x).copy()
    c = RNG.integers(0, 2, x.size).astype(bool)
    got = check("Where", {"c": c, "a": x, "b": y}, out_type=dt(x), with_ort=t in (np.int32, np.int64))
    assert_bits(got, np.where(c, x, y))
    check("Where", {"c": c.reshape(-1, 1), "a": x.reshape(1, -1), "b": y[:1]}, out_type=dt(x),
          with_ort=False)


def test_where_integer_condition():
    """The Python runner takes any integer condition (nonzero: true)."""
    c = np.array([0, 3, -1, 0, 255], np.int64)
    got = check("Where", {"c": c, "a": np.ones(5, np.float32), "b": np.zeros(5, np.float32)},
                with_ort=False)
    assert got.tolist() == [0.0, 1.0, 1.0, 0.0, 1.0]
    check("Where", {"c": c.astype(np.uint8), "a": np.ones(5, np.int16), "b": np.zeros(5, np.int16)},
          out_type=TP.INT16, with_ort=False)


def test_where_errors():
    both_raise(TypeError, "X and Y must have the same type", "Where",
               {"c": np.array([True]), "a": np.ones(1, np.float32), "b": np.ones(1, np.int64)})
    both_raise(TypeError, "input condition must be an integer tensor, got float32", "Where",
               {"c": np.ones(1, np.float32), "a": np.ones(1, np.float32), "b": np.ones(1, np.float32)})
    both_raise(ValueError, r"shapes \(2,\) and \(3,\) and \(1,\) do not broadcast", "Where",
               {"c": np.ones(2, bool), "a": np.ones(3, np.float32), "b": np.ones(1, np.float32)})


# ---- comparisons -------------------------------------------------------------------------------------

CMP = {"Equal": np.equal, "Less": np.less, "Greater": np.greater, "LessOrEqual": np.less_equal,
       "GreaterOrEqual": np.greater_equal}


@pytest.mark.parametrize("op", list(CMP))
def test_compare_float_special_pairs(op):
    """Every pair of special values (broadcast): IEEE, NaN false, -0 == +0."""
    x = np.concatenate([np.array(SPECIAL_BITS, np.uint32).view(np.float32),
                        np.array([0.5, -0.5, 3.0, 1e-30], np.float32)])
    a, b = x.reshape(-1, 1), x.reshape(1, -1)
    got = check(op, {"A": a, "B": b}, out_type=B, opset=16)
    with np.errstate(invalid="ignore"):
        assert_bits(got, CMP[op](a, b))
    check(op, {"A": np.zeros((0, 2), np.float32), "B": np.ones(2, np.float32)}, out_type=B,
          opset=16)
    check(op, {"A": np.array(1.0, np.float32), "B": np.array(np.nan, np.float32)}, out_type=B,
          opset=16)


@pytest.mark.parametrize("t", [np.float32, np.int32, np.int64])
@pytest.mark.parametrize("op", list(CMP))
def test_compare_every_inner_stride(op, t):
    """The typed loops of each innermost stride pair: both operands
    contiguous, one repeated along the row (either side), and a strided walk
    (a transposed operand: copied contiguous by the host, so a row of 1 below)."""
    rng = np.random.default_rng(5)
    pool = np.arange(-3, 4).astype(t)
    if t is np.int64:   # equal low halves, different high ones (int64 Equal compares halves)
        pool = np.concatenate([pool, np.array([1 + 2**32, 1 - 2**32, 2**33, -2**63], t)])
    x, y = rng.choice(pool, size=(5, 7)), rng.choice(pool, size=(5, 7))
    x[0, :len(pool)], y[0, :len(pool)] = pool[:7], pool[::-1][:7]
    col, row = x[:, :1].copy(), y[:1, :].copy()
    for a, b in [(x, y), (col, y), (x, row), (row, col), (x[:, :1], y[:, 2:3])]:
        data = model(op, {"A": a, "B": b}, None, None, 16, B, None)
        for mode in ("exact", "fast"):
            got = so.load(data, mode=mode).run(feeds({"A": a, "B": b}))["y"]
            assert_bits(got, CMP[op](a, b))


@pytest.mark.parametrize("t", INT_TYPES + [np.bool_])
@pytest.mark.parametrize("op", list(CMP))
def test_compare_integers(op, t):
    x = int_values(t) if t is not np.bool_ else np.array([True, False])
    a, b = x.reshape(-1, 1), x.reshape(1, -1)
    got = check(op, {"A": a, "B": b}, out_type=B, opset=16,
                with_ort=t in (np.int32, np.int64))
    assert_bits(got, CMP[op](a, b))


@pytest.mark.parametrize("op", list(CMP))
def test_compare_mixed_integer_types(op):
    """The Python runner compares the integers' values across types."""
    a = np.array([[-1], [0], [200], [-128]], np.int64)
    b = np.array([255, 0, 18446744073709551615, 3], np.uint64)
    got = check(op, {"A": a, "B": b}, out_type=B, with_ort=False)
    want = CMP[op](np.array([[-1], [0], [200], [-128]], object), np.array(
        [255, 0, 18446744073709551615, 3], object)).astype(bool)
    assert np.array_equal(got, want)
    check(op, {"A": np.array([[-1], [0], [100], [-128]], np.int8),
               "B": np.array([1, 255, 200], np.uint8)}, out_type=B, with_ort=False)


def test_compare_errors():
    both_raise(TypeError, "inputs must have the same type", "Less",
               {"A": np.ones(2, np.float32), "B": np.ones(2, np.int64)}, out_type=B)
    both_raise(ValueError, r"shapes \(2, 3\) and \(2,\) do not broadcast", "Equal",
               {"A": np.ones((2, 3), np.int64), "B": np.ones(2, np.int64)}, out_type=B)


# ---- logic ----------------------------------------------------------------------------------------------

LOGIC = {"And": np.logical_and, "Or": np.logical_or, "Xor": np.logical_xor}


@pytest.mark.parametrize("op", list(LOGIC))
def test_logic(op):
    a = np.array([[True], [False]])
    b = np.array([[True, False, True]])
    got = check(op, {"A": a, "B": b}, out_type=B)
    assert_bits(got, LOGIC[op](a, b))
    check(op, {"A": np.array(True), "B": np.array(False)}, out_type=B)
    check(op, {"A": np.zeros((0, 3), bool), "B": np.ones(3, bool)}, out_type=B)
    # any integer type: nonzero is true (the Python runner's rule)
    x = np.array([0, 1, -1, 255, 2 ** 40], np.int64)
    got = check(op, {"A": x, "B": np.array([[0], [7]], np.uint8)}, out_type=B, with_ort=False)
    assert_bits(got, LOGIC[op](x != 0, np.array([[0], [7]]) != 0))


def test_not():
    x = np.array([[True, False], [False, False]])
    assert_bits(check("Not", {"X": x}, out_type=B), ~x)
    check("Not", {"X": np.zeros((0,), bool)}, out_type=B)
    got = check("Not", {"X": np.array([0, 3, -1], np.int32)}, out_type=B, with_ort=False)
    assert got.tolist() == [True, False, False]


def test_logic_errors():
    both_raise(TypeError, "input A must be an integer tensor, got float32", "And",
               {"A": np.ones(2, np.float32), "B": np.ones(2, bool)}, out_type=B)
    both_raise(TypeError, "input B must be an integer tensor, got float32", "Xor",
               {"A": np.ones(2, bool), "B": np.ones(2, np.float32)}, out_type=B)
    both_raise(TypeError, "input X must be an integer tensor, got float32", "Not",
               {"X": np.ones(2, np.float32)}, out_type=B)
    both_raise(ValueError, r"shapes \(2,\) and \(3,\) do not broadcast", "Or",
               {"A": np.ones(2, bool), "B": np.ones(3, bool)}, out_type=B)


# ---- Softmax, LogSoftmax ------------------------------------------------------------------------------------

@pytest.mark.parametrize("op", ["Softmax", "LogSoftmax"])
@pytest.mark.parametrize("opset,axis,shape", [
    (7, None, (3, 4, 5)), (11, None, (3, 4, 5)), (13, None, (3, 4, 5)), (11, 0, (3, 4, 5)),
    (11, 2, (3, 4, 5)), (11, -2, (3, 4, 5)), (13, 0, (3, 4, 5)), (13, 1, (3, 4, 5)),
    (13, -3, (3, 4, 5)), (13, -1, (7,)), (11, 0, (7,)), (13, 1, (2, 3, 1, 4)),
])
def test_softmax_axes(op, opset, axis, shape):
    x = (RNG.standard_normal(shape) * 4).astype(np.float32)
    attrs = {} if axis is None else {"axis": axis}
    check(op, {"X": x}, attrs, opset=opset, rtol=2e-5, atol=2e-6)


@pytest.mark.parametrize("op", ["Softmax", "LogSoftmax"])
def test_softmax_special_values(op):
    rows = np.array([[0.0, -np.inf, 1.0, -0.0], [-np.inf] * 4, [np.nan, 1.0, 2.0, 3.0],
                     [np.inf, 1.0, 2.0, 3.0], [1e-45, -1e-45, 0.0, 88.0],
                     [3e38, -3e38, 0.0, 1.0]], np.float32)
    for opset in (11, 13):
        check(op, {"X": rows}, opset=opset, with_ort=False)
        check(op, {"X": rows.T.copy()}, {"axis": 0}, opset=opset, with_ort=False)


@pytest.mark.parametrize("op", ["Softmax", "LogSoftmax"])
def test_softmax_empty_and_scalar(op):
    for opset in (11, 13):
        check(op, {"X": np.zeros((2, 0, 3), np.float32)}, {"axis": 1}, opset=opset)
        check(op, {"X": np.zeros((2, 0, 3), np.float32)}, {"axis": 7}, opset=opset,
              with_ort=False)   # empty: passed through before the axis is checked
    check(op, {"X": np.array(2.5, np.float32)}, opset=11, with_ort=False)
    check(op, {"X": np.array(2.5, np.float32)}, {"axis": 0}, opset=13, with_ort=False)


def test_softmax_errors():
    both_raise(ValueError, "axis 2 is out of range for rank 2", "Softmax",
               {"X": np.ones((2, 3), np.float32)}, {"axis": 2})
    both_raise(ValueError, "axis -3 is out of range for rank 2", "LogSoftmax",
               {"X": np.ones((2, 3), np.float32)}, {"axis": -3}, opset=11)
    both_raise(ValueError, "axis -1 is out of range for rank 0", "Softmax",
               {"X": np.array(1.0, np.float32)})
    both_raise(TypeError, "input input must be float32, got int64", "Softmax",
               {"X": np.ones((2, 3), np.int64)})


# ---- errors of the functions ---------------------------------------------------------------------------------

def test_function_errors():
    xi = np.array([1, 2], np.int64)
    for op in ("Reciprocal", "Sigmoid", "Exp"):
        both_raise(TypeError, "input must be float32", op, {"X": xi}, out_type=TP.INT64)
    for op, opset in (("Floor", 17), ("Ceil", 17), ("Round", 17), ("HardSigmoid", 17),
                      ("HardSwish", 17), ("Selu", 17), ("Softsign", 17), ("Gelu", 20),
                      ("LeakyRelu", 17), ("Elu", 17)):
        both_raise(TypeError, "input X must be float32, got int64", op, {"X": xi}, opset=opset,
                   out_type=TP.INT64)
    both_raise(UnsupportedModelError, "approximate='fast' is not supported", "Gelu",
               {"X": np.ones(2, np.float32)}, {"approximate": "fast"}, opset=20)
    both_raise(ValueError, "negative_slope must not be NaN", "LeakyRelu",
               {"X": np.ones(2, np.float32)}, {"alpha": float("nan")})
    both_raise(ValueError, "alpha must not be NaN", "Elu", {"X": np.ones(2, np.float32)},
               {"alpha": float("nan")})
    both_raise(UnsupportedModelError, "attribute 'beta' is not supported", "LeakyRelu",
               {"X": np.ones(2, np.float32)}, {"beta": 1.0})


def test_leaky_relu_elu_pass_empty_tensors_through():
    """As the Python runner: an empty input is returned as it is (any type, any alpha)."""
    for op in ("LeakyRelu", "Elu"):
        check(op, {"X": np.zeros((0, 2), np.int64)}, out_type=TP.INT64, with_ort=False)
        check(op, {"X": np.zeros((0, 2), np.float32)}, {"alpha": float("nan")}, with_ort=False)


# ---- chains (intermediate buffers reused in place where an op allows it) ------------------------------------------

def graph(nodes, inputs: dict, inits: dict, out_type=F, opset=17) -> bytes:
    g = helper.make_graph(
        nodes, "t",
        [helper.make_tensor_value_info(n, dt(v), list(v.shape)) for n, v in inputs.items()],
        [helper.make_tensor_value_info("y", out_type, None)],
        [numpy_helper.from_array(v, n) for n, v in inits.items()])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m.SerializeToString()


def test_float_chain():
    x = (RNG.standard_normal((4, 6)) * 3).astype(np.float32)
    n = helper.make_node
    nodes = [n("Neg", ["X"], ["a"]), n("Clip", ["a", "lo", "hi"], ["b"]),
             n("Softmax", ["b"], ["c"], axis=0), n("LogSoftmax", ["c"], ["d"]),
             n("Reciprocal", ["d"], ["e"]), n("HardSwish", ["e"], ["f"]), n("Elu", ["f"], ["g"]),
             n("LeakyRelu", ["g"], ["h"], alpha=0.2), n("Round", ["h"], ["i"]),
             n("PRelu", ["i", "slope"], ["j"]), n("Ceil", ["j"], ["k"]),
             n("HardSigmoid", ["k"], ["l"]), n("Pow", ["l", "e2"], ["m"]),
             n("Greater", ["m", "X"], ["p"]), n("Where", ["p", "m", "X"], ["y"])]
    inits = {"lo": np.array(-2.0, np.float32), "hi": np.array(2.5, np.float32),
             "slope": np.array([0.5], np.float32), "e2": np.array([2, 3, 1, 0, -1, 2], np.int64)}
    data = graph(nodes, {"X": x}, inits)
    same_as_ort(data, {"X": x}, same(data, {"X": x}), rtol=1e-4, atol=1e-5)


def test_integer_and_bool_chain():
    a = int_values(np.int32)[:24].reshape(4, 6)
    n = helper.make_node
    nodes = [n("Neg", ["A"], ["a"]), n("Abs", ["a"], ["b"]), n("Mod", ["b", "m"], ["c"]),
             n("Clip", ["c", "lo", "hi"], ["d"]), n("Less", ["d", "t"], ["e"]),
             n("Not", ["e"], ["f"]), n("Xor", ["f", "e"], ["g"]), n("And", ["g", "f"], ["h"]),
             n("Or", ["h", "e"], ["i"]), n("Equal", ["i", "f"], ["j"]),
             n("Where", ["j", "d", "A"], ["y"])]
    inits = {"m": np.array([7, -5, 3, 11, -2, 9], np.int32), "lo": np.array(-3, np.int32),
             "hi": np.array(5, np.int32), "t": np.array([[1], [2], [0], [-1]], np.int32)}
    data = graph(nodes, {"A": a}, inits, out_type=TP.INT32, opset=13)
    same_as_ort(data, {"A": a}, same(data, {"A": a}))


def test_folded_at_load():
    """Nodes over constants only (computed when the model loads)."""
    n = helper.make_node
    nodes = [n("Mod", ["a", "b"], ["c"], fmod=0), n("Neg", ["c"], ["d"]),
             n("Abs", ["d"], ["e"]),
             n("GreaterOrEqual", ["e", "b"], ["f"]), n("Where", ["f", "e", "b"], ["y"])]
    inits = {"a": np.array([-7, 8, 9, -10], np.int64), "b": np.array([3, -3, 4, 4], np.int64)}
    data = graph(nodes, {}, inits, out_type=TP.INT64)
    same_as_ort(data, {}, same(data, {}))
