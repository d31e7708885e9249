"""batch_norm, group_norm, avg_pool2d, adaptive_avg_pool2d: bit for bit
against oracles written from docs/exact-ops.md (plain loops of float32
operations), torch's window and divisor rules, special values, 1 and 2
threads, and the binding's errors."""
from __future__ import annotations

import numpy as np
import pytest

import samebits

from reduce_reference import adaptive_oracle, avg_pool_oracle, seq_sum
from conftest import bits as _bits
from conftest import path_or_skip as _path_or_skip
from samebits._binding import paths as _paths
from elementwise_reference import canonical as _canonical

F32 = np.float32


def _x(shape, seed=1, specials=True):
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(shape) * 3).astype(np.float32)
    if specials and x.size > 30:
        f = x.reshape(-1)
        f[5], f[11], f[23] = np.nan, np.inf, -0.0
    return x


# ---- normalization ---------------------------------------------------------

def _affine(d, r, w, b, c_axis_shape):
    y = d * r
    if w is not None:
        y = y * w.reshape(c_axis_shape)
    if b is not None:
        y = y + b.reshape(c_axis_shape)
    return _canonical(y)


@pytest.mark.parametrize("shape", [(2, 3), (2, 5, 7), (3, 4, 5, 6)])
@pytest.mark.parametrize("affine", [False, True])
def test_batch_norm(shape, affine):
    x = _x(shape)
    c = shape[1]
    rng = np.random.default_rng(2)
    mean = rng.standard_normal(c).astype(np.float32)
    var = (rng.random(c) * 2).astype(np.float32)
    w = rng.standard_normal(c).astype(np.float32) if affine else None
    b = rng.standard_normal(c).astype(np.float32) if affine else None
    cs = (1, c) + (1,) * (len(shape) - 2)
    with np.errstate(all="ignore"):
        r = F32(1) / np.sqrt(var + F32(1e-3))
        want = _affine(x - mean.reshape(cs), r.reshape(cs), w, b, cs)
    for threads in (1, 2):
        got = samebits.batch_norm(x, mean, var, w, b, eps=1e-3, mode="exact", threads=threads)
        assert np.array_equal(_bits(got), _bits(want))


@pytest.mark.parametrize("shape,groups", [((2, 6, 5, 5), 3), ((1, 4, 9), 1), ((3, 8, 2, 2), 8),
                                          ((2, 4), 2)])
@pytest.mark.parametrize("affine", [False, True])
def test_group_norm(shape, groups, affine):
    x = _x(shape, 3, specials=False)
    n, c = shape[:2]
    rng = np.random.default_rng(4)
    w = rng.standard_normal(c).astype(np.float32) if affine else None
    b = rng.standard_normal(c).astype(np.float32) if affine else None
    g = x.reshape(n, groups, -1)
    count = F32(g.shape[2])
    mean = seq_sum(g, 2, keepdims=True) / count
    d = g - mean
    r = F32(1) / np.sqrt(seq_sum(d * d, 2, keepdims=True) / count + F32(1e-5))
    cs = (1, c) + (1,) * (len(shape) - 2)
    want = _affine(d.reshape(shape), np.broadcast_to(r, g.shape).reshape(shape), w, b, cs)
    for threads in (1, 2):
        got = samebits.group_norm(x, groups, w, b, mode="exact", threads=threads)
        assert np.array_equal(_bits(got), _bits(want))


def _group_norm_oracle(x, groups, w, b):
    n, c = x.shape[:2]
    g = x.reshape(n, groups, -1)
    count = F32(g.shape[2])
    mean = seq_sum(g, 2, keepdims=True) / count
    d = g - mean
    r = F32(1) / np.sqrt(seq_sum(d * d, 2, keepdims=True) / count + F32(1e-5))
    cs = (1, c) + (1,) * (x.ndim - 2)
    return _affine(d.reshape(x.shape), np.broadcast_to(r, g.shape).reshape(x.shape), w, b, cs)


@pytest.mark.parametrize("path", _paths.ALL_PATHS)
def test_group_norm_every_path(path):
    """The slices' statistics run in blocks of up to 16 (the path's row
    sums): slice counts around the blocks (InstanceNormalization is one group
    per channel), odd lengths, special values, both modes, 1 and 2 threads."""
    _path_or_skip(path)
    rng = np.random.default_rng(9)
    with samebits.use_path(path), np.errstate(all="ignore"):
        for shape, groups in [((1, 64, 13, 11), 64), ((2, 48, 7, 7), 16), ((1, 17, 4, 4), 17),
                              ((1, 3, 5), 3), ((2, 6, 5, 5), 3), ((1, 40, 33), 40),
                              ((1, 4, 9), 1), ((3, 8, 2, 2), 8)]:
            x = (rng.standard_normal(shape) * 3).astype(F32)
            x.flat[rng.integers(0, x.size, size=3)] = [np.nan, np.inf, -0.0]
            c = shape[1]
            w = rng.standard_normal(c).astype(F32)
            b = rng.standard_normal(c).astype(F32)
            want = _bits(_group_norm_oracle(x, groups, w, b))
            for mode in ("exact", "fast"):
                for threads in (1, 2):
                    got = samebits.group_norm(x, groups, w, b, mode=mode, threads=threads)
                    assert np.array_equal(_bits(got), want), (shape, groups, mode, threads)


# ---- pooling ---------------------------------------------------------------

@pytest.mark.parametrize("k,s,pads", [((3, 3), (2, 2), (1, 1, 1, 1)), ((2, 2), (2, 2), (0, 0, 0, 0)),
                                      ((3, 2), (1, 2), (1, 0, 0, 1)), ((5, 5), (3, 3), (2, 2, 2, 2)),
                                      ((1, 1), (1, 1), (0, 0, 0, 0))])
@pytest.mark.parametrize("ceil_mode", [False, True])
@pytest.mark.parametrize("include_pad", [True, False])
def test_avg_pool2d(k, s, pads, ceil_mode, include_pad):
    x = _x((2, 3, 11, 10), 5)
    want = avg_pool_oracle(x, k, s, pads, ceil_mode, include_pad)
    for threads in (1, 2):
        got = samebits.avg_pool2d(x, k, s, pads, ceil_mode=ceil_mode,
                                  count_include_pad=include_pad, threads=threads)
        assert got.shape == want.shape
        assert np.array_equal(_bits(got), _bits(want))


def test_avg_pool2d_known_values_and_divisor():
    x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
    # 3x3 stride 2 pad 1: the corner window holds 0, 1, 4, 5 inside 9 places
    assert samebits.avg_pool2d(x, 3, 2, 1)[0, 0, 0, 0] == np.float32(10 / 9)
    assert samebits.avg_pool2d(x, 3, 2, 1, count_include_pad=False)[0, 0, 0, 0] == 2.5
    assert samebits.avg_pool2d(x, 2, divisor_override=1)[0, 0, 0, 0] == 10.0
    assert samebits.avg_pool2d(x[0], 2).shape == (1, 2, 2)          # unbatched (C, H, W)
    want = avg_pool_oracle(x, (3, 3), (2, 2), (1, 1, 1, 1), True, True, divisor=7)
    got = samebits.avg_pool2d(x, 3, 2, 1, ceil_mode=True, divisor_override=7)
    assert np.array_equal(_bits(got), _bits(want))


@pytest.mark.parametrize("size", [1, (1, 1), (3, 4), (7, None), (10, 9), (13, 2)])
def test_adaptive_avg_pool2d(size):
    x = _x((2, 3, 10, 9), 6)
    oh, ow = (size, size) if isinstance(size, int) else (size[0], size[1] or 9)
    got = samebits.adaptive_avg_pool2d(x, size)
    assert np.array_equal(_bits(got), _bits(adaptive_oracle(x, oh, ow)))


def test_global_average_pool_of_a_large_map():
    x = _x((1, 64, 56, 56), 7, specials=False)
    got = samebits.adaptive_avg_pool2d(x, 1, threads=2)
    want = seq_sum(x.reshape(1, 64, -1), 2) / F32(56 * 56)
    assert np.array_equal(_bits(got[..., 0, 0]), _bits(want))


@pytest.mark.parametrize("call,error,match", [
    (lambda: samebits.batch_norm(np.ones((2, 3), np.float32), np.ones(2, np.float32),
                                 np.ones(3, np.float32)), ValueError, "running_mean must have shape"),
    (lambda: samebits.batch_norm(np.ones((2, 3), np.float32), np.ones(3, np.float32),
                                 np.ones(3, np.float32), training=True), ValueError, "inference"),
    (lambda: samebits.batch_norm(np.ones(3, np.float32), np.ones(3, np.float32),
                                 np.ones(3, np.float32)), ValueError, "at least 2-D"),
    (lambda: samebits.group_norm(np.ones((2, 6), np.float32), 4), ValueError, "num_groups"),
    (lambda: samebits.group_norm(np.ones((2, 6), np.float32), 2.0), TypeError, "num_groups"),
    (lambda: samebits.avg_pool2d(np.ones((1, 1, 4, 4), np.float32), 2, padding=2), ValueError,
     "at most half"),
    (lambda: samebits.avg_pool2d(np.ones((1, 1, 4, 4), np.float32), 5), ValueError, "below 1"),
    (lambda: samebits.avg_pool2d(np.ones((1, 1, 4, 4), np.float32), 2, ceil_mode=1), TypeError,
     "ceil_mode"),
    (lambda: samebits.avg_pool2d(np.ones((4, 4), np.float32), 2), ValueError, "at least 3-D"),
    (lambda: samebits.avg_pool2d(np.ones((1, 1, 0, 4), np.float32), 1), ValueError, "at least 1"),
    (lambda: samebits.adaptive_avg_pool2d(np.ones((1, 1, 4, 4), np.float32), 0), ValueError,
     "output_size"),
    (lambda: samebits.adaptive_avg_pool2d(np.ones((1, 1, 4, 4), np.float32), (1, 2, 3)),
     ValueError, "pair"),
])
def test_bad_input(call, error, match):
    with pytest.raises(error, match=match):
        call()
