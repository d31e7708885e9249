"""ONNX's conformance suite through samebits.onnx (both modes) and ONNX
Runtime: pass counts, the categories of what does not pass, and (--write)
the pinned list tests/graph/conformance_expected.txt that
tests/graph/test_conformance.py holds the library to.

    python tools/conformance_report.py [--write] [--jobs N] [--no-ort]
"""
from __future__ import annotations

import argparse
import collections
import concurrent.futures
import os
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

import conformance  # noqa: E402

MODES = ("fast", "exact")


def _outcomes(names: list[str], with_ort: bool) -> dict[str, dict[str, str]]:
    cases = conformance.cases()
    runners = {m: conformance.samebits_runner(m) for m in MODES}
    if with_ort:
        runners["ort"] = conformance.ort_runner()
    return {n: {who: conformance.outcome(cases[n], run) for who, run in runners.items()} for n in names}


def category(reason: str) -> str:
    """A reason without its numbers and names: for counting."""
    text = re.sub(r"'[^']*'|\"[^\"]*\"|\d+(\.\d+)?(e-?\d+)?", "#", reason)
    return text[:110]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="rewrite the pinned list")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--no-ort", action="store_true")
    args = parser.parse_args()
    names = sorted(conformance.cases())
    chunks = [names[i::args.jobs * 4] for i in range(args.jobs * 4)]
    results: dict[str, dict[str, str]] = {}
    with concurrent.futures.ProcessPoolExecutor(args.jobs) as pool:
        for part in pool.map(_outcomes, chunks, [not args.no_ort] * len(chunks)):
            results.update(part)
    cases = conformance.cases()
    family = {n for n in names if conformance.float_family(cases[n])}
    who = list(MODES) + ([] if args.no_ort else ["ort"])
    print(f"cases: {len(names)} (float32/int64/int32/bool only: {len(family)})")
    for w in who:
        passed = [n for n in names if results[n][w] == "pass"]
        print(f"  {w:5}: pass {len(passed)} of {len(names)}; float family {len(set(passed) & family)} "
              f"of {len(family)}")
    for w in who:
        wrong = [n for n in names if results[n][w].startswith("wrong")]
        print(f"  {w:5} wrong results: {len(wrong)}" + ("" if not wrong else ": " + ", ".join(wrong[:40])))
    if not args.no_ort:
        gap = [n for n in family if results[n]["ort"] == "pass" and results[n]["fast"] != "pass"]
        print(f"float-family cases ONNX Runtime passes and fast mode does not: {len(gap)}")
        counts = collections.Counter(category(results[n]["fast"]) for n in gap)
        for text, k in counts.most_common(60):
            print(f"  {k:4}  {text}")
    exact_only = [n for n in names if results[n]["fast"] == "pass" and results[n]["exact"] != "pass"]
    print(f"cases fast mode passes and exact mode does not: {len(exact_only)} {exact_only[:20]}")
    if args.write:
        lines = ["# ONNX conformance cases expected not to pass (tests/graph/test_conformance.py).",
                 "# name<TAB>modes<TAB>reason; regenerate: python tools/conformance_report.py --write",
                 "# The test fails when a case outside this list fails, or a listed one passes."]
        for n in names:
            bad = [m for m in MODES if results[n][m] != "pass"]
            if not bad:
                continue
            reasons = {results[n][m] for m in bad}
            if len(reasons) == 1:
                lines.append(f"{n}\t{','.join(bad)}\t{reasons.pop()}")
            else:
                for m in bad:
                    lines.append(f"{n}\t{m}\t{results[n][m]}")
        conformance.EXPECTED_FILE.write_text("\n".join(lines) + "\n")
        print(f"wrote {conformance.EXPECTED_FILE.relative_to(ROOT)} ({len(lines) - 3} lines)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
