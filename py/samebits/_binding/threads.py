"""How many threads a call may use: the process-wide default and its controls.

The default is every core this process may run on, capped at import by
SAMEBITS_THREADS, or when that is unset by OMP_NUM_THREADS (the variable job
schedulers and threadpoolctl users already set to keep libraries from
oversubscribing cores). ``set_num_threads`` changes it at run time, and
threadpoolctl's ``threadpool_limits`` does through the controller in
_threadpoolctl.py. A call's ``threads=`` overrides it. Results never depend
on any of these.
"""
from __future__ import annotations

import os
from typing import Optional

from .integers import as_int
from .lib import lib

MAX_THREADS = 1024         # thread caps above this are clamped: no machine has more cores


def cpu_count() -> int:
    """Processors this process may run on (its affinity mask where there is one)."""
    if not lib.sb_threading_available():
        return 1
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or lib.sb_cpu_count())


def _read_default_threads() -> tuple[int, Optional[str]]:
    """(threads, error): every core, capped by SAMEBITS_THREADS when it is set,
    else by OMP_NUM_THREADS (its first entry when it is a list such as "4,2")."""
    cores = cpu_count()
    for name in ("SAMEBITS_THREADS", "OMP_NUM_THREADS"):
        cap = os.environ.get(name, "").strip()
        if not cap:
            continue
        if name == "OMP_NUM_THREADS":
            cap = cap.split(",")[0].strip()
        try:
            value = int(cap)
        except ValueError:
            return 0, f"{name}={os.environ[name]!r} is not an integer"
        if value < 1:
            return 0, f"{name}={os.environ[name]!r} must be at least 1"
        return min(value, cores), None
    return cores, None


# Read once, at import: a call should not pay for the environment lookup.
_DEFAULT, _DEFAULT_ERROR = _read_default_threads()
# What the products' fast paths read on every call: the default, or None when
# the environment is invalid (they then take the general path, which raises).
fast_default: Optional[int] = None if _DEFAULT_ERROR else _DEFAULT


def default_threads() -> int:
    """The thread cap of a call that does not give one (see the module docstring)."""
    if _DEFAULT_ERROR:
        raise ValueError(_DEFAULT_ERROR)
    return _DEFAULT


def set_num_threads(n: int) -> None:
    """Sets how many threads a samebits call may use when it gives no
    ``threads=`` (as torch.set_num_threads): any int >= 1, clamped to 1024.
    It replaces what SAMEBITS_THREADS or OMP_NUM_THREADS said at import.
    Results never depend on it."""
    global _DEFAULT, _DEFAULT_ERROR, fast_default
    n = as_int(n, "n", "set_num_threads")
    if n < 1:
        raise ValueError(f"set_num_threads: n must be at least 1, got {n}")
    _DEFAULT, _DEFAULT_ERROR = min(n, MAX_THREADS), None
    fast_default = _DEFAULT


def get_num_threads() -> int:
    """How many threads a samebits call may use when it gives no ``threads=``."""
    return default_threads()
