"""The sme path (csrc/isa/sme/, docs/design.md "The sme path") under
qemu-user's `max` CPU without FEAT_SME_FA64 (an Advanced SIMD instruction
left in streaming code traps, as on FA64-less hardware), at streaming
vector lengths of 128, 256, 512, 1024 and 2048 bits: tests/native/check_sme.c
holds its products in exact mode to sb_sgemm_naive and in fast mode to the
fused-order reference, bit for bit, over shapes drawn from each length's
tile (rows, ragged edges on either side, several tiles, k across k-blocks),
A in place, transposed and with B packed ahead, at 1 and 3 threads; and
checks that a caller's lazily saved ZA is committed before the kernel uses
ZA. The whole-network digests on the sme path are test_core_models'; the
gemm, conv and elementwise suites on every arm64 path (sme at qemu's
default 256 bits) are test_native_targets' and test_depthwise's."""
from __future__ import annotations

import re
import subprocess

import pytest

from conftest import require_tool
from native_build import build_check, qemu_arm64

pytestmark = pytest.mark.slow

VECTOR_BITS = (128, 256, 512, 1024, 2048)


@pytest.fixture(scope="module")
def check_sme(tmp_path_factory):
    cc = require_tool("aarch64-linux-gnu-gcc")
    out = tmp_path_factory.mktemp("sme") / "check_sme"
    build_check(cc, "check_sme.c", out, x86=False)
    return out


@pytest.mark.parametrize("bits", VECTOR_BITS)
def test_sme_path_at_each_vector_length(check_sme, bits):
    qemu = require_tool("qemu-aarch64")
    r = subprocess.run([*qemu_arm64(qemu, bits), str(check_sme)], capture_output=True, text=True,
                       timeout=900)
    assert r.returncode == 0, r.stdout + r.stderr
    tile = 2 * bits // 32
    assert f"sme vector-bits {bits} tile {tile}x{tile}" in r.stdout, r.stdout
    m = re.search(r"^sme-digest ([0-9a-f]{16}) vector-bits (\d+) cases (\d+) failures 0$", r.stdout, re.M)
    assert m and int(m.group(2)) == bits and int(m.group(3)) >= 18, r.stdout
