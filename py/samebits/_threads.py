"""How many threads a call may use."""
from __future__ import annotations

import os

from ._lib import lib


def cpu_count() -> int:
    """Processors this process may run on (its affinity mask where there is one)."""
    if not lib.sb_threading_available():
        return 1
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or lib.sb_cpu_count())


def _read_default_threads() -> tuple[int, str | None]:
    """(threads, error): every core, capped by SAMEBITS_THREADS when it is set."""
    cores = cpu_count()
    cap = os.environ.get("SAMEBITS_THREADS", "").strip()
    if not cap:
        return cores, None
    try:
        value = int(cap)
    except ValueError:
        return 0, f"SAMEBITS_THREADS={cap!r} is not an integer"
    if value < 1:
        return 0, f"SAMEBITS_THREADS={cap!r} must be at least 1"
    return min(value, cores), None


# Read once, at import: a call should not pay for the environment lookup.
_DEFAULT, _DEFAULT_ERROR = _read_default_threads()


def default_threads() -> int:
    """Every core this process may use, capped by SAMEBITS_THREADS (read at import)."""
    if _DEFAULT_ERROR:
        raise ValueError(_DEFAULT_ERROR)
    return _DEFAULT
