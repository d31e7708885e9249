"""The native library builds with clang as well as gcc (CMakeLists.txt, as a
user's `pip install` with CC=clang would), and the clang build's exact hash
lines equal the gcc build's on the scalar and vec4 paths.

The clang build leaves the avx2 and avx512 paths out (their compiler checks
preset OFF): clang's SROA pass spends minutes on those unrolled,
intrinsics-only kernel files (over 150 s for ukernel_avx512.c alone), which
the CI budget of make test cannot hold; every other file, the scalar path's
plain C and the portable vec4 kernels among them, is clang's."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import samebits

pytestmark = pytest.mark.slow   # a whole library build

ROOT = Path(__file__).resolve().parents[2]


def _clang() -> str:
    for name in ("clang-19", "clang"):
        found = shutil.which(name)
        if found:
            return found
    message = "clang is not installed (make deps installs clang-19)"
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


PATHS = "scalar,vec4"


def _lines(library: str) -> list[str]:
    env = {**os.environ, "SAMEBITS_LIBRARY": library, "PYTHONPATH": str(ROOT / "py")}
    # one thread: the compiler decides the kernels' bits, not the thread count
    # (test_hashes holds the lines at 1 and 2 threads)
    out = subprocess.run([sys.executable, "-m", "samebits", "hashes", "--modes", "exact",
                          "--paths", PATHS, "--threads", "1", "--groups", "random,models"],
                         env=env, capture_output=True, text=True, check=True, timeout=900)
    return out.stdout.splitlines()


def test_clang_build_gives_the_gcc_bits(tmp_path):
    clang = _clang()
    build = tmp_path / "clang"
    subprocess.run(["cmake", "-S", str(ROOT), "-B", str(build), "-G", "Ninja",
                    f"-DCMAKE_C_COMPILER={clang}", "-DCMAKE_BUILD_TYPE=Release",
                    "-DSB_CC_AVX2=OFF", "-DSB_CC_AVX512=OFF"],
                   check=True, capture_output=True, text=True)
    proc = subprocess.run(["cmake", "--build", str(build), "-j2"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    library = str(build / "libsamebits.so")
    info = subprocess.run([sys.executable, "-c", "import samebits, json; "
                           "print(json.dumps(samebits.info()['compiler']))"],
                          env={**os.environ, "SAMEBITS_LIBRARY": library,
                               "PYTHONPATH": str(ROOT / "py")},
                          capture_output=True, text=True, check=True)
    assert "clang" in info.stdout
    from samebits._binding import lib as _lib
    lines = _lines(library)
    assert len(lines) >= 2 and any(" vec4 " in line for line in lines), lines
    assert lines == _lines(str(_lib.LIBRARY_PATH))
    assert len(samebits.paths()) >= 2
