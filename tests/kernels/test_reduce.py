"""sum, mean, softmax, log_softmax, layer_norm: bit for bit against numpy
oracles of docs/exact-ops.md's orders (sequential float32 sums from +0, the
exact exp and log), over every axis, with special values, on every path and
at 1 and 2 threads."""
from __future__ import annotations

import array

import numpy as np
import pytest

import samebits
from samebits._binding import paths as _paths

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


@pytest.mark.parametrize("path", _paths.ALL_PATHS)
@pytest.mark.parametrize("log", [False, True])
def test_softmax_columns_in_both_modes(path, log):
    """Along an inner axis both modes use the exact exp (docs/exact-ops.md):
    columns whose x - m falls where exp is subnormal, underflows or is
    special, in blocks of 256 columns and a part block, in place too."""
    _path_or_skip(path)
    rng = np.random.default_rng(7)
    x = (rng.standard_normal((5, 3, 300)) * 30).astype(np.float32)
    x[:, 0, 10] = [-100.0, -87.5, 0.0, -103.9, -110.0]    # subnormal and underflowing terms
    x[:, 0, 11] = [np.inf, 1.0, -np.inf, 2.0, -0.0]
    x[:, 0, 12] = [np.nan, 1.0, 2.0, 3.0, 4.0]
    x[:, :, 13] = -np.inf
    x[:, 1, 14] = [1e-41, -1e-41, 0.0, -0.0, 3e38]
    fn = samebits.log_softmax if log else samebits.softmax
    want = _bits(softmax_oracle(x, 0, log))
    with samebits.use_path(path):
        for mode in ("exact", "fast"):
            for threads in (1, 2):
                assert np.array_equal(_bits(fn(x, 0, mode=mode, threads=threads)), want), mode
            inplace = x.copy()
            fn(inplace, 0, mode=mode, out=inplace)
            assert np.array_equal(_bits(inplace), want), mode


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


@pytest.mark.parametrize("path", _paths.ALL_PATHS)
def test_exact_row_sums_every_path(path):
    """Along the last axis the sums run in groups of up to 16 rows (avx512
    and avx2 transpose 16 or 8 rows x columns in registers): row counts and
    lengths around the group and vector sizes, special values, 1 and 2
    threads, against the serial oracles."""
    _path_or_skip(path)
    rng = np.random.default_rng(11)
    specials = np.array([np.nan, np.inf, -np.inf, -0.0, 1e-41, -1e-41, 3e38], F32)
    with samebits.use_path(path), np.errstate(all="ignore"):   # the oracles meet inf and NaN
        for rows in (1, 5, 8, 9, 16, 17, 40):
            for n in (1, 7, 8, 9, 15, 16, 17, 33, 196):
                x = (rng.standard_normal((rows, n)) * 8).astype(F32)
                if (rows * n) % 3 == 0:
                    idx = rng.integers(0, x.size, size=max(1, x.size // 40))
                    x.flat[idx] = rng.choice(specials, size=idx.size)
                w = rng.standard_normal(n).astype(F32)
                b = rng.standard_normal(n).astype(F32)
                for threads in (1, 2):
                    got = samebits.sum(x, -1, mode="exact", threads=threads)
                    assert np.array_equal(_bits(got), _bits(_canonical(seq_sum(x, 1)))), (rows, n)
                    want = _canonical(seq_sum(x, 1) / F32(n))
                    got = samebits.mean(x, -1, mode="exact", threads=threads)
                    assert np.array_equal(_bits(got), _bits(want)), (rows, n)
                    got = samebits.layer_norm(x, n, w, b, 1e-5, mode="exact", threads=threads)
                    assert np.array_equal(_bits(got), _bits(layer_norm_oracle(x, 1, w, b, 1e-5))), (rows, n)
                    for log in (False, True):
                        fn = samebits.log_softmax if log else samebits.softmax
                        got = fn(x, -1, mode="exact", threads=threads)
                        assert np.array_equal(_bits(got), _bits(softmax_oracle(x, 1, log))), (rows, n, log)


def test_layer_norm_nan_and_bias_only():
    x = _tensor((4, 50), 6)
    b = np.arange(50, dtype=np.float32)
    got = samebits.layer_norm(x, 50, None, b, eps=1e-3, mode="exact")
    assert np.array_equal(_bits(got), _bits(layer_norm_oracle(x, 1, None, b, 1e-3)))


def _lane_sum(v: np.ndarray) -> np.float32:
    """Fast mode's row sum (docs/exact-ops.md, "Fast mode"): 16 partial sums
    over j = l, l + 16, ...; the four groups of four added as
    (p0..3 + p4..7) + (p8..11 + p12..15) lane by lane, then (l0 + l1) +
    (l2 + l3); then the tail in increasing j."""
    n = v.size // 16 * 16
    p = np.zeros(16, F32)
    for j in range(0, n, 16):
        p = (p + v[j:j + 16]).astype(F32)
    q = ((p[0:4] + p[4:8]).astype(F32) + (p[8:12] + p[12:16]).astype(F32)).astype(F32)
    t = F32(F32(q[0] + q[1]) + F32(q[2] + q[3]))
    for j in range(n, v.size):
        t = F32(t + v[j])
    return t


def _fast_layer_norm_oracle(x: np.ndarray, eps: float) -> np.ndarray:
    n = x.shape[-1]
    out = np.empty_like(x)
    for r, row in enumerate(x.reshape(-1, n)):
        mean = F32(_lane_sum(row) / F32(n))
        d = (row - mean).astype(F32)
        var = F32(_lane_sum((d * d).astype(F32)) / F32(n))
        rr = F32(F32(1) / np.sqrt(F32(var + F32(eps))))
        out.reshape(-1, n)[r] = _canonical((d * rr).astype(F32))
    return out


@pytest.mark.parametrize("path", _paths.ALL_PATHS)
@pytest.mark.parametrize("n", [1, 7, 16, 33, 129, 768])
def test_fast_softmax_and_layer_norm_along_rows(path, n):
    """Fast mode along the last axis: the lane-order sums (layer_norm bit for
    bit against its oracle, the same on every path), softmax with fast exp
    and a reciprocal close to the binary64 value; 1 and 2 threads agree."""
    _path_or_skip(path)
    x = _tensor((37, n), 9, specials=False)
    x[5, 0] = np.nan
    with samebits.use_path(path):
        ln = [samebits.layer_norm(x, n, mode="fast", threads=t) for t in (1, 2)]
        sm = [samebits.softmax(x, -1, mode="fast", threads=t) for t in (1, 2)]
        lsm = samebits.log_softmax(x, -1, mode="fast")
    assert np.array_equal(_bits(ln[0]), _bits(ln[1])) and np.array_equal(_bits(sm[0]), _bits(sm[1]))
    assert np.array_equal(_bits(ln[0]), _bits(_fast_layer_norm_oracle(x, 1e-5)))
    v = x.astype(np.float64)
    e = np.exp(v - v.max(-1, keepdims=True))
    want = e / e.sum(-1, keepdims=True)
    assert np.isnan(sm[0][5]).all() and (_bits(sm[0][5]) == 0x7FC00000).all()
    ok = np.ones(37, bool)
    ok[5] = False
    assert np.allclose(sm[0][ok], want[ok], rtol=2e-6, atol=1e-9)
    assert np.allclose(lsm[ok], np.log(want[ok]), rtol=2e-6, atol=2e-6)


def _fast_softmax_oracle(x: np.ndarray) -> np.ndarray:
    """docs/exact-ops.md's fast softmax along rows, step by step: m = the
    largest value (NaN if any is NaN) plus +0; e = the path's fast exp of
    x - m (samebits.exp, tested on its own); the lane sum; e * (1 / s)."""
    n = x.shape[-1]
    rows = x.reshape(-1, n)
    out = np.empty_like(rows)
    for r, row in enumerate(rows):
        m = F32(np.nan) if np.isnan(row).any() else F32(row.max() + F32(0))
        with np.errstate(all="ignore"):
            e = samebits.exp((row - m).astype(F32), mode="fast", threads=1)
            out[r] = _canonical((e * (F32(1) / _lane_sum(e))).astype(F32))
    return out.reshape(x.shape)


@pytest.mark.parametrize("path", _paths.ALL_PATHS)
def test_fast_softmax_is_the_documented_steps(path):
    """Fast softmax along rows, bit for bit against the documented steps
    (avx512 runs its own row kernel, other paths reduce.c's passes): every
    tail length of the 16-lane sum, rows with NaN, +-inf, all -inf, zeros of
    both signs and huge values, in place and out of place, 1 and 2 threads."""
    _path_or_skip(path)
    rng = np.random.default_rng(31)
    with samebits.use_path(path):
        for n in (1, 2, 7, 15, 16, 17, 31, 32, 33, 47, 48, 49, 65, 128, 129, 200, 768):
            x = (rng.standard_normal((10, n)) * 4).astype(F32)
            x[1, n // 2] = np.nan
            x[2, 0] = np.inf
            x[3, :] = -np.inf
            x[4, :] = 0.0
            x[4, ::2] = -0.0
            x[5, -1] = -np.inf
            x[6] = (rng.standard_normal(n) * 60).astype(F32)   # exp underflows to 0 and subnormals
            x[7, :] = -0.0
            x[8, max(n - 17, 0)] = np.nan   # a NaN a later block's lane could overwrite
            want = _bits(_fast_softmax_oracle(x))
            for threads in (1, 2):
                got = samebits.softmax(x, -1, mode="fast", threads=threads)
                assert np.array_equal(_bits(got), want), (n, threads)
                y = x.copy()
                assert samebits.softmax(y, -1, mode="fast", threads=threads, out=y) is y
                assert np.array_equal(_bits(y), want), (n, threads, "in place")


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
