"""`make dist`: the sdist and a native wheel repaired by auditwheel to its
manylinux tag, holding what a user needs (license, typing, entry points)."""
from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow   # a whole package build

ROOT = Path(__file__).resolve().parents[2]


def test_dist_builds_a_manylinux_wheel_and_an_sdist(tmp_path):
    for module in ("build", "auditwheel"):
        if importlib.util.find_spec(module) is None:
            pytest.fail(f"{module} is not installed (make deps installs it)")
    proc = subprocess.run([sys.executable, str(ROOT / "tools" / "make_dist.py"), str(tmp_path)],
                          capture_output=True, text=True, timeout=1200)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    wheel = next(tmp_path.glob("*.whl"))
    assert re.fullmatch(r"samebits-[\d.]+-py3-none-manylinux_2_\d+_x86_64\.whl", wheel.name), \
        wheel.name
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        dist_info = next(n.split("/")[0] for n in names if n.endswith(".dist-info/METADATA"))
        assert {"samebits/py.typed", "samebits/__init__.pyi", "samebits/libsamebits.so",
                f"{dist_info}/licenses/LICENSE"} <= names
        entry_points = zf.read(f"{dist_info}/entry_points.txt").decode()
        metadata = zf.read(f"{dist_info}/METADATA").decode()
    assert "samebits = samebits.pytest_plugin" in entry_points
    assert "samebits = samebits.__main__:main" in entry_points
    assert "Classifier: Typing :: Typed" in metadata and "License: MIT" in metadata
    sdist = next(tmp_path.glob("*.tar.gz"))
    with tarfile.open(sdist) as tf:
        members = {m.name.split("/", 1)[1] for m in tf.getmembers() if "/" in m.name}
    assert {"LICENSE", "CMakeLists.txt", "pyproject.toml", "csrc/samebits.h",
            "py/samebits/__init__.py"} <= members
    assert not any(m.startswith(("build/", "web/out/", "wasm/out/", "web/node_modules/"))
                   for m in members)
    # the wheel is built from the source tree (tools/make_dist.py): the sdist
    # must hold every file that build reads, to build the same wheel
    tracked = subprocess.run(["git", "ls-files", "csrc", "py/samebits", "CMakeLists.txt",
                              "pyproject.toml", "LICENSE", "README.md"], cwd=ROOT,
                             capture_output=True, text=True, check=True).stdout.split()
    assert tracked and not set(tracked) - members, sorted(set(tracked) - members)
