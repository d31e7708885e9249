"""A matrix times at most 4 columns (the "column" route): rows of C in the
vector lanes, A read in place (x86) or packed a k-block at a time. The bits
must be the tile route's: exact mode against the numpy oracle of the
definition, both modes against the tile route (B widened past 4 columns)
and against B prepacked (the route reads its first strip), for A and B laid
out every way the route reads them."""
from __future__ import annotations

import numpy as np
import pytest

import samebits
from conftest import assert_same_bits, exact_oracle, test_values

# rows around the kernels' 8-row blocks and 64-row chunks; depths around the
# 8-column transposes and the 256-deep k-blocks of the packed route
ROWS = [2, 3, 7, 8, 9, 16, 17, 63, 64, 65, 130]
DEPTHS = [1, 7, 8, 9, 64, 257, 600]


def operands(m: int, k: int, n: int, seed: int) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """(name, A, B) in the layouts the route sees: contiguous, rows padded,
    A column-major (packed route), B a strided column or transposed."""
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    special_a = test_values((m, k), seed, 4)
    special_b = test_values((k, n), seed + 1, 2)
    wide_a = np.zeros((m, k + 5), np.float32)
    wide_a[:, 2:k + 2] = a
    wide_b = np.zeros((k, n + 3), np.float32)
    wide_b[:, 1:n + 1] = b
    return [
        ("contiguous", a, b),
        ("special values", special_a, special_b),
        ("A rows padded", wide_a[:, 2:k + 2], b),
        ("A column-major", np.asfortranarray(a), b),
        ("B columns strided", a, wide_b[:, 1:n + 1]),
        ("B transposed", a, np.ascontiguousarray(b.T).T),
    ]


@pytest.mark.parametrize("n", [1, 2, 3, 4])
@pytest.mark.parametrize("m", ROWS)
def test_matches_oracle_and_tiles(path, m, n):
    for k in DEPTHS:
        for name, a, b in operands(m, k, n, m * 1000 + k * 10 + n):
            what = f"path {path} {m}x{k}x{n} {name}"
            with samebits.use_path(path):
                exact = samebits.matmul(a, b, mode="exact", threads=2)
                assert_same_bits(exact, exact_oracle(a, b), what)
                assert_same_bits(samebits.matmul(a, b, mode="exact", threads=1), exact,
                                 what + " 1 thread")
                # the tile route: B widened past 4 columns (each output's
                # operations do not depend on the other columns)
                wide = np.hstack([b, np.ones((k, 5), np.float32)])
                packed = samebits.pack(b)     # prepacked B: its first strip
                for mode in ("exact", "fast"):
                    for threads in (1, 2):
                        got = samebits.matmul(a, b, mode=mode, threads=threads)
                        assert_same_bits(got, samebits.matmul(a, wide, mode=mode,
                                                              threads=threads)[:, :n],
                                         what + f" {mode} against tiles, {threads} threads")
                        assert_same_bits(samebits.matmul(a, packed, mode=mode, threads=threads),
                                         got, what + f" {mode} prepacked, {threads} threads")


@pytest.mark.parametrize("n", [1, 3])
def test_bias_and_activation_after_the_sums(path, n):
    m, k = 77, 300
    x = np.random.default_rng(n).standard_normal((m, k)).astype(np.float32)
    w = np.random.default_rng(n + 1).standard_normal((n, k)).astype(np.float32)
    bias = np.linspace(-1, 1, n, dtype=np.float32)
    with samebits.use_path(path):
        for mode in ("exact", "fast"):
            for act in (None, "relu", "silu"):
                got = samebits.linear(x, w, bias, activation=act, mode=mode)
                packed = samebits.linear(x, samebits.pack_linear(w), bias, activation=act,
                                         mode=mode)
                assert_same_bits(packed, got, f"path {path} {mode} {act} packed")
                # the tile route: more outputs, the first n the same
                wide = np.vstack([w, np.ones((5, k), np.float32)])
                tiles = samebits.linear(x, wide, np.hstack([bias, np.zeros(5, np.float32)]),
                                        activation=act, mode=mode)
                assert_same_bits(got, tiles[:, :n], f"path {path} {mode} {act} tiles")
        plain = samebits.matmul(x, np.ascontiguousarray(w.T), mode="exact")
        with np.errstate(all="ignore"):
            want = np.add(plain, bias, dtype=np.float32)
        assert_same_bits(samebits.linear(x, w, bias, mode="exact"), want, "bias after the sum")


def test_route_is_taken():
    a = test_values((100, 50), 1)
    for n in (1, 4):
        b = test_values((50, n), 2)
        for mode in ("exact", "fast"):
            assert samebits.explain(samebits.matmul, a, b, mode=mode).route == "column"
            assert samebits.explain(samebits.matmul, a, samebits.pack(b), mode=mode).route == \
                "column"
    assert samebits.explain(samebits.matmul, a, test_values((50, 5), 3)).route != "column"


def test_batched_matrix_times_vector():
    a = test_values((3, 40, 33), 5, 2)
    b = test_values((3, 33, 1), 6, 2)
    got = samebits.matmul(a, b, mode="exact")
    for i in range(3):
        assert_same_bits(got[i], exact_oracle(a[i], b[i]), f"product {i}")


# A few rows times a B whose columns are contiguous (torch's linear weights,
# a transposed view): run transposed on the column route, B's columns read in
# place as rows. Columns around the 64-row chunks and the kernels' 8-row
# blocks; A's rows 1 to 4 (5 is not swapped).
SWAPPED_COLS = [2, 7, 8, 9, 63, 64, 65, 130, 1000]
COLUMN_DIRECT_PATHS = ("avx2", "avx512", "vec4", "neon", "sme")   # the kernel reading A in place


def swapped_operands(m: int, k: int, n: int, seed: int) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """(name, A, B) with B's columns contiguous: B = W.T for a row-major W,
    plain or with padded rows; A contiguous, column-major, strided or with
    special values."""
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((m, k)).astype(np.float32)
    w = rng.standard_normal((n, k)).astype(np.float32)
    padded_w = np.zeros((n, k + 3), np.float32)
    padded_w[:, 1:k + 1] = w
    wide_a = np.zeros((m, 2 * k), np.float32)
    wide_a[:, ::2] = a
    return [
        ("W.T", a, w.T),
        ("W rows padded", a, padded_w[:, 1:k + 1].T),
        ("A column-major", np.asfortranarray(a), w.T),
        ("A columns strided", wide_a[:, ::2], w.T),
        ("special values", test_values((m, k), seed, 4), test_values((n, k), seed + 1, 3).T),
    ]


@pytest.mark.parametrize("m", [1, 2, 3, 4])
@pytest.mark.parametrize("n", SWAPPED_COLS)
def test_few_rows_times_transposed_b(path, m, n):
    """Exact against the numpy oracle, both modes bit for bit against the same
    product with B made row-major (the row or tile route) and against B
    prepacked, at 1 and 2 threads; on paths with the in-place kernel the plan
    is the column route (scalar has none: it packs B as before)."""
    for k in (1, 9, 257, 600):
        for name, a, b in swapped_operands(m, k, n, m * 100 + n + k):
            what = f"path {path} {m}x{k}x{n} {name}"
            plain = np.ascontiguousarray(b)
            with samebits.use_path(path):
                assert_same_bits(samebits.matmul(a, b, mode="exact", threads=1),
                                 exact_oracle(a, plain), what)
                for mode in ("exact", "fast"):
                    want = samebits.matmul(a, plain, mode=mode, threads=1)
                    assert_same_bits(samebits.matmul(a, samebits.pack(plain), mode=mode),
                                     want, what + f" {mode} prepacked")
                    for threads in (1, 2):
                        assert_same_bits(samebits.matmul(a, b, mode=mode, threads=threads),
                                         want, what + f" {mode} {threads} threads")
                plan = samebits.explain(samebits.matmul, a, b)
            assert (plan.m, plan.n, plan.k) == (m, n, k), plan
            # (k == 1: B's rows are contiguous too, and read in place as they are)
            if path in COLUMN_DIRECT_PATHS and k > 1:
                assert plan.route == "column", plan


def test_linear_on_a_few_rows_reads_its_weights_in_place(path):
    """samebits.linear on 1 to 4 rows with weights as torch stores them: the
    column route over the weights in place, the bias and activation after
    the sums in C's own orientation, into an out with padded rows; the bits
    of the prepacked weights' and of the oracle."""
    k, n = 300, 77
    rng = np.random.default_rng(7)
    w = rng.standard_normal((n, k)).astype(np.float32)
    bias = np.linspace(-1, 1, n, dtype=np.float32)
    with samebits.use_path(path):
        packed = samebits.pack_linear(w)
    for m in (1, 3, 4, 5):
        x = test_values((m, k), m, 3)
        with samebits.use_path(path):
            for mode in ("exact", "fast"):
                for act in (None, "relu", "silu"):
                    for threads in (1, 2):
                        holder = np.full((m, n + 4), np.nan, np.float32)
                        got = samebits.linear(x, w, bias, activation=act, mode=mode,
                                              threads=threads, out=holder[:, 2:n + 2])
                        want = samebits.linear(x, packed, bias, activation=act, mode=mode)
                        assert_same_bits(got, want, f"{path} m={m} {mode} {act} t{threads}")
                        assert np.isnan(holder[:, :2]).all() and np.isnan(holder[:, n + 2:]).all()
            plan = samebits.explain(samebits.linear, x, w, bias)
        with np.errstate(all="ignore"):
            want = np.add(exact_oracle(x, np.ascontiguousarray(w.T)), bias, dtype=np.float32)
        want.view(np.uint32)[np.isnan(want)] = 0x7FC00000
        assert_same_bits(samebits.linear(x, w, bias, mode="exact"), want, f"m={m} oracle")
        if path in COLUMN_DIRECT_PATHS:
            assert (plan.route == "column") == (m <= 4), plan
