"""The differential graph tester's long pass (make fuzz) and its report.

    python tests/differential/run_graphs.py --seconds 600          # make fuzz
    python tests/differential/run_graphs.py --graphs 1000 --start 0

Generates graphs from consecutive seeds, judges each (compare.py), and
prints graphs per minute, the verdicts, the operators and element types
covered, and the graphs where ONNX Runtime was the wrong one. Every graph
samebits gets wrong is shrunk and written to build/differential/findings/
(copy it to tests/differential/regressions/ with its fix); the exit status
is 1 when there was one.
"""
from __future__ import annotations

import argparse
import collections
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from compare import judge  # noqa: E402
from generate import make_case  # noqa: E402
import shrink  # noqa: E402

FINDINGS = HERE.parent.parent / "build" / "differential" / "findings"


def run(start: int, graphs: int | None, seconds: float | None, quiet: bool = False) -> dict:
    t0 = time.perf_counter()
    verdicts: collections.Counter = collections.Counter()
    ops: collections.Counter = collections.Counter()
    dtypes: collections.Counter = collections.Counter()
    refused: collections.Counter = collections.Counter()
    lists: dict[str, list] = collections.defaultdict(list)
    seed = start
    runs = 0
    while True:
        if graphs is not None and seed - start >= graphs:
            break
        if seconds is not None and time.perf_counter() - t0 >= seconds:
            break
        case = make_case(seed)
        v = judge(case)
        verdicts[v.status] += 1
        runs += v.runs
        if v.status != "refused":
            ops.update(case.ops)
            dtypes.update(str(a.dtype) for f in case.feeds for a in f.values())
        else:
            refused[v.refused_by] += 1
        if v.status in ("wrong", "ort_wrong", "with_ort", "disputed"):
            lists[v.status].append((seed, case.ops, v.detail))
        if v.status == "wrong":
            small = shrink.shrink(case, v.mismatch)
            path = shrink.save(small, f"seed{seed}", v.detail[:500], FINDINGS)
            if not quiet:
                print(f"WRONG seed {seed}: {case.ops}\n{v.detail}shrunk to "
                      f"{[n.op_type for n in small.model.graph.node]}: {path}", flush=True)
        seed += 1
    elapsed = time.perf_counter() - t0
    return {"graphs": seed - start, "runs": runs, "seconds": elapsed, "verdicts": verdicts,
            "ops": ops, "dtypes": dtypes, "refused": refused, "lists": lists}


def report(r: dict) -> str:
    lines = [f"{r['graphs']} graphs, {r['runs']} samebits runs in {r['seconds']:.0f} s "
             f"({60 * r['graphs'] / max(r['seconds'], 1e-9):.0f} graphs per minute)",
             "verdicts: " + ", ".join(f"{k} {v}" for k, v in r["verdicts"].most_common()),
             f"operators covered ({len(r['ops'])}): " +
             " ".join(f"{k}:{v}" for k, v in sorted(r["ops"].items())),
             "input element types: " + " ".join(f"{k}:{v}" for k, v in sorted(r["dtypes"].items())),
             "refused by: " + " ".join(f"{k}:{v}" for k, v in r["refused"].most_common())]
    for status in ("wrong", "ort_wrong"):
        for seed, ops, detail in r["lists"].get(status, [])[:40]:
            lines.append(f"  {status} seed {seed} {ops}: {detail[:160]}")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--start", type=int, default=0)
    ap.add_argument("--graphs", type=int)
    ap.add_argument("--seconds", type=float)
    a = ap.parse_args()
    if a.graphs is None and a.seconds is None:
        a.seconds = 600.0
    r = run(a.start, a.graphs, a.seconds)
    print(report(r))
    return 1 if r["verdicts"].get("wrong") else 0


if __name__ == "__main__":
    sys.exit(main())
