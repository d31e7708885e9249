"""The source layout of docs/design.md ("Source layout", "The Python
side"): every C file lives in one of csrc's five folders (or is the public
header), includes csrc's headers by their path from csrc/, and includes only
from its own folder and the folders below it, so that the dependency arrows
point one way; the Python package's groups (_binding, _ops, onnx, the tools)
import the same way."""
from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

CSRC = Path(__file__).resolve().parents[2] / "csrc"
# each folder, and the folders it may include from (besides itself and samebits.h)
ALLOWED = {
    "math": set(),
    "isa": {"math"},
    "framework": {"isa", "math"},
    "kernels": {"framework", "isa", "math"},
    "graph": {"kernels", "framework", "isa", "math"},
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
    # only the ISA paths (isa/<path>/) and the graph's operators
    # (graph/ops/<family>/) have folders of their own
    def nested_ok(parts: tuple[str, ...]) -> bool:
        if len(parts) <= 2:
            return True
        if parts[0] == "isa":
            return len(parts) == 3
        return parts[:2] == ("graph", "ops") and len(parts) <= 4
    deeper = [str(p.relative_to(CSRC)) for p in _files() if not nested_ok(p.relative_to(CSRC).parts)]
    assert not deeper, deeper
    isa_dirs = {p.parent.name for p in (CSRC / "isa").glob("*/*.c")}
    assert isa_dirs == set(json.loads((CSRC / "build.json").read_text())["paths"])


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


PACKAGE = Path(__file__).resolve().parents[2] / "py" / "samebits"
# each group of the Python package, and the groups it may import from
# (besides itself and the leaves samebits._version and samebits._typing)
PY_ALLOWED = {
    "_binding": set(),
    "_ops": {"_binding"},
    "onnx": {"_binding", "_ops"},
    "tools": {"_binding", "_ops", "onnx"},
}
PY_LEAVES = {"samebits._version", "samebits._typing"}


def _py_modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def _module_name(path: Path) -> str:
    parts = ("samebits",) + path.relative_to(PACKAGE).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _group(module: str) -> str:
    """The group of a module of samebits: _binding, _ops, onnx or tools."""
    parts = module.split(".")
    if len(parts) > 1 and parts[1] in ("_binding", "_ops", "onnx"):
        return parts[1]
    return "tools"


def _imports(path: Path) -> set[str]:
    """Every samebits module `path` imports (lazy imports in functions too)."""
    module = _module_name(path)
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.split(".")[0] == "samebits"}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[:len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] != "samebits":
                continue
            for alias in node.names:   # `from . import x` names a module when x is one
                sub = f"{target}.{alias.name}"
                is_module = (PACKAGE.parent / (sub.replace(".", "/") + ".py")).is_file() or \
                    (PACKAGE.parent / sub.replace(".", "/") / "__init__.py").is_file()
                found.add(sub if is_module else target)
    return found


def test_python_groups_are_the_documented_ones():
    top = {p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").is_file()}
    assert top == {"_binding", "_ops", "onnx"}


@pytest.mark.parametrize("path", _py_modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_python_imports_point_down_the_groups(path: Path):
    module = _module_name(path)
    own = _group(module)
    for target in sorted(_imports(path)):
        if target in PY_LEAVES or target == "samebits" and own == "tools":
            continue
        group = _group(target)
        assert target != "samebits" and (group == own or group in PY_ALLOWED[own]), \
            f"{module} ({own}) imports {target} ({group}): {own} may import only from " \
            f"{sorted(PY_ALLOWED[own]) or 'itself'} and {sorted(PY_LEAVES)}"


# ---- no circles -------------------------------------------------------------------

def _strongly_connected(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan's)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def _c_code(path: Path) -> str:
    """A C file's text without comments and string literals."""
    text = re.sub(r"/\*.*?\*/", " ", path.read_text(), flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    return re.sub(r'"(\\.|[^"\\])*"', '""', text)


# a function defined at file scope, not static: the name before its parameters
C_DEFINITION = re.compile(r"^(?!static\b)[A-Za-z_][\w \*]*?\b([A-Za-z_]\w*)\s*\(([^;{]|\n)*?\)\s*\{",
                          re.M)


def c_calls() -> dict[str, set[str]]:
    """For each .c file under csrc/, the other .c files whose functions it
    names (calls, or takes the address of)."""
    code = {str(p.relative_to(CSRC)): _c_code(p) for p in _files() if p.suffix == ".c"}
    defined_in: dict[str, str] = {}
    for name, text in code.items():
        for m in C_DEFINITION.finditer(text):
            defined_in.setdefault(m.group(1), name)
    return {name: {defined_in[w] for w in set(re.findall(r"\b[A-Za-z_]\w*\b", text))
                   if defined_in.get(w, name) != name}
            for name, text in code.items()}


def test_the_definition_finder_sees_the_runtime():
    calls = c_calls()
    # session.c calls the executor, which calls the plan cache
    assert "graph/executor.c" in calls["graph/session.c"]
    assert "graph/plan_cache.c" in calls["graph/executor.c"]


def test_no_c_file_circles():
    """No two C files call each other, directly or around a loop: each
    layer's files form a tree of callers and callees (docs/design.md)."""
    circles = _strongly_connected(c_calls())
    assert not circles, f"C files that call each other around a loop: {circles}"


def test_no_python_import_circles():
    edges = {_module_name(p): {t for t in _imports(p) if t != _module_name(p)}
             for p in _py_modules()}
    # a package's __init__ importing its own modules is not a circle of code
    for module, targets in edges.items():
        edges[module] = {t for t in targets if not (module.startswith(t + ".") and
                                                     (PACKAGE.parent / t.replace(".", "/") / "__init__.py").is_file())}
    circles = _strongly_connected(edges)
    assert not circles, f"Python modules that import each other around a loop: {circles}"
