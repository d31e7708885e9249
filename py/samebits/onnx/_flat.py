"""Index arithmetic over flat C-ordered lists: broadcasting, transposes,
slices. Used for integer tensors (shape subgraphs) and for the few float
data-movement steps that have no C kernel when numpy is absent. Pure Python
on Python ints: exact, and the same in every runtime."""
from __future__ import annotations

from typing import Sequence, TypeVar

_T = TypeVar("_T")


def c_strides(shape: Sequence[int]) -> list[int]:
    out, step = [], 1
    for s in reversed(shape):
        out.append(step)
        step *= s
    return out[::-1]


def broadcast_shape(shapes: Sequence[Sequence[int]], where: str) -> tuple[int, ...]:
    """numpy's (and ONNX's multidirectional) broadcasting of several shapes."""
    rank = max((len(s) for s in shapes), default=0)
    out = []
    for i in range(rank):
        size = 1
        for s in shapes:
            j = i - (rank - len(s))
            if j < 0:
                continue
            d = s[j]
            if d == 1:
                continue
            if size != 1 and d != size:
                raise ValueError(f"{where}: shapes {' and '.join(str(tuple(x)) for x in shapes)} "
                                 f"do not broadcast")
            size = d
        # a zero-size dimension broadcasts against 1 only
        if any((i - (rank - len(s))) >= 0 and s[i - (rank - len(s))] == 0 for s in shapes):
            size = 0
        out.append(size)
    return tuple(out)


def broadcast_map(out_shape: Sequence[int], in_shape: Sequence[int]) -> list[int]:
    """For each output element (C order), the flat index of the input element
    that broadcasting reads."""
    rank = len(out_shape)
    padded = [1] * (rank - len(in_shape)) + list(in_shape)
    strides = c_strides(padded)
    idx = [0]
    for d_out, d_in, st in zip(out_shape, padded, strides):
        step = st if d_in != 1 else 0
        idx = [i + k * step for i in idx for k in range(d_out)]
    return idx


def strided_map(out_shape: Sequence[int], offset: int, strides: Sequence[int]) -> list[int]:
    """Flat input indices for an output of out_shape read at offset + sum(i_d * strides_d)."""
    idx = [offset]
    for d, st in zip(out_shape, strides):
        idx = [i + k * st for i in idx for k in range(d)]
    return idx


def transpose_map(shape: Sequence[int], perm: Sequence[int]) -> tuple[tuple[int, ...], list[int]]:
    strides = c_strides(shape)
    out_shape = tuple(shape[p] for p in perm)
    return out_shape, strided_map(out_shape, 0, [strides[p] for p in perm])


def slice_bounds(size: int, start: int, end: int, step: int) -> tuple[int, int]:
    """ONNX Slice's clamping of (start, end) on a dimension of `size`:
    (first index, element count)."""
    if step == 0:
        raise ValueError("slice step 0")
    if start < 0:
        start += size
    if end < 0:
        end += size
    if step > 0:
        start = min(max(start, 0), size)
        end = min(max(end, 0), size)
        count = max(0, (end - start + step - 1) // step)
    else:
        start = min(max(start, -1), size - 1)
        end = min(max(end, -1), size - 1)
        count = max(0, (start - end + (-step) - 1) // (-step))
    return start, count


def take(values: Sequence[_T], map_: list[int]) -> list[_T]:
    return [values[i] for i in map_]
