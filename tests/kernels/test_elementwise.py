"""samebits.exp, log, tanh, erf, sigmoid: exact mode bit for bit against an
independent oracle of docs/exact-ops.md (tests/elementwise_reference.py), on
every path, at 1 and 2 threads, with special values; accuracy against
Python's math module; the binding's errors."""
from __future__ import annotations

import array
import math

import numpy as np
import pytest

import samebits
from samebits._binding import paths as _paths

import elementwise_reference as ref
from conftest import bits as _bits
from conftest import path_or_skip as _path_or_skip

NAMES = list(ref.FUNCTIONS)
PATHS = _paths.ALL_PATHS


def _special_values() -> np.ndarray:
    u = [0x00000000, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000, 0x7F800001,
         0x7FBFFFFF, 0x00000001, 0x80000001, 0x007FFFFF, 0x807FFFFF, 0x00800000, 0x80800000,
         0x7F7FFFFF, 0xFF7FFFFF, 0x3F800000, 0xBF800000, 0x33800000, 0xB3800000]
    values = np.array(u, dtype=np.uint32).view(np.float32)
    # the thresholds of exp (overflow near 88.72, underflow near -103.97),
    # sigmoid's, erf's piece edges and where erf and tanh reach 1
    edges = [88.72283935546875, 88.72284698486328, -87.33654022216797, -103.97207641601562,
             -103.97208404541016, 0.5, 0.75, 3.75, 3.9375, 4.0, 3.919205904006958,
             9.010913848876953, 104.0, -104.0, 89.0, 200.0, -200.0, 20.0, 0.34657359,
             1.4142135, 0.70710677]
    around = []
    for e in edges:
        f = np.float32(e)
        around += [np.nextafter(f, np.float32(-np.inf)), f, np.nextafter(f, np.float32(np.inf))]
    around = np.array(around, dtype=np.float32)
    return np.concatenate([values, around, -around])


def _inputs(count: int = 200_000, seed: int = 7) -> np.ndarray:
    rng = np.random.default_rng(seed)
    random_bits = rng.integers(0, 2**32, count, dtype=np.uint64).astype(np.uint32).view(np.float32)
    moderate = (rng.standard_normal(count) * 6).astype(np.float32)
    tiny = (rng.standard_normal(2000) * 1e-3).astype(np.float32)
    return np.concatenate([_special_values(), random_bits, moderate, tiny])


INPUTS = _inputs()
EXPECTED = {name: ref.FUNCTIONS[name](INPUTS) for name in NAMES}


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("threads", [1, 2])
def test_exact_matches_the_documented_algorithm(name, path, threads):
    _path_or_skip(path)
    fn = getattr(samebits, name)
    with samebits.use_path(path):
        got = fn(INPUTS, mode="exact", threads=threads)
    want = EXPECTED[name]
    diff = np.flatnonzero(_bits(got) != _bits(want))
    assert diff.size == 0, (
        f"{name} on {path}: {diff.size} differ, first x={INPUTS[diff[0]]!r} "
        f"({_bits(INPUTS)[diff[0]]:#010x}): got {_bits(got)[diff[0]]:#010x}, "
        f"want {_bits(want)[diff[0]]:#010x}")


# docs/exact-ops.md, "Fast mode": bounds over all 2^32 inputs, measured by
# bench/accuracy_exhaustive.py --mode fast on a fused and an unfused path
FAST_BOUND_ULP = {"exp": 1.5, "sigmoid": 2.5, "tanh": 1.5, "log": 1.0, "erf": 1.5,
                  "sin": 0.5, "cos": 0.5}   # sin and cos: fast mode runs the exact kernel


def _binary64_reference(name: str, v: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        if name == "exp":
            return np.exp(v)
        if name == "sigmoid":
            return 1.0 / (1.0 + np.exp(-v))
        if name == "tanh":
            return np.tanh(v)
        if name == "log":
            return np.log(v)
        if name in ("sin", "cos"):
            return getattr(np, name)(v)
        return np.frompyfunc(math.erf, 1, 1)(v).astype(np.float64)


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("name", NAMES)
def test_exact_short_lengths(name, path):
    """Every length 0-40 from three starting points: the kernels step 8, 16 or
    32 elements at a time (avx2's erf takes 16) and handle the rest apart."""
    _path_or_skip(path)
    fn = getattr(samebits, name)
    x = np.concatenate([_special_values(), INPUTS[-2100:]])
    with samebits.use_path(path):
        for start in (0, 37, x.size - 60):
            for n in range(41):
                part = np.ascontiguousarray(x[start:start + n])
                got = fn(part, mode="exact", threads=1)
                want = ref.FUNCTIONS[name](part)
                assert np.array_equal(_bits(got), _bits(want)), (name, path, start, n)


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("name", NAMES)
def test_fast_mode_within_its_bound(name, path):
    """Fast mode's own kernels: within the documented bound of the binary64
    value on every path, special values as in exact mode, and the same bits
    at 1 and 2 threads."""
    _path_or_skip(path)
    x = INPUTS[np.isfinite(INPUTS)]
    with samebits.use_path(path):
        got = getattr(samebits, name)(x, mode="fast", threads=1)
        again = getattr(samebits, name)(x, mode="fast", threads=2)
    assert np.array_equal(_bits(got), _bits(again))
    want = _binary64_reference(name, x.astype(np.float64))
    with np.errstate(over="ignore"):
        w32 = want.astype(np.float32)
    finite = np.isfinite(w32)
    ulp = np.spacing(np.abs(w32[finite])).astype(np.float64)
    err = np.abs(got[finite].astype(np.float64) - want[finite]) / ulp
    assert err.max() <= FAST_BOUND_ULP[name], (name, path, err.max())
    assert np.array_equal(_bits(got[~finite]), _bits(EXPECTED[name][np.isfinite(INPUTS)][~finite]))
    assert np.array_equal(np.isinf(got), np.isinf(w32))   # overflow where exact overflows
    specials = np.array([np.inf, -np.inf, np.nan, 0.0, -0.0, 1.0, -1.0, 1e-40, -1e-40,
                         np.float32(-np.nan), 100.0, -100.0], np.float32)
    with samebits.use_path(path):
        s = getattr(samebits, name)(specials, mode="fast")
    assert np.array_equal(_bits(s), _bits(ref.FUNCTIONS[name](specials))), s


def _ulp_distance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Distance in float32 steps (signed-magnitude order), both finite or equal."""
    def ordered(v):
        u = v.view(np.int32).astype(np.int64)
        return np.where(u < 0, -(u & 0x7FFFFFFF), u)
    return np.abs(ordered(a) - ordered(b))


_MATH = {"exp": math.exp, "log": math.log, "tanh": math.tanh, "erf": math.erf,
         "sin": math.sin, "cos": math.cos,
         "sigmoid": lambda v: 1.0 / (1.0 + math.exp(-v)) if v > -700 else 0.0}


@pytest.mark.parametrize("name", NAMES)
def test_within_one_ulp_of_libm_in_binary64(name):
    """A sample against Python's math module in binary64, rounded to float32:
    at most 1 ulp apart (the exhaustive measurement is in bench/)."""
    rng = np.random.default_rng(11)
    x = np.concatenate([(rng.standard_normal(20000) * 8).astype(np.float32),
                        rng.uniform(-1e-6, 1e-6, 2000).astype(np.float32)])
    if name == "log":
        x = np.abs(x)
        x = x[x > 0]
    if name == "exp":
        x = x[np.abs(x) < 80]
    got = getattr(samebits, name)(x, mode="exact")
    want = np.array([_MATH[name](float(v)) for v in x], dtype=np.float64).astype(np.float32)
    assert _ulp_distance(got, want).max() <= 1


@pytest.mark.parametrize("name,x,want", [
    ("exp", [0.0, -0.0, float("inf"), -float("inf"), 1.0], [1.0, 1.0, float("inf"), 0.0,
                                                             2.7182817459106445]),
    ("log", [1.0, float("inf"), 0.0, -0.0], [0.0, float("inf"), -float("inf"), -float("inf")]),
    ("tanh", [float("inf"), -float("inf"), 30.0], [1.0, -1.0, 1.0]),
    ("erf", [float("inf"), -float("inf"), 5.0], [1.0, -1.0, 1.0]),
    ("sigmoid", [0.0, float("inf"), -float("inf"), -200.0], [0.5, 1.0, 0.0, 0.0]),
    # sin and cos of 1e38: mpmath at 200 bits
    ("sin", [0.0, -0.0, 1e-40, -1e-40, 1e38], [0.0, -0.0, 1e-40, -1e-40, 0.9891644599607083]),
    ("cos", [0.0, -0.0, 1e-40, 1e38], [1.0, 1.0, 1.0, 0.14681168601524971]),
])
def test_special_values(name, x, want):
    got = getattr(samebits, name)(np.array(x, np.float32), mode="exact")
    assert np.array_equal(_bits(got), _bits(np.array(want, np.float32)))


@pytest.mark.parametrize("name", NAMES)
def test_nan_is_canonical(name):
    x = np.array([0x7FC00000, 0xFFC00000, 0x7F800001, 0xFFFFFFFF], np.uint32).view(np.float32)
    assert (_bits(getattr(samebits, name)(x, mode="exact")) == 0x7FC00000).all()


def test_log_of_negatives_is_canonical_nan():
    x = np.array([-1.0, -1e-40, -float("inf")], np.float32)
    assert (_bits(samebits.log(x, mode="exact")) == 0x7FC00000).all()


def test_sin_and_cos_near_multiples_of_pi_over_2():
    """The float32 inputs closest to a multiple of pi/2, where reduction has to
    be exact (the result is tiny): against mpmath at 200 bits, correctly rounded."""
    import mpmath   # a test dependency (make deps)
    mpmath.mp.prec = 200
    x = []
    for k in (1, 2, 3, 4, 5, 7, 10, 100, 12345, 2**20 + 1, 2**24 - 3):
        f = np.float32(k * math.pi / 2)
        x += [np.nextafter(f, np.float32(-np.inf)), f, np.nextafter(f, np.float32(np.inf))]
    x += [np.float32(v) for v in (16367173.0, 1.6470994e38, 3.4028235e38, 2.1474836e9)]
    # the listed exceptions (docs/exact-ops-tables.md), both signs
    exceptions = np.array([0x46199998, 0x5F18B878, 0x6115CB11], np.uint32).view(np.float32)
    x = np.concatenate([np.array(x, np.float32), exceptions, -exceptions])
    for name in ("sin", "cos"):
        got = getattr(samebits, name)(x, mode="exact")
        want = []
        for v in x:
            exact = getattr(mpmath, name)(mpmath.mpf(float(v)))
            with mpmath.workprec(24):        # one rounding to 24 bits (all results are normal)
                want.append(float(+exact))
        assert np.array_equal(_bits(got), _bits(np.array(want, np.float32))), name
        assert np.array_equal(_bits(got), _bits(ref.FUNCTIONS[name](x))), name


# Inputs the kernels' fast route cannot settle (docs/exact-ops.md, "the fast
# route"): its rounding test fails on these (found by scanning [1, 2^17) with
# csrc/math/trig.h's sbt_sin_cos_fast), |x| >= 2^19 is beyond its reduction,
# and inf and NaN; each must come from the recipe.
FAST_ROUTE_UNSURE = {
    "sin": [0x3F86B3D2, 0x3F93CC98, 0x3FA0FA4E, 0x3FB53332, 0x46199998],
    "cos": [0x3F8626A5, 0x3F92B0EC, 0x3FAA2672, 0x3FDB3C0E, 0x5F18B878],
}


def _route_fallback_case(name: str, path: str, hard: np.ndarray, span: float) -> np.ndarray:
    """The inputs `hard` among ordinary ones in [-span, span], at the edges of
    the kernels' 256-element route blocks, with inf, NaN and -inf: the
    exact kernel gives the pure-Python recipe's bits at 1 and 2 threads and
    in place. Returns the recipe's results for `hard`, in its order."""
    x = np.linspace(-span, span, 1031, dtype=np.float32)
    spots = [0, 1, 255, 256, 257, 511, 512, 513, 700, 766, 767, 768, 1000, 1017, 1029, 1030]
    assert len(hard) <= len(spots)   # (the sin/cos test once had 16 inputs for 14 places)
    for i, v in zip(spots, hard):
        x[i] = v
    x[2], x[258], x[259] = np.inf, np.nan, -np.inf
    want = ref.FUNCTIONS[name](x)
    fn = getattr(samebits, name)
    with samebits.use_path(path):
        for threads in (1, 2):
            assert np.array_equal(_bits(fn(x, mode="exact", threads=threads)), _bits(want))
        inplace = x.copy()
        fn(inplace, mode="exact", out=inplace)
        assert np.array_equal(_bits(inplace), _bits(want))
    return want[spots[:len(hard)]]


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("name", ["sin", "cos"])
def test_sin_cos_fall_back_to_the_recipe_where_the_fast_route_is_unsure(name, path):
    """The elements the rounding test rejects, beyond the reduction's range
    (2^19 and its neighbours) or not finite, among ordinary ones, at the
    edges of the kernel's 256-element blocks: the pure-Python recipe's bits
    and the correctly rounded float (mpmath), at 1 and 2 threads and in
    place."""
    _path_or_skip(path)
    import mpmath   # a test dependency (make deps)
    hard = np.array(FAST_ROUTE_UNSURE[name] + [0x48FFFFFF, 0x49000000, 0x49000001],
                    np.uint32).view(np.float32)
    hard = np.concatenate([hard, -hard])
    want = _route_fallback_case(name, path, hard, 10.0)
    mpmath.mp.prec = 200
    for v, w in zip(hard, want):
        with mpmath.workprec(24):
            rounded = float(+getattr(mpmath, name)(mpmath.mpf(float(v))))
        assert _bits(np.float32(rounded)) == _bits(w), (name, v)


# Inputs exp's and sigmoid's fast route cannot settle (docs/exact-ops.md,
# "exp and sigmoid: the fast route"): its rounding test fails on these (found
# by scanning 2^21 floats from 1, -1, 0.01, -50 and 30 with a numpy copy of
# csrc/math/exp_route.h), and the neighbours of its range's ends.
EXP_ROUTE_UNSURE = {
    "exp": [0x3F80971E, 0xBF80CDC7, 0x3C248A08, 0xC24B112C, 0x41F0AB33,
            0xC2D00000, 0xC2CFFFFF, 0xC2D00001, 0x42B20000, 0x42B1FFFF, 0x42B20001],
    "sigmoid": [0x3F8099CB, 0xBF831910, 0x3C2724DF, 0xC24B112C, 0xC24DA1CE,
                0x42C80000, 0x42C7FFFF, 0x42C80001, 0xC2C80000, 0xC2C7FFFF, 0xC2C80001],
}


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("name", ["exp", "sigmoid"])
def test_exp_sigmoid_fall_back_to_the_recipe_where_the_fast_route_is_unsure(name, path):
    """exp's and sigmoid's route: the elements its rounding test rejects and
    its range's ends, among ordinary ones at the edges of the kernel's
    256-element blocks, with inf and NaN: the pure-Python recipe's bits and
    the correctly rounded float (mpmath), at 1 and 2 threads and in place."""
    _path_or_skip(path)
    import mpmath   # a test dependency (make deps)
    hard = np.array(EXP_ROUTE_UNSURE[name], np.uint32).view(np.float32)
    want = _route_fallback_case(name, path, hard, 30.0)
    mpmath.mp.prec = 200
    checked = 0
    for v, w in zip(hard, want):
        a = mpmath.mpf(float(v))
        exact = mpmath.exp(a) if name == "exp" else 1 / (1 + mpmath.exp(-a))
        if not mpmath.mpf(2) ** -126 <= exact < mpmath.mpf(2) ** 128:
            continue        # subnormal or beyond float32: the recipe comparison above holds it
        with mpmath.workprec(24):        # one rounding to 24 bits
            assert _bits(np.float32(float(+exact))) == _bits(w), (name, v)
        checked += 1
    assert checked >= 5


# Inputs log's fast route cannot settle (docs/exact-ops.md, "log: the fast
# route"): its rounding test fails on these (found by scanning 2^21 floats
# from 1, 0.5, 3, 1e-3 and 1e20 with a numpy copy of csrc/math/log_route.h);
# the five LOG_EXCEPTIONS, where the recipe's own binary64 value rounds the
# wrong way and the table gives the result; the smallest subnormal and the
# largest float.
LOG_ROUTE_UNSURE = [0x3F800006, 0x3F83D731, 0x3F004AB4, 0x4043BEA2, 0x3A835246, 0x60B0C884,
                    0x3C413D3A, 0x41178FEB, 0x4C5D65A5, 0x65D890D3, 0x6F31A8EC,
                    0x00000001, 0x7F7FFFFF]


@pytest.mark.parametrize("path", PATHS)
def test_log_falls_back_to_the_recipe_where_the_fast_route_is_unsure(path):
    """log's route: the elements its rounding test rejects and the recipe's
    listed exceptions, among ordinary inputs (negatives, zeros) at the edges
    of the kernel's 256-element blocks, with inf and NaN: the pure-Python
    recipe's bits and the correctly rounded float (mpmath), at 1 and 2
    threads and in place."""
    _path_or_skip(path)
    import mpmath   # a test dependency (make deps)
    hard = np.array(LOG_ROUTE_UNSURE, np.uint32).view(np.float32)
    want = _route_fallback_case("log", path, hard, 30.0)
    mpmath.mp.prec = 200
    for v, w in zip(hard, want):
        exact = mpmath.log(mpmath.mpf(float(v)))
        with mpmath.workprec(24):        # one rounding to 24 bits (all results are normal)
            assert _bits(np.float32(float(+exact))) == _bits(w), v


def test_cos_is_even_bit_for_bit():
    x = INPUTS[~np.isnan(INPUTS)]
    assert np.array_equal(_bits(samebits.cos(-x, mode="exact")), _bits(samebits.cos(x, mode="exact")))


@pytest.mark.parametrize("name", ["tanh", "erf", "sin"])
def test_odd_functions_are_odd_bit_for_bit(name):
    x = INPUTS[np.isfinite(INPUTS) if name == "sin" else ~np.isnan(INPUTS)]   # sin(inf) is NaN
    fn = getattr(samebits, name)
    assert np.array_equal(_bits(fn(-x, mode="exact")), _bits(fn(x, mode="exact")) ^ 0x80000000)


def test_subnormal_results_and_inputs():
    x = np.array([-100.0, -103.0, -103.9], np.float32)     # exp gives subnormals
    got = samebits.exp(x, mode="exact")
    assert (got > 0).all() and (got < np.finfo(np.float32).tiny).all()
    assert np.array_equal(_bits(got), _bits(ref.exp(x)))
    sub = np.array([1e-45, 1e-40, -1e-42], np.float32)
    assert np.array_equal(_bits(samebits.tanh(sub, mode="exact")), _bits(sub))
    assert np.array_equal(_bits(samebits.log(sub[:2], mode="exact")), _bits(ref.log(sub[:2])))


def test_shapes_layouts_and_out():
    x = (np.arange(60, dtype=np.float32).reshape(3, 4, 5) - 30) / 7
    want = ref.exp(x.ravel()).reshape(x.shape)
    assert samebits.exp(x, mode="exact").shape == (3, 4, 5)
    assert np.array_equal(_bits(samebits.exp(x, mode="exact")), _bits(want))
    t = x.transpose(2, 0, 1)                     # strided: copied, then computed
    assert np.array_equal(_bits(samebits.exp(t, mode="exact")), _bits(want.transpose(2, 0, 1)))
    out = np.empty_like(x)
    assert samebits.exp(x, mode="exact", out=out) is out
    assert np.array_equal(_bits(out), _bits(want))
    strided_out = np.zeros((3, 4, 10), np.float32)[..., ::2]
    samebits.exp(x, mode="exact", out=strided_out)
    assert np.array_equal(_bits(strided_out), _bits(want))
    assert samebits.exp(np.float32(2.0) * np.ones((), np.float32)).shape == ()
    assert samebits.exp(np.empty((0, 3), np.float32)).shape == (0, 3)


def test_in_place():
    x = np.linspace(-5, 5, 1001, dtype=np.float32)
    want = ref.tanh(x)
    y = x.copy()
    assert samebits.tanh(y, mode="exact", out=y) is y
    assert np.array_equal(_bits(y), _bits(want))


def test_partial_overlap_is_refused():
    x = np.linspace(-5, 5, 100, dtype=np.float32)
    with pytest.raises(ValueError, match="overlaps"):
        samebits.exp(x[:50], out=x[10:60])


def test_buffers_without_numpy():
    x = array.array("f", [0.0, 1.0, -2.5, 30.0])
    got = samebits.sigmoid(x, mode="exact")
    assert isinstance(got, memoryview) and got.format == "f"
    assert list(got) == list(ref.sigmoid(np.array(x, np.float32)).astype(float))


@pytest.mark.parametrize("call,error,match", [
    (lambda: samebits.exp(np.ones(3)), TypeError, "float32"),
    (lambda: samebits.exp([1.0, 2.0]), TypeError, "buffer"),
    (lambda: samebits.exp(np.ones(3, np.float32), mode="exactly"), ValueError, "mode"),
    (lambda: samebits.exp(np.ones(3, np.float32), threads=0), ValueError, "threads"),
    (lambda: samebits.exp(np.ones(3, np.float32), threads=True), TypeError, "threads"),
    (lambda: samebits.exp(np.ones(3, np.float32), out=np.ones(4, np.float32)), ValueError,
     "shape"),
    (lambda: samebits.exp(np.ones(3, np.float32), out=np.ones(3)), TypeError, "float32"),
])
def test_bad_input(call, error, match):
    with pytest.raises(error, match=match):
        call()
