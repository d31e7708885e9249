"""One integer argument read as Python reads it: operator.index (int, numpy
integers, anything with __index__), except bool and numpy.bool_: `stride=True`
is far more likely a mistake than a stride of 1. A leaf: args.py and
threads.py both read integers through it."""
from __future__ import annotations

import operator
from typing import Any

try:
    from numpy import bool_ as _numpy_bool
    _BOOLS: tuple[type, ...] = (bool, _numpy_bool)
except ImportError:   # Pyodide without numpy loaded
    _BOOLS = (bool,)


def as_int(value: Any, name: str, what: str, whole: Any = None) -> int:
    """value as a Python int (operator.index), bool refused; TypeError naming
    the argument. `whole` is the sequence value came from, for the message."""
    within = "" if whole is None else f" in {whole!r}"
    if isinstance(value, _BOOLS):
        raise TypeError(f"{what}: {name} must be an int, got bool {value!r}{within}")
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"{what}: {name} must be an int, got {type(value).__name__} "
                        f"{value!r}{within}") from None
