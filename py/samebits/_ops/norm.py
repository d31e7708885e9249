"""batch_norm (inference form) and group_norm of float32 (N, C, ...) tensors
(csrc/kernels/norm.c), with torch's signatures. Each step is a float32 operation in
the order docs/exact-ops.md states; the same bits everywhere, in both modes.
"""
from __future__ import annotations

import ctypes
from typing import Any

from .._binding import (
    abi as _abi, args as _args, lib as _lib, operands as _operands, paths as _paths)
from .._binding.operands import is_numpy, prod
from .products import mode_code
from .._typing import Mode


def _channel_vector(obj: Any, name: str, c: int, what: str) -> tuple[Any, Any]:
    if obj is None:
        return None, None
    t = _operands.as_operand(obj, name, dense=True)
    if t.shape != (c,):
        raise ValueError(f"{what}: {name} must have shape ({c},) (one value per channel), "
                         f"got {t.shape}")
    return obj, t


def _run(what: str, op: int, x: Any, groups: int, mean: Any, var: Any, weight: Any, bias: Any,
         eps: Any, mode: str, out: Any, threads: Any) -> Any:
    code = mode_code(mode)
    nthreads = _args.threads(threads, what)
    t = _operands.as_operand(x, "x", min_ndim=2, dense=True)
    _args.shape(t.shape, "x", what)
    n, c = t.shape[0], t.shape[1]
    spatial = prod(t.shape[2:])
    if op == 1 and (groups < 1 or c % groups):
        raise ValueError(f"{what}: num_groups must be at least 1 and divide the {c} channels, "
                         f"got {groups}")
    vectors = [_channel_vector(v, name, c, what) for v, name in
               ((mean, "running_mean"), (var, "running_var"), (weight, "weight"),
                (bias, "bias"))]
    eps_bits = _args.float32_bits(eps, "eps", what)
    inputs = [(x, t)] + [(obj, vt) for obj, vt in vectors if vt is not None]
    output = _operands.Output(out, t.shape, is_numpy(x), inputs, what)
    ptr = [vt.ptr if vt is not None else 0 for _, vt in vectors]
    args = _abi.NormArgs(_paths.active_path_index(), code, op, nthreads, n, c, spatial,
                         groups if op == 1 else 0, t.ptr, output.ptr, *ptr, eps_bits)
    _lib.check_status(_lib.lib.sb_norm(ctypes.addressof(args)), what)
    return output.finish()


def batch_norm(x: Any, running_mean: Any, running_var: Any, weight: Any = None,
               bias: Any = None, training: bool = False, momentum: float = 0.1,
               eps: float = 1e-5, *, mode: Mode = "fast", out: Any = None,
               threads: int | None = None) -> Any:
    """Batch normalization in inference form, torch's signature (training
    must be False; momentum is unused there).

    For channel c (axis 1 of an (N, C, ...) input): r = 1 / sqrt(var_c + eps)
    (add, IEEE square root, divide), then y = (x - mean_c) * r, then
    * weight_c, then + bias_c when given; each a float32 operation. eps is
    rounded to float32. Raises ValueError for training=True, vectors of the
    wrong shape or an input of fewer than 2 dimensions."""
    if training:
        raise ValueError("batch_norm: only the inference form (training=False) is supported")
    return _run("batch_norm", 0, x, 0, running_mean, running_var, weight, bias, eps, mode,
                out, threads)


def group_norm(x: Any, num_groups: int, weight: Any = None, bias: Any = None,
               eps: float = 1e-5, *, mode: Mode = "fast", out: Any = None,
               threads: int | None = None) -> Any:
    """Group normalization, torch's signature. The C channels of each batch
    entry form num_groups groups of C / num_groups consecutive channels;
    each group's values (channels, then spatial positions, in C order) give
    mean = sum / count and var = sum of (x - mean)^2 / count (sums in
    increasing order from +0); r = 1 / sqrt(var + eps); y = (x - mean) * r,
    then * weight_c, then + bias_c (per channel) when given."""
    n_groups = _args.as_int(num_groups, "num_groups", "group_norm")
    return _run("group_norm", 1, x, n_groups, None, None, weight, bias, eps, mode, out,
                threads)
