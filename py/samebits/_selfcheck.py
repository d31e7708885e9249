"""A fast-mode check that runs anywhere samebits runs, Pyodide included.

fast_check() multiplies a few portable test matrices (docs/test-values.md,
no special values) in fast and exact mode on one thread and checks every fast
output against a float64 reference computed in Python:

    |c - ref64| <= k * 2**-24 * sum_p |a_ip * b_pj| + 1e-30

It needs no numpy (the browser pages and the Node runner call it), and it
returns SHA-256 digests of the fast outputs so that a caller can compare them
with another runtime's (fast mode in WebAssembly with relaxed SIMD computes
the same fused operations in the same order as a native FMA path).
"""
from __future__ import annotations

import hashlib
import operator
from typing import Any, Iterable

from . import _testdata
from ._binding import info as _info, lib as _lib, paths as _paths
from ._ops import matmul as _matmul

# (m, k, n): ragged tiles, one and several k-blocks, a single row.
SHAPES = ((5, 37, 11), (50, 300, 33), (6, 513, 16), (1, 768, 40), (70, 1000, 9))
EPS32 = 2.0 ** -24


def _matrix(rows: int, cols: int, seed: int) -> tuple[memoryview[float], list[float]]:
    buf = _testdata.float_buffer(rows * cols, seed, 0)
    view = memoryview(buf).cast("B").cast("f", (rows, cols))
    return view, list(buf)[:rows * cols]


def _flat(result: Any) -> tuple[bytes, list[float]]:
    view = memoryview(result).cast("B")
    data = bytes(view)
    return data, list(memoryview(data).cast("f"))


def fast_check(shapes: Iterable[tuple[int, int, int]] = SHAPES, path: str | None = None) -> dict[str, Any]:
    """Runs the check on `path` (default: the active one); returns a dict:
    ok, worst (largest error / bound), fast_differs (outputs where fast and
    exact differ), per-shape rows with the fast output's sha256, and which
    library fast mode used and whether it fuses."""
    if path is None:
        path = _paths.path()
    rows, worst, ok, differs_total = [], 0.0, True, 0
    with _paths.use_path(path):
        for index, (m, k, n) in enumerate(shapes):
            a, av = _matrix(m, k, 0x5EED0000 + 2 * index)
            b, bv = _matrix(k, n, 0x5EED0001 + 2 * index)
            fast_bytes, fast = _flat(_matmul.matmul(a, b, mode="fast", threads=1))
            _, exact = _flat(_matmul.matmul(a, b, mode="exact", threads=1))
            columns = [bv[j::n] for j in range(n)]
            shape_worst, differs = 0.0, 0
            for i in range(m):
                arow = av[i * k:(i + 1) * k]
                for j in range(n):
                    terms = list(map(operator.mul, arow, columns[j]))
                    ref = sum(terms)
                    bound = k * EPS32 * sum(map(abs, terms)) + 1e-30
                    c = fast[i * n + j]
                    ratio = abs(c - ref) / bound
                    if not ratio <= 1.0:  # NaN fails too
                        ok = False
                    shape_worst = max(shape_worst, ratio)
                    differs += c != exact[i * n + j]
            worst = max(worst, shape_worst)
            differs_total += differs
            rows.append({"m": m, "k": k, "n": n, "worst": shape_worst, "fast_differs": differs,
                         "fast_sha256": hashlib.sha256(fast_bytes).hexdigest()})
    info = _info.info()
    return {"ok": ok, "worst": worst, "fast_differs": differs_total, "path": path,
            "fused": info["fused_fast_mode"].get(path, False),
            "fast_library": _lib.FAST_LIBRARY_PATH, "library": _lib.LIBRARY_PATH,
            "fast_library_note": _lib.FAST_LIBRARY_NOTE, "shapes": rows}
