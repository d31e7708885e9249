"""Builds the models hash suite's files for Node and the browser:
web/out/models/<network>.onnx and <network>.feeds, and models.json with
the native exact lines they must reproduce.

    python web/make_models.py [--networks resnet50,minilm_l6] [--out web/out/models]

The networks are samebits' reference networks (samebits.onnx.reference,
built with onnx.helper: needs numpy and onnx); the feeds are their fixed
inputs in samebits.onnx.suite's container. The native lines are computed
here with the installed samebits, exact mode, its default path, one thread.
Files already there with the right bytes are not rewritten.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = ROOT / "web" / "out" / "models"


def _write(path: Path, data: bytes) -> None:
    if path.is_file() and path.stat().st_size == len(data) and path.read_bytes() == data:
        return
    path.write_bytes(data)


def make_models(out: Path = DEFAULT_OUT, networks: list[str] | None = None,
                echo: bool = False, manifest: bool = True) -> dict:
    """Writes each network's .onnx and .feeds into `out`, and models.json (the
    models suite's list, which the Node and browser suites run) unless
    `manifest` is false: a benchmark that only needs some networks' files
    must not replace the suite's list with its own."""
    import samebits
    from samebits.onnx import suite
    names = networks or list(suite.SUITE_NETWORKS)
    out.mkdir(parents=True, exist_ok=True)
    doc = {"header": suite.header(), "path": samebits.path(), "networks": []}
    for name in names:
        model, feeds = suite.build_files([name])[name]
        _write(out / f"{name}.onnx", model)
        _write(out / f"{name}.feeds", feeds)
        line = suite.lines({name: (model, feeds)}, paths=[samebits.path()], threads=[1])[0]
        if echo:
            print(line, flush=True)
        doc["networks"].append({"name": name, "model": f"{name}.onnx", "feeds": f"{name}.feeds",
                                "model_sha256": hashlib.sha256(model).hexdigest(),
                                "bytes": len(model), "native": line})
    if manifest:
        (out / "models.json").write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    return doc


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--networks", default="", help="comma-separated (default: all)")
    args = parser.parse_args(argv)
    make_models(args.out, [n for n in args.networks.split(",") if n] or None, echo=True)
    print(f"make_models.py: wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
