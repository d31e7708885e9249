"""The source layout of docs/design.md ("Source layout"): every C file lives
in one of csrc's five folders (or is the public header), includes csrc's
headers by their path from csrc/, and includes only from its own folder and
the folders below it, so that the dependency arrows point one way."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

CSRC = Path(__file__).resolve().parent.parent / "csrc"
# each folder, and the folders it may include from (besides itself and samebits.h)
ALLOWED = {
    "math": set(),
    "isa": {"math"},
    "framework": {"isa", "math"},
    "ops": {"framework", "isa", "math"},
    "graph": {"ops", "framework", "isa", "math"},
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def _files() -> list[Path]:
    return sorted(p for p in CSRC.rglob("*") if p.suffix in (".c", ".h"))


def _folder(path: Path) -> str:
    return path.relative_to(CSRC).parts[0]


def test_every_file_is_in_a_folder_of_the_layout():
    stray = [str(p.relative_to(CSRC)) for p in _files()
             if p.name != "samebits.h" and (p.parent == CSRC or _folder(p) not in ALLOWED)]
    assert not stray, f"files outside csrc's folders (docs/design.md): {stray}"
    # only the ISA paths have folders of their own, one level down
    deeper = [str(p.relative_to(CSRC)) for p in _files()
              if len(p.relative_to(CSRC).parts) > 2 and _folder(p) != "isa"]
    assert not deeper, deeper
    isa_dirs = {p.parent.name for p in (CSRC / "isa").glob("*/*.c")}
    assert isa_dirs == {"scalar", "vec4", "avx2", "avx512", "neon"}


@pytest.mark.parametrize("path", _files(), ids=lambda p: str(p.relative_to(CSRC)))
def test_includes_point_down_the_layout(path: Path):
    if path.name == "samebits.h":
        assert not INCLUDE.findall(path.read_text())
        return
    own = _folder(path)
    for name in INCLUDE.findall(path.read_text()):
        if name == "samebits.h":
            continue
        target = CSRC / name
        assert target.is_file(), f"{path.relative_to(CSRC)} includes {name!r}: " \
            "not a path from csrc/ to a header"
        folder = _folder(target)
        assert folder == own or folder in ALLOWED[own], \
            f"{path.relative_to(CSRC)} ({own}/) includes {name} ({folder}/): " \
            f"{own}/ may include only from {sorted(ALLOWED[own]) or 'itself'}"
