"""samebits.onnx's index-driven operators (GatherElements, GatherND,
ScatterElements, ScatterND, TopK, Pad's reflect/edge/wrap modes), Einsum
and the smooth activations of opset 18 (Mish) against ONNX Runtime, in the
forms exporters emit (torch's in-place slice assignment becomes ScatterND,
torch.gather GatherElements, torch.topk TopK). The copies must keep every
bit (NaN payloads, -0) with and without numpy; Einsum's exact result must
be samebits.matmul's on the permuted operands, bit for bit."""
from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")
from onnx import TensorProto as TP  # noqa: E402
from onnx import helper  # noqa: E402

import samebits  # noqa: E402
import samebits.onnx as so  # noqa: E402

from conftest import bits  # noqa: E402
from test_onnx_ops import F, compare, model, one, rand  # noqa: E402

I64 = TP.INT64


def ints(values, dtype=np.int64):
    return np.array(values, dtype=dtype)


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_gather_elements(axis):
    x = rand(4, 5, 3)
    rng = np.random.default_rng(axis + 7)
    shape = [3, 4, 2]
    idx = rng.integers(-x.shape[axis], x.shape[axis], size=shape)
    one("GatherElements", {"X": x, "I": idx}, {"axis": axis})
    one("GatherElements", {"X": ints(rng.integers(-9, 9, x.shape)), "I": idx}, {"axis": axis},
        out_type=I64)


def test_scatter_elements_and_opset9_scatter():
    data = rand(3, 5)
    idx = ints([[1, 0, 4], [0, 2, -1], [3, 4, 1]])
    upd = rand(3, 3)
    one("ScatterElements", {"D": data, "I": idx, "U": upd}, {"axis": 1})
    one("ScatterElements", {"D": rand(4, 3), "I": ints([[1, 0, 2], [3, 2, 0]]), "U": rand(2, 3)},
        {"axis": 0})
    one("Scatter", {"D": data, "I": idx, "U": upd}, {"axis": 1}, opset=9)


@pytest.mark.parametrize("batch_dims,xshape,ishape", [
    (0, (4, 5, 3), (2, 1)), (0, (4, 5, 3), (3, 2)), (0, (4, 5, 3), (2, 2, 3)),
    (1, (2, 5, 3), (2, 4, 1)), (1, (2, 5, 3), (2, 2)),
])
def test_gather_nd(batch_dims, xshape, ishape):
    rng = np.random.default_rng(len(ishape) * 10 + batch_dims)
    m = ishape[-1]
    bounds = xshape[batch_dims:batch_dims + m]
    idx = np.stack([rng.integers(-b, b, size=ishape[:-1]) for b in bounds], axis=-1)
    one("GatherND", {"X": rand(*xshape), "I": idx}, {"batch_dims": batch_dims})


def test_scatter_nd_as_torch_slice_assignment_exports_it():
    # y[..., 0:2] = ...: the exporter's ScatterND over the last axis
    data = rand(1, 3, 4, 4, 9)
    grid = np.stack(np.meshgrid(*[np.arange(s) for s in (1, 3, 4, 4)], indexing="ij"), -1)
    idx = np.concatenate([np.broadcast_to(grid[..., None, :], (1, 3, 4, 4, 2, 4)),
                          np.broadcast_to(np.arange(2)[:, None], (1, 3, 4, 4, 2, 1))], -1)
    one("ScatterND", {"D": data, "I": idx.astype(np.int64), "U": rand(1, 3, 4, 4, 2)})
    one("ScatterND", {"D": rand(5, 3), "I": ints([[4], [0], [-2]]), "U": rand(3, 3)})
    one("ScatterND", {"D": ints(np.arange(12).reshape(3, 4)), "I": ints([[1, 2], [0, 0]]),
                      "U": ints([70, 80])}, out_type=I64)


@pytest.mark.parametrize("axis,largest,k", [(-1, 1, 3), (0, 1, 2), (1, 0, 4), (1, 1, 5)])
def test_topk(axis, largest, k):
    x = rand(4, 5, 6)
    x[0, :, 0] = 1.5                                   # ties: lower index first
    x[1, 2, :] = [2.0, -0.0, 0.0, 2.0, 2.0, 1.0]
    one("TopK", {"X": x}, {"axis": axis, "largest": largest}, inits={"K": ints([k])}, n_out=2,
        out_type=[F, I64])
    one("TopK", {"X": ints(np.random.default_rng(3).integers(-3, 3, x.shape))},
        {"axis": axis, "largest": largest}, inits={"K": ints([k])}, n_out=2, out_type=I64)


def test_topk_opset1_attribute_and_nan_order():
    one("TopK", {"X": rand(3, 7)}, {"k": 2}, opset=9, n_out=2, out_type=[F, I64])
    x = np.array([[1.0, np.nan, 3.0, -np.inf, np.inf]], np.float32)
    node = helper.make_node("TopK", ["X", "K"], ["v", "i"])
    for largest, order in ((1, [1, 4, 2, 0, 3]), (0, [3, 0, 2, 4, 1])):
        node = helper.make_node("TopK", ["X", "K"], ["v", "i"], largest=largest)
        data = model([node], {"X": (F, [1, 5])}, {"v": (F, None), "i": (I64, None)},
                     {"K": ints([5])})
        out = so.load(data, mode="exact").run({"X": x})
        assert out["i"].tolist() == [order]          # NaN above every number
        assert bits(out["v"]).tobytes() == bits(x[:, order]).tobytes()


@pytest.mark.parametrize("mode", ["reflect", "edge"])
@pytest.mark.parametrize("pads", [[0, 0, 1, 2, 0, 0, 2, 1], [0, 0, 3, 0, 0, 0, 0, 4],
                                  [0, 1, 1, 1, 0, 0, -1, 2]])
def test_pad_index_modes(mode, pads):
    x = rand(2, 3, 5, 6)
    one("Pad", {"X": x}, {"mode": mode}, inits={"pads": ints(pads)})
    if mode == "reflect":
        one("Pad", {"X": x}, {"mode": mode, "pads": pads}, opset=10)


def test_pad_wrap_and_axes():
    x = rand(2, 3, 5, 6)
    one("Pad", {"X": x}, {"mode": "wrap"}, inits={"pads": ints([1, 2, 3, 1]),
                                                   "c": np.array(0, np.float32),
                                                   "axes": ints([2, 3])},
        order=["X", "pads", "c", "axes"], opset=19)


@pytest.mark.parametrize("equation,shapes", [
    ("bij,bjk->bik", [(3, 4, 5), (3, 5, 6)]),
    ("bhid,bhjd->bhij", [(2, 3, 5, 4), (2, 3, 7, 4)]),
    ("bhij,bhjd->bhid", [(2, 3, 5, 7), (2, 3, 7, 4)]),
    ("ij->ji", [(3, 5)]),
    ("...ij,...jk->...ik", [(2, 3, 4), (1, 4, 5)]),
    ("i,j->ij", [(4,), (5,)]),
    ("bnd,d->bn", [(2, 3, 8), (8,)]),
    ("ij,jk", [(3, 4), (4, 5)]),
    ("nct,ncp->ntp", [(2, 4, 5), (2, 4, 3)]),
])
def test_einsum(equation, shapes):
    inputs = {f"x{i}": rand(*s) for i, s in enumerate(shapes)}
    one("Einsum", inputs, {"equation": equation}, rtol=1e-5, atol=1e-5)


def test_einsum_exact_is_the_matrix_product_of_the_permuted_operands():
    a, b = rand(2, 3, 5, 4), rand(2, 3, 7, 4)
    node = helper.make_node("Einsum", ["a", "b"], ["y"], equation="bhid,bhjd->bhij")
    data = model([node], {"a": (F, list(a.shape)), "b": (F, list(b.shape))}, {"y": (F, None)})
    got = so.load(data, mode="exact").run({"a": a, "b": b})["y"]
    want = samebits.matmul(np.ascontiguousarray(a), np.ascontiguousarray(b.transpose(0, 1, 3, 2)),
                           mode="exact")
    assert bits(got).tobytes() == bits(want).tobytes()


@pytest.mark.parametrize("equation,why", [
    ("ii->i", "diagonal"), ("ij,jk,kl->il", "3 operands"), ("ij->i", "sums one"),
])
def test_einsum_refusals(equation, why):
    names = ["a", "b", "c"][:equation.split("->")[0].count(",") + 1]
    node = helper.make_node("Einsum", names, ["y"], name="e", equation=equation)
    data = model([node], {n: (F, [3, 3]) for n in names}, {"y": (F, None)})
    with pytest.raises((so.UnsupportedModelError, ValueError), match=why):
        so.load(data).run({n: rand(3, 3) for n in names})


def test_mish_opset18():
    # (ONNX Runtime gives NaN for -inf; samebits the limit -0, tested with the activations)
    x = np.concatenate([np.array([0.0, -0.0, 20.0, -20.0, 100.0, -100.0, np.inf],
                                 np.float32), rand(300, scale=5)]).reshape(1, -1)
    one("Mish", {"X": x}, opset=18, rtol=1e-5, atol=1e-6)


def test_copies_keep_every_bit():
    """NaN payloads and -0 come through Gather/Scatter/TopK/Pad untouched
    (numpy's take_along_axis, put and pad as the oracles)."""
    x = np.array([0x7FC00001, 0x80000000, 0xFFC12345, 0x3F800000, 0x00000001, 0x7F800000],
                 np.uint32).view(np.float32).reshape(2, 3)
    nodes = [helper.make_node("GatherElements", ["x", "i"], ["g"], axis=1),
             helper.make_node("ScatterND", ["x", "j", "u"], ["s"]),
             helper.make_node("Pad", ["x", "p"], ["r"], mode="reflect")]
    data = model(nodes, {"x": (F, [2, 3])}, {"g": (F, None), "s": (F, None), "r": (F, None)},
                 {"i": ints([[2, 0, 1], [1, 1, 0]]), "j": ints([[1]]),
                  "u": x[:1, ::-1].copy(), "p": ints([1, 2, 1, 2])})
    got = so.load(data, mode="exact").run({"x": x})
    assert bits(got["g"]).tolist() == bits(np.take_along_axis(
        x, np.array([[2, 0, 1], [1, 1, 0]]), 1)).tolist()
    scattered = x.copy()
    scattered[1] = x[0, ::-1]
    assert bits(got["s"]).tolist() == bits(scattered).tolist()
    assert bits(got["r"]).tolist() == bits(np.pad(x, ((1, 1), (2, 2)), "reflect")).tolist()


def test_index_errors_name_the_node():
    node = helper.make_node("GatherElements", ["x", "i"], ["y"], name="ge", axis=0)
    data = model([node], {"x": (F, [2, 3]), "i": (I64, [1, 3])}, {"y": (F, None)})
    with pytest.raises(IndexError, match=r"'ge' \(GatherElements\).*index 5"):
        so.load(data).run({"x": rand(2, 3), "i": ints([[0, 5, 1]])})
    node = helper.make_node("ScatterND", ["x", "i", "u"], ["y"], name="sn", reduction="avg")
    data = model([node], {"x": (F, [2, 3]), "i": (I64, [1, 1]), "u": (F, [1, 3])},
                 {"y": (F, None)}, opset=16)
    with pytest.raises(so.UnsupportedModelError, match=r"'sn' \(ScatterND\): reduction 'avg' is not"):
        so.load(data)


@pytest.mark.parametrize("exclusive,reverse", [(0, 0), (1, 0), (0, 1), (1, 1)])
def test_cumsum(exclusive, reverse):
    x = rand(3, 7, 4)
    x[0, 0, 0] = -0.0
    for axis in (0, 1, -1):
        got = one("CumSum", {"X": x}, {"exclusive": exclusive, "reverse": reverse},
                  inits={"axis": ints(axis)})[0]
        # the documented order: one float32 add per step along the axis
        a = axis % 3
        xs = np.moveaxis(x, a, 0)[::-1] if reverse else np.moveaxis(x, a, 0)
        acc, want = np.zeros_like(xs[0]), []
        for i, v in enumerate(xs):
            if exclusive:
                want.append(acc)
                acc = acc + v
            else:
                acc = v.copy() if i == 0 else acc + v
                want.append(acc)
        want = np.stack(want[::-1] if reverse else want)
        assert bits(got).tobytes() == bits(np.ascontiguousarray(np.moveaxis(want, 0, a))).tobytes()
    one("CumSum", {"X": ints(np.arange(12).reshape(3, 4) - 5)},
        {"exclusive": exclusive, "reverse": reverse}, inits={"axis": ints(1)}, out_type=I64)


@pytest.mark.parametrize("upper", [0, 1])
@pytest.mark.parametrize("k", [None, 0, 1, -2])
def test_trilu(upper, k):
    inits = {} if k is None else {"k": ints(k)}
    one("Trilu", {"X": rand(2, 4, 5)}, {"upper": upper}, inits=inits)
    one("Trilu", {"X": ints(np.arange(20).reshape(4, 5))}, {"upper": upper}, inits=inits,
        out_type=I64)


def test_nonzero():
    x = np.array([[0.0, -0.0, 1.0], [np.nan, 0.0, -2.0]], np.float32)
    one("NonZero", {"X": x}, out_type=I64)
    one("NonZero", {"X": ints([[0, 3, 0], [1, 0, 0]])}, out_type=I64)


@pytest.mark.parametrize("center", [0, 1])
@pytest.mark.parametrize("thresholds", [(5, 0.5, None), (3, 0.3, 0.2), (100, 0.0, 0.0),
                                        (0, 0.5, None)])
def test_non_max_suppression(center, thresholds):
    rng = np.random.default_rng(center * 10 + thresholds[0])
    n = 60
    if center:
        boxes = np.concatenate([rng.uniform(0, 10, (2, n, 2)), rng.uniform(0.5, 4, (2, n, 2))], -1)
    else:
        boxes = rng.uniform(0, 10, (2, n, 4))          # any diagonal pair of corners
    boxes[0, 5] = boxes[0, 4]                         # a duplicate: IoU exactly 1
    scores = rng.uniform(0, 1, (2, 3, n)).astype(np.float32)
    scores[1, 0, 7] = scores[1, 0, 9]                 # a tie: the lower index first
    limit, iou, score = thresholds
    inits = {"m": ints([limit]), "iou": np.array([iou], np.float32)}
    order = ["b", "s", "m", "iou"]
    if score is not None:
        inits["st"] = np.array([score], np.float32)
        order.append("st")
    one("NonMaxSuppression", {"b": boxes.astype(np.float32), "s": scores},
        {"center_point_box": center}, inits=inits, order=order, out_type=I64)


@pytest.mark.parametrize("op_type", ["ReduceSumSquare", "ReduceL1", "ReduceL2"])
@pytest.mark.parametrize("opset", [13, 18])
def test_more_reductions(op_type, opset):
    x = rand(3, 4, 5)
    if opset >= 18:
        one(op_type, {"X": x}, {"keepdims": 0}, inits={"axes": ints([1, 2])}, opset=opset)
    else:
        one(op_type, {"X": x}, {"axes": [0, 2]}, opset=opset)
    if op_type != "ReduceL2":
        one(op_type, {"X": ints(np.arange(-6, 6).reshape(3, 4))}, {"keepdims": 1}, opset=opset,
            out_type=I64)


@pytest.mark.parametrize("opset,per_group", [(18, True), (21, False)])
def test_group_normalization(opset, per_group):
    x = rand(2, 6, 5, 4)
    c = 3 if per_group else 6
    one("GroupNormalization", {"X": x}, {"num_groups": 3, "epsilon": 1e-3},
        inits={"s": rand(c), "b": rand(c)}, opset=opset, rtol=1e-4, atol=1e-5)


def test_lrn():
    x = rand(2, 7, 5, 4)
    for size in (1, 3, 5):                      # (ONNX Runtime refuses even sizes)
        one("LRN", {"X": x}, {"size": size, "alpha": 1e-3, "beta": 0.75, "bias": 2.0},
            opset=13, rtol=1e-5, atol=1e-6)
    one("LRN", {"X": x}, {"size": 5}, opset=13, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("axis", [-1, 0, 1])
def test_one_hot(axis):
    idx = ints([[1, -1, 4], [0, 7, -5]])
    one("OneHot", {"I": idx}, {"axis": axis},
        inits={"d": ints([5]), "v": np.array([-0.0, 2.5], np.float32)}, opset=11)
    one("OneHot", {"I": idx}, {"axis": axis}, inits={"d": ints([5]), "v": ints([0, 1])},
        opset=11, out_type=I64)


@pytest.mark.parametrize("axis", [-1, 1])
def test_rms_normalization_opset23(axis):
    x = rand(2, 3, 8)
    scale = rand(*((8,) if axis == -1 else (3, 8)))
    got = one("RMSNormalization", {"X": x}, {"axis": axis, "epsilon": 1e-4},
              inits={"s": scale}, opset=23, rtol=1e-5, atol=1e-6)[0]
    # the documented order: products, serial sum from +0, / n, + eps, sqrt, divide, * scale
    rows = x.reshape(-1, 8 if axis == -1 else 24)
    acc = np.zeros(rows.shape[0], np.float32)
    for j in range(rows.shape[1]):
        acc = acc + rows[:, j] * rows[:, j]
    d = np.sqrt(acc / np.float32(rows.shape[1]) + np.float32(1e-4))
    want = (rows / d[:, None]).reshape(x.shape) * scale
    assert bits(got).tobytes() == bits(want).tobytes()


@pytest.mark.parametrize("opset", [22, 23])
def test_recent_opsets_keep_the_semantics(opset):
    """Opsets 22 and 23 changed these operators' types only (bfloat16, float8, ...)."""
    x = rand(1, 3, 8, 8)
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["r"]),
             helper.make_node("MaxPool", ["r"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
             helper.make_node("Transpose", ["p"], ["t"], perm=[0, 2, 3, 1]),
             helper.make_node("Shape", ["t"], ["s"]),
             helper.make_node("Flatten", ["t"], ["f"], axis=1),
             helper.make_node("Pad", ["f", "pads"], ["y"], mode="reflect"),
             helper.make_node("Cast", ["s"], ["sf"], to=TP.FLOAT)]
    data = model(nodes, {"x": (F, [1, 3, 8, 8])}, {"y": (F, None), "sf": (F, None)},
                 {"w": rand(4, 3, 3, 3), "pads": ints([0, 2, 0, 3])}, opset)
    compare(data, {"x": x})
