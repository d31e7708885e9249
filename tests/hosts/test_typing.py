"""Type checkers see samebits: py.typed, the generated stub
(tools/make_stubs.py) up to date, and mypy --strict on a user's snippet
(numpy in -> ndarray out, buffers -> memoryview, out= -> out, mode a Literal)
and on the whole package (samebits.onnx included)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
mypy = pytest.importorskip("mypy.api")

USER = '''
import numpy as np
import numpy.typing as npt
import samebits
from samebits.testing import assert_same_bits, digest

a: npt.NDArray[np.float32] = np.ones((4, 4), np.float32)
reveal_type(samebits.matmul(a, a, mode="exact"))
reveal_type(samebits.matmul(bytearray(64), bytearray(64)))
out = np.empty((4, 4), np.float32)
reveal_type(samebits.add(a, 1.0, out=out))
reveal_type(samebits.conv2d(a[None], a[None, None], padding="same"))
d: str = digest(a)
assert_same_bits(a, a)
samebits.set_num_threads(1)
n: int = samebits.get_num_threads()
'''


def _mypy(*args: str) -> tuple[str, int]:
    out, err, status = mypy.run(["--strict", "--no-incremental", "--cache-dir", "/dev/null",
                                 *args])
    return out + err, status


def test_py_typed_marker_ships():
    assert (ROOT / "py" / "samebits" / "py.typed").is_file()


def test_stub_is_current():
    proc = subprocess.run([sys.executable, str(ROOT / "tools" / "make_stubs.py"), "--check"],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_user_snippet_under_mypy_strict(tmp_path, monkeypatch):
    (tmp_path / "user.py").write_text(USER)
    monkeypatch.setenv("MYPYPATH", str(ROOT / "py"))
    text, status = _mypy(str(tmp_path / "user.py"))
    revealed = [line.split("Revealed type is ")[1] for line in text.splitlines()
                if "Revealed type is" in line]
    assert status == 0 or all("error" not in l for l in text.splitlines()), text
    assert len(revealed) == 4, text
    assert revealed[0].startswith('"numpy.ndarray[') and "32Bit" in revealed[0]
    assert revealed[1].startswith('"memoryview')
    assert revealed[2].startswith('"numpy.ndarray[')
    assert revealed[3].startswith('"numpy.ndarray[')


def test_mode_is_a_literal(tmp_path, monkeypatch):
    (tmp_path / "bad.py").write_text("import numpy as np\nimport samebits\n"
                                     "a = np.ones((2, 2), np.float32)\n"
                                     "samebits.matmul(a, a, mode='exactly')\n")
    monkeypatch.setenv("MYPYPATH", str(ROOT / "py"))
    text, status = _mypy(str(tmp_path / "bad.py"))
    assert status == 1 and "No overload variant of \"matmul\"" in text, text


def test_package_is_strict_clean(monkeypatch):
    """Every module of py/samebits, the stub standing for __init__.py."""
    monkeypatch.chdir(ROOT / "py")
    text, status = _mypy("-p", "samebits")
    assert status == 0, text


def test_init_source_is_strict_clean(monkeypatch):
    """__init__.py itself, which the stub hides from the package check."""
    monkeypatch.chdir(ROOT / "py")
    text, status = _mypy("samebits/__init__.py")
    assert status == 0, text
