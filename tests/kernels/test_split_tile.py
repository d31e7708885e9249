"""avx512's exact tile for CPUs that split 512-bit operations (AMD Zen 4):
6 x 32 over 256-bit vectors (csrc/isa/avx512/ukernel_avx512_ymm.c). The CPU
check decides whether a machine runs it; SAMEBITS_SPLIT_512 forces the
answer, so every AVX-512 machine tests both tiles here. Each runs in a fresh
process (the library reads the variable once) against the naive C loop over
every m, n up to 70 (test_exact's sweep), on one and two threads, and the
two tiles' products of a transformer's shapes must have the same bits."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import samebits

HERE = Path(__file__).resolve().parent

CHILD = r"""
import hashlib, json, sys
import numpy as np
sys.path[:0] = [sys.argv[1], sys.argv[1] + "/.."]
import samebits
from test_exact import _sweep
from conftest import test_values
_sweep("avx512", [0, 1, 2, 5, 13, 70], threads=1)
_sweep("avx512", [0, 3, 33], threads=2)
digest = hashlib.sha256()
with samebits.use_path("avx512"):
    for m, k, n in [(128, 384, 1536), (7, 300, 45), (1, 64, 96), (6, 32, 32), (250, 17, 70)]:
        a = test_values((m, k), m + k, 8)
        b = test_values((k, n), k + n, 8)
        for threads in (1, 2):
            digest.update(samebits.matmul(a, b, mode="exact", threads=threads).tobytes())
    plan = str(samebits.explain(samebits.matmul, a, b, mode="exact"))
print(json.dumps({"digest": digest.hexdigest(), "plan": plan}))
"""


def _run(split: str) -> dict:
    env = dict(os.environ, SAMEBITS_SPLIT_512=split)
    out = subprocess.run([sys.executable, "-c", CHILD, str(HERE)], env=env, capture_output=True,
                         text=True, timeout=600)
    assert out.returncode == 0, out.stdout + out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_both_exact_tiles_match_the_naive_loop_and_each_other():
    if "avx512" not in samebits.paths():
        pytest.skip("the avx512 path cannot run on this CPU")
    split, whole = _run("1"), _run("0")
    assert "tile 6x32" in split["plan"], split["plan"]
    assert "tile 6x32" not in whole["plan"], whole["plan"]
    assert split["digest"] == whole["digest"]
