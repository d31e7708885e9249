"""ONNX If, Loop and Scan (docs/onnx.md; csrc/graph/ops/control/,
csrc/graph/subgraph.c, csrc/graph/scope.c). Subgraphs read outer-scope
values (graph inputs, intermediates, values two scopes out); an If whose
condition is a constant at load loads only its taken branch. Outputs are
held bit for bit to numpy float32 oracles of each body's arithmetic (every
operator used is exact: Add, Sub, Mul, Neg, comparisons), in both modes,
on every path at 1 and 2 threads, and to ONNX Runtime and
onnx.reference; the control-flow outputs are used as graph outputs and
feed several consumers."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper, numpy_helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

import samebits.onnx as so  # noqa: E402
from onnx_cases import bits, model, run_everywhere, value  # noqa: E402

F, I64, B = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL


def _const(name: str, array) -> helper.NodeProto:
    return helper.make_node("Constant", [], [name], value=numpy_helper.from_array(np.asarray(array)))


def _graph(nodes, inputs, outputs, name):
    return helper.make_graph(nodes, name, inputs, outputs)


def _check(data: bytes, feeds: dict, expected: dict, with_ort: bool = True,
           with_reference: bool = True) -> None:
    """Bit for bit against the oracle everywhere; ORT and onnx.reference
    within float32 rounding (where the caller says why one is left out)."""
    names = list(expected)
    if with_reference:
        ref = ReferenceEvaluator(data).run(None, feeds)
        for name, want, r in zip(names, expected.values(), ref):
            np.testing.assert_allclose(r, want, rtol=1e-6, err_msg=f"{name}: onnx.reference")
    if with_ort:
        got_ort = ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(None, feeds)
        for name, want, o in zip(names, expected.values(), got_ort):
            np.testing.assert_allclose(o, want, rtol=1e-6, err_msg=f"{name}: ONNX Runtime")
    for what, out in run_everywhere(data, feeds):
        for name, want in expected.items():
            assert out[name].shape == want.shape, (what, name, out[name].shape, want.shape)
            assert out[name].dtype == want.dtype, (what, name)
            if want.dtype == np.float32:
                np.testing.assert_array_equal(bits(out[name]), bits(want), err_msg=f"{what} {name}")
            else:
                np.testing.assert_array_equal(out[name], want, err_msg=f"{what} {name}")


# ---- If ------------------------------------------------------------------------

def _if_model(opset: int = 17) -> bytes:
    # h = x + x (an intermediate both branches read); cond = sum(x) > 0
    then_g = _graph([_const("two", np.float32(2)), helper.make_node("Mul", ["h", "two"], ["t"])],
                    [], [value("t", F, None)], "then")
    else_g = _graph([_const("one", np.float32(1)), helper.make_node("Sub", ["h", "one"], ["e"]),
                     helper.make_node("Neg", ["e"], ["e2"])],
                    [], [value("e2", F, None)], "else")
    nodes = [helper.make_node("Add", ["x", "x"], ["h"]),
             helper.make_node("ReduceSum", ["x"], ["s"], keepdims=0),
             _const("zero", np.float32(0)),
             helper.make_node("Greater", ["s", "zero"], ["cond"]),
             helper.make_node("If", ["cond"], ["y"], then_branch=then_g, else_branch=else_g),
             helper.make_node("Neg", ["y"], ["n"]),
             helper.make_node("Mul", ["y", "h"], ["m"])]
    return model(nodes, [value("x", F, [4])], [value("y", F, None), value("n", F, None),
                                                value("m", F, None)], opset=opset)


@pytest.mark.parametrize("sign", [1, -1])
def test_if_on_a_computed_condition_reads_outer_intermediates(sign):
    x = (sign * np.array([0.5, 1.25, 3.0, -0.75], np.float32))
    h = x + x
    y = h * np.float32(2) if x.sum() > 0 else -(h - np.float32(1))
    _check(_if_model(), {"x": x}, {"y": y, "n": -y, "m": y * h})


def test_if_branches_of_different_shapes_feed_the_rest_of_the_graph():
    # then: x[:2]; else: concat(x, x); the graph continues with their shapes
    then_g = _graph([_const("s", np.array([0], np.int64)), _const("e", np.array([2], np.int64)),
                     helper.make_node("Slice", ["x", "s", "e"], ["t"])], [], [value("t", F, None)], "then")
    else_g = _graph([helper.make_node("Concat", ["x", "x"], ["c"], axis=0)], [], [value("c", F, None)],
                    "else")
    nodes = [helper.make_node("If", ["flag"], ["y"], then_branch=then_g, else_branch=else_g),
             helper.make_node("Add", ["y", "y"], ["z"])]
    data = model(nodes, [value("flag", B, []), value("x", F, [3])], [value("z", F, None)])
    x = np.array([1.5, -2.0, 0.25], np.float32)
    s = so.load(data, mode="exact")
    for flag, y in ((True, x[:2]), (False, np.concatenate([x, x])), (True, x[:2])):
        _check(data, {"flag": np.array(flag), "x": x}, {"z": y + y})
        np.testing.assert_array_equal(bits(s.run({"flag": np.array(flag), "x": x})["z"]), bits(y + y))


def test_a_constant_condition_loads_only_the_taken_branch():
    # the other branch uses an operator samebits lacks: never loaded, never refused
    missing = helper.make_node("NotAnOperator", ["x"], ["u"])
    then_g = _graph([helper.make_node("Neg", ["x"], ["t"])], [], [value("t", F, None)], "then")
    else_g = _graph([missing], [], [value("u", F, None)], "else")
    for cond, loads in ((True, True), (False, False)):
        nodes = [_const("c", np.array(cond)),
                 helper.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g)]
        data = model(nodes, [value("x", F, [2])], [value("y", F, None)])
        x = np.array([1.0, -3.0], np.float32)
        if loads:
            for what, out in run_everywhere(data, {"x": x}):
                np.testing.assert_array_equal(bits(out["y"]), bits(-x), err_msg=what)
        else:
            with pytest.raises(so.UnsupportedModelError, match=r"\(If\), in else_branch: .*NotAnOperator"):
                so.load(data)


def test_if_rejects_a_condition_of_two_elements_and_unequal_outputs():
    then_g = _graph([helper.make_node("Neg", ["x"], ["t"])], [], [value("t", F, None)], "then")
    else_g = _graph([helper.make_node("Abs", ["x"], ["e"])], [], [value("e", F, None)], "else")
    data = model([helper.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g)],
                 [value("c", B, None), value("x", F, [2])], [value("y", F, None)])
    with pytest.raises(ValueError, match="cond must have one element"):
        so.load(data).run({"c": np.array([True, False]), "x": np.ones(2, np.float32)})
    two = _graph([helper.make_node("Neg", ["x"], ["t"]), helper.make_node("Abs", ["x"], ["a"])], [],
                 [value("t", F, None), value("a", F, None)], "then")
    bad = model([helper.make_node("If", ["c"], ["y"], then_branch=two, else_branch=else_g)],
                [value("c", B, None), value("x", F, [2])], [value("y", F, None)])
    with pytest.raises(so.UnsupportedModelError, match="then_branch has 2 outputs and the node 1"):
        so.load(bad)


# ---- Loop ----------------------------------------------------------------------

def _loop_model(with_m: bool, with_cond: bool) -> bytes:
    # y <- y + x * i (x an outer value), while i < limit (an outer value);
    # scanned: y after each iteration; and an If nested in the body that
    # reads `x` two scopes out
    inner_then = _graph([helper.make_node("Add", ["y_out", "x"], ["w"])], [], [value("w", F, None)], "it")
    inner_else = _graph([helper.make_node("Sub", ["y_out", "x"], ["w2"])], [], [value("w2", F, None)], "ie")
    body = _graph(
        [helper.make_node("Cast", ["i"], ["fi"], to=F),
         helper.make_node("Mul", ["x", "fi"], ["xi"]),
         helper.make_node("Add", ["y_in", "xi"], ["y_out"]),
         helper.make_node("Less", ["i", "limit"], ["cond_out"]),
         helper.make_node("If", ["cond_out"], ["scanned"], then_branch=inner_then, else_branch=inner_else)],
        [value("i", I64, []), value("cond_in", B, []), value("y_in", F, None)],
        [value("cond_out", B, []), value("y_out", F, None), value("scanned", F, [2])], "body")
    nodes = [helper.make_node("Loop", ["m" if with_m else "", "c" if with_cond else "", "y0"],
                              ["y", "scan"], body=body),
             helper.make_node("Add", ["y", "y"], ["y2"])]
    inputs = [value("x", F, [2]), value("y0", F, [2]), value("limit", I64, [])]
    inputs += [value("m", I64, [])] if with_m else []
    inputs += [value("c", B, [])] if with_cond else []
    return model(nodes, inputs, [value("y", F, None), value("scan", F, None), value("y2", F, None)])


def _loop_oracle(x, y0, limit, m, cond):
    """ONNX's Loop: while (no M or i < M) and cond, where cond is the
    input's, then the body's; without a cond input the body's is ignored."""
    y, scans, i, going = y0.copy(), [], 0, True if cond is None else cond
    while (m is None or i < m) and going:
        y = y + x * np.float32(i)
        body_cond = bool(i < limit)
        scans.append(y + x if body_cond else y - x)
        i += 1
        if cond is not None:
            going = body_cond
    return y, (np.stack(scans) if scans else np.zeros((0, 2), np.float32))


@pytest.mark.parametrize("with_m,with_cond,m,limit,cond", [
    (True, True, 5, 10, True),       # M ends it
    (True, True, 5, 2, True),        # the body's cond ends it (i = 2 is the last)
    (True, False, 4, 1, None),       # no cond input: M iterations whatever the body says
    (False, True, None, 3, True),    # no M: the body's cond ends it
    (True, True, 0, 10, True),       # no iteration: the initial values, an empty scan
    (True, True, 6, 10, False),      # cond false at the start: no iteration
])
def test_loop_carries_values_and_stacks_its_scan_outputs(with_m, with_cond, m, limit, cond):
    x = np.array([0.75, -1.5], np.float32)
    y0 = np.array([1.0, 0.125], np.float32)
    feeds = {"x": x, "y0": y0, "limit": np.array(limit, np.int64)}
    if with_m:
        feeds["m"] = np.array(m, np.int64)
    if with_cond:
        feeds["c"] = np.array(cond)
    y, scan = _loop_oracle(x, y0, limit, m if with_m else None, cond if with_cond else None)
    # ONNX's Loop text: without a cond input the body's cond is "ignored";
    # ONNX Runtime 1.32 stops on it all the same, and onnx.reference never
    # starts (it reads the missing cond as false) and cannot stack zero
    # iterations' scan outputs. Those cases are held to the oracle alone.
    _check(_loop_model(with_m, with_cond), feeds, {"y": y, "scan": scan, "y2": y + y},
           with_ort=with_cond, with_reference=with_cond and len(scan) > 0)


def test_loop_without_m_or_cond_is_refused_rather_than_endless():
    body = _graph([helper.make_node("Identity", ["c_in"], ["c_out"]),
                   helper.make_node("Identity", ["y_in"], ["y_out"])],
                  [value("i", I64, []), value("c_in", B, []), value("y_in", F, None)],
                  [value("c_out", B, []), value("y_out", F, None)], "body")
    data = model([helper.make_node("Loop", ["", "", "y0"], ["y"], body=body)],
                 [value("y0", F, [1])], [value("y", F, None)])
    with pytest.raises(so.UnsupportedModelError, match="neither M nor cond"):
        so.load(data)


def test_loop_rejects_a_body_of_the_wrong_arity():
    body = _graph([helper.make_node("Identity", ["c_in"], ["c_out"])],
                  [value("i", I64, []), value("c_in", B, [])], [value("c_out", B, [])], "body")
    data = model([helper.make_node("Loop", ["m", "", "y0"], ["y"], body=body)],
                 [value("m", I64, []), value("y0", F, [1])], [value("y", F, None)])
    with pytest.raises(so.UnsupportedModelError, match="body has 2 inputs; it must have 3"):
        so.load(data)


# ---- Scan ----------------------------------------------------------------------

def _scan_model(in_axis: int, in_dir: int, out_axis: int, out_dir: int) -> bytes:
    # state <- state + slice * w (w an outer intermediate); scanned: state - slice
    body = _graph([helper.make_node("Mul", ["slice", "w"], ["sw"]),
                   helper.make_node("Add", ["state", "sw"], ["state_out"]),
                   helper.make_node("Sub", ["state_out", "slice"], ["scanned"])],
                  [value("state", F, [3]), value("slice", F, [3])],
                  [value("state_out", F, [3]), value("scanned", F, [3])], "body")
    nodes = [helper.make_node("Neg", ["v"], ["w"]),
             helper.make_node("Scan", ["s0", "xs"], ["s", "ys"], body=body, num_scan_inputs=1,
                              scan_input_axes=[in_axis], scan_input_directions=[in_dir],
                              scan_output_axes=[out_axis], scan_output_directions=[out_dir]),
             helper.make_node("Abs", ["ys"], ["a"]),
             helper.make_node("Neg", ["ys"], ["b"])]
    return model(nodes, [value("s0", F, [3]), value("xs", F, None), value("v", F, [3])],
                 [value("s", F, None), value("ys", F, None), value("a", F, None), value("b", F, None)],
                 opset=16)


@pytest.mark.parametrize("in_axis,in_dir,out_axis,out_dir", [
    (0, 0, 0, 0), (1, 0, 0, 0), (1, 1, 0, 0), (0, 1, 1, 1), (-1, 0, -1, 1)])
def test_scan_axes_and_directions(in_axis, in_dir, out_axis, out_dir):
    rng = np.random.default_rng(21)
    xs = (rng.standard_normal((4, 3)) if in_axis == 0 else rng.standard_normal((3, 4))).astype(np.float32)
    s0 = rng.standard_normal(3).astype(np.float32)
    v = rng.standard_normal(3).astype(np.float32)
    slices = [np.take(xs, t, axis=in_axis) for t in range(4)]
    if in_dir:
        slices = slices[::-1]
    state, outs = s0.copy(), []
    for sl in slices:
        state = state + sl * (-v)
        outs.append(state - sl)
    if out_dir:
        outs = outs[::-1]
    ys = np.stack(outs, axis=out_axis)
    # onnx.reference's Scan knows axis 0 and direction 0 only
    _check(_scan_model(in_axis, in_dir, out_axis, out_dir), {"s0": s0, "xs": xs, "v": v},
           {"s": state, "ys": ys, "a": np.abs(ys), "b": -ys},
           with_reference=(in_axis, in_dir, out_axis, out_dir) == (0, 0, 0, 0))
