"""avx512's 256-bit kernels for CPUs that split 512-bit operations (AMD Zen
4): the exact tiles, 6 x 32 for products and 8 x 24 for convolutions, and the
channels-in-lanes convolutions of small maps in both modes
(csrc/isa/avx512/ukernel_avx512_ymm.c, csrc/kernels/conv_lanes.c). The CPU
check decides whether a machine runs them; SAMEBITS_SPLIT_512 forces the
answer, so every AVX-512 machine tests both settings here, each in a fresh
process (the library reads the variable once):

- test_exact's and test_conv's exact cases on the avx512 path, against the
  naive C loops bit for bit, at 1 and 2 threads;
- the plans name the tiles and routes the setting asks for;
- products and convolutions of model shapes (special values included) have
  the same bits under both settings, in exact and in fast mode."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import samebits

HERE = Path(__file__).resolve().parent

DIGEST = r"""
import hashlib, json, sys
sys.path[:0] = [sys.argv[1], sys.argv[1] + "/.."]
import samebits
from conftest import test_values
digest = hashlib.sha256()
plans = []
with samebits.use_path("avx512"):
    for m, k, n in [(128, 384, 1536), (7, 300, 45), (1, 64, 96), (6, 32, 32), (250, 17, 70)]:
        a, b = test_values((m, k), m + k, 8), test_values((k, n), k + n, 8)
        for threads in (1, 2):
            digest.update(samebits.matmul(a, b, mode="exact", threads=threads).tobytes())
    plans.append(str(samebits.explain(samebits.matmul, a, b, mode="exact")))
    # (c, h, cout, k, stride, groups): 3x3, pointwise, strided, the stem, grouped,
    # one output channel (a row of A: the 4 x 32 tile's row kernel), and per
    # group; then 7x7 maps (channels in lanes): 3x3, pointwise over several k-blocks,
    # strided, grouped, and 13 columns (tiles of 7 and 6)
    for c, h, cout, k, stride, groups in [(64, 30, 64, 3, 1, 1), (48, 17, 72, 1, 1, 1),
                                          (32, 39, 40, 3, 2, 1), (3, 45, 24, 7, 2, 1),
                                          (40, 12, 64, 3, 1, 4), (16, 11, 1, 3, 1, 1),
                                          (8, 9, 4, 3, 1, 4), (64, 7, 40, 3, 1, 1),
                                          (600, 7, 70, 1, 1, 1), (24, 14, 48, 3, 2, 1),
                                          (36, 7, 96, 3, 1, 3), (20, 13, 33, 3, 1, 1)]:
        x = test_values((1, c, h, h), c + h, 8)
        w = test_values((cout, c // groups, k, k), cout + k, 2)
        bias = test_values((cout,), c)
        for mode in ("exact", "fast"):
            for threads in (1, 2):
                y = samebits.conv2d(x, w, bias, stride=stride, padding=k // 2, groups=groups,
                                    activation="relu", mode=mode, threads=threads)
                digest.update(y.tobytes())
            plans.append(str(samebits.explain(samebits.conv2d, x, w, bias, stride=stride,
                                              padding=k // 2, groups=groups, mode=mode)))
print(json.dumps({"digest": digest.hexdigest(), "plans": plans}))
"""


def _env(split: str) -> dict:
    return dict(os.environ, SAMEBITS_SPLIT_512=split)


def _require_avx512() -> None:
    if "avx512" not in samebits.paths():
        pytest.skip("the avx512 path cannot run on this CPU")


@pytest.mark.parametrize("split", ["0", "1"])
def test_exact_cases_against_the_naive_loops(split: str):
    _require_avx512()
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", "not slow",
         "-k", "avx512 and (exact or gatherer or offsets or model_layers)",
         str(HERE / "test_exact.py"), str(HERE / "test_conv.py")],
        env=_env(split), capture_output=True, text=True, timeout=900, cwd=HERE.parent.parent)
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-2000:]
    assert " passed" in out.stdout and " failed" not in out.stdout, out.stdout[-2000:]


def test_both_settings_give_the_same_bits():
    _require_avx512()
    runs = {}
    for split in ("0", "1"):
        out = subprocess.run([sys.executable, "-c", DIGEST, str(HERE)], env=_env(split),
                             capture_output=True, text=True, timeout=600)
        assert out.returncode == 0, out.stdout + out.stderr
        runs[split] = json.loads(out.stdout.strip().splitlines()[-1])
    product_plan, conv_plans = runs["1"]["plans"][0], runs["1"]["plans"][1:]
    assert "tile 6x32" in product_plan, product_plan
    exact_plans, fast_plans = conv_plans[0::2], conv_plans[1::2]
    # at most 4 output channels per group (cases 5 and 6, one each) pack for the
    # 4x32 tile, whose row kernel they take; the others the split 8x24 or lanes
    few = {5, 6}
    assert all("route row" in p and "tile 4x32" in p for i, p in enumerate(exact_plans)
               if i in few), conv_plans
    assert all("tile 8x24" in p or "route channel lanes" in p for i, p in enumerate(exact_plans)
               if i not in few), conv_plans
    # channel lanes (conv_lanes.c) where the pixel tile would compute over 1.1 times
    # the positions kept (1.2 pointwise), and for layers with taps and 48 or more
    # output channels per group: in fast mode all of them, in exact mode those with
    # stride 1 and stems
    assert ["route channel lanes" in p for p in exact_plans] == [
        True, False, False, False, False, False, False, True, False, True, True, False], conv_plans
    assert ["route channel lanes" in p for p in fast_plans] == [
        True, False, False, False, False, False, False, True, True, True, True, False], conv_plans
    # without the split, no 256-bit tile; the route only where the pixel tile
    # would pad (the 7x7 maps), on its 512-bit kernels (lanes_wide_avx512.c)
    assert not any("tile 6x32" in p or "tile 8x24" in p for p in runs["0"]["plans"]), runs["0"]
    whole = runs["0"]["plans"][1:]
    for plans in (whole[0::2], whole[1::2]):
        assert ["route channel lanes" in p for p in plans] == [
            False, False, False, False, False, False, False, True, True, True, True, False], whole
    assert runs["1"]["digest"] == runs["0"]["digest"]
