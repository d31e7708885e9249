"""Builds the C library's sources straight into a test program (no CMake), for
a target where the Python package cannot run (arm64 under qemu-user) and for
the host it is compared with. Used by test_native_targets.py and
test_depthwise.py."""
from __future__ import annotations

import concurrent.futures
import glob
import os
import re
import subprocess
from pathlib import Path
from typing import Callable, Sequence

ROOT = Path(__file__).resolve().parent.parent
VERSION = re.search(r'__version__ = "([^"]+)"',
                    (ROOT / "py" / "samebits" / "_version.py").read_text()).group(1)
# The library's flags (CMakeLists.txt says why each is there); a file's folder
# decides its own: csrc/isa/<path>/ holds that path's kernels.
FLAGS = ["-std=gnu11", "-O2", "-ffp-contract=off", "-fno-fast-math", "-fno-math-errno",
         "-fno-trapping-math", "-I", str(ROOT / "csrc"),
         "-pthread", f'-DSB_VERSION="{VERSION}"']
FOLDER_FLAGS = {"scalar": ["-fno-tree-vectorize", "-fno-tree-slp-vectorize"]}
X86_FOLDER_FLAGS = {"avx2": ["-mavx2", "-mfma"], "avx512": ["-mavx512f", "-mfma"]}


def sources() -> list[str]:
    """Every .c file of the library (csrc/ and its folders), sorted."""
    return sorted(glob.glob(str(ROOT / "csrc" / "**" / "*.c"), recursive=True))


def isa_kernel(src: Path) -> bool:
    """Whether `src` is an ISA path's kernel file (csrc/isa/<path>/*.c)."""
    return src.resolve().parent.parent == ROOT / "csrc" / "isa"


def folder_flags(src: Path, x86: bool) -> list[str]:
    """The flags a source file gets from its folder (csrc/isa/<path>/)."""
    if not isa_kernel(src):
        return []
    path = src.parent.name
    return FOLDER_FLAGS.get(path, []) + (X86_FOLDER_FLAGS.get(path, []) if x86 else [])


def build_check(cc: str, check_source: str | list[str], out: Path, x86: bool,
                target_flags: tuple[str, ...] = (),
                source_flags: Callable[[Path], Sequence[str]] | None = None,
                link_flags: tuple[str, ...] | None = None) -> None:
    """Compiles every .c file under csrc/ and tests/native/<check_source> with `cc`
    and `target_flags` (e.g. -m32; each ISA file with its flags on x86) and
    links them into `out`. source_flags(path) adds flags per source file, and
    link_flags replace target_flags at the link."""
    files = sources()
    for name in [check_source] if isinstance(check_source, str) else check_source:
        files.append(str(ROOT / "tests" / "native" / name))
    def compile_one(src: str) -> str:
        obj = out.parent / (Path(src).stem + f".{out.name}.o")
        extra = folder_flags(Path(src), x86) + list(source_flags(Path(src)) if source_flags else [])
        subprocess.run([cc, *target_flags, *FLAGS, *extra, "-c", src, "-o", str(obj)],
                       check=True)
        return str(obj)
    # one compiler per core (the files are independent)
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        objects = list(pool.map(compile_one, files))
    link = target_flags if link_flags is None else link_flags
    subprocess.run([cc, *link, "-pthread", *objects, "-o", str(out), "-lm"], check=True)
