"""Runs one generated graph everywhere and judges it (docs/differential.md).

samebits runs it in exact and fast mode, on every path this CPU has, at 1
and 2 threads, at each batch size in one session. ONNX Runtime runs it with
and without its graph optimizations. Where samebits differs from both, the
tie-breaker is onnx.reference.ReferenceEvaluator:

- samebits agrees with ONNX Runtime (either form): right;
- else it agrees with the reference evaluator: ONNX Runtime is the wrong
  one (counted and listed, not a failure);
- else samebits is wrong.

Besides, exact mode must give one digest over paths and threads, and fast
mode one digest over threads on each path."""
from __future__ import annotations

import functools
import hashlib
import warnings
from dataclasses import dataclass, field
from typing import Any, Optional

import numpy as np

import samebits
import samebits.onnx as so

# Tolerance of one operator family, relative to |want| plus the largest
# finite |want| of the tensor; an output's tolerance is the largest of the
# families upstream of it, times 4 (errors add along a chain). "exact"
# outputs (only IEEE-exact arithmetic and data movement upstream) must be
# equal as values (NaN where NaN; -0 equals +0).
FAMILY_RTOL = {"transcendental": 1e-5, "reduction": 1e-5, "product": 2e-5, "resize": 1e-5}
CHAIN_FACTOR = 4.0


@dataclass
class Verdict:
    seed: int
    status: str                    # "ok", "wrong", "ort_wrong", "disputed", "refused"
    detail: str = ""
    refused_by: str = ""
    runs: int = 0
    mismatch: list = field(default_factory=list)   # output names samebits gets wrong


# operators whose value at -inf samebits documents as -0, the limit, where
# evaluating ONNX's formula in floating point gives -inf * 0 = NaN
# (docs/exact-ops.md: gelu, mish)
MINUS_INF_LIMIT_OPS = {"Gelu", "Mish"}


# operators whose documented rule ignores NaN (docs/maxpool.md) where ONNX
# Runtime and the reference evaluator propagate it
NAN_IGNORING_OPS = {"MaxPool"}


def _input_sees_nan(case, feeds: dict, ops=NAN_IGNORING_OPS, test=np.isnan) -> bool:
    """Whether the input of a node of `ops` (MaxPool by default) holds NaN
    (or what `test` finds) at these feeds (found by running the graph with
    those inputs as outputs, in ONNX Runtime)."""
    import copy
    from onnx import helper
    probe = copy.deepcopy(case.model)
    wanted = [n.input[0] for n in probe.graph.node if n.op_type in ops]
    feeds_nan = [n for n in wanted if n in feeds]
    if any(test(feeds[n]).any() for n in feeds_nan):
        return True
    del probe.graph.output[:]
    probe.graph.output.extend(helper.make_empty_tensor_value_info(n) for n in wanted
                              if n not in feeds)
    if not probe.graph.output:
        return False
    values = _ort_run(probe.SerializeToString(), feeds, False) or _reference_run(probe, feeds)
    return values is None or any(test(np.asarray(v, np.float64)).any() for v in values)


# operators whose NaN ONNX Runtime skips (its bug: docs/differential.md)
ORT_SKIPS_NAN = {"GlobalMaxPool", "ReduceMax", "ReduceMin"}

# normalizations whose variance samebits sums as (x - mean)^2 (docs/exact-ops.md)
NORMS = {"GroupNormalization", "InstanceNormalization", "LayerNormalization"}

# operators that turn the sign of a zero into +-inf
ZERO_SIGN_EXPOSERS = {"Reciprocal", "Div", "Log", "Pow"}


# operators whose sums of products exact mode rounds product by product
PRODUCT_OPS = {"MatMul", "Gemm", "Conv", "ConvTranspose", "Einsum", "Attention", "LinearAttention"}


def _overflow_signs(case, got, ort_outs: list, fast) -> bool:
    """Exact mode's NaN where the oracles give +-inf and samebits' fast
    mode agrees with them: products that overflow to +inf and -inf sum to
    NaN when each is rounded on its own (docs/exact-mode.md), to inf when a
    fused multiply-add keeps one product unrounded."""
    if not (PRODUCT_OPS & set(case.ops)) or fast is None or not ort_outs:
        return False
    g = np.asarray(got, np.float64)
    for o in ort_outs:
        o = np.asarray(o, np.float64)
        if o.shape != g.shape or not close(np.asarray(fast), o, 1e-4):
            continue
        differs = _differs(g, o, 1e-4)
        if differs.any() and np.isnan(g[differs]).all() and np.isinf(o[differs]).all():
            return True
    return False


def _differs(got, want, rtol: float) -> np.ndarray:
    """Where got and want (one shape) differ: not equal, not both NaN, and
    apart by more than rtol * (|want| + 1)."""
    g, w = np.asarray(got, np.float64), np.asarray(want, np.float64)
    with np.errstate(invalid="ignore"):
        return ~((g == w) | (np.isnan(g) & np.isnan(w)) | (np.abs(g - w) <= rtol * (np.abs(w) + 1)))


def _only_nan_differs(got, want, rtol: float) -> bool:
    g, w = np.asarray(got, np.float64), np.asarray(want, np.float64)
    if g.shape != w.shape:
        return False
    differs = _differs(g, w, rtol)
    return bool(differs.any() and np.isnan(g[differs]).all())


def _one_side_nan_only(got, want, rtol: float) -> bool:
    """Whether got and want differ only where one of them is NaN."""
    g, w = np.asarray(got, np.float64), np.asarray(want, np.float64)
    if g.shape != w.shape:
        return False
    differs = _differs(g, w, rtol)
    return bool(differs.any() and (np.isnan(g[differs]) != np.isnan(w[differs])).all())


def _ort_nan_where_got_is_not(got, ort_out, rtol: float) -> bool:
    """Whether got differs from ONNX Runtime's output only where that one is
    NaN and got is not (finite or infinite)."""
    g, o = np.asarray(got, np.float64), np.asarray(ort_out, np.float64)
    if g.shape != o.shape:
        return False
    differs = _differs(g, o, rtol)
    return bool(differs.any() and np.isnan(o[differs]).all() and not np.isnan(g[differs]).any())


def _ort_nan_only(got, ort_out, rtol: float) -> bool:
    """Whether got differs from ONNX Runtime's output only where that one is
    NaN and got is finite."""
    g, o = np.asarray(got, np.float64), np.asarray(ort_out, np.float64)
    if g.shape != o.shape:
        return False
    differs = _differs(g, o, rtol)
    return bool(differs.any() and np.isnan(o[differs]).all() and np.isfinite(g[differs]).all())


FLT_MAX = float(np.finfo(np.float32).max)


def _ort_lowest_where_got_is_minus_inf(got, ort_out) -> bool:
    """Whether got differs from ONNX Runtime's output, and only where got is
    -inf and ONNX Runtime gives exactly -FLT_MAX (its MaxPool's starting
    value, which a window of -inf taps never replaces)."""
    g, o = np.asarray(got, np.float64), np.asarray(ort_out, np.float64)
    if g.shape != o.shape:
        return False
    differs = ~((g == o) | (np.isnan(g) & np.isnan(o)))
    return bool(differs.any() and np.isneginf(g[differs]).all() and (o[differs] == -FLT_MAX).all())


def _excused(case, feeds: dict, got, reference, ort_outs: list, rtol: float, fast=None) -> str:
    """Why a difference from both oracles is not a samebits bug, or "".

    - where ONNX Runtime and the reference evaluator disagree with each
      other too, there is no consensus to be wrong against: an
      ill-conditioned graph (Sin of a huge value made from a cancellation),
      or NaN in the max/min family, which ONNX leaves open;
    - MaxPool fed NaN: its documented rule ignores NaN taps;
    - AveragePool fed NaN on a graph with ReduceMax/Min or GlobalMaxPool:
      the reference evaluator's pooling skips NaN taps and ONNX Runtime's
      max/min skips NaN, so their agreement is no evidence (seed 5100);
    - only signs of zeros differ, shown as +-inf by a division (ONNX leaves
      the sign of max(-0, +0) open);
    - where the only differences are NaNs of the reference on a graph with
      Gelu or Mish (which may meet -inf): samebits' documented limit -0;
    - DeformConv fed NaN or inf with no reference value, differing only
      where ONNX Runtime gives NaN: a sample wholly outside the input is zero
      padding (0), one partly outside weighs its inside taps alone, which
      ONNX Runtime turns into NaN (seed 942 of the fixed pass, 312744 of the
      long pass);
    - LRN fed +-inf or NaN, differing only where ONNX Runtime gives NaN: its
      running window sum carries NaN into other channels (seeds 45464,
      313107);
    - a normalization fed values whose squares overflow, differing only
      where the oracles give NaN: their E[x^2] - E[x]^2 is inf - inf
      (seed 49130);
    - Resize fed NaN, differing only where one side gives NaN: its
      documented 1 / scale and the oracles' division can land on either
      side of a coordinate whose tap beside a NaN weighs 0 (seeds 128485,
      137232);
    - MaxPool whose window holds only -inf inside the input, with no
      reference value, differing only where samebits gives -inf and ONNX
      Runtime exactly -FLT_MAX, on a MaxPool input holding -inf and no
      -FLT_MAX: ONNX Runtime's maximum starts from -FLT_MAX (seeds 547990,
      552676, 564415 of the long pass)."""
    got = np.asarray(got)
    if NAN_IGNORING_OPS & set(case.ops) and _input_sees_nan(case, feeds):
        return "MaxPool fed NaN: samebits ignores NaN taps (docs/maxpool.md), the oracles propagate it"
    if ("AveragePool" in case.ops and ORT_SKIPS_NAN & set(case.ops) and reference is not None and
            got.dtype.kind == "f" and _only_nan_differs(got, reference, rtol) and
            _input_sees_nan(case, feeds, {"AveragePool"})):
        return "AveragePool fed NaN: the reference evaluator skips NaN taps (its padding marker) and " \
               "ONNX Runtime's max/min family skips the NaN it propagates"
    if (reference is None and "DeformConv" in case.ops and got.dtype.kind == "f" and ort_outs and
            _input_sees_nan(case, feeds, {"DeformConv"}, lambda a: ~np.isfinite(a)) and
            all(_ort_nan_where_got_is_not(got, o, rtol) for o in ort_outs)):
        return "DeformConv fed NaN or inf: ONNX Runtime gives NaN for samples wholly or partly " \
               "outside the input (zero padding weighs 0 there, so 0 or the inside taps' value, " \
               "inf included), and the reference evaluator cannot run the graph"
    if ("LRN" in case.ops and got.dtype.kind == "f" and ort_outs and
            _input_sees_nan(case, feeds, {"LRN"}, lambda a: ~np.isfinite(a)) and
            all(_ort_nan_only(got, o, rtol) for o in ort_outs)):
        return "LRN fed +-inf or NaN: ONNX Runtime's running window sum carries NaN (inf - inf, " \
               "NaN - NaN) into channels whose window holds none, and the reference evaluator's " \
               "LRN sums over the batch index instead of the channel (seeds 45464, 313107 of the " \
               "long pass)"
    if (NORMS & set(case.ops) and got.dtype.kind == "f" and ort_outs and
            _input_sees_nan(case, feeds, NORMS, lambda a: np.isfinite(a) & (np.abs(a) >= 1.8e19)) and
            all(_ort_nan_only(got, o, rtol) for o in ort_outs) and
            (reference is None or _ort_nan_only(got, reference, rtol))):
        return "a normalization whose variance overflows float32: the oracles' E[x^2] - E[x]^2 " \
               "is inf - inf = NaN, samebits' documented sum of (x - mean)^2 is inf, so x - mean " \
               "scales to 0 (docs/exact-ops.md; seed 49130 of the long pass)"
    if ("Resize" in case.ops and got.dtype.kind == "f" and ort_outs and
            _input_sees_nan(case, feeds, {"Resize"}) and
            all(_one_side_nan_only(got, o, rtol) for o in ort_outs) and
            (reference is None or _one_side_nan_only(got, reference, rtol))):
        return "Resize given scales over NaN: samebits' coordinate scale is 1 / scale (torch's, " \
               "docs/onnx.md), a last bit from the oracles' division, so one side lands exactly " \
               "on a coordinate whose tap beside a NaN weighs 0 (0 * NaN is still NaN) and the " \
               "other does not touch it (seeds 128485 and 137232 of the long pass)"
    if (reference is None and "MaxPool" in case.ops and got.dtype == np.float32 and ort_outs and
            _input_sees_nan(case, feeds, {"MaxPool"}, np.isneginf) and
            not _input_sees_nan(case, feeds, {"MaxPool"}, lambda a: a == -FLT_MAX) and
            all(_ort_lowest_where_got_is_minus_inf(got, o) for o in ort_outs)):
        return "MaxPool over a window whose inside taps are all -inf: samebits gives -inf, the " \
               "maximum (docs/maxpool.md), ONNX Runtime the -FLT_MAX it starts from, and the " \
               "reference evaluator cannot run the graph (seeds 547990, 552676, 564415)"
    if reference is None:
        # no tie-breaker: excuse only NaN samebits propagates where ONNX
        # Runtime's max/min family is known to skip it
        if ORT_SKIPS_NAN & set(case.ops) and got.dtype.kind == "f" and ort_outs:
            for o in ort_outs:
                o = np.asarray(o, np.float64)
                if o.shape != got.shape:
                    continue
                g64 = got.astype(np.float64)
                differs = _differs(g64, o, rtol)
                if differs.any() and np.isnan(g64[differs]).all():
                    return "NaN in the max/min family: samebits propagates it, ONNX Runtime skips it " \
                           "(and the reference evaluator cannot run the graph)"
        return ""
    if ort_outs and not any(close(o, reference, rtol) for o in ort_outs):
        return "ONNX Runtime and the reference evaluator disagree too (no consensus)"
    if _overflow_signs(case, got, ort_outs, fast):
        return "products overflowing to +inf and -inf: NaN rounded one by one (exact mode), inf fused"
    if got.dtype.kind != "f":
        return ""
    ref = np.asarray(reference, np.float64)
    if ZERO_SIGN_EXPOSERS & set(case.ops) and got.shape == ref.shape:
        g64 = got.astype(np.float64)
        differs = ~((g64 == ref) | (np.isnan(g64) & np.isnan(ref)))
        flips = (np.isinf(g64) & np.isinf(ref) & (g64 == -ref)) | ((g64 == 0) & (ref == 0))
        if differs.any() and flips[differs].all():
            return "only the sign of a zero (open in ONNX for max, min, clip, relu), made +-inf by a division"
    if MINUS_INF_LIMIT_OPS & set(case.ops):
        ref = np.asarray(reference, np.float64)
        if got.shape == ref.shape:
            differs = _differs(got, ref, rtol)
            if np.isnan(ref[differs]).all():
                return "Gelu/Mish at -inf: samebits gives the documented limit -0, the oracles NaN"
    return ""


def _tolerance(families) -> float:
    return max((FAMILY_RTOL[f] for f in families), default=0.0) * CHAIN_FACTOR


def close(got: np.ndarray, want: np.ndarray, rtol: float) -> bool:
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape:
        return False
    if got.dtype.kind in "biu" or want.dtype.kind in "biu":
        return bool(np.array_equal(got.astype(np.int64), want.astype(np.int64)))
    g, w = got.astype(np.float64), want.astype(np.float64)
    nan = np.isnan(w)
    if not np.array_equal(np.isnan(g), nan):
        return False
    inf = np.isinf(w)
    if not np.array_equal(g[inf], w[inf]):
        return False
    finite = ~nan & ~inf
    if rtol == 0.0:
        return bool(np.array_equal(g[finite], w[finite]))
    if np.isinf(g[finite]).any():
        return False
    scale = float(np.abs(w[finite]).max()) if finite.any() else 0.0
    return bool(np.all(np.abs(g[finite] - w[finite]) <= rtol * (np.abs(w[finite]) + scale) + 1e-30))


@functools.lru_cache(maxsize=64)
def _ort_would_crash(model_bytes: bytes, feed_shapes: tuple) -> bool:
    """Whether the graph, fed values of feed_shapes ((name, shape) pairs), is
    one ONNX Runtime 1.32 ends the process on (a segmentation fault, not an
    error it raises): an InstanceNormalization whose input has a dimension of
    0 (make fuzz's seed 705277: a CausalConvWithState state of length 0,
    kernel size 1). Shapes from onnx's inference; a shape it cannot tell is
    taken as safe. Cached: each feed set runs ONNX Runtime twice (with its
    optimizations and without)."""
    if b"InstanceNormalization" not in model_bytes:
        return False
    import onnx
    from onnx import shape_inference
    model = onnx.load_from_string(model_bytes)
    shapes_in = dict(feed_shapes)
    for value in model.graph.input:
        if value.name in shapes_in:
            dims = value.type.tensor_type.shape.dim
            for dim, size in zip(dims, shapes_in[value.name]):
                dim.ClearField("dim_param")
                dim.dim_value = size
    try:
        model = shape_inference.infer_shapes(model, data_prop=True)
    except Exception:
        return False
    shapes = {v.name: [d.dim_value if d.HasField("dim_value") else None
                       for d in v.type.tensor_type.shape.dim]
              for v in list(model.graph.value_info) + list(model.graph.input) +
              list(model.graph.output)}
    return any(0 in shapes.get(name, ())
               for n in model.graph.node if n.op_type == "InstanceNormalization"
               for name in (n.input[0], n.output[0]))


def _ort_run(model_bytes: bytes, feeds: dict, optimize: bool) -> Optional[list]:
    if _ort_would_crash(model_bytes, tuple((k, np.shape(v)) for k, v in feeds.items())):
        return None   # as if it refused the graph
    import onnxruntime as ort
    opts = ort.SessionOptions()
    opts.graph_optimization_level = (ort.GraphOptimizationLevel.ORT_ENABLE_ALL if optimize
                                     else ort.GraphOptimizationLevel.ORT_DISABLE_ALL)
    opts.log_severity_level = 4
    try:
        s = ort.InferenceSession(model_bytes, opts, providers=["CPUExecutionProvider"])
        return s.run(None, feeds)
    except Exception:
        return None


def _reference_run(model, feeds: dict) -> Optional[list]:
    from onnx.reference import ReferenceEvaluator
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            return list(ReferenceEvaluator(model).run(None, feeds))
    except Exception:
        return None


def _reference_output(model, name: str, feeds: dict) -> Optional[np.ndarray]:
    """The reference evaluator's value of one output from the part of the
    graph it depends on: when the whole graph fails in the evaluator (one of
    its own bugs in another branch), an output it can compute is still
    judged by it."""
    import onnx.utils
    try:
        inputs = [i.name for i in model.graph.input]
        part = onnx.utils.Extractor(model).extract_model(inputs, [name])
        needed = {i.name for i in part.graph.input}
        out = _reference_run(part, {k: v for k, v in feeds.items() if k in needed})
        return out[0] if out else None
    except Exception:
        return None


def _ort_outputs(model, names: list, feeds: dict) -> Optional[list]:
    """ONNX Runtime's value of each output from the part of the graph it
    depends on (None where it refuses that part too), or None if it
    computes none of them."""
    import onnx.utils
    out = []
    for name in names:
        try:
            part = onnx.utils.Extractor(model).extract_model([i.name for i in model.graph.input], [name])
            needed = {i.name for i in part.graph.input}
            got = _ort_run(part.SerializeToString(), {k: v for k, v in feeds.items() if k in needed}, False)
            out.append(got[0] if got else None)
        except Exception:
            out.append(None)
    return out if any(o is not None for o in out) else None


def digest(outputs: dict) -> str:
    h = hashlib.sha256()
    for name in sorted(outputs):
        a = np.ascontiguousarray(outputs[name])
        h.update(name.encode() + str(a.dtype).encode() + str(a.shape).encode() + a.tobytes())
    return h.hexdigest()


def run_samebits(model_bytes: bytes, feeds_list: list[dict], paths=None, threads=(1, 2)):
    """{(mode, path, threads): [outputs per feeds]}; raises what load or run raises."""
    out = {}
    for mode in ("exact", "fast"):
        for path in paths or samebits.paths():
            for t in threads:
                with samebits.use_path(path):
                    s = so.load(model_bytes, mode=mode, threads=t)
                out[(mode, path, t)] = [s.run(f) for f in feeds_list]
    return out


def _nodewise(case, feeds: dict, got: dict, mode: str, path: str, cache: dict, batch: int) -> str:
    """The graph judged node by node (nodewise.py): why its difference is
    not a samebits bug, or "" (the first wrong node is kept in the cache's
    note)."""
    from nodewise import judge_nodes
    key = (mode, batch)
    if key not in cache:
        cache[key] = judge_nodes(case, feeds, got, mode, path, 1, _ort_run, _reference_run,
                                 _excused, type(case))
    ok, why = cache[key]
    return why if ok else ""


def judge(case, paths=None) -> Verdict:
    model_bytes = case.model.SerializeToString()
    try:
        runs = run_samebits(model_bytes, case.feeds, paths)
    except (so.UnsupportedModelError, so.DecodeError, ValueError, TypeError) as e:
        msg = str(e)
        op = msg.split("(")[1].split(")")[0] if msg.startswith("node ") and "(" in msg else msg[:60]
        return Verdict(case.seed, "refused", msg[:300], refused_by=op)
    v = Verdict(case.seed, "ok", runs=len(runs) * len(case.feeds))
    # one digest: exact over paths and threads; fast over threads per path
    exact = {k: [digest(o) for o in outs] for k, outs in runs.items() if k[0] == "exact"}
    if len({tuple(d) for d in exact.values()}) != 1:
        v.status, v.detail = "wrong", f"exact digests differ over paths/threads: {exact}"
        return v
    for path in paths or samebits.paths():
        fast = {tuple(digest(o) for o in outs) for k, outs in runs.items()
                if k[0] == "fast" and k[1] == path}
        if len(fast) != 1:
            v.status, v.detail = "wrong", f"fast digests differ over threads on {path}"
            return v
    names = [o.name for o in case.model.graph.output]
    ort_wrong, excused, with_ort = [], [], []
    nodewise_cache: dict = {}
    for b, feeds in enumerate(case.feeds):
        ort_opt = _ort_run(model_bytes, feeds, True)
        ort_plain = _ort_run(model_bytes, feeds, False)
        if ort_opt is None and ort_plain is None:
            # ONNX Runtime refuses the whole graph (an operator or type of
            # another branch): each output from the part it depends on
            ort_plain = _ort_outputs(case.model, names, feeds)
        reference = None
        for mode in ("exact", "fast"):
            got = runs[(mode, (paths or samebits.paths())[-1], 1)][b]
            for i, name in enumerate(names):
                rtol = _tolerance(case.families[name])
                if mode == "fast":
                    rtol = max(rtol, 1e-5 * CHAIN_FACTOR) if rtol else rtol
                agrees = [close(got[name], o[i], rtol) for o in (ort_opt, ort_plain)
                          if o is not None and o[i] is not None]
                if reference is None:
                    reference = _reference_run(case.model, feeds) or []
                if any(agrees):
                    # a bug samebits shares with ONNX Runtime shows only here
                    if reference and not close(got[name], reference[i], rtol) and \
                            not _excused(case, feeds, got[name], reference[i], [], rtol):
                        with_ort.append(name)
                    continue
                ref = reference[i] if reference else _reference_output(case.model, name, feeds)
                if ref is not None and close(got[name], ref, rtol):
                    if agrees:      # (none: ONNX Runtime refuses the graph, not wrong)
                        ort_wrong.append(name)
                    continue
                if ref is None and not agrees:
                    continue        # neither oracle runs the graph: nothing to judge by
                fast = runs[("fast", (paths or samebits.paths())[-1], 1)][b][name] \
                    if mode == "exact" else None
                why = _excused(case, feeds, got[name], ref,
                               [o[i] for o in (ort_opt, ort_plain) if o is not None and o[i] is not None],
                               rtol, fast)
                if not why:
                    why = _nodewise(case, feeds, got, mode, (paths or samebits.paths())[-1],
                                    nodewise_cache, b)
                if why:
                    excused.append(f"{name}: {why}")
                    continue
                v.status, v.mismatch = "wrong", v.mismatch + [name]
                v.detail += f"{mode} {name} (batch {b}): differs from ONNX Runtime " + \
                    ("and the reference evaluator" if ref is not None else
                     "; the reference evaluator fails")
                node_note = nodewise_cache.get((mode, b))
                v.detail += f"; node by node: {node_note[1]}\n" if node_note else "\n"
    if v.status == "ok" and with_ort:
        v.status, v.detail = "with_ort", f"samebits agrees with ONNX Runtime, not with the " \
                                         f"reference evaluator, on {sorted(set(with_ort))}"
    elif v.status == "ok" and excused:
        v.status, v.detail = "disputed", "; ".join(sorted(set(excused)))
    elif v.status == "ok" and ort_wrong:
        v.status, v.detail = "ort_wrong", f"ONNX Runtime differs from the reference evaluator and " \
                                          f"samebits on {sorted(set(ort_wrong))}"
    return v
