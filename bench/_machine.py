"""Machine description shared by the native benchmarks (bench_matmul.py,
bench_conv.py): imported as a sibling module, since the scripts run as
`python bench/<name>.py`."""
from __future__ import annotations

import platform


def cpu_model() -> str:
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def cpu_ticks() -> tuple[int, int] | None:
    """(all CPU ticks, stolen ticks) so far, summed over the cores (/proc/stat),
    or None where the file is missing: the share a hypervisor took during a
    run is the difference of two readings."""
    try:
        fields = [int(v) for v in open("/proc/stat").readline().split()[1:]]
    except (OSError, ValueError):
        return None
    return sum(fields[:8]), (fields[7] if len(fields) > 7 else 0)


def stolen_share(start: tuple[int, int] | None, end: tuple[int, int] | None) -> float | None:
    """The share of CPU time stolen between two cpu_ticks() readings."""
    if start is None or end is None or end[0] <= start[0]:
        return None
    return (end[1] - start[1]) / (end[0] - start[0])
