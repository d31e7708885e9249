"""samebits.scaled_dot_product_attention: torch's semantics, composed of the
exact operations (docs/exact-ops.md, "Attention").

scores = q @ k^T (the matrix product's order, k read transposed in place),
then one rounded multiply by the scale, then + the additive mask (a boolean
mask or is_causal becomes 0 / -inf, as torch's reference does), then softmax
over the last dimension, then scores @ v. Each step is one C call whose
parallel run covers every head and batch entry.
"""
from __future__ import annotations

import array
import math
import numbers
from typing import TYPE_CHECKING, Any, Optional

from . import arith as _arith, products as _products, reduce as _reduce
from .._binding import operands as _operands
from .._binding.operands import Operand, is_numpy
from .._typing import Mode

if TYPE_CHECKING:
    import numpy as np
else:
    from .._binding.operands import np   # None without numpy

_NEG_INF = float("-inf")


def _causal_mask(length: int, source: int) -> memoryview[float]:
    """(L, S) float32: 0 where j <= i (torch's tril), -inf above."""
    data = array.array("f")
    for i in range(length):
        keep = min(i + 1, source)
        data.extend([0.0] * keep)
        data.extend([_NEG_INF] * (source - keep))
    return memoryview(data).cast("B").cast("f", (length, source))


def _additive_mask(mask: Any) -> Any:
    """A boolean mask as float32 0 (take part) / -inf (masked); a float32 mask
    as it is."""
    if is_numpy(mask):
        if mask.dtype == bool:
            return np.where(mask, np.float32(0.0), np.float32(_NEG_INF)).astype(np.float32)
        return mask
    try:
        view = memoryview(mask)
    except TypeError:
        return mask                      # as_operand will name the problem
    if view.format != "?":
        return mask
    shape = _operands.view_shape(view)
    flat = view.cast("B") if view.c_contiguous else memoryview(view.tobytes())
    data = array.array("f", (0.0 if b else _NEG_INF for b in flat))
    out = memoryview(data).cast("B")
    return out.cast("f", shape) if shape else out.cast("f")


def scaled_dot_product_attention(query: Any, key: Any, value: Any, attn_mask: Any = None,
                                 dropout_p: float = 0.0, is_causal: bool = False,
                                 scale: Optional[float] = None, *, mode: Mode = "fast",
                                 out: Any = None, threads: int | None = None) -> Any:
    """Attention as torch.nn.functional.scaled_dot_product_attention defines it.

    Parameters
    ----------
    query, key, value
        float32 arrays (..., L, E), (..., S, E) and (..., S, Ev) whose leading
        dimensions broadcast (numpy arrays of any strides, or buffers).
    attn_mask
        None, a boolean mask (True: takes part) or a float32 mask added to the
        scores, broadcastable to (..., L, S).
    dropout_p
        Must be 0 (inference).
    is_causal
        Mask out key j > query i (with attn_mask None, as torch requires).
    scale
        Multiplies the scores; default 1 / sqrt(E), rounded to float32.
    mode
        "exact": q @ k^T and the context in the matrix product's exact order,
        one rounded multiply by the scale, one rounded add of the mask, the
        exact softmax; the same bits everywhere. "fast" (default): the
        products fused where the path fuses.

    Returns
    -------
    (..., L, Ev) float32: a numpy array when an input is one, else a
    memoryview (or ``out``). A query row whose keys are all masked gives NaN,
    as in torch.
    """
    what = "scaled_dot_product_attention"
    if not isinstance(dropout_p, numbers.Real) or isinstance(dropout_p, bool) or dropout_p != 0:
        raise ValueError(f"{what}: dropout_p must be 0 (inference), got {dropout_p!r}")
    if type(is_causal) is not bool:
        raise TypeError(f"{what}: is_causal must be a bool, got {type(is_causal).__name__}")
    if is_causal and attn_mask is not None:
        raise ValueError(f"{what}: pass either attn_mask or is_causal=True, not both")
    q = _products._read(query, "query", what)
    k = _products._read(key, "key", what)
    if q.ndim < 2 or k.ndim < 2:
        raise ValueError(f"{what}: query and key must be at least 2-D, got shapes {q.shape} "
                         f"and {k.shape}")
    length, embed = q.shape[-2], q.shape[-1]
    source = k.shape[-2]
    if k.shape[-1] != embed:
        raise ValueError(f"{what}: query {q.shape} and key {k.shape} differ in their last "
                         "dimension (the embedding)")
    v = _products._read(value, "value", what)
    if v.ndim < 2 or v.shape[-2] != source:
        raise ValueError(f"{what}: value {v.shape} must have as many rows as key {k.shape} has "
                         f"(S = {source})")
    if scale is None:
        scale_value = 1.0 / math.sqrt(embed) if embed else float("inf")
    elif isinstance(scale, numbers.Real) and not isinstance(scale, bool):
        scale_value = float(scale)
    else:
        raise TypeError(f"{what}: scale must be a real number or None, got {type(scale).__name__}")
    numpy_result = is_numpy(query) or is_numpy(key) or is_numpy(value)
    # scores = q @ k^T: k's last two dimensions read transposed, in place
    k_core = (embed, source, k.strides[-1], k.strides[-2])
    call = _products._prepare(what, mode, threads, query, q, k, k_core, k.shape[:-2], False,
                              None, numpy_result, None, 0, [(key, k)])
    scores = _products.run(call)
    _arith._binary("mul", scores, scale_value, "exact", scores, threads)
    if is_causal:
        attn_mask = _causal_mask(length, source)
    if attn_mask is not None:
        mask = _additive_mask(attn_mask)
        try:
            _arith._binary("add", scores, mask, "exact", scores, threads)
        except ValueError as exc:
            if "could not be broadcast" in str(exc) or "out has shape" in str(exc):
                raise ValueError(f"{what}: attn_mask of shape {_shape(mask)} does not "
                                 f"broadcast to the scores' shape {_shape(scores)}") from None
            raise
    _reduce._softmax(what, _reduce._SOFTMAX, scores, -1, mode, scores, threads)
    return _products.run(_products.prepare_matmul(scores, value, mode, out, threads))


def _shape(x: Any) -> tuple[int, ...]:
    if isinstance(x, Operand):
        return x.shape
    try:
        return _operands.view_shape(memoryview(x)) if not is_numpy(x) else x.shape
    except TypeError:
        return ()
