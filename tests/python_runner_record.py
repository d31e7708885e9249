"""What the Python runner gave, as the C graph runtime's bit-for-bit reference.

Until the C graph runtime replaced it, samebits.onnx ran a model node by
node in Python (the "Python runner": per-operator builders over the public
kernels, samebits.conv2d, samebits.matmul and the rest). The C core was
built beside it and every operator test compared the two bit for bit, in
both modes. Before the Python runner was deleted, its outcome for every
model and feeds of those tests was recorded here, in a run where the two
runners agreed on every case:

    tests/data/python_runner.json
        {"fast_path": the fast-mode path of the recording machine,
         "outcomes": {case key: outcome}}

A case key is a digest of the model's bytes, the feeds (names, dtypes,
shapes, bytes) and the mode. An outcome is the digest of the outputs (their
dtypes, shapes and bytes). Exact mode's bits are the same on every path, so
exact outcomes are checked everywhere. Fast mode's bits belong to one path:
they are checked where the fast path is the recording machine's, and
elsewhere fast outputs are held close to exact mode's.

The test modules that use this reseed their RNG per test (conftest's
`RESEED_RNG_PER_TEST`), so a case's inputs do not depend on which tests ran
before it. A case missing from the record is a new case or changed inputs:
it fails, and needs an independent reference (ONNX Runtime, a numpy
oracle), not a new recording.
"""
from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import numpy as np

RECORD = Path(__file__).parent / "data" / "python_runner.json"
_RECORDING = os.environ.get("SAMEBITS_RECORD_PYTHON_RUNNER") == "1"
_recorded: dict = {}


def _fast_path() -> str:
    import samebits
    return str(samebits.info()["path"])


def case_key(data: bytes, feeds: dict, mode: str) -> str:
    h = hashlib.sha256()
    h.update(hashlib.sha256(data).digest())
    for name, value in feeds.items():
        a = np.ascontiguousarray(value)
        h.update(f"|{name}|{a.dtype.str}|{a.shape}|".encode())
        h.update(a.tobytes())
    h.update(mode.encode())
    return h.hexdigest()[:24]


def outputs_digest(outputs) -> str:
    h = hashlib.sha256()
    for value in outputs:
        a = np.ascontiguousarray(value)
        h.update(f"|{a.dtype.str}|{a.shape}|".encode())
        h.update(a.tobytes())
    return h.hexdigest()[:24]


def _load() -> dict:
    if not _recorded:
        _recorded.update(json.loads(RECORD.read_text()))
    return _recorded


def check(data: bytes, feeds: dict, mode: str, got) -> None:
    """`got` (the C core's outputs, in order) has the bits the Python runner
    gave for this model and these feeds in `mode`."""
    got = list(got.values()) if isinstance(got, dict) else list(got)
    key = case_key(data, feeds, mode)
    if _RECORDING:
        _record(data, feeds, mode, key, got)
        return
    record = _load()
    want = record["outcomes"].get(key)
    assert want is not None, (
        "no outcome of the Python runner is recorded for this model and these feeds "
        f"({mode}): a new case needs an independent reference")
    if mode == "fast" and record["fast_path"] != _fast_path():
        import samebits.onnx as so
        exact = list(so.load(data, mode="exact").run(feeds).values())
        for g, e in zip(got, exact):
            assert g.dtype == e.dtype and g.shape == e.shape, (g.dtype, e.dtype, g.shape, e.shape)
            if g.dtype == np.float32:
                np.testing.assert_allclose(g, e, rtol=1e-4, atol=1e-5, equal_nan=True)
            else:
                assert np.array_equal(g, e)
        return
    assert outputs_digest(got) == want, f"{mode}: not the bits the Python runner gave"


def _error_outcome(e: Exception) -> str:
    """The error's kind (ValueError for its subclasses, as the two runners'
    kinds differed there) and its text after the node's name."""
    kind = "ValueError" if isinstance(e, ValueError) else type(e).__name__
    return f"error:{kind}:{str(e).split('): ', 1)[-1]}"


def check_outcome(data: bytes, feeds: dict, mode: str, run) -> None:
    """`run()` (the C core on this model and these feeds) gives the Python
    runner's recorded outcome: the same outputs, or the same error type
    with the same message."""
    try:
        got = run()
    except (ValueError, TypeError, IndexError) as e:
        outcome = _error_outcome(e)
        key = case_key(data, feeds, mode)
        if _RECORDING:
            from samebits.onnx._model import parse_model
            from samebits.onnx._session import Session
            try:
                Session(parse_model(data), mode, None, None).run(feeds)
            except (ValueError, TypeError, IndexError) as want:
                assert _error_outcome(want) == outcome, (outcome, want)
            else:
                raise AssertionError(f"the Python runner ran, the C core raised {outcome}")
            _recorded.setdefault("outcomes", {})[key] = outcome
            return
        assert _load()["outcomes"].get(key) == outcome, (outcome, _load()["outcomes"].get(key))
        return
    check(data, feeds, mode, got)


def _record(data: bytes, feeds: dict, mode: str, key: str, got: list) -> None:
    """Recording (the Python runner still present): the Python runner's
    outputs must equal the C core's bit for bit before they are recorded."""
    from samebits.onnx._model import parse_model
    from samebits.onnx._session import Session
    try:
        want = list(Session(parse_model(data), mode, None, None).run(feeds).values())
    except (ValueError, TypeError, NotImplementedError) as e:
        raise AssertionError(f"the C core ran, the Python runner raised {e!r}")
    assert len(want) == len(got), (mode, len(want), len(got))
    for w, g in zip(want, got):
        w, g = np.ascontiguousarray(w), np.ascontiguousarray(g)
        assert w.dtype == g.dtype and w.shape == g.shape, (mode, w.dtype, g.dtype, w.shape, g.shape)
        assert w.tobytes() == g.tobytes(), f"{mode}: the C core and the Python runner differ"
    outcomes = _recorded.setdefault("outcomes", {})
    digest = outputs_digest(want)
    assert outcomes.get(key, digest) == digest, "one case, two outcomes"
    outcomes[key] = digest


def save_recording() -> None:
    if not _RECORDING or not _recorded:
        return
    old = json.loads(RECORD.read_text()) if RECORD.exists() else {"outcomes": {}}
    old["outcomes"].update(_recorded["outcomes"])
    old["fast_path"] = _fast_path()
    RECORD.parent.mkdir(exist_ok=True)
    RECORD.write_text(json.dumps({"fast_path": old["fast_path"],
                                  "outcomes": dict(sorted(old["outcomes"].items()))},
                                 indent=0) + "\n")
