"""Depthwise convolution (groups == C, one input channel per group, any channel
multiplier): the direct kernel of csrc/kernels/depthwise.c.

Exact mode is compared bit for bit, on every path and at 1 and 2 threads, with
the C plain-loop reference (sb_conv2d_naive) and with an independent
numpy float32 oracle written here; fast mode is held to the Higham bound of a
float64 sum and compared with torch where torch is installed.
"""
from __future__ import annotations

import ctypes
import os
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

import samebits
from samebits._binding import abi as _abi, lib as _lib, paths as _paths
from conftest import test_values
from native_build import build_check, qemu_arm64

lib = _lib.lib
ACT = {None: 0, "relu": 1, "relu6": 2}


def _out_size(size, before, after, k, dil, stride):
    return (size + before + after - dil * (k - 1) - 1) // stride + 1


def _argv(x, w, bias, y, case, path=0, mode=1, threads=1):
    n, c, h, width = x.shape
    cout, _, kh, kw = w.shape
    (sh, sw), (dh, dw) = case["stride"], case["dilation"]
    return _abi.Conv2dArgs(
        path, mode, threads, n, c, h, width, cout, kh, kw, c, sh, sw, dh, dw, *case["padding"],
        x.ctypes.data, w.ctypes.data, 0, bias.ctypes.data if bias is not None else 0,
        ACT[case["activation"]], y.ctypes.data)


def _output(case):
    x, w = case["x"], case["w"]
    (sh, sw), (dh, dw) = case["stride"], case["dilation"]
    top, bottom, left, right = case["padding"]
    oh = _out_size(x.shape[2], top, bottom, w.shape[2], dh, sh)
    ow = _out_size(x.shape[3], left, right, w.shape[3], dw, sw)
    return np.full((x.shape[0], w.shape[0], oh, ow), np.nan, np.float32)


def naive(case) -> np.ndarray:
    """The C library's plain-loop reference."""
    y = _output(case)
    args = _argv(case["x"], case["w"], case["bias"], y, case)
    assert lib.sb_conv2d_naive(ctypes.addressof(args)) == 0
    return y


def run(case, path: str, mode: str, threads: int) -> np.ndarray:
    """The library's depthwise kernel on `path`: through samebits.conv2d when
    the package has it, else through sb_conv2d."""
    if hasattr(samebits, "conv2d"):
        with samebits.use_path(path):
            return samebits.conv2d(case["x"], case["w"], case["bias"], stride=case["stride"],
                                   padding=case["padding"], dilation=case["dilation"],
                                   groups=case["x"].shape[1], activation=case["activation"],
                                   mode=mode, threads=threads)
    y = _output(case)
    args = _argv(case["x"], case["w"], case["bias"], y, case, _paths.path_index(path),
                 {"fast": 0, "exact": 1}[mode], threads)
    assert lib.sb_conv2d(ctypes.addressof(args)) == 0
    return y


def _padded(x, padding):
    top, bottom, left, right = padding
    n, c, h, w = x.shape
    xp = np.zeros((n, c, h + top + bottom, w + left + right), x.dtype)   # +0 padding
    xp[:, :, top:top + h, left:left + w] = x
    return xp


def _tap_planes(case, dtype):
    """(ky, kx, weights (Cout,), input patch (N, Cout, OH, OW)) in the order
    ky, then kx, increasing; output channel oc reads input channel oc // mult."""
    x, w = case["x"].astype(dtype), case["w"].astype(dtype)
    (sh, sw), (dh, dw) = case["stride"], case["dilation"]
    cout, _, kh, kw = w.shape
    mult = cout // x.shape[1]
    xp = _padded(x, case["padding"])[:, np.arange(cout) // mult]
    oh, ow = _output(case).shape[2:]
    for ky in range(kh):
        for kx in range(kw):
            y0, x0 = ky * dh, kx * dw
            patch = xp[:, :, y0:y0 + sh * (oh - 1) + 1:sh, x0:x0 + sw * (ow - 1) + 1:sw]
            yield w[:, 0, ky, kx], patch


def oracle(case) -> np.ndarray:
    """The exact-mode definition in numpy float32, independent of the C code:
    from +0, per tap one rounded product and one rounded add, then + bias,
    the activation, and every NaN as 0x7FC00000."""
    acc = np.zeros(_output(case).shape, np.float32)
    with np.errstate(all="ignore"):
        for wt, patch in _tap_planes(case, np.float32):
            prod = np.multiply(wt[None, :, None, None], patch, dtype=np.float32)
            acc = np.add(acc, prod, dtype=np.float32)
        if case["bias"] is not None:
            acc = np.add(acc, case["bias"][None, :, None, None], dtype=np.float32)
        if case["activation"] in ("relu", "relu6"):
            acc = np.where(acc < 0, np.float32(0), acc)
        if case["activation"] == "relu6":
            acc = np.where(acc > 6, np.float32(6), acc)
    acc = np.ascontiguousarray(acc, np.float32)
    acc.view(np.uint32)[np.isnan(acc)] = 0x7FC00000
    return acc


def float64_and_bound(case):
    """The float64 sum (no bias, no activation) and the Higham bound
    taps * u * sum |w * x| + 1e-30."""
    total = np.zeros(_output(case).shape)
    magnitude = np.zeros_like(total)
    taps = 0
    for wt, patch in _tap_planes(case, np.float64):
        prod = wt[None, :, None, None] * patch
        total += prod
        magnitude += np.abs(prod)
        taps += 1
    return total, taps * 2.0 ** -24 * magnitude + 1e-30


def assert_same_bits(got, want, what: str) -> None:
    g = np.ascontiguousarray(got, np.float32).view(np.uint32)
    w = np.ascontiguousarray(want, np.float32).view(np.uint32)
    assert g.shape == w.shape, f"{what}: shape {g.shape} != {w.shape}"
    diff = np.argwhere(g != w)
    if diff.size:
        i = tuple(diff[0])
        raise AssertionError(f"{what}: {len(diff)} outputs differ; first at {i}: "
                             f"got 0x{int(g[i]):08x} want 0x{int(w[i]):08x}")


def random_case(seed: int, nspecial: int = 0, wide: bool = False) -> dict:
    """Kernels 1..7, strides 1..3, dilation 1..2, asymmetric padding 0..3,
    channel multipliers 1..3, bias or not, none/relu/relu6; `wide` makes rows
    long enough for the kernels' whole blocks of vectors."""
    rng = np.random.default_rng(seed)
    c = int(rng.integers(2, 6))
    mult = int(rng.integers(1, 4))
    kh, kw = (int(v) for v in rng.integers(1, 8, size=2))
    sh, sw = (int(v) for v in rng.integers(1, 4, size=2))
    dh, dw = (int(v) for v in rng.integers(1, 3, size=2))
    pads = tuple(int(v) for v in rng.integers(0, 4, size=4))
    h = max(1, dh * (kh - 1) + 1 - pads[0] - pads[1]) + int(rng.integers(0, 4 if wide else 14))
    w = max(1, dw * (kw - 1) + 1 - pads[2] - pads[3]) + int(rng.integers(0, 14))
    if wide:
        w += int(rng.integers(100, 400))
    n = int(rng.integers(1, 3))
    x = test_values((n, c, h, w), seed * 7 + 1, nspecial)
    wt = test_values((c * mult, 1, kh, kw), seed * 7 + 2, nspecial // 2)
    bias = test_values((c * mult,), seed * 7 + 3) if rng.random() < 0.6 else None
    activation = [None, "relu", "relu6"][int(rng.integers(0, 3))]
    return dict(x=x, w=wt, bias=bias, stride=(sh, sw), padding=pads, dilation=(dh, dw),
                activation=activation)


SEEDS = range(40)
_references: dict = {}


def references(seed: int) -> tuple[dict, np.ndarray]:
    """The case of a seed and its naive result, checked once against the oracle."""
    if seed not in _references:
        case = random_case(seed, nspecial=8 if seed % 3 == 0 else 0, wide=seed % 5 == 4)
        want = naive(case)
        assert_same_bits(oracle(case), want, f"oracle vs naive, seed {seed}")
        _references[seed] = case, want
    return _references[seed]


def test_naive_matches_oracle() -> None:
    for seed in SEEDS:
        references(seed)


def test_exact_matches_naive_and_oracle(path: str) -> None:
    for seed in SEEDS:
        case, want = references(seed)
        for threads in (1, 2):
            got = run(case, path, "exact", threads)
            assert_same_bits(got, want, f"{path} exact, seed {seed}, threads {threads}")


# Layers with many chunks and enough work to wake a second thread: whole
# planes grouped per chunk, one plane per chunk, planes cut into bands of rows,
# a channel multiplier, strides, and special values throughout.
LAYERS = [
    # (n, c, mult, h, w, k, stride, dilation, padding)
    (1, 64, 1, 56, 56, 3, 1, 1, (1, 1, 1, 1)),
    (2, 24, 2, 29, 31, 5, 2, 1, (2, 2, 2, 2)),
    (1, 3, 1, 190, 170, 3, 1, 1, (1, 1, 1, 1)),     # planes in bands of rows
    (1, 2, 3, 130, 260, 7, 1, 2, (5, 6, 4, 7)),     # bands, dilated, multiplier 3
    (1, 96, 1, 14, 14, 3, 2, 1, (0, 1, 0, 1)),
    (1, 160, 1, 7, 7, 5, 1, 1, (2, 2, 2, 2)),
]


@pytest.mark.parametrize("layer", LAYERS, ids=lambda l: "n{}c{}m{}h{}w{}k{}s{}d{}".format(*l))
def test_layers_threads_and_naive(path: str, layer) -> None:
    n, c, mult, h, w, k, stride, dil, pads = layer
    case = dict(x=test_values((n, c, h, w), h * 13 + w, 16), w=test_values((c * mult, 1, k, k), c, 4),
                bias=test_values((c * mult,), 5), stride=(stride, stride), padding=pads,
                dilation=(dil, dil), activation="relu6")
    want = naive(case)
    for threads in (1, 2, 3):
        assert_same_bits(run(case, path, "exact", threads), want, f"{path} exact t{threads}")
    fast = run(case, path, "fast", 1)
    for threads in (2, 3):
        assert_same_bits(run(case, path, "fast", threads), fast, f"{path} fast t{threads}")


# "Same" layers at unit strides (the output map the input's): on avx512 the
# planes are read in place, the padding as masked lanes (dw_flat_avx512.c),
# where fewer than 16 taps, fewer than 8 channels or a channel multiplier
# keep them from the lanes route below.
# (n, c, mult, h, w, kh, kw, dilation, padding): MobileNet's 3x3 and 5x5 maps,
# a multiplier, dilation, maps of 1, 2x3 and one column, a one-sided pad, a
# 7x7 kernel, and 56x56 (several groups of 8 vectors).
SAME_LAYERS = [
    (1, 24, 1, 14, 14, 3, 3, 1, (1, 1, 1, 1)), (2, 6, 1, 7, 7, 5, 5, 1, (2, 2, 2, 2)),
    (1, 8, 2, 9, 13, 3, 3, 2, (2, 2, 2, 2)), (1, 5, 1, 1, 1, 3, 3, 1, (1, 1, 1, 1)),
    (1, 6, 1, 2, 3, 3, 3, 1, (1, 1, 1, 1)), (1, 4, 1, 17, 1, 3, 1, 1, (1, 1, 0, 0)),
    (1, 7, 1, 11, 10, 1, 3, 1, (0, 0, 2, 0)), (1, 3, 3, 28, 28, 7, 7, 1, (3, 3, 3, 3)),
    (1, 6, 1, 56, 56, 3, 3, 1, (1, 1, 1, 1)),
]


@pytest.mark.parametrize("layer", SAME_LAYERS, ids=lambda l: "n{}c{}m{}h{}w{}k{}x{}".format(*l))
def test_same_layers_read_in_place(path: str, layer) -> None:
    """Exact against the naive loop at 1 and 2 threads (special values in the
    input, the weights and the bias); fast mode bit for bit against the same
    layer over the input with its padding written out as zeros (a larger
    input, no padding: the padded-rows kernel), which multiplies the same
    +0s in the same order."""
    n, c, mult, h, w, kh, kw, dil, pads = layer
    x = test_values((n, c, h, w), c + h, 8)
    case = dict(x=x, w=test_values((c * mult, 1, kh, kw), c + kw, 3),
                bias=test_values((c * mult,), 9), stride=(1, 1), padding=pads,
                dilation=(dil, dil), activation="relu")
    top, bottom, left, right = pads
    padded = np.zeros((n, c, h + top + bottom, w + left + right), np.float32)
    padded[:, :, top:top + h, left:left + w] = x
    written = dict(case, x=padded, padding=(0, 0, 0, 0))
    want = naive(case)
    for threads in (1, 2):
        assert_same_bits(run(case, path, "exact", threads), want, f"{path} exact t{threads}")
        assert_same_bits(run(case, path, "fast", threads), run(written, path, "fast", 1),
                         f"{path} fast t{threads}")
    kw_ = dict(padding=pads, dilation=(dil, dil), groups=c, activation="relu")
    with samebits.use_path(path):
        plan = samebits.explain(samebits.conv2d, x, case["w"], case["bias"], **kw_)
        other = samebits.explain(samebits.conv2d, padded, case["w"], case["bias"],
                                 groups=c, dilation=(dil, dil))
    in_place = path == "avx512" and not _avx512_emulated()
    # channels in the lanes (below) instead: 8 or more channels, 16 or more taps
    other_lanes = in_place and mult == 1 and c >= 8   # not read in place: any taps
    lanes = other_lanes and kh * kw >= 16
    assert plan.route == "depthwise"
    assert other.b_source == ("per panel" if other_lanes else "per strip"), other
    assert plan.b_source == ("per panel" if lanes else "in place" if in_place else "per strip"), plan


# Channels in the vector lanes (depthwise.c's lanes route, dw_lanes_avx512.c;
# 8 or more channels, no multiplier, and unless the planes can be read in
# place, 16 or more taps): blocks of 16 channels stored pixel by pixel, the
# last one partial; the
# padding stored as +0, cut columns past the last output's reach, rows made
# only of padding, bands of output rows over large maps, strides, dilation,
# several images. (n, c, h, w, kh, kw, stride, dilation, padding)
LANES_LAYERS = [
    (1, 256, 14, 14, 5, 5, (1, 1), (1, 1), (2, 2, 2, 2)),     # PP-LCNet's 5x5 layers
    (2, 40, 9, 13, 3, 3, (1, 1), (1, 1), (1, 1, 0, 0)),       # 2.5 blocks, two images
    (1, 17, 7, 7, 5, 5, (1, 1), (1, 1), (2, 2, 2, 2)),        # one lane of the second block
    (1, 24, 15, 16, 3, 3, (2, 2), (1, 1), (0, 1, 0, 1)),      # stride 2, one-sided pad
    (1, 32, 12, 11, 3, 3, (1, 2), (2, 2), (2, 2, 2, 2)),      # dilated, column stride 2
    (1, 16, 4, 4, 3, 3, (1, 1), (1, 1), (5, 5, 5, 5)),        # mostly padding
    (1, 20, 9, 20, 3, 3, (3, 3), (1, 1), (0, 0, 0, 0)),       # the last 2 columns never read
    (1, 20, 150, 150, 3, 3, (1, 1), (1, 1), (1, 1, 1, 1)),    # bands of rows
    (1, 48, 60, 45, 7, 7, (2, 2), (1, 1), (3, 3, 3, 3)),      # bands, 7x7, stride 2
    (1, 64, 1, 1, 5, 5, (1, 1), (1, 1), (2, 2, 2, 2)),        # one pixel
]


@pytest.mark.parametrize("layer", LANES_LAYERS, ids=lambda l: "n{}c{}h{}w{}k{}x{}".format(*l))
def test_channels_in_lanes(path: str, layer) -> None:
    """Exact against the naive loop at 1 and 2 threads (special values in the
    input, the weights and the bias); fast mode the same at 1 and 2 threads
    and bit for bit the same as the layer computed 4 channels at a time,
    which takes the other kernels (the same operations in the same order);
    on avx512 the plan is the lanes route."""
    n, c, h, w, kh, kw, stride, dil, pads = layer
    x = test_values((n, c, h, w), c + h, 8)
    case = dict(x=x, w=test_values((c, 1, kh, kw), c + kw, 3), bias=test_values((c,), 9),
                stride=stride, padding=pads, dilation=dil, activation="relu6")
    want = naive(case)
    for threads in (1, 2):
        assert_same_bits(run(case, path, "exact", threads), want, f"{path} exact t{threads}")
    fast = run(case, path, "fast", 1)
    assert_same_bits(run(case, path, "fast", 2), fast, f"{path} fast t2")
    parts = [run(dict(case, x=x[:, i:i + 4], w=case["w"][i:i + 4], bias=case["bias"][i:i + 4]),
                 path, "fast", 1) for i in range(0, c, 4)]
    assert_same_bits(fast, np.concatenate(parts, axis=1), f"{path} fast by 4 channels")
    kw_ = dict(stride=stride, padding=pads, dilation=dil, groups=c)
    with samebits.use_path(path):
        plan = samebits.explain(samebits.conv2d, x, case["w"], **kw_)
        narrow = samebits.explain(samebits.conv2d, x[:, :4], case["w"][:4], groups=4,
                                  **{k: v for k, v in kw_.items() if k != "groups"})
    lanes = path == "avx512" and not _avx512_emulated()
    assert plan.route == "depthwise" and (plan.b_source == "per panel") == lanes, plan
    assert narrow.b_source != "per panel", narrow


# Stride 2 read in place (depthwise.c's stride-2 route, dw_stride2_avx512.c;
# output rows of 48 or more): input rows split by column parity into a ring
# of rows, two output rows and up to four vector columns at a time. Rows of
# 3 to 6 vector columns, whole and ragged, an odd number of output rows (the
# last alone), kernels 1x1 to 7x7 and rectangular, padding on one side, wider
# than the kernel and at the route's limit (32 columns), rows made only of
# padding, a channel multiplier, two images, planes in bands of rows (a band
# starts mid-plane), and the narrowest maps either side of the route's.
# (n, c, cout, h, w, kh, kw, padding)
STRIDE2_LAYERS = [
    (1, 64, 64, 112, 112, 3, 3, (1, 1, 1, 1)),      # MobileNetV3's layer
    (1, 9, 9, 20, 100, 5, 5, (2, 2, 2, 2)),         # 5x5, 50 wide
    (2, 5, 10, 15, 129, 3, 3, (1, 0, 1, 0)),        # multiplier 2, pads on one side, 7 rows
    (1, 3, 3, 7, 130, 7, 7, (3, 3, 3, 3)),          # 7x7, 65 wide
    (1, 4, 4, 9, 200, 2, 4, (0, 1, 1, 2)),          # even kernel, 100 wide
    (1, 3, 3, 6, 133, 1, 1, (0, 0, 0, 0)),          # 1x1
    (1, 2, 2, 5, 110, 3, 5, (4, 4, 9, 9)),          # padding wider than the kernel
    (1, 2, 2, 4, 100, 3, 3, (0, 0, 1, 40)),         # outputs reading only right padding
    (1, 2, 2, 4, 100, 3, 3, (0, 0, 32, 1)),         # the route's widest left padding
    (1, 2, 2, 4, 100, 3, 3, (0, 0, 33, 1)),         # one more: another route
    (1, 2, 2, 1, 99, 3, 3, (2, 2, 1, 1)),           # one input row
    (1, 2, 2, 700, 130, 3, 3, (1, 1, 1, 1)),        # bands of rows
    (1, 4, 4, 9, 96, 3, 3, (1, 1, 1, 1)),           # 48 wide: the route's narrowest
    (1, 4, 4, 9, 94, 3, 3, (1, 1, 1, 1)),           # 47 wide: another route
]


@pytest.mark.parametrize("layer", STRIDE2_LAYERS, ids=lambda l: "n{}c{}o{}h{}w{}k{}x{}".format(*l))
def test_stride2_in_place(path: str, layer) -> None:
    """Exact against the naive loop and the numpy oracle at 1 and 2 threads
    (special values in the input, the weights and the bias); fast mode the
    same at 1 and 2 threads and bit for bit avx2's (whose routes store padded
    rows: the same fused operations in the same order); on avx512 the plan
    reads the planes in place within the route's limits."""
    n, c, cout, h, w, kh, kw, pads = layer
    x = test_values((n, c, h, w), c + h + w, 8)
    case = dict(x=x, w=test_values((cout, 1, kh, kw), cout + kw, 3),
                bias=test_values((cout,), 9), stride=(2, 2), padding=pads, dilation=(1, 1),
                activation="relu6")
    want = naive(case)
    if h * w < 20000:
        assert_same_bits(want, oracle(case), "naive vs oracle")
    for threads in (1, 2):
        assert_same_bits(run(case, path, "exact", threads), want, f"{path} exact t{threads}")
    fast = run(case, path, "fast", 1)
    assert_same_bits(run(case, path, "fast", 2), fast, f"{path} fast t2")
    if path == "avx512" and "avx2" in _paths.paths():
        assert_same_bits(fast, run(case, "avx2", "fast", 1), "avx512 fast vs avx2")
    with samebits.use_path(path):
        plan = samebits.explain(samebits.conv2d, x, case["w"], stride=2, padding=pads,
                                groups=c)
    ow = (w + pads[2] + pads[3] - kw) // 2 + 1
    in_place = path == "avx512" and not _avx512_emulated() and pads[2] <= 32 and ow >= 48
    assert (plan.b_source == "in place") == in_place, plan


def _avx512_emulated() -> bool:
    """The avx512 path runs on a CPU without AVX-512F only in the
    SB_EMULATE_AVX512 test build (make avx512-emulated), which has no
    masked-load kernels."""
    cpuinfo = Path("/proc/cpuinfo")
    return cpuinfo.exists() and " avx512f" not in cpuinfo.read_text()


@pytest.mark.parametrize("seed", range(12))
def test_fast_within_higham_bound(path: str, seed: int) -> None:
    case = random_case(500 + seed, wide=seed % 4 == 3)
    rng = np.random.default_rng(seed)
    case["x"] = rng.standard_normal(case["x"].shape).astype(np.float32)
    case["w"] = rng.standard_normal(case["w"].shape).astype(np.float32)
    case["bias"], case["activation"] = None, None
    total, bound = float64_and_bound(case)
    got = run(case, path, "fast", 2)
    assert_same_bits(run(case, path, "fast", 1), got, f"{path} fast: 1 thread vs 2")
    excess = np.abs(got.astype(np.float64) - total) - bound
    assert excess.max(initial=-1) <= 0, f"{path} fast outside the Higham bound by {excess.max()}"
    if not lib.sb_path_fused(_paths.path_index(path)):
        # no fused multiply-add: fast is the exact arithmetic (finite values here)
        assert_same_bits(got, run(case, path, "exact", 1), f"{path} unfused fast vs exact")


def test_fast_close_to_torch() -> None:
    torch = pytest.importorskip("torch", reason="torch is not installed")
    rng = np.random.default_rng(9)
    for n, c, mult, h, k, stride, pad, dil in [(1, 32, 1, 28, 3, 1, 1, 1), (2, 16, 1, 15, 3, 2, 1, 1),
                                               (1, 24, 2, 17, 5, 1, 2, 1), (1, 8, 3, 20, 7, 3, 3, 2),
                                               (1, 40, 1, 7, 5, 1, 2, 1)]:
        x = rng.standard_normal((n, c, h, h)).astype(np.float32)
        w = rng.standard_normal((c * mult, 1, k, k)).astype(np.float32)
        b = rng.standard_normal(c * mult).astype(np.float32)
        case = dict(x=x, w=w, bias=None, stride=(stride, stride), padding=(pad,) * 4,
                    dilation=(dil, dil), activation=None)
        _, bound = float64_and_bound(case)
        want = torch.nn.functional.conv2d(torch.from_numpy(x), torch.from_numpy(w), stride=stride,
                                          padding=pad, dilation=dil, groups=c).numpy()
        for path in samebits.paths():
            got = run(case, path, "fast", 2)
            # each within the Higham bound of the exact sum, so within twice of each other
            assert (np.abs(got - want) <= 2 * bound).all(), (path, n, c, mult, h, k)
        case.update(bias=b, activation="relu6")
        want = torch.clamp(torch.nn.functional.conv2d(
            torch.from_numpy(x), torch.from_numpy(w), torch.from_numpy(b), stride=stride,
            padding=pad, dilation=dil, groups=c), 0, 6).numpy()
        np.testing.assert_allclose(run(case, samebits.path(), "fast", 2), want, rtol=1e-4,
                                   atol=1e-4)


def test_special_values(path: str) -> None:
    """inf weights meeting padding give NaN (stored canonically); -0 products
    sum to +0; subnormal products are kept; relu passes NaN."""
    x = np.ones((1, 2, 3, 3), np.float32)
    w = np.ones((2, 1, 3, 3), np.float32)
    w[1, 0, 0, 0] = np.inf
    case = dict(x=x, w=w, bias=None, stride=(1, 1), padding=(1, 1, 1, 1), dilation=(1, 1),
                activation="relu")
    y = run(case, path, "exact", 1)
    assert (y[0, 0] == np.array([[4, 6, 4], [6, 9, 6], [4, 6, 4]], np.float32)).all()
    nan = y[0, 1].view(np.uint32)
    # the inf tap (top-left) meets padding in the top row and left column: NaN; elsewhere inf
    assert (nan[0, :] == 0x7FC00000).all() and (nan[:, 0] == 0x7FC00000).all()
    assert (y[0, 1, 1:, 1:] == np.inf).all()
    assert_same_bits(y, oracle(case), f"{path} specials vs oracle")

    case = dict(x=np.full((1, 3, 4, 5), -0.0, np.float32), w=np.ones((3, 1, 2, 2), np.float32),
                bias=None, stride=(1, 2), padding=(0, 1, 1, 0), dilation=(1, 1), activation=None)
    assert (run(case, path, "exact", 1).view(np.uint32) == 0).all(), "-0 products must sum to +0"

    tiny = np.float32(2.0 ** -70)
    case = dict(x=np.full((1, 2, 5, 5), tiny, np.float32),
                w=np.full((2, 1, 3, 3), tiny, np.float32), bias=None, stride=(1, 1),
                padding=(1, 1, 1, 1), dilation=(1, 1), activation=None)
    y = run(case, path, "exact", 1)
    assert (y > 0).all() and (y < np.finfo(np.float32).tiny).all()
    assert_same_bits(y, naive(case), f"{path} subnormal outputs")


@pytest.fixture
def reference_0() -> tuple[dict, np.ndarray]:
    """Seed 0's case and result, made before flush_to_zero is set (the numpy
    oracle under DAZ reads subnormal inputs as zeros, the definition does not)."""
    return references(0)


def test_exact_with_flush_to_zero_set_by_caller(path: str, reference_0, flush_to_zero) -> None:
    case, want = reference_0
    assert_same_bits(run(case, path, "exact", 2), want, f"{path} exact under FTZ/DAZ")


def test_edge_shapes(path: str) -> None:
    """Inputs smaller than the kernel, outputs made only of padding, 1-wide
    and 1-high planes, padding wider than the whole reach of the kernel."""
    shapes = [
        # (h, w, kh, kw, stride, dilation, padding)
        (1, 1, 1, 1, (1, 1), (1, 1), (0, 0, 0, 0)),
        (1, 1, 3, 3, (1, 1), (1, 1), (1, 1, 1, 1)),
        (2, 1, 7, 5, (2, 3), (1, 2), (3, 3, 6, 6)),
        (1, 9, 1, 4, (1, 3), (1, 2), (0, 0, 9, 2)),
        (5, 2, 2, 2, (3, 1), (2, 1), (7, 1, 0, 8)),
        (3, 40, 3, 3, (1, 2), (1, 1), (1, 1, 1, 1)),
        (37, 1, 3, 1, (2, 1), (2, 1), (0, 2, 0, 0)),
    ]
    for i, (h, w, kh, kw, stride, dil, pads) in enumerate(shapes):
        for mult in (1, 2):
            case = dict(x=test_values((2, 3, h, w), 40 + i, 4),
                        w=test_values((3 * mult, 1, kh, kw), 50 + i, 1), bias=None,
                        stride=stride, padding=pads, dilation=dil, activation=None)
            want = naive(case)
            assert_same_bits(oracle(case), want, f"oracle, shape {i}")
            assert_same_bits(run(case, path, "exact", 2), want, f"{path} shape {i} mult {mult}")


@pytest.mark.parametrize("layer", [(24, 28, 3, 2, 1), (16, 14, 5, 2, 2), (8, 9, 3, 1, 0),
                                   (6, 130, 3, 2, 1)])
def test_outputs_stay_inside_their_array(path: str, layer) -> None:
    """Strided and unpadded layers (avx512 stores each vector's outputs as one
    compressed masked run): written into the middle of a bigger buffer, every
    output is the naive loop's and no float around the array changes."""
    c, side, k, stride, pad = layer
    case = dict(x=test_values((2, c, side, side), 60 + side, 4), w=test_values((c, 1, k, k), 61, 1),
                bias=test_values((c,), 62), stride=(stride, stride), padding=(pad,) * 4,
                dilation=(1, 1), activation="relu")
    want = naive(case)
    for mode in ("exact", "fast"):
        buffer = np.full(want.size + 64, np.float32(-7.5))
        out = buffer[32:32 + want.size].reshape(want.shape)
        with samebits.use_path(path):
            samebits.conv2d(case["x"], case["w"], case["bias"], stride=case["stride"],
                            padding=case["padding"], groups=c, activation="relu", mode=mode,
                            threads=2, out=out)
        assert (buffer[:32] == -7.5).all() and (buffer[32 + want.size:] == -7.5).all(), mode
        if mode == "exact":
            assert_same_bits(out, want, f"{path} {layer}")
        else:
            assert np.allclose(out, want, rtol=1e-4, atol=1e-4, equal_nan=True), (path, layer)


def test_python_wrapper_and_packed_weights() -> None:
    if not hasattr(samebits, "conv2d"):
        pytest.skip("samebits.conv2d is not there yet")
    case, want = references(3)
    c = case["x"].shape[1]
    kwargs = dict(stride=case["stride"], padding=case["padding"], dilation=case["dilation"],
                  groups=c, activation=case["activation"], mode="exact")
    assert_same_bits(samebits.conv2d(case["x"], case["w"], case["bias"], **kwargs), want,
                     "conv2d")
    if hasattr(samebits, "pack_conv2d"):
        packed = samebits.pack_conv2d(case["w"], groups=c)
        assert_same_bits(samebits.conv2d(case["x"], packed, case["bias"], **kwargs), want,
                         "conv2d with packed weights")


# The C-only check (tests/native/check_conv.c: depthwise and few-column
# layers) natively and for arm64 under qemu-user, where the neon path and vec4
# over NEON run with their own accumulator budget and strip heights: every
# path must match the naive loop and print the same digest of its exact
# outputs as x86-64.
def _build_check(cc: str, out: Path, x86: bool) -> None:
    build_check(cc, "check_conv.c", out, x86)


def _run_check(cmd: list) -> tuple:
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stdout + r.stderr
    digest = re.search(r"^conv-digest ([0-9a-f]{16}) paths", r.stdout, re.M).group(1)
    return digest, set(re.findall(r"^path (\w+) ", r.stdout, re.M))


@pytest.mark.slow
def test_native_check_host_and_arm64(tmp_path) -> None:
    if os.uname().machine != "x86_64":
        pytest.skip("the cross-target comparison is written for an x86-64 host")
    for tool in ("cc", "aarch64-linux-gnu-gcc", "qemu-aarch64"):
        if not shutil.which(tool):
            pytest.skip(f"{tool} is not installed (make deps installs it)")
    (tmp_path / "host").mkdir()
    (tmp_path / "arm64").mkdir()
    _build_check("cc", tmp_path / "host" / "check", x86=True)
    host, host_paths = _run_check([str(tmp_path / "host" / "check")])
    assert {"scalar", "vec4"} <= host_paths
    _build_check("aarch64-linux-gnu-gcc", tmp_path / "arm64" / "check", x86=False)
    arm, arm_paths = _run_check([*qemu_arm64("qemu-aarch64", 128), str(tmp_path / "arm64" / "check")])
    assert arm_paths == {"scalar", "vec4", "neon", "sme"}
    assert arm == host
