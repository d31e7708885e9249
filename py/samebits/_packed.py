"""samebits.pack: a right-hand matrix packed once and multiplied many times."""
from __future__ import annotations

import ctypes
from typing import Any

from . import _args, _lib, _operands, _paths


class PackedMatrix:
    """B (k x n) in the packed layout of one ISA path, for ``matmul(a, packed)``.

    The products have the same bits as ``matmul(a, b)`` on the unpacked matrix.
    The packing belongs to the path that was active when it was made; using
    it while another path is active raises ValueError. It holds a copy: later
    changes to ``b`` do not reach it.
    """

    def __init__(self, b: Any, threads: int | None = None) -> None:
        nthreads = _args.threads(threads, "pack")
        source = _operands.as_input(b, "b")
        _args.shape(source.shape, "b", "pack")
        self.path: str = _paths.path()
        self.shape: tuple[int, int] = source.shape
        index = _paths.path_index(self.path)
        k, n = self.shape
        self.nbytes: int = _lib.lib.sb_packed_b_bytes(index, k, n)
        if (self.nbytes == 0 and k * n) or self.nbytes > _args.MAX_BYTES:
            # 0 is the C library's answer for a size it cannot hold in size_t.
            raise ValueError(f"pack: b of shape {self.shape} is too large to pack "
                             f"(more than 2**62 bytes)")
        # 64 spare bytes so that the packed data can start on a cache line.
        self._storage = (ctypes.c_char * (self.nbytes + 64))()
        base = ctypes.addressof(self._storage)
        self._address = (base + 63) & ~63
        status = _lib.lib.sb_pack_b(index, nthreads, k, n,
                                    source.ptr, source.row_stride, source.col_stride,
                                    self._address, self.nbytes)
        _lib.check_status(status, "pack")
        self._numpy_source = _operands.is_numpy(b)

    @property
    def address(self) -> int:
        return self._address

    def __repr__(self) -> str:
        return f"PackedMatrix(shape={self.shape}, path={self.path!r}, nbytes={self.nbytes})"


def pack(b: Any, *, threads: int | None = None) -> PackedMatrix:
    """Packs the (k, n) float32 matrix ``b`` for repeated ``matmul(a, packed)``.

    Packing is done for the active path (``samebits.path()``); ``b`` takes
    the same forms as in ``matmul``. Returns a PackedMatrix.
    """
    return PackedMatrix(b, threads)
