"""matmul with numpy's shape rules: 1-D operands, N-D operands with broadcast
batch dimensions, any strides, out= of the result's shape. Every 2-D product
of a batch must have exactly the bits it has alone (checked against the loop
of 2-D calls and against the independent numpy oracle), on every path, at 1
and 2 threads, in both modes."""
from __future__ import annotations

import itertools
import subprocess
import sys

import numpy as np
import pytest

import samebits
from conftest import assert_same_bits, exact_oracle, test_values


def _values(shape, seed, nspecial=0):
    return test_values(shape, seed, nspecial)


def _loop(a, b, mode, threads=1):
    """The reference: numpy's broadcasting, each 2-D product a separate 2-D call."""
    a2 = a[None, :] if a.ndim == 1 else a
    b2 = b[:, None] if b.ndim == 1 else b
    batch = np.broadcast_shapes(a2.shape[:-2], b2.shape[:-2])
    out = np.empty(batch + (a2.shape[-2], b2.shape[-1]), np.float32)
    ab = np.broadcast_to(a2, batch + a2.shape[-2:])
    bb = np.broadcast_to(b2, batch + b2.shape[-2:])
    for index in np.ndindex(*batch):
        out[index] = samebits.matmul(ab[index], bb[index], mode=mode, threads=threads)
    if a.ndim == 1:
        out = out[..., 0, :]
    if b.ndim == 1:
        out = out[..., 0]
    return out


def _oracle(a, b):
    a2 = a[None, :] if a.ndim == 1 else a
    b2 = b[:, None] if b.ndim == 1 else b
    batch = np.broadcast_shapes(a2.shape[:-2], b2.shape[:-2])
    out = np.empty(batch + (a2.shape[-2], b2.shape[-1]), np.float32)
    ab = np.broadcast_to(a2, batch + a2.shape[-2:])
    bb = np.broadcast_to(b2, batch + b2.shape[-2:])
    for index in np.ndindex(*batch):
        out[index] = exact_oracle(ab[index], bb[index])
    if a.ndim == 1:
        out = out[..., 0, :]
    if b.ndim == 1:
        out = out[..., 0]
    return out


SHAPES = [
    ((5,), (5,)),                      # vector . vector: a scalar
    ((5,), (5, 7)),                    # row vector
    ((6, 5), (5,)),                    # column vector
    ((3, 6, 5), (5,)),
    ((5,), (4, 5, 7)),
    ((2, 3, 6, 5), (3, 5, 7)),          # broadcast of the leading dimension
    ((2, 1, 6, 5), (1, 4, 5, 7)),       # both broadcast
    ((4, 6, 5), (5, 7)),                # a stack over one B: folded into one product
    ((1, 6, 5), (3, 5, 7)),
    ((12, 13, 33), (12, 33, 17)),       # attention-like heads
    ((2, 0, 6, 5), (5, 7)),             # an empty batch
    ((3, 0, 5), (3, 5, 7)),             # empty rows
    ((3, 6, 0), (3, 0, 7)),             # k = 0: +0
]


@pytest.mark.parametrize("mode", ["exact", "fast"])
@pytest.mark.parametrize("shape_a,shape_b", SHAPES)
def test_shapes_and_bits_match_the_loop_of_2d_products(path, mode, shape_a, shape_b):
    a, b = _values(shape_a, 11, 4), _values(shape_b, 12, 4)
    want_shape = np.matmul(np.zeros(shape_a, np.float32), np.zeros(shape_b, np.float32)).shape
    with samebits.use_path(path):
        loop = _loop(a, b, mode)
        for threads in (1, 2):
            got = samebits.matmul(a, b, mode=mode, threads=threads)
            assert np.shape(got) == want_shape
            assert_same_bits(np.reshape(got, (-1, 1)), np.reshape(loop, (-1, 1)),
                             f"{path} {mode} {shape_a} @ {shape_b} threads={threads}")
    if mode == "exact":
        assert_same_bits(np.reshape(loop, (-1, 1)), np.reshape(_oracle(a, b), (-1, 1)),
                         f"{shape_a} @ {shape_b} against the numpy oracle")


def test_vector_dot_vector_is_a_numpy_scalar_like_numpy():
    a, b = _values((9,), 3), _values((9,), 4)
    got, want = samebits.matmul(a, b, mode="exact"), np.matmul(a, b)
    assert type(got) is type(want) and np.shape(got) == ()


def _views():
    """Strided batches: sliced, reversed, transposed, broadcast by stride 0."""
    base_a = _values((6, 9, 21, 14), 21, 8)
    base_b = _values((6, 14, 30, 3), 22, 8)
    yield base_a[:, 1:8, 2:17], base_b[:, :, ::2, 1][:, None]
    yield base_a[::-1, ::2, ::-1, :], base_b[::-1, :, 1:19, 2][:, None]
    yield (base_a.transpose(0, 1, 3, 2)[:, :, :9],
           base_b[:, :, :21, 0].transpose(0, 2, 1)[:, None])
    plane = base_b[0, :, :, 0]
    yield (np.broadcast_to(base_a[0, 0, :5, :14], (3, 5, 14)),
           np.lib.stride_tricks.as_strided(plane, (3, 14, 30), (0,) + plane.strides))


@pytest.mark.parametrize("mode", ["exact", "fast"])
def test_strided_and_broadcast_views_are_read_in_place(path, mode):
    for a, b in _views():
        with samebits.use_path(path):
            got = samebits.matmul(a, b, mode=mode, threads=2)
            assert_same_bits(got.reshape(-1, 1), _loop(a, b, mode).reshape(-1, 1),
                             f"{path} {mode} views {a.shape} @ {b.shape}")
        if mode == "exact":
            assert_same_bits(got.reshape(-1, 1), _oracle(a, b).reshape(-1, 1), "oracle")


def test_attention_batch_matches_loop_on_every_path_and_thread_count(path):
    """BERT-like heads: (batch, heads, 128, 64) x (batch, heads, 64, 128) and
    back; the heads run as one batch in C."""
    q = _values((2, 12, 128, 64), 31, 16)
    kt = _values((2, 12, 64, 128), 32, 16)
    with samebits.use_path(path):
        for mode in ("exact", "fast"):
            s1 = samebits.matmul(q, kt, mode=mode, threads=1)
            s2 = samebits.matmul(q, kt, mode=mode, threads=2)
            assert_same_bits(s1.reshape(-1, 128), s2.reshape(-1, 128), "threads")
            loop = _loop(q[:, :3], kt[:, :3], mode)
            assert_same_bits(s1[:, :3].reshape(-1, 128), loop.reshape(-1, 128), "loop")
    plan = samebits.explain(samebits.matmul, q, kt)
    assert plan.products == 24 and (plan.m, plan.n, plan.k) == (128, 128, 64)


def test_stacked_rows_fold_into_one_product_with_the_same_bits():
    a = _values((8, 32, 48), 41, 8)
    b = _values((48, 40), 42, 8)
    plan = samebits.explain(samebits.matmul, a, b, mode="exact")
    assert plan.products == 1 and plan.m == 256
    got = samebits.matmul(a, b, mode="exact")
    assert_same_bits(got.reshape(256, 40), exact_oracle(a.reshape(256, 48), b), "folded")


def test_out_of_the_result_shape_in_any_layout():
    a, b = _values((3, 4, 6, 5), 51), _values((4, 5, 7), 52)
    want = _oracle(a, b)
    out = np.full((3, 4, 6, 7), np.nan, np.float32)
    assert samebits.matmul(a, b, mode="exact", out=out) is out
    assert_same_bits(out.reshape(-1, 7), want.reshape(-1, 7), "out")
    big = np.zeros((3, 8, 12, 7), np.float32)
    view = big[:, ::2, ::2]                                    # strided rows: written in place
    samebits.matmul(a, b, mode="exact", out=view)
    assert_same_bits(view.reshape(-1, 7), want.reshape(-1, 7), "strided out")
    assert not big[:, 1::2].any() and not big[:, :, 1::2].any()
    wide = np.zeros((3, 4, 6, 14), np.float32)
    samebits.matmul(a, b, mode="exact", out=wide[..., ::2])   # columns apart: a temporary
    assert_same_bits(wide[..., ::2].reshape(-1, 7), want.reshape(-1, 7), "column-strided out")
    assert not wide[..., 1::2].any()
    col = np.zeros((3, 4, 6, 2), np.float32)
    vector = b[0, :, 0]
    got = samebits.matmul(a, vector, mode="exact", out=col[..., 0])   # n = 1: any strides
    assert got is col[..., 0].base or np.shares_memory(got, col)
    assert_same_bits(col[..., 0].reshape(-1, 1), _oracle(a, vector).reshape(-1, 1), "vector out")
    assert not col[..., 1].any()
    with pytest.raises(ValueError, match=r"out has shape \(3, 4, 6, 8\), the result has shape "
                                         r"\(3, 4, 6, 7\)"):
        samebits.matmul(a, b, out=np.empty((3, 4, 6, 8), np.float32))
    shared = np.zeros((3, 4, 6, 7), np.float32)
    with pytest.raises(ValueError, match="overlaps"):
        samebits.matmul(shared[..., :5], b, out=shared)


def test_errors_use_numpy_words_and_name_both_shapes():
    a = np.ones((2, 4, 3), np.float32)
    with pytest.raises(ValueError, match=r"mismatch in its core dimension 0.*size 5 is different "
                                         r"from 3.*\(2, 4, 3\) and \(5, 2\)"):
        samebits.matmul(a, np.ones((5, 2), np.float32))
    with pytest.raises(ValueError, match=r"could not be broadcast together: batch dimensions "
                                         r"\(2,\) and \(3,\) of shapes \(2, 4, 3\) and "
                                         r"\(3, 3, 5\)"):
        samebits.matmul(a, np.ones((3, 3, 5), np.float32))
    with pytest.raises(ValueError, match=r"mismatch.*\(4,\) and \(3,\)"):
        samebits.matmul(np.ones(4, np.float32), np.ones(3, np.float32))


def test_packed_b_under_a_batch():
    a = _values((3, 2, 7, 40), 61, 4)
    b = _values((40, 33), 62, 4)
    packed = samebits.pack(b)
    assert_same_bits(samebits.matmul(a, packed, mode="exact").reshape(-1, 33),
                     _oracle(a, b).reshape(-1, 33), "packed under a batch")
    assert samebits.matmul(a[0, 0, 0], packed).shape == (33,)


def test_more_batch_dimensions_than_one_c_call_takes():
    """numpy allows 64 dimensions; past 16 distinct batch dimensions (after
    merging) the leading ones are looped in Python, with the same bits."""
    shape_a = (2, 1) * 9 + (3, 4)
    shape_b = (1, 2) * 9 + (4, 2)
    a, b = _values(shape_a, 71), _values(shape_b, 72)
    got = samebits.matmul(a, b, mode="exact")
    assert got.shape == np.matmul(a, b).shape
    ref = _oracle(a, b)
    assert_same_bits(got.reshape(-1, 2), ref.reshape(-1, 2), "18 batch dimensions")


def test_buffers_without_numpy_take_n_d_too():
    a = memoryview(bytearray(4 * 2 * 3 * 4)).cast("f", (2, 3, 4))
    b = memoryview(bytearray(4 * 4 * 5)).cast("f", (4, 5))
    for i in range(24):
        a.cast("B").cast("f")[i] = float(i % 7) - 3
    for i in range(20):
        b.cast("B").cast("f")[i] = float(i % 5) - 2
    got = samebits.matmul(a, b, mode="exact")
    assert isinstance(got, memoryview) and got.shape == (2, 3, 5)
    want = np.matmul(np.asarray(a), np.asarray(b))
    np.testing.assert_array_equal(np.asarray(got), want)


@pytest.mark.parametrize("shapes", list(itertools.islice(itertools.product(
    [(3,), (2, 3), (4, 2, 3), (1, 4, 2, 3)], [(3,), (3, 5), (4, 3, 5), (2, 1, 3, 5)]), 16)))
def test_result_shape_is_numpy_s(shapes):
    a, b = (np.ones(s, np.float32) for s in shapes)
    try:
        want = np.matmul(a, b).shape
    except ValueError:
        with pytest.raises(ValueError):
            samebits.matmul(a, b)
        return
    assert np.shape(samebits.matmul(a, b)) == want


def test_trace_prints_the_plan():
    code = ("import numpy as np, samebits; "
            "samebits.matmul(np.ones((12, 64, 32), np.float32), np.ones((12, 32, 64), np.float32))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                       env={**__import__("os").environ, "SAMEBITS_TRACE": "plan"})
    assert r.returncode == 0, r.stderr
    assert "samebits plan: matmul (fast)" in r.stderr and "12 products of 64x64x32" in r.stderr
