"""samebits._binding.operands: the one operand type (address, shape, element strides) for
matrices and N-d tensors, dense or strided, and the outputs."""
from __future__ import annotations

import ctypes

import numpy as np
import pytest

from samebits._binding import operands as _operands


def _x(shape=(2, 3, 4, 5)):
    return np.arange(np.prod(shape), dtype=np.float32).reshape(shape)


def _read(t: _operands.Operand) -> np.ndarray:
    """The operand's elements as the C side would read them (through its strides)."""
    out = np.empty(t.shape, np.float32)
    for index in np.ndindex(*t.shape):
        offset = sum(i * s for i, s in zip(index, t.strides))
        out[index] = ctypes.c_float.from_address(t.ptr + 4 * offset).value
    return out


def test_contiguous_numpy_is_zero_copy():
    x = _x()
    t = _operands.as_operand(x, "x", 4, dense=True)
    assert isinstance(t, _operands.Operand) and t.shape == (2, 3, 4, 5)
    assert t.strides == (60, 20, 5, 1) and t.c_contiguous
    assert t.zero_copy and t.ptr == x.ctypes.data
    np.testing.assert_array_equal(_read(t), x)


def test_readonly_contiguous_numpy_is_zero_copy():
    x = _x()
    x.flags.writeable = False
    t = _operands.as_operand(x, "x", 4, dense=True)
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
    t = _operands.as_operand(x, "x", 4, dense=True)
    assert not t.zero_copy and t.ptr % 4 == 0
    np.testing.assert_array_equal(_read(t), x)


def test_dtype_and_ndim_errors():
    with pytest.raises(TypeError, match="float64"):
        _operands.as_operand(_x().astype(np.float64), "x", 4, dense=True)
    with pytest.raises(ValueError, match=r"4-D.*\(3, 4\)"):
        _operands.as_operand(np.zeros((3, 4), np.float32), "x", 4, dense=True)
    with pytest.raises(TypeError, match="buffer"):
        _operands.as_operand([[[[1.0]]]], "x", 4, dense=True)
    with pytest.raises(TypeError, match="format"):
        _operands.as_operand(memoryview(bytearray(8)).cast("i", (1, 1, 1, 2)), "x", 4, dense=True)
    with pytest.raises(ValueError, match="1-D"):
        _operands.as_operand(np.zeros((2, 2), np.float32), "bias", 1, dense=True)


def test_buffer_inputs():
    storage = (ctypes.c_float * 5 * 4 * 3 * 2)()
    for i in range(120):
        ctypes.cast(storage, ctypes.POINTER(ctypes.c_float))[i] = i
    t = _operands.as_operand(storage, "x", 4, dense=True)
    assert t.zero_copy and t.ptr == ctypes.addressof(storage) and t.shape == (2, 3, 4, 5)
    np.testing.assert_array_equal(_read(t), _x())
    view = memoryview(storage).cast("B").cast("f", (2, 3, 4, 5))
    assert _operands.as_operand(view, "x", 4, dense=True).zero_copy
    strided = view[::-1]
    t = _operands.as_operand(strided, "x", 4, dense=True)
    assert not t.zero_copy
    np.testing.assert_array_equal(_read(t), _x()[::-1])
    readonly = memoryview(bytes(view.cast("B"))).cast("f", (2, 3, 4, 5))
    t = _operands.as_operand(readonly, "x", 4, dense=True)
    assert not t.zero_copy
    np.testing.assert_array_equal(_read(t), _x())
    bias = _operands.as_operand(memoryview(bytearray(12)).cast("f"), "bias", 1, dense=True)
    assert type(bias) is _operands.Operand and bias.shape == (3,) and bias.strides == (1,)


def test_empty_inputs():
    t = _operands.as_operand(np.zeros((0, 3, 4, 5), np.float32), "x", 4, dense=True)
    assert t.shape == (0, 3, 4, 5) and t.size == 0 and t.byte_span() == (0, 0)
    t = _operands.as_operand((ctypes.c_float * 0 * 1 * 1 * 2)(), "x", 4, dense=True)
    assert t.shape == (2, 1, 1, 0)


def test_output_allocation():
    o = _operands.Output(None, (2, 3, 4, 5), True, [], "op")
    assert isinstance(o.result, np.ndarray) and o.result.shape == (2, 3, 4, 5)
    assert o.ptr == o.result.ctypes.data and o.finish() is o.result
    o = _operands.Output(None, (2, 3, 4, 5), False, [], "op")
    assert isinstance(o.result, memoryview) and o.result.shape == (2, 3, 4, 5)
    assert o.result.format == "f"
    ctypes.memmove(o.ptr, _x().tobytes(), 120 * 4)
    np.testing.assert_array_equal(np.asarray(o.finish()), _x())
    o = _operands.Output(None, (0, 3, 4, 5), False, [], "op")
    assert o.result.shape == (0, 3, 4, 5)


def test_output_given():
    out = np.empty((2, 3, 4, 5), np.float32)
    o = _operands.Output(out, (2, 3, 4, 5), True, [], "op")
    assert o.ptr == out.ctypes.data and o.finish() is out
    with pytest.raises(ValueError, match=r"\(2, 3, 4, 5\).*\(2, 3, 4, 6\)"):
        _operands.Output(out, (2, 3, 4, 6), True, [], "op")
    with pytest.raises(TypeError, match="float64"):
        _operands.Output(out.astype(np.float64), out.shape, True, [], "op")
    ro = out.copy()
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        _operands.Output(ro, out.shape, True, [], "op")
    # strided: through a temporary, copied back by finish()
    big = np.zeros((2, 3, 4, 10), np.float32)
    strided = big[..., ::2]
    o = _operands.Output(strided, (2, 3, 4, 5), True, [], "op")
    assert o.ptr != strided.ctypes.data
    ctypes.memmove(o.ptr, _x().tobytes(), 120 * 4)
    assert o.finish() is strided
    np.testing.assert_array_equal(big[..., ::2], _x())
    assert not big[..., 1::2].any()


def test_output_given_buffer():
    storage = (ctypes.c_float * 5 * 4 * 3 * 2)()
    o = _operands.Output(storage, (2, 3, 4, 5), False, [], "op")
    assert o.ptr == ctypes.addressof(storage)
    view = memoryview(bytearray(2 * 120 * 4)).cast("f", (4, 3, 4, 5))
    strided = view[::2]
    o = _operands.Output(strided, (2, 3, 4, 5), False, [], "op")
    ctypes.memmove(o.ptr, _x().tobytes(), 120 * 4)
    o.finish()
    got = np.frombuffer(view.cast("B"), np.float32).reshape(4, 3, 4, 5)
    np.testing.assert_array_equal(got[::2], _x())
    assert not got[1::2].any()
    with pytest.raises(ValueError, match="read-only"):
        _operands.Output(memoryview(bytes(480)).cast("f", (2, 3, 4, 5)), (2, 3, 4, 5),
                           False, [], "op")


def test_output_overlap():
    x = _x()
    t = _operands.as_operand(x, "x", 4, dense=True)
    with pytest.raises(ValueError, match="overlaps"):
        _operands.Output(x, x.shape, True, [(x, t)], "op")
    with pytest.raises(ValueError, match="overlaps"):
        _operands.Output(x[..., ::-1], x.shape, True, [(x, t)], "op")
    _operands.Output(x.copy(), x.shape, True, [(x, t)], "op")   # fine
    storage = (ctypes.c_float * 5 * 4 * 3 * 2)()
    ts = _operands.as_operand(storage, "x", 4, dense=True)
    with pytest.raises(ValueError, match="overlaps"):
        _operands.Output(storage, ts.shape, False, [(storage, ts)], "op")
    with pytest.raises(ValueError, match="overlaps"):   # numpy out over a buffer input
        _operands.Output(np.frombuffer(storage, np.float32).reshape(2, 3, 4, 5), ts.shape,
                           True, [(storage, ts)], "op")
    copied = _operands.as_operand(x[..., ::2], "x", 4, dense=True)    # a copy cannot overlap
    _operands.Output(x[..., ::2], (2, 3, 4, 3), True, [(x[..., ::2], copied)], "op")


@pytest.mark.parametrize("make", [
    lambda x: x[:, :, ::2, :],
    lambda x: x.transpose(0, 1, 3, 2),
    lambda x: x[::-1, :, :, ::-3],
    lambda x: np.lib.stride_tricks.as_strided(x[0, 0], (3, 4, 5), (0, 20, 4)),   # broadcast
])
def test_strided_numpy_is_read_in_place_when_not_dense(make):
    """The matrix product reads any element-aligned strides in place, negative
    and zero ones included."""
    x = make(_x())
    t = _operands.as_operand(x, "a")
    assert t.zero_copy and t.strides == tuple(s // 4 for s in x.strides)
    np.testing.assert_array_equal(_read(t), x)
    lo, hi = t.byte_span()
    assert (lo, hi) == _operands.numpy_span(x)


def test_any_ndim_and_minimum():
    assert _operands.as_operand(np.zeros(3, np.float32), "a").shape == (3,)
    assert _operands.as_operand(np.zeros((), np.float32), "a").shape == ()
    with pytest.raises(ValueError, match=r"at least 1-D, got shape \(\)"):
        _operands.as_operand(np.zeros((), np.float32), "a", min_ndim=1)


def test_float64_error_says_how_to_convert():
    with pytest.raises(TypeError, match=r"float64 \(convert with .astype\(np.float32\)\)"):
        _operands.as_operand(np.zeros(3), "a")


def test_output_layout_predicate():
    """An operation that writes rows with unit column stride takes out= with
    any row stride in place; another layout goes through a temporary."""
    rows = lambda op: op.strides[-1] == 1   # noqa: E731
    big = np.zeros((6, 10), np.float32)
    o = _operands.Output(big[::2, :5], (3, 5), True, [], "op", rows)
    assert o.ptr == big.ctypes.data and o.operand.strides == (20, 1)
    o = _operands.Output(big[:, ::2], (6, 5), True, [], "op", rows)
    assert o.ptr != big.ctypes.data and o.operand.strides == (5, 1)
    ctypes.memmove(o.ptr, np.arange(30, dtype=np.float32).tobytes(), 120)
    o.finish()
    np.testing.assert_array_equal(big[:, ::2], np.arange(30, dtype=np.float32).reshape(6, 5))
