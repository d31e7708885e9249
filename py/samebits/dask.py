"""samebits on a Dask distributed cluster: batch inference of an ONNX model
and large exact matrix products, with the bits of one process.

    from dask.distributed import Client
    import samebits.dask

    client = Client("tcp://scheduler:8786")       # or Client() for a local cluster
    out = samebits.dask.run_model(client, "model.onnx", {"input": batch}, mode="exact")
    c = samebits.dask.matmul(client, a, b, mode="exact")

Why the bits do not change: in exact mode every output element of a
samebits kernel is a fixed sequence of operations on its own inputs, so a
sample's outputs do not depend on which other samples share its batch, and a
block of a matrix product does not depend on the other blocks (each block
takes the whole k dimension: k is never split, so every sum keeps its
order). Workers may have different CPUs and ISA paths; exact results are
the same on all of them.

Needs dask[distributed] and numpy on the client and the workers, and
samebits installed on the workers.
"""
from __future__ import annotations

import hashlib
import os
from typing import TYPE_CHECKING, Any, Mapping, Optional, Union, cast

import numpy as np

from ._typing import Mode

if TYPE_CHECKING:
    from .onnx import Session

# per worker process: (model digest, mode, threads) -> Session
_SESSIONS: dict[tuple[str, str, Optional[int]], Session] = {}


def _session(model: bytes, digest: str, mode: str, threads: Optional[int]) -> Session:
    """The worker's loaded session for this model (loaded once per process)."""
    from . import onnx as sb_onnx
    key = (digest, mode, threads)
    if key not in _SESSIONS:
        _SESSIONS[key] = sb_onnx.load(model, mode=mode, threads=threads)
    return _SESSIONS[key]


def _run_slice(model: bytes, digest: str, feeds: dict[str, np.ndarray], mode: str,
               threads: Optional[int]) -> dict[str, Any]:
    return _session(model, digest, mode, threads).run(feeds)


def run_model(client: Any, model: Union[str, os.PathLike[str], bytes], feeds: Mapping[str, Any], *,
              mode: str = "exact", slice_size: int = 1, threads: Optional[int] = 1,
              batch_inputs: Optional[list[str]] = None) -> dict[str, np.ndarray]:
    """Runs an ONNX model over a batch, one slice of `slice_size` samples per
    task, and joins the outputs along the first axis.

    Parameters
    ----------
    client
        A dask.distributed Client.
    model
        A path to an .onnx file (read here, sent to the workers once) or its bytes.
    feeds
        {input name: numpy array}; the inputs named in `batch_inputs` (default:
        every input) are cut along axis 0, the others sent whole to every task.
    mode, threads
        As in samebits.onnx.load; threads per task (default 1: one task per core).
    slice_size
        Samples per task (>= 1).

    Returns {output name: numpy array}, equal bit for bit in exact mode to
    one process running the whole batch.
    """
    if isinstance(model, (str, os.PathLike)):
        with open(model, "rb") as f:
            model = f.read()
    if not isinstance(model, (bytes, bytearray)):
        raise TypeError(f"run_model: model must be a path or bytes, got {type(model).__name__}")
    if isinstance(slice_size, bool) or not isinstance(slice_size, int) or slice_size < 1:
        raise ValueError(f"run_model: slice_size must be a positive int, got {slice_size!r}")
    names = list(feeds) if batch_inputs is None else list(batch_inputs)
    arrays = {k: np.asarray(v) for k, v in feeds.items()}
    sizes = {arrays[k].shape[0] if arrays[k].ndim else None for k in names}
    if len(sizes) != 1 or None in sizes:
        raise ValueError(f"run_model: the batch inputs {names} must share their first "
                         f"dimension, got shapes {[arrays[k].shape for k in names]}")
    batch = cast(int, sizes.pop())   # one size, not None: checked above
    digest = hashlib.sha256(bytes(model)).hexdigest()
    model_future = client.scatter(bytes(model), broadcast=True)
    futures = []
    for start in range(0, batch, slice_size):
        part = {k: (v[start:start + slice_size] if k in names else v) for k, v in arrays.items()}
        futures.append(client.submit(_run_slice, model_future, digest, part, mode, threads,
                                     pure=False))
    results = client.gather(futures)
    if not results:
        raise ValueError("run_model: the batch is empty")
    return {name: np.concatenate([r[name] for r in results], axis=0) for name in results[0]}


def _block(a: np.ndarray, b: np.ndarray, mode: Mode, threads: Optional[int]) -> np.ndarray:
    import samebits
    product: np.ndarray = samebits.matmul(a, b, mode=mode, threads=threads)
    return product


def matmul(client: Any, a: Any, b: Any, *, mode: Mode = "exact", block: tuple[int, int] = (1024, 1024),
           threads: Optional[int] = 1) -> np.ndarray:
    """a @ b for 2-D float32 arrays, as tasks over blocks of rows of a and
    columns of b; k is never split, so each block is computed as samebits
    computes it whole. Returns a numpy array (equal bit for bit in exact mode
    to samebits.matmul(a, b, mode="exact"))."""
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype != np.float32 or b.dtype != np.float32:
        raise TypeError(f"matmul: a and b must be float32, got {a.dtype} and {b.dtype}")
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[0]:
        raise ValueError(f"matmul: shapes {a.shape} and {b.shape} are not (m, k) and (k, n)")
    bm, bn = block
    if min(bm, bn) < 1:
        raise ValueError(f"matmul: block must hold positive sizes, got {block}")
    m, n = a.shape[0], b.shape[1]
    rows = [client.scatter(a[i:i + bm]) for i in range(0, m, bm)]
    cols = [client.scatter(np.ascontiguousarray(b[:, j:j + bn])) for j in range(0, n, bn)]
    grid = [[client.submit(_block, r, c, mode, threads, pure=False) for c in cols] for r in rows]
    return np.block([[f for f in row] for row in client.gather(grid)]) if m and n else \
        np.zeros((m, n), np.float32)
