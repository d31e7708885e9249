"""Data movement (permute, transpose, concatenate, split, slice, pad, take)
against numpy, bit for bit (NaN payloads and signed zeros move untouched),
on strided inputs, at 1 and 2 threads, without numpy, and the errors."""
from __future__ import annotations

import array

import numpy as np
import pytest

import samebits
from conftest import bits as _bits


def _x(shape, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 2**32, int(np.prod(shape)), dtype=np.uint64).astype(np.uint32)
    x[:3] = [0x7FC01234, 0xFFC00001, 0x80000000]       # NaN payloads, -0
    return x.view(np.float32).reshape(shape)


@pytest.mark.parametrize("threads", [1, 2])
def test_permute_and_transpose(threads):
    x = _x((3, 40, 50, 7))
    for dims in ((0, 1, 2, 3), (3, 2, 1, 0), (1, 3, 0, 2), (-1, 0, 1, 2)):
        got = samebits.permute(x, dims, threads=threads)
        assert np.array_equal(_bits(got), _bits(np.transpose(x, dims)))
    assert np.array_equal(_bits(samebits.transpose(x[:, ::2], 1, -1)),
                          _bits(np.swapaxes(x[:, ::2], 1, -1)))


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("shape,dims", [
    ((1, 512, 256, 1), (0, 2, 1, 3)),        # magika's transpose: whole tiles
    ((2, 37, 21), (0, 2, 1)),                # ragged tiles and 4 x 4 blocks
    ((1, 64, 15, 15), (0, 2, 3, 1)),         # NCHW -> NHWC
    ((2, 9, 11, 5), (0, 3, 1, 2)),           # NHWC -> NCHW (H and W merge)
    ((6, 3), (1, 0)),                        # rows shorter than a block
    ((5, 35), (1, 0)),
    ((1, 2048, 64), (0, 2, 1)),              # output rows 8 KiB apart: through the block
    ((2, 1025, 21), (0, 2, 1)),              # ... with ragged columns and tiles
])
def test_transposes_go_by_tiles(shape, dims, threads):
    """Transposes whose output rows read across the input go by tiles of 16
    rows (copy.c's transposing route, 4 x 4 shuffles inside; through a block
    in scratch where the tile's rows would share cache sets): the bits move
    untouched, NaN payloads included, whatever the raggedness; and a
    reversed (negative-stride) input."""
    x = _x(shape, seed=3)
    got = samebits.permute(x, dims, threads=threads)
    assert np.array_equal(_bits(got), _bits(np.transpose(x, dims)))
    back = x[..., ::-1, :] if len(shape) > 2 else x[::-1]
    got = samebits.permute(back, dims, threads=threads)
    assert np.array_equal(_bits(got), _bits(np.transpose(back, dims)))


def test_concatenate_and_split():
    a, b, c = _x((2, 3, 5), 1), _x((2, 1, 5), 2), _x((2, 4, 5), 3)[:, ::-1]
    for axis, arrays in ((1, [a, b, c]), (0, [a, a]), (-1, [a, a[..., :2]])):
        got = samebits.concatenate(arrays, axis)
        assert np.array_equal(_bits(got), _bits(np.concatenate(arrays, axis)))
    x = _x((10, 6), 4)
    for spec in (3, 4, [2, 0, 8], 10, 20):
        got = samebits.split(x, spec, 0)
        want = np.split(x, np.cumsum(spec)[:-1]) if isinstance(spec, list) else \
            [x[i:i + spec] for i in range(0, 10, spec)]
        assert [g.shape for g in got] == [w.shape for w in want]
        assert all(np.array_equal(_bits(g), _bits(w)) for g, w in zip(got, want))


@pytest.mark.parametrize("start,stop,step", [(None, None, 1), (2, 9, 3), (-3, None, 1),
                                             (None, None, -1), (8, 1, -2), (5, 5, 1),
                                             (-100, 100, 4)])
def test_slice_follows_python(start, stop, step):
    x = _x((4, 11, 3), 5)
    got = samebits.slice(x, 1, start, stop, step)
    assert np.array_equal(_bits(got), _bits(x[:, start:stop:step]))


@pytest.mark.parametrize("pad", [(1, 2), (0, 0, 3, 1), (2, -1, -1, 2), (1, 1, 1, 1, 1, 1),
                                 (-2, -2)])
def test_pad_constant(pad):
    x = _x((2, 5, 6), 6)
    got = samebits.pad(x, pad, value=-1.5, threads=2)
    want = x
    widths = [(0, 0)] * 3
    for i in range(len(pad) // 2):
        widths[2 - i] = (pad[2 * i], pad[2 * i + 1])
    for d, (lo, hi) in enumerate(widths):         # crop negatives, then pad positives
        sl = [slice(None)] * 3
        sl[d] = slice(max(0, -lo), want.shape[d] - max(0, -hi))
        want = want[tuple(sl)]
    want = np.pad(want, [(max(0, lo), max(0, hi)) for lo, hi in widths],
                  constant_values=np.float32(-1.5))
    assert np.array_equal(_bits(got), _bits(want))


def test_take_gathers_along_an_axis():
    x = _x((5, 7, 3), 7)
    for idx, axis in (([6, 0, -1, 3], 1), (np.array([[4, 0], [1, 1]]), 0), (2, 2),
                      (np.array([], np.int64), 1), (np.array([[0, 2, 1]], np.int32), -1)):
        got = samebits.take(x, idx, axis)
        assert np.array_equal(_bits(got), _bits(np.take(x, idx, axis)))
    emb = _x((1000, 16), 8)                          # an embedding lookup
    tokens = np.random.default_rng(9).integers(0, 1000, (2, 64))
    assert np.array_equal(_bits(samebits.take(emb, tokens, 0)), _bits(emb[tokens]))


def test_without_numpy():
    x = memoryview(array.array("f", range(12))).cast("B").cast("f", (3, 4))
    got = samebits.permute(x, (1, 0))
    assert isinstance(got, memoryview) and got.shape == (4, 3) and got[1, 0] == 1.0
    idx = array.array("q", [2, 0])
    assert samebits.take(x, idx, 0).tolist() == [[8, 9, 10, 11], [0, 1, 2, 3]]
    assert samebits.concatenate([x, x], 0).shape == (6, 4)
    assert samebits.pad(x, (1, 0)).tolist()[0] == [0, 0, 1, 2, 3]


@pytest.mark.parametrize("call,error,match", [
    (lambda: samebits.permute(np.ones((2, 3), np.float32), (0, 0)), ValueError, "permutation"),
    (lambda: samebits.permute(np.ones((2, 3), np.float32), (0, 2)), ValueError, "out of range"),
    (lambda: samebits.concatenate([np.ones((2, 3), np.float32), np.ones((3, 3), np.float32)], 1),
     ValueError, "does not match"),
    (lambda: samebits.concatenate([], 0), ValueError, "non-empty"),
    (lambda: samebits.split(np.ones(5, np.float32), [2, 2]), ValueError, "add up"),
    (lambda: samebits.split(np.ones(5, np.float32), 0), ValueError, "at least 1"),
    (lambda: samebits.slice(np.ones(5, np.float32), 0, step=0), ValueError, "step"),
    (lambda: samebits.pad(np.ones(5, np.float32), (1,)), ValueError, "pairs"),
    (lambda: samebits.pad(np.ones(5, np.float32), (-3, -3)), ValueError, "below zero"),
    (lambda: samebits.pad(np.ones(5, np.float32), (1, 1), value="x"), TypeError, "value"),
    (lambda: samebits.take(np.ones(5, np.float32), [5]), IndexError, "out of bounds"),
    (lambda: samebits.take(np.ones(5, np.float32), np.array([1.0])), TypeError, "integers"),
    (lambda: samebits.take(np.ones(5, np.float32), [True]), TypeError, "bool"),
])
def test_bad_input(call, error, match):
    with pytest.raises(error, match=match):
        call()
