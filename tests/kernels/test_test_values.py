"""The C test-value generator matches its pure-Python definition bit for bit."""
import numpy as np
import pytest

from samebits import _testdata


@pytest.mark.parametrize("seed,count,nspecial", [(1, 1000, 8), (0xDEADBEEF, 4097, 16), (7, 1, 8),
                                                 (2**31, 300, 0)])
def test_c_fill_matches_python_definition(seed, count, nspecial):
    buf = _testdata.float_buffer(count, seed, nspecial)
    got = list(memoryview(buf).cast("B").cast("I"))[:count]
    assert got == _testdata.reference_bits(count, seed, nspecial)


def test_values_cover_specials_and_tiny_magnitudes():
    bits = np.array(_testdata.reference_bits(5000, 3, 8), dtype=np.uint32)
    values = bits.view(np.float32)
    assert np.isnan(values).sum() == 2
    assert (bits == 0xFFC00001).sum() == 1          # a non-canonical NaN
    assert np.isinf(values).sum() == 2
    assert ((np.abs(values) < 2.0**-60) & (values != 0)).sum() > 100   # tiny but normal
    assert (values[np.isfinite(values)] >= -1).all() and (values[np.isfinite(values)] < 1).all()


def test_published_sample_values():
    # A regression pin, not an independent check: docs/test-values.md publishes
    # these first values so that a port can test itself against them.
    assert [_testdata.mix32(i) for i in range(3)] == [0x0, 0x688990C0, 0xD1132181]
    assert [_testdata.value_bits(i, 1) for i in range(4)] == \
        [0xBE3BB380, 0x3F24B6E6, 0xBF5B8B6C, 0x3F1251B6]
    c_first = memoryview(_testdata.float_buffer(4, 1, 0)).cast("B").cast("I").tolist()
    assert c_first == [0xBE3BB380, 0x3F24B6E6, 0xBF5B8B6C, 0x3F1251B6]
