"""numpy oracles of docs/exact-ops.md's reductions: sequential float32 sums
from +0, the exact exp and log of elementwise_reference."""
from __future__ import annotations

import numpy as np

import elementwise_reference as ref
from elementwise_reference import canonical as _canonical

F32 = np.float32


def seq_sum(x: np.ndarray, axis: int, keepdims: bool = False) -> np.ndarray:
    """Sum along axis in increasing index order from +0, float32 adds."""
    zero = np.zeros_like(np.take(x, [0], axis=axis)) if x.shape[axis] else \
        np.zeros(tuple(1 if d == axis else s for d, s in enumerate(x.shape)), np.float32)
    acc = np.add.accumulate(np.concatenate([zero, x], axis=axis), axis=axis, dtype=np.float32)
    last = np.take(acc, [acc.shape[axis] - 1], axis=axis)
    return last if keepdims else np.squeeze(last, axis=axis)


def softmax_oracle(x: np.ndarray, axis: int, log: bool = False) -> np.ndarray:
    with np.errstate(all="ignore"):
        m = np.max(x, axis=axis, keepdims=True) + F32(0.0)
        d = x - m
        e = ref.exp(d.ravel()).reshape(x.shape)
        s = seq_sum(e, axis, keepdims=True)
        if log:
            return _canonical(d - ref.log(s.ravel()).reshape(s.shape))
        return _canonical(e / s)


def layer_norm_oracle(x, k, weight, bias, eps):
    with np.errstate(all="ignore"):
        n = int(np.prod(x.shape[x.ndim - k:]))
        rows = x.reshape(-1, n)
        count = F32(n)
        mean = seq_sum(rows, 1, keepdims=True) / count
        d = rows - mean
        var = seq_sum(d * d, 1, keepdims=True) / count
        r = F32(1) / np.sqrt(var + F32(eps))
        y = d * r
        if weight is not None:
            y = y * weight.reshape(-1)
        if bias is not None:
            y = y + bias.reshape(-1)
        return _canonical(y.reshape(x.shape))


# ---- pooling (torch's window and divisor rules) -------------------------------

def _out_size(size, k, s, before, after, ceil_mode):
    span = size + before + after - k
    out = (-(-span // s) if ceil_mode else span // s) + 1
    if ceil_mode and (out - 1) * s >= size + before:
        out -= 1
    return out


def _quiet(fn):
    """The oracles add infinities and NaNs on purpose: no warnings."""
    def run(*args, **kwargs):
        with np.errstate(all="ignore"):
            return fn(*args, **kwargs)
    run.__name__ = fn.__name__
    return run


@_quiet
def avg_pool_oracle(x, k, s, pads, ceil_mode, include_pad, divisor=None):
    """torch's avg_pool2d rules, summing inside taps row-major from +0."""
    n, c, h, w = x.shape
    (kh, kw), (sh, sw), (pt, pb, pl, pr) = k, s, pads
    oh, ow = _out_size(h, kh, sh, pt, pb, ceil_mode), _out_size(w, kw, sw, pl, pr, ceil_mode)
    y = np.empty((n, c, oh, ow), np.float32)
    for oy in range(oh):
        y0 = oy * sh - pt
        y1 = y0 + kh
        ey = min(y1, h + pb) - y0
        for ox in range(ow):
            x0 = ox * sw - pl
            x1 = x0 + kw
            ex = min(x1, w + pr) - x0
            a0, a1, b0, b1 = max(y0, 0), min(y1, h), max(x0, 0), min(x1, w)
            acc = np.zeros((n, c), np.float32)
            for iy in range(a0, a1):
                for ix in range(b0, b1):
                    acc = acc + x[:, :, iy, ix]
            count = divisor or (ey * ex if include_pad else (a1 - a0) * (b1 - b0))
            with np.errstate(all="ignore"):
                y[:, :, oy, ox] = acc / F32(count)
    return _canonical(y)


@_quiet
def adaptive_oracle(x, oh, ow):
    n, c, h, w = x.shape
    y = np.empty((n, c, oh, ow), np.float32)
    for i in range(oh):
        a0, a1 = i * h // oh, -(-(i + 1) * h // oh)
        for j in range(ow):
            b0, b1 = j * w // ow, -(-(j + 1) * w // ow)
            acc = np.zeros((n, c), np.float32)
            for iy in range(a0, a1):
                for ix in range(b0, b1):
                    acc = acc + x[:, :, iy, ix]
            with np.errstate(all="ignore"):
                y[:, :, i, j] = acc / F32((a1 - a0) * (b1 - b0))
    return _canonical(y)
