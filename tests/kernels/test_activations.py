"""The activations: standalone (samebits.relu, ..., gelu, silu, hardswish)
and fused as the activation= epilogue of linear, matmul-based layers and
conv2d. Exact mode bit for bit against the numpy oracle of docs/exact-ops.md
on every path and at 1 and 2 threads; the fused form has the standalone
bits; accuracy of the smooth ones against the mathematical functions."""
from __future__ import annotations

import itertools

import math

import numpy as np
import pytest

import samebits
from samebits._binding import paths as _paths

import elementwise_reference as ref
from conftest import bits as _bits
from conftest import path_or_skip as _path_or_skip

PATHS = _paths.ALL_PATHS


def _inputs() -> np.ndarray:
    rng = np.random.default_rng(5)
    special = np.array([0x00000000, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00001,
                        0x00000001, 0x80000001, 0x7F7FFFFF, 0xFF7FFFFF], np.uint32).view(np.float32)
    edges = np.array([-3, 3, -6, 6, 0, -5.65, -5.66, -5.7, 9, -9, 10, -10, 20, -20, 40, -40,
                      104, -104, 200, -200, 1e-20, -1e-20, 1e20, -1e20], np.float32)
    edges = np.concatenate([edges, np.nextafter(edges, np.float32(np.inf)),
                            np.nextafter(edges, np.float32(-np.inf))])
    return np.concatenate([special, edges,
                           rng.integers(0, 2**32, 50000, dtype=np.uint64).astype(np.uint32)
                           .view(np.float32),
                           (rng.standard_normal(50000) * 4).astype(np.float32)])


X = _inputs()


def _call(name: str, x, **kw):
    if name == "gelu_tanh":
        return samebits.gelu(x, "tanh", **kw)
    return getattr(samebits, name)(x, **kw)


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("name", list(ref.ACTIVATIONS))
@pytest.mark.parametrize("threads", [1, 2])
def test_standalone_matches_the_documented_composition(name, path, threads):
    _path_or_skip(path)
    with samebits.use_path(path):
        got = _call(name, X, mode="exact", threads=threads)
    want = ref.ACTIVATIONS[name](X)
    diff = np.flatnonzero(_bits(got) != _bits(want))
    assert diff.size == 0, (f"{name} on {path}: {diff.size} differ, first x={X[diff[0]]!r}: "
                            f"got {_bits(got)[diff[0]]:#010x}, want {_bits(want)[diff[0]]:#010x}")


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("name", list(ref.ACTIVATIONS))
def test_standalone_short_lengths(name, path):
    """Every length 0-40 from three starting points: vector steps and the
    elements left after them."""
    _path_or_skip(path)
    with samebits.use_path(path):
        for start in (0, 7, X.size - 60):
            for n in range(41):
                part = np.ascontiguousarray(X[start:start + n])
                got = _call(name, part, mode="exact", threads=1)
                want = ref.ACTIVATIONS[name](part)
                assert np.array_equal(_bits(got), _bits(want)), (name, path, start, n)


@pytest.mark.parametrize("slope", [0.01, 0.2, -0.5, 0.0, 3.0])
def test_leaky_relu_slopes(slope):
    got = samebits.leaky_relu(X, slope, mode="exact")
    assert np.array_equal(_bits(got), _bits(ref.leaky_relu(X, slope)))


@pytest.mark.parametrize("alpha", [1.0, 0.5, 1.6732632423543772, 0.0, -2.0])
def test_elu_alphas(alpha):
    got = samebits.elu(X, alpha, mode="exact")
    assert np.array_equal(_bits(got), _bits(ref.elu(X, alpha)))


def _math(name: str, v: float) -> float:
    if name == "silu":
        return v / (1.0 + math.exp(-v)) if v > -700 else 0.0
    if name == "gelu":
        return 0.5 * v * math.erfc(-v / math.sqrt(2.0))
    if name == "gelu_tanh":   # x/2 (1 + tanh z) = x / (1 + e^-2z): no cancellation in the tail
        t = -2.0 * math.sqrt(2.0 / math.pi) * (v + 0.044715 * v ** 3)
        return v / (1.0 + math.exp(t)) if t < 700 else math.copysign(0.0, v)
    if name == "elu":
        return v if v >= 0 else math.expm1(v)
    if name == "softplus":
        return max(v, 0.0) + math.log1p(math.exp(-abs(v)))
    if name == "mish":
        return v * math.tanh(max(v, 0.0) + math.log1p(math.exp(-abs(v))))
    raise KeyError(name)


@pytest.mark.parametrize("name", ["silu", "gelu", "gelu_tanh", "elu", "softplus", "mish"])
def test_smooth_activations_are_accurate(name):
    """Within 1 ulp of the binary64 formula, rounded to float32, where the
    definition does not cut a tail (gelu's erf reaches 1 at x/sqrt(2) = 4)."""
    rng = np.random.default_rng(3)
    x = (rng.standard_normal(20000) * 3).astype(np.float32)
    x = x[x > -5.6] if name == "gelu" else x
    got = _call(name, x, mode="exact").astype(np.float64)
    want = np.array([_math(name, float(v)) for v in x]).astype(np.float32).astype(np.float64)
    ulp = np.spacing(np.abs(want).astype(np.float32)).astype(np.float64)
    assert (np.abs(got - want) <= ulp * (1.0 + 1e-9)).all()


@pytest.mark.parametrize("name,x,want", [
    ("gelu", [float("inf"), float("-inf"), 0.0, -0.0], [float("inf"), -0.0, 0.0, -0.0]),
    ("gelu_tanh", [float("inf"), float("-inf")], [float("inf"), -0.0]),
    ("silu", [float("inf"), float("-inf"), -0.0], [float("inf"), -0.0, -0.0]),
    ("hardswish", [-3.0, 3.0, float("inf")], [-0.0, 3.0, float("inf")]),
    ("hardsigmoid", [-3.0, 3.0, float("-inf")], [0.0, 1.0, 0.0]),
    ("relu", [-0.0, -1.0, float("inf")], [0.0, 0.0, float("inf")]),
    ("relu6", [-0.0, 7.0, float("-inf")], [0.0, 6.0, 0.0]),
    ("elu", [-0.0, 0.0, float("-inf"), float("inf")], [-0.0, 0.0, -1.0, float("inf")]),
    ("softplus", [float("-inf"), float("inf"), 0.0, -200.0, 100.0],
     [0.0, float("inf"), math.log(2.0), 0.0, 100.0]),
    ("mish", [float("-inf"), float("inf"), -0.0, 0.0], [-0.0, float("inf"), -0.0, 0.0]),
])
def test_special_values(name, x, want):
    got = _call(name, np.array(x, np.float32), mode="exact")
    assert np.array_equal(_bits(got), _bits(np.array(want, np.float32)))


FUSED = ["relu", "relu6", "leaky_relu", ("leaky_relu", 0.2), "gelu", "gelu_tanh", "silu",
         "hardswish", "hardsigmoid", "sigmoid", "tanh"]


def _standalone(activation, y):
    if isinstance(activation, tuple):
        return ref.leaky_relu(y, activation[1])
    return ref.ACTIVATIONS[activation](y)


@pytest.mark.parametrize("activation", FUSED)
@pytest.mark.parametrize("threads", [1, 2])
def test_linear_fused_activation_has_the_standalone_bits(activation, threads):
    rng = np.random.default_rng(9)
    x = rng.standard_normal((37, 64)).astype(np.float32)
    w = rng.standard_normal((45, 64)).astype(np.float32)
    b = rng.standard_normal(45).astype(np.float32)
    x[3, 5] = np.nan
    plain = samebits.linear(x, w, b, mode="exact", threads=threads)
    fused = samebits.linear(x, w, b, activation=activation, mode="exact", threads=threads)
    assert np.array_equal(_bits(fused), _bits(_standalone(activation, plain)))


@pytest.mark.parametrize("activation", FUSED)
def test_conv2d_fused_activation_has_the_standalone_bits(path, activation):
    rng = np.random.default_rng(10)
    x = rng.standard_normal((2, 6, 9, 9)).astype(np.float32)
    w = rng.standard_normal((8, 3, 3, 3)).astype(np.float32)
    b = rng.standard_normal(8).astype(np.float32)
    for groups, weights in ((2, w), (6, rng.standard_normal((6, 1, 3, 3)).astype(np.float32))):
        bias = b[:weights.shape[0]]
        with samebits.use_path(path):
            plain = samebits.conv2d(x, weights, bias, padding=1, groups=groups, mode="exact")
            fused = samebits.conv2d(x, weights, bias, padding=1, groups=groups,
                                    activation=activation, mode="exact")
        assert np.array_equal(_bits(fused), _bits(_standalone(activation, plain)))


@pytest.mark.parametrize("call,error,match", [
    (lambda: samebits.gelu(np.ones(2, np.float32), "fast"), ValueError, "approximate"),
    (lambda: samebits.leaky_relu(np.ones(2, np.float32), "0.1"), TypeError, "negative_slope"),
    (lambda: samebits.leaky_relu(np.ones(2, np.float32), True), TypeError, "negative_slope"),
    (lambda: samebits.leaky_relu(np.ones(2, np.float32), float("nan")), ValueError, "NaN"),
    (lambda: samebits.leaky_relu(np.ones(2, np.float32), 1e300), ValueError, "float32"),
    (lambda: samebits.linear(np.ones((2, 3), np.float32), np.ones((4, 3), np.float32),
                             activation="swish"), ValueError, "activation"),
    (lambda: samebits.linear(np.ones((2, 3), np.float32), np.ones((4, 3), np.float32),
                             activation=("leaky_relu", "x")), TypeError, "slope"),
    (lambda: samebits.conv2d(np.ones((1, 1, 3, 3), np.float32), np.ones((1, 1, 1, 1), np.float32),
                             activation="elu"), ValueError, "activation"),
])
def test_bad_arguments(call, error, match):
    with pytest.raises(error, match=match):
        call()


def _onnx_hardsigmoid(x: np.ndarray, alpha: float, beta: float = 0.5) -> np.ndarray:
    """ONNX's formula as numpy float32 steps: multiply, add, then the clamp
    with maximum/minimum's rules (t <= 0 -> +0, t > 1 -> 1, NaN canonical)."""
    with np.errstate(all="ignore"):
        t = (x * np.float32(alpha)).astype(np.float32)
        t = (t + np.float32(beta)).astype(np.float32)
        t = np.where(t <= 0, np.float32(0), t)
        t = np.where(t > 1, np.float32(1), t).astype(np.float32)
    return ref.canonical(t)


def _onnx_hardswish(x: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        return ref.canonical((x * _onnx_hardsigmoid(x, 1.0 / 6.0)).astype(np.float32))


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("alpha", [1.0 / 6.0, 0.2, -0.3])
def test_onnx_hard_activations_standalone_and_fused(path, alpha):
    """ONNX's HardSigmoid (beta 0.5) and HardSwish formulas, used by
    samebits.onnx: standalone (private op codes) and as the epilogue of
    linear and conv2d, bit for bit against a numpy oracle, on every path."""
    from samebits._ops.elementwise import _unary
    _path_or_skip(path)
    bits_alpha = int(np.float32(alpha).view(np.uint32))
    with samebits.use_path(path):
        hs = _unary("hardsigmoid_onnx", X, "exact", None, 2, param=bits_alpha)
        hw = _unary("hardswish_onnx", X, "exact", None, 2)
        rng = np.random.default_rng(3)
        xl, w = rng.standard_normal((33, 20)).astype(np.float32) * 3, \
            rng.standard_normal((17, 20)).astype(np.float32)
        lin = samebits.linear(xl, w, mode="exact")
        fused_hs = samebits.linear(xl, w, activation=("hardsigmoid_onnx", alpha), mode="exact")
        fused_hw = samebits.linear(xl, w, activation="hardswish_onnx", mode="exact")
        xc = rng.standard_normal((2, 3, 7, 7)).astype(np.float32) * 3
        wc = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
        conv = samebits.conv2d(xc, wc, padding=1, mode="exact")
        conv_hw = samebits.conv2d(xc, wc, padding=1, activation="hardswish_onnx", mode="exact")
    assert np.array_equal(_bits(hs), _bits(_onnx_hardsigmoid(X, alpha)))
    assert np.array_equal(_bits(hw), _bits(_onnx_hardswish(X)))
    assert np.array_equal(_bits(fused_hs), _bits(_onnx_hardsigmoid(lin, alpha)))
    assert np.array_equal(_bits(fused_hw), _bits(_onnx_hardswish(lin)))
    assert np.array_equal(_bits(conv_hw), _bits(_onnx_hardswish(conv)))


@pytest.mark.parametrize("path", PATHS)
def test_swish_onnx_fused(path):
    """ONNX's Mul(x, Sigmoid(x)), the pair exporters write for SiLU, as the
    epilogue of linear and conv2d (activation "swish_onnx", what
    samebits.onnx fuses the pair into): exact mode gives samebits.sigmoid's
    correctly rounded value times x, one rounded multiply, bit for bit, with
    special values, at 1 and 2 threads; fast mode gives fast sigmoid times x
    (the unfused pair's bits on the same path)."""
    _path_or_skip(path)
    rng = np.random.default_rng(4)
    xl = rng.standard_normal((33, 20)).astype(np.float32) * 3
    xl[0, :6] = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-40]
    w = rng.standard_normal((17, 20)).astype(np.float32)
    xc = rng.standard_normal((2, 3, 7, 7)).astype(np.float32) * 3
    wc = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    bl = rng.standard_normal(17).astype(np.float32)
    bc = rng.standard_normal(4).astype(np.float32)
    bl[3], bc[1] = np.inf, -np.inf   # a bias goes in the activation's pass: its specials too
    with samebits.use_path(path):
        for mode, (b_lin, b_conv) in itertools.product(("exact", "fast"), ((None, None), (bl, bc))):
            lin = samebits.linear(xl, w, b_lin, mode=mode)
            conv = samebits.conv2d(xc, wc, b_conv, padding=1, mode=mode)
            with np.errstate(all="ignore"):
                want_lin = ref.canonical(lin * samebits.sigmoid(lin, mode=mode))
                want_conv = ref.canonical(conv * samebits.sigmoid(conv, mode=mode))
            for threads in (1, 2):
                got_lin = samebits.linear(xl, w, b_lin, activation="swish_onnx", mode=mode,
                                          threads=threads)
                got_conv = samebits.conv2d(xc, wc, b_conv, padding=1, activation="swish_onnx",
                                           mode=mode, threads=threads)
                assert np.array_equal(_bits(got_lin), _bits(want_lin)), (mode, threads)
                assert np.array_equal(_bits(got_conv), _bits(want_conv)), (mode, threads)
