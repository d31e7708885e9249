"""Prints the build settings of csrc/build.json for the shell build scripts.

    python3 tools/build_flags.py common            # -std=..., the exact-mode flags, the errors
    python3 tools/build_flags.py warnings
    python3 tools/build_flags.py paths             # the ISA paths, in index order
    python3 tools/build_flags.py folder FILE KIND  # a source file's folder flags; KIND is
                                                   # gcc, clang or x86 (the others print nothing)
    python3 tools/build_flags.py folders KIND      # one line per folder with flags of KIND:
                                                   # the folder (under csrc/), then its flags

Each prints the words of a line separated by spaces (flags hold none)."""
from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MANIFEST = ROOT / "csrc" / "build.json"


def manifest() -> dict:
    data: dict = json.loads(MANIFEST.read_text())
    return data


def common(m: dict) -> list[str]:
    """The flags every file of the library gets, on every target."""
    return [f"-std={m['std']}", *m["exact"], *m["errors"]]


def folder(m: dict, source: str, kind: str) -> list[str]:
    """The flags of `source`'s folder (a path under csrc/, or an absolute one) for a
    compiler of `kind`: gcc, clang or x86 (the x86 target's ISA flags)."""
    path = Path(source).resolve()
    csrc = (ROOT / "csrc").resolve()
    rel = path.relative_to(csrc).parent.as_posix() if path.is_relative_to(csrc) else Path(source).parent.as_posix()
    flags: list[str] = m["folders"].get(rel, {}).get(kind, [])
    return flags


def main(argv: list[str]) -> int:
    m = manifest()
    if argv[:1] == ["common"]:
        print(" ".join(common(m)))
    elif argv[:1] == ["warnings"]:
        print(" ".join(m["warnings"]))
    elif argv[:1] == ["paths"]:
        print(" ".join(m["paths"]))
    elif argv[:1] == ["folders"] and len(argv) == 2:
        for name, kinds in m["folders"].items():
            if kinds.get(argv[1]):
                print(" ".join([name, *kinds[argv[1]]]))
    elif argv[:1] == ["folder"] and len(argv) == 3:
        print(" ".join(folder(m, argv[1], argv[2])))
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
