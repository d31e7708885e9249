"""Matrix products as the C library takes them: one sb_matmul call per user
call, every 2-D product of a batch in it (csrc/kernels/matmul.c runs them in one
parallel run). matmul and linear validate their arguments into a `Call`;
`run` executes it and `plan` asks the C planner what it would do.

numpy's shape rules (np.matmul): a 1-D first operand is a row (the added axis
removed from the result), a 1-D second operand a column, and the leading
(batch) dimensions broadcast. Each 2-D product of a batch has exactly the bits
it has alone: every output is defined on its own (docs/exact-mode.md).
"""
from __future__ import annotations

import ctypes
import itertools
import numbers
import struct
from typing import Any, NamedTuple, Optional, Sequence

from .._binding import (
    abi as _abi, args as _args, lib as _lib, operands as _operands, paths as _paths)
from . import plan_report as _plan_report
from .._binding.codes import ACTIVATION_CODES
from .._binding.operands import Operand
from .packed import PackedMatrix

MODES = {"fast": _lib.MODE_FAST, "exact": _lib.MODE_EXACT}
_LEAKY_RELU = ACTIVATION_CODES["leaky_relu"]
LEAKY_RELU_DEFAULT_SLOPE = 0.01   # torch's default negative_slope


def leaky_relu_code(slope: float) -> int:
    """The epilogue argument for leaky_relu: the code in bits 0-7, the
    binary32 bits of the slope in bits 32-63 (as an int64)."""
    bits = _args.float32_bits(slope, "the leaky_relu slope", "leaky_relu")
    return _with_parameter(_LEAKY_RELU, bits)


def _with_parameter(code: int, bits: int) -> int:
    """An activation code with a parameter's binary32 bits in bits 32-63, as
    the int64 the C argument holds."""
    word = code | (bits << 32)
    return word - (1 << 64) if word >= 1 << 63 else word


# The fused activations (enum sb_activation), by name. "leaky_relu" alone has
# torch's default slope; ("leaky_relu", slope) chooses another.
# hardsigmoid_onnx takes its alpha: ("hardsigmoid_onnx", alpha) alone names it.
ACTIVATIONS: dict[Optional[str], int] = {
    None if name == "none" else name: code for name, code in ACTIVATION_CODES.items()
    if name != "hardsigmoid_onnx"}
ACTIVATIONS["leaky_relu"] = leaky_relu_code(LEAKY_RELU_DEFAULT_SLOPE)
HARDSIGMOID_ONNX = ACTIVATION_CODES["hardsigmoid_onnx"]   # ONNX's formula with beta 0.5
_SIGNATURE = "(n?,k),(k,m?)->(n?,m?)"


def mode_code(mode: str) -> int:
    if not isinstance(mode, str) or mode not in MODES:
        raise ValueError(f"mode must be 'fast' or 'exact', got {mode!r}")
    return MODES[mode]


def slope_value(slope: Any, what: str, name: str = "negative_slope") -> float:
    """A leaky_relu slope as a Python float (a real number that float32 holds
    finitely, after rounding); TypeError or ValueError naming it."""
    if isinstance(slope, bool) or not isinstance(slope, numbers.Real):
        raise TypeError(f"{what}: {name} must be a real number, got {type(slope).__name__} "
                        f"{slope!r}")
    value = float(slope)
    try:
        struct.pack("<f", value)
    except OverflowError:
        raise ValueError(f"{what}: {name} {slope!r} is beyond float32's range") from None
    if value != value:
        raise ValueError(f"{what}: {name} must not be NaN")
    return value


def activation_code(activation: Any, what: str) -> int:
    """The C epilogue's argument for an activation: a name of ACTIVATIONS,
    None, or ("leaky_relu", slope)."""
    if activation is None or (isinstance(activation, str) and activation in ACTIVATIONS):
        return ACTIVATIONS[activation]
    if (isinstance(activation, tuple) and len(activation) == 2
            and activation[0] == "leaky_relu"):
        return leaky_relu_code(slope_value(activation[1], what, "the leaky_relu slope"))
    if (isinstance(activation, tuple) and len(activation) == 2
            and activation[0] == "hardsigmoid_onnx"):
        alpha = slope_value(activation[1], what, "the hardsigmoid_onnx alpha")
        return _with_parameter(HARDSIGMOID_ONNX, _args.float32_bits(alpha, "alpha", what))
    names = ", ".join(repr(n) for n in ACTIVATIONS if n is not None)
    raise ValueError(f"{what}: activation must be None, one of {names}, "
                     f"('leaky_relu', slope) or ('hardsigmoid_onnx', alpha), got "
                     f"{activation!r}")


class Call(NamedTuple):
    """One prepared sb_matmul call: the argument structure (addresses of the
    first product), the operands that must stay alive, the output, and the
    offsets (in elements of a, b, c) of each run over batch dimensions beyond
    the C side's SB_MAX_BATCH_DIMS (almost always just (0, 0, 0))."""
    what: str
    library: Any
    args: _abi.MatmulArgs
    batch: Optional[_abi.Batch]
    keep: tuple[Any, ...]
    output: _operands.Output
    runs: list[tuple[int, ...]]   # (a, b, c) element offsets of each C call
    scalar: bool         # a vector . vector product into a new numpy array: return its element


def _broadcast(a_batch: tuple[int, ...], b_batch: tuple[int, ...], what: str,
               a_shape: tuple[int, ...], b_shape: tuple[int, ...]) -> tuple[int, ...]:
    ndim = max(len(a_batch), len(b_batch))
    a_full = (1,) * (ndim - len(a_batch)) + a_batch
    b_full = (1,) * (ndim - len(b_batch)) + b_batch
    shape = []
    for x, y in zip(a_full, b_full):
        if x != y and x != 1 and y != 1:
            raise ValueError(f"{what}: operands could not be broadcast together: batch "
                             f"dimensions {a_batch} and {b_batch} of shapes {a_shape} and "
                             f"{b_shape}")
        shape.append(y if x == 1 else x)
    return tuple(shape)


def _batch_strides(shape: tuple[int, ...], batch: tuple[int, ...], strides: tuple[int, ...]
                   ) -> list[int]:
    """Element strides of an operand's batch dimensions aligned to the
    broadcast batch `shape`: 0 where it is broadcast."""
    pad = len(shape) - len(batch)
    return [0 if d < pad or batch[d - pad] == 1 else strides[d - pad] for d in range(len(shape))]


def _merge_batch(shape: tuple[int, ...], strides: Sequence[list[int]]
                 ) -> list[tuple[int, tuple[int, ...]]]:
    """Batch dimensions as (extent, (stride of a, b, c)) with extent-1
    dimensions dropped and neighbours merged where every operand steps
    through them as through one dimension."""
    dims: list[tuple[int, tuple[int, ...]]] = []
    for d, extent in enumerate(shape):
        if extent == 1:
            continue
        step = tuple(s[d] for s in strides)
        if dims and all(outer == inner * extent for outer, inner in zip(dims[-1][1], step)):
            dims[-1] = (dims[-1][0] * extent, step)
        else:
            dims.append((extent, step))
    return dims


def _core(op: Operand, vector_axis: int) -> tuple[int, int, int, int]:
    """(rows, cols, row stride, col stride) of an operand's last two
    dimensions; a 1-D operand is a row (vector_axis 0) or a column (1)."""
    if op.ndim == 1:
        if vector_axis == 0:
            return 1, op.shape[0], 0, op.strides[0]
        return op.shape[0], 1, op.strides[0], 0
    return op.shape[-2], op.shape[-1], op.strides[-2], op.strides[-1]


def _prepare(what: str, mode: str, threads: Any, a_obj: Any, a: Operand, b: Any,
             b_core: tuple[int, int, int, int], b_batch: tuple[int, ...], b_vector: bool,
             out: Any, numpy_result: bool, bias: Optional[Operand], activation: int,
             other_inputs: list[tuple[Any, Operand]]) -> Call:
    """The common part of matmul and linear once the operands are read: shapes,
    broadcasting, output, batch layout. b is an Operand (b_core its (k, n,
    row stride, col stride)) or a PackedMatrix (b_core (k, n, 0, 0));
    other_inputs are the (object, Operand) pairs besides a that out must not
    overlap."""
    code = mode_code(mode)
    nthreads = _args.threads(threads, what)
    path = _paths.active_path_index()
    m, k, a_row, a_col = _core(a, 0)
    kb, n, b_row, b_col = b_core
    a_batch = a.shape[:-2]
    batch = a_batch if a_batch == b_batch else _broadcast(a_batch, b_batch, what, a.shape,
                                                          _shape_of(b))
    if k != kb:
        raise ValueError(f"{what}: Input operand 1 has a mismatch in its core dimension 0, with "
                         f"gufunc signature {_SIGNATURE} (size {kb} is different from {k}): "
                         f"shapes {a.shape} and {_shape_of(b)}")
    out_shape = batch + ((m,) if a.ndim > 1 else ()) + ((n,) if not b_vector else ())
    _args.output_bytes(out_shape, what)
    c_axes = len(batch)
    output = _operands.Output(out, out_shape, numpy_result, [(a_obj, a)] + other_inputs, what,
                              _any_layout if n <= 1 else _unit_rows)
    c = output.operand
    c_row = c.strides[c_axes] if a.ndim > 1 else 0
    a_strides = _batch_strides(batch, a_batch, a.strides)
    b_strides = (_batch_strides(batch, b_batch, b.strides) if isinstance(b, Operand)
                 else [0] * len(batch))
    c_strides = list(c.strides[:c_axes])
    dims = _merge_batch(batch, (a_strides, b_strides, c_strides)) if batch else []
    # Dimensions past what one C call takes are looped here (numpy allows 64).
    runs = _NO_OFFSETS
    if len(dims) > _abi.MAX_BATCH_DIMS:
        outer, dims = dims[:-_abi.MAX_BATCH_DIMS], dims[-_abi.MAX_BATCH_DIMS:]
        runs = [tuple(sum(i * step[r] for i, (_, step) in zip(index, outer)) for r in range(3))
                for index in itertools.product(*(range(extent) for extent, _ in outer))]
    batch_struct = None
    if dims:
        batch_struct = _abi.Batch()
        batch_struct.ndim = count = len(dims)
        extents, steps = zip(*dims)
        batch_struct.shape[:count] = extents
        batch_struct.a_stride[:count] = [step[0] for step in steps]
        batch_struct.b_stride[:count] = [step[1] for step in steps]
        batch_struct.c_stride[:count] = [step[2] for step in steps]
    packed = isinstance(b, PackedMatrix)
    args = _abi.MatmulArgs(
        path, code, nthreads, m, n, k, a.ptr, a_row, a_col,
        b.address if packed else b.ptr, b_row, b_col, int(packed), c.ptr, c_row,
        bias.ptr if bias is not None else 0, activation,
        ctypes.addressof(batch_struct) if batch_struct is not None else 0)
    library = _lib.lib if code == _lib.MODE_EXACT else _lib.fast_lib
    scalar = out is None and numpy_result and out_shape == ()
    return Call(what, library, args, batch_struct, (a, b, bias), output, runs, scalar)


def _shape_of(b: Operand | PackedMatrix) -> tuple[int, ...]:
    return b.shape


_NO_OFFSETS: list[tuple[int, ...]] = [(0, 0, 0)]


def _unit_rows(op: Operand) -> bool:   # the kernels write rows with unit column stride
    return op.strides[-1] == 1


def _any_layout(op: Operand) -> bool:   # one column: any strides
    return True


def _check_packed(packed: PackedMatrix, what: str, name: str) -> None:
    if packed.path != _paths.path():
        raise ValueError(f"{what}: {name} was packed for path {packed.path!r} but the active "
                         f"path is {_paths.path()!r}; pack it again under this path")


def _read(x: Any, name: str, what: str) -> Operand:
    op = _operands.as_operand(x, name)
    if op.ndim == 0:
        index = 0 if name in ("a", "x") else 1
        raise ValueError(f"{what}: Input operand {index} does not have enough dimensions "
                         f"(has 0, gufunc core with signature {_SIGNATURE} requires 1)")
    _args.shape(op.shape, name, what)
    return op


def prepare_matmul(a: Any, b: Any, mode: str, out: Any, threads: Any) -> Call:
    """matmul(a, b) as numpy's matmul shapes it."""
    ma = _read(a, "a", "matmul")
    batch: tuple[int, ...]
    b_inputs: list[tuple[Any, Operand]]
    if isinstance(b, PackedMatrix):
        _check_packed(b, "matmul", "b")
        kb, n = b.shape
        core, batch, vector, b_inputs = (kb, n, 0, 0), (), False, []
        numpy_result = _operands.is_numpy(a) or b._numpy_source
    else:
        mb = _read(b, "b", "matmul")
        core, batch, vector = _core(mb, 1), mb.shape[:-2], mb.ndim == 1
        numpy_result = _operands.is_numpy(a) or _operands.is_numpy(b)
        b_inputs, b = [(b, mb)], mb
    return _prepare("matmul", mode, threads, a, ma, b, core, batch, vector, out, numpy_result,
                    None, 0, b_inputs)


def prepare_linear(x: Any, weight: Any, bias: Any, activation: Any, mode: str, out: Any,
                   threads: Any) -> Call:
    """linear(x, weight, bias): x @ weight.T + bias, then the activation."""
    what = "linear"
    code = activation_code(activation, what)
    mx = _read(x, "x", what)
    b: Operand | PackedMatrix
    b_inputs: list[tuple[Any, Operand]]
    w_shape: tuple[int, ...]
    if isinstance(weight, PackedMatrix):
        _check_packed(weight, what, "weight")
        in_features, out_features = weight.shape
        core, b, b_inputs = (in_features, out_features, 0, 0), weight, []
        w_shape = (out_features, in_features)
        numpy_result = _operands.is_numpy(x) or weight._numpy_source
    else:
        mw = _operands.as_operand(weight, "weight")
        if mw.ndim != 2:
            raise ValueError(f"linear: weight must be 2-D (out_features, in_features), got "
                             f"shape {mw.shape}")
        _args.shape(mw.shape, "weight", what)
        out_features, in_features = w_shape = mw.shape
        # B = weight.T, read in place: its rows run along in_features.
        b = Operand(mw.ptr, (in_features, out_features), (mw.strides[1], mw.strides[0]),
                    mw.keep, mw.zero_copy)
        core, b_inputs = (in_features, out_features, mw.strides[1], mw.strides[0]), [(weight, mw)]
        numpy_result = _operands.is_numpy(x) or _operands.is_numpy(weight)
    if mx.shape[-1] != in_features:
        raise ValueError(f"linear: x has {mx.shape[-1]} features (shape {mx.shape}) but weight "
                         f"(shape {w_shape}) takes {in_features}")
    bias_op = None
    inputs = list(b_inputs)
    if bias is not None:
        bias_op = _operands.as_operand(bias, "bias", dense=True)
        if bias_op.shape != (out_features,):
            raise ValueError(f"linear: bias has shape {bias_op.shape}, expected "
                             f"({out_features},) for weight of shape {w_shape}")
        inputs.append((bias, bias_op))
    return _prepare(what, mode, threads, x, mx, b, core, (), False, out, numpy_result, bias_op,
                    code, inputs)


def run(call: Call) -> Any:
    """Executes a prepared call; returns the result."""
    if _plan_report.TRACE:
        _plan_report.trace(lambda: plan_report(call))
    args = call.args
    first = (args.a, args.b, args.c)
    item = _operands.ITEM
    for a_off, b_off, c_off in call.runs:
        args.a = first[0] + a_off * item
        args.b = first[1] + (b_off * item if not args.b_packed else 0)
        args.c = first[2] + c_off * item
        status = call.library.sb_matmul(ctypes.addressof(args))
        _lib.check_status(status, call.what)
    args.a, args.b, args.c = first
    result = call.output.finish()
    return result[()] if call.scalar else result   # numpy's matmul gives a scalar here


def plan(call: Call) -> _abi.PlanInfo:
    """What the C library would run for the call (its first run)."""
    info = _abi.PlanInfo()
    status = call.library.sb_matmul_plan(ctypes.addressof(call.args), ctypes.addressof(info))
    _lib.check_status(status, call.what)
    return info


def plan_report(call: Any) -> _plan_report.Plan:
    """The plan of a prepared matmul or linear call (a Call), as explain() reports it."""
    return _plan_report.plan_from_info(call.what, plan(call), call.args.mode)
