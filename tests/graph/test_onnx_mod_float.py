"""ONNX Mod on float32 (docs/onnx.md): fmod=1 is C's fmod, exact; fmod=0 is
Python's and numpy's modulo (opset 28 defines it for floats): the exact fmod,
plus the divisor when the signs differ, a zero taking the divisor's sign.
numpy's np.fmod and np.mod on float32 are the oracles, bit for bit (every NaN
stored as 0x7FC00000). Tested where users put the node: on graph inputs, on
an intermediate value, feeding two consumers and as a graph output, in both
modes on every path at 1 and 2 threads, and against ONNX Runtime for fmod=1."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("onnx")

from onnx import TensorProto, helper  # noqa: E402

from onnx_cases import bits, model, run_everywhere, value  # noqa: E402

F = TensorProto.FLOAT
SPECIAL = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 3.0, -3.0, 1e-45, -1e-45,
                    1.1754942e-38, 3.4028235e38, -3.4028235e38, 7.5, -7.5, 0.1, 2.5e-39],
                   np.float32)


def _pairs(seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Every pair of special values, then random magnitudes across the whole
    exponent range (subnormals and huge quotients included), both signs."""
    a, b = np.meshgrid(SPECIAL, SPECIAL)
    rng = np.random.default_rng(seed)
    raw = rng.integers(0, 0xFF800000, size=(2, 4000), dtype=np.uint64).astype(np.uint32)
    ra, rb = raw.view(np.float32)
    return np.concatenate([a.ravel(), ra]), np.concatenate([b.ravel(), rb])


def _oracle(a: np.ndarray, b: np.ndarray, fmod: int) -> np.ndarray:
    with np.errstate(all="ignore"):
        y = np.fmod(a, b) if fmod else np.mod(a, b)
    y = y.astype(np.float32)
    y[np.isnan(y)] = np.uint32(0x7FC00000).view(np.float32)
    return y


def _model(place: str, fmod: int, opset: int) -> bytes:
    """Mod where users put it: on the inputs, on an intermediate (Abs of a),
    or feeding two consumers (Neg and Identity) beside being an output."""
    if place == "inputs":
        nodes = [helper.make_node("Mod", ["a", "b"], ["y"], fmod=fmod)]
        outs = [value("y", F)]
    elif place == "intermediate":
        nodes = [helper.make_node("Abs", ["a"], ["t"]),
                 helper.make_node("Mod", ["t", "b"], ["y"], fmod=fmod)]
        outs = [value("y", F)]
    else:
        nodes = [helper.make_node("Mod", ["a", "b"], ["m"], fmod=fmod),
                 helper.make_node("Neg", ["m"], ["n"]),
                 helper.make_node("Identity", ["m"], ["i"])]
        outs = [value("m", F), value("n", F), value("i", F)]
    return model(nodes, [value("a", F), value("b", F)], outs, opset=opset)


@pytest.mark.parametrize("fmod", [0, 1])
@pytest.mark.parametrize("place", ["inputs", "intermediate", "consumers"])
def test_float_mod_matches_numpy_bit_for_bit(fmod, place):
    a, b = _pairs(100 + fmod)
    data = _model(place, fmod, 28)
    want_a = np.abs(a) if place == "intermediate" else a
    want = _oracle(want_a, b, fmod)
    for what, out in run_everywhere(data, {"a": a, "b": b}):
        key = "y" if place != "consumers" else "m"
        got = out[key]
        bad = np.flatnonzero(bits(got) != bits(want))
        assert bad.size == 0, (what, a[bad[:5]], b[bad[:5]], got[bad[:5]], want[bad[:5]])
        if place == "consumers":
            assert np.array_equal(bits(out["i"]), bits(want)), what
            neg = -want
            neg[np.isnan(neg)] = np.uint32(0x7FC00000).view(np.float32)
            assert np.array_equal(bits(out["n"]), bits(neg)), what


def test_float_mod_broadcasts():
    a = np.linspace(-10, 10, 24, dtype=np.float32).reshape(2, 3, 4)
    b = np.array([3.0, -2.5, 0.75, -7.0], np.float32)
    for fmod in (0, 1):
        data = _model("inputs", fmod, 28)
        for what, out in run_everywhere(data, {"a": a, "b": b}):
            assert np.array_equal(bits(out["y"]), bits(_oracle(a, b, fmod))), (what, fmod)


def test_fmod_1_agrees_with_onnx_runtime():
    ort = pytest.importorskip("onnxruntime")
    a, b = _pairs(7)
    finite = np.isfinite(a) & np.isfinite(b) & (b != 0)
    a, b = a[finite], b[finite]
    data = _model("inputs", 1, 13)
    want = ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(None, {"a": a, "b": b})[0]
    for what, out in run_everywhere(data, {"a": a, "b": b}, threads=(1,)):
        assert np.array_equal(bits(out["y"]), bits(want)), what
