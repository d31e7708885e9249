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
