"""Builds the C library's sources straight into a test program (no CMake), for
a target where the Python package cannot run (arm64 under qemu-user) and for
the host it is compared with. Used by test_native_targets.py and
test_depthwise.py."""
from __future__ import annotations

import concurrent.futures
import glob
import hashlib
import json
import os
import re
import shutil
import subprocess
import threading
from pathlib import Path
from typing import Callable, Sequence

ROOT = Path(__file__).resolve().parent.parent
VERSION = re.search(r'__version__ = "([^"]+)"',
                    (ROOT / "py" / "samebits" / "_version.py").read_text()).group(1)
# The library's flags, from csrc/build.json (docs/design.md says why each is
# there); a file's folder decides its own: csrc/isa/<path>/ holds that path's
# kernels.
MANIFEST = json.loads((ROOT / "csrc" / "build.json").read_text())
FLAGS = [f"-std={MANIFEST['std']}", "-O2", *MANIFEST["exact"], *MANIFEST["errors"],
         "-I", str(ROOT / "csrc"), "-pthread", f'-DSB_VERSION="{VERSION}"']


def qemu_arm64(qemu: str, vector_bits: int | None = None) -> list[str]:
    """The command prefix that runs an arm64 program under qemu-user: the
    `max` CPU with SME but without FEAT_SME_FA64, so that an Advanced SIMD
    instruction left in streaming code traps as it does on FA64-less
    hardware; vector_bits sets the streaming vector length (128 to 2048)."""
    cpu = "max,sme_fa64=off"
    if vector_bits is not None:
        cpu += f",sme-default-vector-length={vector_bits // 8}"
    return [qemu, "-cpu", cpu, "-L", "/usr/aarch64-linux-gnu"]


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
    kinds = MANIFEST["folders"].get(f"isa/{src.parent.name}", {})
    flags: list[str] = kinds.get("gcc", []) + (kinds.get("x86", []) if x86 else [])
    return flags


# Compiled library objects, shared by every test program built with the same
# compiler and flags (in one test run and the next): keyed by the compiler's
# identity, the flags, the source's bytes and every header under csrc/.
OBJECT_CACHE = ROOT / "build" / "objects"
_compiler_ids: dict[str, str] = {}
_headers_digest: list[str] = []


def _object_key(cc: str, args: Sequence[str], src: str) -> str:
    cc = os.path.realpath(shutil.which(cc) or cc)   # "cc" and "/usr/bin/cc" alike
    _compiler_id(cc)
    if not _headers_digest:
        h = hashlib.sha256()
        for header in sorted(glob.glob(str(ROOT / "csrc" / "**" / "*.h"), recursive=True)):
            h.update(header.encode() + Path(header).read_bytes())
        _headers_digest.append(h.hexdigest())
    h = hashlib.sha256()
    for part in (cc, _compiler_ids[cc], "\0".join(args), _headers_digest[0]):
        h.update(part.encode() + b"\0")
    h.update(Path(src).read_bytes())
    return h.hexdigest()[:32]


def _compiler_id(cc: str) -> str:
    """`cc --version`'s text, once per compiler."""
    cc = os.path.realpath(shutil.which(cc) or cc)
    if cc not in _compiler_ids:
        done = subprocess.run([cc, "--version"], capture_output=True, text=True)
        _compiler_ids[cc] = done.stdout
    return _compiler_ids[cc]


def _is_gcc(cc: str) -> bool:
    """Whether `cc` is GCC (csrc/build.json's isa_gcc flags are GCC's)."""
    text = _compiler_id(cc)
    return "Free Software Foundation" in text and "clang" not in text.lower()


def _object_name(src: str) -> str:
    """An object's name from its source's path under csrc/ (graph/ops/nn/conv.c
    -> graph_ops_nn_conv), so that two files of one name never share one."""
    path = Path(src).resolve()
    csrc = ROOT / "csrc"
    parts = path.relative_to(csrc).with_suffix("").parts if path.is_relative_to(csrc) \
        else ("tests",) + path.with_suffix("").parts[-1:]
    return "_".join(parts)


def _compile_cached(cc: str, args: list[str], src: str, obj: Path) -> None:
    """cc args -c src -o obj, through OBJECT_CACHE for the library's sources
    (a test program's own file is compiled every time)."""
    if not src.startswith(str(ROOT / "csrc")):
        subprocess.run([cc, *args, "-c", src, "-o", str(obj)], check=True)
        return
    cached = OBJECT_CACHE / f"{_object_name(src)}.{_object_key(cc, args, src)}.o"
    if not cached.is_file():
        OBJECT_CACHE.mkdir(parents=True, exist_ok=True)
        # written under a unique name, then renamed: parallel test workers
        # may compile the same object at once
        tmp = cached.with_suffix(f".{os.getpid()}.{threading.get_ident()}.tmp")
        subprocess.run([cc, *args, "-c", src, "-o", str(tmp)], check=True)
        os.replace(tmp, cached)
    shutil.copyfile(cached, obj)


# The build `make native` made (pyproject.toml's build-dir): a test program
# built for the host with that build's compiler and no flags of its own links
# the installed library's own objects, not a second compile of the library
# (two minutes of make test's CI budget).
NATIVE_BUILD = ROOT / "build" / f"py3-none-linux_{os.uname().machine}"
_native_objects: dict[str, Path | None] = {}
_native_lock = threading.Lock()


def native_objects_dir(cc: str) -> Path | None:
    """NATIVE_BUILD's object folder, brought up to date (its own `cmake
    --build`, under a file lock: test workers share it), when that build's
    C compiler is `cc`; else None."""
    import fcntl
    cc = os.path.realpath(shutil.which(cc) or cc)
    with _native_lock:
        if cc in _native_objects:
            return _native_objects[cc]
        found: Path | None = None
        cache = NATIVE_BUILD / "CMakeCache.txt"
        if cache.is_file():
            m = re.search(r"^CMAKE_C_COMPILER:\w+=(.+)$", cache.read_text(), re.M)
            if m and os.path.realpath(m.group(1).strip()) == cc:
                with open(NATIVE_BUILD / ".tests.lock", "w") as lock:
                    fcntl.flock(lock, fcntl.LOCK_EX)
                    done = subprocess.run(["cmake", "--build", str(NATIVE_BUILD), "--target",
                                           "samebits"], capture_output=True, text=True)
                if done.returncode == 0:
                    found = NATIVE_BUILD / "CMakeFiles" / "samebits.dir"
        _native_objects[cc] = found
        return found


def build_check(cc: str, check_source: str | list[str], out: Path, x86: bool,
                target_flags: tuple[str, ...] = (),
                source_flags: Callable[[Path], Sequence[str]] | None = None,
                link_flags: tuple[str, ...] | None = None, isa_cc: str | None = None) -> None:
    """Compiles every .c file under csrc/ and tests/native/<check_source> with `cc`
    and `target_flags` (e.g. -m32; each ISA file with its flags on x86) and
    links them into `out`. source_flags(path) adds flags per source file, and
    link_flags replace target_flags at the link. isa_cc compiles the ISA
    kernel files instead of cc (the sanitizer builds leave those files
    uninstrumented: clang takes minutes over their unrolled code, and gcc's
    objects are the host builds' own). A library file compiled for the host
    with NATIVE_BUILD's compiler, no target_flags and no source_flags of its
    own is that build's object (native_objects_dir)."""
    files = sources()
    for name in [check_source] if isinstance(check_source, str) else check_source:
        files.append(str(ROOT / "tests" / "native" / name))
    def compile_one(src: str) -> str:
        obj = out.parent / (_object_name(src) + f".{out.name}.o")
        own = list(source_flags(Path(src)) if source_flags else [])
        compiler = isa_cc if isa_cc and isa_kernel(Path(src)) else cc
        native = native_objects_dir(compiler) if not target_flags and not own \
            and x86 == (os.uname().machine == "x86_64") and src.startswith(str(ROOT / "csrc")) \
            else None
        if native is not None:
            made = native / (os.path.relpath(src, ROOT) + ".o")
            if made.is_file():
                return str(made)
        extra = folder_flags(Path(src), x86) + own
        if isa_kernel(Path(src)) and _is_gcc(compiler):
            extra += MANIFEST["isa_gcc"]
        _compile_cached(compiler, [*target_flags, *FLAGS, *extra], src, obj)
        return str(obj)
    # one compiler per core (the files are independent)
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        objects = list(pool.map(compile_one, files))
    link = target_flags if link_flags is None else link_flags
    subprocess.run([cc, *link, "-pthread", *objects, "-o", str(out), "-lm"], check=True)
