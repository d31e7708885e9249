"""Regression tests for wrong results that only showed where users put an
operator: on an intermediate value rather than a graph input. Each fails
without its fix (issue 37):

- LogSoftmax along the last axis read its input after writing its output,
  so when the planner gave the output the input's buffer (any intermediate
  with one reader) the result was off by up to several units.
- Resize(linear, align_corners) given scales divided by out - 1 instead of
  ONNX's fractional length_resized - 1 = in * scale - 1.

The oracles are independent: numpy in float64 for LogSoftmax, and
onnx.reference.ReferenceEvaluator for Resize."""
from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto as TP  # noqa: E402
from onnx import helper, numpy_helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

import samebits  # noqa: E402
import samebits.onnx as so  # noqa: E402
from onnx_cases import model as _model, run_everywhere  # noqa: E402

F = TP.FLOAT


def _log_softmax(x: np.ndarray, axis: int) -> np.ndarray:
    x = x.astype(np.float64)
    m = x.max(axis=axis, keepdims=True)
    return (x - m - np.log(np.exp(x - m).sum(axis=axis, keepdims=True))).astype(np.float32)


def _run_everywhere(data: bytes, feeds: dict):
    """(mode, path, threads, outputs): onnx_cases.run_everywhere's runs."""
    for what, out in run_everywhere(data, feeds):
        mode, path, threads = what.split()
        yield mode, path, int(threads.split("=")[1]), out


W = np.random.default_rng(7).standard_normal((6, 5)).astype(np.float32)

# (name, the nodes before LogSoftmax ending in value "y", initializers)
PRODUCERS = [
    ("Neg", [helper.make_node("Neg", ["x"], ["y"])], []),
    ("MatMul", [helper.make_node("MatMul", ["x", "w"], ["y"])], [numpy_helper.from_array(W, "w")]),
    ("Gemm", [helper.make_node("Gemm", ["x", "w"], ["y"])], [numpy_helper.from_array(W, "w")]),
    ("Mul", [helper.make_node("Mul", ["x", "x"], ["y"])], []),
]


@pytest.mark.parametrize("producer", PRODUCERS, ids=[p[0] for p in PRODUCERS])
@pytest.mark.parametrize("axis", [-1, 0])
def test_log_softmax_of_an_intermediate(producer, axis):
    name, nodes, inits = producer
    out_cols = 5 if name in ("MatMul", "Gemm") else 6
    model = _model(nodes + [helper.make_node("LogSoftmax", ["y"], ["z"], axis=axis)],
                   [helper.make_tensor_value_info("x", F, [4, 6])],
                   [helper.make_tensor_value_info("z", F, [4, out_cols])], inits)
    x = np.random.default_rng(3).standard_normal((4, 6)).astype(np.float32) * 3
    y = {"Neg": lambda: -x, "MatMul": lambda: x @ W, "Gemm": lambda: x @ W,
         "Mul": lambda: x * x}[name]()
    want = _log_softmax(y, axis)
    digests = set()
    for mode, path, threads, out in _run_everywhere(model, {"x": x}):
        np.testing.assert_allclose(out["z"], want, rtol=1e-5, atol=1e-5,
                                   err_msg=f"{name} -> LogSoftmax {mode} {path} threads={threads}")
        if mode == "exact":
            digests.add(out["z"].tobytes())
    assert len(digests) == 1


def test_log_softmax_intermediate_feeding_two_readers_and_an_output():
    """y is read by LogSoftmax and Softmax and is an output itself; z feeds a Neg."""
    nodes = [helper.make_node("Neg", ["x"], ["y"]),
             helper.make_node("LogSoftmax", ["y"], ["z"]),
             helper.make_node("Softmax", ["y"], ["s"]),
             helper.make_node("Neg", ["z"], ["nz"])]
    outs = [helper.make_tensor_value_info(n, F, [3, 7]) for n in ("y", "s", "nz", "z")]
    model = _model(nodes, [helper.make_tensor_value_info("x", F, [3, 7])], outs)
    x = np.random.default_rng(5).standard_normal((3, 7)).astype(np.float32)
    ls = _log_softmax(-x, -1)
    for mode, path, threads, out in _run_everywhere(model, {"x": x}):
        what = f"{mode} {path} threads={threads}"
        np.testing.assert_array_equal(out["y"], -x, err_msg=what)
        np.testing.assert_allclose(out["z"], ls, rtol=1e-5, atol=1e-5, err_msg=what)
        np.testing.assert_allclose(out["nz"], -ls, rtol=1e-5, atol=1e-5, err_msg=what)
        np.testing.assert_allclose(out["s"], np.exp(ls), rtol=1e-5, atol=1e-6, err_msg=what)


@pytest.mark.parametrize("mode", ["exact", "fast"])
@pytest.mark.parametrize("shape,dim", [((3, 50), -1), ((4, 1000), 1), ((3, 5, 7), 1)])
def test_log_softmax_in_place_equals_out_of_place(mode, shape, dim):
    """samebits.log_softmax(x, out=x): the kernel reads its input from a copy
    when the output overlaps it, so the bits equal the out-of-place call."""
    x = np.random.default_rng(11).standard_normal(shape).astype(np.float32) * 4
    want = samebits.log_softmax(x, dim, mode=mode)
    for threads in (1, 2):
        y = x.copy()
        got = samebits.log_softmax(y, dim, mode=mode, out=y, threads=threads)
        assert got is y
        np.testing.assert_array_equal(y.view(np.uint32), want.view(np.uint32))
    np.testing.assert_allclose(want, _log_softmax(x, dim), rtol=1e-5, atol=1e-5)


def _resize_model(coord: str, scales=None, sizes=None, producer: bool = True) -> tuple:
    x_name = "xn" if producer else "x"
    nodes = [helper.make_node("Neg", ["x"], ["xn"])] if producer else []
    inits = [numpy_helper.from_array(np.array([], np.float32), "roi")]
    ins = [x_name, "roi"]
    if scales is not None:
        inits.append(numpy_helper.from_array(np.array(scales, np.float32), "scales"))
        ins.append("scales")
    else:
        inits.append(numpy_helper.from_array(np.array([], np.float32), "scales"))
        inits.append(numpy_helper.from_array(np.array(sizes, np.int64), "sizes"))
        ins += ["scales", "sizes"]
    nodes.append(helper.make_node("Resize", ins, ["y"], mode="linear",
                                  coordinate_transformation_mode=coord))
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", F, None)],
                          [helper.make_tensor_value_info("y", F, None)], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    return m


RESIZE_CASES = [
    # (coordinate mode, input H, W, scales or None, sizes or None)
    ("align_corners", 2, 4, [1, 1, 0.6, 0.6], None),     # ONNX's conformance case
    ("align_corners", 5, 7, [1, 1, 0.7, 0.45], None),
    ("align_corners", 3, 4, [1, 1, 2.5, 1.5], None),
    ("align_corners", 4, 9, [1, 1, 0.5, 1 / 3], None),
    ("align_corners", 6, 5, [1, 1, 3, 0.5], None),
    ("align_corners", 4, 6, None, [1, 1, 3, 4]),
    ("half_pixel", 2, 4, [1, 1, 0.6, 0.6], None),
    ("half_pixel", 5, 7, [1, 1, 0.7, 1.45], None),
    ("half_pixel", 5, 7, None, [1, 1, 3, 11]),
    ("pytorch_half_pixel", 5, 7, [1, 1, 0.7, 1.45], None),
    ("pytorch_half_pixel", 6, 4, None, [1, 1, 4, 9]),
]


@pytest.mark.parametrize("case", RESIZE_CASES, ids=lambda c: f"{c[0]}-{c[1]}x{c[2]}-"
                         f"{'scales' if c[3] else 'sizes'}")
@pytest.mark.parametrize("producer", [False, True], ids=["input", "intermediate"])
def test_resize_linear_coordinates_against_onnx_reference(case, producer):
    coord, h, w, scales, sizes = case
    m = _resize_model(coord, scales, sizes, producer)
    x = np.arange(h * w, dtype=np.float32).reshape(1, 1, h, w) * 1.5 + 1
    want = ReferenceEvaluator(m).run(None, {"x": x})[0]
    for mode, path, threads, out in _run_everywhere(m.SerializeToString(), {"x": x}):
        assert out["y"].shape == want.shape
        np.testing.assert_allclose(out["y"], want, rtol=2e-6, atol=2e-5,
                                   err_msg=f"{case} {mode} {path} threads={threads}")


def test_run_profile_forms():
    model = _model([helper.make_node("Neg", ["x"], ["y"]),
                    helper.make_node("LogSoftmax", ["y"], ["z"])],
                   [helper.make_tensor_value_info("x", F, [2, 3])],
                   [helper.make_tensor_value_info("z", F, [2, 3])])
    s = so.load(model)
    x = np.ones((2, 3), np.float32)
    assert s.profile == {}
    s.run({"x": x}, profile=True)
    s.run({"x": x}, profile=True)
    s.run({"x": x}, profile=False)
    s.run({"x": x})
    assert set(s.profile) == {"Neg", "LogSoftmax"}
    assert all(count == 2 and seconds >= 0 for seconds, count in s.profile.values())
    d: dict = {}
    s.run({"x": x}, profile=d)
    assert set(d) == {"Neg", "LogSoftmax"} and all(c == 1 for _, c in d.values())
    assert all(count == 2 for _, count in s.profile.values())
    with pytest.raises(TypeError, match="profile"):
        s.run({"x": x}, profile="yes")
    with pytest.raises(TypeError, match="profile"):
        s.run({"x": x}, profile=1)
