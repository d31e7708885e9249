"""ONNX's own backend conformance suite, as the installed onnx package ships
it, run through samebits.onnx (and, for the report, ONNX Runtime).

The cases: every node case (generated from onnx.backend.test.case.node, as
`onnx.backend.test.loader` loads them), the pytorch-converted,
pytorch-operator and simple model cases of the package's data folder, and
the light model-zoo graphs with the dummy inputs onnx's own runner gives
them. The "real" model-zoo cases need downloads and are not included.

A case passes as onnx's runner decides (`Runner.assert_similar_outputs`):
the same number of outputs, each of the expected shape and dtype, within the
case's rtol and atol (NaN equal to NaN).

tests/graph/test_conformance.py runs every case in both modes against the
pinned list tests/graph/conformance_expected.txt, which
`python tools/conformance_report.py --write` regenerates.
"""
from __future__ import annotations

import functools
import glob
import os
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import numpy as np
import onnx
from onnx import numpy_helper

EXPECTED_FILE = Path(__file__).resolve().parent / "graph" / "conformance_expected.txt"


@dataclass(frozen=True)
class Case:
    name: str
    kind: str                           # node, pytorch-converted, pytorch-operator, simple, light
    model: bytes
    data_sets: tuple                    # ((inputs list, expected outputs list), ...)
    rtol: float
    atol: float
    problem: str = ""                   # why the case cannot be fed (non-tensor values)


def _array(value: Any) -> Any:
    """A data set's value as numpy (TensorProto, sequence and optional protos
    converted as onnx's runner converts them)."""
    if isinstance(value, onnx.TensorProto):
        return numpy_helper.to_array(value)
    if isinstance(value, onnx.SequenceProto):
        return numpy_helper.to_list(value)
    if isinstance(value, onnx.OptionalProto):
        return numpy_helper.to_optional(value)
    return value


def _is_tensor(value: Any) -> bool:
    return isinstance(value, np.ndarray) or np.isscalar(value)


def _read_value(path: str, kind: onnx.TypeProto) -> Any:
    data = Path(path).read_bytes()
    if kind.HasField("sequence_type"):
        proto: Any = onnx.SequenceProto()
    elif kind.HasField("optional_type"):
        proto = onnx.OptionalProto()
    elif kind.HasField("map_type"):
        proto = onnx.MapProto()
    else:
        proto = onnx.TensorProto()
    proto.ParseFromString(data)
    if isinstance(proto, onnx.MapProto):
        return numpy_helper.to_dict(proto)
    return _array(proto)


def _data_dir() -> str:
    import onnx.backend.test.loader as loader
    return loader.DATA_DIR


def _node_cases() -> list[Case]:
    import onnx.backend.test.case.node as node
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cases = node.collect_testcases()
    out = []
    for c in cases:
        sets = tuple(([_array(v) for v in ins], [_array(v) for v in outs]) for ins, outs in c.data_sets)
        out.append(Case(c.name, "node", c.model.SerializeToString(), sets, c.rtol, c.atol))
    return out


def _folder_cases(kind: str) -> list[Case]:
    import onnx.backend.test.loader as loader
    out = []
    for c in loader.load_model_tests(kind=kind):
        if c.model_dir is None:          # a download ("real")
            continue
        model = onnx.load(os.path.join(c.model_dir, "model.onnx"), load_external_data=False)
        sets = []
        for folder in sorted(glob.glob(os.path.join(c.model_dir, "test_data_set*"))):
            n_in = len(glob.glob(os.path.join(folder, "input_*.pb")))
            n_out = len(glob.glob(os.path.join(folder, "output_*.pb")))
            ins = [_read_value(os.path.join(folder, f"input_{i}.pb"), model.graph.input[i].type)
                   for i in range(n_in)]
            outs = [_read_value(os.path.join(folder, f"output_{i}.pb"), model.graph.output[i].type)
                    for i in range(n_out)]
            sets.append((ins, outs))
        out.append(Case(c.name, kind, model.SerializeToString(), tuple(sets), c.rtol, c.atol))
    return out


def _light_cases() -> list[Case]:
    """The light model-zoo graphs: inputs as onnx's runner makes them
    (generate_dummy_data, not random), expected outputs from the package."""
    from onnx.backend.test.runner import Runner
    folder = os.path.join(_data_dir(), "light")
    out = []
    for path in sorted(glob.glob(os.path.join(folder, "light_*.onnx"))):
        model = onnx.load(path)
        stem = os.path.splitext(path)[0]
        name = "test_" + os.path.basename(stem)[len("light_"):]
        inits = {i.name for i in model.graph.initializer}
        problem, ins = "", []
        for x in model.graph.input:
            if x.name in inits:
                continue
            try:
                ins.append(Runner.generate_dummy_data(x, seed=0, name=name, random=False))
            except NotImplementedError as e:
                problem = str(e).splitlines()[0]
        outs = []
        for i, y in enumerate(model.graph.output):
            file = f"{stem}_output_{i}.pb"
            if not os.path.exists(file):
                problem = problem or "no expected output in the package"
                break
            outs.append(_read_value(file, y.type))
        out.append(Case(name + "_light", "light", model.SerializeToString(), ((ins, outs),), 1e-3, 1e-7,
                        problem))
    return out


@functools.lru_cache(maxsize=1)
def cases() -> dict[str, Case]:
    """Every case by name (node case names are unique; a model case that
    shares one gets its kind appended)."""
    out: dict[str, Case] = {}
    found = _node_cases()
    for kind in ("pytorch-converted", "pytorch-operator", "simple"):
        found += _folder_cases(kind)
    found += _light_cases()
    for c in found:
        name = c.name if c.name not in out else f"{c.name}_{c.kind}"
        out[name] = c
    return out


def float_family(case: Case) -> bool:
    """Every input and expected output a tensor of float32, int64, int32 or
    bool (the issue's count of comparable cases)."""
    ok = (np.float32, np.int64, np.int32, np.bool_)
    for ins, outs in case.data_sets:
        for v in list(ins) + list(outs):
            if not isinstance(v, np.ndarray) or v.dtype.type not in ok:
                return False
    return True


def _feeds(case: Case, ins: list) -> dict:
    model = onnx.load_from_string(case.model)
    inits = {i.name for i in model.graph.initializer}
    names = [x.name for x in model.graph.input if x.name not in inits]
    return dict(zip(names, ins))


def compare(expected: list, got: list, rtol: float, atol: float) -> str:
    """"" when got matches as onnx's runner requires, else what differs."""
    if len(got) != len(expected):
        return f"{len(got)} outputs, expected {len(expected)}"
    for i, (e, g) in enumerate(zip(expected, got)):
        if not _is_tensor(e):
            return f"output {i} is not a tensor"
        e, g = np.asarray(e), np.asarray(g)
        if g.shape != e.shape:
            return f"output {i} has shape {g.shape}, expected {e.shape}"
        if e.dtype == object:
            if not np.array_equal(g, e):
                return f"output {i} differs"
            continue
        if e.dtype.name == "bfloat16" and g.dtype == np.float32:
            # samebits.onnx returns bfloat16 outputs as float32 holding their
            # values (numpy has no bfloat16; docs/onnx.md): compared as such
            e = (e.view(np.uint16).astype(np.uint32) << 16).view(np.float32)
        if g.dtype != e.dtype:
            return f"output {i} has dtype {g.dtype}, expected {e.dtype}"
        try:
            np.testing.assert_allclose(g, e, rtol=rtol, atol=atol)
        except AssertionError as err:
            lines = [ln.strip() for ln in str(err).splitlines() if ln.strip()]
            return f"output {i}: " + "; ".join(lines[1:3])
    return ""


NARROW = (onnx.TensorProto.FLOAT16, onnx.TensorProto.BFLOAT16)


def _as_float(a: np.ndarray) -> np.ndarray:
    """float16 / bfloat16 values as float32 (exactly); others as they are."""
    if a.dtype.name == "bfloat16":
        return (a.view(np.uint16).astype(np.uint32) << 16).view(np.float32)
    return a.astype(np.float32) if a.dtype == np.float16 else a


def _widened(data: bytes) -> bytes:
    """The model with float16 / bfloat16 replaced by float32 (inputs,
    outputs, initializers, Cast targets): the same computation, far more
    precise."""
    from onnx import numpy_helper
    m = onnx.load_from_string(data)
    g = m.graph
    for vi in list(g.input) + list(g.output) + list(g.value_info):
        if vi.type.tensor_type.elem_type in NARROW:
            vi.type.tensor_type.elem_type = onnx.TensorProto.FLOAT
    for i, t in enumerate(g.initializer):
        if t.data_type in NARROW:
            g.initializer[i].CopyFrom(numpy_helper.from_array(_as_float(numpy_helper.to_array(t)), t.name))
    for n in g.node:
        for a in n.attribute:
            if n.op_type == "Cast" and a.name == "to" and a.i in NARROW:
                a.i = onnx.TensorProto.FLOAT
            if a.type == onnx.AttributeProto.TENSOR and a.t.data_type in NARROW:
                a.t.CopyFrom(numpy_helper.from_array(_as_float(numpy_helper.to_array(a.t)), a.t.name))
    return m.SerializeToString()


def narrow_dispute(case: Case, feeds: dict, expected: list, got: list) -> str:
    """For outputs of float16 / bfloat16, whose expected values carry the
    rounding of one way of computing in the narrow type: "" unless samebits'
    outputs are closer than the expected ones to the same model computed in
    float32 by onnx.reference, then why (a disputed expectation, not a wrong
    result)."""
    if not any(np.asarray(e).dtype == np.float16 or np.asarray(e).dtype.name == "bfloat16"
               for e in expected):
        return ""
    from onnx.reference import ReferenceEvaluator
    try:
        wide = _widened(case.model)
        truth = ReferenceEvaluator(wide).run(None, {k: _as_float(np.asarray(v)) for k, v in feeds.items()})
    except Exception:  # noqa: BLE001  (no float32 reference: no dispute)
        return ""
    worst_got = worst_exp = 0.0
    for e, g, t in zip(expected, got, truth):
        t = np.asarray(t, np.float64)
        e64, g64 = _as_float(np.asarray(e)).astype(np.float64), _as_float(np.asarray(g)).astype(np.float64)
        if e64.shape != t.shape or g64.shape != t.shape:
            return ""
        with np.errstate(all="ignore"):
            scale = np.abs(t) + 1e-6
            worst_got = max(worst_got, float(np.nanmax(np.abs(g64 - t) / scale, initial=0.0)))
            worst_exp = max(worst_exp, float(np.nanmax(np.abs(e64 - t) / scale, initial=0.0)))
    if worst_got < worst_exp:
        return (f"disputed: the expected narrow-float outputs are less precise than samebits' against "
                f"onnx.reference on the float32 model (largest relative error {worst_exp:.2g} against "
                f"{worst_got:.2g})")
    return ""


def outcome(case: Case, run: Callable[[bytes, dict], list]) -> str:
    """"pass", or "refused: ...", "error: ...", "wrong: ..." (ran, but an
    output differs: a silently wrong result unless the expectation is)."""
    if case.problem:
        return f"not fed: {case.problem}"
    for ins, outs in case.data_sets:
        if not all(_is_tensor(v) for v in ins) or not all(_is_tensor(v) for v in outs):
            return "not fed: sequence, map or optional values"
    for ins, outs in case.data_sets:
        try:
            got = run(case.model, _feeds(case, ins))
        except Exception as e:  # noqa: BLE001  (every failure is an outcome)
            text = str(e).splitlines()[0] if str(e) else ""
            kind = "refused" if type(e).__name__ in ("UnsupportedModelError", "DecodeError") else "error"
            return f"{kind}: {type(e).__name__}: {text[:200]}"
        why = compare(outs, got, case.rtol, case.atol)
        dispute = narrow_dispute(case, _feeds(case, ins), outs, got) if why else ""
        if dispute:
            return dispute
        if why:
            return f"wrong: {why[:200]}"
    return "pass"


def samebits_runner(mode: str) -> Callable[[bytes, dict], list]:
    import samebits.onnx as so

    def run(model: bytes, feeds: dict) -> list:
        return list(so.load(model, mode=mode).run(feeds).values())
    return run


def ort_runner() -> Callable[[bytes, dict], list]:
    import onnxruntime as ort

    def run(model: bytes, feeds: dict) -> list:
        options = ort.SessionOptions()
        options.log_severity_level = 3
        s = ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])
        return s.run(None, feeds)
    return run


def read_expected(path: Path = EXPECTED_FILE) -> dict[str, dict[str, str]]:
    """The pinned list: case name -> {mode: reason} for the modes in which it
    is expected not to pass."""
    out: dict[str, dict[str, str]] = {}
    if not path.exists():
        return out
    for line in path.read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        name, modes, reason = line.split("\t", 2)
        for mode in modes.split(","):
            out.setdefault(name, {})[mode] = reason
    return out
