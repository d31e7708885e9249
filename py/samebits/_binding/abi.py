"""The argument structures of samebits.h, field for field, as ctypes Structures.

Every field is an int64_t (pointers stored as integers), so the layout is the
same on every target, wasm32 included. The numpy fast paths pack the same
layout with `struct` (see `packer`), which costs less per call than filling a
Structure; `tests/builds/test_abi.py` checks that the two agree with the C header.
"""
from __future__ import annotations

import ctypes
import struct
from typing import Callable

_I64 = ctypes.c_int64
MAX_BATCH_DIMS = 16          # SB_MAX_BATCH_DIMS
MAX_SIZE = 1 << 40           # SB_MAX_SIZE: the bound on every size argument


def _fields(*names: str) -> list[tuple[str, type]]:
    return [(name, _I64) for name in names]


class MatmulArgs(ctypes.Structure):
    """struct sb_matmul_args: one product or a batch (batch = address of a Batch)."""
    _fields_ = _fields("path", "mode", "max_threads", "m", "n", "k",
                       "a", "a_row", "a_col", "b", "b_row", "b_col", "b_packed",
                       "c", "c_row", "bias", "activation", "batch")


class Batch(ctypes.Structure):
    """struct sb_batch: batch dimensions in C order, element strides (0 broadcasts)."""
    _fields_ = [("ndim", _I64), ("shape", _I64 * MAX_BATCH_DIMS),
                ("a_stride", _I64 * MAX_BATCH_DIMS), ("b_stride", _I64 * MAX_BATCH_DIMS),
                ("c_stride", _I64 * MAX_BATCH_DIMS)]


class Conv2dArgs(ctypes.Structure):
    """struct sb_conv2d_args."""
    _fields_ = _fields("path", "mode", "max_threads", "n", "c", "h", "w",
                       "cout", "kh", "kw", "groups", "stride_h", "stride_w", "dil_h", "dil_w",
                       "pad_top", "pad_bottom", "pad_left", "pad_right",
                       "x", "weights", "packed", "bias", "activation", "y")


class MaxPool2dArgs(ctypes.Structure):
    """struct sb_max_pool2d_args."""
    _fields_ = _fields("n", "c", "h", "w", "kh", "kw", "stride_h", "stride_w", "dil_h",
                       "dil_w", "pad_top", "pad_bottom", "pad_left", "pad_right",
                       "x", "y", "max_threads")


class UnaryArgs(ctypes.Structure):
    """struct sb_unary_args: an elementwise function (op: enum sb_unary_op)."""
    _fields_ = _fields("path", "mode", "op", "max_threads", "count", "x", "y", "param")


_DIMS = _I64 * MAX_BATCH_DIMS


class BinaryArgs(ctypes.Structure):
    """struct sb_binary_args: elementwise arithmetic with broadcasting."""
    _fields_ = [*_fields("path", "mode", "op", "max_threads", "ndim"), ("shape", _DIMS),
                ("a", _I64), ("a_stride", _DIMS), ("b", _I64), ("b_stride", _DIMS),
                ("y", _I64)]


class ReduceArgs(ctypes.Structure):
    """struct sb_reduce_args: a reduction or normalization over one axis."""
    _fields_ = _fields("path", "mode", "op", "max_threads", "outer", "n", "inner",
                       "x", "y", "weight", "bias", "eps")


class NormArgs(ctypes.Structure):
    """struct sb_norm_args: batch_norm (op 0) or group_norm (op 1)."""
    _fields_ = _fields("path", "mode", "op", "max_threads", "n", "c", "spatial", "groups",
                       "x", "y", "mean", "var", "weight", "bias", "eps")


class AvgPool2dArgs(ctypes.Structure):
    """struct sb_avg_pool2d_args."""
    _fields_ = _fields("n", "c", "h", "w", "oh", "ow", "kh", "kw", "stride_h", "stride_w",
                       "pad_top", "pad_bottom", "pad_left", "pad_right", "count_include_pad",
                       "divisor_override", "adaptive", "x", "y", "max_threads")


class CopyArgs(ctypes.Structure):
    """struct sb_copy_args: one strided copy (data movement)."""
    _fields_ = [("ndim", _I64), ("shape", _DIMS), ("x", _I64), ("x_stride", _DIMS),
                ("y", _I64), ("y_stride", _DIMS), ("max_threads", _I64)]


class Resize2dArgs(ctypes.Structure):
    """struct sb_resize2d_args."""
    _fields_ = _fields("n", "c", "h", "w", "oh", "ow", "mode", "align_corners", "scale_h",
                       "scale_w", "x", "y", "max_threads")


class PlanInfo(ctypes.Structure):
    """struct sb_plan_info: what a call would run (samebits.explain)."""
    _fields_ = _fields("route", "b_source", "isa_path", "mr", "nr", "mc", "nc", "products",
                       "m", "n", "k", "prepare_chunks", "compute_chunks", "threads", "waves",
                       "workspace_bytes", "estimated_ns", "pack_a", "a_in_place")


class ExternalData(ctypes.Structure):
    """struct sb_external_data: an external data file the host supplies."""
    _fields_ = _fields("location", "data", "size")


class LoadArgs(ctypes.Structure):
    """struct sb_load_args: sb_session_load's arguments (session: sb_session **)."""
    _fields_ = _fields("data", "size", "mode", "path", "max_threads", "base_dir",
                       "external_count", "external", "session", "file")


class IoInfo(ctypes.Structure):
    """struct sb_io_info: a graph input or output as the model declares it."""
    _fields_ = [("name", _I64), ("dtype", _I64), ("rank", _I64), ("dims", _DIMS),
                ("dim_names", _DIMS)]


class TensorArg(ctypes.Structure):
    """struct sb_tensor_arg: element type, shape and elements of a tensor."""
    _fields_ = [("dtype", _I64), ("rank", _I64), ("dims", _DIMS), ("data", _I64)]


class RunArgs(ctypes.Structure):
    """struct sb_run_args: sb_session_run's arguments."""
    _fields_ = _fields("inputs", "output_count", "output_indices", "outputs", "profile_ns",
                       "profile_calls", "max_threads")


def packer(structure: type[ctypes.Structure]) -> Callable[..., bytes]:
    """struct.pack for a Structure of int64 fields, in field order: the bytes
    can be passed where C expects a pointer to the structure."""
    return struct.Struct("=" + "q" * len(structure._fields_)).pack


def field_index(structure: type[ctypes.Structure], name: str) -> int:
    """Position of a field: for the packers' argument order."""
    return [f[0] for f in structure._fields_].index(name)


# enum sb_route and enum sb_b_source, for explain().
ROUTES = {0: "empty", 1: "zero-k", 2: "tiles", 3: "panels", 4: "row", 5: "column",
          6: "depthwise"}
B_SOURCES = {0: "none", 1: "prepacked", 2: "packed whole", 3: "in place", 4: "per panel",
             5: "per strip"}
