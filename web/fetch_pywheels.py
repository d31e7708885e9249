"""Downloads from PyPI the pure-Python wheels that the Pyodide pages install
besides samebits (pytest and what it imports, micropip), at the versions
Pyodide's own lock file names, into web/out/pywheels/ with a manifest.

    python web/fetch_pywheels.py

Pyodide's npm package holds no package wheels (they live on its CDN, which
the tests never reach), and these are pure Python, so PyPI's files are the
same files. Nothing is downloaded when they are already there.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
LOCK = HERE / "node_modules" / "pyodide" / "pyodide-lock.json"
OUT = HERE / "out" / "pywheels"
# pytest's imports on Python >= 3.11 (Pyodide's lock lists old extras too), and micropip
PACKAGES = ("pytest", "pluggy", "iniconfig", "packaging", "pygments", "micropip")


def main() -> int:
    if not LOCK.is_file():
        raise SystemExit(f"{LOCK} is missing: run npm ci in web/")
    document = json.loads(LOCK.read_text())
    lock = document["packages"]
    python = ".".join(document["info"]["python"].split(".")[:2])   # Pyodide's, not ours
    OUT.mkdir(parents=True, exist_ok=True)
    files = {}
    for name in PACKAGES:
        entry = lock[name]
        target = OUT / entry["file_name"]
        if not target.is_file():
            subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps",
                            "--only-binary=:all:", "--disable-pip-version-check",
                            "--python-version", python,
                            "-d", str(OUT), f"{name}=={entry['version']}"], check=True)
        if not target.is_file():
            raise SystemExit(f"pip did not produce {target.name}")
        files[name] = target.name
    (OUT / "pywheels.json").write_text(json.dumps(files, indent=1) + "\n")
    print(f"fetch_pywheels.py: {len(files)} wheels in {OUT.relative_to(HERE.parent)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
