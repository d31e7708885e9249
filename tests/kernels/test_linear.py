"""samebits.linear: torch.nn.functional.linear's convention, and in exact mode
the definition of docs/exact-mode.md, checked against a numpy float32 oracle
of that definition: the product as matmul defines it, then one rounded add of
the bias, then the activation, NaN made canonical."""
from __future__ import annotations

import numpy as np
import pytest

import samebits
from conftest import assert_same_bits, exact_oracle, test_values


def linear_oracle(x, weight, bias=None, activation=None):
    """The exact definition with numpy float32 operations."""
    x2 = x.reshape(-1, x.shape[-1])
    y = exact_oracle(x2, np.ascontiguousarray(weight.T))
    with np.errstate(all="ignore"):
        if bias is not None:
            y = np.add(y, bias[None, :], dtype=np.float32)
        if activation in ("relu", "relu6"):
            y = np.where(y < 0, np.float32(0), y)          # NaN compares false: passes
        if activation == "relu6":
            y = np.where(y > 6, np.float32(6), y)
    y = y.astype(np.float32)
    y.view(np.uint32)[np.isnan(y)] = 0x7FC00000
    return y.reshape(x.shape[:-1] + (weight.shape[0],))


CASES = [((7, 20), 9), ((2, 5, 33), 40), ((33,), 17), ((1, 300), 70), ((3, 4, 6, 64), 100)]


@pytest.mark.parametrize("activation", [None, "relu", "relu6"])
@pytest.mark.parametrize("x_shape,out_features", CASES)
def test_exact_matches_the_definition_on_every_path(path, x_shape, out_features, activation):
    x = test_values(x_shape, 1, 6)
    weight = test_values((out_features, x_shape[-1]), 2, 6)
    bias = test_values((out_features,), 3, 2)
    want = linear_oracle(x, weight, bias, activation)
    with samebits.use_path(path):
        for threads in (1, 2):
            got = samebits.linear(x, weight, bias, activation=activation, mode="exact",
                                  threads=threads)
            assert got.shape == want.shape
            assert_same_bits(got.reshape(-1, out_features), want.reshape(-1, out_features),
                             f"{path} {x_shape} -> {out_features} {activation} t{threads}")
        packed = samebits.pack_linear(weight)
        got = samebits.linear(x, packed, bias, activation=activation, mode="exact")
        assert_same_bits(got.reshape(-1, out_features), want.reshape(-1, out_features),
                         "packed weight")
        fast = samebits.linear(x, weight, bias, activation=activation, mode="fast", threads=2)
        fast1 = samebits.linear(x, packed, bias, activation=activation, mode="fast", threads=1)
        assert_same_bits(fast, fast1, "fast mode: packed and threads")


def test_no_bias_is_the_matmul_with_the_transpose():
    x, weight = test_values((5, 4, 30), 4, 4), test_values((12, 30), 5, 4)
    assert_same_bits(samebits.linear(x, weight, mode="exact").reshape(-1, 12),
                     samebits.matmul(x, weight.T, mode="exact").reshape(-1, 12), "matmul")


def test_strided_operands_are_read_as_they_are():
    big_x = test_values((6, 50), 6, 4)
    big_w = test_values((40, 80), 7, 4)
    x, weight = big_x[::2, 3:43], big_w[::3, ::2]        # (3, 40) and (14, 40)
    bias = test_values((28,), 8)[::2]
    want = linear_oracle(np.ascontiguousarray(x), np.ascontiguousarray(weight), bias, "relu")
    got = samebits.linear(x, weight, bias, activation="relu", mode="exact")
    assert_same_bits(got, want, "strided")
    out = np.zeros((3, 28), np.float32)
    assert samebits.linear(x, weight, bias, activation="relu", mode="exact",
                           out=out[:, ::2]) is not None
    assert_same_bits(out[:, ::2], want, "strided out")
    assert not out[:, 1::2].any()


def test_fast_mode_is_within_the_error_bound():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 300), dtype=np.float32)
    weight = rng.standard_normal((50, 300), dtype=np.float32)
    bias = rng.standard_normal(50, dtype=np.float32)
    got = samebits.linear(x, weight, bias).astype(np.float64)
    ref = x.astype(np.float64) @ weight.T.astype(np.float64)
    bound = 300 * 2.0 ** -24 * (np.abs(x).astype(np.float64) @ np.abs(weight.T)) + 1e-30
    # the product within the bound, then one rounding of the bias add
    assert (np.abs(got - (ref + bias)) <= bound + np.abs(ref + bias) * 2.0 ** -24 + 1e-30).all()


def test_errors_name_the_argument_and_shapes():
    x, weight = np.ones((4, 3), np.float32), np.ones((5, 3), np.float32)
    with pytest.raises(ValueError, match=r"weight must be 2-D \(out_features, in_features\), "
                                         r"got shape \(3,\)"):
        samebits.linear(x, np.ones(3, np.float32))
    with pytest.raises(ValueError, match=r"x has 3 features \(shape \(4, 3\)\) but weight "
                                         r"\(shape \(5, 4\)\) takes 4"):
        samebits.linear(x, np.ones((5, 4), np.float32))
    with pytest.raises(ValueError, match=r"bias has shape \(4,\), expected \(5,\)"):
        samebits.linear(x, weight, np.ones(4, np.float32))
    with pytest.raises(ValueError, match="activation must be None, one of 'relu', 'relu6'"):
        samebits.linear(x, weight, activation="elu")
    with pytest.raises(TypeError, match="float64"):
        samebits.linear(x.astype(np.float64), weight)
    with pytest.raises(ValueError, match=r"does not have enough dimensions"):
        samebits.linear(np.float32(1.0) * np.ones((), np.float32), weight)
    with pytest.raises(ValueError, match=r"out has shape \(4, 4\), the result has shape \(4, 5\)"):
        samebits.linear(x, weight, out=np.empty((4, 4), np.float32))
    with pytest.raises(ValueError, match="overlaps"):
        shared = np.ones((4, 5), np.float32)
        samebits.linear(shared[:, :3], weight, out=shared)


def test_without_numpy_buffers_work():
    x = memoryview(bytearray(4 * 2 * 3)).cast("f", (2, 3))
    w = memoryview(bytearray(4 * 4 * 3)).cast("f", (4, 3))
    flat_x, flat_w = x.cast("B").cast("f"), w.cast("B").cast("f")
    for i in range(6):
        flat_x[i] = i - 2.5
    for i in range(12):
        flat_w[i] = (i % 5) - 1.0
    got = samebits.linear(x, w, mode="exact")
    assert isinstance(got, memoryview) and got.shape == (2, 4)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(x) @ np.asarray(w).T)


def test_explain_shows_one_folded_product():
    x, weight = np.ones((8, 128, 768), np.float32), np.ones((3072, 768), np.float32)
    plan = samebits.explain(samebits.linear, x, weight, mode="exact")
    assert plan.products == 1 and (plan.m, plan.n, plan.k) == (1024, 3072, 768)
    assert plan.op == "linear" and plan.mode == "exact" and "linear (exact)" in str(plan)


@pytest.mark.parametrize("rows", [5, 8, 16, 33])
def test_more_rows_pack_the_weights_by_transposes(path, rows):
    """5 or more rows on unpacked weights (as torch stores them): their panels
    or tiles pack B = weight.T, whose columns are contiguous, by blocked
    transposes (pack.c). Exact mode against the oracle; both modes the bits of
    the prepacked weights and of the weights made row-major for matmul, at 1
    and 2 threads; weights with padded rows and ragged last strips. The
    first two shapes take the panels (B per panel), the others the tiles (B
    packed whole)."""
    for k, n in ((256, 512), (300, 530), (7, 9), (600, 33), (70, 777)):
        x = test_values((rows, k), rows + k, 4)
        padded = np.zeros((n, k + 3), np.float32)
        padded[:, 2:k + 2] = test_values((n, k), n + k, 4)
        for weight in (np.ascontiguousarray(padded[:, 2:k + 2]), padded[:, 2:k + 2]):
            what = f"path {path} {rows}x{k}x{n} rows {weight.strides[0] // 4} apart"
            with samebits.use_path(path):
                assert_same_bits(samebits.linear(x, weight, mode="exact"),
                                 linear_oracle(x, weight), what)
                packed = samebits.pack_linear(weight)
                plain = np.ascontiguousarray(weight.T)
                for mode in ("exact", "fast"):
                    want = samebits.linear(x, packed, mode=mode, threads=1)
                    assert_same_bits(samebits.matmul(x, plain, mode=mode, threads=1), want,
                                     what + f" {mode} matmul")
                    for threads in (1, 2):
                        assert_same_bits(samebits.linear(x, weight, mode=mode, threads=threads),
                                         want, what + f" {mode} {threads} threads")
                route = samebits.explain(samebits.linear, x, weight).route
            assert route == ("panels" if n in (512, 530) else "tiles"), (what, route)
