"""Elementwise, binary, softmax and layer_norm kernels run in place (out is
an input) give the bits they give out of place, on every path, in both modes.

The kernels write their in-place loops separately (unary_template.h's
UNARY_EACH, BINARY_ROW_LOOP, reduce.c's ROW_MAP): clang's vectorizer runs a
loop over two equal pointers scalar, so the in-place case names one pointer.
These tests check that each such loop reads the operand it should."""
from __future__ import annotations

import numpy as np
import pytest

import samebits
from samebits._binding import paths as _paths

from conftest import bits as _bits
from conftest import path_or_skip as _path_or_skip

PATHS = _paths.ALL_PATHS
MODES = ("exact", "fast")

UNARY = {
    "exp": lambda x, **k: samebits.exp(x, **k),
    "log": lambda x, **k: samebits.log(x, **k),
    "tanh": lambda x, **k: samebits.tanh(x, **k),
    "erf": lambda x, **k: samebits.erf(x, **k),
    "sigmoid": lambda x, **k: samebits.sigmoid(x, **k),
    "sin": lambda x, **k: samebits.sin(x, **k),
    "relu": lambda x, **k: samebits.relu(x, **k),
    "leaky_relu": lambda x, **k: samebits.leaky_relu(x, 0.125, **k),
    "elu": lambda x, **k: samebits.elu(x, 0.5, **k),
    "gelu": lambda x, **k: samebits.gelu(x, **k),
    "silu": lambda x, **k: samebits.silu(x, **k),
    "hardsigmoid": lambda x, **k: samebits.hardsigmoid(x, **k),
}
BINARY = ("add", "sub", "mul", "div", "maximum", "minimum", "pow")


def _values(shape: tuple[int, ...], seed: int) -> np.ndarray:
    """Moderate values with NaN, infinities, signed zeros and a subnormal
    spread through them; odd lengths leave vector tails."""
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(shape) * 3).astype(np.float32)
    flat = x.reshape(-1)
    special = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-41, -1e-41, 2.0], np.float32)
    flat[rng.choice(flat.size, special.size, replace=False)] = special
    return x


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("name", list(UNARY))
def test_unary_in_place(name, path):
    _path_or_skip(path)
    fn = UNARY[name]
    x = _values((3, 1031), 1)
    with samebits.use_path(path):
        for mode in MODES:
            want = _bits(fn(x, mode=mode))
            y = x.copy()
            assert fn(y, mode=mode, out=y) is y
            assert np.array_equal(_bits(y), want), (name, mode)


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("name", BINARY)
def test_binary_in_place_on_either_operand(name, path):
    _path_or_skip(path)
    fn = getattr(samebits, name)
    a, b = _values((5, 203), 2), _values((5, 203), 3)
    row = _values((203,), 4)
    with samebits.use_path(path):
        for mode in MODES:
            cases = [
                ("out=a", a, b, 0),
                ("out=b", a, b, 1),
                ("out=a, b broadcast", a, row, 0),
                ("out=b, a broadcast", row, b, 1),
                ("out=a=b", a, None, 0),
            ]
            for label, left, right, target in cases:
                if right is None:
                    want = _bits(fn(left, left, mode=mode))
                    y = left.copy()
                    fn(y, y, mode=mode, out=y)
                else:
                    want = _bits(fn(left, right, mode=mode))
                    operands = [left.copy(), right.copy()]
                    y = operands[target]
                    fn(operands[0], operands[1], mode=mode, out=y)
                assert np.array_equal(_bits(y), want), (name, mode, label)


@pytest.mark.parametrize("path", PATHS)
def test_softmax_and_layer_norm_along_rows_in_place(path):
    _path_or_skip(path)
    x = _values((37, 389), 5)
    x[3] = -np.inf
    weight, bias = _values((389,), 6), _values((389,), 7)
    calls = {
        "softmax": lambda v, **k: samebits.softmax(v, -1, **k),
        "log_softmax": lambda v, **k: samebits.log_softmax(v, -1, **k),
        "layer_norm": lambda v, **k: samebits.layer_norm(v, 389, **k),
        "layer_norm weight": lambda v, **k: samebits.layer_norm(v, 389, weight, **k),
        "layer_norm bias": lambda v, **k: samebits.layer_norm(v, 389, None, bias, **k),
        "layer_norm both": lambda v, **k: samebits.layer_norm(v, 389, weight, bias, **k),
    }
    with samebits.use_path(path):
        for mode in MODES:
            for label, fn in calls.items():
                for threads in (1, 2):
                    want = _bits(fn(x, mode=mode, threads=threads))
                    y = x.copy()
                    fn(y, mode=mode, out=y, threads=threads)
                    assert np.array_equal(_bits(y), want), (label, mode, threads)
