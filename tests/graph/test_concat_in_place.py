"""Concat's inputs written in place (csrc/graph/planner.c,
place_gathered_inputs): along an axis with only 1s before it, input i is a
run of the output's bytes, so a plan has the producer of an input that no
node reads after the Concat write it there, and the Concat finds it in place
and copies nothing for it. Each graph below is a way that can go wrong,
checked against numpy (the operators are exact in both modes) on every mode,
path and thread count:

- inputs read again after the Concat, graph inputs, initializers and graph
  outputs (never placed, copied as before);
- the same value twice, a view of an intermediate (its root placed), a value
  computed in place, Split views concatenated again (YOLOv8's C2f block),
  Concats inside Concats, a Concat's output computed in place;
- axes with something other than 1s before them (copies), the first axis of
  a batch, int64, and an int32 input converted into int64."""
from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto as TP  # noqa: E402
from onnx import helper  # noqa: E402

from onnx_cases import graph_model, run_everywhere  # noqa: E402

F, I32, I64 = TP.FLOAT, TP.INT32, TP.INT64
node = helper.make_node


def _check(data: bytes, feeds: dict, want: dict) -> None:
    for what, got in run_everywhere(data, feeds):
        for name, w in want.items():
            g = np.asarray(got[name])
            assert g.shape == w.shape and g.dtype == w.dtype, (what, name, g.shape, g.dtype)
            assert np.array_equal(g.view(np.uint8), np.ascontiguousarray(w).view(np.uint8)), \
                (what, name)


def _x(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def test_intermediates_placed_and_inputs_read_later_copied():
    """a, b and d are read only by the Concat (placed); e is read after it
    (copied); x is a graph input and w an initializer (copied); b appears
    twice; the Concat's output is then computed in place by Neg."""
    x = _x((1, 3, 5, 4))
    w = _x((1, 2, 5, 4), 1)
    nodes = [
        node("Relu", ["x"], ["a"]),
        node("Neg", ["x"], ["b"]),
        node("Abs", ["x"], ["e"]),
        node("Mul", ["x", "x"], ["d"]),
        node("Concat", ["a", "b", "x", "e", "w", "b", "d"], ["c"], axis=1),
        node("Sub", ["c", "c"], ["z"]),
        node("Neg", ["c"], ["nc"]),        # c's last reader: in place over c
        node("Add", ["e", "e"], ["ee"]),   # e read after the Concat
    ]
    data = graph_model(nodes, {"x": (F, [1, 3, 5, 4])},
                       {"nc": (F, None), "ee": (F, None), "z": (F, None)}, {"w": w})
    a, b, e, d = np.maximum(x, 0), -x, np.abs(x), x * x
    c = np.concatenate([a, b, x, e, w, b, d], axis=1)
    _check(data, {"x": x}, {"nc": -c, "ee": e + e, "z": c - c})


def test_c2f_block_split_views_concatenated():
    """YOLOv8's C2f: X split in two views, the second feeding a chain whose
    outputs join the Concat; X itself is placed at the Concat's start."""
    x = _x((1, 8, 6, 6))
    nodes = [
        node("Relu", ["x"], ["X"]),
        node("Split", ["X"], ["x0", "x1"], axis=1),
        node("Mul", ["x1", "x1"], ["b1"]),
        node("Sub", ["b1", "x1"], ["b2"]),      # a residual: reads x1 and b1
        node("Mul", ["b2", "x0"], ["b3"]),
        node("Neg", ["b3"], ["b4"]),            # in place on b3
        node("Concat", ["x0", "x1", "b2", "b4"], ["c"], axis=1),
        node("Neg", ["c"], ["y"]),
    ]
    data = graph_model(nodes, {"x": (F, [1, 8, 6, 6])},
                       {"y": (F, None), "c": (F, None), "b1": (F, None)})
    X = np.maximum(x, 0)
    x0, x1 = X[:, :4], X[:, 4:]
    b1 = x1 * x1
    b2 = b1 - x1
    b4 = -(b2 * x0)
    want_c = np.concatenate([x0, x1, b2, b4], axis=1)
    _check(data, {"x": x}, {"y": -want_c, "c": want_c, "b1": b1})


def test_split_views_concatenated_out_of_order():
    """X's halves concatenated after another input and swapped: X's bytes
    would overlap that input's run, so X must stay where it is."""
    x = _x((1, 6, 3, 2))
    nodes = [
        node("Relu", ["x"], ["X"]),
        node("Split", ["X"], ["x0", "x1"], axis=1),
        node("Neg", ["x0"], ["b"]),
        node("Concat", ["b", "x1", "x0"], ["c"], axis=1),
        node("Neg", ["c"], ["y"]),
    ]
    data = graph_model(nodes, {"x": (F, [1, 6, 3, 2])}, {"y": (F, None), "c": (F, None)})
    X = np.maximum(x, 0)
    c = np.concatenate([-X[:, :3], X[:, 3:], X[:, :3]], axis=1)
    _check(data, {"x": x}, {"y": -c, "c": c})


def test_nested_concats_and_views_of_intermediates():
    """A Concat inside a Concat (its placed inputs move with it), and a
    Reshape view of an intermediate as an input (its root placed)."""
    x = _x((1, 2, 3, 4))
    nodes = [
        node("Neg", ["x"], ["a"]),
        node("Abs", ["x"], ["b"]),
        node("Concat", ["a", "b"], ["c1"], axis=1),
        node("Mul", ["x", "x"], ["m"]),
        node("Reshape", ["m", "shape"], ["mr"]),
        node("Concat", ["mr", "c1"], ["c2"], axis=1),
        node("Relu", ["x"], ["r"]),
        node("Concat", ["c2", "r"], ["c3"], axis=1),
        node("Sub", ["c3", "c3"], ["zero"]),
        node("Add", ["c3", "c3"], ["y"]),
    ]
    data = graph_model(nodes, {"x": (F, [1, 2, 3, 4])}, {"y": (F, None), "zero": (F, None)},
                       {"shape": np.array([1, 2, 3, 4], np.int64)})
    c1 = np.concatenate([-x, np.abs(x)], axis=1)
    c3 = np.concatenate([np.concatenate([x * x, c1], axis=1), np.maximum(x, 0)], axis=1)
    _check(data, {"x": x}, {"y": c3 + c3, "zero": c3 - c3})


@pytest.mark.parametrize("shape, axis", [((2, 3, 4), 1), ((2, 3, 4), 2), ((2, 3, 4), 0),
                                         ((1, 1, 3, 4), 2), ((1, 3, 4), -1)])
def test_axes_that_place_and_axes_that_copy(shape, axis):
    x = _x(shape)
    nodes = [node("Neg", ["x"], ["a"]), node("Abs", ["x"], ["b"]),
             node("Concat", ["a", "b", "a"], ["c"], axis=axis), node("Relu", ["c"], ["y"])]
    data = graph_model(nodes, {"x": (F, list(shape))}, {"y": (F, None)})
    _check(data, {"x": x}, {"y": np.maximum(np.concatenate([-x, np.abs(x), -x], axis=axis), 0)})


def test_int64_and_a_converted_int32_input():
    i = np.arange(-6, 6, dtype=np.int64).reshape(1, 12)
    j = np.arange(5, dtype=np.int32).reshape(1, 5)
    nodes = [node("Neg", ["i"], ["a"]), node("Mul", ["i", "i"], ["b"]),
             node("Concat", ["a", "b"], ["c"], axis=1),
             node("Abs", ["i"], ["a2"]),
             node("Neg", ["j"], ["nj"]),
             node("Concat", ["a2", "nj"], ["c2"], axis=1)]
    data = graph_model(nodes, {"i": (I64, [1, 12]), "j": (I32, [1, 5])},
                       {"c": (I64, None), "c2": (I64, None)}, opset=13)
    # Concat of int64 with int32 (ONNX wants one type; samebits takes the
    # values, docs/onnx.md): the int32 input is converted, so nothing of that
    # Concat is placed, and the int64 one places both its inputs
    want_c2 = np.concatenate([np.abs(i), -j.astype(np.int64)], axis=1)
    _check(data, {"i": i, "j": j}, {"c": np.concatenate([-i, i * i], axis=1), "c2": want_c2})
