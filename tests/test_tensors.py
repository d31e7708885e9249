"""samebits._tensors: N-d C-contiguous operands and outputs for the layers."""
from __future__ import annotations

import ctypes

import numpy as np
import pytest

from samebits import _tensors


def _x(shape=(2, 3, 4, 5)):
    return np.arange(np.prod(shape), dtype=np.float32).reshape(shape)


def _read(t: _tensors.Tensor) -> np.ndarray:
    """The tensor's elements as the C side would read them."""
    n = t.size
    buf = (ctypes.c_float * max(n, 1)).from_address(t.ptr) if n else []
    return np.array(buf[:n], dtype=np.float32).reshape(t.shape)


def test_contiguous_numpy_is_zero_copy():
    x = _x()
    t = _tensors.as_nchw_input(x, "x")
    assert isinstance(t, _tensors.Tensor4) and t.shape == (2, 3, 4, 5)
    assert t.zero_copy and t.ptr == x.ctypes.data
    np.testing.assert_array_equal(_read(t), x)


def test_readonly_contiguous_numpy_is_zero_copy():
    x = _x()
    x.flags.writeable = False
    t = _tensors.as_nchw_input(x, "x")
    assert t.zero_copy and t.ptr == x.ctypes.data


@pytest.mark.parametrize("make", [
    lambda x: x[:, :, ::2, :],
    lambda x: x.transpose(0, 1, 3, 2),
    lambda x: x[::-1],
    lambda x: np.frombuffer(b"\0" + x.tobytes(), np.uint8, offset=1).view(np.float32)
    .reshape(x.shape),   # misaligned
])
def test_other_layouts_are_copied(make):
    x = make(_x())
    t = _tensors.as_nchw_input(x, "x")
    assert not t.zero_copy and t.ptr % 4 == 0
    np.testing.assert_array_equal(_read(t), x)


def test_dtype_and_ndim_errors():
    with pytest.raises(TypeError, match="float64"):
        _tensors.as_nchw_input(_x().astype(np.float64), "x")
    with pytest.raises(ValueError, match=r"4-D.*\(3, 4\)"):
        _tensors.as_nchw_input(np.zeros((3, 4), np.float32), "x")
    with pytest.raises(TypeError, match="buffer"):
        _tensors.as_nchw_input([[[[1.0]]]], "x")
    with pytest.raises(TypeError, match="format"):
        _tensors.as_nchw_input(memoryview(bytearray(8)).cast("i", (1, 1, 1, 2)), "x")
    with pytest.raises(ValueError, match="1-D"):
        _tensors.as_input_nd(np.zeros((2, 2), np.float32), "bias", 1)


def test_buffer_inputs():
    storage = (ctypes.c_float * 5 * 4 * 3 * 2)()
    for i in range(120):
        ctypes.cast(storage, ctypes.POINTER(ctypes.c_float))[i] = i
    t = _tensors.as_nchw_input(storage, "x")
    assert t.zero_copy and t.ptr == ctypes.addressof(storage) and t.shape == (2, 3, 4, 5)
    np.testing.assert_array_equal(_read(t), _x())
    view = memoryview(storage).cast("B").cast("f", (2, 3, 4, 5))
    assert _tensors.as_nchw_input(view, "x").zero_copy
    strided = view[::-1]
    t = _tensors.as_nchw_input(strided, "x")
    assert not t.zero_copy
    np.testing.assert_array_equal(_read(t), _x()[::-1])
    readonly = memoryview(bytes(view.cast("B"))).cast("f", (2, 3, 4, 5))
    t = _tensors.as_nchw_input(readonly, "x")
    assert not t.zero_copy
    np.testing.assert_array_equal(_read(t), _x())
    bias = _tensors.as_input_nd(memoryview(bytearray(12)).cast("f"), "bias", 1)
    assert type(bias) is _tensors.Tensor and bias.shape == (3,)


def test_empty_inputs():
    t = _tensors.as_nchw_input(np.zeros((0, 3, 4, 5), np.float32), "x")
    assert t.shape == (0, 3, 4, 5) and t.size == 0 and t.byte_span() == (0, 0)
    t = _tensors.as_nchw_input((ctypes.c_float * 0 * 1 * 1 * 2)(), "x")
    assert t.shape == (2, 1, 1, 0)


def test_output_allocation():
    o = _tensors.output_nd(None, (2, 3, 4, 5), True, [], "op")
    assert isinstance(o.result, np.ndarray) and o.result.shape == (2, 3, 4, 5)
    assert o.ptr == o.result.ctypes.data and o.finish() is o.result
    o = _tensors.output_nd(None, (2, 3, 4, 5), False, [], "op")
    assert isinstance(o.result, memoryview) and o.result.shape == (2, 3, 4, 5)
    assert o.result.format == "f"
    ctypes.memmove(o.ptr, _x().tobytes(), 120 * 4)
    np.testing.assert_array_equal(np.asarray(o.finish()), _x())
    o = _tensors.output_nd(None, (0, 3, 4, 5), False, [], "op")
    assert o.result.shape == (0, 3, 4, 5)


def test_output_given():
    out = np.empty((2, 3, 4, 5), np.float32)
    o = _tensors.output_nd(out, (2, 3, 4, 5), True, [], "op")
    assert o.ptr == out.ctypes.data and o.finish() is out
    with pytest.raises(ValueError, match=r"\(2, 3, 4, 5\).*\(2, 3, 4, 6\)"):
        _tensors.output_nd(out, (2, 3, 4, 6), True, [], "op")
    with pytest.raises(TypeError, match="float64"):
        _tensors.output_nd(out.astype(np.float64), out.shape, True, [], "op")
    ro = out.copy()
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        _tensors.output_nd(ro, out.shape, True, [], "op")
    # strided: through a temporary, copied back by finish()
    big = np.zeros((2, 3, 4, 10), np.float32)
    strided = big[..., ::2]
    o = _tensors.output_nd(strided, (2, 3, 4, 5), True, [], "op")
    assert o.ptr != strided.ctypes.data
    ctypes.memmove(o.ptr, _x().tobytes(), 120 * 4)
    assert o.finish() is strided
    np.testing.assert_array_equal(big[..., ::2], _x())
    assert not big[..., 1::2].any()


def test_output_given_buffer():
    storage = (ctypes.c_float * 5 * 4 * 3 * 2)()
    o = _tensors.output_nd(storage, (2, 3, 4, 5), False, [], "op")
    assert o.ptr == ctypes.addressof(storage)
    view = memoryview(bytearray(2 * 120 * 4)).cast("f", (4, 3, 4, 5))
    strided = view[::2]
    o = _tensors.output_nd(strided, (2, 3, 4, 5), False, [], "op")
    ctypes.memmove(o.ptr, _x().tobytes(), 120 * 4)
    o.finish()
    got = np.frombuffer(view.cast("B"), np.float32).reshape(4, 3, 4, 5)
    np.testing.assert_array_equal(got[::2], _x())
    assert not got[1::2].any()
    with pytest.raises(ValueError, match="read-only"):
        _tensors.output_nd(memoryview(bytes(480)).cast("f", (2, 3, 4, 5)), (2, 3, 4, 5),
                           False, [], "op")


def test_output_overlap():
    x = _x()
    t = _tensors.as_nchw_input(x, "x")
    with pytest.raises(ValueError, match="overlaps"):
        _tensors.output_nd(x, x.shape, True, [(x, t)], "op")
    with pytest.raises(ValueError, match="overlaps"):
        _tensors.output_nd(x[..., ::-1], x.shape, True, [(x, t)], "op")
    _tensors.output_nd(x.copy(), x.shape, True, [(x, t)], "op")   # fine
    storage = (ctypes.c_float * 5 * 4 * 3 * 2)()
    ts = _tensors.as_nchw_input(storage, "x")
    with pytest.raises(ValueError, match="overlaps"):
        _tensors.output_nd(storage, ts.shape, False, [(storage, ts)], "op")
    with pytest.raises(ValueError, match="overlaps"):   # numpy out over a buffer input
        _tensors.output_nd(np.frombuffer(storage, np.float32).reshape(2, 3, 4, 5), ts.shape,
                           True, [(storage, ts)], "op")
    copied = _tensors.as_nchw_input(x[..., ::2], "x")    # a copy cannot overlap
    _tensors.output_nd(x[..., ::2], (2, 3, 4, 3), True, [(x[..., ::2], copied)], "op")
