"""samebits.info(): what this build is and what this machine runs."""
from __future__ import annotations

import platform
import sys
from typing import Any

from . import lib as _lib, paths as _paths, threads as _threads
from .._version import __version__


def info() -> dict[str, Any]:
    """A dict describing the build and the machine: version, paths, threads, library."""
    lib = _lib.lib
    tiles = {
        name: f"{lib.sb_path_tile_rows(i)}x{lib.sb_path_tile_cols(i)}"
        for i, name in enumerate(_paths.ALL_PATHS) if lib.sb_path_built(i)
    }
    return {
        "version": __version__,
        "path": _paths.path(),
        "paths": _paths.paths(),
        "built_paths": _paths.built_paths(),
        "tiles": tiles,
        "fused_fast_mode": {name: bool(_lib.fast_lib.sb_path_fused(i))
                            for i, name in enumerate(_paths.ALL_PATHS) if lib.sb_path_built(i)},
        "threads": _threads.default_threads(),
        "threading": bool(lib.sb_threading_available()),
        "compiler": lib.sb_build_info().decode(),
        "library": _lib.LIBRARY_PATH,
        "fast_library": _lib.FAST_LIBRARY_PATH,
        "platform": sys.platform,
        "machine": platform.machine(),
        "python": sys.version.split()[0],
    }
