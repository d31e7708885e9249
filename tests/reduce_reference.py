"""numpy oracles of docs/exact-ops.md's reductions: sequential float32 sums
from +0, the exact exp and log of elementwise_reference."""
from __future__ import annotations

import numpy as np

import elementwise_reference as ref

F32 = np.float32


def _canonical(y) -> np.ndarray:
    y = np.array(y, dtype=np.float32)
    y[np.isnan(y)] = np.uint32(0x7FC00000).view(np.float32)
    return y


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
