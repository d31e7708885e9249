"""Builds the graph runtime's fuzz target (tests/fuzz/fuzz_model.c) with
clang's libFuzzer, AddressSanitizer and UndefinedBehaviorSanitizer, writes
the seed corpus (tools/make_fuzz_seeds.py) and the regression inputs, and
runs it.

    python tests/fuzz/run.py --seconds 600      # make fuzz
    python tests/fuzz/run.py --runs 2000        # the fixed-seed pass of make test

Findings are written to build/fuzz/findings/; each one that ever crashed
belongs in tests/fuzz/regressions/ (every one there is replayed first).
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "tools"))

from native_build import build_check, isa_kernel  # noqa: E402

# The graph runtime and the target under AddressSanitizer and
# UndefinedBehaviorSanitizer with the fuzzer's coverage; the framework
# under the sanitizers alone; the ISA kernel files (csrc/isa/<path>/) as
# they are (ISA_CC): their unrolled code takes clang minutes to instrument,
# and the sanitizer run of make sanitize covers them.
SANITIZERS = ("-fsanitize=address,undefined", "-fno-sanitize-recover=undefined",
              "-fno-omit-frame-pointer", "-g")
COVERAGE = ("-fsanitize=fuzzer-no-link",)
LINK = ("-fsanitize=fuzzer,address,undefined",)


def source_flags(path: Path) -> tuple[str, ...]:
    if path.parent.name in ("graph", "fuzz"):
        return SANITIZERS + COVERAGE
    if isa_kernel(path):
        return ()
    return SANITIZERS


# The ISA kernel files, uninstrumented, with the system compiler (cc, gcc
# here): clang takes minutes over their unrolled code, and make native's
# build has those objects (tests/native_build.py links them).
ISA_CC = "cc"

ENV = {"ASAN_OPTIONS": "allocator_may_return_null=1:detect_leaks=1",
       "UBSAN_OPTIONS": "halt_on_error=1:print_stacktrace=1"}


def build(out_dir: Path, cc: str = "clang-19") -> Path:
    out_dir.mkdir(parents=True, exist_ok=True)
    binary = out_dir / "fuzz_model"
    build_check(cc, ["../fuzz/fuzz_model.c"], binary, x86=os.uname().machine == "x86_64",
                source_flags=source_flags, link_flags=LINK, isa_cc=ISA_CC)
    return binary


def corpus(out_dir: Path) -> Path:
    import make_fuzz_seeds
    seeds = out_dir / "corpus"
    seeds.mkdir(parents=True, exist_ok=True)
    for name, blob in make_fuzz_seeds.seeds().items():
        (seeds / f"{name}.onnx").write_bytes(blob)
    for regression in sorted((ROOT / "tests" / "fuzz" / "regressions").glob("*")):
        shutil.copy(regression, seeds / regression.name)
    return seeds


def run(binary: Path, seeds: Path, extra: list[str], out_dir: Path) -> subprocess.CompletedProcess:
    findings = out_dir / "findings"
    findings.mkdir(parents=True, exist_ok=True)
    work = out_dir / "work"
    work.mkdir(parents=True, exist_ok=True)
    cmd = [str(binary), str(work), str(seeds), f"-artifact_prefix={findings}/",
           "-max_len=65536", "-timeout=20", "-rss_limit_mb=4096", "-print_final_stats=1", *extra]
    return subprocess.run(cmd, env={**os.environ, **ENV}, capture_output=True, text=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=int, default=0, help="run for this long")
    parser.add_argument("--runs", type=int, default=0, help="or this many inputs (fixed seed)")
    parser.add_argument("--out", default=str(ROOT / "build" / "fuzz"))
    args = parser.parse_args()
    out = Path(args.out)
    binary = build(out)
    seeds = corpus(out)
    extra = [f"-max_total_time={args.seconds}"] if args.seconds else \
        [f"-runs={args.runs or 2000}", "-seed=1"]
    if not args.seconds:   # the fixed-seed pass starts from the seeds alone: reproducible
        shutil.rmtree(out / "work", ignore_errors=True)
    result = run(binary, seeds, extra, out)
    stats = [line for line in result.stderr.splitlines() if line.startswith(("stat::", "#", "Done"))]
    print("\n".join(stats[-12:]))
    if result.returncode != 0:
        print(result.stderr[-6000:], file=sys.stderr)
    return result.returncode


if __name__ == "__main__":
    sys.exit(main())
