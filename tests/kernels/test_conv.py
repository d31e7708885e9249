"""conv2d: exact mode bit for bit against two references on every path, fast
mode within the Higham bound, packed = unpacked, 1 thread = all, and errors.

Depthwise layers have their own file (test_depthwise.py)."""
from __future__ import annotations

import gc
import pickle

import numpy as np
import pytest

import samebits
from conftest import duplicate, test_values, unrunnable_path
from conv_reference import conv_float64, conv_naive, conv_oracle


def _flat(a):
    a = np.ascontiguousarray(a, dtype=np.float32)
    return a.reshape(-1, a.shape[-1]).view(np.uint32) if a.size else a.view(np.uint32)


def assert_same_bits(got, want, what: str) -> None:
    g, w = _flat(got), _flat(want)
    assert g.shape == w.shape, f"{what}: shape {got.shape} != {want.shape}"
    diff = np.argwhere(g != w)
    if diff.size:
        i, j = diff[0]
        raise AssertionError(f"{what}: {len(diff)} outputs differ; first at flat ({i}, {j}): "
                             f"got 0x{int(g[i, j]):08x} want 0x{int(w[i, j]):08x}")


def random_case(seed: int, nspecial: int = 0) -> dict:
    """A random non-depthwise convolution: kernels 1..7, strides 1..3, dilation
    1..2, asymmetric padding, groups."""
    rng = np.random.default_rng(seed)
    groups = int(rng.choice([1, 1, 1, 2, 3]))
    cin_g = int(rng.integers(1, 6)) + (1 if groups > 1 else 0)  # never depthwise here
    cout_g = int(rng.integers(1, 14))
    kh, kw = (int(v) for v in rng.integers(1, 8, size=2))
    sh, sw = (int(v) for v in rng.integers(1, 4, size=2))
    dh, dw = (int(v) for v in rng.integers(1, 3, size=2))
    pads = tuple(int(v) for v in rng.integers(0, 4, size=4))
    h = max(1, dh * (kh - 1) + 1 - pads[0] - pads[1]) + int(rng.integers(0, 12))
    w = max(1, dw * (kw - 1) + 1 - pads[2] - pads[3]) + int(rng.integers(0, 12))
    n = int(rng.integers(1, 3))
    x = test_values((n, cin_g * groups, h, w), seed * 7 + 1, nspecial)
    wt = test_values((cout_g * groups, cin_g, kh, kw), seed * 7 + 2, nspecial // 4)
    bias = test_values((cout_g * groups,), seed * 7 + 3) if rng.random() < 0.6 else None
    activation = [None, "relu", "relu6"][int(rng.integers(0, 3))]
    return dict(x=x, w=wt, bias=bias, stride=(sh, sw), padding=pads, dilation=(dh, dw),
                groups=groups, activation=activation)


def call(case: dict, **kw):
    return samebits.conv2d(case["x"], case["w"], case["bias"], stride=case["stride"],
                           padding=case["padding"], dilation=case["dilation"],
                           groups=case["groups"], activation=case["activation"], **kw)


def reference(fn, case: dict):
    return fn(case["x"], case["w"], case["bias"], case["stride"], case["padding"],
              case["dilation"], case["groups"], case["activation"])


@pytest.mark.parametrize("seed", range(24))
def test_exact_matches_naive_and_oracle(path: str, seed: int) -> None:
    case = random_case(seed, nspecial=6 if seed % 3 == 0 else 0)
    want = reference(conv_naive, case)
    assert_same_bits(reference(conv_oracle, case), want, f"oracle vs naive, seed {seed}")
    with samebits.use_path(path):
        for threads in (1, 2):
            got = call(case, mode="exact", threads=threads)
            assert_same_bits(got, want, f"{path} exact, seed {seed}, threads {threads}")


# ResNet/MobileNet-like shapes: big enough for several tiles, k-blocks and threads.
LAYERS = [
    # (c, h, w, cout, k, stride, pad, groups)
    (3, 37, 41, 24, 7, 2, 3, 1),
    (32, 15, 15, 40, 3, 1, 1, 1),      # fast: strips gathered per panel, one tile row
    (4, 32, 32, 60, 3, 1, 1, 1),       # fast: 8 panels and two tile rows
    (24, 6, 6, 100, 3, 1, 1, 1),       # fast: one panel, several tile rows: gathered whole
    (64, 9, 10, 70, 3, 2, 1, 1),
    (96, 7, 7, 100, 1, 1, 0, 1),       # pointwise: the input read as B
    (48, 12, 12, 36, 1, 2, 0, 1),      # 1x1 stride 2: gathered
    (300, 3, 3, 20, 1, 1, 0, 1),       # k > 256: two k-blocks on the pointwise route
    (40, 6, 6, 64, 3, 1, 1, 4),        # grouped
    (8, 1, 1, 50, 1, 1, 0, 1),         # 1x1 over a 1x1 input (squeeze-excitation):
    (300, 1, 1, 70, 1, 1, 0, 1),       # few-column kernel: two k-blocks, ragged sliver
    (40, 1, 1, 260, 1, 1, 0, 2),       # ... grouped, several chunks of 8 strips
]


@pytest.mark.parametrize("layer", LAYERS, ids=lambda l: "c{}h{}w{}o{}k{}s{}p{}g{}".format(*l))
def test_exact_model_layers(path: str, layer) -> None:
    c, h, w, cout, k, stride, pad, groups = layer
    x = test_values((1, c, h, w), c * 31 + h, 8)
    wt = test_values((cout, c // groups, k, k), cout * 17 + k, 2)
    bias = test_values((cout,), 99)
    want = conv_naive(x, wt, bias, (stride, stride), (pad,) * 4, (1, 1), groups, "relu")
    with samebits.use_path(path):
        got = samebits.conv2d(x, wt, bias, stride=stride, padding=pad, groups=groups,
                              activation="relu", mode="exact")
        assert_same_bits(got, want, f"{path} exact {layer}")
        packed = samebits.pack_conv2d(wt, groups=groups)
        for mode in ("exact", "fast"):
            plain = samebits.conv2d(x, wt, bias, stride=stride, padding=pad, groups=groups,
                                    activation="relu", mode=mode, threads=1)
            for threads in (1, 2):
                again = samebits.conv2d(x, packed, bias, stride=stride, padding=pad,
                                        groups=groups, activation="relu", mode=mode,
                                        threads=threads)
                assert_same_bits(again, plain, f"{path} {mode} packed, threads {threads}")


# The patch gatherer's cases (conv.c): the input read in place (no padding,
# unit column step: a whole-strip copy must not read past the input's end),
# stored padded rows with 1 to 3 phases (column steps 1-3, dilations 1-3),
# output rows narrower and wider than a strip (one to many runs per strip,
# beyond the whole-copy limit), and a padding so large that the taps are read
# one by one. (c, h, w, cout, kernel, stride, padding, dilation)
GATHER_CASES = [
    (5, 9, 37, 20, (3, 3), (1, 1), (0, 0, 0, 0), (1, 1)),     # in place, last strip at the end
    (3, 11, 64, 9, (2, 5), (2, 1), (0, 0, 0, 0), (1, 2)),     # in place, row step 2, dilated
    (4, 8, 1, 18, (3, 1), (1, 1), (0, 0, 0, 0), (1, 1)),      # in place, 1-wide rows: NR runs
    (6, 13, 13, 40, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1)),    # 13-wide rows: 2-3 runs a strip
    (2, 20, 55, 17, (3, 3), (1, 1), (1, 2, 0, 3), (1, 1)),    # asymmetric padding
    (3, 17, 40, 33, (3, 3), (1, 2), (1, 1, 1, 1), (1, 1)),    # two phases
    (3, 15, 47, 12, (4, 3), (3, 3), (2, 0, 1, 2), (2, 3)),    # three phases, dilated
    (2, 6, 9, 8, (3, 3), (1, 2), (0, 0, 5, 6), (1, 2)),       # mostly padding
    (4, 7, 3, 24, (2, 2), (1, 1), (1, 1, 1, 1), (1, 1)),      # 4-wide outputs: 4-8 runs
    (1, 2, 2, 3, (3, 3), (1, 1), (300, 300, 300, 300), (1, 1)),   # taps read one by one
    # stored planes of more than BAND_FLOATS (conv.c) are built in bands of
    # rows, the last one short: a stem's planes, and three phases
    (3, 130, 130, 16, (3, 3), (2, 2), (1, 1, 1, 1), (1, 1)),
    (2, 130, 160, 10, (3, 5), (1, 3), (2, 1, 3, 2), (2, 1)),
    # strides over maps so narrow that phase planes would waste too many
    # columns (conv.c's reads_by_phases): still gathered, in bands for the
    # second (stored rows of more than BAND_FLOATS)
    (3, 17, 12, 20, (3, 3), (1, 2), (1, 1, 1, 1), (1, 1)),
    (2, 1100, 14, 9, (3, 3), (2, 2), (1, 1, 1, 1), (1, 1)),
]


@pytest.mark.parametrize("case", GATHER_CASES, ids=lambda c: "c{}h{}w{}o{}".format(*c[:4]))
def test_patch_gatherer_cases(path: str, case) -> None:
    c, h, w, cout, kernel, stride, padding, dilation = case
    x = test_values((2, c, h, w), c * 13 + w, 6)
    wt = test_values((cout, c, *kernel), cout * 7 + h, 2)
    bias = test_values((cout,), w)
    want = conv_naive(x, wt, bias, stride, padding, dilation, 1, "relu")
    with samebits.use_path(path):
        for threads in (1, 2):
            got = samebits.conv2d(x, wt, bias, stride=stride, padding=padding,
                                  dilation=dilation, activation="relu", mode="exact",
                                  threads=threads)
            assert_same_bits(got, want, f"{path} exact {case}, threads {threads}")


def exact_and_fast_agree(path: str, case, x, wt, bias, want, seed: int, kw: dict, stride,
                         padding, dilation, groups: int) -> None:
    """On `path`: exact mode with relu equals `want` bit for bit at 1 and 2
    threads; then, on standard normal operands (seed), fast mode is equal at
    1 and 2 threads and within the Higham bound."""
    rng = np.random.default_rng(seed)
    with samebits.use_path(path):
        for threads in (1, 2):
            got = samebits.conv2d(x, wt, bias, mode="exact", threads=threads, activation="relu",
                                  **kw)
            assert_same_bits(got, want, f"{path} exact {case}, threads {threads}")
        x = rng.standard_normal(x.shape).astype(np.float32)
        wt = rng.standard_normal(wt.shape).astype(np.float32)
        fast = [samebits.conv2d(x, wt, mode="fast", threads=t, **kw) for t in (1, 2)]
    assert_same_bits(fast[1], fast[0], f"{path} fast {case}: 2 threads against 1")
    total, bound = conv_float64(x, wt, stride, padding, dilation, groups)
    excess = np.abs(fast[0].astype(np.float64) - total) - bound
    assert excess.max(initial=-1) <= 0, f"{path} fast {case}: outside the Higham bound"


# The offsets route (conv.c, reads_by_offsets): unit strides over stored
# padded rows, the input read in place by tap offsets and the outputs computed
# in wide rows (rs = out_w + the taps' reach), the columns past each row's end
# thrown away. Strips that cross one or several row ends, a ragged last strip,
# several k-blocks, dilation, asymmetric padding, 1-row outputs, groups and
# batches. (n, c, h, w, cout, kernel, padding, dilation, groups)
OFFSETS_CASES = [
    (2, 5, 20, 23, 7, (3, 3), (1, 1, 1, 1), (1, 1), 1),       # strips across row ends
    (1, 40, 12, 30, 19, (3, 3), (1, 1, 1, 1), (1, 1), 1),     # K = 360: two k-blocks
    (1, 3, 9, 40, 9, (3, 3), (2, 2, 2, 2), (2, 2), 1),        # dilated: reach 4
    (1, 4, 11, 45, 17, (5, 5), (2, 2, 2, 2), (1, 1), 1),      # 5x5
    (2, 6, 13, 41, 33, (3, 3), (0, 2, 1, 0), (1, 1), 1),      # asymmetric padding
    (1, 70, 1, 42, 37, (1, 3), (0, 0, 1, 0), (1, 1), 1),      # one output row, 37 rows of A
    (3, 8, 10, 33, 6, (3, 3), (1, 1, 1, 1), (1, 1), 2),       # groups and images
    (1, 2, 70, 300, 3, (3, 3), (1, 1, 1, 1), (1, 1), 1),      # many chunks
    # no padding, rows too short to gather in place (conv.c IN_PLACE_MIN_ROW):
    # a 1-D convolution as N x C x L x 1 (magika's layer), and 7-wide rows
    (2, 16, 40, 1, 20, (5, 1), (0, 0, 0, 0), (1, 1), 1),
    (1, 6, 12, 7, 10, (3, 1), (0, 0, 0, 0), (2, 1), 1),
]


@pytest.mark.parametrize("case", OFFSETS_CASES, ids=lambda c: "n{}c{}h{}w{}o{}".format(*c[:5]))
def test_offsets_route_cases(path: str, case) -> None:
    """Exact mode against the naive loop bit for bit, at 1 and 2 threads, with
    special values in the input (also where the thrown-away columns read
    them); fast mode equal at 1 and 2 threads and within the Higham bound."""
    n, c, h, w, cout, kernel, padding, dilation, groups = case
    x = test_values((n, c, h, w), c * 17 + w, 6)
    wt = test_values((cout, c // groups, *kernel), cout * 5 + h, 2)
    bias = test_values((cout,), w + 1)
    kw = dict(padding=padding, dilation=dilation, groups=groups)
    want = conv_naive(x, wt, bias, (1, 1), padding, dilation, groups, "relu")
    with samebits.use_path(path):
        plan = samebits.explain(samebits.conv2d, x, wt, bias, **kw)
        if path != "sme":   # sme runs its strips kernel: patches gathered
            assert plan.b_source == "by offsets", plan
    exact_and_fast_agree(path, case, x, wt, bias, want, c + w, kw, (1, 1), padding, dilation,
                         groups)


# The phase-planes route (conv.c, reads_by_phases): strides over stored
# phase planes (row phase x column phase), the taps read in place by offsets
# in wide rows of pws columns, the columns past each row's end thrown away.
# Stems (3x3 and 7x7 at stride 2), three phases and dilation, a stride in
# one direction only, no padding, two k-blocks, groups and images, and
# planes built one a chunk. (n, c, h, w, cout, kernel, stride, padding,
# dilation, groups)
PHASES_CASES = [
    (1, 3, 37, 101, 24, (7, 7), (2, 2), (3, 3, 3, 3), (1, 1), 1),   # a ResNet stem
    (2, 5, 20, 45, 7, (3, 3), (2, 2), (1, 1, 1, 1), (1, 1), 1),     # images, odd sides
    (1, 40, 12, 61, 19, (3, 3), (2, 2), (1, 1, 1, 1), (1, 1), 1),   # K = 360: two k-blocks
    (1, 3, 15, 70, 12, (4, 3), (3, 3), (2, 0, 1, 2), (2, 3), 1),    # three phases, dilated
    (1, 4, 20, 60, 10, (3, 3), (2, 1), (1, 1, 1, 1), (1, 1), 1),    # rows only
    (1, 4, 21, 60, 10, (3, 3), (1, 2), (0, 1, 2, 1), (1, 1), 1),    # columns only, asymmetric
    (3, 8, 10, 66, 6, (3, 3), (2, 2), (1, 1, 1, 1), (1, 1), 2),     # groups and images
    (1, 2, 9, 80, 5, (3, 3), (2, 2), (0, 0, 0, 0), (1, 1), 1),      # no padding
    (1, 3, 130, 130, 16, (3, 3), (2, 2), (1, 1, 1, 1), (1, 1), 1),  # a stem: a plane a chunk
]


@pytest.mark.parametrize("case", PHASES_CASES, ids=lambda c: "n{}c{}h{}w{}o{}".format(*c[:5]))
def test_phases_route_cases(path: str, case) -> None:
    """Exact mode against the naive loop bit for bit, at 1 and 2 threads, with
    special values in the input (also where the thrown-away columns read
    them); fast mode equal at 1 and 2 threads and within the Higham bound."""
    n, c, h, w, cout, kernel, stride, padding, dilation, groups = case
    x = test_values((n, c, h, w), c * 11 + w, 6)
    wt = test_values((cout, c // groups, *kernel), cout * 7 + h, 2)
    bias = test_values((cout,), w + 3)
    kw = dict(stride=stride, padding=padding, dilation=dilation, groups=groups)
    want = conv_naive(x, wt, bias, stride, padding, dilation, groups, "relu")
    with samebits.use_path(path):
        plan = samebits.explain(samebits.conv2d, x, wt, bias, **kw)
        if path != "sme":   # sme runs its strips kernel: patches gathered
            assert plan.b_source == "by offsets", plan
    exact_and_fast_agree(path, case, x, wt, bias, want, c + w, kw, stride, padding, dilation,
                         groups)


# 1x1 kernels with strides and no padding (conv.c's subsamples): the input
# gathered into compact planes of the output's map, then the pointwise
# product. (n, c, h, w, cout, stride, groups)
SUBSAMPLED_CASES = [
    (1, 8, 9, 11, 12, (2, 2), 1),       # odd sides: the last row and column read
    (2, 6, 10, 7, 10, (2, 1), 2),       # rows only, groups and images
    (1, 5, 7, 20, 17, (1, 3), 1),       # columns only, stride 3
    (1, 300, 8, 9, 40, (2, 2), 1),      # K = 300: two k-blocks
    (1, 64, 28, 28, 48, (2, 2), 1),     # ResNet's downsampling, smaller
    (3, 4, 5, 5, 3, (3, 3), 1),         # a 2x2 map: the few-column route instead
]


@pytest.mark.parametrize("case", SUBSAMPLED_CASES, ids=lambda c: "n{}c{}h{}w{}o{}".format(*c[:5]))
def test_subsampled_pointwise_cases(path: str, case) -> None:
    """Exact mode against the naive loop bit for bit at 1 and 2 threads, with
    special values where the layer reads and where it skips; the plan is the
    pointwise product over the output's map; fast mode equal at 1 and 2
    threads and within the Higham bound."""
    n, c, h, w, cout, stride, groups = case
    x = test_values((n, c, h, w), c * 13 + w, 6)
    wt = test_values((cout, c // groups, 1, 1), cout * 3 + h, 2)
    bias = test_values((cout,), w + 2)
    kw = dict(stride=stride, groups=groups)
    want = conv_naive(x, wt, bias, stride, (0, 0, 0, 0), (1, 1), groups, "relu")
    oh, ow = want.shape[2:]
    with samebits.use_path(path):
        plan = samebits.explain(samebits.conv2d, x, wt, bias, **kw)
        if oh * ow > 8:   # pointwise: the compact planes read in place
            assert (plan.n, plan.k, plan.b_source) == (oh * ow, c // groups, "in place"), plan
    exact_and_fast_agree(path, case, x, wt, bias, want, c + w, kw, stride, (0, 0, 0, 0), (1, 1),
                         groups)


# The few-column route (few_columns.c): output maps of 1 to 8 positions, so
# 1 to 4 columns per kernel call (5 = 3 + 2, 6 = 3 + 3, 7 = 4 + 3, 8 = 4 + 4),
# pointwise layers read in place and other kernels gathered (padding,
# strides, dilation, groups), one and two k-blocks, ragged last strips and
# chunks of 8 strips. (n, c, h, w, cout, kernel, stride, padding, dilation, groups)
FEW_COLUMN_CASES = [
    (1, 129, 1, 6, 128, (1, 3), (1, 1), (0, 0, 1, 1), (1, 1), 1),     # 6 columns, 2 k-blocks
    (2, 64, 1, 3, 64, (1, 3), (1, 2), (0, 0, 1, 1), (1, 1), 1),       # stride 2: 2 columns
    (1, 1, 1, 576, 258, (1, 256), (1, 64), (0, 0, 0, 0), (1, 1), 1),  # an STFT: 6 x 258 rows
    (3, 16, 4, 4, 40, (3, 3), (2, 2), (1, 1, 1, 1), (1, 1), 1),       # 2x2 map, 3 images
    (1, 12, 5, 5, 24, (3, 3), (1, 1), (0, 0, 0, 0), (2, 2), 2),       # 1x1 map, dilated, grouped
    (2, 20, 2, 4, 33, (1, 1), (1, 1), (0, 0, 0, 0), (1, 1), 1),       # pointwise, 8 columns
    (1, 7, 1, 7, 5, (1, 1), (1, 1), (0, 0, 0, 0), (1, 1), 1),         # pointwise, 7, 5 rows
    (1, 300, 1, 5, 70, (1, 1), (1, 1), (0, 0, 0, 0), (1, 1), 1),      # 5 columns, 2 k-blocks
    (1, 2, 1, 1, 9, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 1),         # 1x1 map, mostly padding
    (1, 4, 2, 3, 17, (2, 2), (1, 1), (1, 0, 0, 1), (1, 1), 1),        # asymmetric: 2x3 map
    (1, 32, 1, 4, 300, (1, 3), (1, 1), (0, 0, 1, 1), (1, 1), 1),      # 300 rows: many chunks
    (2, 6, 3, 1, 21, (3, 1), (1, 1), (2, 2, 0, 0), (1, 1), 3),        # 5x1 map, grouped
]


@pytest.mark.parametrize("case", FEW_COLUMN_CASES, ids=lambda c: "n{}c{}h{}w{}o{}".format(*c[:5]))
def test_few_column_cases(path: str, case) -> None:
    n, c, h, w, cout, kernel, stride, padding, dilation, groups = case
    x = test_values((n, c, h, w), c * 11 + w, 6)
    wt = test_values((cout, c // groups, *kernel), cout * 5 + h, 3)
    bias = test_values((cout,), cout + w)
    want = conv_naive(x, wt, bias, stride, padding, dilation, groups, "relu")
    kw = dict(stride=stride, padding=padding, dilation=dilation, groups=groups,
              activation="relu")
    with samebits.use_path(path):
        assert samebits.explain(samebits.conv2d, x, wt, bias, **kw).route == "column"
        packed = samebits.pack_conv2d(wt, groups=groups)
        for threads in (1, 2):
            got = samebits.conv2d(x, wt, bias, mode="exact", threads=threads, **kw)
            assert_same_bits(got, want, f"{path} exact {case}, threads {threads}")
        plain = samebits.conv2d(x, wt, bias, mode="fast", threads=1, **kw)
        for threads in (1, 2):
            again = samebits.conv2d(x, packed, bias, mode="fast", threads=threads, **kw)
            assert_same_bits(again, plain, f"{path} fast packed {case}, threads {threads}")


@pytest.mark.parametrize("cols", [1, 2, 5, 8])
def test_few_columns_equal_the_tile_route(path: str, cols: int) -> None:
    """Fast mode (and exact) gives the same bits on the few-column route as
    on the tile route: the first `cols` outputs of a 1-D layer, against the
    same outputs of the layer over a wider input (40 more columns, so more
    than 8 outputs), which reads the same taps."""
    c, cout, k, left = 70, 37, 3, 1
    x = test_values((1, c, 1, cols + k - 1 - left + 40), cols * 3, 5)
    wt = test_values((cout, c, 1, k), cout + cols, 2)
    bias = test_values((cout,), 3)
    kw = dict(padding=(0, 0, left, 0), activation="relu")
    narrow = x[:, :, :, :cols + k - 1 - left]
    with samebits.use_path(path):
        assert samebits.explain(samebits.conv2d, narrow, wt, bias, **kw).route == "column"
        assert samebits.explain(samebits.conv2d, x, wt, bias, **kw).route != "column"
        for mode in ("exact", "fast"):
            few = samebits.conv2d(narrow, wt, bias, mode=mode, **kw)
            wide = samebits.conv2d(x, wt, bias, mode=mode, **kw)
            assert few.shape[-1] == cols
            assert_same_bits(few, np.ascontiguousarray(wide[..., :cols]), f"{path} {mode} {cols}")


def test_squeeze_excitation_batches(path: str) -> None:
    """1x1 layers over 1x1 inputs, several images: the few-column kernel;
    exact against the naive loop, fast packed against plain and 1 against 2
    threads."""
    for n, c, cout in ((3, 96, 200), (2, 7, 5), (4, 600, 33)):
        x = test_values((n, c, 1, 1), n * c, 4)
        wt = test_values((cout, c, 1, 1), cout, 2)
        bias = test_values((cout,), 7)
        want = conv_naive(x, wt, bias, (1, 1), (0,) * 4, (1, 1), 1, "relu6")
        with samebits.use_path(path):
            got = samebits.conv2d(x, wt, bias, activation="relu6", mode="exact")
            assert_same_bits(got, want, f"{path} exact, {n}x{c} -> {cout}")
            packed = samebits.pack_conv2d(wt)
            for mode in ("exact", "fast"):
                plain = samebits.conv2d(x, wt, bias, activation="relu6", mode=mode, threads=1)
                for threads in (1, 2):
                    again = samebits.conv2d(x, packed, bias, activation="relu6", mode=mode,
                                            threads=threads)
                    assert_same_bits(again, plain, f"{path} {mode} packed, threads {threads}")
                # one image at a time gives the batch's bits
                first = samebits.conv2d(x[:1], packed, bias, activation="relu6", mode=mode)
                assert_same_bits(first, plain[:1], f"{path} {mode} first image")


# 1 to 4 output channels (an image, mask or depth head) pack for a 4-row tile
# where the path has one (avx512): the bits must be the 8-row tile's, which a
# layer with 5 more channels takes
FEW_CHANNEL_LAYERS = [(32, 40, 37, 3, 1, 1), (16, 33, 29, 9, 1, 4), (64, 30, 30, 1, 1, 0),
                      (8, 41, 40, 3, 2, 1), (300, 12, 11, 3, 1, 1)]


@pytest.mark.parametrize("cout", [1, 2, 3, 4])
@pytest.mark.parametrize("layer", FEW_CHANNEL_LAYERS, ids=lambda l: "c{}h{}w{}k{}s{}".format(*l))
def test_few_output_channels(path: str, cout: int, layer) -> None:
    c, h, w, k, stride, pad = layer
    x = test_values((1, c, h, w), c + h + cout, 6)
    wide = test_values((cout + 5, c, k, k), cout + k, 2)
    bias = test_values((cout + 5,), c)
    case = dict(x=x, w=wide[:cout].copy(), bias=bias[:cout].copy(), stride=(stride, stride),
                padding=(pad,) * 4, dilation=(1, 1), groups=1, activation="relu")
    more = dict(case, w=wide, bias=bias)
    want = reference(conv_naive, case)
    with samebits.use_path(path):
        for threads in (1, 2):
            assert_same_bits(call(case, mode="exact", threads=threads), want,
                             f"{path} exact, {cout} channels, threads {threads}")
            for mode in ("exact", "fast"):
                assert_same_bits(call(case, mode=mode, threads=threads),
                                 call(more, mode=mode, threads=threads)[:, :cout],
                                 f"{path} {mode}, {cout} channels against {cout + 5}")


@pytest.mark.parametrize("seed", range(12))
def test_fast_within_higham_bound(path: str, seed: int) -> None:
    case = random_case(100 + seed)
    case["bias"], case["activation"] = None, None
    x, w = case["x"], case["w"]
    x = np.random.default_rng(seed).standard_normal(x.shape).astype(np.float32)
    w = np.random.default_rng(seed + 1).standard_normal(w.shape).astype(np.float32)
    case["x"], case["w"] = x, w
    total, bound = conv_float64(x, w, case["stride"], case["padding"], case["dilation"],
                                case["groups"])
    with samebits.use_path(path):
        got = call(case, mode="fast")
        again = call(case, mode="fast", threads=1)
    assert_same_bits(got, again, "fast: 1 thread vs all")
    excess = np.abs(got.astype(np.float64) - total) - bound
    assert excess.max(initial=-1) <= 0, f"fast mode outside the Higham bound by {excess.max()}"


def test_fast_close_to_torch() -> None:
    torch = pytest.importorskip("torch", reason="torch is not installed")
    rng = np.random.default_rng(5)
    for c, h, cout, k, stride, pad, groups in [(3, 30, 16, 7, 2, 3, 1), (16, 14, 32, 3, 1, 1, 1),
                                               (32, 9, 48, 3, 2, 1, 4), (64, 7, 80, 1, 1, 0, 1)]:
        x = rng.standard_normal((2, c, h, h)).astype(np.float32)
        w = rng.standard_normal((cout, c // groups, k, k)).astype(np.float32)
        b = rng.standard_normal(cout).astype(np.float32)
        got = samebits.conv2d(x, w, b, stride=stride, padding=pad, groups=groups,
                              activation="relu6")
        want = torch.clamp(torch.nn.functional.conv2d(
            torch.from_numpy(x), torch.from_numpy(w), torch.from_numpy(b), stride=stride,
            padding=pad, groups=groups), 0, 6).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_special_values_in_padding_and_epilogue() -> None:
    """inf weights meet padding: inf * +0 is NaN, stored canonically; relu keeps NaN."""
    x = np.ones((1, 1, 2, 2), np.float32)
    w = np.full((1, 1, 3, 3), np.inf, np.float32)
    y = samebits.conv2d(x, w, padding=1, mode="exact", activation="relu")
    assert (y.view(np.uint32) == 0x7FC00000).all()
    # -0 products: the sum starts from +0, so it stays +0
    x = np.full((1, 1, 3, 3), -0.0, np.float32)
    w = np.ones((2, 1, 2, 2), np.float32)
    y = samebits.conv2d(x, w, mode="exact")
    assert (y.view(np.uint32) == 0).all()
    # relu6 clamps, relu keeps positives, bias added after the sum
    x = np.array([[[[1.0, 2.0, 10.0, -3.0]]]], np.float32)
    w = np.ones((1, 1, 1, 1), np.float32)
    b = np.array([0.5], np.float32)
    assert samebits.conv2d(x, w, b, activation="relu6", mode="exact").ravel().tolist() == \
        [1.5, 2.5, 6.0, 0.0]


def test_one_dimensional_and_shapes() -> None:
    x = test_values((2, 4, 1, 50), 3)
    w = test_values((6, 4, 1, 5), 4)
    y = samebits.conv2d(x, w, padding=(0, 2), stride=(1, 3), mode="exact")
    assert y.shape == (2, 6, 1, 17)
    assert_same_bits(y, conv_naive(x, w, None, (1, 3), (0, 0, 2, 2)), "1-D")
    # zero channels: every output is +0 + bias
    y = samebits.conv2d(np.zeros((1, 0, 3, 3), np.float32), np.zeros((2, 0, 1, 1), np.float32),
                        np.array([1.0, -2.0], np.float32), mode="exact")
    assert y.ravel().tolist() == [1.0] * 9 + [-2.0] * 9
    # empty batch and an input that is all padding
    assert samebits.conv2d(np.zeros((0, 2, 3, 3), np.float32),
                           np.ones((3, 2, 2, 2), np.float32)).shape == (0, 3, 2, 2)
    y = samebits.conv2d(np.zeros((1, 1, 0, 0), np.float32), np.ones((1, 1, 1, 1), np.float32),
                        padding=1, mode="exact")
    assert y.shape == (1, 1, 2, 2) and (y == 0).all()


def test_out_and_layouts() -> None:
    x = test_values((1, 6, 9, 9), 8)
    w = test_values((5, 6, 3, 3), 9)
    want = samebits.conv2d(x, w, padding=1, mode="exact")
    out = np.full((1, 5, 9, 9), np.nan, np.float32)
    assert samebits.conv2d(x, w, padding=1, mode="exact", out=out) is out
    assert_same_bits(out, want, "out=")
    strided = np.empty((1, 6, 9, 18), np.float32)[..., ::2]
    strided[...] = x
    assert_same_bits(samebits.conv2d(strided, w, padding=1, mode="exact"), want, "strided x")
    big = np.zeros((1, 5, 9, 18), np.float32)
    samebits.conv2d(x, w, padding=1, mode="exact", out=big[..., ::2])
    assert_same_bits(big[..., ::2], want, "strided out")
    # without numpy: buffer-protocol operands, memoryview result
    xb = memoryview(bytearray(x.tobytes())).cast("f", x.shape)
    wb = memoryview(bytearray(w.tobytes())).cast("f", w.shape)
    got = samebits.conv2d(xb, wb, padding=1, mode="exact")
    assert isinstance(got, memoryview) and got.shape == (1, 5, 9, 9)
    assert_same_bits(np.frombuffer(got.tobytes(), np.float32).reshape(want.shape), want,
                     "buffers")


def test_errors() -> None:
    x = np.zeros((1, 4, 5, 5), np.float32)
    w = np.zeros((6, 2, 3, 3), np.float32)
    with pytest.raises(ValueError, match="groups=3 does not divide the 4 input channels"):
        samebits.conv2d(x, np.zeros((6, 1, 3, 3), np.float32), groups=3)
    with pytest.raises(ValueError, match="2 input channels per group"):
        samebits.conv2d(x, w)
    with pytest.raises(ValueError, match="does not divide the 6 output channels"):
        samebits.conv2d(x, np.zeros((6, 1, 3, 3), np.float32), groups=4)
    with pytest.raises(ValueError, match="output size -1 x -1 is below 1"):
        samebits.conv2d(x, np.zeros((1, 4, 7, 7), np.float32))
    with pytest.raises(TypeError, match="dtype float32"):
        samebits.conv2d(x.astype(np.float64), w, groups=2)
    with pytest.raises(ValueError, match=r"4-D \(N, C, H, W\) or unbatched 3-D \(C, H, W\), "
                                         r"got shape \(5, 5\)"):
        samebits.conv2d(x[0, 0], w, groups=2)
    with pytest.raises(ValueError, match=r"bias has shape \(5,\)"):
        samebits.conv2d(x, w, np.zeros(5, np.float32), groups=2)
    with pytest.raises(ValueError, match="activation"):
        samebits.conv2d(x, w, groups=2, activation="elu")
    with pytest.raises(ValueError, match="stride must be at least 1"):
        samebits.conv2d(x, w, groups=2, stride=0)
    with pytest.raises(TypeError, match="stride"):
        samebits.conv2d(x, w, groups=2, stride=True)
    with pytest.raises(ValueError, match="padding must not be negative"):
        samebits.conv2d(x, w, groups=2, padding=(1, -1))
    # A sequence of the wrong length is a ValueError, as in max_pool2d.
    with pytest.raises(ValueError, match=r"conv2d: padding must be an int or a sequence of 2 "
                                         r"or 4 ints, got 3 values: \(1, 2, 3\)"):
        samebits.conv2d(x, w, groups=2, padding=(1, 2, 3))
    with pytest.raises(ValueError, match="mode"):
        samebits.conv2d(x, w, groups=2, mode="approximate")
    with pytest.raises(ValueError, match="out has shape"):
        samebits.conv2d(x, w, groups=2, out=np.zeros((1, 6, 5, 5), np.float32))
    packed = samebits.pack_conv2d(w, groups=2)
    with pytest.raises(ValueError, match="packed for groups=2"):
        samebits.conv2d(np.zeros((1, 2, 5, 5), np.float32), packed, groups=1)
    with samebits.use_path("scalar"):
        with pytest.raises(ValueError, match="packed for path"):
            samebits.conv2d(x, packed, groups=2)


def test_out_overlapping_input_is_refused() -> None:
    buf = np.zeros((1, 2, 4, 4), np.float32)
    w = np.ones((2, 2, 1, 1), np.float32)
    with pytest.raises(ValueError, match="overlaps"):
        samebits.conv2d(buf, w, out=buf)


# ---- Integer arguments: range-checked in Python before they reach C --------

def test_stride_beyond_int64_is_refused_not_wrapped() -> None:
    # The int64 argument array used to wrap 2**64 + 1 to 1 while Python sized
    # the output from the real value: a segfault.
    x = np.ones((1, 1, 1, 100000), np.float32)
    w = np.ones((1, 1, 1, 1), np.float32)
    with pytest.raises(ValueError,
                       match=r"conv2d: stride is too large: \(1, 18446744073709551617\)"):
        samebits.conv2d(x, w, stride=(1, 2**64 + 1))


def test_huge_padding_and_dilation_are_refused_not_wrapped() -> None:
    # 2**64 and 2**64 + 1 used to reach C as 0 and 1: [3, 5, ..., 19] came
    # back, although by the documented formula the second tap lies in the padding.
    x = np.arange(1, 11, dtype=np.float32).reshape(1, 1, 1, 10)
    w = np.ones((1, 1, 1, 2), np.float32)
    with pytest.raises(ValueError,
                       match=r"conv2d: dilation is too large: \(1, 18446744073709551617\)"):
        samebits.conv2d(x, w, padding=(0, 0, 0, 2**64), dilation=(1, 2**64 + 1), mode="exact")
    with pytest.raises(ValueError,
                       match=r"conv2d: padding is too large: \(0, 0, 0, 18446744073709551616\)"):
        samebits.conv2d(x, w, padding=(0, 0, 0, 2**64), dilation=(1, 2**40), mode="exact")
    # At the bound the formula holds: the second tap is always padding (+0).
    for mode in ("exact", "fast"):
        got = samebits.conv2d(x, w, padding=(0, 0, 0, 2**40), dilation=(1, 2**40), mode=mode)
        assert_same_bits(got, x, f"{mode}, dilation 2**40")


@pytest.mark.parametrize("kwargs, match", [
    # The scalar form goes through the numpy fast path first (struct.error there before).
    (dict(stride=2**64 + 1),
     r"conv2d: stride is too large: 18446744073709551617 \(at most 2\*\*40"),
    (dict(stride=2**40 + 1), r"conv2d: stride is too large: 1099511627777"),
    (dict(stride=(1, 2**41)), r"conv2d: stride is too large: \(1, 2199023255552\)"),
    (dict(dilation=2**41), r"conv2d: dilation is too large: 2199023255552"),
    (dict(padding=2**62), r"conv2d: padding is too large: 4611686018427387904"),
    (dict(padding=(1, 2**41)), r"conv2d: padding is too large: \(1, 2199023255552\)"),
    (dict(padding=-2**64), r"conv2d: padding must not be negative, got -18446744073709551616"),
    (dict(groups=2**64), r"conv2d: groups is too large: 18446744073709551616"),
    # In range, but the output would be 2**41 + 1 squared floats: refused before allocating.
    (dict(padding=2**40),
     r"conv2d: the output would have shape \(1, 1, 2199023255553, 2199023255553\), \d+ bytes"),
])
def test_out_of_range_arguments_name_the_argument(kwargs, match) -> None:
    x = np.ones((1, 1, 1, 1), np.float32)
    w = np.ones((1, 1, 1, 1), np.float32)
    with pytest.raises(ValueError, match=match):
        samebits.conv2d(x, w, **kwargs)
    with pytest.raises(ValueError, match=match):   # the general path (non-numpy x)
        samebits.conv2d(memoryview(bytearray(4)).cast("f", (1, 1, 1, 1)), w, **kwargs)


def test_derived_sizes_and_dimensions_are_checked() -> None:
    x = np.ones((1, 1, 1, 1), np.float32)
    # dilation*(kernel-1)+1 = 2**40 * 2**22 + 1 would wrap size_t arithmetic in C.
    w_wide = np.empty((0, 1, 1, 2**22 + 1), np.float32)
    with pytest.raises(ValueError, match=r"conv2d: the window's width extent "
                                         r"dilation\*\(kernel-1\)\+1 = .* is too large"):
        samebits.conv2d(x, w_wide, dilation=2**40)
    # Empty arrays can have dimensions C refuses; Python says which.
    with pytest.raises(ValueError, match=r"conv2d: x has shape \(0, 1, 1, 2199023255552\); "
                                         r"dimensions above 2\*\*40"):
        samebits.conv2d(np.empty((0, 1, 1, 2**41), np.float32),
                        np.ones((1, 1, 1, 1), np.float32))
    with pytest.raises(ValueError, match=r"conv2d: w has shape \(2199023255552, 0, 1, 1\)"):
        samebits.conv2d(x, np.empty((2**41, 0, 1, 1), np.float32))
    with pytest.raises(ValueError, match=r"pack_conv2d: w has shape \(0, 1, 2199023255552, 1\)"):
        samebits.pack_conv2d(np.empty((0, 1, 2**41, 1), np.float32))


# ---- Copies and pickles of PackedConv2d own their packed data -----------------

@pytest.mark.parametrize("how", ["copy", "deepcopy", "pickle2", "pickle5"])
@pytest.mark.parametrize("groups", [1, 2, 6])   # 6: depthwise (stored as it is)
def test_packed_conv2d_copy_owns_its_memory(how, groups) -> None:
    x = test_values((2, 6, 9, 8), 51, 2)
    w = test_values((12, 6 // groups, 3, 3), 52, 2)
    packed = samebits.pack_conv2d(w, groups=groups)
    want = {mode: samebits.conv2d(x, packed, padding=1, groups=groups, mode=mode)
            for mode in ("exact", "fast")}
    dup = duplicate(packed, how)
    assert type(dup) is samebits.PackedConv2d
    assert ((dup.path, dup.shape, dup.groups, dup.nbytes)
            == (packed.path, packed.shape, packed.groups, packed.nbytes))
    original = packed.address
    # Free the original and reuse its memory: a copy keeping the original's
    # address read freed memory (ASan: heap-use-after-free).
    del packed
    gc.collect()
    others = [samebits.pack_conv2d(np.full_like(w, np.nan), groups=groups) for _ in range(8)]
    for mode, bits in want.items():
        for xs in (x, memoryview(x.copy())):   # numpy fast path and general path
            assert_same_bits(samebits.conv2d(xs, dup, padding=1, groups=groups, mode=mode),
                             bits, f"{how} groups={groups} {mode}")
    assert dup.address != original and dup.address % 64 == 0 and others


def test_unpickling_packed_conv2d_for_a_path_this_machine_cannot_run() -> None:
    x, w = test_values((1, 4, 5, 5), 53), test_values((6, 2, 3, 3), 54)
    packed = samebits.pack_conv2d(w, groups=2)
    packed.path = unrunnable_path()   # as if packed on a machine that runs that path
    loaded = pickle.loads(pickle.dumps(packed))
    assert (loaded.path, loaded.shape, loaded.groups) == (packed.path, (6, 2, 3, 3), 2)
    with pytest.raises(ValueError, match=f"conv2d: w was packed for path '{packed.path}' but "
                                         f"the active path is '{samebits.path()}'"):
        samebits.conv2d(x, loaded, groups=2)
    state = packed.__getstate__()
    for groups in (0, True, 2**41, None):
        with pytest.raises(ValueError, match="pack_conv2d: unpickling a PackedConv2d"):
            samebits.PackedConv2d.__new__(samebits.PackedConv2d).__setstate__(
                {**state, "groups": groups})


# ---- A strided buffer (not numpy) as out= ----------------------------------------

def test_strided_memoryview_out_is_written_not_refused() -> None:
    # memoryview(view.obj) of a strided numpy array is not contiguous, so the
    # whole-object fallback said "overlaps" about an out that touches no input.
    x, w = test_values((1, 1, 4, 4), 61, 2), test_values((1, 1, 1, 1), 62)
    want = samebits.conv2d(x, w, mode="exact")
    z = np.zeros((1, 1, 4, 8), np.float32)
    got = samebits.conv2d(x, w, mode="exact", out=memoryview(z[..., ::2]))
    assert isinstance(got, memoryview)
    assert_same_bits(z[..., ::2], want, "strided memoryview out")
    assert not z[..., 1::2].any()
    pool = np.zeros((1, 1, 2, 4), np.float32)
    samebits.max_pool2d(x, 2, out=memoryview(pool[..., ::2]))
    assert_same_bits(pool[..., ::2], samebits.max_pool2d(x, 2), "max_pool2d strided out")
    assert not pool[..., 1::2].any()


def test_strided_memoryview_out_over_an_input_buffer() -> None:
    # Input and out in one buffer: x reads rows 0-1 in place (a contiguous
    # memoryview); out writes every other column of rows 2-3 (touching no
    # byte of x) or of rows 1-2 (touching row 1).
    z = np.zeros((1, 1, 4, 8), np.float32)
    z[:, :, :2] = test_values((1, 1, 2, 8), 63)
    x = memoryview(z[:, :, :2])
    assert x.c_contiguous
    w = test_values((1, 1, 1, 2), 64)
    want = samebits.conv2d(z[:, :, :2].copy(), w, stride=(1, 2), mode="exact")
    samebits.conv2d(x, w, stride=(1, 2), mode="exact", out=memoryview(z[:, :, 2:, ::2]))
    assert_same_bits(z[:, :, 2:, ::2], want, "out beside x")
    assert not z[:, :, 2:, 1::2].any()
    with pytest.raises(ValueError, match="conv2d: out overlaps an input"):
        samebits.conv2d(x, w, stride=(1, 2), out=memoryview(z[:, :, 1:3, ::2]))
