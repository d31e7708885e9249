"""The TopK kernel (csrc/kernels/topk.c) called without a graph: tests/native/
check_topk.c compares it with a plain selection written from docs/onnx.md's
definition (float32 with NaN, infinities, signed zeros and subnormals; int8,
int32, uint8, uint64; both directions, k from 0 to the whole line)."""
from __future__ import annotations

import subprocess

from conftest import require_tool
from native_build import build_check


def test_topk_kernel_matches_a_plain_selection(tmp_path):
    out = tmp_path / "check_topk"
    build_check(require_tool("cc"), "check_topk.c", out, x86=True)
    r = subprocess.run([str(out)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "failed 0" in r.stdout and "cases 420" in r.stdout, r.stdout
