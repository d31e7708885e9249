"""Writes py/samebits/__init__.pyi: the package's public functions with
precise return types for type checkers (numpy in, numpy out; buffers in,
memoryview out; out= given, out returned), from their runtime signatures.

    python tools/make_stubs.py           # rewrite the stub
    python tools/make_stubs.py --check   # exit 1 when the stub is stale

Functions that take no array (info, paths, set_num_threads, ...) and the
classes are re-exported from their modules, whose own annotations apply.
"""
from __future__ import annotations

import argparse
import inspect
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
STUB = ROOT / "py" / "samebits" / "__init__.pyi"
ARRAYS = ("x", "a", "b", "w", "weight", "query", "key", "value", "running_mean", "running_var")

HEADER = '''"""Type stub of samebits (written by tools/make_stubs.py; do not edit)."""
from typing import Any, Optional, Sequence, TypeVar, Union, overload

import numpy as np
from numpy.typing import NDArray

from ._typing import Mode as Mode
from . import onnx as onnx
{reexports}

IntOrPair = Union[int, Sequence[int]]
IntPair = Union[int, Sequence[int]]
_Out = TypeVar("_Out")
__version__: str
__all__: list[str]
'''


def _param(p: inspect.Parameter, annotation: str) -> str:
    text = f"{p.name}: {annotation}"
    if p.default is not inspect.Parameter.empty:
        text += " = ..."
    return text


def _render(name: str, sig: inspect.Signature, arrays: list[str], variant: str) -> str:
    """One overload. variant: "out", an array parameter's name, or "buffers"."""
    parts, star = [], False
    for p in sig.parameters.values():
        if p.kind is inspect.Parameter.KEYWORD_ONLY and not star:
            parts.append("*")
            star = True
        if p.name == "out":
            parts.append("out: _Out" if variant == "out" else "out: None = ...")
            continue
        if p.name in arrays:
            ann = "NDArray[Any]" if variant == p.name else "Any"
        else:
            ann = p.annotation if isinstance(p.annotation, str) else "Any"
        parts.append(_param(p, ann))
    result = {"out": "_Out", "buffers": "memoryview"}.get(variant, "NDArray[np.float32]")
    return f"@overload\ndef {name}({', '.join(parts)}) -> {result}: ..."


def _library_for_the_sources() -> None:
    """The sources in py/ hold no built library: use the installed package's
    (pip install .), unless SAMEBITS_LIBRARY names one."""
    import importlib.util
    import os
    if os.environ.get("SAMEBITS_LIBRARY") or (ROOT / "py" / "samebits" / "libsamebits.so").exists():
        return
    spec = importlib.util.find_spec("samebits")
    if spec is not None and spec.origin:
        installed = Path(spec.origin).parent / "libsamebits.so"
        if installed.is_file():
            os.environ["SAMEBITS_LIBRARY"] = str(installed)


def stub_text() -> str:
    _library_for_the_sources()
    sys.path.insert(0, str(ROOT / "py"))
    import samebits
    reexports, blocks = [], []
    for name in samebits.__all__:
        obj = getattr(samebits, name)
        if name == "__version__":
            continue
        sig = None if isinstance(obj, type) else inspect.signature(obj)
        arrays = [p for p in (sig.parameters if sig else ()) if p in ARRAYS]
        if sig is None or not arrays or "out" not in sig.parameters:
            reexports.append(f"from {obj.__module__.replace('samebits', '', 1)} import "
                             f"{name} as {name}")
            continue
        variants = ["out"] + arrays + ["buffers"]
        blocks.append("\n".join(_render(name, sig, arrays, v) for v in variants))
    return HEADER.format(reexports="\n".join(reexports)) + "\n\n" + "\n\n".join(blocks) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    text = stub_text()
    if args.check:
        if STUB.read_text() != text:
            print(f"{STUB} is stale: run python tools/make_stubs.py", file=sys.stderr)
            return 1
        return 0
    STUB.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
