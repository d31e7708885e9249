"""ISA path selection: the SAMEBITS_PATH variable, use_path() and the default."""
from __future__ import annotations

import contextlib
import functools
import contextvars
import os
from typing import Iterator, cast

from .lib import lib

ALL_PATHS: tuple[str, ...] = tuple(
    lib.sb_path_name(i).decode() for i in range(lib.sb_path_count())
)
_forced: contextvars.ContextVar[str | None] = contextvars.ContextVar("samebits_path", default=None)


def paths() -> list[str]:
    """The ISA paths this machine can run, slowest first."""
    return [name for i, name in enumerate(ALL_PATHS) if _supported(i)]


def built_paths() -> list[str]:
    """The ISA paths compiled into this build, whether or not this CPU runs them."""
    return [name for i, name in enumerate(ALL_PATHS) if lib.sb_path_built(i)]


@functools.lru_cache(maxsize=None)
def _supported(index: int) -> bool:
    return bool(lib.sb_path_supported(index))


def path_index(name: str) -> int:
    """The library's index for path `name`; ValueError if it cannot run here."""
    if name not in ALL_PATHS:
        raise ValueError(f"unknown path {name!r}; the paths are {', '.join(ALL_PATHS)}")
    index = ALL_PATHS.index(name)
    if not lib.sb_path_built(index):
        raise ValueError(f"path {name!r} is not built into this library "
                         f"(built: {', '.join(built_paths())})")
    if not _supported(index):
        raise ValueError(f"path {name!r} is built but this CPU cannot run it "
                         f"(this CPU runs: {', '.join(paths())})")
    return index


def _default_path() -> tuple[str | None, str | None]:
    """(path, error): SAMEBITS_PATH, read once at import, else the fastest path."""
    value = os.environ.get("SAMEBITS_PATH", "").strip()
    if not value:
        return ALL_PATHS[lib.sb_path_best()], None
    try:
        path_index(value)
    except ValueError as err:
        return None, f"SAMEBITS_PATH={value!r}: {err}"
    return value, None


_DEFAULT, _DEFAULT_ERROR = _default_path()
_INDEX = {name: i for i, name in enumerate(ALL_PATHS)}


def path() -> str:
    """The active path: use_path(), else SAMEBITS_PATH (read at import), else the fastest."""
    forced = _forced.get()
    if forced is not None:
        return forced
    if _DEFAULT_ERROR:
        raise ValueError(_DEFAULT_ERROR)
    return cast(str, _DEFAULT)   # a path whenever _DEFAULT_ERROR is None


def active_path_index() -> int:
    """Index of the active path; use_path and SAMEBITS_PATH were checked already."""
    return _INDEX[path()]


def default_path_index() -> int:
    """Index of the path used where no use_path() is in force (ValueError when
    SAMEBITS_PATH names a path this machine cannot run)."""
    if _DEFAULT_ERROR:
        raise ValueError(_DEFAULT_ERROR)
    return _INDEX[cast(str, _DEFAULT)]   # a path whenever _DEFAULT_ERROR is None


# The name forced by use_path() in this thread and task, or None: the one
# per-call lookup of matmul's fast path.
forced_path = _forced.get


@contextlib.contextmanager
def use_path(name: str) -> Iterator[str]:
    """Runs the body with path `name` forced (per thread and asyncio task).

    Raises ValueError on entry if this machine cannot run the path.
    """
    path_index(name)
    token = _forced.set(name)
    try:
        yield name
    finally:
        _forced.reset(token)
