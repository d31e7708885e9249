"""torch's unbatched inputs for the NCHW operators: a (C, H, W) tensor runs
as a batch of one, and its result comes back as (C, OH, OW)."""
from __future__ import annotations

from typing import Any

from .._binding.operands import is_numpy


def _ndim(x: Any) -> int:
    if is_numpy(x):
        return int(x.ndim)
    try:
        return memoryview(x).ndim
    except TypeError:
        return -1          # not an array: the operand check says what is wrong


def _with_batch(a: Any) -> Any:
    """a (C, H, W) as (1, C, H, W): a view for numpy arrays and contiguous buffers."""
    if is_numpy(a):
        return a[None]
    view = memoryview(a)
    if view.format.lstrip("<=@") != "f":
        raise TypeError(f"a buffer must have format 'f' (float32), got {view.format!r}")
    if not view.c_contiguous:
        raise ValueError("an unbatched (C, H, W) buffer must be C-contiguous")
    return view.cast("B").cast("f", (1,) + tuple(view.shape or ()))


def add_batch(x: Any, out: Any, what: str) -> tuple[Any, Any, bool]:
    """(x, out, unbatched): a 3-D x (and out) given a batch axis of one. An x
    of another rank than 3 or 4 is a ValueError naming both forms."""
    ndim = _ndim(x)
    if ndim not in (3, 4, -1):
        shape = tuple(x.shape) if is_numpy(x) else tuple(memoryview(x).shape or ())
        raise ValueError(f"{what}: x must be 4-D (N, C, H, W) or unbatched 3-D (C, H, W), "
                         f"got shape {shape}")
    if ndim != 3:
        return x, out, False
    if out is not None:
        if _ndim(out) != 3:
            raise ValueError(f"{what}: out must be 3-D (C, OH, OW) for an unbatched x")
        out = _with_batch(out)
    return _with_batch(x), out, True


def drop_batch(y: Any, out: Any, unbatched: bool) -> Any:
    """The result of a batch of one as (C, OH, OW); out (the caller's 3-D
    array) itself when given."""
    if not unbatched:
        return y
    if out is not None:
        return out
    if is_numpy(y):
        return y[0]
    view = memoryview(y)
    return view.cast("B").cast("f", tuple((view.shape or ())[1:]))
