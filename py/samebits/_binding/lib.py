"""Loads the samebits shared library and declares its C functions for ctypes.

The same code serves CPython (over the native shared library) and Pyodide
(over the emscripten side module). ctypes releases the GIL for the length of
every call into the library.
"""
from __future__ import annotations

import ctypes
import os
import sys
from importlib import resources
from typing import Any

_LIBRARY_NAMES = {
    "win32": ("samebits.dll", "libsamebits.dll"),
    "darwin": ("libsamebits.dylib",),
}


def _library_path() -> str:
    override = os.environ.get("SAMEBITS_LIBRARY")
    if override:
        if not os.path.isfile(override):
            raise ImportError(f"SAMEBITS_LIBRARY={override!r} is not a file")
        return override
    names = _LIBRARY_NAMES.get(sys.platform, ("libsamebits.so",))
    package = resources.files("samebits")
    for name in names:
        candidate = package / name
        if candidate.is_file():
            return str(candidate)
    raise ImportError(
        f"samebits: no shared library {' or '.join(names)} in {package}; "
        "install the package with 'pip install .' (or set SAMEBITS_LIBRARY)"
    )


def _load() -> ctypes.CDLL:
    path = _library_path()
    if sys.platform == "emscripten":
        # Pyodide: the side module is already loaded by pyodide.loadPackage or
        # loadDynlib; opening it globally again just returns its handle.
        return ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
    return ctypes.CDLL(path)


lib = _load()
LIBRARY_PATH = _library_path()

# The relaxed-SIMD side module of the Pyodide wheel (see wasm/README.md). Its
# name has no ".so" so that pyodide.loadPackage does not load it: an engine
# without relaxed SIMD rejects the whole module.
FAST_LIBRARY_NAME = "libsamebits-relaxed.wasm"


def _load_fast() -> tuple[ctypes.CDLL, str, str | None]:
    """(library for fast mode, its path, why it is the plain one or None).

    Natively, and wherever the relaxed module cannot be used, fast mode runs
    on `lib`. In WebAssembly the relaxed module is opened locally (RTLD_LOCAL:
    its exports never shadow lib's). ctypes compiles it synchronously, which
    Node and Web Workers always allow; a browser's main thread refuses only
    large modules, and a page may also load it beforehand with
    pyodide._api.loadDynlib(path, false). Any failure falls back to `lib`.
    SAMEBITS_WASM_RELAXED=0 forces the fallback.
    """
    if sys.platform != "emscripten":
        return lib, LIBRARY_PATH, None
    if os.environ.get("SAMEBITS_WASM_RELAXED", "1").strip().lower() in ("0", "no", "off", "false"):
        return lib, LIBRARY_PATH, "SAMEBITS_WASM_RELAXED=0"
    path = os.path.join(os.path.dirname(LIBRARY_PATH), FAST_LIBRARY_NAME)
    if not os.path.isfile(path):
        return lib, LIBRARY_PATH, f"no {FAST_LIBRARY_NAME} beside {LIBRARY_PATH}"
    try:
        fast = ctypes.CDLL(path)
        fast.sb_path_count.restype = ctypes.c_int
        lib.sb_path_count.restype = ctypes.c_int
        if fast.sb_path_count() != lib.sb_path_count():
            return lib, LIBRARY_PATH, f"{FAST_LIBRARY_NAME} is of another build"
    except Exception as exc:  # no relaxed SIMD in this engine, refused compile, ...
        return lib, LIBRARY_PATH, f"{FAST_LIBRARY_NAME} did not load: {exc}"
    return fast, path, None


# The library fast mode calls: `lib` natively; in WebAssembly the relaxed-SIMD
# module (fused multiply-add) where the engine accepts it. Exact mode always
# uses `lib`. FAST_LIBRARY_NOTE says why fast mode fell back to `lib` (None
# when it did not, and natively).
fast_lib, FAST_LIBRARY_PATH, FAST_LIBRARY_NOTE = _load_fast()

_p = ctypes.c_void_p
_size = ctypes.c_size_t
_diff = ctypes.c_ssize_t
_int = ctypes.c_int


def _declare(name: str, argtypes: list[type[ctypes._SimpleCData[Any]]],
             restype: type[ctypes._SimpleCData[Any]] | None) -> None:
    for library in {id(lib): lib, id(fast_lib): fast_lib}.values():
        fn = getattr(library, name)
        fn.argtypes = argtypes
        fn.restype = restype


# int sb_path_count(void); const char *sb_path_name(int); int sb_path_built(int); ...
_declare("sb_path_count", [], _int)
_declare("sb_path_name", [_int], ctypes.c_char_p)
_declare("sb_path_built", [_int], _int)
_declare("sb_path_supported", [_int], _int)
_declare("sb_path_best", [], _int)
_declare("sb_path_tile_rows", [_int], _int)
_declare("sb_path_tile_cols", [_int], _int)
_declare("sb_path_fused", [_int], _int)
# int sb_threading_available(void); int sb_cpu_count(void); const char *sb_build_info(void);
_declare("sb_threading_available", [], _int)
_declare("sb_cpu_count", [], _int)
_declare("sb_build_info", [], ctypes.c_char_p)
# int sb_sgemm(int path, int mode, int max_threads, size_t m, size_t n, size_t k,
#              const float *a, ptrdiff_t a_row, ptrdiff_t a_col,
#              const float *b, ptrdiff_t b_row, ptrdiff_t b_col, float *c, ptrdiff_t ldc);
_declare("sb_sgemm", [_int, _int, _int, _size, _size, _size,
                      _p, _diff, _diff, _p, _diff, _diff, _p, _diff], _int)
# size_t sb_packed_b_bytes(int path, size_t k, size_t n);
_declare("sb_packed_b_bytes", [_int, _size, _size], _size)
# int sb_pack_b(int path, int max_threads, size_t k, size_t n, const float *b, ptrdiff_t b_row,
#               ptrdiff_t b_col, void *packed, size_t packed_size);
_declare("sb_pack_b", [_int, _int, _size, _size, _p, _diff, _diff, _p, _size], _int)
# int sb_sgemm_packed(int path, int mode, int max_threads, size_t m, size_t n, size_t k,
#                     const float *a, ptrdiff_t a_row, ptrdiff_t a_col, const void *packed_b,
#                     float *c, ptrdiff_t ldc);
_declare("sb_sgemm_packed", [_int, _int, _int, _size, _size, _size, _p, _diff, _diff, _p, _p,
                             _diff], _int)
# int sb_matmul(const sb_matmul_args *); int sb_matmul_plan(const sb_matmul_args *, sb_plan_info *);
# (the structures are in abi.py; a bytes object of the same layout may stand in for one)
_declare("sb_matmul", [_p], _int)
_declare("sb_matmul_plan", [_p, _p], _int)
# int sb_max_pool2d(const sb_max_pool2d_args *); int sb_unary(const sb_unary_args *);
_declare("sb_max_pool2d", [_p], _int)
_declare("sb_unary", [_p], _int)
_declare("sb_binary", [_p], _int)
_declare("sb_reduce", [_p], _int)
_declare("sb_norm", [_p], _int)
_declare("sb_avg_pool2d", [_p], _int)
_declare("sb_copy", [_p], _int)
_declare("sb_resize2d", [_p], _int)
# int sb_sgemm_naive(size_t m, size_t n, size_t k, const float *a, ptrdiff_t a_row,
#                    ptrdiff_t a_col, const float *b, ptrdiff_t b_row, ptrdiff_t b_col,
#                    float *c, ptrdiff_t ldc);
_declare("sb_sgemm_naive", [_size, _size, _size, _p, _diff, _diff, _p, _diff, _diff, _p, _diff],
         _int)
# void sb_fill_test_values(float *dst, size_t count, uint32_t seed, uint32_t nspecial);
_declare("sb_fill_test_values", [_p, _size, ctypes.c_uint32, ctypes.c_uint32], None)
# double sb_threads_wake_ns(int nthreads, int repeats);
_declare("sb_threads_wake_ns", [_int, _int], ctypes.c_double)
# int sb_conv2d(const sb_conv2d_args *); int sb_conv2d_naive(const sb_conv2d_args *);
# int sb_conv2d_plan(const sb_conv2d_args *, sb_plan_info *);
_declare("sb_conv2d", [_p], _int)
_declare("sb_conv2d_naive", [_p], _int)
_declare("sb_conv2d_plan", [_p, _p], _int)
# size_t sb_conv2d_packed_bytes(int path, size_t cout, size_t cin_per_group, size_t kh,
#                               size_t kw, size_t groups);
_declare("sb_conv2d_packed_bytes", [_int, _size, _size, _size, _size, _size], _size)
# int sb_conv2d_pack(int path, size_t cout, size_t cin_per_group, size_t kh, size_t kw,
#                    size_t groups, const float *w, void *packed, size_t packed_size);
_declare("sb_conv2d_pack", [_int, _size, _size, _size, _size, _size, _p, _p, _size], _int)
# const char *sb_version(void); int sb_plan_selfcheck(void);
_declare("sb_version", [], ctypes.c_char_p)
_declare("sb_plan_selfcheck", [], _int)
# int sb_set_flush_to_zero(int on); int sb_get_flush_to_zero(void);
_declare("sb_set_flush_to_zero", [_int], _int)
_declare("sb_get_flush_to_zero", [], _int)

# The graph runtime (csrc/graph/): int sb_session_load(const sb_load_args *);
# void sb_session_free(sb_session *); const char *sb_last_error(void); ...
_declare("sb_session_load", [_p], _int)
_declare("sb_session_free", [_p], None)
_declare("sb_last_error", [], ctypes.c_char_p)
_declare("sb_session_io_count", [_p, _int], _int)
_declare("sb_session_io_info", [_p, _int, _int, _p], _int)
_declare("sb_session_run", [_p, _p], _int)
_declare("sb_buffer_free", [_p], None)
_declare("sb_session_profile_count", [_p], _int)
_declare("sb_session_profile_label", [_p, _int], ctypes.c_char_p)
_declare("sb_session_node_count", [_p], _int)
_declare("sb_session_node_info", [_p, _int, _p], _int)
_declare("sb_session_plan_count", [_p], _int)
_declare("sb_onnx_operator_count", [], _int)
_declare("sb_onnx_operator_name", [_int], ctypes.c_char_p)
_declare("sb_onnx_describe", [_p, ctypes.c_int64, _p], _int)

def _check_version() -> None:
    """A library left over from another build gives wrong answers in subtle
    ways (its structures may differ): refuse it."""
    from .._version import __version__
    for library, path in ((lib, LIBRARY_PATH), (fast_lib, FAST_LIBRARY_PATH)):
        found = library.sb_version().decode()
        if found != __version__:
            raise ImportError(f"samebits {__version__}: the library {path} is version {found}; "
                              "reinstall the package (pip install .) or point SAMEBITS_LIBRARY "
                              "at a matching build")


_check_version()

MODE_FAST = 0
MODE_EXACT = 1
# enum sb_status (tools/make_tables.py writes codes.py)
from .codes import (  # noqa: E402  (after the library is loaded and checked)
    STATUS_ARGUMENT as STATUS_ARGUMENT, STATUS_DECODE as STATUS_DECODE,
    STATUS_INDEX as STATUS_INDEX, STATUS_NO_MEMORY as STATUS_NO_MEMORY, STATUS_PATH as STATUS_PATH,
    STATUS_TYPE as STATUS_TYPE, STATUS_UNSUPPORTED as STATUS_UNSUPPORTED,
    STATUS_VALUE as STATUS_VALUE)


def check_status(status: int, what: str) -> None:
    """Turns a C status code into the Python exception a user should see."""
    if status == 0:
        return
    if status == STATUS_NO_MEMORY:
        raise MemoryError(f"{what}: the C library could not allocate its packing buffers")
    if status == STATUS_PATH:
        raise ValueError(f"{what}: the selected path cannot run on this CPU")
    raise ValueError(f"{what}: the C library rejected its arguments (status {status})")
