"""The numpy fast paths of matmul and conv2d: the same bits and errors as the general paths."""
from __future__ import annotations

import sys

import numpy as np
import pytest

import samebits
from samebits._ops import matmul as _matmul
from conftest import assert_same_bits, test_values


def _general(a, b, **kwargs):
    return _matmul._matmul_general(a, b, kwargs.get("mode", "fast"), None,
                                   kwargs.get("threads"))


def _misaligned(shape, seed):
    """A float32 array whose data is not 4-byte aligned (the general path copies it)."""
    x = test_values(shape, seed)
    raw = np.zeros(x.nbytes + 1, np.uint8)
    view = raw[1:].view(np.float32).reshape(shape)
    view[...] = x
    return view


def _layouts():
    a, b = test_values((9, 7), 1), test_values((7, 5), 2)
    padded = np.zeros((9, 12), np.float32)
    padded[:, :7] = a
    readonly = a.copy()
    readonly.flags.writeable = False
    return {
        "contiguous": (a, b),
        "row-padded a": (padded[:, :7], b),
        "transposed b": (a, np.ascontiguousarray(b.T).T),
        "negative strides": (a[::-1].copy()[::-1], b[:, ::-1].copy()[:, ::-1]),
        "column step": (np.repeat(a, 2, axis=1)[:, ::2], b),
        "read-only": (readonly, b),
        "broadcast b": (a, np.broadcast_to(b[:1], (7, 5))),
        "misaligned a": (_misaligned((9, 7), 1), b),
        "m = 1": (a[:1], b),
        "n = 1": (a, b[:, :1]),
        "k = 0": (np.zeros((9, 0), np.float32), np.zeros((0, 5), np.float32)),
        "m = 0": (np.zeros((0, 7), np.float32), b),
    }


@pytest.mark.skipif(sys.implementation.name != "cpython", reason="the fast path needs CPython")
def test_fast_path_takes_every_aligned_layout(monkeypatch):
    general = []
    monkeypatch.setattr(_matmul, "_matmul_general", lambda *args: general.append(args))
    for name, (a, b) in _layouts().items():
        samebits.matmul(a, b)
        assert bool(general) == (name == "misaligned a"), name
        general.clear()


@pytest.mark.parametrize("mode", ["fast", "exact"])
@pytest.mark.parametrize("layout", list(_layouts()))
def test_same_bits_as_general_path(layout, mode):
    a, b = _layouts()[layout]
    c = samebits.matmul(a, b, mode=mode)
    ref = _general(a, b, mode=mode)
    assert isinstance(c, np.ndarray) and c.dtype == np.float32 and c.shape == ref.shape
    assert c.flags.c_contiguous and c.flags.writeable
    assert_same_bits(c, ref, layout)


@pytest.mark.parametrize("threads", [None, 1, 2, 5000])
def test_threads_and_forced_path(threads, path):
    a, b = test_values((70, 40), 3), test_values((40, 50), 4)
    with samebits.use_path(path):
        c = samebits.matmul(a, b, threads=threads)
        ref = _general(a, b, threads=threads)
    assert_same_bits(c, ref, f"{path} threads={threads}")


@pytest.mark.parametrize("kwargs,a,b", [
    ({"mode": "fused"}, (2, 3), (3, 2)),
    ({"mode": ["fast"]}, (2, 3), (3, 2)),
    ({"threads": 0}, (2, 3), (3, 2)),
    ({"threads": True}, (2, 3), (3, 2)),
    ({"threads": 2.0}, (2, 3), (3, 2)),
    ({}, (2, 3), (4, 2)),
    ({"threads": 0}, (2, 3), (4, 2)),
    ({"mode": "x", "threads": 0}, (2, 3), (4, 2)),
])
def test_errors_match_general_path(kwargs, a, b):
    a, b = np.ones(a, np.float32), np.ones(b, np.float32)
    with pytest.raises(Exception) as fast:
        samebits.matmul(a, b, **kwargs)
    with pytest.raises(Exception) as general:
        _matmul._matmul_general(a, b, kwargs.get("mode", "fast"), None, kwargs.get("threads"))
    assert type(fast.value) is type(general.value) and str(fast.value) == str(general.value)


@pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")   # np.matrix
def test_subclass_and_other_dtypes_take_general_path():
    a, b = test_values((3, 4), 5), test_values((4, 2), 6)
    c = samebits.matmul(np.asmatrix(a), b)
    assert type(c) is np.ndarray
    assert_same_bits(c, _general(a, b), "np.matrix")
    with pytest.raises(TypeError, match="float64"):
        samebits.matmul(a.astype(np.float64), b)
    with pytest.raises(TypeError, match=">f4"):
        samebits.matmul(a, b.astype(">f4"))


# ---- conv2d's fast path ----------------------------------------------------

from samebits._ops import conv as _conv  # noqa: E402


def _conv_cases():
    x = test_values((2, 6, 9, 8), 21, 4)
    w = test_values((10, 3, 3, 3), 22, 2)
    dw = test_values((12, 1, 3, 3), 23)
    bias = test_values((10,), 24)
    return [
        dict(x=x, w=w, groups=2, stride=2, padding=1),
        dict(x=x, w=w, groups=2, bias=bias, activation="relu", dilation=2, padding=2),
        dict(x=x, w=samebits.pack_conv2d(w, groups=2), groups=2, bias=bias, activation="relu6"),
        dict(x=x, w=dw, groups=6, padding=1),
        dict(x=x, w=samebits.pack_conv2d(dw, groups=6), groups=6, stride=3),
        dict(x=x[:, :4, :1, :1].copy(), w=test_values((7, 4, 1, 1), 25)),   # single column
    ]


@pytest.mark.skipif(sys.implementation.name != "cpython", reason="the fast path needs CPython")
@pytest.mark.parametrize("mode", ["fast", "exact"])
def test_conv_fast_path_same_bits_as_general(mode, monkeypatch):
    taken = []
    real = _conv._conv2d_numpy
    monkeypatch.setattr(_conv, "_conv2d_numpy", lambda *a: taken.append(real(*a)) or taken[-1])
    for i, case in enumerate(_conv_cases()):
        case = dict(case)
        x, w = case.pop("x"), case.pop("w")
        fast = samebits.conv2d(x, w, mode=mode, **case)
        assert taken[-1] is not None, f"case {i} did not take the fast path"
        out = np.full(fast.shape, np.nan, np.float32)
        assert samebits.conv2d(x, w, mode=mode, out=out, **case) is out
        assert taken[-1] is out, f"case {i} with out= did not take the fast path"
        assert_same_bits(out.reshape(-1, 1), fast.reshape(-1, 1), f"case {i}, out=")
        stride = case.pop("stride", 1)
        general = samebits.conv2d(x, w, mode=mode, stride=(stride, stride), **case)
        assert_same_bits(fast.reshape(-1, 1), general.reshape(-1, 1), f"case {i}, {mode}")


@pytest.mark.skipif(sys.implementation.name != "cpython", reason="the fast path needs CPython")
def test_conv_fast_path_leaves_the_rest_to_the_general_path():
    x = test_values((1, 4, 6, 6), 31)
    w = test_values((5, 4, 3, 3), 32)
    # Layouts the fast path does not take get the general path's results.
    for other in (x[:, :, ::-1, :], x.transpose(0, 1, 3, 2), _misaligned(x.shape, 31)):
        assert _conv._conv2d_numpy(other, w, None, 1, 1, 1, 1, None, "fast", None) is None
        assert_same_bits(samebits.conv2d(other, w, padding=1).reshape(-1, 1),
                         samebits.conv2d(np.ascontiguousarray(other), w,
                                         padding=(1, 1)).reshape(-1, 1), "layout")
    # out= that the fast path leaves alone: a strided view, and (an error) an
    # out= overlapping the input.
    y = np.zeros((1, 5, 8, 8), np.float32)
    assert samebits.conv2d(x, w, padding=1, out=y[:, :, :6, :6]) is not None
    assert_same_bits(y[:, :, :6, :6].reshape(-1, 1),
                     samebits.conv2d(x, w, padding=1).reshape(-1, 1), "strided out=")
    big = np.zeros((1, 5, 6, 6), np.float32)
    with pytest.raises(ValueError, match="overlap"):
        samebits.conv2d(big[:, :4], test_values((5, 4, 1, 1), 33), out=big)
    # Errors come from the general path, with its messages.
    with pytest.raises(ValueError, match="does not divide the 4 input channels"):
        samebits.conv2d(x, w, groups=3)
    with pytest.raises(ValueError, match="output size"):
        samebits.conv2d(x[:, :, :2, :2], w)
    with pytest.raises(ValueError, match="bias has shape"):
        samebits.conv2d(x, w, np.zeros(4, np.float32))
    with pytest.raises(ValueError, match="packed for groups=1"):
        samebits.conv2d(x, samebits.pack_conv2d(w), groups=2)
    with pytest.raises(TypeError):
        samebits.conv2d(x.astype(np.float64), w)
    with pytest.raises(ValueError, match="activation"):
        samebits.conv2d(x, w, activation="elu")
    with pytest.raises(ValueError, match="stride"):
        samebits.conv2d(x, w, stride=0)
    with pytest.raises(ValueError, match="mode"):
        samebits.conv2d(x, w, mode="fastest")
