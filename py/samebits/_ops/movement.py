"""Data movement a graph needs, in C so that Pyodide needs no numpy:
permute, transpose, concatenate, split, slice, pad (constant), take (gather
along an axis). Every one is strided copies through sb_copy (csrc/kernels/copy.c):
values move untouched, NaN payloads included, in both modes.
"""
from __future__ import annotations

import builtins
import ctypes
import numbers
from typing import Any, Optional, Sequence

from .._binding import abi as _abi, args as _args, lib as _lib, operands as _operands
from .._binding.operands import Operand, is_numpy

_DIMS = _abi.MAX_BATCH_DIMS


def copy_strided(shape: Sequence[int], x_ptr: int, x_strides: Sequence[int], y_ptr: int,
                 y_strides: Sequence[int], threads: int, what: str) -> None:
    """y[i] = x[i] over `shape`, both read/written at element strides."""
    if 0 in shape:
        return
    dims, xs, ys = _operands.merge_dims(shape, x_strides, y_strides)
    if len(dims) > _DIMS:
        raise ValueError(f"{what}: the layout needs {len(dims)} dimensions after merging; at "
                         f"most {_DIMS} are supported (pass contiguous arrays)")
    pad = [0] * (_DIMS - len(dims))
    args = _abi.CopyArgs(len(dims), (ctypes.c_int64 * _DIMS)(*dims, *pad), x_ptr,
                         (ctypes.c_int64 * _DIMS)(*xs, *pad), y_ptr,
                         (ctypes.c_int64 * _DIMS)(*ys, *pad), threads)
    _lib.check_status(_lib.lib.sb_copy(ctypes.addressof(args)), what)


def _c_strides(shape: Sequence[int]) -> list[int]:
    return list(_operands.c_strides(tuple(shape)))


def _new(x_obj: Any, shape: tuple[int, ...], out: Any, inputs: list[tuple[Any, Operand]],
         what: str) -> _operands.Output:
    _args.output_bytes(shape, what)
    return _operands.Output(out, shape, is_numpy(x_obj), inputs, what)


def permute(x: Any, dims: Sequence[int], *, out: Any = None, threads: int | None = None) -> Any:
    """x with its dimensions reordered (torch.permute, np.transpose(x, axes)):
    result dimension i is x's dimension dims[i]. A new C-ordered array (or
    out). Raises ValueError unless dims is a permutation of range(x.ndim)."""
    what = "permute"
    t = _operands.as_operand(x, "x")
    order = [_args.axis(d, t.ndim, what, "dims") for d in dims]
    if sorted(order) != list(range(t.ndim)):
        raise ValueError(f"{what}: dims {tuple(dims)} is not a permutation of the {t.ndim} "
                         f"dimensions of x {t.shape}")
    shape = tuple(t.shape[d] for d in order)
    nthreads = _args.threads(threads, what)
    output = _new(x, shape, out, [(x, t)], what)
    copy_strided(shape, t.ptr, [t.strides[d] for d in order], output.ptr,
                 list(output.operand.strides), nthreads, what)
    return output.finish()


def transpose(x: Any, dim0: int, dim1: int, *, out: Any = None,
              threads: int | None = None) -> Any:
    """x with dimensions dim0 and dim1 swapped (torch.transpose), as a new array."""
    t = _operands.as_operand(x, "x")
    a = _args.axis(dim0, t.ndim, "transpose", "dim0")
    b = _args.axis(dim1, t.ndim, "transpose", "dim1")
    order = list(range(t.ndim))
    order[a], order[b] = order[b], order[a]
    return permute(x, order, out=out, threads=threads)


def concatenate(arrays: Sequence[Any], axis: int = 0, *, out: Any = None,
                threads: int | None = None) -> Any:
    """The arrays joined along `axis` (np.concatenate, torch.cat): every other
    dimension must agree. A new array (or out)."""
    what = "concatenate"
    if not isinstance(arrays, (list, tuple)) or not arrays:
        raise ValueError(f"{what}: arrays must be a non-empty list or tuple of arrays")
    ops = [_operands.as_operand(a, f"arrays[{i}]") for i, a in enumerate(arrays)]
    ndim = ops[0].ndim
    if ndim == 0:
        raise ValueError(f"{what}: zero-dimensional arrays cannot be concatenated")
    ax = _args.axis(axis, ndim, what)
    for i, op in enumerate(ops):
        if op.ndim != ndim or any(s != r for d, (s, r) in enumerate(zip(op.shape, ops[0].shape))
                                  if d != ax):
            raise ValueError(f"{what}: arrays[{i}] has shape {op.shape}, which does not match "
                             f"arrays[0] {ops[0].shape} outside axis {ax}")
    total = sum(op.shape[ax] for op in ops)
    shape = ops[0].shape[:ax] + (total,) + ops[0].shape[ax + 1:]
    nthreads = _args.threads(threads, what)
    output = _new(arrays[0], shape, out, list(zip(arrays, ops)), what)
    ys = list(output.operand.strides)
    offset = 0
    for op in ops:
        copy_strided(op.shape, op.ptr, op.strides, output.ptr + offset * ys[ax] * 4, ys,
                     nthreads, what)
        offset += op.shape[ax]
    result = output.finish()
    return result


def _slice_view(t: Operand, ax: int, start: int, stop: int, step: int
                ) -> tuple[tuple[int, ...], list[int], int]:
    """(shape, strides, element offset) of t[..., start:stop:step, ...] on ax."""
    count = len(range(start, stop, step))
    shape = t.shape[:ax] + (count,) + t.shape[ax + 1:]
    strides = list(t.strides)
    strides[ax] = t.strides[ax] * step
    return shape, strides, (start * t.strides[ax] if count else 0)


def slice(x: Any, dim: int, start: Optional[int] = None,   # noqa: A001 (ONNX's name)
          stop: Optional[int] = None, step: int = 1, *, out: Any = None,
          threads: int | None = None) -> Any:
    """x[..., start:stop:step, ...] along dimension dim, Python's slice rules
    (negative and omitted bounds, negative steps), as a new array."""
    what = "slice"
    t = _operands.as_operand(x, "x")
    ax = _args.axis(dim, t.ndim, what, "dim")
    if t.ndim == 0:
        raise ValueError(f"{what}: x must have at least one dimension")
    st = _args.as_int(step, "step", what)
    if st == 0:
        raise ValueError(f"{what}: step must not be 0")
    bounds = [None if v is None else _args.as_int(v, name, what)
              for v, name in ((start, "start"), (stop, "stop"))]
    a, b, st = builtins.slice(bounds[0], bounds[1], st).indices(t.shape[ax])
    shape, strides, offset = _slice_view(t, ax, a, b, st)
    nthreads = _args.threads(threads, what)
    output = _new(x, shape, out, [(x, t)], what)
    copy_strided(shape, t.ptr + offset * 4, strides, output.ptr, list(output.operand.strides),
                 nthreads, what)
    return output.finish()


def split(x: Any, split_size_or_sections: Any, dim: int = 0, *,
          threads: int | None = None) -> list[Any]:
    """torch.split: pieces of x along dim, each split_size long (the last
    shorter) or of the given lengths (which must add up to the dimension).
    A list of new arrays."""
    what = "split"
    t = _operands.as_operand(x, "x")
    if t.ndim == 0:
        raise ValueError(f"{what}: x must have at least one dimension")
    ax = _args.axis(dim, t.ndim, what, "dim")
    size = t.shape[ax]
    if isinstance(split_size_or_sections, (list, tuple)):
        lengths = [_args.as_int(v, "split_size_or_sections", what, split_size_or_sections)
                   for v in split_size_or_sections]
        if any(v < 0 for v in lengths) or sum(lengths) != size:
            raise ValueError(f"{what}: sections {tuple(lengths)} must be non-negative and add "
                             f"up to {size}, the size of dimension {ax}")
    else:
        step = _args.as_int(split_size_or_sections, "split_size_or_sections", what)
        if step < 1:
            raise ValueError(f"{what}: split_size_or_sections must be at least 1, got {step}")
        lengths = [min(step, size - i) for i in range(0, size, step)] or [0]
    pieces, at = [], 0
    for length in lengths:
        pieces.append(slice(x, ax, at, at + length, threads=threads))
        at += length
    return pieces


def pad(x: Any, pad: Sequence[int], value: float = 0.0, *, out: Any = None,   # noqa: A002
        threads: int | None = None) -> Any:
    """torch.nn.functional.pad in constant mode: pad = (left, right) of the
    last dimension, then of the one before, and so on; negative amounts crop.
    New elements hold value (rounded to float32)."""
    what = "pad"
    t = _operands.as_operand(x, "x")
    amounts = [_args.as_int(v, "pad", what, pad) for v in pad]
    if len(amounts) % 2 or len(amounts) // 2 > t.ndim:
        raise ValueError(f"{what}: pad must hold pairs for at most {t.ndim} dimensions, got "
                         f"{tuple(amounts)}")
    before = [0] * t.ndim
    after = [0] * t.ndim
    for i in range(len(amounts) // 2):
        before[t.ndim - 1 - i], after[t.ndim - 1 - i] = amounts[2 * i], amounts[2 * i + 1]
    shape = tuple(s + b + a for s, b, a in zip(t.shape, before, after))
    if any(s < 0 for s in shape):
        raise ValueError(f"{what}: padding {tuple(amounts)} crops x {t.shape} below zero")
    _args.shape(shape, "the result", what)
    nthreads = _args.threads(threads, what)
    output = _new(x, shape, out, [(x, t)], what)
    ys = list(output.operand.strides)
    fill = ctypes.c_uint32(_args.float32_bits(value, "value", what))
    copy_strided(shape, ctypes.addressof(fill), [0] * len(shape), output.ptr, ys, nthreads, what)
    # the kept part of x: where it lands, and which of x's elements
    src_off, dst_off, inner = 0, 0, []
    for d in range(t.ndim):
        lo = max(0, -before[d])                   # cropped at the start
        hi = t.shape[d] - max(0, -after[d])       # cropped at the end
        inner.append(max(0, hi - lo))
        src_off += lo * t.strides[d]
        dst_off += max(0, before[d]) * ys[d]
    copy_strided(inner, t.ptr + src_off * 4, t.strides, output.ptr + dst_off * 4, ys, nthreads,
                 what)
    return output.finish()


def _indices(indices: Any, what: str) -> tuple[list[int], tuple[int, ...]]:
    """Python ints, sequences of them, or integer arrays/buffers: (flat list, shape)."""
    if isinstance(indices, numbers.Integral) and not isinstance(indices, bool):
        return [int(indices)], ()
    if is_numpy(indices):
        if indices.dtype.kind not in "iu":
            raise TypeError(f"{what}: indices must be integers, got dtype {indices.dtype}")
        return [int(v) for v in indices.reshape(-1).tolist()], tuple(indices.shape)
    if isinstance(indices, (list, tuple)):
        flat = [_args.as_int(v, "indices", what) for v in indices]
        return flat, (len(flat),)
    try:
        view = memoryview(indices)
    except TypeError:
        raise TypeError(f"{what}: indices must be an int, a sequence of ints or an integer "
                        f"array, got {type(indices).__name__}") from None
    if view.format.lstrip("<=@") not in ("b", "B", "h", "H", "i", "I", "l", "L", "q", "Q"):
        raise TypeError(f"{what}: indices must hold integers, got buffer format {view.format!r}")
    flat = []

    def walk(v: Any) -> None:
        if isinstance(v, list):
            for item in v:
                walk(item)
        else:
            flat.append(int(v))
    walk(view.tolist())
    return flat, _operands.view_shape(view)


def take(x: Any, indices: Any, axis: int = 0, *, out: Any = None,
         threads: int | None = None) -> Any:
    """np.take / ONNX Gather: the slices of x at `indices` along `axis`; the
    result's shape is x.shape[:axis] + indices' shape + x.shape[axis+1:].
    Negative indices count from the end; others out of range raise IndexError."""
    what = "take"
    t = _operands.as_operand(x, "x")
    if t.ndim == 0:
        raise ValueError(f"{what}: x must have at least one dimension")
    ax = _args.axis(axis, t.ndim, what)
    flat, ishape = _indices(indices, what)
    size = t.shape[ax]
    for i in flat:
        if not -size <= i < size:
            raise IndexError(f"{what}: index {i} is out of bounds for axis {ax} with size {size}")
    shape = t.shape[:ax] + ishape + t.shape[ax + 1:]
    nthreads = _args.threads(threads, what)
    output = _new(x, shape, out, [(x, t)], what)
    ys = list(output.operand.strides)
    # one slice per index: x's axis dropped, the output's index dimensions fixed
    piece = t.shape[:ax] + t.shape[ax + 1:]
    xs = list(t.strides[:ax]) + list(t.strides[ax + 1:])
    outer_y = ys[:ax] + ys[ax + len(ishape):]
    index_strides = ys[ax:ax + len(ishape)]
    for n, i in enumerate(flat):
        position, rest = 0, n
        for extent, stride in zip(reversed(ishape), reversed(index_strides)):
            position += (rest % extent) * stride
            rest //= extent
        copy_strided(piece, t.ptr + (i % size) * t.strides[ax] * 4, xs,
                     output.ptr + position * 4, outer_y, nthreads, what)
    return output.finish()
