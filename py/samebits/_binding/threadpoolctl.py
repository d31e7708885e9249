"""samebits under threadpoolctl: a library controller registered with
threadpoolctl's documented API for third-party libraries, so that
``threadpool_info()`` lists samebits and ``threadpool_limits(n)`` caps the
threads its calls use by default (samebits.set_num_threads). Registered when
samebits is imported and threadpoolctl is installed; nothing happens
otherwise (Pyodide)."""
from __future__ import annotations

from typing import Any


def register() -> bool:
    """Registers the controller; False when threadpoolctl is not installed
    or too old to accept controllers (before 3.0)."""
    try:
        import threadpoolctl  # type: ignore[import-untyped, unused-ignore]
    except ImportError:
        return False
    base: Any = getattr(threadpoolctl, "LibController", None)
    if base is None or not hasattr(threadpoolctl, "register"):
        return False

    from . import threads as _threads
    from .._version import __version__

    class SamebitsController(base):  # type: ignore[misc]
        user_api = "samebits"
        internal_api = "samebits"
        filename_prefixes = ("libsamebits",)

        def get_num_threads(self) -> int:
            return _threads.get_num_threads()

        def set_num_threads(self, num_threads: int) -> None:
            _threads.set_num_threads(num_threads)

        def get_version(self) -> str:
            return __version__

    threadpoolctl.register(SamebitsController)
    return True
