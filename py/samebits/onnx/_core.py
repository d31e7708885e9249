"""samebits.onnx over the C graph runtime (csrc/graph/): a thin host.

The model is read, checked, folded, rewritten, planned and run in C
(sb_session_load, sb_session_run in samebits.h); this module turns Python
arguments into the C API's structures and the C status and message into
the Python exceptions the runner documents. The same code runs in CPython
and in Pyodide (ctypes over the native library or the side module).
"""
from __future__ import annotations

import contextlib
import ctypes
import os
import struct
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping, MutableMapping, Optional, Union, cast

from .._binding import (
    abi as _abi, args as _args, codes as _codes, lib as _lib, operands as _operands, paths as _paths)
from .._typing import Mode
from ._errors import DecodeError, UnsupportedModelError

if TYPE_CHECKING:
    import numpy as np
else:
    try:
        import numpy as np
    except ImportError:   # Pyodide without numpy
        np = None

MODES = {"fast": _lib.MODE_FAST, "exact": _lib.MODE_EXACT}

# TensorProto.DataType numbers of the element types a graph computes with,
# their names, struct formats and numpy dtype strings (tools/make_tables.py's
# DTYPES, through _binding/codes.py).
FLOAT, UINT8, INT8, UINT16, INT16, INT32, INT64, BOOL, UINT32, UINT64 = 1, 2, 3, 4, 5, 6, 7, 9, 12, 13
DTYPE_NAMES = _codes.DTYPE_NAMES
_FORMATS = _codes.DTYPE_FORMATS
_SIZES = _codes.DTYPE_SIZES
_NUMPY = _codes.DTYPE_NUMPY
_FROM_NUMPY = {numpy.lstrip("<").replace("?", "b1"): code for code, numpy in _NUMPY.items()}
_FROM_FORMAT = {"f": FLOAT, "e": 10, "B": UINT8, "b": INT8, "H": UINT16, "h": INT16, "i": INT32,
                "l": INT64 if struct.calcsize("l") == 8 else INT32, "q": INT64, "?": BOOL,
                "I": UINT32, "L": UINT64 if struct.calcsize("L") == 8 else UINT32, "Q": UINT64}
# float16 and bfloat16 graph inputs and outputs (docs/onnx.md): float16 as
# numpy float16 (or buffer format 'e'), bfloat16, which numpy lacks, as
# float32 holding bfloat16 values; either also takes float32 inputs, which
# the runtime rounds to the type once
FLOAT16, BFLOAT16 = 10, 16
_NARROW = (FLOAT16, BFLOAT16)
_RANGES = {INT64: (-(1 << 63), (1 << 63) - 1), INT32: (-(1 << 31), (1 << 31) - 1),
           INT16: (-(1 << 15), (1 << 15) - 1), INT8: (-128, 127), UINT8: (0, 255),
           UINT16: (0, 65535), UINT32: (0, (1 << 32) - 1), UINT64: (0, (1 << 64) - 1),
           BOOL: (0, 1)}


@dataclass(frozen=True)
class TensorInfo:
    """A graph input or output: name, element type and shape (an int per
    fixed dimension, a string per symbolic one, None where unknown)."""
    name: str
    dtype: str
    shape: Optional[tuple[Union[int, str, None], ...]]


@dataclass(frozen=True)
class NodeTime:
    """One node's share of the runs made with ``profile=True``
    (``Session.node_profile``): its name in the file ("" when it has none;
    ONNX does not make names unique), its position among the file's nodes,
    its operator (a fused node as "Conv+relu", named after the node that
    absorbed the others), the seconds it took and how many times it ran."""
    name: str
    index: int
    op: str
    seconds: float
    calls: int


def raise_status(library: Any, status: int, what: str) -> None:
    """The C status and the thread's message as the runner's exception."""
    if status == 0:
        return
    message = (library.sb_last_error() or b"").decode("utf-8", "replace") or \
        f"{what}: status {status}"
    kind = _EXCEPTIONS.get(_codes.STATUS_EXCEPTIONS.get(status, "ValueError"), ValueError)
    raise kind(message)


# the exceptions the status table (tools/make_tables.py) names
_EXCEPTIONS: dict[str, type[Exception]] = {
    "DecodeError": DecodeError, "UnsupportedModelError": UnsupportedModelError,
    "ValueError": ValueError, "TypeError": TypeError, "IndexError": IndexError,
    "MemoryError": MemoryError}


def _dtype_name(code: int) -> str:
    return DTYPE_NAMES.get(code, "unknown") if code else "unknown"


class _Feed:
    """One input as the C API takes it (the bytes kept alive by `keep`)."""

    def __init__(self, dtype: int, shape: tuple[int, ...], address: int, keep: Any) -> None:
        self.dtype, self.shape, self.address, self.keep = dtype, shape, address, keep


def _buffer_feed(name: str, value: Any) -> _Feed:
    try:
        view = memoryview(value)
    except TypeError:
        raise TypeError(f"input {name!r}: expected a numpy array or a buffer, got "
                        f"{type(value).__name__}") from None
    fmt = view.format.lstrip("<=@")
    if fmt not in _FROM_FORMAT:
        raise TypeError(f"input {name!r}: buffer format {view.format!r} is not supported")
    shape = _operands.view_shape(view)
    raw = bytearray(view.tobytes()) if view.nbytes else bytearray(1)
    cell = (ctypes.c_char * len(raw)).from_buffer(raw)
    return _Feed(_FROM_FORMAT[fmt], shape, ctypes.addressof(cell), (raw, cell))


def _numpy_feed(name: str, value: Any, want: int) -> _Feed:
    key = value.dtype.str.lstrip("<>=|")
    dtype = _FROM_NUMPY.get(key)
    if want == BFLOAT16 and value.dtype.name == "bfloat16" and value.dtype.itemsize == 2:
        # a bfloat16 numpy dtype (ml_dtypes, onnx's own): its bits
        a = np.ascontiguousarray(value).view(np.uint16)
        return _Feed(BFLOAT16, a.shape, a.ctypes.data if a.size else 0, a)
    if want in _NARROW and key in ("f2", "f4"):
        # float16 bits for a float16 input; float32 for either (rounded in C)
        dtype = FLOAT16 if key == "f2" and want == FLOAT16 else FLOAT if key == "f4" else None
        if dtype is None:
            raise TypeError(f"input {name!r}: the model wants {_dtype_name(want)}; give float32 "
                            f"values (rounded to it), not {value.dtype}")
    if dtype is None:
        wants = f"; the model wants {_dtype_name(want)}" if want else ""
        hint = ": convert with .astype(np.float32)" if value.dtype.kind == "f" else ""
        raise TypeError(f"input {name!r}: dtype {value.dtype} is not supported (float32, float16 "
                        f"for float16 inputs, and integer arrays are{wants}){hint}")
    if want and want != dtype and dtype != FLOAT and want in _RANGES:
        # another integer type whose values fit the declared one: converted
        lo, hi = _RANGES[want]
        if value.size == 0 or (int(value.min()) >= lo and int(value.max()) <= hi):
            value = value.astype(_NUMPY[want])
            dtype = want
    if value.flags.c_contiguous and value.dtype.isnative:   # (every host is little-endian)
        a = value
    else:   # (np.ascontiguousarray would make a 0-d array 1-d)
        a = np.require(value, dtype=value.dtype.newbyteorder("<") if value.dtype.itemsize > 1
                       else value.dtype, requirements="C")
    return _Feed(dtype, a.shape, a.ctypes.data if a.size else 0, a)


def _int_compatible_buffer(feed: _Feed, want: int) -> _Feed:
    """An integer buffer of another type whose values fit `want`, converted."""
    fmt = _FORMATS[feed.dtype]
    n = 1
    for s in feed.shape:
        n *= s
    values = list(struct.unpack(f"<{n}{fmt}", ctypes.string_at(feed.address, n * _SIZES[feed.dtype])))\
        if n else []
    lo, hi = _RANGES[want]
    if not all(lo <= int(v) <= hi for v in values):
        return feed
    raw = bytearray(struct.pack(f"<{n}{_FORMATS[want]}", *[int(v) for v in values])) or bytearray(1)
    cell = (ctypes.c_char * len(raw)).from_buffer(raw)
    return _Feed(want, feed.shape, ctypes.addressof(cell), (raw, cell))


class _OutputBuffer:
    """Owns one output buffer the C runtime allocated (64-byte aligned) and
    frees it when the last numpy array over it goes: the array is a view of
    the buffer, not a copy (numpy's __array_interface__ protocol)."""

    __slots__ = ("_address", "_free", "__array_interface__")

    def __init__(self, address: int, dtype: str, shape: tuple[int, ...]) -> None:
        self._address = address
        self._free = _lib.lib.sb_buffer_free   # held: module globals may be gone at exit
        self.__array_interface__ = {"data": (address, False), "typestr": dtype,
                                    "shape": shape, "version": 3}

    def __del__(self) -> None:
        self._free(self._address)


def _bfloat16_as_float32(address: int, n: int) -> bytearray:
    """n bfloat16 values (bits at address) as float32 bytes, exactly."""
    bits = struct.unpack(f"<{n}H", ctypes.string_at(address, 2 * n)) if n else ()
    return bytearray(struct.pack(f"<{n}I", *[b << 16 for b in bits])) if n else bytearray(0)


def _export(arg: _abi.TensorArg, numpy_out: bool) -> Any:
    """An output as a numpy array that takes over the C buffer, or (without
    numpy arrays in or out) as a memoryview over a copy; the caller frees the
    buffer in the second case only (and always for a bfloat16 output, which
    becomes float32)."""
    dtype = int(arg.dtype)
    shape = tuple(arg.dims[:arg.rank])
    n = 1
    for s in shape:
        n *= s
    if dtype == BFLOAT16:
        raw = _bfloat16_as_float32(int(arg.data), n)
        if numpy_out:
            return np.frombuffer(raw, "<f4").reshape(shape).copy()
        view = memoryview(raw).cast("B")
        if n == 0:
            return memoryview(bytearray(0)).cast("f")
        return view.cast("f", shape) if shape else view.cast("f", ())
    if dtype == FLOAT16:
        if numpy_out:
            return np.asarray(_OutputBuffer(int(arg.data), "<f2", shape))
        # without numpy: float32 values (a memoryview cannot be cast to 'e')
        halves = struct.unpack(f"<{n}e", ctypes.string_at(arg.data, 2 * n)) if n else ()
        raw = bytearray(struct.pack(f"<{n}f", *halves)) if n else bytearray(0)
        if n == 0:
            return memoryview(bytearray(0)).cast("f")
        view = memoryview(raw).cast("B")
        return view.cast("f", shape) if shape else view.cast("f", ())
    if numpy_out:
        return np.asarray(_OutputBuffer(int(arg.data), _NUMPY[dtype], shape))
    nbytes = n * _SIZES[dtype]
    raw = bytearray(ctypes.string_at(arg.data, nbytes)) if nbytes else bytearray(0)
    fmt = "b" if dtype == BOOL else _FORMATS[dtype]   # bool as 0/1 bytes, as numpy stores it
    if n == 0:
        return memoryview(bytearray(0)).cast(fmt)   # type: ignore[call-overload]  # (no zero-size shape in a memoryview)
    view = memoryview(raw).cast("B")
    return view.cast(fmt, shape) if shape else view.cast(fmt, ())   # type: ignore[call-overload]  # fmt: one of _FORMATS


class Session:
    """An ONNX model loaded into the C graph runtime (samebits.onnx.load).

    Attributes
    ----------
    inputs, outputs
        TensorInfo of the graph's inputs (initializers excluded) and outputs.
    mode
        "exact" or "fast".
    path
        The ISA path the weights were packed for; runs use it.
    """

    def __init__(self, data: Any, mode: str, threads: Optional[int],
                 base_dir: Optional[Path], file: Optional[Path] = None) -> None:
        if mode not in MODES:
            raise ValueError(f"mode must be 'exact' or 'fast', got {mode!r}")
        self.mode: Mode = cast(Mode, mode)
        self.threads = None if threads is None else _args.threads(threads, "load")
        self.path = _paths.path()
        # fast mode in WebAssembly runs on the relaxed-SIMD module when there is one
        self._lib = _lib.lib if mode == "exact" else _lib.fast_lib
        self._handle = ctypes.c_void_p(0)
        # either the file's bytes, or its path for the runtime to read
        raw = b"" if data is None else bytes(data) if not isinstance(data, bytes) else data
        file_buf = ctypes.create_string_buffer(os.fsencode(file)) if file is not None else None
        base = os.fsencode(base_dir) if base_dir is not None else None
        base_buf = ctypes.create_string_buffer(base) if base is not None else None
        args = _abi.LoadArgs(
            data=(ctypes.cast(ctypes.c_char_p(raw), ctypes.c_void_p).value or 0) if raw else 0,
            size=len(raw), mode=MODES[mode], path=_paths.active_path_index(),
            max_threads=self.threads if self.threads is not None else _args.threads(None, "load"),
            base_dir=ctypes.addressof(base_buf) if base_buf is not None else 0,
            external_count=0, external=0, session=ctypes.addressof(self._handle),
            file=ctypes.addressof(file_buf) if file_buf is not None else 0)
        raise_status(self._lib, self._lib.sb_session_load(ctypes.addressof(args)), "load")
        self.inputs = [self._info(0, i) for i in range(self._lib.sb_session_io_count(self._handle, 0))]
        self.outputs = [self._info(1, i) for i in range(self._lib.sb_session_io_count(self._handle, 1))]
        self._input_codes = [self._io_dtype(0, i) for i in range(len(self.inputs))]
        self._output_index = {o.name: i for i, o in enumerate(self.outputs)}
        # read-only after load (one session may run from several threads at
        # once): the input names in order, and the C array of every output's
        # index, which a run that names no outputs passes as it is
        self._input_names = [i.name for i in self.inputs]
        self._input_set = frozenset(self._input_names)
        self._all_outputs = [o.name for o in self.outputs]
        self._all_indices = (ctypes.c_int64 * max(1, len(self.outputs)))(*range(len(self.outputs)))
        count = self._lib.sb_session_profile_count(self._handle)
        self._labels = [self._lib.sb_session_profile_label(self._handle, i).decode()
                        for i in range(count)]
        # each host thread's C argument structures, made on its first run and
        # reused (a session may run from several threads at once)
        self._per_thread = threading.local()
        # the nodes left to run; their (name, position in the file, label),
        # read from the runtime the first time node_profile is (one call per
        # node, which every load paid before: 0.2 ms of rapid-layout's 4-20 ms)
        self._node_count = int(self._lib.sb_session_node_count(self._handle))
        self._nodes: Optional[list[tuple[str, int, str]]] = None
        # what runs with profile=True add up (the npm package's model.profile
        # and model.nodeProfile)
        self._profile: dict[str, tuple[float, int]] = {}
        self._node_ns = [0] * self._node_count
        self._node_calls = [0] * self._node_count
        self._profile_lock = threading.Lock()

    def _node_table(self) -> list[tuple[str, int, str]]:
        """Each node left to run: (name, position in the file, label); read
        once (the caller holds the profile lock)."""
        if self._nodes is None:
            nodes = []
            for k in range(self._node_count):
                node = _abi.NodeInfo()
                raise_status(self._lib, self._lib.sb_session_node_info(
                    self._handle, k, ctypes.addressof(node)), "node")
                nodes.append((ctypes.string_at(node.name).decode("utf-8", "replace"),
                              int(node.file_index), self._labels[node.label]))
            self._nodes = nodes
        return self._nodes

    def _run_structures(self) -> "_RunStructures":
        structures = getattr(self._per_thread, "s", None)
        if structures is None:
            structures = _RunStructures(len(self._input_names), len(self.outputs))
            self._per_thread.s = structures
        return structures

    def _io_dtype(self, outputs: int, index: int) -> int:
        info = _abi.IoInfo()
        self._lib.sb_session_io_info(self._handle, outputs, index, ctypes.addressof(info))
        return int(info.dtype)

    def _info(self, outputs: int, index: int) -> TensorInfo:
        info = _abi.IoInfo()
        raise_status(self._lib, self._lib.sb_session_io_info(self._handle, outputs, index,
                                                             ctypes.addressof(info)), "io")
        name = ctypes.string_at(info.name).decode()
        shape: Optional[tuple[Union[int, str, None], ...]] = None
        if info.rank >= 0:
            dims: list[Union[int, str, None]] = []
            for d in range(info.rank):
                if info.dims[d] >= 0:
                    dims.append(int(info.dims[d]))
                elif info.dim_names[d]:
                    dims.append(ctypes.string_at(info.dim_names[d]).decode())
                else:
                    dims.append(None)
            shape = tuple(dims)
        return TensorInfo(name, _dtype_name(int(info.dtype)), shape)

    def __del__(self) -> None:
        handle = getattr(self, "_handle", None)
        if handle is not None and handle.value:
            self._lib.sb_session_free(handle)
            handle.value = None

    def __repr__(self) -> str:
        ins = ", ".join(f"{i.name}: {i.dtype}{list(i.shape) if i.shape is not None else ''}"
                        for i in self.inputs)
        return (f"<samebits.onnx.Session mode={self.mode!r} path={self.path!r} "
                f"nodes={self.node_count} inputs=({ins})>")

    @property
    def node_count(self) -> int:
        """Nodes left to run after loading (folded and absorbed ones are gone)."""
        return int(self._lib.sb_session_node_count(self._handle))

    @property
    def plan_count(self) -> int:
        """Plans made so far (one per set of input shapes)."""
        return int(self._lib.sb_session_plan_count(self._handle))

    def _feed(self, index: int, name: str, value: Any) -> tuple[_Feed, bool]:
        want = self._input_codes[index]
        if np is not None and isinstance(value, np.generic):   # a numpy scalar: as a 0-d array
            value = np.asarray(value)
        if np is not None and isinstance(value, np.ndarray):
            return _numpy_feed(name, value, want), True
        feed = _buffer_feed(name, value)
        if want and want != feed.dtype and feed.dtype != FLOAT and want in _RANGES:
            feed = _int_compatible_buffer(feed, want)
        return feed, False

    @property
    def profile(self) -> dict[str, tuple[float, int]]:
        """Seconds and node runs per operator type, added up over the runs
        made with ``profile=True`` (a copy; as the npm package's
        ``model.profile``)."""
        with self._profile_lock:
            return dict(self._profile)

    @property
    def node_profile(self) -> list[NodeTime]:
        """Each node's seconds and runs, added up over the runs made with
        ``profile=True``, in the order the nodes run (nodes that never ran
        left out; the slowest first: ``sorted(s.node_profile, key=lambda t:
        -t.seconds)``). A node with a subgraph (If, Loop, Scan) counts its
        whole subgraph."""
        with self._profile_lock:
            return [NodeTime(name, index, op, self._node_ns[k] * 1e-9, self._node_calls[k])
                    for k, (name, index, op) in enumerate(self._node_table())
                    if self._node_calls[k]]

    def reset_profile(self) -> None:
        """Forgets what runs with ``profile=True`` added to ``profile`` and
        ``node_profile`` (e.g. after warm-up runs)."""
        with self._profile_lock:
            self._profile.clear()
            self._node_ns = [0] * self._node_count
            self._node_calls = [0] * self._node_count

    def run(self, feeds: Mapping[str, Any], outputs: Optional[list[str]] = None, *,
            profile: Union[bool, None, MutableMapping[str, tuple[float, int]]] = None
            ) -> dict[str, Any]:
        """Runs the model: ``{input name: array}`` -> ``{output name: array}``.

        Inputs are numpy arrays or buffers (format 'f' for float32, integer
        formats for integer inputs). Outputs are numpy arrays when the
        inputs were (or when there are no inputs and numpy is present), else
        memoryviews. ``outputs`` selects some of the graph outputs.
        ``profile``: ``True`` adds, per operator type (a fused node as
        "Conv+relu"), the seconds its nodes took and how many ran to
        ``session.profile``, and each node's to ``session.node_profile``;
        a dict gains the per-type entries instead; ``None`` or ``False``
        (the default) times nothing.
        """
        if type(feeds) is not dict and not isinstance(feeds, Mapping):
            raise TypeError(f"run: feeds must be a mapping of input names to arrays, got "
                            f"{type(feeds).__name__}")
        # profile=True adds to the session's own dict, under its lock
        lock = self._profile_lock if profile is True else contextlib.nullcontext()
        if profile is None or profile is False:
            profile = None
        elif profile is True:
            profile = self._profile
        elif not isinstance(profile, MutableMapping):
            raise TypeError(f"run: profile must be True, False, None or a dict, got "
                            f"{type(profile).__name__}")
        names = self._input_names
        if len(feeds) != len(names) or not self._input_set.issuperset(feeds):
            unknown = [k for k in feeds if k not in self._input_set]
            if unknown:
                raise ValueError(f"run: {unknown[0]!r} is not an input of the model (inputs: "
                                 f"{names})")
            missing = [n for n in names if n not in feeds]
            raise ValueError(f"run: input {missing[0]!r} is missing")
        c = self._run_structures()
        if outputs is None:
            wanted, indices = self._all_outputs, self._all_indices
        else:
            wanted = list(outputs)
            for name in wanted:
                if name not in self._output_index:
                    raise ValueError(f"run: {name!r} is not an output of the model")
            indices = (ctypes.c_int64 * max(1, len(wanted)))(
                *[self._output_index[n] for n in wanted])
        if len(wanted) > len(self.outputs):   # (a name twice): more than the reused array holds
            results = (_abi.TensorArg * len(wanted))()
        else:
            results = c.results
        numpy_out = np is not None and not feeds
        tensors = c.tensors
        keep = []
        for i, name in enumerate(names):
            feed, numpy_in = self._feed(i, name, feeds[name])
            numpy_out = numpy_out or numpy_in
            rank = len(feed.shape)
            if rank > _abi.MAX_BATCH_DIMS:
                raise ValueError(f"input {name!r}: rank {rank} is not supported "
                                 f"(at most {_abi.MAX_BATCH_DIMS})")
            t = tensors[i]
            t.dtype, t.rank, t.data = feed.dtype, rank, feed.address
            t.dims[:rank] = feed.shape
            keep.append(feed)
        labels = len(self._labels)
        ns = (ctypes.c_int64 * max(1, labels))() if profile is not None else None
        calls = (ctypes.c_int64 * max(1, labels))() if profile is not None else None
        per_node = profile is self._profile
        nodes = self._node_count
        node_ns = (ctypes.c_int64 * max(1, nodes))() if per_node else None
        node_calls = (ctypes.c_int64 * max(1, nodes))() if per_node else None
        args = c.args
        args.output_count = len(wanted)
        args.output_indices = ctypes.addressof(indices)
        args.outputs = ctypes.addressof(results)
        args.profile_ns = ctypes.addressof(ns) if ns is not None else 0
        args.profile_calls = ctypes.addressof(calls) if calls is not None else 0
        args.max_threads = self.threads if self.threads is not None else _args.threads(None, "run")
        args.node_ns = ctypes.addressof(node_ns) if node_ns is not None else 0
        args.node_calls = ctypes.addressof(node_calls) if node_calls is not None else 0
        # (no use_path: the session's path was fixed at load, in sb_load_args)
        status = self._lib.sb_session_run(self._handle, c.args_address)
        raise_status(self._lib, status, "run")
        out = {}
        taken = 0   # buffers now owned by numpy arrays (numpy_out): freed with them
        owned = [numpy_out and int(results[k].dtype) != BFLOAT16 for k in range(len(wanted))]
        try:
            for k, name in enumerate(wanted):
                out[name] = _export(results[k], numpy_out)
                taken = k + 1
        finally:
            for k in range(len(wanted)):
                if k >= taken or not owned[k]:
                    self._lib.sb_buffer_free(ctypes.c_void_p(results[k].data))
        if profile is not None:
            assert ns is not None and calls is not None
            with lock:
                for i, label in enumerate(self._labels):
                    if calls[i]:
                        seconds, count = profile.get(label, (0.0, 0))
                        profile[label] = (seconds + ns[i] * 1e-9, count + int(calls[i]))
                if node_ns is not None and node_calls is not None:
                    for k in range(nodes):
                        self._node_ns[k] += int(node_ns[k])
                        self._node_calls[k] += int(node_calls[k])
        return out


class _RunStructures:
    """One host thread's sb_run_args and its input and output arrays for one
    session, reused run after run (the C side reads them during the call
    only)."""

    __slots__ = ("tensors", "results", "args", "args_address")

    def __init__(self, inputs: int, outputs: int) -> None:
        self.tensors = (_abi.TensorArg * max(1, inputs))()
        self.results = (_abi.TensorArg * max(1, outputs))()
        self.args = _abi.RunArgs(inputs=ctypes.addressof(self.tensors))
        self.args_address = ctypes.addressof(self.args)


def supported_operators() -> list[str]:
    """The operator types (default ONNX domain) the runtime can load."""
    return [(_lib.lib.sb_onnx_operator_name(i) or b"").decode()
            for i in range(_lib.lib.sb_onnx_operator_count())]


if sys.byteorder != "little":   # every platform samebits builds for is little-endian
    raise ImportError("samebits.onnx: big-endian hosts are not supported")
