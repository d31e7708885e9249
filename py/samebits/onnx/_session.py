"""A loaded model: its graph checked, constants converted and weights packed
once; `run` feeds inputs through the nodes in order."""
from __future__ import annotations

import dataclasses
import struct
import time
from array import array
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping, Optional, Sequence, Union, cast

from .. import _args, _operands, _paths
from .._typing import Mode
from . import _fuse
from . import _model as M
from . import _values as V
from ._errors import UnsupportedModelError
from ._registry import BUILDERS, FAST_ONLY, NodeContext
from ._values import Floats, Ints

if TYPE_CHECKING:
    import numpy as np
else:
    from ._values import np   # None without numpy

# Operator implementations register themselves on import.
from . import _ops_einsum, _ops_index, _ops_math, _ops_nn, _ops_rnn, _ops_shape  # noqa: F401,E402

MIN_OPSET, MAX_OPSET = 7, 23
MODES = ("exact", "fast")


@dataclass(frozen=True)
class TensorInfo:
    """A graph input or output: name, element type and shape (an int per
    fixed dimension, a string per symbolic one, None where unknown)."""
    name: str
    dtype: str
    shape: Optional[tuple[Union[int, str, None], ...]]


def _info(v: M.ValueInfo) -> TensorInfo:
    dtype = M.DTYPE_NAMES.get(v.elem_type, "unknown") if v.elem_type else "unknown"
    return TensorInfo(v.name, dtype, v.shape)


def _run_kernel(node: M.Node, kernel: Callable[[list[Optional[V.Value]]], Sequence[V.Value]],
                args: list[Optional[V.Value]]) -> Sequence[V.Value]:
    """One node's kernel on its inputs (None for an omitted one; trailing
    omitted ones dropped, so that len() counts the optional inputs given),
    its errors prefixed with the node's name and operator."""
    while args and args[-1] is None:
        args.pop()
    try:
        return kernel(args)
    except (UnsupportedModelError, TypeError, ValueError, IndexError) as e:
        text = str(e)
        if text.startswith("node "):
            raise
        if isinstance(e, IndexError) and (len(args) < len(node.inputs) or "" in node.inputs):
            # A kernel read an input position the node left empty.
            text = (f"a required input is missing (the node's inputs are "
                    f"{list(node.inputs)!r})")
            raise ValueError(f"node {node.name!r} ({node.op_type}): {text}") from e
        raise type(e)(f"node {node.name!r} ({node.op_type}): {text}") from e


def _topological(nodes: list[M.Node], known: set[str]) -> list[int]:
    """Node indices in an order where every input is produced before use
    (ONNX requires files to be sorted; this also accepts unsorted ones)."""
    order, done, available = [], [False] * len(nodes), set(known)
    progress = True
    while progress:
        progress = False
        for i, node in enumerate(nodes):
            if done[i]:
                continue
            if all(name == "" or name in available for name in node.inputs):
                order.append(i)
                done[i] = True
                available.update(n for n in node.outputs if n)
                progress = True
    if len(order) != len(nodes):
        i = done.index(False)
        missing = [n for n in nodes[i].inputs if n and n not in available]
        raise UnsupportedModelError(
            f"node {nodes[i].index} {nodes[i].name!r} ({nodes[i].op_type}): input "
            f"{missing[0]!r} is produced "
            f"by no node, initializer or graph input (or the graph has a cycle)")
    return order


class Session:
    """An ONNX model ready to run. Made by ``samebits.onnx.load``.

    Attributes
    ----------
    inputs, outputs
        TensorInfo of the graph's inputs (initializers excluded) and outputs.
    mode
        "exact" or "fast".
    path
        The ISA path the weights were packed for; ``run`` uses it.
    """

    def __init__(self, model: M.Model, mode: str, threads: Optional[int],
                 base_dir: Optional[Path]) -> None:
        if mode not in MODES:
            raise ValueError(f"mode must be 'exact' or 'fast', got {mode!r}")
        self.mode: Mode = cast(Mode, mode)   # one of MODES: checked above
        self.threads = None if threads is None else _args.threads(threads, "load")
        self.path = _paths.path()
        self.opset = model.opset.get("", 0)
        if not MIN_OPSET <= self.opset <= MAX_OPSET:
            raise UnsupportedModelError(
                f"the model imports opset {self.opset} of the default domain; opsets "
                f"{MIN_OPSET} to {MAX_OPSET} are supported")
        graph = model.graph
        if graph.sparse_initializers:
            raise UnsupportedModelError("sparse initializers are not supported")
        self._constants: dict[str, V.Value] = {}
        for t in graph.initializers:
            self._constants[t.name] = V.from_proto(t, f"initializer {t.name!r}", base_dir)
        self.inputs = [_info(v) for v in graph.inputs if v.name not in self._constants]
        self.outputs = [_info(v) for v in graph.outputs]
        for v in graph.inputs + graph.outputs:
            if v.kind != "tensor":
                raise UnsupportedModelError(f"graph value {v.name!r} is a {v.kind}; only "
                                            f"tensors are supported")
        self._input_infos = {v.name: v for v in graph.inputs if v.name not in self._constants}
        # nodes whose inputs are all constants are computed once, first, so
        # that the rewrites see every constant (weights from Constant nodes too)
        nodes = [dataclasses.replace(n, fused={}) for n in graph.nodes]
        nodes = self._fold_constants(nodes, model)
        nodes = _fuse.fuse(nodes, self._constants, mode, self.opset,
                           {o.name for o in self.outputs})
        order = _topological(nodes, set(self._constants) | set(self._input_infos))
        self._steps: list[tuple[M.Node, Any]] = []
        consumed_by: dict[str, list[int]] = {}   # constant -> steps holding it packed
        for i in order:
            node = nodes[i]
            ctx, kernel = self._build(node, model)
            self._steps.append((node, kernel))
            for i in ctx.consumed:
                consumed_by.setdefault(node.inputs[i], []).append(len(self._steps) - 1)
        for out in self.outputs:
            if out.name not in self._constants and out.name not in self._input_infos and \
                    not any(out.name in n.outputs for n, _ in self._steps):
                raise UnsupportedModelError(f"graph output {out.name!r} is produced by nothing")
        # constants every reader holds packed: freed (the run passes None)
        readers: dict[str, int] = {}
        for node, _ in self._steps:
            for name in node.inputs:
                readers[name] = readers.get(name, 0) + 1
        self._dropped = {name for name, steps in consumed_by.items()
                         if len(steps) == readers.get(name) and name not in
                         {o.name for o in self.outputs}}
        for name in self._dropped:
            del self._constants[name]
        # when each intermediate value is read for the last time
        self._last_use: dict[str, int] = {}
        for k, (node, _) in enumerate(self._steps):
            for name in node.inputs:
                if name:
                    self._last_use[name] = k
        self._output_names = {o.name for o in self.outputs}

    def _build(self, node: M.Node, model: M.Model) -> tuple[NodeContext, Any]:
        """The node's kernel, or UnsupportedModelError naming what it lacks."""
        ctx = NodeContext(node, node.index, self.opset, self.mode, self.threads, self._constants)
        if node.domain not in ("", "ai.onnx"):
            raise UnsupportedModelError(f"{ctx.where}: domain {node.domain!r} is not "
                                        f"supported (the default ONNX domain is)")
        if node.op_type in model.functions:
            raise UnsupportedModelError(f"{ctx.where}: model-local functions are not supported")
        build = BUILDERS.get(node.op_type)
        if build is None:
            raise UnsupportedModelError(f"{ctx.where}: operator {node.op_type!r} is not "
                                        f"supported")
        if self.mode == "exact" and node.op_type in FAST_ONLY:
            raise UnsupportedModelError(f"{ctx.where}: {node.op_type} has no exact kernel; "
                                        f"load with mode='fast'")
        kernel = build(ctx)
        ctx.finish()
        return ctx, kernel

    def _fold_constants(self, nodes: list[M.Node], model: M.Model) -> list[M.Node]:
        """Computes, in graph order, every node whose inputs are all constants
        (with the kernel a run would use: the same bits) and adds its outputs
        to the constants. Returns the nodes left to run."""
        order = _topological(nodes, set(self._constants) | set(self._input_infos))
        left = []
        for i in order:
            node = nodes[i]
            inputs = [None if n == "" else n for n in node.inputs]
            if node.op_type == "Dropout" or \
                    not all(n is None or n in self._constants for n in inputs):
                left.append(node)
                continue
            _, kernel = self._build(node, model)
            values = _run_kernel(node, kernel,
                                 [None if n is None else self._constants[n] for n in inputs])
            for name, value in zip(node.outputs, values):
                if name:
                    self._constants[name] = value
        return left

    @property
    def node_count(self) -> int:
        """Nodes left to run after loading (folded and absorbed ones are gone)."""
        return len(self._steps)

    def __repr__(self) -> str:
        ins = ", ".join(f"{i.name}: {i.dtype}{list(i.shape) if i.shape is not None else ''}"
                        for i in self.inputs)
        return (f"<samebits.onnx.Session mode={self.mode!r} path={self.path!r} opset={self.opset} "
                f"nodes={len(self._steps)} inputs=({ins})>")

    # ---- inputs ------------------------------------------------------------

    def _feed(self, name: str, value: Any) -> tuple[V.Value, bool]:
        """(runtime tensor, whether it came as a numpy array)."""
        info = self._input_infos[name]
        want = info.elem_type
        if np is not None and isinstance(value, np.ndarray):
            if value.dtype == np.float32:
                t: V.Value = Floats(tuple(value.shape), V.c_order(value))
            elif value.dtype.kind in "iub":
                t = Ints(tuple(value.shape), [int(v) for v in value.reshape(-1).tolist()],
                         _NUMPY_TYPES.get(value.dtype.str.lstrip("<>=|"), M.INT64))
            else:
                wants = ("" if want is None else
                         f"; the model wants {M.DTYPE_NAMES.get(want, str(want))}")
                hint = (": convert with .astype(np.float32)" if value.dtype.kind == "f"
                        else "")
                raise TypeError(f"input {name!r}: dtype {value.dtype} is not supported "
                                f"(float32 and integer arrays are{wants}){hint}")
            numpy_in = True
        else:
            try:
                view = memoryview(value)
            except TypeError:
                raise TypeError(f"input {name!r}: expected a numpy array or a buffer, got "
                                f"{type(value).__name__}") from None
            fmt = view.format.lstrip("<=@")
            shape = _operands.view_shape(view)
            if fmt == "f":
                if V.size_of(shape) == 0:
                    t = Floats(shape, None)
                elif np is not None:
                    t = Floats(shape, np.frombuffer(view.tobytes(), np.float32).reshape(shape))
                else:
                    t = V.floats_from_bytes(view.tobytes(), shape)
            elif fmt in _BUFFER_TYPES:
                raw = view.tobytes()
                n = V.size_of(shape)
                values = list(struct.unpack(f"<{n}{fmt}", raw)) if n else []
                t = Ints(shape, [int(v) for v in values], _BUFFER_TYPES[fmt])
            else:
                raise TypeError(f"input {name!r}: buffer format {view.format!r} is not supported")
            numpy_in = False
        if want is not None:
            got = M.FLOAT if isinstance(t, Floats) else t.dtype
            if got != want and not (isinstance(t, Ints) and want in V.INT_TYPES
                                    and _int_compatible(t, want)):
                raise TypeError(f"input {name!r}: the model wants "
                                f"{M.DTYPE_NAMES.get(want, want)}, got "
                                f"{M.DTYPE_NAMES.get(got, got)}")
            if isinstance(t, Ints):
                t = Ints(t.shape, t.values, want)
        if info.shape is not None:
            if len(info.shape) != len(t.shape) or any(
                    isinstance(d, int) and d >= 0 and d != s for d, s in zip(info.shape, t.shape)):
                raise ValueError(f"input {name!r}: the model wants shape "
                                 f"{_shape_text(info.shape)}, got {t.shape}")
        return t, numpy_in

    # ---- running -----------------------------------------------------------

    def run(self, feeds: Mapping[str, Any], outputs: Optional[list[str]] = None, *,
            profile: Optional[dict[str, tuple[float, int]]] = None) -> dict[str, Any]:
        """Runs the model: ``{input name: array}`` -> ``{output name: array}``.

        Inputs are numpy arrays or buffers (format 'f' for float32, integer
        formats for integer inputs). Outputs are numpy arrays when the
        inputs were (or when there are no inputs and numpy is present), else
        memoryviews. ``outputs`` selects some of the graph outputs.
        ``profile``: a dict that gains, per operator type (a fused node as
        "Conv+Relu"), the seconds its nodes took and how many ran.
        """
        if not isinstance(feeds, Mapping):
            raise TypeError(f"run: feeds must be a mapping of input names to arrays, got "
                            f"{type(feeds).__name__}")
        unknown = [k for k in feeds if k not in self._input_infos]
        if unknown:
            raise ValueError(f"run: {unknown[0]!r} is not an input of the model (inputs: "
                             f"{[i.name for i in self.inputs]})")
        missing = [i.name for i in self.inputs if i.name not in feeds]
        if missing:
            raise ValueError(f"run: input {missing[0]!r} is missing")
        wanted = list(outputs) if outputs is not None else [o.name for o in self.outputs]
        for name in wanted:
            if name not in self._output_names:
                raise ValueError(f"run: {name!r} is not an output of the model")
        values: dict[str, V.Value] = dict(self._constants)
        numpy_out = np is not None and not feeds
        for name, value in feeds.items():
            values[name], numpy_in = self._feed(name, value)
            numpy_out = numpy_out or numpy_in
        keep = set(wanted)
        with _paths.use_path(self.path):
            for k, (node, kernel) in enumerate(self._steps):
                args = [values[n] if n and n not in self._dropped else None
                        for n in node.inputs]
                if profile is not None:
                    start = time.perf_counter()
                    results = _run_kernel(node, kernel, args)
                    key = "+".join([node.op_type] + [k if k != "activation" else
                                                      _act_name(v) for k, v in
                                                      node.fused.items()])
                    seconds, count = profile.get(key, (0.0, 0))
                    profile[key] = (seconds + time.perf_counter() - start, count + 1)
                else:
                    results = _run_kernel(node, kernel, args)
                for name, value in zip(node.outputs, results):
                    if name:
                        values[name] = value
                for name in node.inputs:
                    if name and self._last_use.get(name) == k and name not in keep \
                            and name not in self._constants:
                        values.pop(name, None)
        return {name: _export(values[name], numpy_out) for name in wanted}


_NUMPY_TYPES = {"i8": M.INT64, "i4": M.INT32, "i2": M.INT16, "i1": M.INT8, "u1": M.UINT8,
                "u2": M.UINT16, "u4": M.UINT32, "u8": M.UINT64, "b1": M.BOOL}
_BUFFER_TYPES = {"q": M.INT64, "l": M.INT64, "i": M.INT32, "h": M.INT16, "b": M.INT8,
                 "B": M.UINT8, "H": M.UINT16, "I": M.UINT32, "Q": M.UINT64, "?": M.BOOL}


def _act_name(act: Any) -> str:
    return act[0] if isinstance(act, tuple) else str(act)


def _int_compatible(t: Ints, want: int) -> bool:
    """An integer input of another integer type whose values fit `want`."""
    lo, hi = V.INT_RANGES[want]
    return all(lo <= v <= hi for v in t.values)


def _shape_text(shape: tuple[Union[int, str, None], ...]) -> str:
    return "(" + ", ".join(str(d) if d is not None else "?" for d in shape) + ")"


def _export(v: V.Value, numpy_out: bool) -> Any:
    if isinstance(v, Floats):
        if numpy_out:
            if v.data is None:
                return np.zeros(v.shape, np.float32)
            return V.c_order(v.data)
        if v.data is None:
            return memoryview(bytearray(0)).cast("f")   # no zero-size shape in a memoryview
        if np is not None and isinstance(v.data, np.ndarray):
            return memoryview(V.c_order(v.data))
        return v.data
    fmt = V.INT_TYPES[v.dtype]
    if numpy_out:
        dtype = {M.BOOL: np.bool_}.get(v.dtype, np.dtype(fmt))
        return np.array(v.values, dtype=dtype).reshape(v.shape)
    buf = array("b" if fmt == "?" else fmt, v.values)
    view = memoryview(buf)
    if v.size == 0:
        return view
    # (typeshed's memoryview.cast overloads take literal formats; fmt is one of INT_TYPES')
    return view.cast("B").cast(   # type: ignore[call-overload]
        "b" if fmt == "?" else fmt, v.shape) if v.shape else \
        view.cast("B").cast("b" if fmt == "?" else fmt, ())   # type: ignore[call-overload]
