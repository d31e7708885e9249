"""Exact mode is a contract: every path, bit for bit, against two references.

The C reference is the definition as a naive loop (sb_sgemm_naive); the numpy
oracle (conftest.exact_oracle) writes the same order with numpy float32
operations. Neither shares code with the blocked kernels.
"""
from __future__ import annotations

import numpy as np
import pytest

import samebits
from conftest import assert_same_bits, bits, exact_oracle, naive, raw_sgemm, test_values

SWEEP = 70


def _sweep_operands(k: int, seed: int):
    """A (70 x k) and B (k x 70) cut out of padded buffers at odd offsets."""
    a_store = test_values((SWEEP + 3, k + 5), seed, 24)
    b_store = test_values((k + 2, SWEEP + 7), seed + 1, 24)
    return a_store[1:SWEEP + 1, 2:k + 2], b_store[1:k + 1, 3:SWEEP + 3]


def _sweep(path: str, ks, threads: int = 1) -> None:
    """Every m, n in 0..70 for each k: the path against the naive C loop.

    Output (i, j) depends only on row i of A, column j of B and k, so the
    reference for (m, n, k) is the top-left m x n of the 70 x 70 one."""
    for k in ks:
        a, b = _sweep_operands(k, 1000 + k)
        ref_bits = bits(naive(a, b))
        out = np.empty((SWEEP, SWEEP + 3), dtype=np.float32)
        sentinel = np.uint32(0x7F812345)     # a signalling NaN no kernel writes
        for m in range(SWEEP + 1):
            for n in range(SWEEP + 1):
                out.view(np.uint32)[:] = sentinel
                raw_sgemm(path, "exact", threads, a[:m], b[:, :n], out)
                got = out.view(np.uint32)
                if not np.array_equal(got[:m, :n], ref_bits[:m, :n]):
                    assert_same_bits(out[:m, :n], ref_bits[:m, :n].view(np.float32),
                                     f"path {path} m={m} n={n} k={k}")
                if not (got[:m, n:] == sentinel).all() or not (got[m:] == sentinel).all():
                    raise AssertionError(f"path {path} m={m} n={n} k={k} wrote outside C")


def test_every_m_n_for_small_k_matches_naive_loop(path):
    _sweep(path, [0, 1, 2, 3, 5, 8, 13, 17, 33, 70])


@pytest.mark.slow
def test_every_m_n_k_up_to_70_matches_naive_loop(path):
    _sweep(path, range(SWEEP + 1))


def test_naive_loop_matches_numpy_oracle():
    # The two references agree with each other before they judge the kernels.
    for k in (0, 1, 7, 70, 300):
        a, b = _sweep_operands(k, 77 + k)
        assert_same_bits(naive(a, b), exact_oracle(a, b), f"naive vs oracle k={k}")


def _random_case(rng: np.random.Generator, index: int):
    """A random (a, b) with random strides, offsets, layouts and special values."""
    big = rng.random() < 0.08
    m, n = (int(x) for x in rng.integers(1, 200 if big else 40, size=2))
    k = int(rng.integers(200, 600)) if big else int(rng.integers(0, 80))

    def operand(rows, cols, seed):
        transposed = rng.random() < 0.3
        pad_r, pad_c = (int(x) for x in rng.integers(0, 5, size=2))
        shape = (cols + pad_r, rows + pad_c) if transposed else (rows + pad_r, cols + pad_c)
        store = test_values(shape, seed, int(rng.integers(0, 12)))
        r0, c0 = int(rng.integers(0, pad_r + 1)), int(rng.integers(0, pad_c + 1))
        if transposed:
            return store[r0:r0 + cols, c0:c0 + rows].T
        view = store[r0:r0 + rows, c0:c0 + cols]
        if rng.random() < 0.1 and rows > 1:   # a negative row stride
            view = view[::-1]
        return view

    return operand(m, k, 2 * index + 11), operand(k, n, 2 * index + 12)


RANDOM_CASES = 1500


@pytest.fixture(scope="module")
def random_cases():
    rng = np.random.default_rng(20261129)
    cases = []
    for i in range(RANDOM_CASES):
        a, b = _random_case(rng, i)
        cases.append((a, b, exact_oracle(a, b)))
    return cases


def test_random_shapes_strides_and_views_match_numpy_oracle(path, random_cases):
    with samebits.use_path(path):
        for i, (a, b, want) in enumerate(random_cases):
            got = samebits.matmul(a, b, mode="exact", threads=2)
            assert_same_bits(got, want, f"path {path} case {i} a{a.shape} strides {a.strides} "
                                        f"b{b.shape} strides {b.strides}")


@pytest.mark.parametrize("k", [255, 256, 257, 511, 512, 513, 1000])
def test_k_blocks_continue_in_order(path, k):
    a = test_values((37, k), k, 6)
    b = test_values((k, 45), k + 1, 6)
    with samebits.use_path(path):
        assert_same_bits(samebits.matmul(a, b, mode="exact"), exact_oracle(a, b),
                         f"path {path} k={k}")


def test_special_values_follow_ieee_and_canonical_nan(path):
    nan, inf = np.float32("nan"), np.float32("inf")
    a = np.array([[1, 1], [0, inf], [inf, -inf], [-0.0, -0.0], [1e-30, 1e-30], [nan, 1]],
                 dtype=np.float32)
    b = np.array([[inf, -0.0], [-inf, -0.0]], dtype=np.float32)
    negative_nan = np.array([0xFFC00001], dtype=np.uint32).view(np.float32)[0]
    a2 = np.array([[negative_nan, 2.0]], dtype=np.float32)
    with samebits.use_path(path):
        got = samebits.matmul(a, b, mode="exact")
        got2 = samebits.matmul(a2, np.ones((2, 3), np.float32), mode="exact")
    want = exact_oracle(a, b)
    assert_same_bits(got, want, f"path {path} specials")
    g = bits(got)
    assert g[0, 0] == 0x7FC00000                 # inf + -inf
    assert g[1, 1] == 0x7FC00000                 # 0*-0 = -0, then inf*-0 is NaN
    assert g[2, 0] == 0x7F800000                 # inf*inf + -inf*-inf = inf + inf
    assert g[4, 0] == 0x7FC00000                 # 1e-30*inf + 1e-30*-inf = inf - inf
    assert g[2, 1] == 0x7FC00000                 # inf*-0 is NaN
    assert (bits(got2) == 0x7FC00000).all()      # a payload NaN comes out canonical
    assert g[3, 1] == 0x00000000                 # (+0) + (-0*-0=+0): +0, never -0
    assert g[3, 0] == 0x7FC00000                 # -0 * inf is NaN


def test_k_zero_gives_positive_zero(path):
    out = np.full((3, 4), -1.0, dtype=np.float32)
    with samebits.use_path(path):
        samebits.matmul(np.empty((3, 0), np.float32), np.empty((0, 4), np.float32),
                        mode="exact", out=out)
    assert (bits(out) == 0).all()


def test_negative_zero_products_sum_to_positive_zero(path):
    a = np.full((5, 3), -0.0, dtype=np.float32)
    b = np.ones((3, 7), dtype=np.float32)
    with samebits.use_path(path):
        got = samebits.matmul(a, b, mode="exact")
    assert (bits(got) == 0).all()   # +0 + (-0) = +0: the accumulator starts at +0


def test_subnormals_computed_under_callers_flush_to_zero(path, flush_to_zero):
    # Products of two tiny values are subnormal; a flushed kernel would give 0.
    from samebits._binding.lib import lib
    a = np.full((40, 300), 2.0**-70, dtype=np.float32)
    a[:, ::3] = 3.0 * 2.0**-75
    b = np.full((300, 50), 2.0**-70, dtype=np.float32)
    lib.sb_set_flush_to_zero(0)
    want = exact_oracle(a, b)
    assert (want != 0).all()
    lib.sb_set_flush_to_zero(1)
    with samebits.use_path(path):
        for threads in (1, 2):
            got = samebits.matmul(a, b, mode="exact", threads=threads)
            assert_same_bits(got, want, f"path {path} under FTZ/DAZ threads={threads}")
            big = samebits.matmul(test_values((300, 300), 5), test_values((300, 300), 6),
                                  mode="exact", threads=threads)
            assert lib.sb_get_flush_to_zero() == 1, "the caller's mode must be restored"
    lib.sb_set_flush_to_zero(0)
    want_big = exact_oracle(test_values((300, 300), 5), test_values((300, 300), 6))
    assert_same_bits(big, want_big, f"path {path} 300^3 under FTZ/DAZ")


def test_exact_is_independent_of_threads_and_paths():
    a = test_values((700, 600), 41, 16)
    b = test_values((600, 500), 42, 16)
    want = exact_oracle(a, b)
    for p in samebits.paths():
        with samebits.use_path(p):
            for threads in (1, 2, 3):
                assert_same_bits(samebits.matmul(a, b, mode="exact", threads=threads), want,
                                 f"path {p} threads={threads}")


# Few tile rows and a B over 256 KiB: A packed whole, B packed panel by panel
# inside the chunks (loops.c, panel mode); 193 rows is past four avx2 tile rows.
# The last three have one tile row, k <= 128 and n >= 2048: B read in place
# (streams_fit_l1), except 4096 columns (a 16 KiB row step: panel mode).
PANEL_SHAPES = [(40, 300, 300), (64, 576, 700), (2, 500, 200), (193, 300, 400),
                (130, 257, 513), (7, 1000, 80), (8, 32, 2501), (24, 120, 2049),
                (5, 64, 4096)]


@pytest.mark.parametrize("m,k,n", PANEL_SHAPES)
def test_panel_mode_shapes(path: str, m: int, k: int, n: int) -> None:
    a = test_values((m, k), m + k, 8)
    b = test_values((k, n), n, 8)
    want = naive(a, b)
    with samebits.use_path(path):
        for threads in (1, 2):
            assert_same_bits(samebits.matmul(a, b, mode="exact", threads=threads), want,
                             f"{path} exact {m}x{k}x{n} threads {threads}")
        fast = samebits.matmul(a, b, threads=1)
        assert_same_bits(samebits.matmul(a, b, threads=2), fast, "fast: 2 threads vs 1")
        # Another route: the same bits (NaN canonical in fast mode too).
        assert_same_bits(samebits.matmul(a, samebits.pack(b), threads=1), fast,
                         "fast: packed vs plain")
        assert_same_bits(samebits.matmul(a, b.T.copy().T, threads=1), fast,
                         "fast: column-major b (packed whole) vs row-major")
