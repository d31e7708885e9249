"""A pytest plugin for cross-platform same-bits tests: the ``same_bits`` fixture.

    def test_logits(same_bits):
        same_bits.check("resnet50/logits", model(x))

``check(name, array)`` takes the array's ``samebits.testing.digest``. Run
once with ``pytest --samebits-update`` on a reference machine: the digests
are written to a golden JSON file, which you commit. Every later run, on any
machine (Pyodide included), compares against that file; a test fails when a
name's digest differs or is missing, and its report lists every differing
name with both digests.

The golden file is ``same_bits.json`` in the directory of the test module,
or the path set by the ini option ``samebits_golden`` (relative to the
rootdir). Names are the file's keys: one name, one array, across the whole
run. Installed with samebits as a ``pytest11`` entry point; where entry
points are not read, ``-p samebits.pytest_plugin`` loads it.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Optional

import pytest

from .testing import digest

_GOLDEN = "same_bits.json"
_KEY = pytest.StashKey["_SameBitsSession"]()


def pytest_addoption(parser: Any) -> None:
    group = parser.getgroup("samebits", "same-bits digests (samebits.pytest_plugin)")
    group.addoption("--samebits-update", action="store_true", default=False,
                    help="write the digests of same_bits.check to the golden file instead of "
                         "comparing with it")
    parser.addini("samebits_golden", "golden file of the same_bits fixture (default: "
                  "same_bits.json beside each test module)", default="")


class _SameBitsSession:
    """The golden files of a run: read once, written at the end with --samebits-update."""

    def __init__(self, config: Any) -> None:
        self.update = bool(config.getoption("samebits_update"))
        golden = config.getini("samebits_golden")
        self.fixed: Optional[Path] = Path(config.rootpath, golden) if golden else None
        self.files: dict[Path, dict[str, str]] = {}
        self.written: dict[Path, dict[str, str]] = {}
        self.seen: dict[str, str] = {}          # name -> digest, across the run
        self.checked = 0

    def golden_path(self, module_path: Path) -> Path:
        return self.fixed if self.fixed is not None else module_path.parent / _GOLDEN

    def golden(self, path: Path) -> dict[str, str]:
        if path not in self.files:
            try:
                data = json.loads(path.read_text())
            except FileNotFoundError:
                data = {}
            except (OSError, ValueError) as e:
                raise pytest.UsageError(f"samebits: cannot read the golden file {path}: {e}")
            if not isinstance(data, dict) or not all(isinstance(k, str) and isinstance(v, str)
                                                     for k, v in data.items()):
                raise pytest.UsageError(f"samebits: {path} is not a JSON object of name -> "
                                        f"digest strings")
            self.files[path] = data
        return self.files[path]

    def finish(self) -> list[str]:
        lines = []
        for path, entries in self.written.items():
            merged = dict(self.golden(path))
            merged.update(entries)
            path.write_text(json.dumps(dict(sorted(merged.items())), indent=1) + "\n")
            lines.append(f"samebits: wrote {len(entries)} digest(s) to {path}")
        return lines


class SameBits:
    """The ``same_bits`` fixture of one test."""

    def __init__(self, session: _SameBitsSession, golden: Path) -> None:
        self._session = session
        self._golden = golden
        self.mismatches: list[str] = []

    @property
    def golden_file(self) -> Path:
        return self._golden

    def check(self, name: str, array: Any, *, canonical_nan: bool = True) -> str:
        """Records (with --samebits-update) or compares the digest of `array`
        under `name`; returns the digest. Differences are reported when the
        test ends, all together."""
        if not isinstance(name, str) or not name:
            raise TypeError(f"same_bits.check: name must be a non-empty string, got {name!r}")
        value = digest(array, canonical_nan=canonical_nan)
        s = self._session
        s.checked += 1
        earlier = s.seen.get(name)
        if earlier is not None and earlier != value:
            self.mismatches.append(f"{name}: checked twice in this run with different arrays "
                                   f"({earlier} then {value})")
        s.seen[name] = value
        if s.update:
            s.written.setdefault(self._golden, {})[name] = value
            return value
        want = s.golden(self._golden).get(name)
        if want is None:
            self.mismatches.append(f"{name}: no digest in {self._golden} (record it with "
                                   f"pytest --samebits-update)")
        elif want != value:
            self.mismatches.append(f"{name}: digest {value}, golden {want}")
        return value


_KEY_TEST = pytest.StashKey[SameBits]()   # a test's fixture, read by its report hook


def pytest_configure(config: Any) -> None:
    config.stash[_KEY] = _SameBitsSession(config)


@pytest.fixture
def same_bits(request: Any) -> SameBits:
    """Compare arrays by digest with a golden file (see samebits.pytest_plugin)."""
    session = request.config.stash[_KEY]
    fixture = SameBits(session, session.golden_path(Path(request.node.path)))
    request.node.stash[_KEY_TEST] = fixture
    return fixture


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: Any, call: Any) -> Any:
    outcome = yield
    report = outcome.get_result()
    fixture = item.stash.get(_KEY_TEST, None)
    if call.when == "call" and report.passed and fixture is not None and fixture.mismatches:
        report.outcome = "failed"
        report.longrepr = ("same_bits: " + str(len(fixture.mismatches)) +
                           " name(s) differ from the golden file:\n  " +
                           "\n  ".join(fixture.mismatches))


def pytest_terminal_summary(terminalreporter: Any, config: Any) -> None:
    session = config.stash.get(_KEY, None)
    if session is None:
        return
    for line in session.finish():
        terminalreporter.write_line(line)
