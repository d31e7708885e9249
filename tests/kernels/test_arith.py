"""Elementwise arithmetic with broadcasting (samebits.add, sub, mul, div,
maximum, minimum, pow, sqrt): bit for bit against numpy float32 arithmetic
(single IEEE operations) and a numpy oracle of docs/exact-ops.md's pow, with
special values, broadcasting, strided and in-place operands, every path (each
runs its own vectorized row kernel), 1 and 2 threads."""
from __future__ import annotations

import array
import math

import numpy as np
import pytest

import samebits

import elementwise_reference as ref
from samebits._binding import paths as _paths
from conftest import bits as _bits
from conftest import path_or_skip as _path_or_skip
from elementwise_reference import canonical as _canonical

F32 = np.float32
NAN = np.uint32(0x7FC00000)


def _values(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    special = np.array([0x00000000, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00001,
                        0x00000001, 0x80000001, 0x7F7FFFFF, 0x3F800000, 0xBF800000],
                       np.uint32).view(np.float32)
    x = np.concatenate([rng.integers(0, 2**32, n // 2, dtype=np.uint64).astype(np.uint32)
                        .view(np.float32), (rng.standard_normal(n // 2) * 3).astype(np.float32)])
    x[:special.size] = special
    return x


def _maximum(a, b):
    m = np.where(a > b, a, b)
    zeros = (a.view(np.uint32) & b.view(np.uint32)).view(np.float32)
    m = np.where(a == b, zeros, m)
    return _canonical(np.where(np.isnan(a) | np.isnan(b), np.float32(np.nan), m))


def _minimum(a, b):
    m = np.where(a < b, a, b)
    zeros = (a.view(np.uint32) | b.view(np.uint32)).view(np.float32)
    m = np.where(a == b, zeros, m)
    return _canonical(np.where(np.isnan(a) | np.isnan(b), np.float32(np.nan), m))


ORACLES = {
    "add": lambda a, b: _canonical(a + b), "sub": lambda a, b: _canonical(a - b),
    "mul": lambda a, b: _canonical(a * b), "div": lambda a, b: _canonical(a / b),
    "maximum": _maximum, "minimum": _minimum,
}


@pytest.mark.parametrize("path", _paths.ALL_PATHS)
@pytest.mark.parametrize("name", list(ORACLES))
@pytest.mark.parametrize("threads", [1, 2])
def test_ops_match_single_float32_operations(name, threads, path):
    _path_or_skip(path)
    a, b = _values(60000, 1), _values(60000, 2)
    pairs = np.array(np.meshgrid(a[:11], b[:11])).reshape(2, -1)   # every special pair
    a, b = np.concatenate([a, pairs[0]]), np.concatenate([b, pairs[1]])
    with np.errstate(all="ignore"):
        want = ORACLES[name](a, b)
    with samebits.use_path(path):
        got = getattr(samebits, name)(a, b, mode="exact", threads=threads)
        # a scalar on either side (the row kernel's stride pairs 1, 0 and 0, 1)
        left = getattr(samebits, name)(a[:5000], b[7], mode="fast", threads=threads)
        right = getattr(samebits, name)(a[3], b[:5000], mode="fast", threads=threads)
    assert np.array_equal(_bits(got), _bits(want))
    with np.errstate(all="ignore"):
        assert np.array_equal(_bits(left), _bits(ORACLES[name](a[:5000], np.full(5000, b[7]))))
        assert np.array_equal(_bits(right), _bits(ORACLES[name](np.full(5000, a[3]), b[:5000])))


@pytest.mark.parametrize("path", _paths.ALL_PATHS)
@pytest.mark.parametrize("shapes", [((3, 70001), (3, 70001)), ((70001,), ()), ((2, 5, 20000), (5, 1)),
                                    ((2, 1, 40000), (1, 3, 1)), ((1, 64, 1, 300), (64, 300, 1))])
def test_long_rows_are_cut_into_pieces(shapes, path):
    """Rows past a chunk's worth (16384 elements) are cut into pieces, and
    dimensions both operands walk as one are merged first: the bits of
    numpy's single operations at 1 and 2 threads, in place, strided."""
    _path_or_skip(path)
    rng = np.random.default_rng(9)
    a = (rng.standard_normal(shapes[0]) * 4).astype(np.float32)
    b = (rng.standard_normal(shapes[1]) * 4).astype(np.float32)
    want = a / b
    with samebits.use_path(path):
        for threads in (1, 2):
            assert np.array_equal(_bits(samebits.div(a, b, threads=threads)), _bits(want))
        if want.shape == a.shape:
            y = a.copy()
            samebits.div(y, b, out=y, threads=2)
            assert np.array_equal(_bits(y), _bits(want))
        wide = np.empty(a.shape[:-1] + (a.shape[-1] * 2,), np.float32)
        wide[..., ::2] = a                              # a strided operand: no merging
        assert np.array_equal(_bits(samebits.div(wide[..., ::2], b, threads=2)), _bits(want))


def test_maximum_and_minimum_order_signed_zeros():
    pz, nz = F32(0.0), F32(-0.0)
    assert _bits(samebits.maximum(np.array([nz, pz, nz]), np.array([pz, nz, nz]))).tolist() == \
        [0, 0, 0x80000000]
    assert _bits(samebits.minimum(np.array([nz, pz, pz]), np.array([pz, nz, pz]))).tolist() == \
        [0x80000000, 0x80000000, 0]


@pytest.mark.parametrize("shapes", [((3, 4), (4,)), ((3, 1), (1, 5)), ((2, 1, 4), (3, 1)),
                                    ((), (5,)), ((1,), ()), ((0, 3), (3,)), ((2, 3, 4, 5), (5,)),
                                    ((4, 1, 1, 7), (1, 6, 5, 1))])
def test_broadcasting_as_numpy(shapes):
    sa, sb = shapes
    rng = np.random.default_rng(4)
    a = rng.standard_normal(sa).astype(np.float32)
    b = rng.standard_normal(sb).astype(np.float32)
    got = samebits.sub(a, b, mode="exact")
    want = np.subtract(a, b)
    assert got.shape == want.shape
    assert np.array_equal(_bits(got), _bits(want))


def test_strided_negative_and_transposed_operands():
    rng = np.random.default_rng(6)
    base = rng.standard_normal((8, 10)).astype(np.float32)
    a = base[::-2, 1::3]
    b = base.T[1::3, ::-2].T
    assert np.array_equal(_bits(samebits.mul(a, b)), _bits(a * b))
    assert np.array_equal(_bits(samebits.add(base.T, 1.5)), _bits(base.T + F32(1.5)))


def test_numbers_are_rounded_to_float32():
    x = np.ones(3, np.float32)
    got = samebits.add(x, 0.1)
    assert np.array_equal(_bits(got), _bits(x + F32(0.1)))
    assert np.array_equal(_bits(samebits.mul(2, x)), _bits(x * 2))
    assert np.array_equal(_bits(samebits.div(np.float64(1.0), x)), _bits(x))


def test_in_place_and_out():
    x = np.linspace(-3, 3, 101, dtype=np.float32)
    y = x.copy()
    assert samebits.mul(y, y, out=y) is y
    assert np.array_equal(_bits(y), _bits(x * x))
    out = np.empty((4, 101), np.float32)
    samebits.add(x, np.arange(4, dtype=np.float32)[:, None], out=out)
    assert np.array_equal(_bits(out), _bits(x + np.arange(4, dtype=np.float32)[:, None]))
    with pytest.raises(ValueError, match="overlaps"):
        samebits.add(x[:50], x[1:51], out=x[2:52])


@pytest.mark.parametrize("threads", [None, 1, 2])
def test_the_fast_path_forms(threads):
    """The calls _ops/arith.py's fast path takes (same-shape C-contiguous
    float32 arrays, a Python number on either side, out a fresh array or an
    input itself, 0-d arrays) and the ones it passes on (a partial overlap,
    a view, a non-writable out): numpy's bits or the documented errors."""
    rng = np.random.default_rng(11)
    x = (rng.standard_normal((3, 7)) * 5).astype(np.float32)
    y = (rng.standard_normal((3, 7)) * 5).astype(np.float32)
    assert np.array_equal(_bits(samebits.div(x, y, threads=threads)), _bits(x / y))
    assert np.array_equal(_bits(samebits.sub(2.5, x, threads=threads)), _bits(F32(2.5) - x))
    assert np.array_equal(_bits(samebits.pow(x, 2, threads=threads)),
                          _bits(_pow_oracle(x.ravel(), np.full(x.size, 2, F32)).reshape(x.shape)))
    for target in ("a", "b", "fresh"):
        a, b = x.copy(), y.copy()
        out = {"a": a, "b": b, "fresh": np.empty_like(x)}[target]
        assert samebits.mul(a, b, out=out, threads=threads) is out
        assert np.array_equal(_bits(out), _bits(x * y))
    zero_d = samebits.add(np.float32(1.5) * np.ones((), np.float32), np.ones((), np.float32))
    assert zero_d.shape == () and float(zero_d) == 2.5
    a = x.copy()
    samebits.add(a.reshape(-1)[:10], 1.0, out=a.reshape(-1)[:10])          # in place, a view
    assert np.array_equal(_bits(a.reshape(-1)[:10]), _bits(x.reshape(-1)[:10] + F32(1)))
    with pytest.raises(ValueError, match="overlaps"):
        samebits.add(a.reshape(-1)[:10], 1.0, out=a.reshape(-1)[1:11])
    frozen = np.empty_like(x)
    frozen.flags.writeable = False
    with pytest.raises(ValueError):
        samebits.add(x, y, out=frozen)
    with pytest.raises(ValueError):
        samebits.add(x, y, mode="fastest")
    with pytest.raises(TypeError):
        samebits.add(x, True)


def test_buffers_without_numpy():
    a = array.array("f", [1.0, 2.0, 3.0])
    got = samebits.maximum(a, 2.5)
    assert isinstance(got, memoryview) and list(got) == [2.5, 2.5, 3.0]


# ---- pow ---------------------------------------------------------------------

def _pow_oracle(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """docs/exact-ops.md's pow, written from the text, element by element."""
    out = np.empty(x.shape, np.float32)
    for i, (xv, yv) in enumerate(zip(x.tolist(), y.tolist())):
        out[i] = _pow1(F32(xv), F32(yv))
    return out


def _pow1(x: np.float32, y: np.float32) -> np.float32:
    X, Y = float(x), float(y)
    if x == 1 or y == 0:
        return F32(1)
    if math.isnan(X) or math.isnan(Y):
        return NAN.view(np.float32)
    ax, ay = abs(X), abs(Y)
    if math.isinf(ay):
        if ax == 1:
            return F32(1)
        return F32(0.0) if (ax < 1) == (Y > 0) else F32(np.inf)
    small_integer = ay < 2**24 and ay == int(ay)
    if small_integer:
        n = int(ay)
        r, p = 1.0, X
        for i in range(24):
            if (n >> i) & 1:
                r = r * p
            p = p * p if math.isfinite(p) or True else p
        r = np.float64(r)
        with np.errstate(all="ignore"):
            r = np.float64(1.0) / r if Y < 0 else r
        value = np.float64(r).astype(np.float32)
        if math.isinf(X) and X < 0 and n & 1:
            return F32(-np.inf) if Y > 0 else F32(-0.0)
        if math.isinf(ax):
            return F32(np.inf) if Y > 0 else F32(0.0)
        return value
    if math.isinf(ax):
        return F32(np.inf) if Y > 0 else F32(0.0)
    if X == 0:
        return F32(0.0) if Y > 0 else F32(np.inf)
    if X < 0 and ay < 2**24:
        return NAN.view(np.float32)
    with np.errstate(all="ignore"):
        t = np.float64(Y) * ref._log_double(np.array([ax]))[0]
    t = min(max(t, -200.0), 200.0)
    return ref._exp_double(np.array([t]))[0].astype(np.float32)


def test_pow_matches_the_documented_algorithm():
    rng = np.random.default_rng(8)
    bases = np.concatenate([_values(3000, 9), (rng.random(3000) * 4).astype(np.float32)])
    exps = np.concatenate([
        np.array([0, -0.0, 1, -1, 2, 3, -2, -3, 0.5, -0.5, 1.5, 16777215, 16777216, 3e10, -3e10,
                  np.inf, -np.inf, np.nan, 7, 25, -25], np.float32),
        (rng.standard_normal(200) * 10).astype(np.float32),
        rng.integers(-40, 40, 200).astype(np.float32)])
    x = np.repeat(bases[:300], exps.size)
    y = np.tile(exps, 300)
    x = np.concatenate([x, bases])
    y = np.concatenate([y, np.resize(exps, bases.size)])
    with np.errstate(all="ignore"):
        want = _pow_oracle(x, y)
    got = samebits.pow(x, y, mode="exact")
    diff = np.flatnonzero(_bits(got) != _bits(want))
    assert diff.size == 0, [(x[i], y[i], got[i], want[i]) for i in diff[:5]]


# One exponent for the whole row (a number, or a broadcast (1,) array): the
# row kernel takes only the step of pow the exponent needs, with the integer
# rounds a compile-time count below 2^4 (isa/unary_template.h, POW_ROW_LOOP).
# Every class: zero, each unrolled bit length, the counted loop, the largest
# small integers, 2^24 and past it, non-integers, infinities, NaN.
ONE_EXPONENT = [0.0, -0.0, 1, -1, 2, -2, 3, -3, 4, 5, 7, -7, 8, 15, 16, 31, 255, -1000,
                16777215, -16777215, 16777216, 3e10, 0.5, -0.5, 2.5, -1.5, 1e-30,
                np.inf, -np.inf, np.nan]
_ONE_EXPONENT_BASES = np.concatenate([_values(300, 21), np.array(
    [2.0, -2.0, 0.5, -0.5, 1.0000001, -0.9999999, 3e38, -3e38, 1e-38, -1e-45, 1e-20, -1e-20,
     65504.0, -65504.0, 0.1, -3.0, 1e19, -1e19], np.float32)])[:317]   # odd: a vector tail
_ONE_EXPONENT_WANT: dict = {}


def _one_exponent_want(e: float) -> np.ndarray:
    key = np.float32(e).tobytes()
    if key not in _ONE_EXPONENT_WANT:
        x = _ONE_EXPONENT_BASES
        with np.errstate(all="ignore"):
            _ONE_EXPONENT_WANT[key] = _pow_oracle(x, np.full(x.size, e, F32))
    return _ONE_EXPONENT_WANT[key]


@pytest.mark.parametrize("path", _paths.ALL_PATHS)
def test_pow_with_one_exponent_gives_the_documented_bits(path):
    """A row with one exponent: the documented pow's bits for every exponent
    class, special and subnormal bases, a ragged vector tail, in place and
    out of place, a number or a broadcast array, both modes, 1 and 2
    threads."""
    _path_or_skip(path)
    x = _ONE_EXPONENT_BASES
    with samebits.use_path(path):
        for e in ONE_EXPONENT:
            want = _bits(_one_exponent_want(e))
            for threads, mode in ((1, "exact"), (2, "fast")):
                got = samebits.pow(x, float(e), mode=mode, threads=threads)
                assert np.array_equal(_bits(got), want), (e, threads, mode)
                got = samebits.pow(x, np.array([e], F32), mode=mode, threads=threads)
                assert np.array_equal(_bits(got), want), (e, threads, mode, "array")
                a = x.copy()
                assert samebits.pow(a, float(e), out=a, mode=mode, threads=threads) is a
                assert np.array_equal(_bits(a), want), (e, threads, mode, "in place")


@pytest.mark.parametrize("x,y,want", [
    (np.nan, 0.0, 1.0), (1.0, np.nan, 1.0), (-1.0, np.inf, 1.0), (0.5, np.inf, 0.0),
    (2.0, -np.inf, 0.0), (-0.0, -3.0, -np.inf), (-0.0, -2.0, np.inf), (0.0, -0.5, np.inf),
    (-0.0, 3.0, -0.0), (-np.inf, 3.0, -np.inf), (-np.inf, -3.0, -0.0), (-np.inf, 2.0, np.inf),
    (-2.0, 0.5, np.nan), (-2.0, 3.0, -8.0), (-2.0, 3e10, np.inf), (4.0, 0.5, 2.0),
    (10.0, -1.0, 0.1), (np.inf, -0.5, 0.0),
])
def test_pow_special_cases(x, y, want):
    got = samebits.pow(np.array([x], np.float32), np.array([y], np.float32), mode="exact")
    w = np.array([want], np.float32)
    assert np.array_equal(_bits(got), _bits(_canonical(w)))


def test_pow_is_accurate():
    rng = np.random.default_rng(12)
    x = (rng.random(20000) * 10).astype(np.float32) + F32(0.01)
    y = (rng.standard_normal(20000) * 6).astype(np.float32)
    got = samebits.pow(x, y, mode="exact").astype(np.float64)
    want = np.power(x.astype(np.float64), y.astype(np.float64)).astype(np.float32).astype(np.float64)
    finite = np.isfinite(want) & (want != 0)
    ulp = np.spacing(np.abs(want[finite]).astype(np.float32)).astype(np.float64)
    assert (np.abs(got[finite] - want[finite]) <= ulp).all()


def test_sqrt_is_ieee():
    x = _values(50000, 13)
    with np.errstate(all="ignore"):
        want = _canonical(np.sqrt(x))
    assert np.array_equal(_bits(samebits.sqrt(x, mode="exact")), _bits(want))


@pytest.mark.parametrize("call,error,match", [
    (lambda: samebits.add(np.ones(3, np.float32), np.ones(4, np.float32)), ValueError,
     r"could not be broadcast together with shapes \(3,\) and \(4,\)"),
    (lambda: samebits.add(np.ones(3), 1.0), TypeError, "float32"),
    (lambda: samebits.add(np.ones(3, np.float32), True), TypeError, "bool"),
    (lambda: samebits.add(np.ones(3, np.float32), 1e300), ValueError, "float32"),
    (lambda: samebits.add(np.ones(3, np.float32), "1"), TypeError, "buffer"),
    (lambda: samebits.add(np.ones(3, np.float32), 1.0, mode="quick"), ValueError, "mode"),
    (lambda: samebits.add(np.ones(3, np.float32), 1.0, out=np.ones(2, np.float32)), ValueError,
     "shape"),
    (lambda: samebits.pow(np.ones(3, np.float32), 1.0, threads=0), ValueError, "threads"),
])
def test_bad_input(call, error, match):
    with pytest.raises(error, match=match):
        call()
