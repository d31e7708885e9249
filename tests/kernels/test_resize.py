"""interpolate (nearest, bilinear): bit for bit against a plain-loop oracle
of docs/exact-ops.md's float32 steps, torch's output sizes and coordinate
rules, 1 and 2 threads, and the errors."""
from __future__ import annotations

import math

import numpy as np
import pytest

import samebits
from conftest import bits as _bits

F32 = np.float32


def _scale(size_in, size_out, factor, align):
    if align:
        return F32((size_in - 1) / (size_out - 1) if size_out > 1 else 0.0)
    return F32(1.0 / factor) if factor is not None else F32(size_in / size_out)


def oracle(x, oh, ow, mode, align=False, factors=(None, None)):
    with np.errstate(all="ignore"):          # NaN and inf inputs are meant
        return _oracle(x, oh, ow, mode, align, factors)


def _oracle(x, oh, ow, mode, align, factors):
    n, c, h, w = x.shape
    sh, sw = _scale(h, oh, factors[0], align), _scale(w, ow, factors[1], align)
    y = np.empty((n, c, oh, ow), np.float32)

    def near(o, s, size):
        return min(int(math.floor(F32(o) * s)), size - 1)

    def lin(o, s, size):
        src = s * F32(o) if align else s * (F32(o) + F32(0.5)) - F32(0.5)
        src = max(src, F32(0))
        i = min(int(src), size - 1)
        return i, i + (1 if i < size - 1 else 0), F32(src - F32(i))
    for oy in range(oh):
        for ox in range(ow):
            if mode == "nearest":
                y[:, :, oy, ox] = x[:, :, near(oy, sh, h), near(ox, sw, w)]
                continue
            y0, y1, ly1 = lin(oy, sh, h)
            x0, x1, lx1 = lin(ox, sw, w)
            ly0, lx0 = F32(1) - ly1, F32(1) - lx1
            top = lx0 * x[:, :, y0, x0] + lx1 * x[:, :, y0, x1]
            bottom = lx0 * x[:, :, y1, x0] + lx1 * x[:, :, y1, x1]
            y[:, :, oy, ox] = ly0 * top + ly1 * bottom
    y[np.isnan(y)] = np.uint32(0x7FC00000).view(np.float32)
    return y


CASES = [dict(size=(14, 18), mode="nearest"), dict(size=(5, 4), mode="nearest"),
         dict(scale_factor=2.0, mode="nearest"), dict(scale_factor=1.7, mode="nearest"),
         dict(size=(14, 18), mode="bilinear"), dict(size=(5, 13), mode="bilinear",
                                                    align_corners=True),
         dict(scale_factor=2.5, mode="bilinear"), dict(size=(3, 2), mode="bilinear"),
         dict(size=(1, 1), mode="bilinear", align_corners=True),
         dict(scale_factor=(0.5, 3.0), mode="bilinear")]


@pytest.mark.parametrize("kw", CASES)
@pytest.mark.parametrize("threads", [1, 2])
def test_matches_the_documented_steps(kw, threads):
    x = np.random.default_rng(0).standard_normal((2, 3, 7, 9)).astype(np.float32)
    x[0, 0, 1, 1] = np.nan
    got = samebits.interpolate(x, **kw, threads=threads)
    if "size" in kw:
        oh, ow = kw["size"]
        factors = (None, None)
    else:
        f = kw["scale_factor"]
        fh, fw = (f, f) if not isinstance(f, tuple) else f
        oh, ow, factors = math.floor(7 * fh), math.floor(9 * fw), (fh, fw)
    want = oracle(x, oh, ow, kw["mode"], kw.get("align_corners", False), factors)
    assert got.shape == want.shape
    assert np.array_equal(_bits(got), _bits(want))


def test_nearest_doubles_pixels():
    x = np.arange(4, dtype=np.float32).reshape(1, 1, 2, 2)
    got = samebits.interpolate(x, scale_factor=2)
    assert got[0, 0].tolist() == [[0, 0, 1, 1], [0, 0, 1, 1], [2, 2, 3, 3], [2, 2, 3, 3]]


@pytest.mark.parametrize("kwargs,error,match", [
    (dict(size=(2, 2), mode="bicubic"), ValueError, "mode"),
    (dict(size=(2, 2), scale_factor=2.0), ValueError, "exactly one"),
    (dict(), ValueError, "exactly one"),
    (dict(size=(0, 2)), ValueError, "size"),
    (dict(scale_factor=-1.0), ValueError, "positive"),
    (dict(scale_factor=0.01), ValueError, "empty"),
    (dict(size=(2, 2), align_corners=True), ValueError, "bilinear"),
    (dict(size=(2.5, 2)), TypeError, "ints"),
    (dict(size=(2, 2, 2)), ValueError, "pair"),
])
def test_bad_arguments(kwargs, error, match):
    with pytest.raises(error, match=match):
        samebits.interpolate(np.ones((1, 1, 4, 4), np.float32), **kwargs)
