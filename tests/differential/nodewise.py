"""The judge's last step: a graph judged node by node (docs/differential.md).

When a graph's output differs from both oracles, that can be a samebits bug,
or a graph that amplifies differences each within tolerance: Sin of a value
near 1e20 made by a normalization 1 ulp apart, a dot product whose terms
cancel (its float32 value then depends on whether the multiply-adds are
fused), a sign of zero that ONNX leaves open turned into +-inf. To tell them
apart, samebits runs the graph once more with every intermediate value as an
output, and each node is asked of the oracles alone, fed samebits' own
inputs. Samebits is right when

- exposing the intermediates leaves its outputs as they were judged (so the
  intermediates are what the judged run computed), and
- every node agrees with ONNX Runtime or the reference evaluator on those
  inputs, or its difference is one the judge excuses, or the node is
  ill-conditioned there: the reference evaluator run in float64 on inputs
  moved by up to 1 float32 ulp spreads at least as far as samebits' value.

A bug in one node then shows at that node, whichever graph it is in."""
from __future__ import annotations

import copy
from typing import Callable, Optional

import numpy as np
import onnx
from onnx import helper

import samebits
import samebits.onnx as so

# the node's own tolerance: the widest family's (product) times the chain
# factor, since one node (Attention, LayerNormalization) can be a chain
NODE_RTOL = 8e-5
EXACT_NODES = {"Identity", "Reshape", "Flatten", "Transpose", "Squeeze", "Unsqueeze", "Slice",
               "Expand", "Concat", "Split", "Gather", "GatherElements", "GatherND", "Tile",
               "Neg", "Abs", "Relu", "Max", "Min", "Clip", "Where", "Equal", "Less", "Greater",
               "LessOrEqual", "GreaterOrEqual", "Not", "And", "Or", "Xor", "Cast", "CastLike",
               "Floor", "Ceil", "Round", "Sign", "MaxPool", "GlobalMaxPool", "ReduceMax",
               "ReduceMin", "ArgMax", "ArgMin", "TopK", "Shape", "Size", "Pad", "DepthToSpace",
               "SpaceToDepth", "Trilu", "OneHot", "ScatterElements", "ScatterND", "Range"}
PERTURBED_RUNS = 8


def _run_samebits(model, feeds: dict, mode: str, path: str, threads: int) -> dict:
    with samebits.use_path(path):
        session = so.load(model.SerializeToString(), mode=mode, threads=threads)
    return session.run(feeds)


def _exposed(model):
    """The model with every node output that is not yet a graph output
    added as one."""
    m = copy.deepcopy(model)
    have = {o.name for o in m.graph.output}
    for node in m.graph.node:
        for name in node.output:
            if name and name not in have:
                m.graph.output.append(helper.make_empty_tensor_value_info(name))
                have.add(name)
    return m


def _node_model(model, node, values: dict):
    """One node as a model: its non-constant inputs fed, the initializers it reads kept."""
    inits = {i.name: i for i in model.graph.initializer}
    inputs, kept = [], []
    for name in node.input:
        if not name or name in {i.name for i in inputs}:
            continue
        if name in inits:
            kept.append(inits[name])
            continue
        a = np.asarray(values[name])
        inputs.append(helper.make_tensor_value_info(
            name, helper.np_dtype_to_tensor_dtype(a.dtype), list(a.shape)))
    outputs = [helper.make_empty_tensor_value_info(o) for o in node.output if o]
    graph = helper.make_graph([copy.deepcopy(node)], "node", inputs, outputs, kept)
    m = helper.make_model(graph, opset_imports=list(model.opset_import))
    m.ir_version = model.ir_version
    return m


def _ill_conditioned(node_model, feeds: dict, got: np.ndarray, want: np.ndarray, index: int,
                     rtol: float, reference_run: Callable) -> bool:
    """Whether, at every element where got and want differ, the reference
    evaluator's float64 values at inputs moved by up to 1 float32 ulp
    spread to got (within rtol): the node's float32 value there is not
    determined by its inputs' precision."""
    g = np.asarray(got, np.float64)
    w = np.asarray(want, np.float64)
    if g.shape != w.shape:
        return False
    with np.errstate(invalid="ignore"):
        differs = ~((g == w) | (np.isnan(g) & np.isnan(w)) |
                    (np.abs(g - w) <= rtol * (np.abs(w) + 1)))
    if not differs.any():
        return True
    rng = np.random.default_rng(0)
    lo, hi, nan = w.copy(), w.copy(), np.isnan(w)
    for _ in range(PERTURBED_RUNS):
        moved = {}
        for k, a in feeds.items():
            a = np.asarray(a)
            if a.dtype == np.float32:
                a = a.astype(np.float64) * (1 + rng.uniform(-1, 1, a.shape) * 2.0 ** -23)
            moved[k] = a
        out = reference_run(node_model, moved)
        if not out or np.asarray(out[index]).shape != w.shape:
            return False
        o = np.asarray(out[index], np.float64)
        nan |= np.isnan(o)
        with np.errstate(invalid="ignore"):
            lo, hi = np.fmin(lo, o), np.fmax(hi, o)
    slack = rtol * (np.abs(w) + 1)
    with np.errstate(invalid="ignore"):
        inside = ((g >= lo - slack) & (g <= hi + slack)) | (np.isnan(g) & nan)
    return bool(inside[differs].all())


def _norm_groups(node, x: np.ndarray) -> Optional[np.ndarray]:
    """x as (groups, n): the sets a Layer-, Group- or InstanceNormalization
    node takes one mean and variance over, or None for another node."""
    attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    if node.op_type == "LayerNormalization":
        axis = attrs.get("axis", -1) % max(x.ndim, 1)
        return x.reshape(int(np.prod(x.shape[:axis], dtype=np.int64)), -1)
    if node.op_type == "GroupNormalization" and x.ndim >= 2 and attrs.get("num_groups"):
        return x.reshape(x.shape[0] * attrs["num_groups"], -1)
    if node.op_type == "InstanceNormalization" and x.ndim >= 2:
        return x.reshape(x.shape[0] * x.shape[1], -1)
    return None


def _within_serial_mean_error(node, fed: dict, got: np.ndarray, want: np.ndarray) -> bool:
    """Whether a normalization differs only by the documented serial
    float32 mean's rounding (docs/exact-ops.md), amplified by 1 / sqrt(var +
    eps): over n terms below M in size the mean is off by at most n u M, and
    the output by that times r |scale|, plus n u sqrt(n) |scale| from r's own
    rounding (u = 2^-24; a factor 4 of slack). Judged set by set: a set
    holding NaN or +-inf must give the oracle's values exactly (NaN where it
    is NaN); the bound is taken over the finite sets."""
    x = np.asarray(fed.get(node.input[0]), np.float64) if node.input[0] in fed else None
    if x is None or x.size == 0:
        return False
    groups = _norm_groups(node, x)
    if groups is None or groups.shape[1] == 0:
        return False
    g, w = np.asarray(got, np.float64), np.asarray(want, np.float64)
    if g.shape != x.shape or w.shape != x.shape:
        return False
    g, w = g.reshape(groups.shape), w.reshape(groups.shape)
    finite = np.isfinite(groups).all(axis=1)
    if not finite.any():
        return False
    same = (g == w) | (np.isnan(g) & np.isnan(w))
    if not same[~finite].all():
        return False
    groups, g, w = groups[finite], g[finite], w[finite]
    eps = next((helper.get_attribute_value(a) for a in node.attribute if a.name == "epsilon"), 1e-5)
    n = groups.shape[1]
    r = 1.0 / np.sqrt(groups.var(axis=1) + eps)
    scale = np.asarray(fed[node.input[1]], np.float64) if len(node.input) > 1 and \
        node.input[1] in fed else None
    s = float(np.abs(scale).max()) if scale is not None and scale.size else 1.0
    u = 2.0 ** -24
    bound = 4 * n * u * (float(np.abs(groups).max()) * float(r.max()) + np.sqrt(n)) * s
    if not np.isfinite(w).all():
        return False
    return bool(np.all(np.abs(g - w) <= bound + NODE_RTOL * np.abs(w)))


def judge_nodes(case, feeds: dict, got: dict, mode: str, path: str, threads: int,
                ort_run: Callable, reference_run: Callable, excused: Callable,
                case_type: Callable) -> tuple[bool, str]:
    """(True, why) when the graph's difference is amplification of node
    differences each right by the oracles; (False, what) naming the first
    node that is wrong, or why the graph cannot be judged this way."""
    exposed = _exposed(case.model)
    try:
        values = _run_samebits(exposed, feeds, mode, path, threads)
    except Exception as e:      # noqa: BLE001 - a refusal here is its own finding
        return False, f"samebits fails with its intermediates as outputs: {e}"
    for name, a in got.items():
        b = values.get(name)
        if b is None or np.asarray(b).dtype != np.asarray(a).dtype:
            return False, f"output {name} changes when the intermediates are outputs too"
        # exact mode: the same bits (its fusions keep them); fast mode folds
        # BatchNormalization into a Conv's weights only when the Conv's
        # output is not exposed, so there it must stay within tolerance
        same = np.asarray(b).tobytes() == np.asarray(a).tobytes() if mode == "exact" else \
            _close(np.asarray(a), np.asarray(b), 0.0 if np.asarray(a).dtype.kind != "f" else NODE_RTOL)
        if not same:
            return False, f"output {name} changes when the intermediates are outputs too"
    values = {**feeds, **values}
    notes: list[str] = []
    for node in case.model.graph.node:
        if node.op_type == "Constant":
            continue
        if any(a.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS)
               for a in node.attribute):
            return False, f"node {node.op_type} holds a subgraph: not judged node by node"
        one = _node_model(case.model, node, values)
        fed = {i.name: values[i.name] for i in one.graph.input}
        ort_out = ort_run(one.SerializeToString(), fed, False)
        ref_out = reference_run(one, fed)
        for index, name in enumerate(o for o in node.output if o):
            mine = np.asarray(values[name])
            rtol = 0.0 if node.op_type in EXACT_NODES else NODE_RTOL
            oracles = [np.asarray(o[index]) for o in (ort_out, ref_out) if o is not None]
            if not oracles:
                return False, f"node {node.op_type} ({name}): neither oracle runs it alone"
            if ort_out is not None and _close(mine, np.asarray(ort_out[index]), rtol):
                continue
            if ref_out is not None and _close(mine, np.asarray(ref_out[index]), rtol):
                notes.append(f"{node.op_type} ({name}) agrees with the reference evaluator, "
                             "not ONNX Runtime")
                continue
            single = case_type(case.seed, one, [fed], [node.op_type], {name: frozenset()}, set())
            ref = np.asarray(ref_out[index]) if ref_out is not None else None
            why = excused(single, fed, mine, ref, [np.asarray(ort_out[index])] if ort_out else [],
                          max(rtol, 1e-5))
            if why:
                notes.append(f"{node.op_type} ({name}): {why}")
                continue
            if mine.dtype.kind == "f" and ort_out and _within_serial_mean_error(
                    node, {**fed, **_constants(one)}, mine, np.asarray(ort_out[index])):
                notes.append(f"{node.op_type} ({name}) is within its serial mean's rounding, "
                             "amplified by 1 / sqrt(var + eps)")
                continue
            if mine.dtype.kind == "f" and (ref is not None or ort_out) and _ill_conditioned(
                    one, fed, mine, ref if ref is not None else np.asarray(ort_out[index]), index,
                    max(rtol, NODE_RTOL), reference_run):
                notes.append(f"{node.op_type} ({name}) is ill-conditioned at these inputs")
                continue
            return False, f"node {node.op_type} ({name}) differs from both oracles on samebits' own inputs"
    return True, "each node agrees with an oracle on samebits' own inputs" + \
        (f" ({'; '.join(notes)})" if notes else "") + \
        ": the graph amplifies differences within tolerance"


def _constants(model) -> dict:
    from onnx import numpy_helper
    return {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}


def _close(got: np.ndarray, want: np.ndarray, rtol: float) -> bool:
    from compare import close
    return close(got, want, rtol)
