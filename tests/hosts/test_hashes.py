"""The hash suite: exact lines equal for every path and thread count."""
from __future__ import annotations

import hashlib
import subprocess
import sys

import numpy as np
import pytest

import samebits
from samebits import _testdata, hashes
from samebits._binding import lib as _lib, paths as _paths

QUICK = ("sweep", "random")


def _digests(lines):
    return {hashes.parse_line(line)[3] for line in lines}


def test_exact_lines_equal_across_paths_and_threads_quick_groups():
    lines = hashes.hash_lines(["exact"], samebits.paths(), [1, 2], QUICK)
    assert len(lines) == 2 * len(samebits.paths())
    assert len(_digests(lines)) == 1, "\n".join(lines)


# The exact digest of suite v1, first printed by the issue-2 kernels (checked
# then against the naive loop, the numpy oracle and Chromium). A regression pin:
# later kernel work must not change a bit; a change of the suite itself must
# bump hashes.SUITE_VERSION and this value together.
SUITE_V1_EXACT = "54a4af460d261c965c734ee35ee4e8f85d1dcf57854ba2dbf7a0839f8b383fcb"


@pytest.mark.slow
def test_full_suite_exact_lines_are_pinned(path):
    lines = hashes.hash_lines(["exact"], [path], [1, 2])
    assert _digests(lines) == {SUITE_V1_EXACT}, "\n".join(lines)


def test_fast_lines_repeat_across_threads():
    for path in samebits.paths():
        lines = hashes.hash_lines(["fast"], [path], [1, 2], QUICK)
        assert len(_digests(lines)) == 1, "\n".join(lines)


def test_one_flipped_bit_changes_the_digest():
    base = hashes.suite_digest("exact", "scalar", 1, ["random"])
    assert hashes.suite_digest("exact", "scalar", 1, ["random"], flip_bit=0) != base
    assert hashes.suite_digest("exact", "scalar", 1, ["random"]) == base


def test_suite_is_what_the_docs_say():
    cases = hashes.suite()
    assert len(cases) == 514 + 48 + 15
    assert cases[0] == hashes.Case("sweep", 0, 0, 0)
    assert cases[257] == hashes.Case("sweep", 0, 1, 2)
    assert any(c.a_transposed for c in cases) and any(c.b_transposed for c in cases)
    assert any(c.pad_a and c.pad_b and c.pad_c for c in cases)


def test_cli_prints_header_and_lines():
    out = subprocess.run([sys.executable, "-m", "samebits", "hashes", "--modes", "exact",
                          "--paths", "scalar", "--threads", "1", "--groups", "random",
                          "--suites", "gemm"],
                         capture_output=True, text=True, check=True, timeout=300).stdout
    header, line = out.strip().splitlines()
    assert header.startswith("# samebits hash suite v1: 48 random")
    assert hashes.parse_line(line)[:3] == ("exact", "scalar", 1)
    assert hashes.parse_line(line)[3] == hashes.suite_digest("exact", "scalar", 1, ["random"])


def test_gemm_lines_keep_the_v1_format():
    """The gemm suite's lines are those of suite v1, character for character."""
    line = hashes.format_line("exact", "avx2", 1, "ab" * 32)
    assert line == "exact avx2   threads=1   sha256=" + "ab" * 32
    assert hashes.parse_line(line) == ("exact", "avx2", 1, "ab" * 32, "gemm")
    assert hashes.header() == "# samebits hash suite v1: 514 sweep, 48 random, 15 models products"
    conv = hashes.format_line("fast", "vec4", 2, "cd" * 32, suite="conv")
    assert conv == "conv fast  vec4   threads=2   sha256=" + "cd" * 32
    assert hashes.parse_line(conv) == ("fast", "vec4", 2, "cd" * 32, "conv")
    assert hashes.header_suite(hashes.header(suite="conv")) == "conv"
    assert hashes.header_suite(hashes.header(["sweep"])) == "gemm"
    with pytest.raises(ValueError):
        hashes.parse_line("conv exact avx2 sha256=00")


@pytest.mark.parametrize("suite", ["gemm", "conv"])
def test_hash_lines_check_threads_before_c(suite):
    # The conv suite's int64 argument array wrapped 2**64 + 1 to 1 thread
    # while the line said threads=18446744073709551617; 0 was the C
    # library's bare 'rejected its arguments'.
    with pytest.raises(ValueError, match="hashes: threads must be at least 1, got 0"):
        hashes.hash_lines(["exact"], [samebits.path()], [0], QUICK, suite=suite)
    with pytest.raises(TypeError, match="hashes: threads must be an int, got bool"):
        hashes.hash_lines(["exact"], [samebits.path()], [True], QUICK, suite=suite)


# ---- The conv suite -------------------------------------------------------

# The exact digest of conv suite v2 (v1, without the squeeze-and-excitation
# layers, was ed8f2f6d...), equal to the digest of the C library's
# plain-loop reference (sb_conv2d_naive) and a numpy max pool
# (test_conv_suite_matches_the_references). A regression pin, like
# SUITE_V1_EXACT: a change of the conv suite itself must bump
# hashes.CONV_SUITE_VERSION and this value together.
CONV_V2_EXACT = "ad73d0b45675b9a716c57971a1f8041970455c8bb27ece1c06fecaca9b5e71e4"


def test_conv_suite_is_what_the_docs_say():
    from samebits.shapes import (MOBILENETV3_LARGE_CONVS, MOBILENETV3_LARGE_SE_CONVS,
                                 RESNET50_CONVS)
    cases = hashes.conv_suite()
    assert len(cases) == (len(RESNET50_CONVS) + 1 + len(MOBILENETV3_LARGE_CONVS) +
                          len(MOBILENETV3_LARGE_SE_CONVS)) == 68
    assert hashes.header(suite="conv") == "# samebits conv suite v2: 67 convolutions, 1 max pool"
    stem, pool = cases[0], cases[1]
    assert (stem.name, stem.c, stem.h, stem.cout, stem.kh, stem.stride, stem.padding,
            stem.activation) == ("stem7x7", 3, 224, 64, 7, 2, 3, None)
    assert pool == hashes.ConvCase("ResNet-50", "maxpool3x3", "maxpool", 64, 112, 112, 64,
                                   3, 3, 2, 1, 1, None)
    assert (pool.out_h, pool.out_w) == (56, 56)
    convs = [c for c in cases if c.kind == "conv"]
    for model, shapes in (("ResNet-50", RESNET50_CONVS),
                          ("MobileNetV3-large", MOBILENETV3_LARGE_CONVS),
                          ("MobileNetV3-large SE", MOBILENETV3_LARGE_SE_CONVS)):
        mine = [c for c in convs if c.model == model]
        assert [(c.name, c.c, c.h, c.w, c.cout, c.kh, c.kw, c.stride, c.padding, c.groups)
                for c in mine] == [(s.name, s.c, s.h, s.w, s.cout, s.kh, s.kw, s.stride,
                                    s.padding, s.groups) for s in shapes]
        act = hashes.CONV_ACTIVATIONS[model]
        assert [c.activation for c in mine] == [act if i % 2 else None for i in range(len(mine))]
    depthwise = [c for c in convs if c.groups > 1]
    assert len(depthwise) == 12 and all(c.groups == c.c == c.cout for c in depthwise)
    assert {c.kh for c in depthwise} == {3, 5} and {c.stride for c in depthwise} == {1, 2}
    squeeze = [c for c in convs if c.model == "MobileNetV3-large SE"]
    assert [(c.c, c.cout) for c in squeeze[:4]] == [(72, 24), (24, 72), (120, 32), (32, 120)]
    assert len(squeeze) == 10 and all((c.h, c.w, c.kh, c.kw) == (1, 1, 1, 1) for c in squeeze)


def _conv_digests(lines):
    assert all(hashes.parse_line(line).suite == "conv" for line in lines), lines
    return {hashes.parse_line(line).digest for line in lines}


def test_conv_exact_lines_are_pinned(path):
    """The path at 1 and 2 threads gives the pinned exact conv digest (the
    depthwise layers included: they run the direct kernel)."""
    lines = hashes.hash_lines(["exact"], [path], [1, 2], suite="conv")
    assert len(lines) == 2
    assert _conv_digests(lines) == {CONV_V2_EXACT}, "\n".join(lines)


def test_conv_fast_lines_repeat_across_threads():
    for path in samebits.paths():
        lines = hashes.hash_lines(["fast"], [path], [1, 2], suite="conv")
        assert len(_conv_digests(lines)) == 1, "\n".join(lines)


def test_conv_one_flipped_bit_changes_the_digest():
    line = hashes.hash_lines(["exact"], [samebits.path()], [1], suite="conv")[0]
    flipped = hashes.hash_lines(["exact"], [samebits.path()], [1], suite="conv", flip_bit=3)[0]
    assert hashes.parse_line(line).digest == CONV_V2_EXACT
    assert hashes.parse_line(flipped).digest != CONV_V2_EXACT


def _max_pool_reference(x: np.ndarray, k: int, stride: int, pad: int) -> np.ndarray:
    """docs/maxpool.md for a k x k window: the largest non-NaN inside tap, a
    later tap replacing the kept one only when strictly greater; all-NaN
    windows give the canonical NaN, windows without an inside tap -FLT_MAX."""
    n, c, h, w = x.shape
    oh, ow = (h + 2 * pad - k) // stride + 1, (w + 2 * pad - k) // stride + 1
    best = np.zeros((n, c, oh, ow), np.float32)
    have = np.zeros(best.shape, bool)
    inside_any = np.zeros((oh, ow), bool)
    for ky in range(k):
        for kx in range(k):
            iy = np.arange(oh) * stride + ky - pad
            ix = np.arange(ow) * stride + kx - pad
            inside = ((iy >= 0) & (iy < h))[:, None] & ((ix >= 0) & (ix < w))[None, :]
            tap = x[:, :, np.clip(iy, 0, h - 1)][:, :, :, np.clip(ix, 0, w - 1)]
            valid = inside & ~np.isnan(tap)
            take = valid & (~have | (tap > best))
            best = np.where(take, tap, best)
            have |= valid
            inside_any |= inside
    nan = np.array([0x7FC00000], np.uint32).view(np.float32)[0]
    lowest = np.array([0xFF7FFFFF], np.uint32).view(np.float32)[0]
    return np.where(have, best, np.where(inside_any, nan, lowest)).astype(np.float32)


@pytest.mark.slow
def test_conv_suite_matches_the_references():
    """Entry by entry, the exact outputs (best path, 2 threads) have the bits of
    the C plain-loop reference (convolutions) and of a numpy max pool, and the
    references' digest is the pinned one: the pin depends only on the
    definition, not on any kernel."""
    digest = hashlib.sha256()
    path = _paths.path_index(samebits.path())
    for i, case in enumerate(hashes.conv_suite()):
        got = hashes.conv_case_output(case, i, _lib.MODE_EXACT, path, 2)
        if case.kind == "conv":
            want = hashes.conv_case_output(case, i, _lib.MODE_EXACT, path, 1, naive=True)
        else:
            x = _testdata.float_buffer(case.c * case.h * case.w, hashes.CONV_SEED + 3 * i,
                                       hashes.NSPECIAL)
            xs = np.frombuffer(x, np.float32).reshape(1, case.c, case.h, case.w)
            want = _max_pool_reference(xs, case.kh, case.stride, case.padding).tobytes()
        assert got == want, f"entry {i} ({case.model} {case.name}) differs from the reference"
        digest.update(want)
    assert digest.hexdigest() == CONV_V2_EXACT


def test_cli_prints_every_suite():
    out = subprocess.run([sys.executable, "-m", "samebits", "hashes", "--modes", "exact",
                          "--paths", samebits.path(), "--threads", "1", "--groups", "random"],
                         capture_output=True, text=True, check=True, timeout=300).stdout
    gemm_header, gemm_line, conv_header, conv_line, ops_header, ops_line = out.strip().splitlines()
    assert gemm_header == hashes.header(["random"])
    assert hashes.parse_line(gemm_line) == (
        "exact", samebits.path(), 1, hashes.suite_digest("exact", samebits.path(), 1, ["random"]),
        "gemm")
    assert conv_header == hashes.header(suite="conv")
    assert conv_line.startswith("conv exact ")
    assert hashes.parse_line(conv_line) == ("exact", samebits.path(), 1, CONV_V2_EXACT, "conv")
    assert ops_header == hashes.header(suite="ops")
    assert hashes.parse_line(ops_line) == ("exact", samebits.path(), 1, OPS_V2_EXACT, "ops")
    only = subprocess.run([sys.executable, "-m", "samebits", "hashes", "--suites", "conv",
                           "--modes", "exact", "--paths", samebits.path(), "--threads", "1"],
                          capture_output=True, text=True, check=True, timeout=300).stdout
    assert only.strip().splitlines() == [conv_header, conv_line]


# ---- The ops suite --------------------------------------------------------

# The exact digest of ops suite v2, equal to the digest of the independent
# oracle of docs/exact-ops.md (test_ops_suite_matches_the_oracle). A change of
# the suite or of an exact function must bump hashes.OPS_SUITE_VERSION (or be
# declared a contract change) together with this value. (v1, without elu,
# softplus, mish, sin and cos: a2539269df7127503790fc9cdc6b9c28ad0406620764d96984d3f622a619f09e.)
OPS_V2_EXACT = "b9ab48009efd9a7d8f513e23d56d38d7a3add39fcc27516afa2c8e60b3adb911"


def test_ops_suite_is_what_the_docs_say():
    x = np.frombuffer(hashes.ops_inputs(), dtype=np.uint32)
    assert x.size == 131072
    assert (x[:65536] == (np.arange(65536, dtype=np.uint64) * 65537).astype(np.uint32)).all()
    values = np.frombuffer(_testdata.float_buffer(65536, hashes.OPS_SEED, hashes.NSPECIAL),
                           dtype=np.uint32)
    hard = len(hashes.OPS_HARD_INPUTS)
    assert (x[65536:-hard] == values[:-hard]).all()
    assert x[-hard:].tolist() == list(hashes.OPS_HARD_INPUTS)
    assert hashes.header(suite="ops") == ("# samebits ops suite v2: 19 functions, 7 reductions "
                                          "and 9 norms, pools and resizes over 131072 inputs")
    assert hashes.OPS_FUNCTIONS[:5] == ("exp", "log", "tanh", "erf", "sigmoid")


def test_ops_suite_matches_the_oracle():
    import elementwise_reference as ref
    x = np.frombuffer(hashes.ops_inputs(), dtype=np.float32)
    digest = hashlib.sha256()
    from reduce_reference import (adaptive_oracle, avg_pool_oracle, layer_norm_oracle, seq_sum,
                                  softmax_oracle)
    oracles = {**ref.FUNCTIONS, **ref.ACTIVATIONS}
    for name in hashes.OPS_FUNCTIONS:
        digest.update(oracles[name](x).astype("<f4").tobytes())
    rows = x.reshape(256, 512)
    weight = np.frombuffer(_testdata.float_buffer(512, hashes.OPS_NORM_SEED, 0), np.float32)
    bias = np.frombuffer(_testdata.float_buffer(512, hashes.OPS_NORM_SEED + 1, 0), np.float32)
    with np.errstate(all="ignore"):
        reductions = [seq_sum(rows, 1), seq_sum(rows, 0), seq_sum(rows, 1) / np.float32(512),
                      softmax_oracle(rows, 1), softmax_oracle(rows, 0),
                      softmax_oracle(rows, 1, log=True),
                      layer_norm_oracle(rows, 1, weight, bias, np.float32(1e-5))]
    assert [r[0] for r in hashes.OPS_REDUCTIONS] == ["sum rows", "sum columns", "mean rows",
                                                      "softmax rows", "softmax columns",
                                                      "log_softmax rows", "layer_norm rows"]
    t = x.reshape(2, 16, 64, 64)
    vec = [np.frombuffer(_testdata.float_buffer(16, hashes.OPS_NORM_SEED + 2 + i, 0), np.float32)
           for i in range(4)]
    mean, var, w, b = vec[0], np.abs(vec[1]) + np.float32(0.5), vec[2], vec[3]
    cs = (1, 16, 1, 1)
    eps = np.float32(1e-5)
    with np.errstate(all="ignore"):
        bn = ((t - mean.reshape(cs)) * (np.float32(1) / np.sqrt(var + eps)).reshape(cs)) \
            * w.reshape(cs) + b.reshape(cs)
        g = t.reshape(2, 4, -1)
        gm = seq_sum(g, 2, keepdims=True) / np.float32(g.shape[2])
        gd = g - gm
        gr = np.float32(1) / np.sqrt(seq_sum(gd * gd, 2, keepdims=True) / np.float32(g.shape[2])
                                     + eps)
        gn = (gd * gr).reshape(t.shape) * w.reshape(cs) + b.reshape(cs)
    reductions += [bn, gn, avg_pool_oracle(t, (3, 3), (2, 2), (1, 1, 1, 1), False, True),
                   avg_pool_oracle(t, (3, 3), (2, 2), (1, 1, 1, 1), True, False),
                   adaptive_oracle(t, 1, 1), adaptive_oracle(t, 5, 7)]
    from test_resize import oracle as resize_oracle
    reductions += [resize_oracle(t, 100, 90, "nearest"), resize_oracle(t, 96, 80, "bilinear"),
                   resize_oracle(t, 50, 70, "bilinear", align=True)]
    for r in reductions:
        r = np.array(r, np.float32)
        r[np.isnan(r)] = np.uint32(0x7FC00000).view(np.float32)
        digest.update(r.astype("<f4").tobytes())
    assert digest.hexdigest() == OPS_V2_EXACT


def test_ops_exact_lines_are_pinned(path):
    lines = hashes.hash_lines(["exact"], [path], [1, 2], suite="ops")
    assert [hashes.parse_line(line).suite for line in lines] == ["ops", "ops"]
    assert {hashes.parse_line(line).digest for line in lines} == {OPS_V2_EXACT}, "\n".join(lines)


def test_ops_fast_lines_repeat_across_threads():
    for path in samebits.paths():
        lines = hashes.hash_lines(["fast"], [path], [1, 2], suite="ops")
        assert len({hashes.parse_line(line).digest for line in lines}) == 1, "\n".join(lines)


def test_ops_one_flipped_bit_changes_the_digest():
    flipped = hashes.hash_lines(["exact"], [samebits.path()], [1], suite="ops", flip_bit=5)[0]
    assert hashes.parse_line(flipped).digest != OPS_V2_EXACT
    line = "ops exact vec4   threads=1   sha256=" + "ab" * 32
    assert hashes.format_line("exact", "vec4", 1, "ab" * 32, suite="ops") == line
    assert hashes.parse_line(line) == ("exact", "vec4", 1, "ab" * 32, "ops")
    assert hashes.header_suite(hashes.header(suite="ops")) == "ops"
