"""ONNX GridSample, 4-D (docs/onnx.md; csrc/kernels/grid_sample.c): held bit
for bit to a numpy float32 oracle written here from the kernel's stated
definition (onnx.reference's order of operations, each step rounded, no
fused multiply-add), for every mode, padding mode and align_corners, with
grid points far outside the image, on the image's edges and NaN; on
intermediates (X and the grid each computed by a node) with the output
read twice and returned, in both modes, every path, 1 and 2 threads; and
within float32 rounding of onnx.reference and ONNX Runtime on finite
grids."""
from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

import samebits.onnx as so  # noqa: E402
from onnx_cases import bits, graph_model, run_everywhere  # noqa: E402

F = TensorProto.FLOAT
f32 = np.float32


def _reflect(x: float, lo: float, hi: float) -> float:
    span = hi - lo
    if x < lo:
        d = lo - x
        k = math.floor(d / span)
        r = d - k * span
        return lo + r if k % 2 == 0 else hi - r
    if x > hi:
        d = x - hi
        k = math.floor(d / span)
        r = d - k * span
        return hi - r if k % 2 == 0 else lo + r
    return x


def _weights(mode: str, t: np.float32) -> list:
    if mode == "linear":
        return [f32(1) - t, t]
    A = f32(-0.75)
    t1, q, q1 = t + f32(1), f32(1) - t, f32(2) - t
    return [((A * t1 - f32(5) * A) * t1 + f32(8) * A) * t1 - f32(4) * A,
            (((A + f32(2)) * t - (A + f32(3))) * t) * t + f32(1),
            (((A + f32(2)) * q - (A + f32(3))) * q) * q + f32(1),
            ((A * q1 - f32(5) * A) * q1 + f32(8) * A) * q1 - f32(4) * A]


def _bounds(L, align):
    return (0.0, L - 1.0) if align else (-0.5, L - 0.5)


def _coord(g, L, mode, padding, align):
    """A normalized grid value's pixel coordinate on an axis of length L."""
    l_ = f32(L)
    v = ((g + f32(1)) / f32(2)) * (l_ - f32(1)) if align else ((g + f32(1)) * l_ - f32(1)) / f32(2)
    if mode == "nearest":
        v = np.rint(v)
    lo, hi = _bounds(L, align)
    if v < lo or v > hi:
        if padding == "border":
            v = f32(min(max(float(v), 0.0), L - 1.0))
        elif padding == "reflection":
            v = f32(_reflect(float(v), lo, hi))
    return f32(v)


def _tap(i, L, padding, align):
    """A tap's index after the padding rule (-1: reads 0)."""
    if 0 <= i < L:
        return i
    if padding == "zeros":
        return -1
    if padding == "border":
        return 0 if i < 0 else L - 1
    lo, hi = _bounds(L, align)
    return min(max(int(_reflect(float(i), lo, hi)), 0), L - 1)


def oracle(x: np.ndarray, grid: np.ndarray, mode: str, padding: str, align: bool) -> np.ndarray:
    n, c, h, w = x.shape
    _, ho, wo, _ = grid.shape
    y = np.zeros((n, c, ho, wo), np.float32)
    coord = lambda g, L: _coord(g, L, mode, padding, align)  # noqa: E731
    tap = lambda i, L: _tap(i, L, padding, align)  # noqa: E731

    with np.errstate(all="ignore"):
        for b in range(n):
            for oy in range(ho):
                for ox in range(wo):
                    gx, gy = grid[b, oy, ox]
                    cx_, cy_ = coord(gx, w), coord(gy, h)
                    for ch in range(c):
                        plane = x[b, ch]
                        if np.isnan(cx_) or np.isnan(cy_):
                            y[b, ch, oy, ox] = 0.0 if padding == "zeros" else plane[0, 0]
                            continue
                        if mode == "nearest":
                            i, j = tap(int(math.floor(cx_)), w), tap(int(math.floor(cy_)), h)
                            y[b, ch, oy, ox] = 0.0 if i < 0 or j < 0 else plane[j, i]
                            continue
                        taps, first = (4, -1) if mode == "cubic" else (2, 0)
                        x0, y0 = math.floor(cx_), math.floor(cy_)
                        wx, wy = _weights(mode, cx_ - f32(x0)), _weights(mode, cy_ - f32(y0))
                        ix = [tap(x0 + first + k, w) for k in range(taps)]
                        v = None
                        for r in range(taps):
                            iy = tap(y0 + first + r, h)
                            row = None
                            for k in range(taps):
                                p = f32(0) if iy < 0 or ix[k] < 0 else plane[iy, ix[k]]
                                row = wx[0] * p if k == 0 else row + wx[k] * p
                            v = wy[0] * row if r == 0 else v + wy[r] * row
                        y[b, ch, oy, ox] = v
    return y


def _grid(rng, specials: bool) -> np.ndarray:
    g = rng.uniform(-1.6, 1.6, (2, 4, 5, 2)).astype(np.float32)
    g[0, 0, :4] = [[-1, -1], [1, 1], [-1, 1], [0, 0]]          # corners and the centre
    if specials:
        g[1, 1, 0] = [np.nan, 0.2]
        g[1, 2, 0] = [7.3, -9.1]                                 # far outside
    return g


FORMS = [(m, p, a) for m in ("linear", "nearest", "cubic") for p in ("zeros", "border", "reflection")
         for a in (0, 1)]


@pytest.mark.parametrize("mode,padding,align", FORMS)
def test_grid_sample(mode, padding, align):
    rng = np.random.default_rng(43)
    x = rng.standard_normal((2, 3, 4, 6)).astype(np.float32)
    nodes = [helper.make_node("Neg", ["xi"], ["x"]), helper.make_node("Identity", ["gi"], ["g"]),
             helper.make_node("GridSample", ["x", "g"], ["y"], mode=mode, padding_mode=padding,
                              align_corners=align),
             helper.make_node("Abs", ["y"], ["a"])]
    data = graph_model(nodes, {"xi": (F, [2, 3, 4, 6]), "gi": (F, [2, 4, 5, 2])},
                       {"y": (F, None), "a": (F, None)}, opset=20)
    for specials in (False, True):
        g = _grid(rng, specials)
        want = oracle(-x, g, mode, padding, bool(align))
        for what, out in run_everywhere(data, {"xi": x, "gi": g}, threads=(1, 2) if specials else (2,)):
            assert np.array_equal(np.isnan(out["y"]), np.isnan(want)), what
            np.testing.assert_array_equal(bits(out["y"]), bits(want), err_msg=what)
            np.testing.assert_array_equal(bits(out["a"]), bits(np.abs(want)), err_msg=what)
    g = _grid(rng, False)
    want = oracle(-x, g, mode, padding, bool(align))
    ref = ReferenceEvaluator(data).run(["y"], {"xi": x, "gi": g})[0]
    np.testing.assert_allclose(ref, want, rtol=1e-5, atol=1e-5)
    if (mode, padding) == ("cubic", "border"):
        return   # ONNX Runtime clamps each cubic tap as torch does; onnx.reference clamps the point
    got_ort = ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(["y"], {"xi": x, "gi": g})[0]
    np.testing.assert_allclose(got_ort, want, rtol=1e-4, atol=1e-4)


def test_grid_sample_opset16_names_and_errors():
    node = helper.make_node("GridSample", ["x", "g"], ["y"], mode="bicubic")
    data = graph_model([node], {"x": (F, [1, 1, 3, 3]), "g": (F, [1, 2, 2, 2])}, {"y": (F, None)}, opset=16)
    x = np.arange(9, dtype=np.float32).reshape(1, 1, 3, 3)
    g = np.zeros((1, 2, 2, 2), np.float32)
    np.testing.assert_array_equal(so.load(data).run({"x": x, "g": g})["y"], oracle(x, g, "cubic", "zeros", False))
    bad = graph_model([helper.make_node("GridSample", ["x", "g"], ["y"], mode="area")],
                      {"x": (F, [1, 1, 3, 3]), "g": (F, [1, 2, 2, 2])}, {"y": (F, None)}, opset=20)
    with pytest.raises(so.UnsupportedModelError, match="mode 'area' is not supported"):
        so.load(bad)
    with pytest.raises(ValueError, match=r"grid \(1, 2, 2, 3\) must be \(N, H_out, W_out, 2\)"):
        s = so.load(graph_model([helper.make_node("GridSample", ["x", "g"], ["y"])],
                                {"x": (F, [1, 1, 3, 3]), "g": (F, None)}, {"y": (F, None)}, opset=20))
        s.run({"x": x, "g": np.zeros((1, 2, 2, 3), np.float32)})


def oracle_3d(x, grid, mode, padding, align):
    """The 2-D oracle's rules per axis over a volume: along W, then H, then D."""
    n, c, d, h, w = x.shape
    _, do, ho, wo, _ = grid.shape
    y = np.zeros((n, c, do, ho, wo), np.float32)

    coord = lambda g, L: _coord(g, L, mode, padding, align)  # noqa: E731
    tap = lambda i, L: _tap(i, L, padding, align)  # noqa: E731

    with np.errstate(all="ignore"):
        for b, oz, oy, ox in itertools.product(range(n), range(do), range(ho), range(wo)):
            gx, gy, gz = grid[b, oz, oy, ox]
            cx_, cy_, cz_ = coord(gx, w), coord(gy, h), coord(gz, d)
            for ch in range(c):
                vol = x[b, ch]
                if np.isnan(cx_) or np.isnan(cy_) or np.isnan(cz_):
                    y[b, ch, oz, oy, ox] = 0.0 if padding == "zeros" else vol[0, 0, 0]
                    continue
                if mode == "nearest":
                    i, j, k = (tap(int(math.floor(cx_)), w), tap(int(math.floor(cy_)), h),
                               tap(int(math.floor(cz_)), d))
                    y[b, ch, oz, oy, ox] = 0.0 if min(i, j, k) < 0 else vol[k, j, i]
                    continue
                x0, y0, z0 = math.floor(cx_), math.floor(cy_), math.floor(cz_)
                wx, wy, wz = (_weights("linear", cx_ - f32(x0)), _weights("linear", cy_ - f32(y0)),
                              _weights("linear", cz_ - f32(z0)))
                v = None
                for q in range(2):
                    iz = tap(z0 + q, d)
                    depth = None
                    for r in range(2):
                        iy = tap(y0 + r, h)
                        row = None
                        for k in range(2):
                            ix = tap(x0 + k, w)
                            p = f32(0) if min(iz, iy, ix) < 0 else vol[iz, iy, ix]
                            row = wx[0] * p if k == 0 else row + wx[k] * p
                        depth = wy[0] * row if r == 0 else depth + wy[r] * row
                    v = wz[0] * depth if q == 0 else v + wz[q] * depth
                y[b, ch, oz, oy, ox] = v
    return y


@pytest.mark.parametrize("mode", ["linear", "nearest"])
@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align", [0, 1])
def test_grid_sample_volume(mode, padding, align):
    rng = np.random.default_rng(7)
    x = rng.standard_normal((2, 2, 3, 4, 5)).astype(np.float32)
    g = rng.uniform(-1.5, 1.5, (2, 2, 3, 4, 3)).astype(np.float32)
    g[0, 0, 0, :3] = [[-1, -1, -1], [1, 1, 1], [0, 0, 0]]
    g[1, 1, 2, 0] = [np.nan, 0.1, 0.2]
    nodes = [helper.make_node("Neg", ["xi"], ["x"]),
             helper.make_node("GridSample", ["x", "g"], ["y"], mode=mode, padding_mode=padding,
                              align_corners=align),
             helper.make_node("Abs", ["y"], ["a"])]
    data = graph_model(nodes, {"xi": (F, list(x.shape)), "g": (F, list(g.shape))},
                       {"y": (F, None), "a": (F, None)}, opset=22)
    want = oracle_3d(-x, g, mode, padding, bool(align))
    for what, out in run_everywhere(data, {"xi": x, "g": g}):
        np.testing.assert_array_equal(bits(out["y"]), bits(want), err_msg=what)
        np.testing.assert_array_equal(bits(out["a"]), bits(np.abs(want)), err_msg=what)
    clean = np.nan_to_num(g, nan=0.3)
    want = oracle_3d(-x, clean, mode, padding, bool(align))
    for theirs in (ReferenceEvaluator(data).run(["y"], {"xi": x, "g": clean})[0],
                   ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(
                       ["y"], {"xi": x, "g": clean})[0]):
        np.testing.assert_allclose(theirs, want, rtol=1e-4, atol=1e-4)


def test_grid_sample_volume_cubic_is_refused():
    data = graph_model([helper.make_node("GridSample", ["x", "g"], ["y"], mode="cubic")],
                       {"x": (F, [1, 1, 2, 2, 2]), "g": (F, [1, 1, 1, 1, 3])}, {"y": (F, None)}, opset=22)
    with pytest.raises(so.UnsupportedModelError, match="cubic mode samples 4-D inputs only"):
        so.load(data).run({"x": np.zeros((1, 1, 2, 2, 2), np.float32), "g": np.zeros((1, 1, 1, 1, 3), np.float32)})
