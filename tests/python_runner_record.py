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

Fast-mode bits may move on purpose (fast mode promises no bits across
machines; docs/hash-suite.md). The recorded fast outcomes such a change moved
on the recording path are listed, with the change and how they were
verified, in tests/data/python_runner_superseded.json, and are checked as
fast cases are on the other paths.

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
oracle). The recording was made by this module's `_record` with
SAMEBITS_RECORD_PYTHON_RUNNER=1 at commit 33c3f2b, the last one with the
Python runner; nothing can add to it now.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np

RECORD = Path(__file__).parent / "data" / "python_runner.json"
SUPERSEDED = Path(__file__).parent / "data" / "python_runner_superseded.json"
_recorded: dict = {}
_superseded: set[str] = set()


def _fast_path() -> str:
    import samebits
    return str(samebits.info()["path"])


def _put_array(h, label: str, value) -> None:
    """`label`, then the array's dtype, shape and bytes, into the hash."""
    a = np.ascontiguousarray(value)
    h.update(f"{label}|{a.dtype.str}|{a.shape}|".encode())
    h.update(a.tobytes())


def case_key(data: bytes, feeds: dict, mode: str) -> str:
    h = hashlib.sha256()
    h.update(hashlib.sha256(data).digest())
    for name, value in feeds.items():
        _put_array(h, f"|{name}", value)
    h.update(mode.encode())
    return h.hexdigest()[:24]


def outputs_digest(outputs) -> str:
    h = hashlib.sha256()
    for value in outputs:
        _put_array(h, "", value)
    return h.hexdigest()[:24]


def _load() -> dict:
    if not _recorded:
        _recorded.update(json.loads(RECORD.read_text()))
        _superseded.update(json.loads(SUPERSEDED.read_text())["fast_keys"])
        assert _superseded <= _recorded["outcomes"].keys(), "a superseded key is not recorded"
    return _recorded


def check(data: bytes, feeds: dict, mode: str, got) -> None:
    """`got` (the C core's outputs, in order) has the bits the Python runner
    gave for this model and these feeds in `mode`."""
    got = list(got.values()) if isinstance(got, dict) else list(got)
    key = case_key(data, feeds, mode)
    record = _load()
    want = record["outcomes"].get(key)
    assert want is not None, (
        "no outcome of the Python runner is recorded for this model and these feeds "
        f"({mode}): a new case needs an independent reference")
    if mode == "fast" and (record["fast_path"] != _fast_path() or key in _superseded):
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
        assert _load()["outcomes"].get(key) == outcome, (outcome, _load()["outcomes"].get(key))
        return
    check(data, feeds, mode, got)
