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
FLAGS = ["-std=gnu11", "-O2", "-ffp-contract=off", "-fno-fast-math", "-fno-math-errno",
         "-I", str(ROOT / "csrc"),
         "-pthread", f'-DSB_VERSION="{VERSION}"']
X86_FILE_FLAGS = {"ukernel_avx2.c": ["-mavx2", "-mfma"], "ukernel_avx512.c": ["-mavx512f", "-mfma"],
                  "unary_avx2.c": ["-mavx2", "-mfma", "-fno-trapping-math"],
                  "unary_avx512.c": ["-mavx512f", "-mfma", "-fno-trapping-math"]}
# Every target: the elementwise kernels vectorize only without trapping math
# (CMakeLists.txt says why); the scalar path's stay scalar.
FILE_FLAGS = {"unary_vec4.c": ["-fno-trapping-math"], "unary_neon.c": ["-fno-trapping-math"],
              "epilogue.c": ["-fno-trapping-math"], "binary.c": ["-fno-trapping-math"],
              "reduce.c": ["-fno-trapping-math"], "norm.c": ["-fno-trapping-math"],
              "avgpool.c": ["-fno-trapping-math"], "resize.c": ["-fno-trapping-math"],
              "unary_scalar.c": ["-fno-trapping-math", "-fno-tree-vectorize",
                                 "-fno-tree-slp-vectorize"],
              "ukernel_scalar.c": ["-fno-tree-vectorize", "-fno-tree-slp-vectorize"]}


def build_check(cc: str, check_source: str | list[str], out: Path, x86: bool,
                target_flags: tuple[str, ...] = (),
                source_flags: Callable[[Path], Sequence[str]] | None = None,
                link_flags: tuple[str, ...] | None = None) -> None:
    """Compiles every csrc/*.c and csrc/graph/*.c file and tests/native/<check_source> with `cc`
    and `target_flags` (e.g. -m32; each ISA file with its flags on x86) and
    links them into `out`. source_flags(path) adds flags per source file, and
    link_flags replace target_flags at the link."""
    sources = sorted(glob.glob(str(ROOT / "csrc" / "*.c")) + glob.glob(str(ROOT / "csrc" / "graph" / "*.c")))
    for name in [check_source] if isinstance(check_source, str) else check_source:
        sources.append(str(ROOT / "tests" / "native" / name))
    def compile_one(src: str) -> str:
        obj = out.parent / (Path(src).stem + f".{out.name}.o")
        extra = FILE_FLAGS.get(Path(src).name, [])
        extra = extra + (X86_FILE_FLAGS.get(Path(src).name, []) if x86 else [])
        extra = extra + list(source_flags(Path(src)) if source_flags else [])
        subprocess.run([cc, *target_flags, *FLAGS, *extra, "-c", src, "-o", str(obj)],
                       check=True)
        return str(obj)
    # one compiler per core (the files are independent)
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        objects = list(pool.map(compile_one, sources))
    link = target_flags if link_flags is None else link_flags
    subprocess.run([cc, *link, "-pthread", *objects, "-o", str(out), "-lm"], check=True)
