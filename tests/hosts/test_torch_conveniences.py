"""torch's conveniences, as a numpy or torch user expects them: conv2d's
padding="same"/"valid" and unbatched (C, H, W) input, max_pool2d's
ceil_mode and unbatched input. Checked against explicit padding (bit for
bit) and an independent numpy pooling loop of torch's ceil-mode rule."""
from __future__ import annotations

import math

import numpy as np
import pytest

import samebits
from conftest import bits

RNG = np.random.default_rng(21)


@pytest.mark.parametrize("kernel,dilation", [((3, 3), 1), ((4, 3), 1), ((2, 5), 2), ((1, 1), 3)])
def test_conv2d_same_is_torchs_padding(kernel, dilation):
    x = RNG.standard_normal((2, 3, 9, 10)).astype(np.float32)
    w = RNG.standard_normal((4, 3, *kernel)).astype(np.float32)
    got = samebits.conv2d(x, w, padding="same", dilation=dilation, mode="exact")
    assert got.shape == (2, 4, 9, 10)
    (th, tw) = (dilation * (k - 1) for k in kernel)
    want = samebits.conv2d(x, w, padding=(th // 2, th - th // 2, tw // 2, tw - tw // 2),
                           dilation=dilation, mode="exact")
    assert bits(got).tobytes() == bits(want).tobytes()
    packed = samebits.pack_conv2d(w)
    assert bits(samebits.conv2d(x, packed, padding="same", dilation=dilation,
                                mode="exact")).tobytes() == bits(want).tobytes()
    valid = samebits.conv2d(x, w, padding="valid", dilation=dilation, mode="exact")
    assert bits(valid).tobytes() == bits(samebits.conv2d(x, w, dilation=dilation,
                                                         mode="exact")).tobytes()


def test_conv2d_named_padding_errors():
    x, w = np.ones((1, 1, 5, 5), np.float32), np.ones((1, 1, 3, 3), np.float32)
    with pytest.raises(ValueError, match="padding='same' needs stride 1"):
        samebits.conv2d(x, w, padding="same", stride=2)
    with pytest.raises(ValueError, match="'valid' or 'same', got 'full'"):
        samebits.conv2d(x, w, padding="full")


def test_conv2d_unbatched():
    x = RNG.standard_normal((3, 8, 7)).astype(np.float32)
    w = RNG.standard_normal((5, 3, 3, 3)).astype(np.float32)
    b = RNG.standard_normal(5).astype(np.float32)
    got = samebits.conv2d(x, w, b, padding=1, mode="exact")
    want = samebits.conv2d(x[None], w, b, padding=1, mode="exact")[0]
    assert got.shape == (5, 8, 7) and bits(got).tobytes() == bits(want).tobytes()
    out = np.empty((5, 8, 7), np.float32)
    assert samebits.conv2d(x, w, b, padding=1, mode="exact", out=out) is out
    assert bits(out).tobytes() == bits(want).tobytes()
    view = samebits.conv2d(memoryview(x), memoryview(w), padding=1, mode="exact")
    assert isinstance(view, memoryview) and view.shape == (5, 8, 7)


def _torch_pool_reference(x, k, s, p, ceil_mode):
    """Max pooling by its definition with torch's output size rule (padding
    is never a value)."""
    n, c, h, w = x.shape

    def size(length):
        span = length + 2 * p - k
        o = (math.ceil(span / s) if ceil_mode else span // s) + 1
        if ceil_mode and (o - 1) * s >= length + p:
            o -= 1
        return o
    oh, ow = size(h), size(w)
    y = np.empty((n, c, oh, ow), np.float32)
    for i in range(oh):
        for j in range(ow):
            r0, c0 = i * s - p, j * s - p
            win = x[:, :, max(r0, 0):min(r0 + k, h), max(c0, 0):min(c0 + k, w)]
            y[:, :, i, j] = win.max(axis=(2, 3))
    return y


@pytest.mark.parametrize("k,s,p", [(3, 2, 0), (3, 2, 1), (2, 2, 0), (3, 3, 1), (5, 3, 2)])
@pytest.mark.parametrize("ceil_mode", [False, True])
def test_max_pool2d_ceil_mode(k, s, p, ceil_mode):
    x = RNG.standard_normal((2, 3, 11, 10)).astype(np.float32)
    got = samebits.max_pool2d(x, k, s, p, ceil_mode=ceil_mode)
    want = _torch_pool_reference(x, k, s, p, ceil_mode)
    assert got.shape == want.shape and bits(got).tobytes() == bits(want).tobytes()
    unbatched = samebits.max_pool2d(x[1], k, s, p, ceil_mode=ceil_mode)
    assert bits(unbatched).tobytes() == bits(want[1]).tobytes()


def test_max_pool2d_ceil_mode_type():
    with pytest.raises(TypeError, match="ceil_mode must be a bool"):
        samebits.max_pool2d(np.ones((1, 1, 4, 4), np.float32), 2, ceil_mode=1)


def test_ceil_mode_window_wider_than_the_input():
    """torch keeps one window when ceil mode lets it start inside the input
    (a 3x3 window over 2x2 gives 1x1: the max, and the mean of the 4 taps),
    and refuses a size below 1 as floor mode does."""
    x = np.arange(4, dtype=np.float32).reshape(1, 1, 2, 2)
    got = samebits.max_pool2d(x, 3, ceil_mode=True)
    assert bits(got).tobytes() == bits(_torch_pool_reference(x, 3, 3, 0, True)).tobytes()
    assert got.tolist() == [[[[3.0]]]]
    for include in (True, False):
        assert samebits.avg_pool2d(x, 3, ceil_mode=True, count_include_pad=include).tolist() == \
            [[[[1.5]]]]
    with pytest.raises(ValueError, match="below 1"):
        samebits.max_pool2d(np.ones((1, 1, 1, 1), np.float32), 5, stride=1, ceil_mode=True)
    with pytest.raises(ValueError, match="below 1"):
        samebits.max_pool2d(x, 3)
