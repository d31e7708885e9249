"""Split's outputs as views of its input (csrc/graph/planner.c): when only 1s
precede the split axis, output j is the run of the input's bytes after
outputs 0 .. j-1, so the plan points the outputs into the input and the step
copies nothing. Every way a view can go wrong is a graph here, checked
against numpy (the outputs are exact copies, so any difference is a bug):

- the input a graph input, an intermediate, a view of one (a Reshape: the
  offsets add up), a large initializer (not computed while planning);
- an output read by several consumers, computed in place (Relu, Add of
  itself) while its siblings are still read, split again (nested views),
  given as a graph output, or all of these together;
- axes with only 1s before them (views) and not (copies), negative axes,
  uneven and empty parts, float32 and int64;
- every mode, path and thread count (onnx_cases.run_everywhere)."""
from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto as TP  # noqa: E402
from onnx import helper  # noqa: E402

import samebits.onnx as so  # noqa: E402
from onnx_cases import graph_model, run_everywhere  # noqa: E402

F, I64 = TP.FLOAT, TP.INT64


def _check(data: bytes, feeds: dict, want: dict) -> None:
    for what, got in run_everywhere(data, feeds):
        for name, w in want.items():
            g = np.asarray(got[name])
            assert g.shape == w.shape, (what, name, g.shape, w.shape)
            assert g.dtype == w.dtype, (what, name, g.dtype)
            assert np.array_equal(g.view(np.uint8), np.ascontiguousarray(w).view(np.uint8)), \
                (what, name)


def _x(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize("shape, axis, parts", [
    ((1, 10, 4, 3), 1, [3, 5, 2]),     # a C2f block's channel split: views
    ((1, 10, 4, 3), -3, [5, 5]),       # the same axis, negative
    ((10, 4, 3), 0, [1, 0, 9]),        # the first axis, an empty part: views
    ((1, 1, 12, 5), 2, [7, 5]),        # only 1s before axis 2: views
    ((2, 10, 4, 3), 1, [3, 7]),        # a batch of 2 before the axis: copies
    ((1, 6, 4, 3), 3, [1, 2]),         # the last axis: copies
])
def test_split_of_an_intermediate_read_every_way(shape, axis, parts):
    """Relu(x) split; part 0 read twice (Neg, Mul of itself), part 1 computed
    in place by Relu while part 0 and the last part are still read later,
    the last part a graph output and split again along the same axis."""
    x = _x(shape)
    sizes = np.array(parts, np.int64)
    last = parts[-1]
    nodes = [
        helper.make_node("Relu", ["x"], ["r"]),
        helper.make_node("Split", ["r", "sizes"], ["p0", "p1", "p2"] if len(parts) == 3
                         else ["p0", "p2"], axis=axis),
    ]
    names = ["p0", "p1", "p2"] if len(parts) == 3 else ["p0", "p2"]
    a0 = axis % len(shape)
    half = [last // 2, last - last // 2]
    nodes += [
        helper.make_node("Neg", ["p0"], ["n0"]),
        helper.make_node("Abs", ["p2"], ["a2"]),   # reads the last part before it is split
        helper.make_node("Split", ["p2", "half"], ["q0", "q1"], axis=axis),
        helper.make_node("Add", ["q1", "q1"], ["d1"]),   # in place on a nested view
        helper.make_node("Mul", ["p0", "p0"], ["m0"]),
    ]
    outputs = {"n0": (F, None), "m0": (F, None), "p2": (F, None), "q0": (F, None),
               "d1": (F, None), "a2": (F, None)}
    if len(parts) == 3:
        nodes.insert(3, helper.make_node("Relu", ["p1"], ["s1"]))   # p1's only reader: in place
        outputs["s1"] = (F, None)
    data = graph_model(nodes, {"x": (F, list(shape))}, outputs,
                       {"sizes": sizes, "half": np.array(half, np.int64)}, opset=13)
    r = np.maximum(x, 0)
    cuts = np.cumsum(parts)[:-1]
    p = dict(zip(names, np.split(r, cuts, axis=a0)))
    q0, q1 = np.split(p["p2"], [half[0]], axis=a0)
    want = {"n0": -p["p0"], "m0": p["p0"] * p["p0"], "p2": p["p2"], "q0": q0, "d1": q1 + q1,
            "a2": np.abs(p["p2"])}
    if len(parts) == 3:
        want["s1"] = np.maximum(p["p1"], 0)
    _check(data, {"x": x}, want)


def test_split_of_a_graph_input_and_of_a_reshape_view():
    """The input itself split (its root is the caller's buffer), and a
    Reshape of an intermediate split (a view of a view: the offsets add)."""
    x = _x((1, 8, 6))
    nodes = [
        helper.make_node("Split", ["x"], ["a", "b"], axis=1),
        helper.make_node("Sigmoid", ["x"], ["s"]),
        helper.make_node("Reshape", ["s", "shape"], ["t"]),
        helper.make_node("Split", ["t", "sizes"], ["u", "v", "w"], axis=1),
        helper.make_node("Split", ["w", "two"], ["w0", "w1"], axis=1),
        helper.make_node("Add", ["a", "b"], ["ab"]),
        helper.make_node("Sub", ["v", "w1"], ["vw"]),
    ]
    data = graph_model(nodes, {"x": (F, [1, 8, 6])},
                       {"ab": (F, None), "u": (F, None), "vw": (F, None), "w0": (F, None),
                        "a": (F, None)},
                       {"shape": np.array([1, 48], np.int64), "sizes": np.array([10, 14, 24]),
                        "two": np.array([10, 14], np.int64)}, opset=13)
    s = (1 / (1 + np.exp(-x.astype(np.float64)))).astype(np.float32)
    a, b = x[:, :4], x[:, 4:]
    t = s.reshape(1, 48)
    u, v, w = t[:, :10], t[:, 10:24], t[:, 24:]
    w0, w1 = w[:, :10], w[:, 10:]
    # Sigmoid is correctly rounded in exact mode only; compare its users to
    # the graph's own Sigmoid output instead of numpy's
    for what, got in run_everywhere(data, {"x": x}):
        assert np.array_equal(got["ab"], a + b), what
        assert np.array_equal(got["a"], a), what
        su = np.asarray(got["u"])
        assert su.shape == (1, 10) and np.allclose(su, u, rtol=1e-6, atol=0), what
        assert np.allclose(got["w0"], w0, rtol=1e-6, atol=0), what
        assert np.allclose(got["vw"], v - w1, rtol=1e-5, atol=1e-6), what
    # exact mode: the views hold the bits of the graph's own Sigmoid
    full = graph_model([helper.make_node("Sigmoid", ["x"], ["s"])], {"x": (F, [1, 8, 6])},
                       {"s": (F, None)})
    ref = so.load(full, mode="exact").run({"x": x})["s"].reshape(1, 48)
    got = so.load(data, mode="exact").run({"x": x})
    assert np.array_equal(got["u"], ref[:, :10])
    assert np.array_equal(got["w0"], ref[:, 24:34])
    assert np.array_equal(got["vw"], ref[:, 10:24] - ref[:, 34:])


def test_split_of_a_large_initializer_and_of_int64():
    """A 2 MiB initializer split into views (too large to compute while
    planning), and an int64 intermediate split."""
    big = _x((1, 512, 1024), 3)
    idx = np.arange(24, dtype=np.int64).reshape(1, 24)
    nodes = [
        helper.make_node("Split", ["big"], ["g0", "g1"], axis=1),
        helper.make_node("Add", ["g1", "x"], ["y"]),
        helper.make_node("Neg", ["i"], ["ni"]),
        helper.make_node("Split", ["ni", "sizes"], ["i0", "i1"], axis=1),
        helper.make_node("Mul", ["i1", "i1"], ["ii"]),
    ]
    data = graph_model(nodes, {"x": (F, [1, 256, 1024]), "i": (I64, [1, 24])},
                       {"y": (F, None), "g0": (F, None), "i0": (I64, None), "ii": (I64, None)},
                       {"big": big, "sizes": np.array([5, 19], np.int64)}, opset=13)
    x = _x((1, 256, 1024), 4)
    ni = -idx
    _check(data, {"x": x, "i": idx},
           {"y": big[:, 256:] + x, "g0": big[:, :256], "i0": ni[:, :5], "ii": ni[:, 5:] ** 2})
