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
        if g.dtype != e.dtype:
            return f"output {i} has dtype {g.dtype}, expected {e.dtype}"
        try:
            np.testing.assert_allclose(g, e, rtol=rtol, atol=atol)
        except AssertionError as err:
            lines = [ln.strip() for ln in str(err).splitlines() if ln.strip()]
            return f"output {i}: " + "; ".join(lines[1:3])
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
