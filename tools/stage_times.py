"""The time of each stage of a make run, for .ci/run's closing report.

    python3 tools/stage_times.py start FILE        # the clock starts
    python3 tools/stage_times.py mark FILE NAME    # NAME ends now (Makefile targets)
    python3 tools/stage_times.py report FILE       # seconds per stage, and the total

A stage's time is the time since the previous mark: make runs the targets
of `make test` one after another, so each is its own target's time."""
from __future__ import annotations

import sys
import time
from pathlib import Path


def main(argv: list[str]) -> int:
    if len(argv) < 2 or argv[0] not in ("start", "mark", "report"):
        print(__doc__, file=sys.stderr)
        return 2
    what, path = argv[0], Path(argv[1])
    if what == "start":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"start {time.time():.3f}\n")
    elif what == "mark":
        with path.open("a") as f:
            f.write(f"{argv[2]} {time.time():.3f}\n")
    else:
        rows = [line.split() for line in path.read_text().splitlines() if line.strip()]
        print("stage times (seconds):")
        for (_, before), (name, after) in zip(rows, rows[1:]):
            print(f"  {name:<18} {float(after) - float(before):8.1f}")
        if len(rows) > 1:
            print(f"  {'total':<18} {float(rows[-1][1]) - float(rows[0][1]):8.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
