"""The C-only path check, natively and for arm64 under qemu-user.

The Python package cannot run under qemu-user here, so arm64's paths (scalar,
vec4 over NEON, neon, and sme at 128-bit streaming vectors; test_sme.py
takes the other lengths) are checked by tests/native/check_paths.c: exact mode
bit-identical to the naive loop on every path, fast mode thread-independent,
and one digest of all exact outputs that must equal the x86-64 one.
"""
from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from conftest import require_tool
from native_build import build_check, qemu_arm64

pytestmark = pytest.mark.slow   # builds the library twice and runs under qemu

def _build(cc: str, out: Path, x86: bool) -> None:
    build_check(cc, "check_paths.c", out, x86)


def _run(cmd: list[str]) -> tuple[str, set[str]]:
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stdout + r.stderr
    digest = re.search(r"exact-digest ([0-9a-f]{16}) paths", r.stdout).group(1)
    paths = set(re.findall(r"^path (\w+) ", r.stdout, re.M))
    return digest, paths




@pytest.fixture(scope="module")
def host_digest(tmp_path_factory) -> str:
    if os.uname().machine != "x86_64":
        pytest.skip("the cross-target comparison is written for an x86-64 host")
    out = tmp_path_factory.mktemp("host") / "check_host"
    _build(require_tool("cc"), out, x86=True)
    digest, paths = _run([str(out)])
    assert {"scalar", "vec4"} <= paths
    return digest


def test_host_paths_match_naive_loop(host_digest):
    assert len(host_digest) == 16


def test_arm64_paths_under_qemu_match_naive_loop_and_host(host_digest, tmp_path):
    cc = require_tool("aarch64-linux-gnu-gcc")
    qemu = require_tool("qemu-aarch64")
    out = tmp_path / "check_arm64"
    _build(cc, out, x86=False)
    digest, paths = _run([*qemu_arm64(qemu, 128), str(out)])
    assert paths == {"scalar", "vec4", "neon", "sme"}
    assert digest == host_digest


def _unary_digests(cmd: list[str]) -> tuple[dict[str, str], set[str]]:
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stdout + r.stderr
    digests = dict(re.findall(r"^(\w+)-digest ([0-9a-f]{16})$", r.stdout, re.M))
    paths = set(re.findall(r"^path (\w+) ", r.stdout, re.M))
    assert len(digests) == 21, r.stdout
    return digests, paths


@pytest.fixture(scope="module")
def host_unary_digests(tmp_path_factory) -> dict[str, str]:
    if os.uname().machine != "x86_64":
        pytest.skip("the cross-target comparison is written for an x86-64 host")
    out = tmp_path_factory.mktemp("host-unary") / "check_unary_host"
    build_check(require_tool("cc"), "check_unary.c", out, x86=True)
    digests, paths = _unary_digests([str(out)])
    assert "vec4" in paths
    return digests


def test_arm64_elementwise_functions_under_qemu_match_host(host_unary_digests, tmp_path):
    """The elementwise functions and activations on arm64's paths (scalar, vec4 over NEON,
    neon, sme, which runs neon's): each path equal to the scalar one, and the digests equal to x86-64's."""
    cc = require_tool("aarch64-linux-gnu-gcc")
    qemu = require_tool("qemu-aarch64")
    out = tmp_path / "check_unary_arm64"
    build_check(cc, "check_unary.c", out, x86=False)
    digests, paths = _unary_digests([*qemu_arm64(qemu, 128), str(out)])
    assert paths == {"vec4", "neon", "sme"}
    assert digests == host_unary_digests


def test_i386_sse2_build_matches_host(host_digest, tmp_path):
    """32-bit x86 with SSE2 arithmetic (what CMakeLists.txt sets for it): the
    SSE2 paths (scalar, vec4) give x86-64's exact digest. The avx2 and avx512
    kernel files are built without their flags here, so as their "not built"
    stubs: they are the same C as in the x86-64 build, which checks them, and
    compiling them again for 32 bits cost a minute of make test's budget."""
    cc = require_tool("cc")
    probe = subprocess.run([cc, "-m32", "-x", "c", "-", "-o", str(tmp_path / "probe")],
                           input="int main(void){return 0;}", capture_output=True, text=True)
    if probe.returncode != 0:
        message = "gcc -m32 cannot link (make deps installs libc6-dev-i386 lib32gcc-12-dev)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    out = tmp_path / "check_i386"
    build_check(cc, "check_paths.c", out, False, ("-m32", "-msse2", "-mfpmath=sse"))
    digest, paths = _run([str(out)])
    assert paths == {"scalar", "vec4"}
    assert digest == host_digest


def test_x87_build_is_refused(tmp_path):
    """The default 32-bit x86 arithmetic (x87, FLT_EVAL_METHOD 2) would give
    other bits silently: csrc/framework/fpenv.c refuses to compile under it."""
    cc = require_tool("cc")
    src = Path(__file__).resolve().parents[2] / "csrc" / "framework" / "fpenv.c"
    proc = subprocess.run([cc, "-m32", "-mfpmath=387", "-std=gnu11", "-I", str(src.parent.parent), "-c",
                           str(src), "-o", str(tmp_path / "fpenv.o")], capture_output=True,
                          text=True)
    assert proc.returncode != 0
    assert "samebits needs FLT_EVAL_METHOD == 0" in proc.stderr
