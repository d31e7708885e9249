"""samebits.interpolate: nearest and bilinear resizing of NCHW float32
tensors with torch.nn.functional.interpolate's rules (csrc/kernels/resize.c)."""
from __future__ import annotations

import ctypes
import math
import numbers
from typing import Any, Literal, Optional, Sequence, Union, cast, overload

from .._binding import abi as _abi, args as _args, lib as _lib, operands as _operands
from .._binding.operands import is_numpy


def scale_bits(size_in: int, size_out: int, factor: Optional[float], align: bool) -> int:
    """The binary32 bits of one axis's source-per-output scale, torch's rule:
    (in-1)/(out-1) with align_corners (0 for one output), 1/scale_factor when
    a factor was given, else in/out; computed in binary64, then rounded."""
    if align:
        scale = (size_in - 1) / (size_out - 1) if size_out > 1 else 0.0
    elif factor is not None:
        scale = 1.0 / factor
    else:
        scale = size_in / size_out
    return _args.float32_bits(scale, "the scale", "interpolate")


@overload
def _pair(value: Any, name: str, real: Literal[False]) -> tuple[int, ...]: ...
@overload
def _pair(value: Any, name: str, real: Literal[True]) -> tuple[float, ...]: ...


def _pair(value: Any, name: str, real: bool) -> tuple[float, ...]:
    """Floats when real, else ints."""
    items = value if isinstance(value, (list, tuple)) else (value, value)
    if len(items) != 2:
        raise ValueError(f"interpolate: {name} must be one value or a pair, got {value!r}")
    out: list[float] = []
    for v in items:
        if isinstance(v, bool) or not isinstance(v, numbers.Real if real else numbers.Integral):
            kind = "real numbers" if real else "ints"
            raise TypeError(f"interpolate: {name} must hold {kind}, got {v!r}")
        out.append(float(v) if real else int(cast(numbers.Integral, v)))
    return tuple(out)


def interpolate(x: Any, size: Union[int, Sequence[int], None] = None,
                scale_factor: Union[float, Sequence[float], None] = None,
                mode: str = "nearest", align_corners: Optional[bool] = None, *,
                out: Any = None, threads: int | None = None) -> Any:
    """Resize an (N, C, H, W) float32 tensor as torch.nn.functional.interpolate
    does for mode "nearest" and "bilinear".

    Give either size (OH, OW) or scale_factor (then OH = floor(H *
    scale_factor) and the coordinate scale is 1 / scale_factor, as torch
    without recompute_scale_factor). The source coordinate of output o is
    min(floor(o * scale), H - 1) for nearest; for bilinear (o + 0.5) * scale
    - 0.5 clamped at 0 (or o * (H - 1) / (OH - 1) with align_corners), and
    the two neighbours are mixed with float32 weights in a stated order
    (docs/exact-ops.md, "Resize"). The same bits everywhere, in both modes.
    """
    what = "interpolate"
    if mode not in ("nearest", "bilinear"):
        raise ValueError(f"{what}: mode must be 'nearest' or 'bilinear', got {mode!r}")
    if align_corners is not None and type(align_corners) is not bool:
        raise TypeError(f"{what}: align_corners must be a bool or None")
    if mode == "nearest" and align_corners:
        raise ValueError(f"{what}: align_corners applies to bilinear mode only")
    t = _operands.as_operand(x, "x", 4, dense=True)
    _args.shape(t.shape, "x", what)
    n, c, h, w = t.shape
    if h < 1 or w < 1:
        raise ValueError(f"{what}: the input height and width must be at least 1, got {h} x {w}")
    if (size is None) == (scale_factor is None):
        raise ValueError(f"{what}: give exactly one of size and scale_factor")
    align = bool(align_corners)
    if size is not None:
        oh, ow = _pair(size, "size", False)
        for v in (oh, ow):
            _args.bounded(v, "size", what)
        scales: list[Optional[float]] = [None, None]
    else:
        sh, sw = _pair(scale_factor, "scale_factor", True)
        if not (sh > 0 and sw > 0 and math.isfinite(sh) and math.isfinite(sw)):
            raise ValueError(f"{what}: scale_factor must be positive and finite, got "
                             f"{scale_factor!r}")
        oh, ow = math.floor(h * sh), math.floor(w * sw)
        if oh < 1 or ow < 1:
            raise ValueError(f"{what}: scale_factor {scale_factor!r} gives an empty output "
                             f"({oh} x {ow})")
        _args.shape((oh, ow), "the output", what)
        scales = [sh, sw]
    bits = [scale_bits(h, oh, scales[0], align), scale_bits(w, ow, scales[1], align)]
    nthreads = _args.threads(threads, what)
    shape = (n, c, oh, ow)
    _args.output_bytes(shape, what)
    output = _operands.Output(out, shape, is_numpy(x), [(x, t)], what)
    args = _abi.Resize2dArgs(n, c, h, w, oh, ow, 0 if mode == "nearest" else 1, int(align),
                             bits[0], bits[1], t.ptr, output.ptr, nthreads)
    _lib.check_status(_lib.lib.sb_resize2d(ctypes.addressof(args)), what)
    return output.finish()
