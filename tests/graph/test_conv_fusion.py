"""A Conv's absorbed BatchNormalization and residual Add (csrc/graph/graph_fuse.c,
the epilogue of isa/epilogue_template.h): Conv -> BatchNormalization -> Add ->
activation run as one node in both modes, and exact mode gives the bits of the
graph as written.

Each case is checked three ways:
- bit for bit against a numpy float32 oracle of the documented steps (the
  convolution's serial sum from +0 in (c, ky, kx) order, + bias, then
  ((v - mean) * r) * weight + bias with r = 1 / sqrt(var + eps), + residual,
  the activation, NaN made canonical), exact mode, every path, 1 and 2
  threads;
- bit for bit against the same graph with every intermediate also a graph
  output, which nothing fuses (both modes where fast mode folds no
  BatchNormalization into the weights);
- against ONNX Runtime within float32 rounding (finite inputs).

The cases cover every convolution route (products over gathered patches,
the unit-stride offsets route, pointwise, few columns, depthwise, 1-D, 3-D),
special values, residuals that broadcast (the unfused fallback), either
operand order of the Add, and the patterns that must not fuse."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper  # noqa: E402

import samebits  # noqa: E402
import samebits.onnx as so  # noqa: E402
from onnx_cases import bits, graph_model, run_everywhere  # noqa: E402

F = TensorProto.FLOAT
NAN = np.uint32(0x7FC00000).view(np.float32)
SIXTH = np.float32(1.0 / 6.0)


def conv_oracle(x, w, b, stride, pads, dil, group):
    """Exact-mode convolution over any spatial rank: per output a serial
    float32 sum from +0 over (c, taps in row-major order), padding taps real
    products with +0, then one add of the bias."""
    n, c = x.shape[:2]
    cout, cg = w.shape[:2]
    k = w.shape[2:]
    dims = len(k)
    xp = np.pad(x, [(0, 0), (0, 0)] + [(pads[d], pads[dims + d]) for d in range(dims)])
    outs = [(xp.shape[2 + d] - ((k[d] - 1) * dil[d] + 1)) // stride[d] + 1 for d in range(dims)]
    og = cout // group
    y = np.zeros((n, cout, *outs), np.float32)
    with np.errstate(all="ignore"):
        for g in range(group):
            acc = np.zeros((n, og, *outs), np.float32)
            for ci in range(cg):
                for tap in itertools.product(*(range(v) for v in k)):
                    sl = tuple(slice(tap[d] * dil[d], tap[d] * dil[d] + (outs[d] - 1) * stride[d] + 1,
                                     stride[d]) for d in range(dims))
                    xs = xp[(slice(None), g * cg + ci) + sl][:, None]
                    ws = w[(slice(g * og, (g + 1) * og), ci) + tap].reshape((1, og) + (1,) * dims)
                    acc = np.add(acc, np.multiply(ws, xs, dtype=np.float32), dtype=np.float32)
            y[:, g * og:(g + 1) * og] = acc
        if b is not None:
            y = np.add(y, b.reshape((1, cout) + (1,) * dims), dtype=np.float32)
    return y


def activation(v, name):
    with np.errstate(all="ignore"):
        if name is None:
            return v
        if name == "Relu":
            return np.where(v <= 0, np.float32(0), v).astype(np.float32)
        if name == "HardSwish":   # x * max(0, min(1, x/6 + 1/2)), as sb_act_hardswish_onnx
            h = np.add(np.multiply(v, SIXTH, dtype=np.float32), np.float32(0.5), dtype=np.float32)
            h = np.where(h <= 0, np.float32(0), np.where(h >= 1, np.float32(1), h))
            return np.multiply(v, h.astype(np.float32), dtype=np.float32)
    raise ValueError(name)


def chain_oracle(x, w, b, stride, pads, dil, group, bn, residual, act, eps):
    y = conv_oracle(x, w, b, stride, pads, dil, group)
    shape = (1, y.shape[1]) + (1,) * (y.ndim - 2)
    with np.errstate(all="ignore"):
        if bn is not None:
            scale, beta, mean, var = (v.reshape(shape) for v in bn)
            r = np.divide(np.float32(1), np.sqrt(np.add(var, np.float32(eps), dtype=np.float32)),
                          dtype=np.float32)
            y = np.subtract(y, mean, dtype=np.float32)
            y = np.multiply(y, r, dtype=np.float32)
            y = np.multiply(y, scale, dtype=np.float32)
            y = np.add(y, beta, dtype=np.float32)
            y = np.where(np.isnan(y), NAN, y)
        if residual is not None:
            y = np.add(y, residual, dtype=np.float32)
    y = activation(y, act)
    return np.where(np.isnan(y), NAN, y).astype(np.float32)


# name: x shape, w shape, strides, pads, dilations, group, bias, BN, residual shape
# (None: no Add; "same": the output's), activation, residual first in the Add
CASES = {
    "gathered_3x3_s2": ((1, 5, 9, 8), (6, 5, 3, 3), [2, 2], [1, 1, 1, 1], [1, 1], 1, True, True,
                        "same", "Relu", False),
    "offsets_3x3": ((2, 3, 6, 20), (5, 3, 3, 3), [1, 1], [1, 1, 1, 1], [1, 1], 1, False, True,
                    "same", "Relu", True),
    "pointwise": ((1, 7, 5, 6), (9, 7, 1, 1), [1, 1], [0, 0, 0, 0], [1, 1], 1, True, True, "same",
                  "HardSwish", False),
    "few_columns": ((2, 6, 2, 3), (4, 6, 2, 2), [1, 1], [0, 0, 1, 0], [1, 1], 1, True, True,
                    "same", None, False),
    "depthwise": ((1, 6, 7, 9), (6, 1, 3, 3), [1, 1], [1, 1, 1, 1], [1, 1], 6, False, True, None,
                  "HardSwish", False),
    "depthwise_residual": ((2, 4, 6, 5), (4, 1, 5, 5), [1, 1], [2, 2, 2, 2], [1, 1], 4, True, True,
                           "same", "Relu", True),
    "groups_dilated": ((1, 4, 8, 8), (6, 2, 3, 3), [1, 1], [2, 1, 2, 0], [2, 2], 2, True, False,
                       "same", "Relu", False),
    "conv1d": ((2, 3, 11), (4, 3, 3), [1], [1, 1], [1], 1, True, True, "same", "Relu", False),
    "conv3d": ((1, 2, 4, 4, 3), (3, 2, 2, 2, 2), [1, 1, 1], [0, 1, 0, 1, 0, 1], [1, 1, 1], 1, True,
               True, "same", "Relu", True),
    "bn_only": ((1, 3, 6, 6), (4, 3, 3, 3), [1, 1], [1, 1, 1, 1], [1, 1], 1, False, True, None,
                None, False),
    "residual_broadcast_channel": ((1, 3, 5, 5), (4, 3, 3, 3), [1, 1], [1, 1, 1, 1], [1, 1], 1,
                                   True, True, (1, 4, 1, 1), "Relu", False),
    "residual_broadcast_batch": ((1, 3, 5, 5), (4, 3, 3, 3), [1, 1], [1, 1, 1, 1], [1, 1], 1,
                                 True, False, (3, 4, 5, 5), "Relu", True),
}


def build(case, seed, split):
    """The model, its feeds, the oracle's output, and what the fused node is
    named. split: every intermediate is also a graph output (nothing fuses)."""
    xs, ws, stride, pads, dil, group, with_bias, with_bn, res, act, res_first = CASES[case]
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(xs).astype(np.float32)
    x.reshape(-1)[:5] = [np.inf, -0.0, 1e-40, np.nan, -np.inf]
    w = (rng.standard_normal(ws) * 0.5).astype(np.float32)
    w.reshape(-1)[1] = 3e-39   # a subnormal weight
    cout = ws[0]
    b = rng.standard_normal(cout).astype(np.float32) if with_bias else None
    bn = None
    if with_bn:
        bn = [rng.standard_normal(cout).astype(np.float32),          # scale
              rng.standard_normal(cout).astype(np.float32),          # B
              (rng.standard_normal(cout) * 0.3).astype(np.float32),  # mean
              (rng.random(cout) + 0.05).astype(np.float32)]          # var
        bn[3][0] = 0.0              # r = 1 / sqrt(eps): large
        bn[0][-1] = -0.0
    eps = 1e-3
    inputs = {"x": (F, list(xs))}
    inits = {"w": w}
    nodes = [helper.make_node("Neg", ["x"], ["xn"])]   # the convolution reads an intermediate
    conv_in = ["xn", "w"] + (["b"] if with_bias else [])
    if with_bias:
        inits["b"] = b
    spatial = len(ws) - 2
    nodes.append(helper.make_node("Conv", conv_in, ["c"], strides=stride, pads=pads, dilations=dil,
                                  group=group, kernel_shape=list(ws[2:])))
    last, intermediates = "c", ["c"]
    if with_bn:
        for name, v in zip(("s", "bb", "m", "v"), bn):
            inits[name] = v
        nodes.append(helper.make_node("BatchNormalization", ["c", "s", "bb", "m", "v"], ["n"],
                                      epsilon=eps))
        last = "n"
        intermediates.append("n")
    residual = None
    feeds = {"x": x}
    y_shape = conv_oracle(-x, w, b, stride, pads, dil, group).shape
    if res is not None:
        rs = y_shape if res == "same" else res
        r = rng.standard_normal(rs).astype(np.float32)
        r.reshape(-1)[:3] = [np.nan, -np.inf, -0.0]
        inputs["r"] = (F, list(rs))
        feeds["r"] = r
        nodes.append(helper.make_node("Abs", ["r"], ["ra"]))   # a computed residual
        residual = np.abs(r)
        residual = np.where(np.isnan(residual), NAN, residual)
        nodes.append(helper.make_node("Add", ["ra", last] if res_first else [last, "ra"], ["a"]))
        last = "a"
        intermediates.append("a")
    if act is not None:
        nodes.append(helper.make_node(act, [last], ["y"]))
    else:
        nodes.append(helper.make_node("Identity", [last], ["y"]))
    outputs = {"y": (F, None)}
    if split:
        outputs |= {v: (F, None) for v in intermediates}
    data = graph_model(nodes, inputs, outputs, inits=inits)
    want = chain_oracle(-x, w, b, stride, pads, dil, group, bn, residual, act, eps)
    # (a residual that broadcasts is absorbed too: the node runs the Add
    # itself then, unfused)
    fused = "Conv" + ("+batch_norm" if with_bn else "") + ("+add" if res is not None else "")
    assert spatial in (1, 2, 3)
    return data, feeds, want, fused, act


@pytest.mark.parametrize("case", sorted(CASES))
def test_fused_chain_exact_bits(case):
    data, feeds, want, fused, act = build(case, 7, split=False)
    split, _, _, _, _ = build(case, 7, split=True)
    for what, out in run_everywhere(data, feeds, modes=("exact",)):
        assert np.array_equal(bits(out["y"]), bits(want)), f"{case} {what}: the oracle"
    for what, out in run_everywhere(split, feeds, modes=("exact",), threads=(1,)):
        assert np.array_equal(bits(out["y"]), bits(want)), f"{case} {what}: the unfused graph"
    # the chain did run as one node
    profile: dict = {}
    so.load(data, mode="exact").run(feeds, profile=profile)
    names = [k for k in profile if k.startswith("Conv")]
    assert names == [fused + (f"+{act.lower()}" if act == "Relu" else "+hardswish_onnx" if act
                              else "")], (case, names)
    assert not {"BatchNormalization", "Add", "Relu", "HardSwish"} & set(profile), profile


@pytest.mark.parametrize("case", sorted(CASES))
def test_fused_chain_fast_and_onnxruntime(case):
    data, feeds, want, _, _ = build(case, 11, split=False)
    split, _, _, _, _ = build(case, 11, split=True)
    finite = {k: np.nan_to_num(v, nan=0.5, posinf=2.0, neginf=-2.0) for k, v in feeds.items()}
    ref = ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(["y"], finite)[0]
    for mode in ("exact", "fast"):
        got = so.load(data, mode=mode).run(finite)["y"]
        np.testing.assert_allclose(got, ref, rtol=2e-4, atol=2e-4, err_msg=f"{case} {mode}")
    # fast mode folds a BatchNormalization into constant weights (other
    # bits); without one it runs the same operations fused or not
    if not CASES[case][7]:
        for path in samebits.paths():
            with samebits.use_path(path):
                unfused = so.load(split, mode="fast", threads=1).run(feeds)["y"]
                for n in (1, 2):
                    got = so.load(data, mode="fast", threads=n).run(feeds)["y"]
                    assert np.array_equal(bits(got), bits(unfused)), f"{case} {path} threads={n}"


def test_residual_read_twice_and_outputs_do_not_fuse():
    """Patterns the rewrite leaves alone: x + x on the Conv's output, a
    BatchNormalization whose output is also a graph output, and a constant
    residual; each still gives the graph's bits."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((1, 2, 5, 5)).astype(np.float32)
    w = rng.standard_normal((3, 2, 3, 3)).astype(np.float32)
    k = rng.standard_normal((1, 3, 5, 5)).astype(np.float32)
    bn = [np.float32([1.5, -2.0, 0.25]), np.float32([0.1, 0.2, -0.3]),
          np.float32([0.0, 1.0, -1.0]), np.float32([1.0, 2.0, 0.5])]
    inits = {"w": w, "k": k, "s": bn[0], "bb": bn[1], "m": bn[2], "v": bn[3]}
    conv = helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1])
    norm = helper.make_node("BatchNormalization", ["c", "s", "bb", "m", "v"], ["n"])
    graphs = {
        "twice": ([conv, norm, helper.make_node("Add", ["n", "n"], ["y"])], {"y": (F, None)}),
        "output": ([conv, norm, helper.make_node("Relu", ["n"], ["y"])],
                   {"y": (F, None), "n": (F, None)}),
        "constant": ([conv, norm, helper.make_node("Add", ["n", "k"], ["y"])], {"y": (F, None)}),
    }
    conv_y = conv_oracle(x, w, None, [1, 1], [1, 1, 1, 1], [1, 1], 1)
    n = chain_oracle(x, w, None, [1, 1], [1, 1, 1, 1], [1, 1], 1, bn, None, None, 1e-5)
    want = {"twice": np.add(n, n, dtype=np.float32), "output": activation(n, "Relu"),
            "constant": np.add(n, k, dtype=np.float32)}
    assert conv_y.shape == n.shape
    for name, (nodes, outputs) in graphs.items():
        data = graph_model(nodes, {"x": (F, [1, 2, 5, 5])}, outputs, inits=inits)
        for what, out in run_everywhere(data, {"x": x}, modes=("exact",), threads=(1,)):
            assert np.array_equal(bits(out["y"]), bits(want[name])), f"{name} {what}"
        profile: dict = {}
        so.load(data, mode="exact").run({"x": x}, profile=profile)
        if name == "output":
            assert "Relu" in profile and "Conv+batch_norm" in profile, profile
        else:
            assert "Add" in profile and "Conv+batch_norm" in profile, profile


def test_residual_that_does_not_broadcast_is_clear():
    """A residual that does not broadcast with the convolution's output is
    the Add's error, raised as ValueError naming the fused node."""
    w = np.ones((2, 1, 1, 1), np.float32)
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"]),
             helper.make_node("Add", ["c", "r"], ["y"])]
    data = graph_model(nodes, {"x": (F, None), "r": (F, None)}, {"y": (F, None)}, inits={"w": w})
    with pytest.raises(ValueError, match="broadcast"):
        so.load(data).run({"x": np.ones((1, 1, 3, 3), np.float32),
                           "r": np.ones((1, 3, 3, 3), np.float32)})


@pytest.mark.parametrize("node_name", ["", "same"])
def test_two_fusions_whose_nodes_share_a_name(node_name):
    """Two Conv -> BatchNormalization pairs whose nodes have no name, or one
    name (ONNX does not make node names unique): each pair keeps its own
    statistics. The constants a fusion makes were once named after the
    BatchNormalization node alone, so the second pair's replaced the first's
    and both modes gave wrong values (seed 60064 of the long differential
    pass)."""
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 3, 6, 5)).astype(np.float32)
    inits = {"w1": rng.standard_normal((4, 3, 3, 3)).astype(np.float32),
             "b1": rng.standard_normal(4).astype(np.float32),
             "w2": rng.standard_normal((4, 4, 1, 1)).astype(np.float32)}
    bns = []
    for k in (1, 2):
        bn = [rng.uniform(0.5, 2, 4).astype(np.float32), rng.standard_normal(4).astype(np.float32),
              rng.standard_normal(4).astype(np.float32), rng.uniform(0.5, 2, 4).astype(np.float32)]
        inits.update({f"s{k}": bn[0], f"bb{k}": bn[1], f"m{k}": bn[2], f"v{k}": bn[3]})
        bns.append(bn)
    nodes = [helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1], name=node_name),
             helper.make_node("BatchNormalization", ["c1", "s1", "bb1", "m1", "v1"], ["n1"],
                              name=node_name),
             helper.make_node("Conv", ["n1", "w2"], ["c2"], name=node_name),
             helper.make_node("BatchNormalization", ["c2", "s2", "bb2", "m2", "v2"], ["y"],
                              name=node_name)]
    data = graph_model(nodes, {"x": (F, [2, 3, 6, 5])}, {"y": (F, None)}, inits=inits)
    first = chain_oracle(x, inits["w1"], inits["b1"], [1, 1], [1, 1, 1, 1], [1, 1], 1, bns[0],
                         None, None, 1e-5)
    want = chain_oracle(first, inits["w2"], None, [1, 1], [0, 0, 0, 0], [1, 1], 1, bns[1], None,
                        None, 1e-5)
    for what, out in run_everywhere(data, {"x": x}, modes=("exact",)):
        assert np.array_equal(bits(out["y"]), bits(want)), what
    # fast mode folds each BatchNormalization into its Conv's weights
    # (ONNX Runtime refuses the model with two nodes named alike)
    for what, out in run_everywhere(data, {"x": x}, modes=("fast",)):
        np.testing.assert_allclose(out["y"], want, rtol=2e-4, atol=2e-4, err_msg=what)


def _assert_fused_with_unfused_bits(data: bytes, split: bytes, x: np.ndarray, suffix: str,
                                    absorbed: set, label: str) -> None:
    """In each mode, on every path, at 1 and 2 threads: `data` gives the bits
    of `split` (the same graph with a link of the pattern exposed, which
    nothing fuses), and runs as a node named `...+suffix` with none of the
    `absorbed` operators left."""
    for mode in ("exact", "fast"):
        for path in samebits.paths():
            with samebits.use_path(path):
                want = so.load(split, mode=mode, threads=1).run({"x": x})["y"]
                for n in (1, 2):
                    got = so.load(data, mode=mode, threads=n).run({"x": x})["y"]
                    assert np.array_equal(bits(got), bits(want)), f"{label} {mode} {path} {n}"
        profile: dict = {}
        so.load(data, mode=mode).run({"x": x}, profile=profile)
        assert [k for k in profile if k.endswith("+" + suffix)], profile
        assert not absorbed & set(profile), profile


def _swish_graphs(rng):
    """name -> (nodes, inputs, inits) of products followed by the pair
    exporters write for SiLU: Sigmoid(v) and Mul of v and it, either order."""
    conv_w = rng.standard_normal((6, 3, 3, 3)).astype(np.float32)
    bn = {"s": rng.uniform(0.5, 2, 6).astype(np.float32), "bb": rng.standard_normal(6).astype(np.float32),
          "m": rng.standard_normal(6).astype(np.float32), "v": rng.uniform(0.5, 2, 6).astype(np.float32)}
    lin_w = rng.standard_normal((12, 7)).astype(np.float32)
    lin_b = rng.standard_normal(7).astype(np.float32)
    image = {"x": (F, [2, 3, 8, 9])}
    rows = {"x": (F, [5, 12])}

    def pair(v, first):
        return [helper.make_node("Sigmoid", [v], ["s_out"]),
                helper.make_node("Mul", [v, "s_out"] if first else ["s_out", v], ["y"])]
    return {
        "conv": ([helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1])] + pair("c", True),
                 image, {"w": conv_w}),
        "conv_bn_sigmoid_first": (
            [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("BatchNormalization", ["c", "s", "bb", "m", "v"], ["n"])]
            + pair("n", False), image, {"w": conv_w, **bn}),
        "gemm": ([helper.make_node("Gemm", ["x", "w", "b"], ["c"])] + pair("c", True), rows,
                 {"w": lin_w, "b": lin_b}),
        "matmul_bias": ([helper.make_node("MatMul", ["x", "w"], ["p"]),
                         helper.make_node("Add", ["p", "b"], ["c"])] + pair("c", False), rows,
                        {"w": lin_w, "b": lin_b}),
    }


@pytest.mark.parametrize("name", ["conv", "conv_bn_sigmoid_first", "gemm", "matmul_bias"])
def test_swish_pair_fuses_into_the_product(name):
    """Conv, Gemm and MatMul + bias followed by Sigmoid and Mul (YOLOv5/v8,
    EfficientNet) run as one node whose epilogue is swish_onnx: in each
    mode, on every path, at 1 and 2 threads, the bits of the same graph with
    the product's output also a graph output (which nothing fuses), with
    special values; and ONNX Runtime's values on finite inputs."""
    rng = np.random.default_rng(9)
    nodes, inputs, inits = _swish_graphs(rng)[name]
    shape = inputs["x"][1]
    x = (rng.standard_normal(shape) * 3).astype(np.float32)
    x.reshape(-1)[:5] = [np.nan, np.inf, -np.inf, -0.0, 1e-40]
    data = graph_model(nodes, inputs, {"y": (F, None)}, inits=inits)
    split = graph_model(nodes, inputs, {"y": (F, None), "s_out": (F, None)}, inits=inits)
    _assert_fused_with_unfused_bits(data, split, x, "swish_onnx", {"Sigmoid", "Mul"}, name)
    finite = np.nan_to_num(x, nan=0.5, posinf=2.0, neginf=-2.0)
    ref = ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(["y"], {"x": finite})[0]
    for mode in ("exact", "fast"):
        got = so.load(data, mode=mode).run({"x": finite})["y"]
        np.testing.assert_allclose(got, ref, rtol=2e-4, atol=2e-4, err_msg=f"{name} {mode}")


def test_swish_pair_that_does_not_fit_stays_apart():
    """The pair fuses only as exporters write it: not when the Sigmoid's
    output is read again, when the product's output has a third reader, or
    when the Mul takes another value; each graph keeps its own bits."""
    rng = np.random.default_rng(10)
    w = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    x = rng.standard_normal((1, 3, 6, 6)).astype(np.float32)
    conv = helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1])
    sig = helper.make_node("Sigmoid", ["c"], ["s"])
    graphs = {
        "sigmoid_read_twice": [conv, sig, helper.make_node("Mul", ["c", "s"], ["m"]),
                               helper.make_node("Add", ["m", "s"], ["y"])],
        "third_reader": [conv, sig, helper.make_node("Mul", ["c", "s"], ["m"]),
                         helper.make_node("Add", ["m", "c"], ["y"])],
        "mul_of_another": [conv, sig, helper.make_node("Relu", ["c"], ["r"]),
                           helper.make_node("Mul", ["r", "s"], ["y"])],
    }
    for name, nodes in graphs.items():
        data = graph_model(nodes, {"x": (F, [1, 3, 6, 6])}, {"y": (F, None)}, inits={"w": w})
        profile: dict = {}
        got = so.load(data, mode="exact").run({"x": x}, profile=profile)["y"]
        assert "Sigmoid" in profile and not [k for k in profile if "swish" in k], (name, profile)
        ref = ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(["y"], {"x": x})[0]
        np.testing.assert_allclose(got, ref, rtol=2e-5, atol=2e-5, err_msg=name)


@pytest.mark.parametrize("attrs,opset", [({"training_mode": 0}, 15), ({"spatial": 1}, 7)])
def test_batch_norm_with_its_inference_attributes_written_out_fuses(attrs, opset):
    """A BatchNormalization whose attributes spell out the inference form
    (paddle2onnx writes training_mode = 0; opset 7-8 exporters spatial = 1)
    is still absorbed into the Conv, with the bits of the graph with the
    Conv's output exposed (which nothing fuses), in both modes."""
    rng = np.random.default_rng(12)
    x = rng.standard_normal((1, 3, 6, 7)).astype(np.float32)
    inits = {"w": rng.standard_normal((4, 3, 3, 3)).astype(np.float32),
             "s": rng.uniform(0.5, 2, 4).astype(np.float32), "bb": rng.standard_normal(4).astype(np.float32),
             "m": rng.standard_normal(4).astype(np.float32), "v": rng.uniform(0.5, 2, 4).astype(np.float32)}
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("BatchNormalization", ["c", "s", "bb", "m", "v"], ["y"], **attrs)]
    data = graph_model(nodes, {"x": (F, [1, 3, 6, 7])}, {"y": (F, None)}, inits=inits, opset=opset)
    split = graph_model(nodes, {"x": (F, [1, 3, 6, 7])}, {"y": (F, None), "c": (F, None)},
                        inits=inits, opset=opset)
    want = so.load(split, mode="exact").run({"x": x})["y"]
    for what, out in run_everywhere(data, {"x": x}, modes=("exact",)):
        assert np.array_equal(bits(out["y"]), bits(want)), what
    for mode in ("exact", "fast"):
        profile: dict = {}
        so.load(data, mode=mode).run({"x": x}, profile=profile)
        assert "BatchNormalization" not in profile, (mode, profile)
    ref = ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(["y"], {"x": x})[0]
    np.testing.assert_allclose(so.load(data, mode="fast").run({"x": x})["y"], ref, rtol=2e-4,
                               atol=2e-4)


def _hardswish_chain(v, opset, add_first=True, mul_first=True, three=3.0, six=6.0, hi=6.0):
    """paddle2onnx's HardSwish on v: Add(v, 3) -> Clip(0, 6) -> Mul(v, .) -> Div(., 6)."""
    clip = (helper.make_node("Clip", ["a"], ["cl"], min=0.0, max=hi) if opset < 11 else
            helper.make_node("Clip", ["a", "zero", "hi"], ["cl"]))
    return ([helper.make_node("Add", [v, "three"] if add_first else ["three", v], ["a"]), clip,
             helper.make_node("Mul", [v, "cl"] if mul_first else ["cl", v], ["m"]),
             helper.make_node("Div", ["m", "six"], ["y"])],
            {"three": np.float32([three]), "six": np.float32([six]), "zero": np.float32(0.0),
             "hi": np.float32(hi)} if opset >= 11 else
            {"three": np.float32([three]), "six": np.float32([six])})


@pytest.mark.parametrize("opset,add_first,mul_first", [(13, True, True), (13, False, False),
                                                        (9, True, False)])
def test_paddle_hardswish_chain_fuses(opset, add_first, mul_first):
    """The chain paddle2onnx writes for HardSwish after a Conv (+
    BatchNormalization) runs as the Conv's epilogue (torch's hardswish, step
    for step): the bits of the graph with the chain's Clip exposed (which
    nothing fuses) on every path at 1 and 2 threads with special values, in
    both modes; ONNX Runtime's values."""
    rng = np.random.default_rng(13)
    x = (rng.standard_normal((1, 3, 7, 6)) * 4).astype(np.float32)
    x.reshape(-1)[:5] = [np.nan, np.inf, -np.inf, -0.0, -3.0]
    chain, consts = _hardswish_chain("n", opset, add_first, mul_first)
    inits = {"w": rng.standard_normal((5, 3, 3, 3)).astype(np.float32),
             "s": rng.uniform(0.5, 2, 5).astype(np.float32), "bb": rng.standard_normal(5).astype(np.float32),
             "m0": rng.standard_normal(5).astype(np.float32), "v": rng.uniform(0.5, 2, 5).astype(np.float32),
             **consts}
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("BatchNormalization", ["c", "s", "bb", "m0", "v"], ["n"])] + chain
    data = graph_model(nodes, {"x": (F, [1, 3, 7, 6])}, {"y": (F, None)}, inits=inits, opset=opset)
    split = graph_model(nodes, {"x": (F, [1, 3, 7, 6])}, {"y": (F, None), "cl": (F, None)},
                        inits=inits, opset=opset)
    _assert_fused_with_unfused_bits(data, split, x, "hardswish", {"Add", "Clip", "Mul", "Div"},
                                    f"opset {opset}")
    finite = np.nan_to_num(x, nan=0.5, posinf=2.0, neginf=-2.0)
    ref = ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(["y"], {"x": finite})[0]
    np.testing.assert_allclose(so.load(data, mode="exact").run({"x": finite})["y"], ref, rtol=2e-5,
                               atol=2e-5)


@pytest.mark.parametrize("change", [{"three": 2.5}, {"six": 5.0}, {"hi": 5.0}])
def test_hardswish_chain_with_other_constants_stays_apart(change):
    """Another constant in the chain (Add 2.5, Div 5, Clip to [0, 5]) is not
    hardswish: the nodes run as written, with ONNX Runtime's values."""
    rng = np.random.default_rng(14)
    x = (rng.standard_normal((1, 2, 5, 5)) * 4).astype(np.float32)
    chain, consts = _hardswish_chain("c", 13, **change)
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1])] + chain
    data = graph_model(nodes, {"x": (F, [1, 2, 5, 5])}, {"y": (F, None)},
                       inits={"w": rng.standard_normal((3, 2, 3, 3)).astype(np.float32), **consts},
                       opset=13)
    profile: dict = {}
    got = so.load(data, mode="exact").run({"x": x}, profile=profile)["y"]
    assert "Clip" in profile and not [k for k in profile if "hardswish" in k], profile
    ref = ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(["y"], {"x": x})[0]
    np.testing.assert_allclose(got, ref, rtol=2e-5, atol=2e-5)
