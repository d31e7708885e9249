"""Index-driven data movement: GatherElements, GatherND, ScatterElements
(and opset 9's Scatter), ScatterND, TopK, and the index maps of Pad's
reflect, edge and wrap modes.

Every output element is a copy of one input element: an index map (flat,
C order, Python ints, so the same in every runtime) says which. Float32
tensors move as numpy fancy indexing when numpy is there, else as their
binary32 bit patterns in Python; either way the bits are the input's bits,
NaN payloads and signed zeros included. TopK compares values (and orders
equal ones by index) but computes nothing.
"""
from __future__ import annotations

import math
import struct
from typing import TYPE_CHECKING, Any, TypeVar, Union

from . import _flat
from . import _model as M
from . import _values as V
from ._registry import (Inputs, Kernel, NodeContext, axis_index, need_floats, need_ints, op,
                        required)
from ._values import Floats, Ints, Value

_D = TypeVar("_D")

if TYPE_CHECKING:
    import numpy as np
else:
    from ._values import np   # None without numpy


# ---- the two moves every operator here is made of -----------------------------

def take_flat(x: Any, index_map: list[int], shape: tuple[int, ...]) -> Any:
    """A new tensor of `shape` whose element i is x's flat (C order) element index_map[i]."""
    if isinstance(x, Ints):
        return Ints(shape, _flat.take(x.values, index_map), x.dtype)
    if V.size_of(shape) == 0:
        return Floats(shape, None)
    if np is not None:
        flat = V.c_order(x.data).reshape(-1)
        return Floats(shape, flat[np.asarray(index_map, dtype=np.int64)].reshape(shape))
    return V.floats_from_bits(_flat.take(V.float_bits(x), index_map), shape)


def put_flat(data: Any, positions: list[int], updates: Any) -> Any:
    """A copy of data whose flat element positions[i] is updates' flat element i,
    taken in order: where a position repeats, the last update wins."""
    if isinstance(data, Ints) != isinstance(updates, Ints):
        raise TypeError("data and updates must both be float32 or both integers")
    if isinstance(data, Ints):
        values = list(data.values)
        for p, v in zip(positions, updates.values):
            values[p] = v
        return Ints(data.shape, values, data.dtype)
    if data.size == 0:
        return Floats(data.shape, None)
    if not positions:
        return take_flat(data, list(range(data.size)), data.shape)
    if np is not None and len(set(positions)) == len(positions):
        out = V.c_order(data.data).copy().reshape(-1)
        out[np.asarray(positions, dtype=np.int64)] = V.c_order(updates.data).reshape(-1)
        return Floats(data.shape, out.reshape(data.shape))
    bits = V.float_bits(data)
    for p, v in zip(positions, V.float_bits(updates)):
        bits[p] = v
    return V.floats_from_bits(bits, data.shape)


def _index(i: int, size: int, ctx: NodeContext, what: str) -> int:
    """An index checked against its dimension, negative ones counted from the end."""
    if not -size <= i < size:
        raise IndexError(f"{ctx.where}: {what} {i} is out of range for a dimension of "
                         f"size {size}")
    return i + size if i < 0 else i


# ---- GatherElements, ScatterElements ----------------------------------------------

def _element_positions(data_shape: tuple[int, ...], idx: Ints, axis: int, ctx: NodeContext) -> list[int]:
    """For each element of idx (C order): the flat position in data that it names
    (idx's own coordinates, with the coordinate on `axis` replaced by its value)."""
    r = len(data_shape)
    if len(idx.shape) != r:
        raise ValueError(f"{ctx.where}: indices {idx.shape} must have the rank of the data "
                         f"{data_shape}")
    for k in range(r):
        if k != axis and idx.shape[k] > data_shape[k]:
            raise ValueError(f"{ctx.where}: indices {idx.shape} do not fit the data "
                             f"{data_shape} outside axis {axis}")
    strides = _flat.c_strides(data_shape)
    base = _flat.strided_map(idx.shape, 0, [0 if k == axis else strides[k] for k in range(r)])
    size, step = data_shape[axis], strides[axis]
    return [b + _index(i, size, ctx, "index") * step for b, i in zip(base, idx.values)]


@op("GatherElements")
def _gather_elements(ctx: NodeContext) -> Kernel:
    axis = ctx.int("axis", 0)

    def run(inputs: Inputs) -> list[Value]:
        x, idx = required(inputs[0]), need_ints(inputs[1], ctx, "indices")
        a = axis_index(axis, len(x.shape), ctx)
        return [take_flat(x, _element_positions(x.shape, idx, a, ctx), idx.shape)]
    return run


def _no_reduction(ctx: NodeContext) -> None:
    reduction = ctx.str("reduction", "none")
    if reduction != "none":
        raise ctx.error(f"reduction {reduction!r} is not supported ('none' is)")


@op("ScatterElements", "Scatter")
def _scatter_elements(ctx: NodeContext) -> Kernel:
    axis = ctx.int("axis", 0)
    _no_reduction(ctx)

    def run(inputs: Inputs) -> list[Value]:
        data, idx, updates = (required(inputs[0]), need_ints(inputs[1], ctx, "indices"),
                              required(inputs[2]))
        if updates.shape != idx.shape:
            raise ValueError(f"{ctx.where}: updates {updates.shape} must have the shape of "
                             f"indices {idx.shape}")
        a = axis_index(axis, len(data.shape), ctx)
        return [put_flat(data, _element_positions(data.shape, idx, a, ctx), updates)]
    return run


# ---- GatherND, ScatterND -------------------------------------------------------

def _nd_offsets(data_shape: tuple[int, ...], idx: Ints, batch_dims: int, ctx: NodeContext) -> list[int]:
    """For each index tuple of idx (its last dimension): the flat offset in data of
    the block it names, batch coordinates included."""
    if not idx.shape:
        raise ValueError(f"{ctx.where}: indices must have at least one dimension")
    m = idx.shape[-1]
    if batch_dims + m > len(data_shape):
        raise ValueError(f"{ctx.where}: index tuples of length {m} (after {batch_dims} "
                         f"batch dimensions) exceed the data's rank {len(data_shape)}")
    if tuple(idx.shape[:batch_dims]) != tuple(data_shape[:batch_dims]):
        raise ValueError(f"{ctx.where}: the batch dimensions of indices {idx.shape} and "
                         f"data {data_shape} differ")
    strides = _flat.c_strides(data_shape)
    tuples = V.size_of(idx.shape[:-1])
    batch_base = _flat.strided_map(idx.shape[:-1], 0,
                                   [strides[k] if k < batch_dims else 0
                                    for k in range(len(idx.shape) - 1)])
    offsets = []
    for t in range(tuples):
        offset = batch_base[t]
        for j in range(m):
            d = batch_dims + j
            offset += _index(idx.values[t * m + j], data_shape[d], ctx, "index") * strides[d]
        offsets.append(offset)
    return offsets


@op("GatherND")
def _gather_nd(ctx: NodeContext) -> Kernel:
    batch_dims = ctx.int("batch_dims", 0)
    if batch_dims < 0:
        raise ctx.error(f"batch_dims={batch_dims} must be >= 0")

    def run(inputs: Inputs) -> list[Value]:
        x, idx = required(inputs[0]), need_ints(inputs[1], ctx, "indices")
        if batch_dims >= min(len(x.shape), len(idx.shape)):
            raise ValueError(f"{ctx.where}: batch_dims={batch_dims} needs data {x.shape} "
                             f"and indices {idx.shape} of higher rank")
        offsets = _nd_offsets(x.shape, idx, batch_dims, ctx)
        tail = x.shape[batch_dims + idx.shape[-1]:]
        inner = V.size_of(tail)
        index_map = [o + e for o in offsets for e in range(inner)]
        return [take_flat(x, index_map, tuple(idx.shape[:-1]) + tuple(tail))]
    return run


@op("ScatterND")
def _scatter_nd(ctx: NodeContext) -> Kernel:
    _no_reduction(ctx)

    def run(inputs: Inputs) -> list[Value]:
        data, idx, updates = (required(inputs[0]), need_ints(inputs[1], ctx, "indices"),
                              required(inputs[2]))
        offsets = _nd_offsets(data.shape, idx, 0, ctx)
        tail = data.shape[idx.shape[-1]:]
        expected = tuple(idx.shape[:-1]) + tuple(tail)
        if tuple(updates.shape) != expected:
            raise ValueError(f"{ctx.where}: updates {updates.shape} must have shape "
                             f"{expected} (indices {idx.shape}, data {data.shape})")
        inner = V.size_of(tail)
        positions = [o + e for o in offsets for e in range(inner)]
        return [put_flat(data, positions, updates)]
    return run


# ---- TopK ---------------------------------------------------------------------

def _float_keys(x: Floats) -> list[tuple[int, float]]:
    """(is NaN, value) per element: NaN is above every number, -0 equals +0."""
    keys = []
    for v in struct.unpack(f"<{x.size}f", V.float_bytes(x)):
        keys.append((1, 0.0) if math.isnan(v) else (0, v + 0.0))
    return keys


def _topk_rows(x: Any, axis: int, k: int, largest: bool) -> tuple[list[int], list[int]]:
    """TopK's order: for each row along axis (rows in C order of the other axes),
    the positions along the axis of its k selected elements, best first, equal
    values by increasing index. Returns (flat source positions, axis indices),
    both in the C order of the output."""
    shape = x.shape
    size = shape[axis]
    outer, inner = V.size_of(shape[:axis]), V.size_of(shape[axis + 1:])
    if isinstance(x, Floats) and np is not None and x.size:
        v = V.c_order(x.data).reshape(outer, size, inner).transpose(0, 2, 1)
        v = v.astype(np.float64) + 0.0          # -0 becomes +0: they compare equal
        nan = np.isnan(v)
        v[nan] = 0.0
        # np.lexsort sorts by its last key first: NaN-ness, then value, then index
        pos = np.broadcast_to(np.arange(size), v.shape)
        primary = ~nan if largest else nan
        order = np.lexsort((pos, -v if largest else v, primary), axis=-1)[..., :k]
        chosen = order.transpose(0, 2, 1).reshape(-1).tolist()
    else:
        keys = _float_keys(x) if isinstance(x, Floats) else [(0, v) for v in x.values]
        chosen = [0] * (outer * k * inner)
        for o in range(outer):
            for i in range(inner):
                base = o * size * inner + i
                column = [keys[base + j * inner] for j in range(size)]
                if largest:
                    ranked = sorted(range(size), key=lambda j: (-column[j][0], -column[j][1], j))
                else:
                    ranked = sorted(range(size), key=lambda j: (column[j][0], column[j][1], j))
                for slot, j in enumerate(ranked[:k]):
                    chosen[(o * k + slot) * inner + i] = j
    positions = []
    for o in range(outer):
        for slot in range(k):
            for i in range(inner):
                j = chosen[(o * k + slot) * inner + i]
                positions.append((o * size + j) * inner + i)
    return positions, chosen


@op("TopK")
def _topk(ctx: NodeContext) -> Kernel:
    axis = ctx.int("axis", -1)
    largest = ctx.int("largest", 1)
    ctx.int("sorted", 1)   # the outputs are always sorted, which sorted=0 permits
    k_attr = ctx.int("k") if ctx.opset < 10 else None

    def run(inputs: Inputs) -> list[Value]:
        x = required(inputs[0])
        if k_attr is not None:
            k = k_attr
        else:
            ks = need_ints(inputs[1], ctx, "K")
            if ks.size != 1:
                raise ValueError(f"{ctx.where}: K must hold one value, got shape {ks.shape}")
            k = ks.values[0]
        if not x.shape:
            raise ValueError(f"{ctx.where}: X must have at least one dimension")
        a = axis_index(axis, len(x.shape), ctx)
        if not 0 <= k <= x.shape[a]:
            raise ValueError(f"{ctx.where}: K={k} is outside 0..{x.shape[a]} (axis {a} of "
                             f"{x.shape})")
        out_shape = x.shape[:a] + (k,) + x.shape[a + 1:]
        positions, chosen = _topk_rows(x, a, k, bool(largest))
        return [take_flat(x, positions, out_shape), Ints(out_shape, chosen, M.INT64)]
    return run


# ---- Pad's index modes ------------------------------------------------------------

def _source_index(o: int, before: int, size: int, mode: str) -> int:
    """The input index that output index o copies along one axis."""
    s = o - before
    if 0 <= s < size:
        return s
    if mode == "edge":
        return 0 if s < 0 else size - 1
    if mode == "wrap":
        return s % size
    if size == 1:               # reflect: a single element mirrors onto itself
        return 0
    period = 2 * (size - 1)
    s %= period
    return s if s < size else period - s


def pad_by_index(x: Any, before: list[int], after: list[int], mode: str,
                 ctx: NodeContext) -> Any:
    """Pad in mode reflect, edge or wrap: every output element copies an input one."""
    shape = tuple(d + b + e for d, b, e in zip(x.shape, before, after))
    if any(d < 0 for d in shape):
        raise ValueError(f"{ctx.where}: pads crop {x.shape} below zero")
    for d, b, e in zip(x.shape, before, after):
        if d == 0 and (b > 0 or e > 0):
            raise ValueError(f"{ctx.where}: mode {mode!r} cannot pad an empty axis of {x.shape}")
    strides = _flat.c_strides(x.shape)
    index_map = [0]
    for d, b, n, st in zip(x.shape, before, shape, strides):
        column = [_source_index(o, b, d, mode) * st for o in range(n)]
        index_map = [i + c for i in index_map for c in column]
    return take_flat(x, index_map if V.size_of(shape) else [], shape)


# ---- Trilu, NonZero ---------------------------------------------------------------

@op("Trilu")
def _trilu(ctx: NodeContext) -> Kernel:
    upper = ctx.int("upper", 1)

    def run(inputs: Inputs) -> list[Value]:
        x = required(inputs[0])
        if len(x.shape) < 2:
            raise ValueError(f"{ctx.where}: input must have at least 2 dimensions, got {x.shape}")
        k = 0
        if len(inputs) > 1 and inputs[1] is not None:
            ks = need_ints(inputs[1], ctx, "k")
            if ks.size != 1:
                raise ValueError(f"{ctx.where}: k must hold one value, got shape {ks.shape}")
            k = ks.values[0]
        rows, cols = x.shape[-2], x.shape[-1]
        keep = [(j - i >= k) if upper else (j - i <= k) for i in range(rows) for j in range(cols)]
        if isinstance(x, Ints):
            values = [v if keep[p % (rows * cols)] else 0 for p, v in enumerate(x.values)]
            return [Ints(x.shape, values, x.dtype)]
        if x.size == 0:
            return [x]
        if np is not None:
            mask = np.array(keep, dtype=bool).reshape(rows, cols)
            # +0 where cleared; kept elements are copied bit for bit
            return [Floats(x.shape, np.where(mask, V.c_order(x.data), np.float32(0.0)))]
        bits = V.float_bits(x)
        return [V.floats_from_bits([b if keep[p % (rows * cols)] else 0
                                    for p, b in enumerate(bits)], x.shape)]
    return run


@op("NonZero")
def _nonzero(ctx: NodeContext) -> Kernel:
    def run(inputs: Inputs) -> list[Value]:
        x = required(inputs[0])
        if isinstance(x, Floats):
            # a value is zero when its bits, sign cleared, are 0 (NaN counts as nonzero)
            flags = [b & 0x7FFFFFFF != 0 for b in V.float_bits(x)] if x.size else []
        else:
            flags = [v != 0 for v in x.values]
        hits = [p for p, f in enumerate(flags) if f]
        shape = x.shape if x.shape else (1,)
        strides = _flat.c_strides(shape)
        coords = [[(p // st) % d for p in hits] for d, st in zip(shape, strides)]
        return [Ints((len(shape), len(hits)), [c for row in coords for c in row], M.INT64)]
    return run


# ---- NonMaxSuppression ------------------------------------------------------------

def _f32(v: float) -> float:
    """v rounded to binary32. Applied after each +, -, * or / of two float32
    values computed in binary64, it gives the float32 operation's result
    exactly (binary64 has more than twice float32's precision plus two bits,
    so rounding twice cannot differ from rounding once)."""
    rounded: float = struct.unpack("<f", struct.pack("<f", v))[0]
    return rounded


def _box_extent(box: list[float], center: bool) -> tuple[float, float, float, float]:
    """(x_min, x_max, y_min, y_max) of one box, in float32 operations."""
    if center:
        half_w, half_h = _f32(box[2] / 2), _f32(box[3] / 2)
        return (_f32(box[0] - half_w), _f32(box[0] + half_w),
                _f32(box[1] - half_h), _f32(box[1] + half_h))
    return (min(box[1], box[3]), max(box[1], box[3]), min(box[0], box[2]), max(box[0], box[2]))


def _suppresses(a: tuple[float, ...], b: tuple[float, ...], iou_threshold: float) -> bool:
    """Whether box b's overlap with box a exceeds the threshold: intersection
    over union in float32 operations, in ONNX Runtime's order."""
    ix_min, ix_max = max(a[0], b[0]), min(a[1], b[1])
    if ix_max <= ix_min:
        return False
    iy_min, iy_max = max(a[2], b[2]), min(a[3], b[3])
    if iy_max <= iy_min:
        return False
    inter = _f32(_f32(ix_max - ix_min) * _f32(iy_max - iy_min))
    if inter <= 0.0:
        return False
    area_a = _f32(_f32(a[1] - a[0]) * _f32(a[3] - a[2]))
    area_b = _f32(_f32(b[1] - b[0]) * _f32(b[3] - b[2]))
    union = _f32(_f32(area_a + area_b) - inter)
    if area_a <= 0.0 or area_b <= 0.0 or union <= 0.0:
        return False
    return _f32(inter / union) > iou_threshold


@op("NonMaxSuppression")
def _non_max_suppression(ctx: NodeContext) -> Kernel:
    center = ctx.int("center_point_box", 0)
    if center not in (0, 1):
        raise ctx.error(f"center_point_box={center} must be 0 or 1")

    def scalar(inputs: Inputs, i: int, what: str, default: _D) -> Union[float, _D]:
        if len(inputs) <= i or inputs[i] is None:
            return default
        v = required(inputs[i])   # not None: checked above
        if v.size != 1:
            raise ValueError(f"{ctx.where}: {what} must hold one value, got shape {v.shape}")
        return v.values[0] if isinstance(v, Ints) else V.float_list(v)[0]

    def run(inputs: Inputs) -> list[Value]:
        boxes = need_floats(inputs[0], ctx, "boxes")
        scores = need_floats(inputs[1], ctx, "scores")
        if len(boxes.shape) != 3 or boxes.shape[2] != 4 or len(scores.shape) != 3 or \
                scores.shape[0] != boxes.shape[0] or scores.shape[2] != boxes.shape[1]:
            raise ValueError(f"{ctx.where}: boxes {boxes.shape} and scores {scores.shape} must "
                             f"be (batches, boxes, 4) and (batches, classes, boxes)")
        limit = scalar(inputs, 2, "max_output_boxes_per_class", 0)
        iou_threshold = _f32(scalar(inputs, 3, "iou_threshold", 0.0))
        score_threshold = scalar(inputs, 4, "score_threshold", None)
        if not 0.0 <= iou_threshold <= 1.0:
            raise ValueError(f"{ctx.where}: iou_threshold {iou_threshold} is outside [0, 1]")
        batches, n = boxes.shape[0], boxes.shape[1]
        classes = scores.shape[1]
        limit = min(max(limit, 0), n)
        box_values = V.float_list(boxes) if boxes.size else []
        score_values = V.float_list(scores) if scores.size else []
        selected: list[int] = []
        for b in range(batches):
            extents = [_box_extent(box_values[(b * n + i) * 4:(b * n + i) * 4 + 4], bool(center))
                       for i in range(n)] if limit else []
            for c in range(classes):
                if not limit:
                    break
                row = score_values[(b * classes + c) * n:(b * classes + c + 1) * n]
                # NaN scores are never candidates; best score first, then lower index
                candidates = [i for i, s in enumerate(row) if s == s and
                              (score_threshold is None or s > score_threshold)]
                candidates.sort(key=lambda i: (-row[i], i))
                kept: list[int] = []
                for i in candidates:
                    if len(kept) == limit:
                        break
                    if not any(_suppresses(extents[j], extents[i], iou_threshold) for j in kept):
                        kept.append(i)
                for i in kept:
                    selected += [b, c, i]
        return [Ints((len(selected) // 3, 3), selected, M.INT64)]
    return run


# ---- OneHot -------------------------------------------------------------------------

@op("OneHot")
def _one_hot(ctx: NodeContext) -> Kernel:
    axis = ctx.int("axis", -1)

    def run(inputs: Inputs) -> list[Value]:
        idx = need_ints(inputs[0], ctx, "indices") if isinstance(inputs[0], Ints) else None
        if idx is None:   # float indices: ONNX casts them to integers (toward zero)
            values = V.float_list(need_floats(inputs[0], ctx, "indices")) if required(inputs[0]).size \
                else []
            if any(v != v or abs(v) == float("inf") for v in values):
                raise ValueError(f"{ctx.where}: indices must be finite")
            idx = Ints(required(inputs[0]).shape, [int(v) for v in values], M.INT64)
        depth_t = required(inputs[1])
        if depth_t.size != 1:
            raise ValueError(f"{ctx.where}: depth must hold one value, got shape {depth_t.shape}")
        depth = depth_t.values[0] if isinstance(depth_t, Ints) else int(V.float_list(depth_t)[0])
        if depth < 1:
            raise ValueError(f"{ctx.where}: depth={depth} must be positive")
        pair = required(inputs[2])
        if pair.size != 2:
            raise ValueError(f"{ctx.where}: values must hold [off, on], got shape {pair.shape}")
        r = len(idx.shape) + 1
        a = axis_index(axis, r, ctx)
        shape = idx.shape[:a] + (depth,) + idx.shape[a:]
        inner = V.size_of(idx.shape[a:])
        outer = V.size_of(idx.shape[:a])
        # element (o, d, i) is "on" when index (o, i), wrapped if negative, equals d
        hot = [0] * V.size_of(shape)
        for o in range(outer):
            for i in range(inner):
                v = idx.values[o * inner + i]
                v = v + depth if v < 0 else v
                if 0 <= v < depth:
                    hot[(o * depth + v) * inner + i] = 1
        if isinstance(pair, Ints):
            off, on = pair.values
            return [Ints(shape, [on if h else off for h in hot], pair.dtype)]
        off_bits, on_bits = V.float_bits(pair)
        return [V.floats_from_bits([on_bits if h else off_bits for h in hot], shape)]
    return run
