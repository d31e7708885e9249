"""Machine description shared by the native benchmarks (bench_matmul.py,
bench_conv.py): imported as a sibling module, since the scripts run as
`python bench/<name>.py`."""
from __future__ import annotations

import os
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


def load_sample() -> tuple[float, float, float] | None:
    """(CPU seconds elapsed on all cores, of them busy, of them used by this
    process and its finished children) so far, or None where /proc/stat is
    missing: the difference of two readings tells how much CPU other
    processes took during a run. (Children count as this process: the
    benchmarks' own workers, bench_models --isolated, once they have ended.)"""
    try:
        fields = [int(v) for v in open("/proc/stat").readline().split()[1:]]
    except (OSError, ValueError):
        return None
    hz = os.sysconf("SC_CLK_TCK")
    total = sum(fields[:8])
    idle = fields[3] + fields[4] + (fields[7] if len(fields) > 7 else 0)   # idle, iowait, steal
    own = os.times()
    return total / hz, (total - idle) / hz, (own.user + own.system + own.children_user +
                                             own.children_system)


def others_share(start: tuple[float, float, float] | None,
                 end: tuple[float, float, float] | None) -> float | None:
    """The share of the machine's CPU time that other processes used between
    two load_sample() readings. A library whose threads wait for each other
    in spin barriers (OpenBLAS, OpenMP) slows down by 100x or more at 2
    threads on a 2-core machine when another process holds one core, so a
    run where this is not near 0 does not measure the libraries."""
    if start is None or end is None or end[0] <= start[0]:
        return None
    return max(0.0, (end[1] - start[1]) - (end[2] - start[2])) / (end[0] - start[0])


BUSY_MACHINE_SHARE = 0.05   # above this share of CPU time used by others, a report warns


def load_note(stolen: float | None, others: float | None) -> str:
    """The report's sentence on what the hypervisor and other processes took."""
    note = ""
    if stolen is not None:
        note += f" CPU time stolen by the hypervisor during the run: {100 * stolen:.1f}%."
    if others is not None:
        note += f" CPU time used by other processes during the run: {100 * others:.1f}%."
        if others > BUSY_MACHINE_SHARE:
            note += (" **The machine was busy: times, at all threads above all, do not measure"
                     " the libraries alone; rerun it on an idle machine.**")
    return note


_CLOCK_C = r"""
#include <stdio.h>
#include <time.h>
/* 64 dependent one-cycle register adds (x = x + x) per iteration: the chain
 * runs at one add per clock cycle whatever the width of the core, so adds
 * per second is the clock the core runs at under this (light) load. (Not
 * add-immediate: recent cores fold chains of those at register renaming.) */
int main(void) {
    unsigned long x = 1, n = 20000000;
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (unsigned long i = 0; i < n; ++i) {
#define A4 __asm__ volatile("add %0, %0\n\tadd %0, %0\n\tadd %0, %0\n\tadd %0, %0" : "+r"(x));
#define A16 A4 A4 A4 A4
        A16 A16 A16 A16
    }
    clock_gettime(CLOCK_MONOTONIC, &b);
    double s = (b.tv_sec - a.tv_sec) + 1e-9 * (b.tv_nsec - a.tv_nsec);
    printf("%.4f %lu\n", 64.0 * n / s / 1e9, x);
    return 0;
}
"""


def measured_ghz(runs: int = 5) -> float | None:
    """The clock of one core under a scalar load, in GHz: a chain of dependent
    one-cycle adds timed (the highest of `runs` runs), or None where it cannot
    be built (no cc, not x86-64). A vector FMA load may run a little slower
    (AVX-512 frequency licences), so % of peak from it is an upper bound."""
    import subprocess
    import tempfile
    if platform.machine() not in ("x86_64", "AMD64"):
        return None
    with tempfile.TemporaryDirectory() as tmp:
        src, exe = os.path.join(tmp, "clock.c"), os.path.join(tmp, "clock")
        with open(src, "w") as f:
            f.write(_CLOCK_C)
        if subprocess.run(["cc", "-O1", src, "-o", exe], capture_output=True).returncode:
            return None
        best = 0.0
        for _ in range(runs):
            out = subprocess.run([exe], capture_output=True, text=True).stdout.split()
            best = max(best, float(out[0]))
    return best


def free_stem(folder, stem: str, suffixes=(".md", ".json")) -> str:
    """`stem`, or stem-2, stem-3, ...: the first name under `folder` with no
    file of these suffixes yet, so that a day's earlier results stay."""
    from pathlib import Path
    folder, name, n = Path(folder), stem, 2
    while any((folder / (name + s)).exists() for s in suffixes):
        name, n = f"{stem}-{n}", n + 1
    return name
