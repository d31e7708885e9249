"""The argument structures of samebits.h, field for field, as ctypes Structures.

Every field is an int64_t (pointers stored as integers), so the layout is the
same on every target, wasm32 included. The fields come from abi_layouts.py,
which tools/make_tables.py reads from the header (as it writes the npm
package's js/src/abi.mjs). The numpy fast paths pack the same
layout with `struct` (see `packer`), which costs less per call than filling a
Structure; `tests/builds/test_abi.py` checks that the two agree with the C header.
"""
from __future__ import annotations

import ctypes
import struct
from typing import Any, Callable

from .abi_layouts import LAYOUTS

_I64 = ctypes.c_int64
MAX_BATCH_DIMS = 16          # SB_MAX_BATCH_DIMS
MAX_SIZE = 1 << 40           # SB_MAX_SIZE: the bound on every size argument


def _fields(c_name: str) -> list[tuple[str, Any]]:
    """The ctypes fields of samebits.h's struct c_name: int64, or an array of
    SB_MAX_BATCH_DIMS of them."""
    return [(name, _I64 if count == 1 else _I64 * count) for name, count in LAYOUTS[c_name]]


class MatmulArgs(ctypes.Structure):
    """struct sb_matmul_args: one product or a batch (batch = address of a Batch)."""
    _fields_ = _fields("sb_matmul_args")


class Batch(ctypes.Structure):
    """struct sb_batch: batch dimensions in C order, element strides (0 broadcasts)."""
    _fields_ = _fields("sb_batch")


class Conv2dArgs(ctypes.Structure):
    """struct sb_conv2d_args."""
    _fields_ = _fields("sb_conv2d_args")


class MaxPool2dArgs(ctypes.Structure):
    """struct sb_max_pool2d_args."""
    _fields_ = _fields("sb_max_pool2d_args")


class UnaryArgs(ctypes.Structure):
    """struct sb_unary_args: an elementwise function (op: enum sb_unary_op)."""
    _fields_ = _fields("sb_unary_args")



class BinaryArgs(ctypes.Structure):
    """struct sb_binary_args: elementwise arithmetic with broadcasting."""
    _fields_ = _fields("sb_binary_args")


class ReduceArgs(ctypes.Structure):
    """struct sb_reduce_args: a reduction or normalization over one axis."""
    _fields_ = _fields("sb_reduce_args")


class NormArgs(ctypes.Structure):
    """struct sb_norm_args: batch_norm (op 0) or group_norm (op 1)."""
    _fields_ = _fields("sb_norm_args")


class AvgPool2dArgs(ctypes.Structure):
    """struct sb_avg_pool2d_args."""
    _fields_ = _fields("sb_avg_pool2d_args")


class CopyArgs(ctypes.Structure):
    """struct sb_copy_args: one strided copy (data movement)."""
    _fields_ = _fields("sb_copy_args")


class Resize2dArgs(ctypes.Structure):
    """struct sb_resize2d_args."""
    _fields_ = _fields("sb_resize2d_args")


class PlanInfo(ctypes.Structure):
    """struct sb_plan_info: what a call would run (samebits.explain)."""
    _fields_ = _fields("sb_plan_info")


class ExternalData(ctypes.Structure):
    """struct sb_external_data: an external data file the host supplies."""
    _fields_ = _fields("sb_external_data")


class LoadArgs(ctypes.Structure):
    """struct sb_load_args: sb_session_load's arguments (session: sb_session **)."""
    _fields_ = _fields("sb_load_args")


class IoInfo(ctypes.Structure):
    """struct sb_io_info: a graph input or output as the model declares it."""
    _fields_ = _fields("sb_io_info")


class NodeInfo(ctypes.Structure):
    """struct sb_node_info: a node left to run, its name and profile label."""
    _fields_ = _fields("sb_node_info")


class TensorArg(ctypes.Structure):
    """struct sb_tensor_arg: element type, shape and elements of a tensor."""
    _fields_ = _fields("sb_tensor_arg")


class RunArgs(ctypes.Structure):
    """struct sb_run_args: sb_session_run's arguments."""
    _fields_ = _fields("sb_run_args")


def packer(structure: type[ctypes.Structure]) -> Callable[..., bytes]:
    """struct.pack for a Structure of int64 fields, in field order: the bytes
    can be passed where C expects a pointer to the structure."""
    return struct.Struct("=" + "q" * len(structure._fields_)).pack


def field_index(structure: type[ctypes.Structure], name: str) -> int:
    """Position of a field: for the packers' argument order."""
    return [f[0] for f in structure._fields_].index(name)


# enum sb_route and enum sb_b_source, for explain().
ROUTES = {0: "empty", 1: "zero-k", 2: "tiles", 3: "panels", 4: "row", 5: "column",
          6: "depthwise", 7: "channel lanes"}
B_SOURCES = {0: "none", 1: "prepacked", 2: "packed whole", 3: "in place", 4: "per panel",
             5: "per strip", 6: "by offsets"}
