"""sum, mean, softmax, log_softmax, layer_norm: bit for bit against numpy
oracles of docs/exact-ops.md's orders (sequential float32 sums from +0, the
exact exp and log), over every axis, with special values, on every path and
at 1 and 2 threads."""
from __future__ import annotations

import array

import numpy as np
import pytest

import samebits
from samebits import _paths

from reduce_reference import layer_norm_oracle, seq_sum, softmax_oracle
from conftest import bits as _bits
from conftest import path_or_skip as _path_or_skip
from elementwise_reference import canonical as _canonical

F32 = np.float32


def _tensor(shape, seed, specials=True) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(shape) * 4).astype(np.float32)
    if specials and x.size > 40:
        flat = x.reshape(-1)
        flat[3], flat[17], flat[29], flat[31] = np.nan, np.inf, -np.inf, -0.0
        flat[37] = np.float32(1e-41)
    return x


@pytest.mark.parametrize("path", _paths.ALL_PATHS)
@pytest.mark.parametrize("threads", [1, 2])
def test_sum_and_mean_every_axis(path, threads):
    _path_or_skip(path)
    x = _tensor((5, 300, 7), 1)
    with samebits.use_path(path):
        for axis in (0, 1, 2, -1):
            got = samebits.sum(x, axis, mode="exact", threads=threads)
            assert np.array_equal(_bits(got), _bits(_canonical(seq_sum(x, axis % 3))))
            with np.errstate(all="ignore"):
                want_mean = _canonical(seq_sum(x, axis % 3) / F32(x.shape[axis]))
            got = samebits.mean(x, axis, keepdims=True, mode="exact", threads=threads)
            assert np.array_equal(_bits(got), _bits(np.expand_dims(want_mean, axis)))
        flat = samebits.sum(x, mode="exact")
        assert flat.shape == () and _bits(flat) == _bits(_canonical(seq_sum(x.reshape(-1), 0)))


def test_sum_of_large_rows_and_empty_axes():
    x = _tensor((3, 100_000), 2, specials=False)
    assert np.array_equal(_bits(samebits.sum(x, 1, threads=2)), _bits(seq_sum(x, 1)))
    e = np.zeros((3, 0), np.float32)
    assert np.array_equal(samebits.sum(e, 1), np.zeros(3, np.float32))
    assert np.isnan(samebits.mean(e, 1)).all()
    assert samebits.sum(np.zeros((0, 4), np.float32), 1).shape == (0,)
    assert samebits.softmax(np.zeros((2, 0), np.float32)).shape == (2, 0)
    assert _bits(samebits.sum(np.array([-0.0, -0.0], np.float32))) == 0   # from +0


@pytest.mark.parametrize("path", _paths.ALL_PATHS)
@pytest.mark.parametrize("log", [False, True])
def test_softmax_every_dim(path, log):
    _path_or_skip(path)
    x = _tensor((4, 129, 6), 3)
    fn = samebits.log_softmax if log else samebits.softmax
    with samebits.use_path(path):
        for dim in (0, 1, 2, -1):
            for threads in (1, 2):
                got = fn(x, dim, mode="exact", threads=threads)
                assert np.array_equal(_bits(got), _bits(softmax_oracle(x, dim % 3, log))), dim


def test_softmax_special_rows():
    x = np.array([[0.0, 0.0, 0.0, 0.0], [-np.inf] * 4, [1.0, np.inf, 2.0, 3.0],
                  [1.0, np.nan, 2.0, 3.0], [1000.0, -1000.0, 0.0, 1000.0]], np.float32)
    got = samebits.softmax(x, mode="exact")
    assert np.array_equal(_bits(got), _bits(softmax_oracle(x, 1)))
    assert (got[0] == 0.25).all() and np.isnan(got[1:4]).all()
    assert got[4].tolist() == [0.5, 0.0, 0.0, 0.5]


@pytest.mark.parametrize("shape,k", [((6, 768), 1), ((2, 3, 64), 1), ((2, 3, 4, 5), 2),
                                     ((7,), 1), ((3, 1), 1)])
@pytest.mark.parametrize("affine", [False, True])
def test_layer_norm(shape, k, affine):
    x = _tensor(shape, 4, specials=False)
    norm = shape[len(shape) - k:]
    rng = np.random.default_rng(5)
    weight = rng.standard_normal(norm).astype(np.float32) if affine else None
    bias = rng.standard_normal(norm).astype(np.float32) if affine else None
    for threads in (1, 2):
        got = samebits.layer_norm(x, norm, weight, bias, 1e-5, mode="exact", threads=threads)
        assert np.array_equal(_bits(got), _bits(layer_norm_oracle(x, k, weight, bias, 1e-5)))
    close = (x - x.mean(axis=tuple(range(len(shape) - k, len(shape))), keepdims=True))
    assert got.shape == x.shape and np.isfinite(close).all()


def test_layer_norm_nan_and_bias_only():
    x = _tensor((4, 50), 6)
    b = np.arange(50, dtype=np.float32)
    got = samebits.layer_norm(x, 50, None, b, eps=1e-3, mode="exact")
    assert np.array_equal(_bits(got), _bits(layer_norm_oracle(x, 1, None, b, 1e-3)))


def test_buffers_without_numpy():
    x = array.array("f", [1.0, 2.0, 3.0, 4.0])
    total = samebits.sum(x)
    assert isinstance(total, memoryview) and total.shape == () and total[()] == 10.0
    got = samebits.softmax(memoryview(x).cast("B").cast("f", (2, 2)))
    assert isinstance(got, memoryview) and got.shape == (2, 2)


@pytest.mark.parametrize("call,error,match", [
    (lambda: samebits.sum(np.ones((2, 3), np.float32), 2), ValueError, "axis 2 is out of range"),
    (lambda: samebits.sum(np.ones((2, 3), np.float32), 1.0), TypeError, "axis"),
    (lambda: samebits.sum(np.ones((2, 3), np.float32), keepdims=1), TypeError, "keepdims"),
    (lambda: samebits.softmax(np.ones((2, 3)), 0), TypeError, "float32"),
    (lambda: samebits.softmax(np.ones((2, 3), np.float32), dim=-3), ValueError, "dim"),
    (lambda: samebits.layer_norm(np.ones((2, 3), np.float32), 4), ValueError, "trailing"),
    (lambda: samebits.layer_norm(np.ones((2, 3), np.float32), 3, np.ones(2, np.float32)),
     ValueError, "weight has shape"),
    (lambda: samebits.layer_norm(np.ones((2, 3), np.float32), 3, eps="x"), TypeError, "eps"),
    (lambda: samebits.layer_norm(np.ones((2, 3), np.float32), "3"), TypeError,
     "normalized_shape"),
    (lambda: samebits.sum(np.ones(3, np.float32), out=np.ones(2, np.float32)), ValueError,
     "shape"),
])
def test_bad_input(call, error, match):
    with pytest.raises(error, match=match):
        call()
