"""The Einsum contraction kernel (csrc/kernels/einsum.c) called without a
graph: tests/native/check_einsum.c compares it, on every path at 1 and 3
threads, with the definition written from docs/onnx.md (batched, broadcast,
transposed outputs, empty sums, special values)."""
from __future__ import annotations

import subprocess

from conftest import require_tool
from native_build import build_check


def test_einsum_kernel_matches_its_definition(tmp_path):
    out = tmp_path / "check_einsum"
    build_check(require_tool("cc"), "check_einsum.c", out, x86=True)
    r = subprocess.run([str(out)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "failed 0" in r.stdout, r.stdout
