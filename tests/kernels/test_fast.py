"""Fast mode: within the sequential-summation error bound, and repeatable."""
from __future__ import annotations

import numpy as np
import pytest

import samebits
from conftest import assert_same_bits, test_values

U = 2.0 ** -24


def _finite_values(shape, seed):
    x = test_values(shape, seed, 0)
    return x


@pytest.mark.parametrize("m,n,k", [(1, 1, 1), (7, 9, 13), (64, 64, 64), (100, 37, 300),
                                   (33, 257, 513), (300, 200, 1000)])
def test_within_higham_bound_of_float64_reference(path, m, n, k):
    a = _finite_values((m, k), m * 31 + k)
    b = _finite_values((k, n), n * 17 + k)
    with samebits.use_path(path):
        got = samebits.matmul(a, b).astype(np.float64)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    ref = a64 @ b64
    bound = k * U * (np.abs(a64) @ np.abs(b64)) + 1e-30
    err = np.abs(got - ref)
    worst = np.unravel_index(np.argmax(err - bound), err.shape)
    assert (err <= bound).all(), (f"path {path} {m}x{n}x{k}: error {err[worst]:.3e} "
                                  f"> bound {bound[worst]:.3e} at {worst}")


def test_one_thread_and_all_threads_give_same_bits(path):
    a = test_values((700, 500), 3, 10)
    b = test_values((500, 900), 4, 10)
    with samebits.use_path(path):
        one = samebits.matmul(a, b, threads=1)
        for threads in (2, 3, 8):
            assert_same_bits(samebits.matmul(a, b, threads=threads), one,
                             f"path {path} fast threads={threads}")


def test_repeatable_and_layout_independent(path):
    a = test_values((123, 301), 5, 4)
    b = test_values((301, 77), 6, 4)
    with samebits.use_path(path):
        first = samebits.matmul(a, b)
        assert_same_bits(samebits.matmul(a, b), first, "repeat")
        # The same values through a transposed view and a padded view.
        a_t = np.ascontiguousarray(a.T).T
        b_pad = np.zeros((301, 80), np.float32)
        b_pad[:, :77] = b
        assert_same_bits(samebits.matmul(a_t, b_pad[:, :77]), first, "views")


def test_unfused_paths_equal_exact_on_finite_inputs(path):
    # A path without FMA computes acc + a*b in fast mode: exact mode's bits.
    if samebits.info()["fused_fast_mode"][path]:
        pytest.skip(f"path {path} fuses in fast mode")
    a = test_values((50, 200), 8, 0)
    b = test_values((200, 60), 9, 0)
    with samebits.use_path(path):
        assert_same_bits(samebits.matmul(a, b), samebits.matmul(a, b, mode="exact"),
                         f"path {path}")


def test_fusing_paths_agree(path):
    # Fast mode on a fusing path is one fused multiply-add per term in
    # increasing k from +0, whatever the tile: two fusing paths give the same
    # bits on finite values (NaN payloads may differ). The convolutions cover
    # every register tile a path has (avx512: 8x32 for every channel count)
    # and the squeeze-excitation layers (the single-column kernel, where a path
    # has one, against the tile kernel of avx2).
    if not samebits.info()["fused_fast_mode"][path]:
        pytest.skip(f"path {path} does not fuse in fast mode")
    others = [p for p in samebits.paths() if p != path and samebits.info()["fused_fast_mode"][p]]
    if not others:
        pytest.skip(f"no other fusing path runs here to compare {path} with")
    a, b = test_values((45, 300), 11, 0), test_values((300, 70), 12, 0)
    x = test_values((1, 24, 11, 13), 13, 0)
    weights = [test_values((cout, 24, 3, 3), 14 + cout, 0) for cout in (64, 40, 17)]
    squeeze = [test_values((cout, 300, 1, 1), 15 + cout, 0) for cout in (72, 130)]
    x_squeeze = test_values((2, 300, 1, 1), 16, 0)
    outputs = {}
    for p in (path, others[0]):
        with samebits.use_path(p):
            outputs[p] = [samebits.matmul(a, b), samebits.matmul(a[:1], b)] + [
                samebits.conv2d(x, w, padding=1) for w in weights] + [
                samebits.conv2d(x, samebits.pack_conv2d(w), stride=2) for w in weights] + [
                samebits.conv2d(x_squeeze, samebits.pack_conv2d(w)) for w in squeeze]
    for i, (got, want) in enumerate(zip(outputs[path], outputs[others[0]])):
        assert_same_bits(got, want, f"{path} vs {others[0]}, product {i}")
