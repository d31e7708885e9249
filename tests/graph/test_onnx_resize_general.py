"""ONNX Resize in the forms torch has no rule for (docs/onnx.md "Resize",
csrc/kernels/resize_general.c): nearest with every coordinate mode and
nearest_mode, linear with half_pixel_symmetric and asymmetric (and
pytorch_half_pixel to an output of length 1), cubic with every coordinate
mode, exclude_outside, keep_aspect_ratio_policy, and `axes` in either order.

Held bit for bit to a numpy oracle written here from docs/onnx.md's text
(float64 source coordinates and weights, the H pass then the W pass, one
rounding to float32), with inf, NaN, +-0 and subnormals in the input, on an
intermediate (the input after Neg) with the output returned and read by two
consumers, in both modes, every path, 1 and 2 threads; and within float32
rounding of onnx.reference and ONNX Runtime on finite inputs (ONNX Runtime
where it agrees with the reference: it is the one known wrong on some
align_corners forms)."""
from __future__ import annotations

import math

import numpy as np
import pytest

pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

import samebits.onnx as so  # noqa: E402
from onnx_cases import bits, graph_model, run_everywhere  # noqa: E402

F, I64 = TensorProto.FLOAT, TensorProto.INT64


def _source(coord, o, L, O, s, roi=(0.0, 1.0)):
    width = s * L
    if coord == "tf_crop_and_resize":
        start, end = roi
        return start * (L - 1) + o * (end - start) * (L - 1) / (O - 1) if O > 1 else \
            0.5 * (start + end) * (L - 1)
    if coord == "half_pixel_symmetric":
        return (L / 2) * (1 - O / width) + (o + 0.5) / s - 0.5
    if coord == "pytorch_half_pixel":
        return -0.5 if width == 1 else (o + 0.5) / s - 0.5
    if coord == "align_corners":
        return 0.0 if width == 1 else o * (L - 1) / (width - 1)
    if coord == "asymmetric":
        return o / s
    return (o + 0.5) / s - 0.5


def _cubic(r, A):
    r1, q = r + 1, 1 - r
    q1 = q + 1
    return [((A * r1 - 5 * A) * r1 + 8 * A) * r1 - 4 * A, ((A + 2) * r - (A + 3)) * r * r + 1,
            ((A + 2) * q - (A + 3)) * q * q + 1, ((A * q1 - 5 * A) * q1 + 8 * A) * q1 - 4 * A]


def _antialias_weights(mode, r, s, A):
    """The stretched filter's taps from k (their first offset) and weights."""
    sc = min(s, 1.0)
    first = math.floor(-(2.0 if mode == "cubic" else 1.0) / sc) + 1
    w = []
    for i in range(2 - 2 * first):
        d = (first + i) - r
        if mode == "linear":
            w.append(min(max(1 - abs(d * sc), 0.0), 1.0))
        else:
            t = abs(sc * d)
            t2 = t * t
            t3 = t * t2
            w.append((A + 2) * t3 - (A + 3) * t2 + 1 if t <= 1 else
                     A * t3 - 5 * A * t2 + 8 * A * t - 4 * A if t < 2 else 0.0)
    total = 0.0
    for c in w:
        total = total + c
    return first, [c / total for c in w]


def _taps(mode, coord, nearest, L, O, s, exclude, A, roi=(0.0, 1.0), antialias=False):
    """Per output: (indices, weights, outside), or None when the axis is left
    as it is (outside: tf_crop_and_resize's x beyond [0, L - 1])."""
    if O == L and abs(s - 1.0) <= 1e-9 and tuple(roi) == (0.0, 1.0):
        return None
    out = []
    for o in range(O):
        x = _source(coord, o, L, O, s, roi)
        outside = coord == "tf_crop_and_resize" and not (0 <= x <= L - 1)
        k = math.floor(x)
        r = x - k
        if r == 0:
            k, r = k - 1, 1.0
        clamp = lambda i: min(max(i, 0), L - 1)  # noqa: E731
        if mode == "nearest":
            up = {"ceil": True, "floor": r == 1, "round_prefer_ceil": r >= 0.5,
                  "round_prefer_floor": r > 0.5}[nearest]
            out.append(([clamp(k + up)], None, outside))
            continue
        if antialias:
            first, w = _antialias_weights(mode, r, s, A)
            first += k
        else:
            first = k if mode == "linear" else k - 1
            w = [1 - r, r] if mode == "linear" else _cubic(r, A)
        idx = [first + i for i in range(len(w))]
        if exclude:
            w = [0.0 if (j < 0 or j >= L) else c for j, c in zip(idx, w)]
            total = 0.0
            for c in w:
                total = total + c
            w = [c / (total if total != 0 else 1.0) for c in w]
        out.append(([clamp(j) for j in idx], w, outside))
    return out


def _weighted(values, w):
    if w is None:
        return values[0]
    v = w[0] * values[0]
    for c, p in zip(w[1:], values[1:]):
        v = v + c * p
    return v


def oracle(x, mode, coord, nearest, oh, ow, sh, sw, exclude=False, A=-0.75, roi_h=(0.0, 1.0),
           roi_w=(0.0, 1.0), extrapolation=0.0, antialias=False):
    n, c, h, w = x.shape
    th = _taps(mode, coord, nearest, h, oh, sh, exclude, A, roi_h, antialias)
    tw = _taps(mode, coord, nearest, w, ow, sw, exclude, A, roi_w, antialias)
    y = np.empty((n, c, oh, ow), np.float32)
    xd = x.astype(np.float64)
    with np.errstate(all="ignore"):
        for i in range(n):
            for j in range(c):
                plane = xd[i, j]

                def hval(oy, ix):
                    if th is None:
                        return plane[oy, ix]
                    idx, wt, _ = th[oy]
                    return _weighted([plane[r, ix] for r in idx], wt)
                for oy in range(oh):
                    for ox in range(ow):
                        if (th is not None and th[oy][2]) or (tw is not None and tw[ox][2]):
                            v = extrapolation
                        elif tw is None:
                            v = hval(oy, ox)
                        else:
                            idx, wt, _ = tw[ox]
                            v = _weighted([hval(oy, q) for q in idx], wt)
                        y[i, j, oy, ox] = np.float32(v)
    return y


FORMS = [("nearest", coord, nm) for coord in ("half_pixel", "half_pixel_symmetric", "pytorch_half_pixel",
                                              "align_corners", "asymmetric")
         for nm in ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil")]
FORMS += [("linear", "half_pixel_symmetric", None), ("linear", "asymmetric", None)]
FORMS += [("cubic", coord, None) for coord in ("half_pixel", "half_pixel_symmetric", "pytorch_half_pixel",
                                               "align_corners", "asymmetric")]


def _model(mode, coord, nearest, use_sizes, target, attrs=None):
    kw = {"mode": mode, "coordinate_transformation_mode": coord, **(attrs or {})}
    if "axes" in kw:
        target = [target[a] for a in kw["axes"]]
    if nearest:
        kw["nearest_mode"] = nearest
    ins = ["xn", "", "", "sz"] if use_sizes else ["xn", "", "sc"]
    inits = {"sz": np.array(target, np.int64)} if use_sizes else {"sc": np.array(target, np.float32)}
    nodes = [helper.make_node("Neg", ["x"], ["xn"]), helper.make_node("Resize", ins, ["y"], **kw),
             helper.make_node("Abs", ["y"], ["a"]), helper.make_node("Neg", ["y"], ["n"])]
    return graph_model(nodes, {"x": (F, [1, 2, 4, 5])}, {"y": (F, None), "a": (F, None), "n": (F, None)},
                       inits=inits, opset=19)


def _input(specials: bool) -> np.ndarray:
    x = np.random.default_rng(23).standard_normal((1, 2, 4, 5)).astype(np.float32)
    if specials:
        x.reshape(-1)[[0, 7, 13, 21, 30, 38]] = [np.inf, -0.0, np.nan, -np.inf, 1e-42, 0.0]
    return x


def _same(got, want, what):
    assert got.shape == want.shape, (what, got.shape, want.shape)
    assert np.array_equal(np.isnan(got), np.isnan(want)), what
    keep = ~np.isnan(want)
    np.testing.assert_array_equal(bits(got[keep]), bits(want[keep]), err_msg=what)


@pytest.mark.parametrize("mode,coord,nearest", FORMS)
@pytest.mark.parametrize("use_sizes,target", [(True, [1, 2, 7, 3]), (False, [1, 1, 1.75, 0.6])])
def test_general_resize_forms(mode, coord, nearest, use_sizes, target):
    data = _model(mode, coord, nearest, use_sizes, target)
    h, w = 4, 5
    if use_sizes:
        oh, ow, sh, sw = target[2], target[3], target[2] / h, target[3] / w
    else:
        sh, sw = float(np.float32(target[2])), float(np.float32(target[3]))
        oh, ow = int(h * sh), int(w * sw)
    for specials in (False, True):
        x = _input(specials)
        want = oracle(-x, mode, coord, nearest or "round_prefer_floor", oh, ow, sh, sw)
        for what, out in run_everywhere(data, {"x": x}, threads=(1, 2) if specials else (2,)):
            _same(out["y"], want, what)
            _same(out["n"], -want, what)
    x = _input(False)
    want = oracle(-x, mode, coord, nearest or "round_prefer_floor", oh, ow, sh, sw)
    ref = ReferenceEvaluator(data).run(["y"], {"x": x})[0]
    np.testing.assert_allclose(ref, want, rtol=1e-5, atol=1e-6)
    got_ort = ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(["y"], {"x": x})[0]
    if got_ort.shape == ref.shape and np.allclose(got_ort, ref, rtol=1e-5, atol=1e-6):
        np.testing.assert_allclose(got_ort, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("attrs,target,oh,ow,sh,sw", [
    ({"exclude_outside": 1}, [1, 2, 7, 3], 7, 3, 7 / 4, 3 / 5),
    ({"exclude_outside": 1, "cubic_coeff_a": -0.5}, [1, 2, 3, 8], 3, 8, 3 / 4, 8 / 5),
    ({"keep_aspect_ratio_policy": "not_larger", "axes": [2, 3]}, [1, 2, 7, 3], 2, 3, 3 / 5, 3 / 5),
    ({"keep_aspect_ratio_policy": "not_smaller", "axes": [3, 2]}, [1, 2, 7, 3], 7, 9, 7 / 4, 7 / 4),
])
def test_exclude_outside_and_aspect_policies(attrs, target, oh, ow, sh, sw):
    data = _model("cubic", "half_pixel", None, True, target, attrs)
    x = _input(False)
    want = oracle(-x, "cubic", "half_pixel", None, oh, ow, sh, sw, exclude=bool(attrs.get("exclude_outside")),
                  A=float(np.float32(attrs.get("cubic_coeff_a", -0.75))))
    for what, out in run_everywhere(data, {"x": x}, threads=(2,)):
        _same(out["y"], want, what)
    np.testing.assert_allclose(ReferenceEvaluator(data).run(["y"], {"x": x})[0], want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("mode", ["linear", "cubic"])
@pytest.mark.parametrize("coord,use_sizes,target,extra", [
    ("half_pixel", True, [1, 2, 4, 3], {}),                          # 9x11 to 4x3
    ("half_pixel", False, [1, 1, 0.6, 0.25], {}),
    ("pytorch_half_pixel", True, [1, 2, 1, 5], {}),                  # one row; W nearly halved
    ("align_corners", True, [1, 2, 3, 16], {}),                      # down H, up W
    ("half_pixel_symmetric", False, [1, 1, 1 / 3, 1.5], {}),
    ("half_pixel", True, [1, 2, 3, 2], {"exclude_outside": 1}),
    ("asymmetric", True, [1, 2, 5, 4], {"cubic_coeff_a": -0.5}),
])
def test_antialias(mode, coord, use_sizes, target, extra):
    """antialias=1: the filter stretched by 1 / scale when downsampling (a
    variable number of taps), normalized to sum 1, on an intermediate read
    by two nodes and returned; onnx.reference within float32 rounding, ONNX
    Runtime within 1e-4 (it computes its weights in float32), but for
    pytorch_half_pixel to one row, where onnx.reference and samebits take
    x = -0.5 and ONNX Runtime another centre."""
    h, w = 9, 11
    kw = {"mode": mode, "coordinate_transformation_mode": coord, "antialias": 1, **extra}
    ins = ["xn", "", "", "sz"] if use_sizes else ["xn", "", "sc"]
    inits = {"sz": np.array(target, np.int64)} if use_sizes else {"sc": np.array(target, np.float32)}
    nodes = [helper.make_node("Neg", ["x"], ["xn"]), helper.make_node("Resize", ins, ["y"], **kw),
             helper.make_node("Abs", ["y"], ["a"]), helper.make_node("Neg", ["y"], ["n"])]
    data = graph_model(nodes, {"x": (F, [1, 2, h, w])}, {"y": (F, None), "a": (F, None), "n": (F, None)},
                       inits=inits, opset=18)
    if use_sizes:
        oh, ow, sh, sw = target[2], target[3], target[2] / h, target[3] / w
    else:
        sh, sw = float(np.float32(target[2])), float(np.float32(target[3]))
        oh, ow = int(h * sh), int(w * sw)
    rng = np.random.default_rng(5)
    x = rng.standard_normal((1, 2, h, w)).astype(np.float32)
    specials = x.copy()
    specials.reshape(-1)[[0, 7, 50, 121, 130, 160]] = [np.inf, -0.0, np.nan, -np.inf, 1e-42, 0.0]
    A = float(np.float32(extra.get("cubic_coeff_a", -0.75)))
    for feed in (x, specials):
        want = oracle(-feed, mode, coord, None, oh, ow, sh, sw, exclude=bool(extra.get("exclude_outside")),
                      A=A, antialias=True)
        for what, out in run_everywhere(data, {"x": feed}, threads=(1, 2) if feed is x else (2,)):
            _same(out["y"], want, what)
            _same(out["n"], -want, what)
    want = oracle(-x, mode, coord, None, oh, ow, sh, sw, exclude=bool(extra.get("exclude_outside")), A=A,
                  antialias=True)
    ref = ReferenceEvaluator(data).run(["y"], {"x": x})[0]
    np.testing.assert_allclose(ref, want, rtol=1e-5, atol=1e-6)
    got_ort = ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(["y"], {"x": x})[0]
    if coord != "pytorch_half_pixel":   # ONNX Runtime's length-1 rule differs there (see the docstring)
        np.testing.assert_allclose(got_ort, want, rtol=1e-4, atol=1e-4)


def test_antialias_with_nearest_is_refused():
    node = helper.make_node("Resize", ["x", "", "sc"], ["y"], mode="nearest", antialias=1)
    data = graph_model([node], {"x": (F, [1, 1, 4, 4])}, {"y": (F, None)},
                       inits={"sc": np.array([1, 1, 0.5, 0.5], np.float32)}, opset=18)
    with pytest.raises(so.UnsupportedModelError, match="linear and cubic modes only"):
        so.load(data)


def test_pytorch_half_pixel_to_one_row_uses_onnxs_rule():
    data = _model("linear", "pytorch_half_pixel", None, True, [1, 2, 1, 3])
    x = _input(False)
    want = oracle(-x, "linear", "pytorch_half_pixel", None, 1, 3, 1 / 4, 3 / 5)
    for what, out in run_everywhere(data, {"x": x}, threads=(2,)):
        _same(out["y"], want, what)
    np.testing.assert_allclose(ReferenceEvaluator(data).run(["y"], {"x": x})[0], want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("mode", ["linear", "nearest"])
def test_axes_in_reverse_order_give_sizes_per_axis(mode):
    """Regression: axes [3, 2] give W's size first; samebits once read them
    as H's and W's (a (1, 1, 9, 5) output where (1, 1, 5, 9) was asked)."""
    node = helper.make_node("Resize", ["x", "", "", "sz"], ["y"], mode=mode, axes=[3, 2])
    data = graph_model([node], {"x": (F, [1, 1, 4, 6])}, {"y": (F, None)},
                       inits={"sz": np.array([9, 5], np.int64)}, opset=18)
    x = np.arange(24, dtype=np.float32).reshape(1, 1, 4, 6)
    ref = ReferenceEvaluator(data).run(None, {"x": x})[0]
    assert ref.shape == (1, 1, 5, 9)
    for what, out in run_everywhere(data, {"x": x}, threads=(2,)):
        assert out["y"].shape == (1, 1, 5, 9), what
        np.testing.assert_allclose(out["y"], ref, rtol=1e-5, atol=1e-5, err_msg=what)


def test_an_aspect_policy_over_n_and_c_is_refused():
    """Without axes the policy's one scale applies to N and C too (ONNX):
    samebits resizes H and W only, and says so rather than guess."""
    data = _model("cubic", "half_pixel", None, True, [1, 2, 7, 3], {"keep_aspect_ratio_policy": "not_larger"})
    with pytest.raises(so.UnsupportedModelError, match="would resize N or C"):
        so.load(data).run({"x": _input(False)})


@pytest.mark.parametrize("mode", ["nearest", "linear", "cubic"])
@pytest.mark.parametrize("roi,axes,target", [
    ([0, 0, 0.4, 0.6, 1, 1, 0.6, 0.8], None, [1, 2, 3, 3]),
    ([-0.2, 0.3, 1.1, 1.4], [2, 3], [1, 2, 5, 4]),       # outside: extrapolation_value
    ([0.1, 0.0, 0.9, 1.0], [3, 2], [1, 2, 1, 6]),        # axes reversed; one row
])
def test_tf_crop_and_resize(mode, roi, axes, target):
    """The roi's start and end per axis, extrapolation_value outside the input;
    onnx.reference agrees, and ONNX Runtime but for nearest, where it computes
    the coordinate in float32 (0.4 * 3 + 0.2 * 3 / 2 gives 1.5 there, not the
    1.5000000447 the float32 roi values give, and rounds the other way)."""
    kw = {"mode": mode, "coordinate_transformation_mode": "tf_crop_and_resize",
          "extrapolation_value": -7.5}
    if axes:
        kw["axes"] = axes
    sizes = [target[a] for a in axes] if axes else target
    nodes = [helper.make_node("Neg", ["x"], ["xn"]),
             helper.make_node("Resize", ["xn", "roi", "", "sz"], ["y"], **kw),
             helper.make_node("Abs", ["y"], ["a"]), helper.make_node("Neg", ["y"], ["n"])]
    data = graph_model(nodes, {"x": (F, [1, 2, 4, 5])}, {"y": (F, None), "a": (F, None), "n": (F, None)},
                       inits={"roi": np.array(roi, np.float32), "sz": np.array(sizes, np.int64)},
                       opset=19)
    full = roi if not axes else None
    if axes:   # per axis entry: starts, then ends
        start = {a: roi[i] for i, a in enumerate(axes)}
        end = {a: roi[len(axes) + i] for i, a in enumerate(axes)}
    else:
        start = {d: full[d] for d in range(4)}
        end = {d: full[4 + d] for d in range(4)}
    f32 = lambda v: float(np.float32(v))  # noqa: E731  (the roi is a float32 tensor)
    x = _input(True)
    oh, ow = target[2], target[3]
    want = oracle(-x, mode, "tf_crop_and_resize", "round_prefer_floor" if mode == "nearest" else None,
                  oh, ow, oh / 4, ow / 5, roi_h=(f32(start[2]), f32(end[2])),
                  roi_w=(f32(start[3]), f32(end[3])), extrapolation=-7.5)
    for what, out in run_everywhere(data, {"x": x}):
        _same(out["y"], want, what)
    finite = _input(False)
    want = oracle(-finite, mode, "tf_crop_and_resize", "round_prefer_floor" if mode == "nearest" else None,
                  oh, ow, oh / 4, ow / 5, roi_h=(f32(start[2]), f32(end[2])),
                  roi_w=(f32(start[3]), f32(end[3])), extrapolation=-7.5)
    np.testing.assert_allclose(ReferenceEvaluator(data).run(["y"], {"x": finite})[0], want,
                               rtol=1e-5, atol=1e-5)
    if mode != "nearest":   # ONNX Runtime rounds the roi coordinate in float32: 1.5000000447 -> 1.5
        got = ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(["y"], {"x": finite})[0]
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def _nearest_oracle(x, coord, nearest, oh, ow, sh, sw):
    """The oracle for nearest, by index arrays (the per-element oracle above
    is too slow for maps of many chunks): the same taps."""
    n, c, h, w = x.shape
    th = _taps("nearest", coord, nearest, h, oh, sh, False, -0.75)
    tw = _taps("nearest", coord, nearest, w, ow, sw, False, -0.75)
    rows = np.arange(h) if th is None else np.array([t[0][0] for t in th])
    cols = np.arange(w) if tw is None else np.array([t[0][0] for t in tw])
    return x[:, :, rows][:, :, :, cols]


@pytest.mark.parametrize("coord,nearest", [("asymmetric", "floor"), ("half_pixel", "round_prefer_floor"),
                                           ("pytorch_half_pixel", "round_prefer_ceil"),
                                           ("align_corners", "floor"), ("half_pixel_symmetric", "ceil")])
@pytest.mark.parametrize("shape,target", [
    ((1, 16, 40, 40), [1, 16, 80, 80]),      # x2: repeated columns, every other row a copy
    ((2, 3, 37, 70), [2, 3, 111, 141]),      # x3 rows; x2 columns and one past them
    ((1, 5, 30, 33), [1, 5, 47, 70]),        # no whole factor
    ((1, 4, 64, 48), [1, 4, 32, 48]),        # down, columns as they are
    ((1, 2, 300, 3), [1, 2, 900, 12]),       # rows of 12: many rows to a chunk
    ((2, 300, 1, 20), [2, 300, 3, 40]),      # one-row planes: a plane's first row is no copy
])
def test_nearest_over_maps_of_many_chunks(coord, nearest, shape, target):
    """Nearest on maps large enough for many chunks of whole rows: rows with
    the previous row's source row are copies of it (never across a chunk's
    start, which another thread may not have written), whole factors repeat
    each column, the rest goes column by column; bit for bit against the
    oracle, NaNs canonical, on an intermediate read by a second node, every
    path, both modes, 1 and 2 threads."""
    n, c, h, w = shape
    data = graph_model(
        [helper.make_node("Neg", ["x"], ["xn"]),
         helper.make_node("Resize", ["xn", "", "", "sz"], ["y"], mode="nearest",
                          coordinate_transformation_mode=coord, nearest_mode=nearest),
         helper.make_node("Neg", ["y"], ["back"])],
        {"x": (F, list(shape))}, {"y": (F, None), "back": (F, None)},
        inits={"sz": np.array(target, np.int64)}, opset=19)
    x = np.random.default_rng(5).standard_normal(shape).astype(np.float32)
    flat = x.reshape(-1)
    flat[::97] = np.nan
    flat[5::89] = -0.0
    flat[7::83] = np.inf
    flat[11::79] = 1e-42
    oh, ow = target[2], target[3]
    want = _nearest_oracle(-x, coord, nearest, oh, ow, oh / h, ow / w)
    for what, out in run_everywhere(data, {"x": x}):
        _same(out["y"], want, what)
        _same(out["back"], -want, what)
        nan = np.isnan(out["y"])
        assert (bits(out["y"][nan]) == 0x7FC00000).all(), what
