"""samebits.pack: a right-hand matrix packed once and multiplied many times.

Also the storage that PackedMatrix and PackedConv2d share (PackedData): the
packed bytes at a 64-byte-aligned address inside memory the object owns.
"""
from __future__ import annotations

import ctypes
from typing import Any

from .._binding import args as _args, lib as _lib, operands as _operands, paths as _paths

# The version of the pickled state; a state of another version is refused.
_STATE_VERSION = 1

class PackedData:
    """nbytes of packed data for one ISA path, owned by this object.

    The data starts on a cache line, so the object keeps its own buffer and
    the aligned address inside it. Copies (copy.copy, copy.deepcopy) and
    pickles carry the bytes and the metadata, never the address: each copy
    gets fresh storage of its own, so it stays valid when the original is
    freed. A packing made for a path this machine cannot run still loads;
    using it raises the usual ValueError about the path.
    """

    # Subclasses set these: the operation and the argument named in messages,
    # the rank of `shape`, and the attributes pickled besides the bytes.
    _WHAT = ""
    _SOURCE = ""
    _NDIM = 0
    _STATE: tuple[str, ...] = ("path", "shape", "nbytes", "_numpy_source")

    path: str
    shape: tuple[int, ...]
    nbytes: int
    _numpy_source: bool

    def _packed_bytes(self, index: int) -> int:
        """The byte size the C library gives this packing under path `index`."""
        raise NotImplementedError

    def _allocate(self) -> None:
        """Fresh storage for nbytes, 64-byte aligned, zeroed; a MemoryError
        that says what it was for when it cannot be had."""
        size = self.nbytes + 64   # 64 spare bytes so that the data can start on a cache line
        try:
            self._storage = (ctypes.c_char * size)()
        except (MemoryError, OverflowError):   # ctypes raises these without a message
            raise _args.no_memory(self._WHAT, "the packed data", self.shape, size) from None
        self._address = (ctypes.addressof(self._storage) + 63) & ~63

    def _set_nbytes(self, index: int) -> None:
        """Asks the C library for the packing's size, refusing one it cannot hold."""
        nbytes = self._packed_bytes(index)
        elements = 1
        for d in self.shape:
            elements *= d
        if (nbytes == 0 and elements) or nbytes > _args.MAX_BYTES:
            # (0 is the C library's answer for a size it cannot hold.)
            raise ValueError(f"{self._WHAT}: {self._SOURCE} of shape {self.shape} is too large "
                             f"to pack (more than 2**62 bytes)")
        self.nbytes = nbytes

    @property
    def address(self) -> int:
        return self._address

    def __getstate__(self) -> dict[str, Any]:
        state = {name: getattr(self, name) for name in self._STATE}
        state["version"] = _STATE_VERSION
        state["data"] = ctypes.string_at(self._address, self.nbytes)
        return state

    def _state_ok(self, state: dict[str, Any]) -> bool:
        """Whether a subclass's own attributes in `state` are well formed."""
        return True

    def __setstate__(self, state: dict[str, Any]) -> None:
        what = f"{self._WHAT}: unpickling a {type(self).__name__}"
        if not isinstance(state, dict) or state.get("version") != _STATE_VERSION:
            raise ValueError(f"{what}: not a state of this samebits version")
        data, shape, nbytes = state.get("data"), state.get("shape"), state.get("nbytes")
        # The state decides how far C reads: refuse one that does not hang together.
        if (not isinstance(data, bytes) or type(nbytes) is not int or len(data) != nbytes
                or not isinstance(state.get("path"), str)
                or not isinstance(state.get("_numpy_source"), bool)
                or not isinstance(shape, tuple) or len(shape) != self._NDIM
                or not all(type(d) is int and 0 <= d <= _args.LIMIT for d in shape)
                or not self._state_ok(state)):
            raise ValueError(f"{what}: the state is inconsistent")
        for name in self._STATE:
            setattr(self, name, state[name])
        if self.path in _paths.built_paths() and self._packed_bytes(
                _paths.ALL_PATHS.index(self.path)) != nbytes:
            # A path this library has: the data must be the size it packs to.
            raise ValueError(f"{what}: {nbytes} bytes for path {self.path!r} and shape "
                             f"{shape}, but this library packs that into another size")
        self._allocate()
        ctypes.memmove(self._address, data, nbytes)


class PackedMatrix(PackedData):
    """B (k x n) in the packed layout of one ISA path, for ``matmul(a, packed)``.

    The products have the same bits as ``matmul(a, b)`` on the unpacked matrix.
    The packing belongs to the path that was active when it was made; using
    it while another path is active raises ValueError. It holds a copy: later
    changes to ``b`` do not reach it. Copies and pickles hold their own.
    """

    _WHAT, _SOURCE, _NDIM = "pack", "b", 2

    def __init__(self, b: Any, threads: int | None = None, transpose: bool = False) -> None:
        what, name = ("pack_linear", "weight") if transpose else ("pack", "b")
        nthreads = _args.threads(threads, what)
        source = _operands.as_operand(b, name, 2)
        _args.shape(source.shape, name, what)
        if transpose:   # weight (out_features, in_features) packed as B = weight.T
            source = _operands.Operand(source.ptr, source.shape[::-1], source.strides[::-1],
                                       source.keep, source.zero_copy)
        self.path: str = _paths.path()
        # 2-D: as_operand(b, name, 2) checked it
        self.shape: tuple[int, int] = source.shape   # type: ignore[assignment]
        index = _paths.path_index(self.path)
        k, n = self.shape
        self._set_nbytes(index)
        self._allocate()
        status = _lib.lib.sb_pack_b(index, nthreads, k, n, source.ptr, *source.strides,
                                    self._address, self.nbytes)
        _lib.check_status(status, what)
        self._numpy_source = _operands.is_numpy(b)

    def _packed_bytes(self, index: int) -> int:
        nbytes: int = _lib.lib.sb_packed_b_bytes(index, *self.shape)
        return nbytes

    def __repr__(self) -> str:
        return f"PackedMatrix(shape={self.shape}, path={self.path!r}, nbytes={self.nbytes})"


def pack(b: Any, *, threads: int | None = None) -> PackedMatrix:
    """Packs the (k, n) float32 matrix ``b`` for repeated ``matmul(a, packed)``.

    Packing is done for the active path (``samebits.path()``); ``b`` takes
    the same forms as in ``matmul``. Returns a PackedMatrix.
    """
    return PackedMatrix(b, threads)


def pack_linear(weight: Any, *, threads: int | None = None) -> PackedMatrix:
    """Packs the (out_features, in_features) weight of a linear layer once for
    repeated ``linear(x, packed)``: the PackedMatrix of ``weight.T`` (shape
    (in_features, out_features)), the same as ``pack(weight.T)``.
    """
    return PackedMatrix(weight, threads, transpose=True)
