"""The hash suite: SHA-256 of the outputs of a fixed set of products.

Exact-mode lines must be identical on every machine, path, thread count and
runtime; fast-mode lines show same-machine repeatability. docs/hash-suite.md
defines the suite exactly, so a port can regenerate it.
"""
from __future__ import annotations

import ctypes
import hashlib
import time
from typing import Iterable, NamedTuple

from . import _lib, _paths, _testdata, _threads
from .shapes import MODELS

SUITE_VERSION = 1
NSPECIAL = 8


class Case(NamedTuple):
    group: str
    m: int
    n: int
    k: int
    a_transposed: bool = False
    b_transposed: bool = False
    pad_a: int = 0
    pad_b: int = 0
    pad_c: int = 0


def sweep_cases() -> list[Case]:
    cubes = [Case("sweep", s, s, s) for s in range(257)]
    skewed = [Case("sweep", s, (3 * s + 1) % 257, (5 * s + 2) % 257) for s in range(257)]
    return cubes + skewed


def random_cases(count: int = 48) -> list[Case]:
    cases = []
    for r in range(count):
        d = [_testdata.mix32(0x70000000 + 8 * r + t) for t in range(8)]
        cases.append(Case("random", 1 + d[0] % 300, 1 + d[1] % 300, 1 + d[2] % 300,
                          d[3] % 2 == 1, d[4] % 2 == 1, d[5] % 8, d[6] % 8, d[7] % 8))
    return cases


def model_cases() -> list[Case]:
    return [Case("models", p.m, p.n, p.k, b_transposed=p.b_transposed)
            for products in MODELS.values() for p in products]


def suite(groups: Iterable[str] = ("sweep", "random", "models")) -> list[Case]:
    """The products of the suite, in hashing order."""
    makers = {"sweep": sweep_cases, "random": random_cases, "models": model_cases}
    unknown = set(groups) - set(makers)
    if unknown:
        raise ValueError(f"unknown hash groups {sorted(unknown)}; known: {list(makers)}")
    return [case for g in ("sweep", "random", "models") if g in groups for case in makers[g]()]


class _Operand(NamedTuple):
    buffer: ctypes.Array
    row: int
    col: int


def _operand(rows: int, cols: int, transposed: bool, pad: int, seed: int) -> _Operand:
    """A rows x cols matrix stored row-major (or as its transpose) with `pad`
    extra elements per stored row; the padding holds test values too."""
    stored_rows, stored_cols = (cols, rows) if transposed else (rows, cols)
    ld = stored_cols + pad
    buffer = _testdata.float_buffer(stored_rows * ld, seed, NSPECIAL)
    return _Operand(buffer, 1, ld) if transposed else _Operand(buffer, ld, 1)


def case_output(case: Case, index: int, mode: int, path: int, threads: int) -> bytes:
    """The m x n result of one case as little-endian float32 bytes, row-major."""
    a = _operand(case.m, case.k, case.a_transposed, case.pad_a, 2 * index + 1)
    b = _operand(case.k, case.n, case.b_transposed, case.pad_b, 2 * index + 2)
    ldc = case.n + case.pad_c
    c = _testdata.float_buffer(case.m * ldc, 0x80000000 + index, 0)  # garbage to overwrite
    library = _lib.lib if mode == _lib.MODE_EXACT else _lib.fast_lib
    status = library.sb_sgemm(path, mode, threads, case.m, case.n, case.k,
                               ctypes.addressof(a.buffer), a.row, a.col,
                               ctypes.addressof(b.buffer), b.row, b.col,
                               ctypes.addressof(c), ldc)
    _lib.check_status(status, "hash suite")
    raw = memoryview(c).cast("B")
    row_bytes = case.n * 4
    if case.pad_c == 0:
        return bytes(raw[: case.m * row_bytes])
    return b"".join(bytes(raw[i * ldc * 4: i * ldc * 4 + row_bytes]) for i in range(case.m))


def suite_digest(mode: str, path: str, threads: int,
                 groups: Iterable[str] = ("sweep", "random", "models"),
                 flip_bit: int | None = None) -> str:
    """SHA-256 over the outputs of every case of the suite, in order.

    flip_bit flips that bit of the first nonempty output before hashing: a
    negative control proving that a comparison of lines notices one bit.
    """
    from ._matmul import mode_code
    code, index = mode_code(mode), _paths.path_index(path)
    digest = hashlib.sha256()
    for i, case in enumerate(suite(groups)):
        out = case_output(case, i, code, index, threads)
        if flip_bit is not None and out:
            flipped = bytearray(out)
            flipped[(flip_bit // 8) % len(out)] ^= 1 << (flip_bit % 8)
            out, flip_bit = bytes(flipped), None
        digest.update(out)
    return digest.hexdigest()


def format_line(mode: str, path: str, threads: int, digest: str) -> str:
    return f"{mode:<5} {path:<6} threads={threads:<3} sha256={digest}"


def parse_line(line: str) -> tuple[str, str, int, str]:
    """(mode, path, threads, digest) of a line printed by format_line."""
    mode, path, threads, digest = line.split()
    return mode, path, int(threads.split("=")[1]), digest.split("=")[1]


def hash_lines(modes: Iterable[str] = ("exact", "fast"), paths: Iterable[str] | None = None,
               threads: Iterable[int] | None = None,
               groups: Iterable[str] = ("sweep", "random", "models"),
               timings: list | None = None, flip_bit: int | None = None) -> list[str]:
    """One line per (mode, path, threads); threads default to 1 and every core."""
    paths = list(paths) if paths is not None else _paths.paths()
    if threads is None:
        cores = _threads.default_threads()
        threads = [1] if cores == 1 else [1, cores]
    groups = tuple(groups)
    lines = []
    for mode in modes:
        for path in paths:
            for t in threads:
                start = time.perf_counter()
                digest = suite_digest(mode, path, t, groups, flip_bit)
                if timings is not None:
                    timings.append(time.perf_counter() - start)
                lines.append(format_line(mode, path, t, digest))
    return lines


def header(groups: Iterable[str] = ("sweep", "random", "models")) -> str:
    cases = suite(groups)
    counts = {g: sum(1 for c in cases if c.group == g) for g in ("sweep", "random", "models")}
    parts = ", ".join(f"{n} {g}" for g, n in counts.items() if n)
    return f"# samebits hash suite v{SUITE_VERSION}: {parts} products"
