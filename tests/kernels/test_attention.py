"""scaled_dot_product_attention: exact mode bit for bit against an oracle of
docs/exact-ops.md's composition (the exact product oracle of conftest, one
float32 multiply by the scale, the additive mask, the softmax oracle, the
product oracle again), on every path at 1 and 2 threads; torch's mask and
causal semantics; fast mode close to it; errors."""
from __future__ import annotations

import array

import numpy as np
import pytest

import samebits

from conftest import exact_oracle
from reduce_reference import softmax_oracle
from conftest import bits as _bits

F32 = np.float32


def attention_oracle(q, k, v, additive_mask=None, scale=None):
    batch = np.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    L, E = q.shape[-2:]
    S = k.shape[-2]
    qb = np.broadcast_to(q, batch + (L, E))
    kb = np.broadcast_to(k, batch + (S, E))
    vb = np.broadcast_to(v, batch + v.shape[-2:])
    scale = F32(1 / np.sqrt(E) if scale is None else scale)
    out = np.empty(batch + (L, v.shape[-1]), np.float32)
    for idx in np.ndindex(*batch):
        s = exact_oracle(qb[idx], np.ascontiguousarray(kb[idx].T))
        with np.errstate(all="ignore"):
            s = s * scale
            if additive_mask is not None:
                s = s + np.broadcast_to(additive_mask, batch + (L, S))[idx]
        p = softmax_oracle(s, 1)
        out[idx] = exact_oracle(p, vb[idx])
    return out


def _qkv(shape_q, shape_k, shape_v, seed=0):
    rng = np.random.default_rng(seed)
    return tuple(rng.standard_normal(s).astype(np.float32) for s in (shape_q, shape_k, shape_v))


@pytest.mark.parametrize("threads", [1, 2])
def test_exact_matches_the_composition(path, threads):
    q, k, v = _qkv((2, 3, 17, 8), (2, 3, 23, 8), (2, 3, 23, 5))
    want = attention_oracle(q, k, v)
    with samebits.use_path(path):
        got = samebits.scaled_dot_product_attention(q, k, v, mode="exact", threads=threads)
    assert np.array_equal(_bits(got), _bits(want))


def test_masks_causal_and_scale():
    q, k, v = _qkv((1, 2, 9, 4), (1, 2, 9, 4), (1, 2, 9, 6), seed=1)
    causal = np.where(np.tril(np.ones((9, 9), bool)), F32(0), F32(-np.inf))
    got = samebits.scaled_dot_product_attention(q, k, v, is_causal=True, mode="exact")
    assert np.array_equal(_bits(got), _bits(attention_oracle(q, k, v, causal)))
    rng = np.random.default_rng(2)
    keep = rng.random((2, 9, 9)) > 0.4
    keep[:, :, 0] = True                       # every row keeps one key
    additive = np.where(keep, F32(0), F32(-np.inf))
    got = samebits.scaled_dot_product_attention(q, k, v, attn_mask=keep, mode="exact")
    assert np.array_equal(_bits(got), _bits(attention_oracle(q, k, v, additive)))
    bias = rng.standard_normal((9, 9)).astype(np.float32)
    got = samebits.scaled_dot_product_attention(q, k, v, attn_mask=bias, scale=0.3, mode="exact")
    assert np.array_equal(_bits(got), _bits(attention_oracle(q, k, v, bias, 0.3)))


def test_fully_masked_rows_give_nan_as_torch():
    q, k, v = _qkv((1, 4, 3), (1, 5, 3), (1, 5, 2), seed=3)
    mask = np.ones((4, 5), bool)
    mask[2] = False
    got = samebits.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    assert np.isnan(got[0, 2]).all() and not np.isnan(got[0, [0, 1, 3]]).any()


def test_broadcast_batches_and_fast_mode():
    q, k, v = _qkv((4, 2, 16, 8), (2, 16, 8), (1, 16, 8), seed=4)
    exact = samebits.scaled_dot_product_attention(q, k, v, mode="exact")
    assert np.array_equal(_bits(exact), _bits(attention_oracle(q, k, v)))
    fast = samebits.scaled_dot_product_attention(q, k, v)
    assert np.allclose(fast, exact, rtol=1e-4, atol=1e-5)


def test_transposed_key_and_buffers_without_numpy():
    q, k, v = _qkv((6, 4), (4, 7), (7, 3), seed=5)      # k given as (E, S): pass k.T
    got = samebits.scaled_dot_product_attention(q, k.T, v, mode="exact")
    assert np.array_equal(_bits(got), _bits(attention_oracle(q, np.ascontiguousarray(k.T), v)))
    mv = lambda a: memoryview(array.array("f", a.ravel().tolist())).cast("B").cast("f", a.shape)
    qa, ka, va = _qkv((3, 4), (5, 4), (5, 2), seed=6)
    keep = np.tril(np.ones((3, 5), bool))
    mask = memoryview(array.array("B", keep.ravel().astype(np.uint8).tolist())).cast("?", (3, 5))
    got = samebits.scaled_dot_product_attention(mv(qa), mv(ka), mv(va), attn_mask=mask,
                                                mode="exact")
    assert isinstance(got, memoryview) and got.shape == (3, 2)
    want = attention_oracle(qa, ka, va, np.where(keep, F32(0), F32(-np.inf)))
    assert np.array_equal(_bits(np.array(got.tolist(), np.float32)), _bits(want))


@pytest.mark.parametrize("kwargs,error,match", [
    (dict(dropout_p=0.1), ValueError, "dropout_p"),
    (dict(is_causal=1), TypeError, "is_causal"),
    (dict(is_causal=True, attn_mask=np.zeros((4, 4), np.float32)), ValueError, "not both"),
    (dict(scale="x"), TypeError, "scale"),
    (dict(attn_mask=np.zeros((3, 3), np.float32)), ValueError, "attn_mask"),
])
def test_bad_arguments(kwargs, error, match):
    q, k, v = _qkv((4, 2), (4, 2), (4, 2))
    with pytest.raises(error, match=match):
        samebits.scaled_dot_product_attention(q, k, v, **kwargs)


def test_shape_mismatch_names_the_shapes():
    q, k, v = _qkv((4, 3), (5, 2), (5, 2))
    with pytest.raises(ValueError, match=r"query \(4, 3\) and key \(5, 2\)"):
        samebits.scaled_dot_product_attention(q, k, v)
    q, k, v = _qkv((4, 2), (5, 2), (6, 2))
    with pytest.raises(ValueError, match=r"value \(6, 2\) must have as many rows as key \(5, 2\)"):
        samebits.scaled_dot_product_attention(q, k, v)
