"""Packages py/samebits and the emscripten side module into a Pyodide wheel.

    python3 wasm/make_wheel.py --library wasm/out/libsamebits.so \
        [--fast-library wasm/out/libsamebits-relaxed.wasm] --out wasm/out

The wheel is what pyodide-build would make for this package: the Python files
under samebits/, the side module as samebits/libsamebits.so (Pyodide's
loadPackage loads every such .so of a wheel as a dynamic library before the
package is imported), and a .dist-info with METADATA, WHEEL, entry_points.txt
and RECORD. The optional relaxed-SIMD module goes in as
samebits/libsamebits-relaxed.wasm: a name without ".so", so that loadPackage
leaves it alone (an engine without relaxed SIMD rejects the whole module, and
an auto-loaded module that fails breaks the package); samebits/_binding/lib.py opens
it itself where it can, for fast mode. Its tags follow the Pyodide runtime it is meant for: by default
the one pinned in web/package.json, read from the installed
web/node_modules/pyodide/pyodide-lock.json when present. The archive is
reproducible: sorted entries, fixed timestamps (SOURCE_DATE_EPOCH if set).

Writes wasm/out/<wheel> and wasm/out/wheel.json ({"wheel": name, ...}), which
the web page and the tests read to find the wheel.

Libraries do the generic parts: auditwheel-emscripten reads the modules,
packaging writes METADATA, `wheel pack` names the wheel, writes RECORD and
zips it (all from `make deps`). What stays here is what is particular to this
package: the checks of the modules against what Pyodide loads and provides,
the tags of the pinned Pyodide, and the layout of the wheel.
"""
from __future__ import annotations

import argparse
import configparser
import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

try:
    from auditwheel_emscripten.emscripten_tools import webassembly
    from auditwheel_emscripten.emscripten_tools.webassembly import ExternType
    from auditwheel_emscripten.wasm_utils import is_wasm_module
    from packaging.metadata import Metadata
    from packaging.utils import canonicalize_name
except ImportError as error:
    raise SystemExit(f"make_wheel.py needs {error.name} (make deps: pip install "
                     "auditwheel-emscripten 'wheel<0.46' 'packaging>=26')") from error
if not hasattr(Metadata, "as_rfc822"):
    raise SystemExit("make_wheel.py needs packaging 26 or newer, which writes METADATA "
                     "(make deps: pip install 'packaging>=26')")

ROOT = Path(__file__).resolve().parent.parent
PACKAGE_DIR = ROOT / "py" / "samebits"
LOCK_FILE = ROOT / "web" / "node_modules" / "pyodide" / "pyodide-lock.json"
LIBRARY_NAME = "libsamebits.so"
FAST_LIBRARY_NAME = "libsamebits-relaxed.wasm"
PYODIDE_MAIN = ROOT / "web" / "node_modules" / "pyodide" / "pyodide.asm.wasm"

# What a side module imports from the loader rather than from C: memory, the
# function table, the stack pointer and its relocation bases.
LOADER_IMPORTS = {"env.memory", "env.__indirect_function_table", "env.__stack_pointer",
                  "env.__memory_base", "env.__table_base"}
# C library functions the freestanding relaxed module may import; used when
# Pyodide's main module is not at hand to ask what it exports.
LIBC_IMPORTS = {"malloc", "free", "calloc", "realloc", "memcpy", "memmove", "memset", "memcmp",
                "strlen", "strcmp", "snprintf", "abort", "getenv", "clock_gettime",
                # the graph runtime's (csrc/graph/): messages, names, external data files
                "vsnprintf", "memchr", "strchr", "strstr", "strcspn", "strtoll", "strtod",
                "atoi", "qsort", "fmod", "fopen", "fclose", "fread", "fseek", "ftell"}

# The runtime of the pyodide version pinned in web/package.json (314.0.7):
# Python 3.14, ABI 2026_0. Used when node_modules is not installed.
DEFAULT_ABI = "2026_0"

NATIVE_SUFFIXES = (".so", ".dylib", ".dll", ".pyd", ".pyc", ".wasm")


# ---------------------------------------------------------------- wasm check

class _Module(webassembly.Module):
    """auditwheel-emscripten's wasm reader (emscripten's tools/webassembly.py),
    keeping the limits of imported memories and tables: its get_imports reads
    them through read_limits and drops them, and their flags are the one fact
    the wheel needs that it does not return (bit 2: the memory is shared)."""

    def __init__(self, filename: str) -> None:
        super().__init__(filename)
        self.import_limits: list = []

    def read_limits(self):
        limits = super().read_limits()
        self.import_limits.append(limits)
        return limits


def side_module_facts(path: Path) -> dict:
    """What wheel building must know of a wasm module, as auditwheel-emscripten
    reads it: whether it is a dynamic library (dylink section), its imports
    ("module.field") and exports, and whether its memory is shared."""
    if not is_wasm_module(path):
        raise ValueError(f"{path} is not a WebAssembly module (no \\0asm magic)")
    with _Module(str(path)) as module:
        dylink = any(s.name in ("dylink", "dylink.0") for s in module.sections())
        imports, exports = module.get_imports(), module.get_exports()
    limited = [i for i in imports if i.kind in (ExternType.MEMORY, ExternType.TABLE)]
    if len(limited) != len(module.import_limits):
        raise RuntimeError("auditwheel-emscripten no longer reads import limits through "
                           "Module.read_limits: make_wheel.py cannot tell shared memory")
    shared = any(i.kind == ExternType.MEMORY and limits.flags & 2
                 for i, limits in zip(limited, module.import_limits))
    return {"dylink": dylink, "imports": [f"{i.module}.{i.field}" for i in imports],
            "shared_memory": shared, "exports": [e.name for e in exports]}


def check_side_module(path: Path) -> dict:
    facts = side_module_facts(path)
    problems = _side_module_problems(facts)
    if problems:
        raise SystemExit(f"make_wheel.py: {path} is not a usable Pyodide side module: "
                         + "; ".join(problems))
    return facts


def check_fast_module(path: Path) -> dict:
    """The relaxed-SIMD module: a side module like the plain one, which binds
    its own symbols inside itself and imports nothing Pyodide lacks."""
    facts = side_module_facts(path)
    problems = _side_module_problems(facts)
    exports = set(facts["exports"])
    # GOT.func.X / GOT.mem.X imports are filled from one table shared by every
    # loaded module: for a name the plain module also defines, the relaxed
    # module would get the plain module's function or data (link with -Bsymbolic).
    self_bound = [i for i in facts["imports"]
                  if i.startswith(("GOT.func.", "GOT.mem.")) and i.split(".", 2)[2] in exports]
    if self_bound:
        problems.append(f"it reaches its own symbols through the global offset table "
                        f"({', '.join(self_bound[:4])}...; link with -Bsymbolic)")
    if PYODIDE_MAIN.is_file():
        provided = set(side_module_facts(PYODIDE_MAIN)["exports"])
        source = str(PYODIDE_MAIN.relative_to(ROOT))
    else:
        provided, source = LIBC_IMPORTS, "the C library functions make_wheel.py allows"
    unresolved = [i for i in facts["imports"] if i not in LOADER_IMPORTS
                  and not (i.startswith("env.") and i[4:] in provided)]
    if unresolved:
        problems.append(f"it imports {', '.join(unresolved)}, which {source} does not provide")
    if problems:
        raise SystemExit(f"make_wheel.py: {path} is not a usable relaxed-SIMD side module: "
                         + "; ".join(problems))
    facts["imports_checked_against"] = source
    return facts


def _side_module_problems(facts: dict) -> list[str]:
    problems = []
    if not facts["dylink"]:
        problems.append("it has no dylink section (build with -sSIDE_MODULE=1)")
    if facts["shared_memory"]:
        problems.append("it imports shared memory (built with -pthread?); Pyodide cannot load it")
    if "sb_sgemm" not in facts["exports"]:
        problems.append("it does not export sb_sgemm")
    legalized = [e for e in facts["exports"] if e.startswith(("orig$", "legalstub$"))]
    if legalized:
        problems.append(f"it has legalized i64 exports {legalized[:3]} (link with -sWASM_BIGINT)")
    return problems


# ------------------------------------------------------------------- metadata

def project_metadata() -> dict:
    """pyproject.toml's [project] table, parsed by tomllib (tomli before 3.11)."""
    try:
        import tomllib
    except ImportError:   # Python < 3.11
        import tomli as tomllib
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    if "version" not in project:   # dynamic: written once, in the package
        version_file = (PACKAGE_DIR / "_version.py").read_text(encoding="utf-8")
        project["version"] = re.search(r'^__version__ = "([^"]+)"', version_file, re.M).group(1)
    return project


def runtime_tags(abi: str | None) -> tuple[str, str, str, str]:
    """(python tag, abi tag, platform tag, where they came from)."""
    source = "defaults for pyodide 314.0.7"
    if abi is None and LOCK_FILE.is_file():
        info = json.loads(LOCK_FILE.read_text(encoding="utf-8")).get("info", {})
        abi = info.get("abi_version")
        source = str(LOCK_FILE.relative_to(ROOT))
    abi = abi or DEFAULT_ABI
    year = int(abi.split("_")[0])
    # PEP 783 names the platform pyemscripten_<abi>_wasm32 from the 2026 ABI
    # (Pyodide 314) on; earlier Pyodide releases used pyodide_<abi>_wasm32.
    series = "pyemscripten" if year >= 2026 else "pyodide"
    # py3-none: the package holds no CPython extension (ctypes opens its
    # library), so any Python of that Pyodide ABI can load it
    return "py3", "none", f"{series}_{abi}_wasm32", source


def metadata_text(project: dict) -> bytes:
    """METADATA (core metadata 2.1) of pyproject.toml's [project] table,
    validated and written by packaging.metadata; the README is its body."""
    extras = project.get("optional-dependencies") or {}
    readme = ROOT / "README.md"
    body = readme.read_text(encoding="utf-8") if readme.is_file() else ""
    raw = {"metadata_version": "2.1", "name": project["name"], "version": project["version"],
           "summary": project.get("description"),
           "license": (project.get("license") or {}).get("text"),
           "requires_python": project.get("requires-python"),
           "classifiers": project.get("classifiers"),
           "provides_extra": list(extras),
           "requires_dist": [f'{req}; extra == "{extra}"'
                             for extra, requirements in extras.items() for req in requirements],
           "description": body, "description_content_type": "text/markdown" if body else None}
    return Metadata.from_raw({k: v for k, v in raw.items() if v}).as_rfc822().as_bytes()


def entry_points_text(project: dict) -> str:
    """entry_points.txt (an ini file): [project.scripts] as console_scripts,
    then [project.entry-points] (pytest11: the same_bits plugin)."""
    groups = {"console_scripts": project.get("scripts"), **(project.get("entry-points") or {})}
    parser = configparser.RawConfigParser(delimiters=("=",))
    parser.optionxform = str     # entry point names keep their case
    parser.read_dict({group: entries for group, entries in groups.items() if entries})
    text = io.StringIO()
    parser.write(text)
    return text.getvalue()


def package_files() -> list[tuple[str, Path]]:
    files = []
    for path in sorted(PACKAGE_DIR.rglob("*")):
        rel = path.relative_to(PACKAGE_DIR)
        if not path.is_file() or "__pycache__" in rel.parts or path.name.endswith(NATIVE_SUFFIXES):
            continue  # a native libsamebits.so from an in-place build must never ship here
        files.append((f"samebits/{rel.as_posix()}", path))
    if not any(name == "samebits/__init__.py" for name, _ in files):
        raise SystemExit(f"make_wheel.py: no samebits/__init__.py under {PACKAGE_DIR}")
    return files


def pack(tree: Path, out: Path) -> Path:
    """`wheel pack`: names the wheel from its dist-info folder and WHEEL tags,
    writes RECORD and zips the tree (the dist-info last, RECORD the very last;
    sorted entries, timestamps from SOURCE_DATE_EPOCH, by default 1980)."""
    for path in tree.rglob("*"):
        if path.is_file():
            path.chmod(0o644)
    out.mkdir(parents=True)
    env = {**os.environ, "SOURCE_DATE_EPOCH": os.environ.get("SOURCE_DATE_EPOCH") or "315532800"}
    proc = subprocess.run([sys.executable, "-m", "wheel", "pack", str(tree), "--dest-dir", str(out)],
                          capture_output=True, text=True, env=env)
    wheels = list(out.glob("*.whl"))
    if proc.returncode != 0 or len(wheels) != 1:
        raise SystemExit(f"make_wheel.py: wheel pack failed (make deps installs wheel):\n"
                         f"{proc.stdout}{proc.stderr}")
    return wheels[0]


def build_wheel(library: Path, out: Path,
                abi: str | None = None, fast_library: Path | None = None) -> Path:
    facts = check_side_module(library)
    fast_facts = check_fast_module(fast_library) if fast_library is not None else None
    project = project_metadata()
    py_tag, abi_tag, plat_tag, tag_source = runtime_tags(abi)
    tag = f"{py_tag}-{abi_tag}-{plat_tag}"
    dist = canonicalize_name(project["name"]).replace("-", "_")
    dist_info = f"{dist}-{project['version']}.dist-info"

    files = package_files()
    files.append((f"samebits/{LIBRARY_NAME}", library))
    if fast_library is not None:
        files.append((f"samebits/{FAST_LIBRARY_NAME}", fast_library))
    if (ROOT / "LICENSE").is_file():
        files.append((f"{dist_info}/licenses/LICENSE", ROOT / "LICENSE"))
    # WHEEL is the input of `wheel pack`: the wheel's name takes its Tag line.
    texts = {"METADATA": metadata_text(project),
             "WHEEL": ("Wheel-Version: 1.0\n"
                       "Generator: samebits wasm/make_wheel.py\n"
                       "Root-Is-Purelib: false\n"
                       f"Tag: {tag}\n").encode("ascii"),
             "entry_points.txt": entry_points_text(project).encode("utf-8")}
    with tempfile.TemporaryDirectory() as tmp:
        tree = Path(tmp) / "tree"
        for arcname, source in files:
            (tree / arcname).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, tree / arcname)
        (tree / dist_info).mkdir(parents=True, exist_ok=True)
        for name, data in texts.items():
            if data:
                (tree / dist_info / name).write_bytes(data)
        packed = pack(tree, Path(tmp) / "wheel")
        out.mkdir(parents=True, exist_ok=True)
        for old in out.glob(f"{dist}-*.whl"):
            old.unlink()
        target = Path(shutil.move(packed, out / packed.name))

    manifest = {"wheel": target.name, "tag": tag, "tag_source": tag_source,
                "library": f"samebits/{LIBRARY_NAME}", "library_bytes": library.stat().st_size,
                "library_sha256": hashlib.sha256(library.read_bytes()).hexdigest(),
                "imports": facts["imports"], "fast_library": None}
    if fast_library is not None:
        manifest.update({
            "fast_library": f"samebits/{FAST_LIBRARY_NAME}",
            "fast_library_bytes": fast_library.stat().st_size,
            "fast_library_sha256": hashlib.sha256(fast_library.read_bytes()).hexdigest(),
            "fast_imports": fast_facts["imports"],
            "fast_imports_checked_against": fast_facts["imports_checked_against"]})
    (out / "wheel.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    with_fast = f", with {FAST_LIBRARY_NAME}" if fast_library is not None else ""
    print(f"make_wheel.py: {target} ({target.stat().st_size} bytes{with_fast}; "
          f"tags from {tag_source})")
    return target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--library", type=Path, default=ROOT / "wasm" / "out" / LIBRARY_NAME,
                        help="the emscripten side module (default wasm/out/libsamebits.so)")
    parser.add_argument("--fast-library", type=Path,
                        help="the relaxed-SIMD side module for fast mode "
                        "(wasm/out/libsamebits-relaxed.wasm); none by default")
    parser.add_argument("--out", type=Path, default=ROOT / "wasm" / "out",
                        help="folder for the wheel and wheel.json (default wasm/out)")
    parser.add_argument("--abi", help="Pyodide ABI version, e.g. 2026_0 (default: "
                        "pyodide-lock.json, else 2026_0)")
    args = parser.parse_args(argv)
    if not args.library.is_file():
        parser.error(f"{args.library} does not exist; run wasm/build.sh")
    if args.fast_library is not None and not args.fast_library.is_file():
        parser.error(f"{args.fast_library} does not exist; run wasm/build.sh")
    build_wheel(args.library, args.out, args.abi, args.fast_library)
    return 0


if __name__ == "__main__":
    sys.exit(main())
