"""The models hash suite: the SHA-256 of the exact outputs of samebits'
reference networks (samebits.onnx.reference) at fixed inputs, run through
samebits.onnx. Exact-mode lines must be identical on every machine, path,
thread count and runtime.

A line reads ``models resnet50 exact avx512 threads=1 sha256=<hex>``. The
digest is the SHA-256 of the network's outputs, in graph order, each as
little-endian float32 bytes in C order (an integer output: little-endian
int64).

Running a network needs only its bytes and its inputs, so that Pyodide
(without numpy or onnx) can compute the same lines from files built
natively: ``pack_feeds`` / ``unpack_feeds`` carry the inputs in a small
container (a JSON header line, then the raw arrays).
"""
from __future__ import annotations

import hashlib
import json
import struct
import time
from typing import Any, Iterable, Mapping, Optional

from .._binding import paths as _paths

MODELS_SUITE_VERSION = 1
# network -> batch of its fixed input (MiniLM at 2: one entry's mask covers
# part of the sequence, so the mask path is hashed too)
SUITE_NETWORKS = {"resnet50": 1, "mobilenet_v3_large": 1, "bert_base": 1, "minilm_l6": 2,
                  "whisper_small_encoder": 1}

_DTYPES = {"float32": ("f", 4), "int64": ("q", 8), "int32": ("i", 4)}


def pack_feeds(feeds: Mapping[str, Any]) -> bytes:
    """numpy inputs -> bytes: one JSON line [[name, dtype, shape], ...], then
    each array's little-endian bytes in C order."""
    import numpy as np
    header, blobs = [], []
    for name, value in feeds.items():
        shape = np.shape(value)
        a = np.ascontiguousarray(value).reshape(shape)   # (which makes a 0-d value 1-d)
        dtype = {np.dtype(np.float32): "float32", np.dtype(np.int64): "int64",
                 np.dtype(np.int32): "int32"}.get(a.dtype)
        if dtype is None:
            raise TypeError(f"pack_feeds: {name!r} has dtype {a.dtype}; float32, int64 and "
                            f"int32 are supported")
        header.append([name, dtype, list(a.shape)])
        blobs.append(a.astype(a.dtype.newbyteorder("<"), copy=False).tobytes())
    return json.dumps(header).encode() + b"\n" + b"".join(blobs)


def unpack_feeds(data: bytes) -> dict[str, memoryview]:
    """The inverse of pack_feeds, without numpy: {name: shaped memoryview}."""
    view = memoryview(data)
    end = bytes(view[:4096]).index(b"\n") if b"\n" in bytes(view[:4096]) else -1
    if end < 0:
        raise ValueError("unpack_feeds: no header line")
    header = json.loads(bytes(view[:end]).decode())
    at = end + 1
    out: dict[str, memoryview] = {}
    for name, dtype, shape in header:
        fmt, size = _DTYPES[dtype]
        n = 1
        for d in shape:
            n *= d
        raw = bytearray(view[at:at + n * size])
        if len(raw) != n * size:
            raise ValueError(f"unpack_feeds: {name!r} is truncated")
        at += n * size
        # (typeshed's memoryview.cast overloads take literal formats; fmt is one of _DTYPES')
        m = memoryview(raw).cast(fmt)   # type: ignore[call-overload]
        # (a 0-d input, shape [], is a 0-d view: silero-vad's sample rate)
        out[name] = m.cast("B").cast(fmt, shape) if n else m
    return out


def output_digest(outputs: Mapping[str, Any]) -> str:
    """SHA-256 over the outputs' bytes, in order (see the module docstring)."""
    h = hashlib.sha256()
    for value in outputs.values():
        view = memoryview(value)
        fmt = view.format.lstrip("<=@")
        if fmt in ("f", "q", "l"):
            h.update(view.tobytes())
        else:   # another integer or bool type: as int64, one flat list in C order
            flat = (view.cast("B").cast(fmt).tolist()   # type: ignore[call-overload]  # a str format
                    if view.nbytes else [])
            h.update(struct.pack(f"<{len(flat)}q", *flat))
    return h.hexdigest()


def network_digest(model: bytes, feeds: Mapping[str, Any], mode: str = "exact",
                   path: Optional[str] = None, threads: int = 1) -> str:
    """The digest of one network's outputs: loaded and run by samebits.onnx."""
    from . import load
    with _paths.use_path(path or _paths.path()):
        session = load(model, mode=mode, threads=threads)
        return output_digest(session.run(feeds))


def format_line(network: str, mode: str, path: str, threads: int, digest: str) -> str:
    return f"models {network} {mode:<5} {path:<6} threads={threads:<3} sha256={digest}"


def parse_line(line: str) -> tuple[str, str, str, int, str]:
    """(network, mode, path, threads, digest) of a line."""
    f = line.split()
    if len(f) != 6 or f[0] != "models" or not f[4].startswith("threads=") or \
            not f[5].startswith("sha256="):
        raise ValueError(f"not a models hash line: {line!r}")
    return f[1], f[2], f[3], int(f[4].split("=")[1]), f[5].split("=")[1]


def header() -> str:
    nets = ", ".join(f"{n} (batch {b})" for n, b in SUITE_NETWORKS.items())
    return f"# samebits models suite v{MODELS_SUITE_VERSION}: {nets}"


def build_files(networks: Iterable[str] = SUITE_NETWORKS) -> dict[str, tuple[bytes, bytes]]:
    """Native only (onnx, numpy): {network: (model bytes, packed feeds)}; a
    network outside the suite (reference.SMALL_NETWORKS) at batch 1."""
    from . import reference
    return {n: (reference.build(n), pack_feeds(reference.inputs(n, SUITE_NETWORKS.get(n, 1))))
            for n in networks}


def lines(files: Mapping[str, tuple[bytes, bytes]], modes: Iterable[str] = ("exact",),
          paths: Optional[Iterable[str]] = None, threads: Iterable[int] = (1,),
          timings: Optional[list[float]] = None) -> list[str]:
    """One line per (network, mode, path, threads) from built files."""
    out = []
    for network, (model, packed) in files.items():
        feeds = unpack_feeds(packed)
        for mode in modes:
            for path in (list(paths) if paths is not None else _paths.paths()):
                for t in threads:
                    start = time.perf_counter()
                    digest = network_digest(model, feeds, mode, path, t)
                    if timings is not None:
                        timings.append(time.perf_counter() - start)
                    out.append(format_line(network, mode, path, t, digest))
    return out
