"""Convolutions with output channels in the vector lanes (csrc/kernels/conv_lanes.c):
the avx512 path's route for maps that pixel-lane tiles would pad (7x7: 64
positions computed for 49), and in fast mode for layers with taps and 48 or
more output channels per group (in exact mode those with stride 1, and stems).

The route runs its 256-bit kernels on CPUs that split 512-bit operations (AMD
Zen 4). SAMEBITS_SPLIT_512=1 forces that answer, so every AVX-512 machine runs
the route here, in a fresh process (the library reads the variable once), and
SAMEBITS_SPLIT_512=0 runs the same calls on the pixel tiles, or, where those
would pad the map (WIDE), on the route's 512-bit kernels (two strips a
vector, lanes_wide_avx512.c):

- every case plans the route under 1, and under 0 where WIDE says;
- exact mode equals the naive C loop bit for bit under both settings, at 1 and
  2 threads: special values, biases and every activation, groups, strides,
  dilation, asymmetric padding, the input read in place, several images, rows
  of 1 to 13 positions, 1 to 3 strips per block (1 to 4 with the 512-bit
  kernels, odd counts half a vector) and ragged last strips, one k-block and
  several;
- fast mode gives the same bits under both settings (the same operations in
  the same order), at 1 and 2 threads, packed weights or not;
- a graph's fused Conv -> BatchNormalization -> Add -> Relu over a 7x7 map gives
  the same bits on both routes, in both modes."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import samebits
from conftest import test_values
from conv_reference import conv_naive

HERE = Path(__file__).resolve().parent

# (n, c, h, w, cout, kernel, stride, padding, dilation, groups, activation), and
# whether exact mode takes the route too: it does where the pixel tile (8x24
# there) would compute more than 1.1 times the positions of a layer with taps,
# or 1.2 times those of a pointwise layer, and for layers with taps and 48 or
# more output channels per group whose stride is 1 or that are stems (at most
# 4 input channels per group)
CASES = [
    ((1, 64, 7, 7, 40, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 1, "relu"), True),    # ResNet's last maps
    ((1, 300, 7, 7, 70, (1, 1), (1, 1), (0, 0, 0, 0), (1, 1), 1, None), False),    # pointwise, 2 k-blocks
    ((2, 24, 14, 14, 48, (3, 3), (2, 2), (1, 1, 1, 1), (1, 1), 1, "relu6"), True),  # strided, 2 images
    ((1, 36, 7, 7, 96, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 3, "relu"), True),    # grouped
    ((1, 20, 15, 13, 50, (3, 3), (1, 1), (2, 0, 1, 1), (1, 2), 1, None), True),    # 15 wide, dilated
    ((1, 16, 9, 9, 17, (3, 3), (1, 1), (0, 0, 0, 0), (1, 1), 1, "relu"), True),    # read in place
    ((1, 8, 11, 10, 9, (5, 3), (2, 1), (2, 1, 0, 2), (1, 1), 1, None), True),      # 9 channels
    ((1, 520, 4, 5, 24, (1, 1), (1, 1), (0, 0, 0, 0), (1, 1), 1, None), False),    # 20 positions
    ((1, 12, 7, 9, 64, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 1, "relu"), True),    # 2 + 3 + 3 strips
    ((1, 3, 40, 40, 64, (7, 7), (2, 2), (3, 3, 3, 3), (1, 1), 1, "relu"), True),   # a stem
    # strided, 24 in: 24 x 24 positions on 25-column wide rows (conv.c's phase
    # planes), 600 computed for 576, so not exact mode's route
    ((1, 24, 47, 47, 56, (3, 3), (2, 2), (1, 1, 1, 1), (1, 1), 1, "relu"), False),
    # small maps: 1 to 5 positions a kernel call, 1 strip (6 channels) to 5
    ((1, 8, 10, 1, 12, (3, 1), (1, 1), (1, 1, 0, 0), (1, 1), 1, "relu"), True),    # 1 a row
    ((1, 8, 6, 2, 12, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 1, None), True),       # 2 a row
    ((1, 16, 3, 3, 6, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 1, "relu"), True),     # 3, one strip
    ((1, 40, 5, 5, 33, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 1, "relu6"), True),   # 5, 2 + 3 strips
    ((1, 8, 6, 4, 20, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 1, None), False),      # 4, 3 strips
]
# Every other activation over 52 channels (a ragged last strip), with a bias
# and without: the epilogue runs on the sums in the kernel's layout, by
# column, before they are turned over (relu and none: in the kernel's
# registers)
CASES += [((1, 12, 7, 7, 52, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 1, act, bias), True)
          for act, bias in [("silu", True), ("swish_onnx", True), ("hardswish_onnx", True),
                            ("sigmoid", True), (("leaky_relu", 0.1), True), ("gelu", True),
                            ("tanh", True), (("hardsigmoid_onnx", 0.2), True),
                            ("gelu_tanh", True), ("hardswish", True), ("swish_onnx", False),
                            ("relu", False), (None, False)]]

# Whether SAMEBITS_SPLIT_512=0 takes the route too, with the 512-bit kernels
# (lanes_wide_avx512.c: two strips a vector, up to 4 strips a call), in both
# modes: where the pixel tile would compute more than 1.1 times the
# positions of a layer with taps, or 1.2 times those of a pointwise layer,
# and for unit-stride layers with taps and 48 or more output channels per
# group whose pixel tiles would gather a patch matrix (rows too short to be
# read by offsets: cases 4 and 8)
WIDE = [True, True, True, True, True, True, True, True, True, False, False] + [True] * 18

RUN = r"""
import json, sys
import numpy as np
sys.path[:0] = [sys.argv[1], sys.argv[1] + "/.."]
import samebits
from test_conv_lanes import CASES, operands
out = {}
with samebits.use_path("avx512"):
    for i, (case, _) in enumerate(CASES):
        x, w, bias, kw = operands(case)
        packed = samebits.pack_conv2d(w, groups=kw["groups"])
        for mode in ("exact", "fast"):
            out[f"{i} {mode} route"] = samebits.explain(samebits.conv2d, x, w, bias, mode=mode,
                                                         **kw).route
            for threads in (1, 2):
                for name, weights in (("plain", w), ("packed", packed)):
                    y = samebits.conv2d(x, weights, bias, mode=mode, threads=threads, **kw)
                    out[f"{i} {mode} {threads} {name}"] = y.view(np.uint32).tolist()
print(json.dumps(out))
"""


def operands(case):
    n, c, h, w, cout, kernel, stride, padding, dilation, groups, activation, *has_bias = case
    seed = c * 31 + h * 7 + cout
    x = test_values((n, c, h, w), seed, 8)
    wt = test_values((cout, c // groups, *kernel), seed + 1, 3)
    bias = test_values((cout,), seed + 2) if not has_bias or has_bias[0] else None
    return x, wt, bias, dict(stride=stride, padding=padding, dilation=dilation, groups=groups,
                             activation=activation)


def _require_avx512() -> None:
    if "avx512" not in samebits.paths():
        pytest.skip("the avx512 path cannot run on this CPU")


def _run(script: str, split: str) -> dict:
    out = subprocess.run([sys.executable, "-c", script, str(HERE)],
                         env=dict(os.environ, SAMEBITS_SPLIT_512=split),
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-4000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def runs() -> dict:
    _require_avx512()
    return {split: _run(RUN, split) for split in ("0", "1")}


def test_the_route_is_planned_only_where_it_runs(runs) -> None:
    assert len(WIDE) == len(CASES)
    for i, (case, exact_lanes) in enumerate(CASES):
        for mode in ("exact", "fast"):
            assert (runs["0"][f"{i} {mode} route"] == "channel lanes") == WIDE[i], (case, mode)
        assert runs["1"][f"{i} fast route"] == "channel lanes", case
        assert (runs["1"][f"{i} exact route"] == "channel lanes") == exact_lanes, case


@pytest.mark.parametrize("i", range(len(CASES)))
def test_exact_equals_the_naive_loop(runs, i: int) -> None:
    x, w, bias, kw = operands(CASES[i][0])
    want = conv_naive(x, w, bias, kw["stride"], kw["padding"], kw["dilation"], kw["groups"],
                      kw["activation"]).view(np.uint32).ravel()
    for split in ("0", "1"):
        for threads in (1, 2):
            for name in ("plain", "packed"):
                got = np.asarray(runs[split][f"{i} exact {threads} {name}"], np.uint32).ravel()
                bad = np.flatnonzero(got != want)
                assert bad.size == 0, (f"case {i} split {split} threads {threads} {name}: "
                                       f"{bad.size} outputs differ, first at {bad[0]}: "
                                       f"0x{got[bad[0]]:08x} want 0x{want[bad[0]]:08x}")


@pytest.mark.parametrize("i", range(len(CASES)))
def test_fast_mode_gives_the_pixel_tiles_bits(runs, i: int) -> None:
    """Fast mode's bits the same under both settings: the 256-bit kernel's
    against the pixel tiles' where SAMEBITS_SPLIT_512=0 runs the tiles, and
    against the 512-bit kernel's where it runs those (WIDE)."""
    want = runs["0"][f"{i} fast 1 plain"]
    for threads in (1, 2):
        for name in ("plain", "packed"):
            for split in ("0", "1"):
                assert runs[split][f"{i} fast {threads} {name}"] == want, (i, split, threads, name)


GRAPH = r"""
import json, sys, hashlib
import numpy as np
sys.path[:0] = [sys.argv[1], sys.argv[1] + "/.."]
import samebits.onnx as so
from test_conv_lanes import fused_block_model
from conftest import test_values
model = fused_block_model()
x = test_values((1, 64, 7, 7), 5, 8)
out = {}
for mode in ("exact", "fast"):
    sess = so.load(model, mode=mode, threads=2)
    y = sess.run({"x": x})["y"]
    sess.run({"x": x}, profile=True)
    out[mode] = [hashlib.sha256(np.ascontiguousarray(y).tobytes()).hexdigest(),
                 sorted(sess.profile)]
print(json.dumps(out))
"""


def fused_block_model() -> bytes:
    """Conv 3x3 -> BatchNormalization -> Add (the block's input) -> Relu over a
    7x7 map of 64 channels: one fused node."""
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper, numpy_helper
    rng = np.random.default_rng(3)
    w = (rng.standard_normal((64, 64, 3, 3)) * 0.05).astype(np.float32)
    stats = [rng.standard_normal(64).astype(np.float32) for _ in range(3)]
    var = (rng.random(64) + 0.5).astype(np.float32)
    inits = [numpy_helper.from_array(w, "w"), numpy_helper.from_array(stats[0], "scale"),
             numpy_helper.from_array(stats[1], "shift"), numpy_helper.from_array(stats[2], "mean"),
             numpy_helper.from_array(var, "var")]
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("BatchNormalization", ["c", "scale", "shift", "mean", "var"], ["b"]),
             helper.make_node("Add", ["b", "x"], ["s"]),
             helper.make_node("Relu", ["s"], ["y"])]
    graph = helper.make_graph(nodes, "block",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64, 7, 7])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()


def test_fused_block_gives_the_same_bits_on_both_routes() -> None:
    _require_avx512()
    pytest.importorskip("onnx")
    runs = {split: _run(GRAPH, split) for split in ("0", "1")}
    for mode in ("exact", "fast"):
        assert runs["1"][mode][0] == runs["0"][mode][0], mode
        assert runs["1"][mode][1] == runs["0"][mode][1], mode
        assert not any("BatchNormalization" in op or op == "Add" or op == "Relu"
                       for op in runs["1"][mode][1]), runs["1"][mode][1]
