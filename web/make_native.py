"""Writes the native hash lines the page compares against: web/out/native.json.

    python web/make_native.py [--out web/out/native.json] [samebits hashes options]

Runs `python -m samebits hashes` with the installed native samebits (by
default all suites, gemm, conv and ops, both modes, every path this CPU runs,
one thread) and stores its headers and lines as JSON: {"headers": {"gemm":
..., "conv": ...}, "header": (the first), "lines": [...], "command": [...],
"platform": ...}, printing the lines as they come. Extra arguments go to
`samebits hashes` unchanged, e.g. `--timing`, `--groups sweep`,
`--suites conv` or `--threads 1,2`.
"""
from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = ROOT / "web" / "out" / "native.json"


def header_suite(line: str) -> str:
    """The suite of a header line (as samebits.hashes.header_suite, without
    importing samebits here): "conv" or "ops" for those suites, else "gemm"."""
    for suite in ("conv", "ops"):
        if line.startswith(f"# samebits {suite} suite"):
            return suite
    return "gemm"


def native_hashes(hash_args: list[str], echo: bool = False) -> dict:
    """Runs the native CLI in a fresh process and returns the JSON document;
    echo=True prints its lines as they come (timing comments included)."""
    args = list(hash_args)
    if not any(a.startswith("--modes") for a in args):
        args += ["--modes", "exact,fast"]
    if not any(a.startswith("--threads") for a in args):
        args += ["--threads", "1"]
    command = [sys.executable, "-m", "samebits", "hashes", *args]
    # Run outside the repository root so that only the installed package is found.
    out = []
    with subprocess.Popen(command, cwd=str(ROOT / "web"), stdout=subprocess.PIPE,
                          text=True) as proc:
        for line in proc.stdout:
            if echo:
                print(line, end="", flush=True)
            if line.strip():
                out.append(line.rstrip("\n"))
    if proc.returncode != 0:
        raise SystemExit(f"make_native.py: {' '.join(command)} failed ({proc.returncode})")
    headers = [l for l in out if l.startswith("# samebits ")]
    return {"headers": {header_suite(h): h for h in headers},
            "header": headers[0] if headers else None,
            "lines": [l.split("  #")[0].rstrip() for l in out if not l.startswith("#")],
            "command": ["python", "-m", "samebits", "hashes", *args],
            "platform": f"{sys.platform} {platform.machine()} python {platform.python_version()}"}


def write_native(out: Path, hash_args: list[str], echo: bool = False) -> dict:
    doc = native_hashes(hash_args, echo)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    return doc


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args, hash_args = parser.parse_known_args(argv)
    write_native(args.out, hash_args, echo=True)
    print(f"make_native.py: wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
