"""Hardmax, ReduceLogSum and ReduceLogSumExp (docs/onnx.md), the operators
added as the worked example of docs/design.md's "Adding an operator".

Where users put them: on a graph input, on an intermediate value, on an
intermediate that two nodes read and that is also a graph output; every
path, 1 and 2 threads. Exact mode is held bit for bit to numpy oracles of
the documented sequences; both modes to onnx.reference and ONNX Runtime
where those agree with the definition (each is wrong somewhere: the test
says where)."""
from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
from onnx import TensorProto as TP  # noqa: E402
from onnx import helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

import samebits.onnx as so  # noqa: E402
from onnx_cases import run_everywhere  # noqa: E402

F = TP.FLOAT
SPECIAL = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-45, -3e38, 3e38], np.float32)


def _model(op: str, opset: int, shape, place: str, **attrs) -> bytes:
    """op in one of the graph positions: "input" (on x), "intermediate" (on
    Neg(x)), "shared" (on t = Neg(x), which Abs also reads and which is a
    graph output too)."""
    src = "x" if place == "input" else "t"
    nodes = [] if place == "input" else [helper.make_node("Neg", ["x"], ["t"])]
    nodes.append(helper.make_node(op, [src], ["y"], **attrs))
    outs = [helper.make_tensor_value_info("y", F, None)]
    if place == "shared":
        nodes.append(helper.make_node("Abs", ["t"], ["a"]))
        outs += [helper.make_tensor_value_info("a", F, None), helper.make_tensor_value_info("t", F, None)]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", F, list(shape))], outs)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m.SerializeToString()


def _everywhere(data: bytes, x: np.ndarray, mode: str):
    return run_everywhere(data, {"x": x}, modes=(mode,))


def _feed(shape, seed: int, special: bool, scale: float = 4) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(shape) * scale).astype(np.float32)
    if special:
        x.flat[rng.integers(0, x.size, max(1, x.size // 6))] = rng.choice(SPECIAL, max(1, x.size // 6))
    return x


def _check_other_outputs(out, x, what):
    t = np.where(np.isnan(x), np.float32(np.nan), -x)   # Neg: x * -1, NaN canonical (docs/onnx.md)
    if "t" in out:
        np.testing.assert_array_equal(out["t"].view(np.uint32), t.view(np.uint32), err_msg=what)
        np.testing.assert_array_equal(out["a"], np.abs(t), err_msg=what)


# ---- Hardmax -------------------------------------------------------------------------

def hardmax_oracle(x: np.ndarray, axis: int, opset: int) -> np.ndarray:
    """1 at numpy's argmax (the first largest, a NaN above every number)."""
    r = x.ndim
    axis = axis + r if axis < 0 else axis
    if opset < 13:   # the input seen as 2-D at axis
        rows = x.reshape(int(np.prod(x.shape[:axis], dtype=np.int64)), -1)
        y = np.zeros_like(rows)
        if rows.size:
            y[np.arange(rows.shape[0]), np.argmax(rows, axis=1)] = 1
        return y.reshape(x.shape)
    y = np.zeros_like(x)
    if x.size:
        np.put_along_axis(y, np.expand_dims(np.argmax(x, axis=axis), axis), 1, axis=axis)
    return y


HARDMAX_CASES = [(13, None, (3, 4, 5)), (13, 1, (3, 4, 5)), (13, 0, (7,)), (13, -3, (2, 3, 4)),
                 (11, None, (3, 4, 5)), (11, 2, (3, 4, 5)), (11, 0, (2, 3)), (7, -1, (2, 5))]


@pytest.mark.parametrize("place", ["input", "intermediate", "shared"])
@pytest.mark.parametrize("opset,axis,shape", HARDMAX_CASES)
@pytest.mark.parametrize("special", [False, True])
def test_hardmax_bits_everywhere(place, opset, axis, shape, special):
    attrs = {} if axis is None else {"axis": axis}
    model = _model("Hardmax", opset, shape, place, **attrs)
    x = _feed(shape, 11 + opset, special)
    src = x if place == "input" else -x
    want = hardmax_oracle(src, axis if axis is not None else (-1 if opset >= 13 else 1), opset)
    for mode in ("exact", "fast"):   # exact inputs: both modes give the oracle's bits
        for what, out in _everywhere(model, x, mode):
            np.testing.assert_array_equal(out["y"].view(np.uint32), want.view(np.uint32), err_msg=what)
            _check_other_outputs(out, x, what)


@pytest.mark.parametrize("opset,axis,shape", HARDMAX_CASES)
def test_hardmax_against_onnx_runtime_and_reference(opset, axis, shape):
    attrs = {} if axis is None else {"axis": axis}
    model = _model("Hardmax", opset, shape, "intermediate", **attrs)
    x = _feed(shape, 5, False)   # no NaN: ONNX Runtime skips NaN, the reference and samebits do not
    got = so.load(model).run({"x": x})["y"]
    np.testing.assert_array_equal(got, ort.InferenceSession(model).run(None, {"x": x})[0])
    ref = ReferenceEvaluator(onnx.load_from_string(model)).run(None, {"x": x})[0]
    a = axis if axis is not None else (-1 if opset >= 13 else 1)
    if opset < 13 and (a + len(shape)) % len(shape) != len(shape) - 1:
        # onnx.reference ignores opset < 13's 2-D view (a known reference bug): it differs here
        assert not np.array_equal(got, ref)
    else:
        np.testing.assert_array_equal(got, ref)


def test_hardmax_nan_and_signed_zeros():
    x = np.array([[1, np.nan, 3, np.nan], [-0.0, 0.0, -1, -2], [np.inf, np.inf, 1, 2]], np.float32)
    model = _model("Hardmax", 13, x.shape, "input")
    got = so.load(model, mode="exact").run({"x": x})["y"]
    np.testing.assert_array_equal(got, [[0, 1, 0, 0], [1, 0, 0, 0], [1, 0, 0, 0]])
    assert not np.signbit(got).any()


def test_hardmax_refuses_integers_and_bad_axes():
    g = helper.make_graph([helper.make_node("Hardmax", ["x"], ["y"])], "g",
                          [helper.make_tensor_value_info("x", TP.INT64, [2, 3])],
                          [helper.make_tensor_value_info("y", TP.INT64, None)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    with pytest.raises(TypeError, match="float32"):
        so.load(m.SerializeToString()).run({"x": np.zeros((2, 3), np.int64)})
    model = _model("Hardmax", 13, (2, 3), "input", axis=2)
    with pytest.raises((ValueError, IndexError), match="axis"):
        so.load(model).run({"x": np.zeros((2, 3), np.float32)})


# ---- ReduceLogSum, ReduceLogSumExp -------------------------------------------------

def _f32(v) -> np.ndarray:
    return np.asarray(v, np.float64).astype(np.float32)


def _canonical(y: np.ndarray) -> np.ndarray:
    """NaN as samebits writes every NaN it computes: 0x7FC00000."""
    return np.where(np.isnan(y), np.float32(np.nan), y).astype(np.float32)


def _serial_sum(rows: np.ndarray) -> np.ndarray:
    """float32 sums from +0 in order along the last axis (sb_reduce's)."""
    acc = np.zeros(rows.shape[:-1], np.float32)
    for j in range(rows.shape[-1]):
        acc = (acc + rows[..., j]).astype(np.float32)
    return acc


def _rows(x: np.ndarray, axes) -> tuple[np.ndarray, list[int]]:
    r = x.ndim
    axes = sorted(a % r for a in (range(r) if axes is None else axes))
    keep = [d for d in range(r) if d not in axes]
    moved = np.transpose(x, keep + axes)
    return moved.reshape(moved.shape[:len(keep)] + (-1,)), axes


def log_sum_exp_oracle(x: np.ndarray, axes, keepdims: bool) -> np.ndarray:
    """docs/onnx.md's sequence: m = the row's largest finite value (+0 when
    none), exp(x - m) correctly rounded, the serial sum, log correctly
    rounded, + m; each step rounded to float32."""
    rows, axes = _rows(x, axes)
    with np.errstate(all="ignore"):
        finite = np.where(np.isinf(rows), -np.inf, rows)
        m = finite.max(axis=-1) if rows.shape[-1] else np.full(rows.shape[:-1], -np.inf, np.float32)
        m = np.where(m == -np.inf, np.float32(0), m).astype(np.float32)
        t = _f32(np.exp((rows - m[..., None]).astype(np.float32).astype(np.float64)))
        y = (_f32(np.log(_serial_sum(t).astype(np.float64))) + m).astype(np.float32)
    y = _canonical(y)
    shape = [1 if d in axes else s for d, s in enumerate(x.shape)]
    return y.reshape(shape) if keepdims else y.reshape([s for d, s in enumerate(x.shape) if d not in axes])


def log_sum_oracle(x: np.ndarray, axes, keepdims: bool) -> np.ndarray:
    rows, axes = _rows(x, axes)
    with np.errstate(all="ignore"):
        y = _f32(np.log(_serial_sum(rows).astype(np.float64)))
    y = _canonical(y)
    shape = [1 if d in axes else s for d, s in enumerate(x.shape)]
    return y.reshape(shape) if keepdims else y.reshape([s for d, s in enumerate(x.shape) if d not in axes])


REDUCE_CASES = [((3, 4, 5), [1], 1), ((3, 4, 5), [0, 2], 0), ((3, 4, 5), None, 1), ((6, 7), [-1], 0),
                ((2, 1, 3), [1], 1)]


@pytest.mark.parametrize("op", ["ReduceLogSumExp", "ReduceLogSum"])
@pytest.mark.parametrize("place", ["input", "intermediate", "shared"])
@pytest.mark.parametrize("shape,axes,keepdims", REDUCE_CASES)
@pytest.mark.parametrize("special", [False, True])
def test_log_reductions_bits_in_exact_mode(op, place, shape, axes, keepdims, special):
    attrs = {"keepdims": keepdims} | ({} if axes is None else {"axes": axes})
    model = _model(op, 13, shape, place, **attrs)
    x = _feed(shape, 3, special, 32 if op == "ReduceLogSumExp" else 4)
    if op == "ReduceLogSum":
        x = np.abs(x) if place == "input" else -np.abs(x)   # sums > 0 where the op reads
    src = x if place == "input" else -x
    oracle = log_sum_exp_oracle if op == "ReduceLogSumExp" else log_sum_oracle
    want = oracle(src, axes, bool(keepdims))
    digests = set()
    for what, out in _everywhere(model, x, "exact"):
        np.testing.assert_array_equal(out["y"].view(np.uint32), want.view(np.uint32), err_msg=what)
        _check_other_outputs(out, x, what)
        digests.add(out["y"].tobytes())
    assert len(digests) == 1
    for what, out in _everywhere(model, x, "fast"):   # fast mode's exp and log: close, not bits
        np.testing.assert_allclose(out["y"], want, rtol=2e-6, atol=1e-6, err_msg=what)


@pytest.mark.parametrize("op", ["ReduceLogSumExp", "ReduceLogSum"])
@pytest.mark.parametrize("opset", [13, 18])
@pytest.mark.parametrize("shape,axes,keepdims", REDUCE_CASES)
def test_log_reductions_against_onnx_runtime_and_reference(op, opset, shape, axes, keepdims):
    x = np.abs(_feed(shape, 9, False)) + (0 if op == "ReduceLogSum" else -2)
    if opset >= 18 and axes is not None:   # axes became an input
        g = helper.make_graph(
            [helper.make_node(op, ["x", "axes"], ["y"], keepdims=keepdims)], "g",
            [helper.make_tensor_value_info("x", F, list(shape))], [helper.make_tensor_value_info("y", F, None)],
            [helper.make_tensor("axes", TP.INT64, [len(axes)], axes)])
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
        m.ir_version = 8
        model = m.SerializeToString()
    else:
        model = _model(op, opset, shape, "input", keepdims=keepdims, **({} if axes is None else {"axes": axes}))
    want = ReferenceEvaluator(onnx.load_from_string(model)).run(None, {"x": x})[0]
    np.testing.assert_allclose(ort.InferenceSession(model).run(None, {"x": x})[0], want, rtol=1e-5)
    for mode in ("exact", "fast"):
        np.testing.assert_allclose(so.load(model, mode=mode).run({"x": x})["y"], want, rtol=1e-5, atol=1e-6)


def test_log_sum_exp_infinities_and_empty_rows():
    x = np.array([[np.inf, -np.inf, 1, 2], [-np.inf] * 4, [np.nan, 1, 2, 3], [3e38, 3e38, 1, 1],
                  [100, 100, 100, 100]], np.float32)
    model = _model("ReduceLogSumExp", 13, x.shape, "input", axes=[1], keepdims=0)
    got = so.load(model, mode="exact").run({"x": x})["y"]
    # +inf, -inf (log(0): onnx.reference gives NaN for these two), NaN, 3e38 (no overflow)
    assert got[0] == np.inf and got[1] == -np.inf and np.isnan(got[2])
    assert got[3] == np.float32(3e38) and got[4] == np.float32(100 + np.log(4.0))
    np.testing.assert_array_equal(got, ort.InferenceSession(model).run(None, {"x": x})[0])
    empty = _model("ReduceLogSumExp", 13, (2, 0), "input", axes=[1], keepdims=0)
    np.testing.assert_array_equal(so.load(empty).run({"x": np.zeros((2, 0), np.float32)})["y"],
                                  [-np.inf, -np.inf])


def test_log_reductions_refuse_integers():
    g = helper.make_graph([helper.make_node("ReduceLogSumExp", ["x"], ["y"])], "g",
                          [helper.make_tensor_value_info("x", TP.INT64, [2, 3])],
                          [helper.make_tensor_value_info("y", TP.INT64, None)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    with pytest.raises(TypeError, match="ReduceLogSumExp on integers"):
        so.load(m.SerializeToString()).run({"x": np.ones((2, 3), np.int64)})
