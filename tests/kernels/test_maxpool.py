"""samebits.max_pool2d against an independent numpy reference, bit for bit."""
from __future__ import annotations

import ctypes

import numpy as np
import pytest

import samebits
from samebits._binding import abi as _abi, lib as _lib

FLT_MAX_BITS = 0x7F7FFFFF
NEG_FLT_MAX_BITS = 0xFF7FFFFF
CANONICAL_NAN = 0x7FC00000


def _f32(bits: int) -> np.float32:
    return np.array([bits], np.uint32).view(np.float32)[0]


def reference(x, kernel, stride=None, padding=0, dilation=1):
    """The rule of docs/maxpool.md, written differently from the kernel: gather
    every tap of every window, take the largest non-NaN inside tap, then the
    first inside tap equal to it (so its own bits: -0 or +0)."""
    x = np.asarray(x, dtype=np.float32)
    pair = lambda v: (v, v) if isinstance(v, int) else tuple(v)
    kh, kw = pair(kernel)
    sh, sw = pair(kernel if stride is None else stride)
    dh, dw = pair(dilation)
    if isinstance(padding, int):
        padding = (padding,) * 4
    elif len(padding) == 2:
        padding = (padding[0], padding[0], padding[1], padding[1])
    pt, pb, pl, pr = padding
    n, c, h, w = x.shape
    oh = (h + pt + pb - dh * (kh - 1) - 1) // sh + 1
    ow = (w + pl + pr - dw * (kw - 1) - 1) // sw + 1
    assert oh >= 1 and ow >= 1
    oy, ox = np.arange(oh), np.arange(ow)
    taps, inside = [], []
    for ky in range(kh):
        for kx in range(kw):
            iy, ix = oy * sh + ky * dh - pt, ox * sw + kx * dw - pl
            inside.append(((iy >= 0) & (iy < h))[:, None] & ((ix >= 0) & (ix < w))[None, :])
            if h and w:
                taps.append(x[:, :, np.clip(iy, 0, h - 1)][:, :, :, np.clip(ix, 0, w - 1)])
            else:
                taps.append(np.zeros((n, c, oh, ow), np.float32))
    t = np.stack(taps)                                   # (taps, n, c, oh, ow)
    v = np.stack(inside)[:, None, None]                  # (taps, 1, 1, oh, ow)
    ok = v & ~np.isnan(t)
    top = np.where(ok, t, np.float32(-np.inf)).max(axis=0)
    first = np.argmax(ok & (t == top), axis=0)
    pick = np.take_along_axis(t, first[None], axis=0)[0]
    none_inside = np.broadcast_to(~v.any(axis=0), pick.shape)
    result = np.where(ok.any(axis=0), pick,
                      np.where(none_inside, _f32(NEG_FLT_MAX_BITS), _f32(CANONICAL_NAN)))
    return result.astype(np.float32)


def assert_bits(got, want):
    got = np.asarray(got, dtype=np.float32)
    assert got.shape == want.shape
    gb, wb = got.view(np.uint32), want.view(np.uint32)
    if not np.array_equal(gb, wb):
        bad = np.argwhere(gb != wb)[:5]
        raise AssertionError("bits differ at " + ", ".join(
            f"{tuple(i)}: got {gb[tuple(i)]:#010x} want {wb[tuple(i)]:#010x}" for i in bad))


SPECIALS = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 1e-45, -1e-45],
                    dtype=np.float32)


def _data(rng, shape, special_fraction=0.2):
    x = rng.standard_normal(shape).astype(np.float32)
    if x.size:
        mask = rng.random(shape) < special_fraction
        x[mask] = rng.choice(SPECIALS, size=int(mask.sum()))
        # NaN payloads and signs other than the canonical one
        pay = rng.random(shape) < 0.02
        x.view(np.uint32)[pay] = rng.choice(np.array([0x7FC00001, 0xFFC00000, 0x7F800001],
                                                     np.uint32), size=int(pay.sum()))
    return x


def _random_case(rng):
    while True:
        k = (int(rng.integers(1, 6)), int(rng.integers(1, 6)))
        s = (int(rng.integers(1, 4)), int(rng.integers(1, 4)))
        d = (int(rng.integers(1, 3)), int(rng.integers(1, 3)))
        p = tuple(int(v) for v in rng.integers(0, 4, size=4))
        shape = (int(rng.choice([0, 1, 2])), int(rng.choice([0, 1, 3])),
                 int(rng.integers(0, 12)), int(rng.integers(0, 12)))
        if rng.random() < 0.15:
            shape = shape[:3] + (int(rng.integers(20, 70)),)
        oh = (shape[2] + p[0] + p[1] - d[0] * (k[0] - 1) - 1) // s[0] + 1
        ow = (shape[3] + p[2] + p[3] - d[1] * (k[1] - 1) - 1) // s[1] + 1
        if oh >= 1 and ow >= 1:
            return shape, k, s, d, p


def test_random_shapes_bit_for_bit():
    rng = np.random.default_rng(2024)
    for _ in range(300):
        shape, k, s, d, p = _random_case(rng)
        x = _data(rng, shape, special_fraction=float(rng.choice([0.0, 0.2, 0.7])))
        got = samebits.max_pool2d(x, k, s, p, d)
        assert_bits(got, reference(x, k, s, p, d))


@pytest.mark.parametrize("stride", [1, 2, 3, 5])
def test_wide_rows_each_stride(stride):
    # long rows: the vectorised passes and their remainders
    rng = np.random.default_rng(stride)
    for w in (61, 64, 67, 130):
        x = _data(rng, (1, 2, 7, w), 0.1)
        for k, pad in ((3, 1), (2, 0), (5, (0, 2))):
            assert_bits(samebits.max_pool2d(x, k, (1, stride), pad),
                        reference(x, k, (1, stride), pad))


@pytest.mark.parametrize("k", [2, 3])
def test_fold_route_3x3_and_2x2_stride_2(k):
    """The fold route at its most common (3x3 and 2x2 windows, column stride
    2): every width from 1 to 40 (rows shorter than a block, a block and a
    partial one), wide rows (above the stack's 512 columns), each padding on
    either side, special values, signed-zero ties and windows of only NaN,
    at 1 and 2 threads."""
    rng = np.random.default_rng(k)
    pads = [0, 1, (0, 0, 0, 1), (0, 0, 1, 0), (1, 0, 1, 0), (0, 1, 0, 1)] if k == 3 else \
        [0, 1, (0, 0, 0, 1), (0, 0, 1, 0)]
    widths = list(range(1, 41)) + [100, 515, 600, 1100]
    for w in widths:
        for pad in pads:
            for sh in (1, 2):
                x = _data(rng, (1, 2, 7, w), float(rng.choice([0.0, 0.3, 0.9])))
                if w > 4:
                    x[0, 0, 2:5, 1:5] = np.array([-0.0, 0.0], np.float32)[
                        rng.integers(0, 2, size=(3, 4))]
                try:
                    want = reference(x, k, (sh, 2), pad)
                except AssertionError:   # no output: a window wider than the padded row
                    continue
                for threads in (1, 2):
                    assert_bits(samebits.max_pool2d(x, k, (sh, 2), pad, threads=threads), want)


def test_fold_route_every_form():
    """Every window the fold route takes (1 to 3 rows, 2 or 3 columns, column
    stride 1 or 2), with row strides 1 to 3, row dilation 1 to 3 (window rows
    that share a ring slot's residue), paddings that put whole window rows and
    columns outside, several planes per chunk, against the reference."""
    rng = np.random.default_rng(77)
    for _ in range(400):
        kh, kw = int(rng.integers(1, 4)), int(rng.integers(2, 4))
        sh, sw = int(rng.integers(1, 4)), int(rng.integers(1, 3))
        dh = int(rng.integers(1, 4))
        pad = tuple(int(v) for v in rng.integers(0, 3, size=4))
        h, w = int(rng.integers(1, 14)), int(rng.choice([1, 2, 5, 16, 17, 33, 40]))
        x = _data(rng, (2, 3, h, w), float(rng.choice([0.0, 0.3, 0.9])))
        try:
            want = reference(x, (kh, kw), (sh, sw), pad, (dh, 1))
        except AssertionError:
            continue
        for threads in (1, 2):
            assert_bits(samebits.max_pool2d(x, (kh, kw), (sh, sw), pad, (dh, 1),
                                            threads=threads), want)


def test_wide_windows_and_plane_route():
    """Windows wider than 3 columns at column stride 1 (the fold route, each
    extra column one pass; up to 8 rows in its ring) and the plane route
    (every padding below the window, a padded plane of at most 4096 floats:
    YOLO's SPPF, 5 x 5 with padding 2), with paddings that do
    and do not fit it, row strides and dilations that leave it, planes just
    under and over its size, special values and windows of only NaN, at 1
    and 2 threads."""
    rng = np.random.default_rng(55)
    shapes = [(1, 3, 10, 10), (2, 2, 20, 20), (1, 2, 40, 40), (1, 1, 41, 41), (1, 2, 1, 9),
              (1, 2, 9, 1), (1, 1, 3, 70), (1, 1, 60, 60)]
    for _ in range(250):
        shape = shapes[int(rng.integers(len(shapes)))]
        kh, kw = int(rng.integers(1, 10)), int(rng.integers(2, 10))
        sh = int(rng.choice([1, 1, 1, 2]))
        dh = int(rng.choice([1, 1, 1, 2]))
        pad = tuple(int(v) for v in rng.integers(0, max(kh, kw) + 1, size=4))
        x = _data(rng, shape, float(rng.choice([0.0, 0.3, 0.95])))
        try:
            want = reference(x, (kh, kw), (sh, 1), pad, (dh, 1))
        except AssertionError:   # no output
            continue
        for threads in (1, 2):
            assert_bits(samebits.max_pool2d(x, (kh, kw), (sh, 1), pad, (dh, 1),
                                            threads=threads), want)
    x = _data(rng, (1, 4, 20, 20), 0.2)   # SPPF: three in a row
    for _ in range(3):
        want = reference(x, 5, 1, 2)
        x = samebits.max_pool2d(x, 5, 1, 2)
        assert_bits(x, want)


def test_strided_plane_route():
    """The plane route at strides of 2 (rows, columns or both; 2 or 3 columns
    at column stride 2): SqueezeNet's 3 x 3 / 2 pools over 27 x 27 and 55 x 55
    planes, odd and even widths (the padded plane's width rounded up to even),
    input rows and columns no window reads (floor mode), ceil mode's extra
    windows (as a right or bottom padding), every padding below the window,
    planes just under and over the route's 4096 floats, special values,
    signed-zero ties and windows of only NaN, several planes per chunk, at 1
    and 2 threads."""
    rng = np.random.default_rng(2027)
    shapes = [(1, 5, 27, 27), (1, 3, 55, 55), (2, 2, 13, 13), (1, 2, 28, 28), (1, 3, 8, 9),
              (1, 2, 1, 9), (1, 2, 9, 2), (1, 1, 44, 89), (1, 1, 45, 90), (1, 1, 63, 64),
              (1, 1, 64, 64), (1, 1, 2, 300)]
    cases = [((3, 3), (2, 2), 0), ((3, 3), (2, 2), (0, 1, 0, 1)), ((2, 2), (2, 2), 0),
             ((3, 2), (2, 2), (1, 0, 1, 1)), ((3, 3), (1, 2), 1), ((4, 3), (2, 1), (2, 1, 0, 2)),
             ((5, 3), (2, 2), (2, 2, 1, 1)), ((1, 3), (2, 2), (0, 0, 2, 0)), ((3, 3), (2, 2), 1)]
    for shape in shapes:
        for k, st, pad in cases:
            x = _data(rng, shape, float(rng.choice([0.0, 0.3, 0.95])))
            if shape[2] > 4 and shape[3] > 4:
                x[0, 0, 1:4, 1:5] = np.array([-0.0, 0.0], np.float32)[
                    rng.integers(0, 2, size=(3, 4))]
            try:
                want = reference(x, k, st, pad)
            except AssertionError:   # no output
                continue
            for threads in (1, 2):
                assert_bits(samebits.max_pool2d(x, k, st, pad, threads=threads), want)


def test_ties_and_signed_zeros():
    x = np.array([-0.0, 0.0, 0.0, -0.0], np.float32).reshape(1, 1, 1, 4)
    got = samebits.max_pool2d(x, (1, 2), (1, 2)).view(np.uint32).ravel()
    assert list(got) == [0x80000000, 0x00000000]      # the first of equal taps wins
    # the row above comes first: (-0 above +0) gives -0, in a 2x1 window
    x = np.array([[-0.0], [0.0]], np.float32).reshape(1, 1, 2, 1)
    assert samebits.max_pool2d(x, (2, 1)).view(np.uint32).ravel()[0] == 0x80000000


def test_nan_rules():
    nan_payload = _f32(0xFFC00001)
    x = np.array([[nan_payload, np.nan], [np.nan, np.nan]], np.float32).reshape(1, 1, 2, 2)
    got = samebits.max_pool2d(x, 2).view(np.uint32).ravel()
    assert list(got) == [CANONICAL_NAN]               # all-NaN window: canonical NaN
    x = np.array([[np.nan, -5.0], [np.nan, -7.0]], np.float32).reshape(1, 1, 2, 2)
    assert samebits.max_pool2d(x, 2).ravel()[0] == -5.0   # NaN taps are ignored
    x = np.array([[-np.inf, np.nan], [-np.inf, -np.inf]], np.float32).reshape(1, 1, 2, 2)
    assert samebits.max_pool2d(x, 2).ravel()[0] == -np.inf   # -inf only: -inf
    x = np.array([[1.0, np.inf], [np.nan, 3.0]], np.float32).reshape(1, 1, 2, 2)
    assert samebits.max_pool2d(x, 2).ravel()[0] == np.inf


def test_windows_in_padding_give_lowest_float():
    x = np.full((1, 1, 2, 2), -np.inf, np.float32)
    got = samebits.max_pool2d(x, 1, 1, 2)             # 6 x 6, only the middle 2 x 2 inside
    bits = got.view(np.uint32)[0, 0]
    assert (bits[2:4, 2:4] == 0xFF800000).all()
    bits[2:4, 2:4] = NEG_FLT_MAX_BITS
    assert (bits == NEG_FLT_MAX_BITS).all()
    # dilation skipping the whole input: no tap inside
    x = np.ones((1, 1, 1, 1), np.float32)
    got = samebits.max_pool2d(x, (1, 2), 1, (0, 0, 1, 1), (1, 2))   # ow = 1, taps at -1 and 1
    assert got.view(np.uint32).ravel().tolist() == [NEG_FLT_MAX_BITS]
    # all-NaN inside vs none inside, side by side
    x = np.full((1, 1, 1, 1), np.nan, np.float32)
    got = samebits.max_pool2d(x, 1, 1, (0, 0, 1, 0)).view(np.uint32).ravel().tolist()
    assert got == [NEG_FLT_MAX_BITS, CANONICAL_NAN]


@pytest.mark.parametrize("shape", [(0, 3, 4, 4), (2, 0, 4, 4), (0, 0, 0, 0), (1, 1, 1, 1),
                                   (1, 1, 1, 6), (1, 1, 6, 1), (3, 1, 0, 2)])
def test_empty_and_unit_sizes(shape):
    x = _data(np.random.default_rng(1), shape, 0.3)
    for k, s, p in ((2, 1, 1), (2, 2, 1), (1, 1, (1, 0, 2, 1))):
        got = samebits.max_pool2d(x, k, s, p)
        assert_bits(got, reference(x, k, s, p))


def test_zero_height_or_width():
    x = np.ones((2, 3, 0, 4), np.float32)
    got = samebits.max_pool2d(x, 1, 1, (1, 0))         # oh = 2 windows, all in padding
    assert got.shape == (2, 3, 2, 4)
    assert (got.view(np.uint32) == NEG_FLT_MAX_BITS).all()
    with pytest.raises(ValueError, match=r"output height would be 0.*0 \+ padding 0 \+ 0"):
        samebits.max_pool2d(x, 1)
    x = np.ones((1, 1, 3, 0), np.float32)
    with pytest.raises(ValueError, match="output width"):
        samebits.max_pool2d(x, 1)
    assert samebits.max_pool2d(np.zeros((0, 2, 0, 0), np.float32), 1, 1, 1).shape == (0, 2, 2, 2)


@pytest.mark.parametrize("make", [
    lambda x: x.transpose(0, 1, 3, 2).copy().transpose(0, 1, 3, 2),   # F-ordered planes
    lambda x: x[:, :, ::-1, :],
    lambda x: np.repeat(x, 2, axis=3)[..., ::2],
    lambda x: np.frombuffer(b"\0" + x.tobytes(), np.uint8, offset=1).view(np.float32)
    .reshape(x.shape),                                                  # misaligned
])
def test_non_contiguous_numpy_input(make):
    base = _data(np.random.default_rng(7), (2, 3, 9, 10))
    x = make(base)
    assert not (x.flags.c_contiguous and x.flags.aligned)
    assert_bits(samebits.max_pool2d(x, 3, 2, 1), reference(np.ascontiguousarray(x), 3, 2, 1))


def _ctypes_tensor(values: np.ndarray):
    n, c, h, w = values.shape
    storage = (ctypes.c_float * w * h * c * n)()
    ctypes.memmove(storage, values.tobytes(), values.nbytes)
    return storage


def test_buffer_protocol_without_numpy():
    x = _data(np.random.default_rng(3), (2, 3, 8, 9))
    want = reference(x, 3, 2, 1)
    storage = _ctypes_tensor(x)
    view = memoryview(storage).cast("B").cast("f", x.shape)
    for arg in (storage, view, memoryview(bytes(view.cast("B"))).cast("f", x.shape)):
        got = samebits.max_pool2d(arg, 3, 2, 1)
        assert isinstance(got, memoryview) and got.format == "f" and got.shape == want.shape
        assert_bits(np.frombuffer(got.cast("B"), np.float32).reshape(want.shape), want)
    # strided buffer: copied
    got = samebits.max_pool2d(memoryview(_ctypes_tensor(np.concatenate([x, x])))
                              .cast("B").cast("f", (4, 3, 8, 9))[::2], 3, 2, 1)
    want2 = reference(np.concatenate([x, x])[::2], 3, 2, 1)
    assert_bits(np.frombuffer(got.cast("B"), np.float32).reshape(want2.shape), want2)
    # out= as a buffer
    out = (ctypes.c_float * 5 * 4 * 3 * 2)()
    assert samebits.max_pool2d(view, 3, 2, 1, out=out) is out
    assert_bits(np.frombuffer(out, np.float32).reshape(want.shape), want)
    # empty result: the view of a ctypes array
    got = samebits.max_pool2d((ctypes.c_float * 4 * 4 * 1 * 0)(), 2)
    assert got.shape == (0, 1, 2, 2)


def test_out_argument():
    x = _data(np.random.default_rng(5), (2, 3, 8, 8))
    want = reference(x, 2)
    out = np.empty((2, 3, 4, 4), np.float32)
    assert samebits.max_pool2d(x, 2, out=out) is out
    assert_bits(out, want)
    big = np.zeros((2, 3, 4, 8), np.float32)
    assert samebits.max_pool2d(x, 2, out=big[..., ::2]) is not None
    assert_bits(np.ascontiguousarray(big[..., ::2]), want)
    assert not big[..., 1::2].any()
    with pytest.raises(ValueError, match=r"\(2, 3, 4, 5\).*\(2, 3, 4, 4\)"):
        samebits.max_pool2d(x, 2, out=np.empty((2, 3, 4, 5), np.float32))
    with pytest.raises(TypeError, match="float64"):
        samebits.max_pool2d(x, 2, out=np.empty((2, 3, 4, 4)))
    ro = np.empty((2, 3, 4, 4), np.float32)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        samebits.max_pool2d(x, 2, out=ro)
    with pytest.raises(ValueError, match="overlaps"):
        samebits.max_pool2d(x, 1, out=x)
    with pytest.raises(ValueError, match="overlaps"):
        samebits.max_pool2d(x, 2, out=x[:, :, :4, :4])


def test_threads_do_not_change_bits():
    x = _data(np.random.default_rng(11), (2, 4, 130, 150), 0.05)
    one = samebits.max_pool2d(x, 3, 1, 1, threads=1)
    assert_bits(samebits.max_pool2d(x, 3, 1, 1), one)
    assert_bits(samebits.max_pool2d(x, 3, 1, 1, threads=2), one)
    assert_bits(samebits.max_pool2d(x, 3, 1, 1, threads=64), one)
    assert_bits(one, reference(x, 3, 1, 1))
    big = samebits.max_pool2d(x, (2, 3), (2, 1), (0, 1, 1, 0), threads=1)
    assert_bits(samebits.max_pool2d(x, (2, 3), (2, 1), (0, 1, 1, 0)), big)


def test_argument_forms():
    x = _data(np.random.default_rng(9), (1, 2, 9, 11))
    assert_bits(samebits.max_pool2d(x, (2, 3)), reference(x, (2, 3), (2, 3)))   # stride = kernel
    assert_bits(samebits.max_pool2d(x, [3, 2], [1, 2], [1, 0], [2, 1]),
                reference(x, (3, 2), (1, 2), (1, 0), (2, 1)))
    assert_bits(samebits.max_pool2d(x, 3, 1, (0, 2, 1, 0)), reference(x, 3, 1, (0, 2, 1, 0)))
    assert_bits(samebits.max_pool2d(x, np.int64(2), np.int32(1)), reference(x, 2, 1))


@pytest.mark.parametrize("kwargs, error, match", [
    (dict(kernel_size=0), ValueError, "kernel_size must be at least 1"),
    (dict(kernel_size=(2, 0)), ValueError, "kernel_size must be at least 1"),
    (dict(kernel_size=2, stride=0), ValueError, "stride must be at least 1"),
    (dict(kernel_size=2, dilation=0), ValueError, "dilation must be at least 1"),
    (dict(kernel_size=2, padding=-1), ValueError, "padding must not be negative"),
    (dict(kernel_size=2, padding=(1, 2, 3)), ValueError, "padding .* 3 values"),
    (dict(kernel_size=(1, 2, 3)), ValueError, "kernel_size .* 3 values"),
    (dict(kernel_size=True), TypeError, "kernel_size must be an int, got bool"),
    (dict(kernel_size=2, stride=(1, False)), TypeError, "stride must be an int, got bool"),
    (dict(kernel_size=2.0), TypeError, "kernel_size must be an int, got float"),
    (dict(kernel_size="2"), TypeError, "kernel_size must be an int, got str"),
    (dict(kernel_size=2, padding=1.5), TypeError, "padding must be an int, got float"),
    (dict(kernel_size=9), ValueError, r"output height would be 0 .*extent.* = 9"),
    (dict(kernel_size=3, stride=1, dilation=(1, 5)), ValueError, r"output width would be -2"),
    (dict(kernel_size=2, threads=0), ValueError, "threads must be at least 1"),
    (dict(kernel_size=2, threads=True), TypeError, "threads"),
    (dict(kernel_size=2, padding=1 << 41), ValueError, "too large"),
])
def test_bad_arguments(kwargs, error, match):
    x = np.ones((1, 1, 8, 8), np.float32)
    with pytest.raises(error, match=match):
        samebits.max_pool2d(x, **kwargs)


@pytest.mark.parametrize("kwargs, match", [
    (dict(kernel_size=(1, 2**64 + 1)), r"max_pool2d: kernel_size is too large: \(1, 1844"),
    (dict(kernel_size=1, stride=2**64), r"max_pool2d: stride is too large: 18446744073709551616"),
    (dict(kernel_size=1, dilation=(2**41, 1)), r"max_pool2d: dilation is too large: \(2199"),
    (dict(kernel_size=1, padding=-2**64), r"max_pool2d: padding must not be negative"),
    # In range, but dilation*(kernel-1)+1 would wrap size_t arithmetic in C.
    (dict(kernel_size=(1, 2**40), dilation=(1, 2**40)),
     r"max_pool2d: the window's width extent dilation\*\(kernel-1\)\+1 = "
     r"1099511627776\*\(1099511627776-1\)\+1 = \d+ is too large"),
    # In range, but an output of 2**41 + 1 squared floats: refused before allocating.
    (dict(kernel_size=1, padding=2**40),
     r"max_pool2d: the output would have shape \(1, 1, 2199023255553, 2199023255553\)"),
])
def test_out_of_range_arguments_name_the_argument(kwargs, match):
    with pytest.raises(ValueError, match=match):
        samebits.max_pool2d(np.ones((1, 1, 1, 1), np.float32), **kwargs)


def test_huge_empty_input_is_refused():
    with pytest.raises(ValueError, match=r"max_pool2d: x has shape \(2199023255552, 1, 1, 0\); "
                                         r"dimensions above 2\*\*40"):
        samebits.max_pool2d(np.empty((2**41, 1, 1, 0), np.float32), 1, padding=1)


def test_bad_inputs():
    with pytest.raises(TypeError, match="float64"):
        samebits.max_pool2d(np.ones((1, 1, 4, 4)), 2)
    with pytest.raises(ValueError, match=r"4-D.*\(4, 4\)"):
        samebits.max_pool2d(np.ones((4, 4), np.float32), 2)
    with pytest.raises(TypeError, match="buffer"):
        samebits.max_pool2d([[[[1.0]]]], 1)
    with pytest.raises(TypeError, match="format"):
        samebits.max_pool2d(memoryview(bytearray(16)).cast("i", (1, 1, 2, 2)), 1)


def _raw(**over):
    """sb_max_pool2d on a 1 x 1 x 4 x 4 input with some arguments replaced."""
    x = np.ones((1, 1, 4, 4), np.float32)
    y = np.zeros((1, 1, 4, 4), np.float32)
    names = ["n", "c", "h", "w", "kh", "kw", "sh", "sw", "dh", "dw", "pt", "pb", "pl", "pr",
             "x", "y", "threads"]
    vals = dict(zip(names, [1, 1, 4, 4, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0,
                            x.ctypes.data, y.ctypes.data, 1]))
    vals.update(over)
    args = _abi.MaxPool2dArgs(*[vals[k] for k in names])
    return _lib.lib.sb_max_pool2d(ctypes.addressof(args))


def test_c_argument_validation():
    assert _raw() == 0
    assert _lib.lib.sb_max_pool2d(None) == _lib.STATUS_ARGUMENT
    for bad in [dict(n=-1), dict(h=-4), dict(kh=0), dict(kw=0), dict(sh=0), dict(sw=0),
                dict(dh=0), dict(dw=0), dict(pt=-1), dict(pr=-1), dict(threads=0),
                dict(threads=-3), dict(x=0), dict(y=0), dict(kh=5), dict(kw=3, dw=2),
                dict(n=1 << 41), dict(pl=1 << 41), dict(kw=1 << 40, dw=1 << 40, pl=1 << 40),
                dict(n=1 << 40, c=1 << 40), dict(h=0, w=0)]:
        assert _raw(**bad) == _lib.STATUS_ARGUMENT, bad
    # empty outputs need no pointers; windows all in padding need no input pointer
    assert _raw(n=0, x=0, y=0) == 0
    assert _raw(c=0, x=0, y=0) == 0
    assert _raw(c=0, h=0, pt=1, x=0, y=0) == 0
    assert _raw(h=0, pt=2, pb=2, x=0) == 0


def test_close_to_torch():
    torch = pytest.importorskip("torch", reason="torch is not installed: no torch comparison")
    F = torch.nn.functional
    rng = np.random.default_rng(99)
    cases = 0
    while cases < 60:
        shape, k, s, d, _ = _random_case(rng)
        if 0 in shape:
            continue
        p = (int(rng.integers(0, k[0] // 2 + 1)), int(rng.integers(0, k[1] // 2 + 1)))
        if any((shape[2 + i] + 2 * p[i] - d[i] * (k[i] - 1) - 1) // s[i] + 1 < 1
               for i in range(2)):
            continue
        x = rng.standard_normal(shape).astype(np.float32)
        x[rng.random(shape) < 0.1] = np.float32(np.inf)
        x[rng.random(shape) < 0.1] = np.float32(-np.inf)   # NaN-free: torch's NaN rule differs
        want = F.max_pool2d(torch.from_numpy(x), k, s, p, d).numpy()
        np.testing.assert_array_equal(samebits.max_pool2d(x, k, s, p, d), want)
        cases += 1


# ---- the WebAssembly build under Node (pytest -m node; needs wasm/build.sh and npm ci) ----

_WASM_SNIPPET = r'''
import ctypes, hashlib, samebits
from samebits._binding import abi as _abi, lib as _lib
CASES = [((2, 3, 17, 19), 3, 2, 1, 1), ((1, 4, 9, 70), (2, 3), 1, (0, 2, 1, 0), (2, 1)),
         ((3, 2, 8, 8), 2, 2, 0, 1), ((1, 1, 5, 33), 5, (1, 3), 2, (1, 2)),
         ((1, 2, 3, 3), 1, 1, 3, 1), ((2, 2, 40, 41), 3, 1, 1, 1)]
def pool_digests():
    lines = []
    for i, (shape, k, s, p, d) in enumerate(CASES):
        n = shape[0] * shape[1] * shape[2] * shape[3]
        buf = (ctypes.c_float * n)()
        _lib.lib.sb_fill_test_values(ctypes.addressof(buf), n, 7000 + i, n // 4)
        x = memoryview(buf).cast("B").cast("f", shape)
        y = samebits.max_pool2d(x, k, s, p, d)
        lines.append(hashlib.sha256(y.cast("B")).hexdigest())
    return "\n".join(lines)
'''

_NODE_SCRIPT = r'''
import { pathToFileURL } from "node:url";
const [entry, indexURL, wheel, code] = process.argv.slice(2);
const { loadPyodide } = await import(pathToFileURL(entry).href);
const pyodide = await loadPyodide({ indexURL: indexURL + "/", stdout: () => {} });
await pyodide.loadPackage(wheel, { messageCallback: () => {} });
pyodide.runPython(code);
console.log(pyodide.runPython("pool_digests()"));
'''


@pytest.mark.node
def test_wasm_build_gives_the_same_bits(tmp_path):
    import json
    import shutil
    import subprocess
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    manifest = root / "wasm" / "out" / "wheel.json"
    pyodide_dir = root / "web" / "node_modules" / "pyodide"
    if shutil.which("node") is None or not manifest.is_file() or \
            not (pyodide_dir / "pyodide.mjs").is_file():
        pytest.skip("needs node, bash wasm/build.sh and npm ci in web/")
    wheel = manifest.parent / json.loads(manifest.read_text())["wheel"]
    script = tmp_path / "pool.mjs"
    script.write_text(_NODE_SCRIPT)
    run = subprocess.run(["node", str(script), str(pyodide_dir / "pyodide.mjs"),
                          str(pyodide_dir), str(wheel), _WASM_SNIPPET],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    scope: dict = {}
    exec(_WASM_SNIPPET, scope)
    assert run.stdout.strip().splitlines() == scope["pool_digests"]().splitlines()


@pytest.mark.parametrize("shape", [(1, 3, 111, 111), (1, 4, 55, 55), (2, 3, 27, 27), (1, 2, 20, 20),
                                   (1, 2, 9, 40)])
@pytest.mark.parametrize("k,st,pad", [((3, 3), (2, 2), 0), ((3, 3), (1, 1), 1), ((2, 2), (2, 2), 0),
                                      ((5, 5), (1, 1), 2), ((3, 3), (2, 2), 1)])
def test_windows_of_nan_or_minus_infinity_between_ordinary_ones(shape, k, st, pad):
    """The plane route folds with first (from -inf, one max instruction)
    and folds a row again with take where it holds -inf: windows of only NaN
    taps (canonical NaN), of -inf and NaN (-inf), of -0 and +0 in either
    order, scattered among ordinary windows on the plane route (and on the
    fold route, 111 x 111, which takes), every path, 1 and 2 threads,
    against the reference rule."""
    rng = np.random.default_rng(4)
    x = rng.standard_normal(shape).astype(np.float32)
    n, c, h, w = shape
    for _ in range(12):   # blocks of NaN, -inf with NaN, and signed zeros
        y0, x0 = int(rng.integers(0, h - 4)), int(rng.integers(0, w - 4))
        kind = int(rng.integers(0, 3))
        block = x[0, int(rng.integers(0, c)), y0:y0 + 5, x0:x0 + 5]
        if kind == 0:
            block[:] = np.nan
        elif kind == 1:
            block[:] = np.where(rng.random(block.shape) < 0.5, np.nan, -np.inf)
        else:
            block[:] = np.where(rng.random(block.shape) < 0.5, -0.0, 0.0)
    x.reshape(-1).view(np.uint32)[::53] = 0xFFC00001   # NaN payloads
    want = reference(x, k, st, pad)
    for path in samebits.paths():
        for threads in (1, 2):
            with samebits.use_path(path):
                got = samebits.max_pool2d(x, k, st, pad, threads=threads)
            assert_bits(got, want)
