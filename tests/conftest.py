"""Shared fixtures: the paths to test, the oracle, raw calls into the library."""
from __future__ import annotations

import copy
import hashlib
import os
import pickle
import shutil

import numpy as np
import pytest

import samebits
from samebits._binding import lib as _lib, paths as _paths

lib = _lib.lib

# Test modules share data across the layer folders (the hosts' tests read
# helpers of the graph tests, such as test_core_runtime.add_chain): every folder on
# the import path, whichever files a run collects.
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

for _layer in ("kernels", "graph", "hosts", "builds"):
    _folder = str(Path(__file__).resolve().parent / _layer)
    if _folder not in sys.path:
        sys.path.append(_folder)


def require_tool(tool: str) -> str:
    """The path of a program the test needs; a skip where it is missing, a
    failure under CI (make deps installs it there)."""
    found = shutil.which(tool)
    if found:
        return found
    message = f"{tool} is not installed (make deps installs it)"
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


def path_params() -> list:
    """Every path samebits knows; those this machine cannot run are skipped, with the reason."""
    params = []
    for name in _paths.ALL_PATHS:
        try:
            _paths.path_index(name)
            marks = []
        except ValueError as err:
            marks = [pytest.mark.skip(reason=str(err))]
        params.append(pytest.param(name, marks=marks, id=name))
    return params


@pytest.fixture(params=path_params())
def path(request) -> str:
    return request.param


def exact_oracle(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The exact-mode definition written in numpy float32: one accumulator per
    output from +0, products added in increasing k, each operation rounded to
    float32 on its own, NaN stored as 0x7FC00000."""
    m, k = a.shape
    n = b.shape[1]
    acc = np.zeros((m, n), dtype=np.float32)
    with np.errstate(all="ignore"):
        for p in range(k):
            prod = np.multiply(a[:, p:p + 1], b[p:p + 1, :], dtype=np.float32)
            acc = np.add(acc, prod, dtype=np.float32)
    bits = acc.view(np.uint32)
    bits[np.isnan(acc)] = 0x7FC00000
    return acc


def path_or_skip(name: str) -> None:
    """Skips (with the reason) a test of a path this machine cannot run."""
    if name not in samebits.paths():
        pytest.skip(f"path {name} cannot run on this CPU or is not built")


def bits(x) -> np.ndarray:
    return np.ascontiguousarray(np.asarray(x, dtype=np.float32)).view(np.uint32)


def assert_same_bits(got, want, what: str) -> None:
    g, w = bits(got), bits(want)
    if g.shape != w.shape:
        raise AssertionError(f"{what}: shape {g.shape} != {w.shape}")
    diff = np.argwhere(g != w)
    if diff.size:
        i, j = diff[0]
        raise AssertionError(
            f"{what}: {len(diff)} outputs differ; first at ({i}, {j}): "
            f"got 0x{int(g[i, j]):08x} want 0x{int(w[i, j]):08x}")


def test_values(shape, seed: int, nspecial: int = 0) -> np.ndarray:
    """The portable test values (tiny magnitudes and specials included) as an array."""
    count = int(np.prod(shape))
    buf = np.empty(max(count, 1), dtype=np.float32)
    lib.sb_fill_test_values(buf.ctypes.data, count, seed & 0xFFFFFFFF, nspecial)
    return buf[:count].reshape(shape)


test_values.__test__ = False  # a helper, not a test


def raw_sgemm(path_name: str, mode: str, threads: int, a: np.ndarray, b: np.ndarray,
              out: np.ndarray) -> None:
    """sb_sgemm on numpy views, skipping the Python layer (for sweeps of many calls)."""
    code = samebits._ops.products.mode_code(mode)
    status = lib.sb_sgemm(_paths.path_index(path_name), code, threads,
                          a.shape[0], b.shape[1], a.shape[1],
                          a.ctypes.data, a.strides[0] // 4, a.strides[1] // 4,
                          b.ctypes.data, b.strides[0] // 4, b.strides[1] // 4,
                          out.ctypes.data, out.strides[0] // 4)
    assert status == 0, status


def naive(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The C reference loop (sb_sgemm_naive)."""
    m, k = a.shape
    n = b.shape[1]
    out = np.empty((m, n), dtype=np.float32)
    status = lib.sb_sgemm_naive(m, n, k, a.ctypes.data, a.strides[0] // 4, a.strides[1] // 4,
                                b.ctypes.data, b.strides[0] // 4, b.strides[1] // 4,
                                out.ctypes.data, n)
    assert status == 0
    return out


@pytest.fixture
def flush_to_zero():
    """Sets flush-to-zero and denormals-are-zero on this thread for the test's body."""
    if not lib.sb_set_flush_to_zero(0):
        pytest.skip("this CPU has no flush-to-zero mode (WebAssembly or an unknown target)")
    lib.sb_set_flush_to_zero(1)
    try:
        yield
    finally:
        lib.sb_set_flush_to_zero(0)


def duplicate(packed, how: str):
    """A copy of a PackedMatrix / PackedConv2d made by copy.copy ("copy"),
    copy.deepcopy ("deepcopy") or a pickle round trip ("pickle<protocol>")."""
    if how == "copy":
        return copy.copy(packed)
    if how == "deepcopy":
        return copy.deepcopy(packed)
    return pickle.loads(pickle.dumps(packed, protocol=int(how[len("pickle"):])))


def unrunnable_path() -> str:
    """A path name this library cannot run (one it was built without, or unknown)."""
    return next((p for p in _paths.ALL_PATHS if p not in _paths.built_paths()), "sve2")


@pytest.fixture(autouse=True)
def _reseed_rng(request):
    """Every loaded module that sets RESEED_RNG_PER_TEST gets a fresh RNG
    per test, seeded from the test's name, so that a test's inputs do not
    depend on which tests ran before it (their outcomes are recorded by
    input digest: python_runner_record). Test modules share helpers, so all
    such modules are reseeded, not only the test's own."""
    import sys
    test = f"{request.module.__name__}::{request.node.name}"
    for module in list(sys.modules.values()):
        if getattr(module, "RESEED_RNG_PER_TEST", False):
            seed = hashlib.sha256(f"{module.__name__}|{test}".encode()).digest()
            module.RNG = np.random.default_rng(int.from_bytes(seed[:8], "little"))
    yield

