"""Types of the public signatures."""
from __future__ import annotations

from typing import Literal

Mode = Literal["fast", "exact"]
"""A kernel's mode: "exact" (the same bits everywhere) or "fast"."""
