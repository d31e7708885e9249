"""ONNX's own backend conformance suite (tests/conformance.py: every node
case of the installed onnx package, its pytorch-converted, pytorch-operator
and simple model cases, the light model-zoo graphs) through samebits.onnx in
fast and exact mode, at each case's tolerances.

tests/graph/conformance_expected.txt pins the cases expected not to pass,
each with its reason (`python tools/conformance_report.py --write`). A case
outside the list must pass; a listed case must still fail (so the list only
shrinks: remove a case when it starts to pass). No listed reason may be a
wrong result: a case runs and matches, or is refused with a clear error."""
from __future__ import annotations

import pytest

pytest.importorskip("onnx")

import conformance  # noqa: E402

CASES = sorted(conformance.cases())
EXPECTED = conformance.read_expected()
RUNNERS = {mode: conformance.samebits_runner(mode) for mode in ("fast", "exact")}


def test_the_pinned_list_names_only_real_cases():
    unknown = sorted(set(EXPECTED) - set(CASES))
    assert not unknown, f"listed cases the installed onnx does not have: {unknown[:20]}"


def test_no_listed_reason_is_a_wrong_result():
    wrong = {name: modes for name, modes in EXPECTED.items()
             if any(reason.startswith("wrong") for reason in modes.values())}
    assert not wrong, wrong


def test_the_suite_is_the_expected_size():
    """The suite is found: a broken loader would make every case vanish."""
    assert len(CASES) > 1500
    assert sum(1 for c in conformance.cases().values() if c.kind == "node") > 1500


@pytest.mark.parametrize("name", CASES)
def test_conformance_case(name):
    case = conformance.cases()[name]
    for mode, run in RUNNERS.items():
        got = conformance.outcome(case, run)
        listed = EXPECTED.get(name, {}).get(mode)
        if listed is None:
            assert got == "pass", f"{mode}: {got}"
        else:
            assert got != "pass", f"{mode}: passes now; remove it from conformance_expected.txt"
            assert not got.startswith("wrong"), f"{mode}: {got}"


def test_exact_mode_passes_what_fast_mode_passes():
    exact_only = sorted(name for name, modes in EXPECTED.items() if "exact" in modes and "fast" not in modes)
    assert not exact_only, exact_only
