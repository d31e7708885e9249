"""Property-based checks (hypothesis): any layout, any path, exact = oracle."""
from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import samebits
from conftest import assert_same_bits, exact_oracle, test_values


@st.composite
def operand(draw, rows: int, cols: int):
    seed = draw(st.integers(0, 2**32 - 1))
    nspecial = draw(st.integers(0, 6))
    layout = draw(st.sampled_from(["c", "f", "pad", "reversed", "step"]))
    if layout == "f":
        return np.asfortranarray(test_values((rows, cols), seed, nspecial))
    if layout == "pad":
        return test_values((rows + 2, cols + 3), seed, nspecial)[1:rows + 1, 2:cols + 2]
    if layout == "reversed":
        return test_values((rows, cols), seed, nspecial)[::-1, ::-1]
    if layout == "step":
        return test_values((rows * 2, cols * 3), seed, nspecial)[::2, ::3]
    return test_values((rows, cols), seed, nspecial)


@st.composite
def problem(draw):
    m, n, k = (draw(st.integers(0, 48)) for _ in range(3))
    if draw(st.booleans()):
        k = draw(st.integers(250, 520))     # across the k-block boundary
    return draw(operand(m, k)), draw(operand(k, n)), draw(st.sampled_from(samebits.paths())), \
        draw(st.integers(1, 4))


@settings(max_examples=300, deadline=None)
@given(problem())
def test_exact_equals_oracle_for_any_layout(case):
    a, b, path, threads = case
    with samebits.use_path(path):
        got = samebits.matmul(a, b, mode="exact", threads=threads)
    assert_same_bits(got, exact_oracle(a, b), f"path {path} a{a.shape}{a.strides} b{b.shape}{b.strides}")
