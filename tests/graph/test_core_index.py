"""The C graph runtime's index operators (GatherElements, GatherND,
ScatterElements, Scatter, ScatterND, TopK, NonMaxSuppression, OneHot,
NonZero, Trilu; csrc/graph/ops/index/), Einsum, and the recurrent layers
LSTM and GRU (csrc/graph/ops/rnn/) against the Python runner's recorded outcomes (python_runner_record), bit
for bit
in both modes, with the same dtypes and shapes: every integer type,
negative indices, repeated scatter indices (the last update wins), TopK's
order of ties, NaN and -0, NonMaxSuppression's thresholds and center boxes,
NonZero on NaN and -0, Einsum's forms, data-dependent output shapes (inputs
known only at run), LSTM/GRU directions and layouts; and the errors (same
exception type, close text). ONNX Runtime checks the values where it
supports the case."""
from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto as TP  # noqa: E402
from onnx import helper, numpy_helper  # noqa: E402

import samebits  # noqa: E402
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

RNG = np.random.default_rng(777)
RESEED_RNG_PER_TEST = True   # conftest: per-test inputs, for python_runner_record
F = TP.FLOAT
I64 = TP.INT64
INT_TYPES = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]
ALL_TYPES = [np.float32] + INT_TYPES + [np.bool_]


def rand(*shape, scale=1.0):
    return (RNG.standard_normal(shape) * scale).astype(np.float32)


def values_of(dtype, shape):
    """Values of every kind the type holds: extremes, zero, negatives."""
    if dtype == np.float32:
        x = rand(*shape)
        flat = x.reshape(-1)
        special = np.array([0x7FC00001, 0x80000000, 0xFFC12345, 0x7F800000, 0x00000001, 0],
                           np.uint32).view(np.float32)
        flat[:min(flat.size, special.size)] = special[:flat.size]
        return x
    if dtype == np.bool_:
        return RNG.integers(0, 2, shape).astype(np.bool_)
    info = np.iinfo(dtype)
    x = RNG.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)
    flat = x.reshape(-1)
    extremes = np.array([info.min, info.max, 0], dtype=dtype)
    flat[:min(flat.size, 3)] = extremes[:flat.size]
    return x


def tt(a) -> int:
    return helper.np_dtype_to_tensor_dtype(np.asarray(a).dtype)


def graph(nodes, inputs: dict, outputs: dict, inits: dict | None = None, opset: int = 17) -> bytes:
    """inputs: name -> example array (fed); outputs: name -> elem type; inits: name -> array."""
    g = helper.make_graph(
        nodes, "t",
        # (inputs declared without a shape: tests feed other shapes than the example's)
        [helper.make_tensor_value_info(n, tt(v), None) for n, v in inputs.items()],
        [helper.make_tensor_value_info(n, t, None) for n, t in outputs.items()],
        [numpy_helper.from_array(np.asarray(v), n) for n, v in (inits or {}).items()])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m.SerializeToString()


def one(op, inputs: dict, attrs=None, inits=None, out=(F,), opset=17, order=None) -> bytes:
    """One node over graph inputs then initializers (or `order`, "" for omitted)."""
    inits = inits or {}
    names = order if order is not None else list(inputs) + list(inits)
    outs = [f"y{i}" for i in range(len(out))]
    node = helper.make_node(op, names, outs, **(attrs or {}))
    return graph([node], inputs, dict(zip(outs, out)), inits, opset)


def bits_of(a):
    a = np.ascontiguousarray(a)
    return a.view(np.uint32) if a.dtype == np.float32 else a


def same(got, want, what):
    assert got.dtype == want.dtype, (what, got.dtype, want.dtype)
    assert got.shape == want.shape, (what, got.shape, want.shape)
    assert np.array_equal(bits_of(got), bits_of(want)), what


def check(data: bytes, feeds: dict, use_ort=True, rtol=1e-5, atol=1e-6):
    """The C runtime (exact at 1 and 2 threads, fast) against the Python
    runner's recorded outcomes in both modes, bit for bit; ONNX Runtime
    within tolerance where it runs the model. Returns the exact outputs (a
    dict)."""
    results = {}
    for mode in ("exact", "fast"):
        c = so.load(data, mode=mode, threads=1 if mode == "exact" else None).run(feeds)
        python_runner_record.check(data, feeds, mode, c)
        results[mode] = c
    c2 = so.load(data, mode="exact", threads=2).run(feeds)
    for name in c2:
        same(c2[name], results["exact"][name], f"threads {name}")
    if use_ort and ort is not None:
        try:
            sess = ort.InferenceSession(data, providers=["CPUExecutionProvider"])
            want = sess.run(None, feeds)
        except Exception as e:   # a type or form ONNX Runtime does not implement
            if use_ort == "require":
                raise
            want = None
            print("onnxruntime skipped:", str(e)[:200])
        if want is not None:
            for name, w in zip(results["exact"], want):
                for mode in ("exact", "fast"):
                    got = results[mode][name]
                    assert got.shape == w.shape, (name, got.shape, w.shape)
                    if w.dtype.kind in "iub":
                        assert np.array_equal(got, w), (mode, name)
                    else:
                        assert np.array_equal(np.isnan(got), np.isnan(w)), (mode, name)
                        np.testing.assert_allclose(got, w, rtol=rtol, atol=atol)
    return results["exact"]


def errors(data: bytes, feeds: dict, exc, match: str, at_load=False):
    """The exception type, with text matching `match`."""
    with pytest.raises(exc, match=match):
        sess = so.load(data, mode="exact")
        if not at_load:
            sess.run(feeds)


# ---- GatherElements, ScatterElements, Scatter -------------------------------------------

@pytest.mark.parametrize("dtype", ALL_TYPES, ids=lambda t: np.dtype(t).name)
@pytest.mark.parametrize("axis", [0, -1, 1])
def test_gather_elements_every_type(dtype, axis):
    x = values_of(dtype, (4, 5, 3))
    shape = [3, 4, 2]
    idx = RNG.integers(-x.shape[axis], x.shape[axis], size=shape)
    check(one("GatherElements", {"x": x, "i": idx}, {"axis": axis}, out=(tt(x),)), {"x": x, "i": idx})


@pytest.mark.parametrize("itype", INT_TYPES + [np.bool_], ids=lambda t: np.dtype(t).name)
def test_gather_elements_index_types(itype):
    x = values_of(np.float32, (3, 4))
    if itype == np.bool_:
        idx = RNG.integers(0, 2, (3, 4)).astype(np.bool_)
    else:
        lo = 0 if np.iinfo(itype).min == 0 else -3
        idx = RNG.integers(lo, 3, (3, 4)).astype(itype)
    check(one("GatherElements", {"x": x}, {"axis": 0}, inits={"i": idx}), {"x": x},
          use_ort=itype in (np.int32, np.int64))


def test_gather_elements_empty_and_index_errors():
    x = rand(2, 3)
    check(one("GatherElements", {"x": x, "i": np.zeros((0, 3), np.int64)}, {"axis": 0}),
          {"x": x, "i": np.zeros((0, 3), np.int64)}, use_ort=False)
    data = one("GatherElements", {"x": x, "i": np.array([[0, -3, 1]])}, {"axis": 1})
    errors(data, {"x": x, "i": np.array([[0, -4, 1]])}, IndexError, r"index -4 is out of range")
    data = one("GatherElements", {"x": x, "i": np.array([[0, 1, 1]], np.uint64)}, {"axis": 1})
    errors(data, {"x": x, "i": np.array([[0, 2**63 + 5, 1]], np.uint64)}, IndexError,
           r"index 9223372036854775813 is out of range for a dimension of size 3")
    data = one("GatherElements", {"x": x, "i": np.zeros((2, 3, 1), np.int64)})
    errors(data, {"x": x, "i": np.zeros((2, 3, 1), np.int64)}, ValueError, "must have the rank")
    data = one("GatherElements", {"x": x, "i": np.zeros((2, 4), np.int64)}, {"axis": 0})
    errors(data, {"x": x, "i": np.zeros((2, 4), np.int64)}, ValueError, "do not fit the data")
    data = one("GatherElements", {"x": x, "i": np.zeros((2, 3), np.int64)}, {"axis": 2})
    errors(data, {"x": x, "i": np.zeros((2, 3), np.int64)}, ValueError, "axis 2 is out of range")
    data = one("GatherElements", {"x": x, "i": np.zeros((2, 3), np.float32)}, {"axis": 0})
    errors(data, {"x": x, "i": np.zeros((2, 3), np.float32)}, TypeError,
           "input indices must be an integer tensor")


@pytest.mark.parametrize("dtype", ALL_TYPES, ids=lambda t: np.dtype(t).name)
def test_scatter_elements_every_type_and_last_update_wins(dtype):
    data = values_of(dtype, (3, 5))
    upd = values_of(dtype, (3, 4))
    idx = np.array([[1, 0, 4, -5], [0, 2, -1, 3], [3, 4, 1, 2]])   # 1 and -5 (= 0) differ
    check(one("ScatterElements", {"d": data, "i": idx, "u": upd}, {"axis": 1}, out=(tt(data),)),
          {"d": data, "i": idx, "u": upd})
    dup = np.array([[1, 1, 1, 4], [0, 0, 2, 2], [3, 3, 3, 3]])
    got = check(one("ScatterElements", {"d": data, "i": dup, "u": upd}, {"axis": 1},
                    out=(tt(data),)), {"d": data, "i": dup, "u": upd}, use_ort=False)["y0"]
    want = data.copy()
    for r in range(3):
        for c in range(4):
            want[r, dup[r, c]] = upd[r, c]
    same(got, want, "last wins")


def test_scatter_opset9_and_axis0():
    data, upd = rand(4, 3), rand(2, 3)
    idx = np.array([[1, 0, 2], [3, 2, 0]])
    check(one("Scatter", {"d": data, "i": idx, "u": upd}, {"axis": 0}, opset=9),
          {"d": data, "i": idx, "u": upd})
    check(one("ScatterElements", {"d": data}, {"axis": -2}, inits={"i": idx, "u": upd}),
          {"d": data})


def test_scatter_elements_errors():
    data, upd = rand(3, 5), rand(3, 3)
    idx = np.zeros((3, 3), np.int64)
    bad = one("ScatterElements", {"d": data, "i": idx, "u": rand(3, 2)}, {"axis": 1})
    errors(bad, {"d": data, "i": idx, "u": rand(3, 2)}, ValueError, "must have the shape of indices")
    oob = one("ScatterElements", {"d": data, "i": idx, "u": upd}, {"axis": 1})
    errors(oob, {"d": data, "i": np.full((3, 3), 5), "u": upd}, IndexError, "index 5 is out of range")
    mixed = one("ScatterElements", {"d": data, "i": idx, "u": upd.astype(np.int64)}, {"axis": 1})
    errors(mixed, {"d": data, "i": idx, "u": upd.astype(np.int64)}, TypeError,
           "both be float32 or both integers")
    red = one("ScatterElements", {"d": data, "i": idx, "u": upd}, {"axis": 1, "reduction": "sum"},
              opset=16)
    errors(red, {}, UnsupportedModelError, r"reduction 'sum' is not none, add, mul, max or min",
           at_load=True)


# ---- GatherND, ScatterND ------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ALL_TYPES, ids=lambda t: np.dtype(t).name)
@pytest.mark.parametrize("batch_dims,xshape,ishape", [
    (0, (4, 5, 3), (2, 1)), (0, (4, 5, 3), (3, 2)), (0, (4, 5, 3), (2, 2, 3)), (0, (4, 5), (3, 0)),
    (1, (2, 5, 3), (2, 4, 1)), (1, (2, 5, 3), (2, 2)), (2, (2, 3, 4, 5), (2, 3, 1, 2)),
])
def test_gather_nd(dtype, batch_dims, xshape, ishape):
    m = ishape[-1]
    bounds = xshape[batch_dims:batch_dims + m]
    idx = np.stack([RNG.integers(-b, b, size=ishape[:-1]) for b in bounds], axis=-1) if m else \
        np.zeros(ishape, np.int64)
    x = values_of(dtype, xshape)
    check(one("GatherND", {"x": x, "i": idx.astype(np.int64)}, {"batch_dims": batch_dims},
              out=(tt(x),)), {"x": x, "i": idx.astype(np.int64)}, use_ort=m > 0)


@pytest.mark.parametrize("dtype", ALL_TYPES, ids=lambda t: np.dtype(t).name)
def test_scatter_nd_every_type_and_repeats(dtype):
    data = values_of(dtype, (5, 3))
    upd = values_of(dtype, (3, 3))
    check(one("ScatterND", {"d": data, "i": np.array([[4], [0], [-2]]), "u": upd}, out=(tt(data),)),
          {"d": data, "i": np.array([[4], [0], [-2]]), "u": upd})
    elem = values_of(dtype, (4,))
    idx = np.array([[1, 2], [0, 0], [1, 2], [-4, -3]])   # (1, 2) twice: the last update wins
    got = check(one("ScatterND", {"d": data, "i": idx, "u": elem}, out=(tt(data),)),
                {"d": data, "i": idx, "u": elem}, use_ort=False)["y0"]
    want = data.copy()
    for (r, c), v in zip(idx, elem):
        want[r, c] = v
    same(got, want, "last wins")


def test_scatter_nd_as_exported_and_errors():
    data = rand(1, 3, 4, 9)
    grid = np.stack(np.meshgrid(*[np.arange(s) for s in (1, 3, 4)], indexing="ij"), -1)
    idx = np.concatenate([np.broadcast_to(grid[..., None, :], (1, 3, 4, 2, 3)),
                          np.broadcast_to(np.arange(2)[:, None], (1, 3, 4, 2, 1))], -1)
    check(one("ScatterND", {"d": data}, inits={"i": idx.astype(np.int64), "u": rand(1, 3, 4, 2)}),
          {"d": data})
    d, i = rand(5, 3), np.array([[4], [0]])
    bad = one("ScatterND", {"d": d, "i": i, "u": rand(2, 2)})
    errors(bad, {"d": d, "i": i, "u": rand(2, 2)}, ValueError,
           r"updates \(2, 2\) must have shape \(2, 3\) \(indices \(2, 1\), data \(5, 3\)\)")
    deep = one("ScatterND", {"d": d, "i": np.zeros((1, 3), np.int64), "u": rand(1)})
    errors(deep, {"d": d, "i": np.zeros((1, 3), np.int64), "u": rand(1)}, ValueError,
           "exceed the data's rank 2")
    gnd = one("GatherND", {"x": d, "i": i}, {"batch_dims": 2})
    errors(gnd, {"x": d, "i": i}, ValueError, "batch_dims=2 needs data")
    gnd = one("GatherND", {"x": rand(2, 3), "i": np.zeros((3, 1), np.int64)}, {"batch_dims": 1})
    errors(gnd, {"x": rand(2, 3), "i": np.zeros((3, 1), np.int64)}, ValueError, "batch dimensions")
    neg = one("GatherND", {"x": d, "i": i}, {"batch_dims": -1})
    errors(neg, {}, UnsupportedModelError, "batch_dims=-1 must be >= 0", at_load=True)


# ---- TopK ------------------------------------------------------------------------------------

@pytest.mark.parametrize("largest", [1, 0])
@pytest.mark.parametrize("axis,k", [(-1, 3), (0, 2), (1, 5), (1, 0)])
def test_topk_float_ties_nan_and_zeros(largest, axis, k):
    x = rand(4, 6, 7)
    x[0, :, 0] = 1.5                                          # ties: the lower index first
    x[1, 2, :] = [2.0, -0.0, 0.0, 2.0, 2.0, 1.0, -0.0]        # -0 equals +0
    x[2, 3, :] = np.array([0x7FC00001, 0xFFC00000, 0x3F800000, 0x7F800000, 0xFF800000, 0x7FA00000,
                           0x80000000], np.uint32).view(np.float32)   # NaNs above every number
    x[3, :, 1] = np.nan
    x[3, 0, :] = -np.inf
    data = one("TopK", {"x": x}, {"axis": axis, "largest": largest}, inits={"k": np.array([k])},
               out=(F, I64))
    check(data, {"x": x}, use_ort=False)   # (ONNX Runtime orders NaN otherwise)
    clean = np.where(np.isnan(x), np.float32(0.5), x)
    check(data, {"x": clean})


@pytest.mark.parametrize("dtype", INT_TYPES + [np.bool_], ids=lambda t: np.dtype(t).name)
@pytest.mark.parametrize("largest", [1, 0])
def test_topk_every_integer_type(dtype, largest):
    x = values_of(dtype, (3, 9))
    x[1, :4] = x[1, 4]                                        # ties
    check(one("TopK", {"x": x}, {"largest": largest}, inits={"k": np.array([4])}, out=(tt(x), I64)),
          {"x": x}, use_ort=dtype in (np.int32, np.int64))


def test_topk_k_known_only_at_run_and_opset9():
    x = rand(3, 8)
    data = one("TopK", {"x": x, "k": np.array([3])}, {"axis": 1}, out=(F, I64))
    for k in (0, 3, 8):
        check(data, {"x": x, "k": np.array([k])})
    # the runtime plans the node after TopK for the shapes the run gives
    nodes = [helper.make_node("TopK", ["x", "k"], ["v", "i"]),
             helper.make_node("Relu", ["v"], ["r"])]
    data = graph(nodes, {"x": x, "k": np.array([2])}, {"r": F, "i": I64})
    for k in (1, 5):
        check(data, {"x": x, "k": np.array([k])})
    check(one("TopK", {"x": x}, {"k": 3, "axis": 0}, out=(F, I64), opset=9), {"x": x})
    check(one("TopK", {"x": x}, {"largest": 0}, inits={"k": np.array(2, np.int32).reshape(1, 1)},
              out=(F, I64)), {"x": x}, use_ort=False)


def test_topk_errors():
    x = rand(3, 8)
    data = one("TopK", {"x": x, "k": np.array([3])}, {"axis": 1}, out=(F, I64))
    errors(data, {"x": x, "k": np.array([9])}, ValueError, r"K=9 is outside 0..8 \(axis 1 of \(3, 8\)\)")
    errors(data, {"x": x, "k": np.array([-1])}, ValueError, "K=-1 is outside")
    errors(data, {"x": x, "k": np.array([1, 2])}, ValueError, r"K must hold one value, got shape \(2,\)")
    data = one("TopK", {"x": x, "k": np.array([3])}, {"axis": 2}, out=(F, I64))
    errors(data, {"x": x, "k": np.array([3])}, ValueError, "axis 2 is out of range for rank 2")
    data = one("TopK", {"x": x}, {}, out=(F, I64), opset=9)
    errors(data, {}, UnsupportedModelError, "attribute 'k' is required", at_load=True)


# ---- NonMaxSuppression ---------------------------------------------------------------------

def _boxes(center, batches, n, seed):
    rng = np.random.default_rng(seed)
    if center:
        return np.concatenate([rng.uniform(0, 10, (batches, n, 2)),
                               rng.uniform(0.5, 4, (batches, n, 2))], -1).astype(np.float32)
    return rng.uniform(0, 10, (batches, n, 4)).astype(np.float32)


@pytest.mark.parametrize("center", [0, 1])
@pytest.mark.parametrize("limit,iou,score", [(5, 0.5, None), (3, 0.3, 0.2), (100, 0.0, 0.0),
                                             (0, 0.5, None), (None, None, None), (2, 1.0, -1.0),
                                             (40, 0.45, 0.6)])
def test_nms_thresholds_and_center_boxes(center, limit, iou, score):
    n = 40
    boxes = _boxes(center, 2, n, center * 7 + (limit or 0))
    boxes[0, 5] = boxes[0, 4]                              # IoU exactly 1
    boxes[1, 3] = boxes[1, 2][[2, 3, 0, 1]] if not center else boxes[1, 2]   # flipped corners
    scores = np.random.default_rng(5).uniform(0, 1, (2, 3, n)).astype(np.float32)
    scores[1, 0, 7] = scores[1, 0, 9]                      # a tie: the lower index first
    scores[0, 1, 3] = np.nan                               # never a candidate
    scores[0, 2, 1] = -0.0
    scores[0, 2, 2] = 0.0
    inits, order = {}, ["b", "s"]
    for name, v, dtype in (("m", limit, np.int64), ("iou", iou, np.float32), ("st", score, np.float32)):
        if v is None:
            if name == "m" and (iou is not None or score is not None):
                order.append("")
            continue
        inits[name] = np.array([v], dtype)
        order.append(name)
    while order and order[-1] == "":
        order.pop()
    data = one("NonMaxSuppression", {"b": boxes, "s": scores}, {"center_point_box": center},
               inits=inits, order=order, out=(I64,))
    check(data, {"b": boxes, "s": scores}, use_ort=False if np.isnan(scores).any() else True)
    clean = np.nan_to_num(scores, nan=0.25)
    check(data, {"b": boxes, "s": clean})


def test_nms_inputs_known_at_run_and_a_node_after():
    boxes, scores = _boxes(0, 1, 30, 3), RNG.uniform(0, 1, (1, 2, 30)).astype(np.float32)
    nodes = [helper.make_node("NonMaxSuppression", ["b", "s", "m", "iou", "st"], ["sel"]),
             helper.make_node("Shape", ["sel"], ["shape"])]
    data = graph(nodes, {"b": boxes, "s": scores, "m": np.array([4]), "iou": np.array([0.4], np.float32),
                         "st": np.array([0.3], np.float32)}, {"sel": I64, "shape": I64})
    for m, iou, st in ((4, 0.4, 0.3), (30, 0.1, 0.0), (0, 0.5, 0.5), (2, 0.9, 2.0)):
        check(data, {"b": boxes, "s": scores, "m": np.array([m]), "iou": np.array([iou], np.float32),
                     "st": np.array([st], np.float32)})
    errors(data, {"b": boxes, "s": scores, "m": np.array([4]), "iou": np.array([1.5], np.float32),
                  "st": np.array([0.3], np.float32)}, ValueError, r"iou_threshold 1.5 is outside \[0, 1\]")
    errors(data, {"b": boxes, "s": scores, "m": np.array([4]), "iou": np.array([1.1], np.float32),
                  "st": np.array([0.3], np.float32)}, ValueError, r"iou_threshold 1.100000023841858 is")
    errors(data, {"b": boxes, "s": scores, "m": np.array([4, 5]), "iou": np.array([0.5], np.float32),
                  "st": np.array([0.3], np.float32)}, ValueError,
           r"max_output_boxes_per_class must hold one value, got shape \(2,\)")
    errors(data, {"b": boxes, "s": scores[:, :, :5], "m": np.array([4]), "iou": np.array([0.5], np.float32),
                  "st": np.array([0.3], np.float32)}, ValueError, "must be \\(batches, boxes, 4\\)")
    bad = one("NonMaxSuppression", {"b": boxes, "s": scores}, {"center_point_box": 2}, out=(I64,))
    errors(bad, {}, UnsupportedModelError, "center_point_box=2 must be 0 or 1", at_load=True)


def test_nms_degenerate_boxes_and_integer_scalars():
    boxes = np.array([[[0, 0, 1, 1], [0, 0, 0, 1], [0.5, 0.5, 1.5, 1.5], [0, 0, 1, 1],
                       [1, 1, 0, 0], [np.inf, 0, 1, 1], [-0.0, 0, 1, 1e-30]]], np.float32)
    scores = np.array([[[0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3]]], np.float32)
    for iou in (0.0, 0.1, 0.99):
        data = one("NonMaxSuppression", {"b": boxes, "s": scores},
                   inits={"m": np.array([7], np.int32), "iou": np.array([iou], np.float32),
                          "st": np.array([0], np.int64)}, out=(I64,))
        check(data, {"b": boxes, "s": scores}, use_ort=False)


# ---- OneHot, NonZero, Trilu ------------------------------------------------------------------

@pytest.mark.parametrize("itype", INT_TYPES + [np.float32], ids=lambda t: np.dtype(t).name)
@pytest.mark.parametrize("axis", [-1, 0, 1])
def test_one_hot_index_types(itype, axis):
    if itype == np.float32:
        idx = np.array([[1.7, -1.2, 4.9], [0.0, 7.5, -5.0]], np.float32)
    elif np.iinfo(itype).min == 0:
        idx = np.array([[1, 3, 4], [0, 7, np.iinfo(itype).max]], itype)
    else:
        idx = np.array([[1, -1, 4], [0, 7, -5]], itype)
    for values in (np.array([-0.0, 2.5], np.float32), np.array([3, -9], np.int64),
                   np.array([0, 1], np.uint8), np.array([False, True])):
        data = one("OneHot", {"i": idx}, {"axis": axis},
                   inits={"d": np.array([5]), "v": values}, out=(tt(values),), opset=11)
        check(data, {"i": idx}, use_ort=itype in (np.int64, np.int32, np.float32) and
              values.dtype in (np.float32, np.int64))


def test_one_hot_depth_at_run_and_errors():
    idx = np.array([0, 2, -1, 9])
    data = one("OneHot", {"i": idx, "d": np.array([3], np.int64)}, {},
               inits={"v": np.array([0.0, 1.0], np.float32)}, opset=11)
    for depth in (1, 3, 10):
        check(data, {"i": idx, "d": np.array([depth])})
    check(one("OneHot", {"i": idx}, {}, inits={"d": np.array(4.9, np.float32),
                                               "v": np.array([1.0, 2.0], np.float32)}, opset=11), {"i": idx},
          use_ort=False)
    errors(data, {"i": idx, "d": np.array([0])}, ValueError, "depth=0 must be positive")
    errors(data, {"i": idx, "d": np.array([2, 3])}, ValueError, "depth must hold one value")
    fdata = one("OneHot", {"i": np.array([0.0, 1.0], np.float32)}, {},
                inits={"d": np.array([3]), "v": np.array([0.0, 1.0], np.float32)}, opset=11)
    errors(fdata, {"i": np.array([0.0, np.inf], np.float32)}, ValueError, "indices must be finite")
    vdata = one("OneHot", {"i": idx}, {}, inits={"d": np.array([3]), "v": np.array([0.0, 1.0, 2.0], np.float32)},
                opset=11)
    errors(vdata, {"i": idx}, ValueError, r"values must hold \[off, on\], got shape \(3,\)")
    adata = one("OneHot", {"i": idx}, {"axis": 2}, inits={"d": np.array([3]),
                                                          "v": np.array([0.0, 1.0], np.float32)}, opset=11)
    errors(adata, {"i": idx}, ValueError, "axis 2 is out of range for rank 2")


@pytest.mark.parametrize("dtype", ALL_TYPES, ids=lambda t: np.dtype(t).name)
def test_nonzero_every_type(dtype):
    x = values_of(dtype, (3, 4, 5))
    x.reshape(-1)[::3] = 0
    check(one("NonZero", {"x": x}, out=(I64,)), {"x": x}, use_ort=dtype != np.uint64 and dtype != np.uint16)


def test_nonzero_floats_nan_zero_and_shapes():
    x = np.array([0x00000000, 0x80000000, 0x7FC00000, 0xFFC00001, 0x00000001, 0x80000001,
                  0x3F800000, 0x7F800000], np.uint32).view(np.float32).reshape(2, 4)
    got = check(one("NonZero", {"x": x}, out=(I64,)), {"x": x}, use_ort=False)["y0"]
    assert got.tolist() == [[0, 0, 1, 1, 1, 1], [2, 3, 0, 1, 2, 3]]
    for shape in [(0, 3), (7,), (2, 1, 3, 1)]:
        x = values_of(np.float32, shape)
        check(one("NonZero", {"x": x}, out=(I64,)), {"x": x})
    # a 0-d input (a Reshape of a graph input): shape (1, count)
    for v in (0.0, -0.0, 2.0):
        nodes = [helper.make_node("Reshape", ["x", "s"], ["x0"]), helper.make_node("NonZero", ["x0"], ["y"])]
        data = graph(nodes, {"x": np.array([v], np.float32)}, {"y": I64}, {"s": np.zeros(0, np.int64)})
        check(data, {"x": np.array([v], np.float32)})
    # the plan after NonZero follows the count the run gives
    nodes = [helper.make_node("NonZero", ["x"], ["nz"]), helper.make_node("Shape", ["nz"], ["s"])]
    data = graph(nodes, {"x": rand(3, 3)}, {"nz": I64, "s": I64})
    for frac in (0.0, 0.5, 1.0):
        x = rand(3, 3)
        x[RNG.uniform(size=x.shape) >= frac] = 0
        check(data, {"x": x})


@pytest.mark.parametrize("dtype", ALL_TYPES, ids=lambda t: np.dtype(t).name)
@pytest.mark.parametrize("upper", [0, 1])
@pytest.mark.parametrize("k", [None, 0, 2, -3, 100, -100])
def test_trilu(dtype, upper, k):
    x = values_of(dtype, (2, 4, 5))
    inits = {} if k is None else {"k": np.array(k, np.int64)}
    check(one("Trilu", {"x": x}, {"upper": upper}, inits=inits, out=(tt(x),), opset=14), {"x": x},
          use_ort=dtype in (np.float32, np.int64))


def test_trilu_k_input_types_and_errors():
    x = rand(3, 3)
    for kt in INT_TYPES:
        check(one("Trilu", {"x": x}, {}, inits={"k": np.array(1, kt)}, opset=14), {"x": x}, use_ort=False)
    check(one("Trilu", {"x": x}, {}, inits={"k": np.array(2**63 + 1, np.uint64)}, opset=14), {"x": x},
          use_ort=False)
    check(one("Trilu", {"x": rand(0, 3)}, {}, opset=14), {"x": rand(0, 3)})
    errors(one("Trilu", {"x": rand(3)}, {}, opset=14), {"x": rand(3)}, ValueError,
           r"input must have at least 2 dimensions, got \(3,\)")
    errors(one("Trilu", {"x": x}, {}, inits={"k": np.array([1, 2])}, opset=14), {"x": x}, ValueError,
           r"k must hold one value, got shape \(2,\)")


# ---- Einsum -----------------------------------------------------------------------------------

@pytest.mark.parametrize("equation,shapes", [
    ("bij,bjk->bik", [(3, 4, 5), (3, 5, 6)]),
    ("bij,bjk->bik", [(1, 4, 5), (3, 5, 6)]),           # a batch axis broadcast
    ("bhid,bhjd->bhij", [(2, 3, 5, 4), (2, 3, 7, 4)]),
    ("bhij,bhjd->bhid", [(2, 3, 5, 7), (2, 3, 7, 4)]),
    ("ij->ji", [(3, 5)]),
    ("abc->cab", [(2, 3, 4)]),
    ("...ij->...ji", [(2, 3, 4, 5)]),
    ("...ij,...jk->...ik", [(2, 3, 4), (1, 4, 5)]),
    ("...ij,...jk->...ik", [(2, 2, 3, 4), (4, 5)]),
    ("i,j->ij", [(4,), (5,)]),
    ("i,i->", [(6,), (6,)]),
    ("i,i", [(6,), (6,)]),
    ("bnd,d->bn", [(2, 3, 8), (8,)]),
    ("ij,jk", [(3, 4), (4, 5)]),
    ("ba,ac", [(3, 4), (4, 5)]),
    ("nct,ncp->ntp", [(2, 4, 5), (2, 4, 3)]),
    ("ijk,jkl->il", [(2, 3, 4), (3, 4, 5)]),           # two contracted letters
    ("ijk,kjl->li", [(2, 3, 4), (4, 3, 5)]),
    ("bij,bkj->bki", [(2, 3, 4), (2, 5, 4)]),          # output permuted
    ("IJ,JK->KI", [(3, 4), (4, 5)]),
    ("bi, bj -> bij", [(3, 4), (3, 5)]),
    ("abcd,cdef->abef", [(2, 1, 3, 4), (3, 4, 2, 2)]),
])
def test_einsum_forms(equation, shapes):
    inputs = {f"x{i}": rand(*s) for i, s in enumerate(shapes)}
    check(one("Einsum", inputs, {"equation": equation}, opset=12), inputs, rtol=1e-5, atol=1e-5)


def test_einsum_specials_and_exact_product():
    a = np.array([[np.inf, 0.0], [np.nan, -0.0], [1e-39, 3e38]], np.float32)
    b = np.array([[0.0, 1.0, -1.0], [3e38, -0.0, 2.0]], np.float32)
    check(one("Einsum", {"a": a, "b": b}, {"equation": "ij,jk->ik"}, opset=12), {"a": a, "b": b}, use_ort=False)
    a, b = rand(2, 3, 5, 4), rand(2, 3, 7, 4)
    got = so.load(one("Einsum", {"a": a, "b": b}, {"equation": "bhid,bhjd->bhij"}, opset=12),
                     mode="exact").run({"a": a, "b": b})["y0"]
    want = samebits.matmul(a, np.ascontiguousarray(b.transpose(0, 1, 3, 2)), mode="exact")
    same(got, want, "matmul")


def test_einsum_errors():
    two = {"a": rand(3, 3), "b": rand(3, 3)}
    for eq, match in (("ii->i", "a repeated letter in 'ii' \\(a diagonal\\)"),
                      ("ij,jk,kl->il", "3 operands"), ("i1,j->ij", "is not letters")):
        names = ["a", "b", "c"][:eq.split("->")[0].count(",") + 1]
        data = one("Einsum", {n: rand(3, 3) for n in names}, {"equation": eq}, opset=12)
        errors(data, {}, UnsupportedModelError, match, at_load=True)
    errors(one("Einsum", {"a": rand(3, 3)}, {"equation": "ij->i"}, opset=12), {"a": rand(3, 3)}, ValueError,
           "ij -> i sums one")
    errors(one("Einsum", two, {"equation": "ij,jk->i"}, opset=12), two, ValueError,
           "letter 'k' is summed out of one operand alone")
    errors(one("Einsum", two, {"equation": "ij,jk->iz"}, opset=12), two, ValueError,
           "output letter 'z' is in no input")
    errors(one("Einsum", two, {"equation": "ijk,jk->ik"}, opset=12), two, ValueError,
           "subscript 'ijk' does not fit an operand of rank 2")
    bad = {"a": rand(3, 4), "b": rand(5, 2)}
    errors(one("Einsum", bad, {"equation": "ij,jk->ik"}, opset=12), bad, ValueError,
           "axis 'j' has sizes 4 and 5")
    ints = {"a": np.ones((3, 3), np.int64), "b": rand(3, 3)}
    errors(one("Einsum", ints, {"equation": "ij,jk->ik"}, opset=12), ints, TypeError,
           "input input 0 must be float32, got int64")
    errors(one("Einsum", {"a": rand(3, 3)}, {"equation": "ij,jk->ik"}, opset=12), {"a": rand(3, 3)},
           ValueError, "needs 2 inputs, got 1")


# ---- LSTM, GRU ------------------------------------------------------------------------------

SEQ, BATCH, INPUT, H = 4, 3, 5, 6


def rnn(kind, direction="forward", bias=True, initial=False, layout=0, opset=14, seq_lens=False,
        outs=None, batch=BATCH, **attrs):
    gates = {"LSTM": 4, "GRU": 3}[kind]
    dirs = 2 if direction == "bidirectional" else 1
    inits = {"W": rand(dirs, gates * H, INPUT, scale=0.5), "R": rand(dirs, gates * H, H, scale=0.5)}
    names = ["X", "W", "R", "B" if bias else ""]
    if bias:
        inits["B"] = rand(dirs, 2 * gates * H, scale=0.5)
    feeds = {"X": rand(*((SEQ, batch, INPUT) if layout == 0 else (batch, SEQ, INPUT)))}
    names.append("L" if seq_lens else "")
    if seq_lens:
        inits["L"] = np.full(batch, SEQ, np.int32)
    state = (dirs, batch, H) if layout == 0 else (batch, dirs, H)
    if initial:
        feeds["h0"] = rand(*state)
        names.append("h0")
        if kind == "LSTM":
            feeds["c0"] = rand(*state)
            names.append("c0")
    while names[-1] == "":
        names.pop()
    all_outs = ["Y", "Y_h"] + (["Y_c"] if kind == "LSTM" else [])
    outs = outs or all_outs
    node_outs = [o if o in outs else "" for o in all_outs]
    while node_outs[-1] == "":
        node_outs.pop()
    if opset >= 14:
        attrs["layout"] = layout
    node = helper.make_node(kind, names, node_outs, hidden_size=H, direction=direction, **attrs)
    return graph([node], feeds, {o: F for o in outs}, inits, opset), feeds


@pytest.mark.parametrize("kind", ["LSTM", "GRU"])
@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
@pytest.mark.parametrize("layout", [0, 1])
@pytest.mark.parametrize("bias,initial", [(True, True), (False, False)])
def test_rnn_directions_and_layouts(kind, direction, layout, bias, initial):
    data, feeds = rnn(kind, direction, bias, initial, layout)
    check(data, feeds, use_ort=layout == 0)


@pytest.mark.parametrize("reset_first", [0, 1])
@pytest.mark.parametrize("layout", [0, 1])
def test_gru_linear_before_reset(reset_first, layout):
    data, feeds = rnn("GRU", "bidirectional", initial=True, layout=layout, linear_before_reset=reset_first)
    check(data, feeds, use_ort=layout == 0)


@pytest.mark.parametrize("kind", ["LSTM", "GRU"])
def test_rnn_some_outputs_batch_one_and_lens(kind):
    for outs in (["Y_h"], ["Y"], ["Y_h", "Y"]):
        data, feeds = rnn(kind, "bidirectional", initial=True, outs=outs)
        check(data, feeds)
    data, feeds = rnn(kind, "reverse", batch=1, seq_lens=True)
    check(data, feeds)
    data, feeds = rnn(kind, opset=9)
    check(data, feeds)
    if kind == "LSTM":
        data, feeds = rnn(kind, "forward", outs=["Y_c"])
        check(data, feeds)


def test_rnn_special_values_keep_the_bits():
    data, feeds = rnn("LSTM", "bidirectional", initial=True)
    feeds["X"][0, 0, :3] = [np.nan, np.inf, -0.0]
    feeds["h0"][1, 2, 0] = -np.inf
    check(data, feeds, use_ort=False)
    data, feeds = rnn("GRU", "forward", initial=True, linear_before_reset=1)
    feeds["X"][1, 1, 1] = 1e30
    check(data, feeds, use_ort=False)


def test_rnn_errors():
    data, feeds = rnn("GRU", initial=True)
    errors(data, {**feeds, "X": rand(SEQ, BATCH, INPUT + 1)}, ValueError, "X has 6 features, W")
    errors(data, {**feeds, "X": rand(SEQ, BATCH)}, ValueError, r"X must be 3-D, got \(4, 3\)")
    errors(data, {**feeds, "X": rand(0, BATCH, INPUT)}, ValueError, r"empty input \(0, 3, 5\)")
    errors(data, {**feeds, "h0": rand(1, BATCH + 1, H)}, ValueError, r"initial_h \(1, 4, 6\) is not \(1, 3, 6\)")
    m = onnx.load_from_string(data)
    m.graph.input.append(helper.make_tensor_value_info("L", TP.INT64, [BATCH]))
    m.graph.node[0].input[4] = "L"
    lens = m.SerializeToString()
    check(lens, {**feeds, "L": np.full(BATCH, SEQ)}, use_ort=False)
    errors(lens, {**feeds, "L": np.array([SEQ, 2, SEQ])}, ValueError,
           r"sequence_lens \[4, 2, 4\] shorter than the 4 steps are not supported")
    for attrs, exc, match in (({"clip": 3.0}, UnsupportedModelError, "attribute 'clip' is not supported"),
                              ({"activations": ["Tanh", "Tanh"]}, UnsupportedModelError,
                               r"activations \['Tanh', 'Tanh'\] are not supported"),
                              ({"direction": "sideways"}, UnsupportedModelError,
                               "direction 'sideways' is not forward"),
                              ({"layout": 2}, UnsupportedModelError, "layout=2 must be 0 or 1")):
        direction = attrs.pop("direction", "forward")
        layout = attrs.pop("layout", 0)
        d, _ = rnn("GRU", **attrs) if direction == "forward" and layout == 0 else (None, None)
        if d is None:
            d = onnx.load_from_string(rnn("GRU")[0])
            for a in d.graph.node[0].attribute:
                if a.name == "direction" and direction != "forward":
                    a.s = direction.encode()
                if a.name == "layout" and layout:
                    a.i = layout
            d = d.SerializeToString()
        errors(d, {}, exc, match, at_load=True)
    d = onnx.load_from_string(rnn("LSTM")[0])
    d.graph.node[0].attribute.append(helper.make_attribute("input_forget", 1))
    errors(d.SerializeToString(), {}, UnsupportedModelError, "input_forget=1 is not supported", at_load=True)
    d = onnx.load_from_string(rnn("LSTM")[0])
    next(a for a in d.graph.node[0].attribute if a.name == "hidden_size").i = H + 1
    errors(d.SerializeToString(), {}, UnsupportedModelError, "do not fit 1 direction", at_load=True)
    # (W, R and B from the graph run now, packed per run: test_onnx_rnn.py)


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.int8], ids=lambda t: np.dtype(t).name)
def test_outputs_written_over_their_input(dtype):
    """Scatter and Trilu may write their output over data computed just before
    (the planner's in-place reuse): the same bits as a separate buffer."""
    x = values_of(dtype, (4, 5))
    upd = values_of(dtype, (2, 5))
    nodes = [helper.make_node("Relu", ["x"], ["r1"]), helper.make_node("Relu", ["x"], ["r2"]),
             helper.make_node("Relu", ["x"], ["r3"]),
             helper.make_node("ScatterND", ["r1", "i", "u"], ["a"]),
             helper.make_node("ScatterElements", ["r2", "j", "u"], ["b"], axis=0),
             helper.make_node("Trilu", ["r3"], ["c"], upper=0)]
    data = graph(nodes, {"x": x}, {"a": tt(x), "b": tt(x), "c": tt(x)},
                 {"i": np.array([[3], [-4]]), "j": np.array([[1, 0, 3, 2, 1], [0, 0, 0, 0, 3]]), "u": upd},
                 opset=14)
    check(data, {"x": x}, use_ort=dtype != np.int8)
