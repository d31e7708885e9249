"""No fused multiply-add outside fast-mode kernels, checked in the machine code."""
from __future__ import annotations

import platform
import re
import shutil
import subprocess

import pytest

from samebits._binding import lib as _lib, paths as _paths

FUSED = {
    "x86_64": re.compile(r"\bv?f(n)?m(add|sub)\w*\b"),
    "aarch64": re.compile(r"\b(fmla|fmls|fmadd|fmsub|fnmadd|fnmsub|fmopa|fmops)\b"),
}


def _functions_with_fused_ops(disassembly: str, pattern: re.Pattern) -> dict[str, int]:
    found: dict[str, int] = {}
    current = None
    for line in disassembly.splitlines():
        header = re.match(r"^[0-9a-f]+ <(.+)>:$", line)
        if header:
            # (a compiler's clone, name.constprop.0 or name.isra.0, is that function)
            current = header.group(1).split("@")[0].split(".")[0]
        elif current and "\t" in line and pattern.search(line.split("\t")[-1]):
            found[current] = found.get(current, 0) + 1
    return found


def test_fused_instructions_only_in_fast_kernels():
    machine = platform.machine()
    if machine not in FUSED:
        pytest.skip(f"no fused-instruction pattern for {machine}")
    objdump = shutil.which("objdump")
    if not objdump:
        pytest.skip("objdump (binutils) is not installed")
    text = subprocess.run([objdump, "-d", "--no-show-raw-insn", _lib.LIBRARY_PATH],
                          capture_output=True, text=True, check=True).stdout
    found = _functions_with_fused_ops(text, FUSED[machine])
    assert all(name.endswith("_fast") for name in found), found
    if machine == "x86_64" and _lib.lib.sb_path_built(_paths.ALL_PATHS.index("avx2")):
        # The fast kernels of fused paths must really fuse (else the check proves nothing).
        assert "sb_ukr_avx2_fast" in found
    if machine == "x86_64" and _lib.lib.sb_path_built(_paths.ALL_PATHS.index("avx512")):
        # Its matrix-product tile and its convolution tile, on 512-bit registers.
        for kernel in ("sb_ukr_avx512_fast", "sb_ukr_avx512_8x32_fast"):
            if kernel not in found:   # a tile and its narrow tile may be folded into one
                kernel = kernel.replace("_fast", "_narrow_fast")
            assert kernel in found, kernel
            body = re.split(rf"<{kernel}(@@\w+)?>:", text, maxsplit=1)[-1].split("\n\n", 1)[0]
            assert "zmm" in body, f"{kernel} does not use 512-bit registers"
        # The channels-in-lanes kernels, on 256-bit registers: fast fuses, exact not.
        assert "sb_lanes_avx512_ymm_fast" in found and "sb_lanes_avx512_ymm_exact" not in found
