"""The command line's user-facing edges: --version, one-line errors for bad
option values, progress on stderr, `samebits digest`."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import samebits
from samebits.testing import digest


def _run(*args, check=False):
    return subprocess.run([sys.executable, "-m", "samebits", *args], capture_output=True,
                          text=True, timeout=300, check=check)


def test_version():
    out = _run("--version", check=True)
    assert out.stdout.strip() == f"samebits {samebits.__version__}"


@pytest.mark.parametrize("args,message", [
    (["hashes", "--paths", "nosuchpath"], "--paths: nosuchpath cannot run on this machine"),
    (["hashes", "--groups", "foo"], "--groups: foo is not one of sweep,random,models"),
    (["hashes", "--modes", "exact,slow"], "--modes: slow is not exact or fast"),
    (["hashes", "--threads", "two"], "--threads: 'two' is not a comma-separated list"),
    (["hashes", "--threads", "0"], "--threads: '0' must be at least 1"),
    (["hashes", "--suites", "gemm,bogus"], "--suites: bogus is not one of gemm,conv,ops"),
    ([], "the following arguments are required: command"),
])
def test_bad_options_give_one_line(args, message):
    out = _run(*args)
    assert out.returncode == 2 and out.stdout == ""
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0] and "Traceback" not in out.stderr


def test_progress_lines_when_piped():
    out = _run("hashes", "--suites", "ops", "--modes", "exact", "--threads", "1", "--paths",
               samebits.path(), check=True)
    assert out.stderr.splitlines() == [f"# [1/1] ops exact {samebits.path()} threads=1 (0 s "
                                       f"elapsed)"]
    assert len(out.stdout.strip().splitlines()) == 2


def test_digest_command(tmp_path):
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    b = np.array([np.nan, -0.0], np.float32)
    np.save(tmp_path / "a.npy", a)
    np.save(tmp_path / "b.npy", b)
    out = _run("digest", str(tmp_path / "a.npy"), str(tmp_path / "b.npy"), check=True)
    assert out.stdout.splitlines() == [f"{digest(a)}  {tmp_path / 'a.npy'}",
                                       f"{digest(b)}  {tmp_path / 'b.npy'}"]
    missing = _run("digest", str(tmp_path / "nope.npy"))
    assert missing.returncode == 1 and "nope.npy" in missing.stderr


def test_run_profile_prints_operators_and_slowest_nodes(tmp_path):
    """`samebits run --profile N`: a line per operator type (times of the runs
    after the first) and the N slowest nodes, named as in the file."""
    pytest.importorskip("onnx")
    sys.path.insert(0, str(__import__("pathlib").Path(__file__).parents[1] / "graph"))
    from test_node_profile import NODES, profiled_model
    model = tmp_path / "profiled.onnx"
    model.write_bytes(profiled_model())
    out = _run("run", str(model), "--runs", "3", "--profile", "2", check=True).stdout
    lines = out.splitlines()
    start = next(k for k, line in enumerate(lines) if line.startswith("profile:"))
    assert "mean of 2 runs after the first" in lines[start]
    ops = [line.split()[0] for line in lines[start + 2:start + 2 + len({n[2] for n in NODES})]]
    assert sorted(ops) == sorted({op for _, _, op in NODES})
    slowest = lines[start + 2 + len(ops)]
    assert slowest == f"slowest 2 of {len(NODES)} nodes:"
    named = lines[start + 3 + len(ops):]
    assert len(named) == 2 and all(" ms " in line and "(node " in line for line in named)
    bad = _run("run", str(model), "--profile", "0")
    assert bad.returncode == 2 and "--profile: 0 must be at least 1" in bad.stderr
