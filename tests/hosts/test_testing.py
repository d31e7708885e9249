"""samebits.testing (digest, assert_same_bits) and the pytest plugin's
same_bits fixture, run in a scratch pytest session (pytester)."""
from __future__ import annotations

import hashlib
import json
import re

import numpy as np
import pytest

from samebits.testing import assert_same_bits, digest

pytest_plugins = ["pytester"]


def plugin_args() -> list[str]:
    """["-p", "samebits.pytest_plugin"] unless an installed samebits already
    registers it as a pytest11 entry point (pytest refuses it twice)."""
    from importlib.metadata import entry_points
    installed = any(ep.value == "samebits.pytest_plugin" for ep in entry_points(group="pytest11"))
    return [] if installed else ["-p", "samebits.pytest_plugin"]


def _documented(dtype: str, shape: str, payload: bytes) -> str:
    """The digest as docs/testing.md writes it down, computed by hand."""
    return hashlib.sha256(b"samebits-digest-v1\n" + f"{dtype} {shape}\n".encode() +
                          payload).hexdigest()


def test_digest_is_the_documented_bytes():
    x = np.array([[1.0, -0.0, 2.5], [np.inf, 3.0, -1.0]], np.float32)
    assert digest(x) == _documented("float32", "2,3", x.astype("<f4").tobytes())
    assert digest(np.float32(1.5)) == _documented("float32", "", b"\x00\x00\xc0\x3f")
    i = np.arange(6, dtype=np.int64).reshape(3, 2)
    assert digest(i) == _documented("int64", "3,2", i.astype("<i8").tobytes())
    assert digest(np.array([True, False])) == _documented("bool", "2", b"\x01\x00")


def test_digest_of_layouts_buffers_and_byte_orders_agree():
    x = np.arange(24, dtype=np.float32).reshape(4, 6) / 7
    want = digest(x)
    assert digest(np.asfortranarray(x)) == want
    assert digest(x.astype(">f4")) == want
    assert digest(memoryview(x)) == want
    assert digest(memoryview(x.tobytes()).cast("f", (4, 6))) == want
    assert digest(x.T) != want                        # another shape
    assert digest(x.reshape(6, 4)) != want


def test_digest_nan_rules_and_signed_zero():
    nans = np.array([0x7FC00000, 0xFFC00001, 0x7F800001], np.uint32).view(np.float32)
    canonical = np.full(3, np.nan, np.float32)
    assert digest(nans) == digest(canonical)
    assert digest(nans, canonical_nan=False) != digest(canonical, canonical_nan=False)
    assert digest(np.array([0.0], np.float32)) != digest(np.array([-0.0], np.float32))
    d = np.array([np.nan, 1.0])
    assert digest(d) == digest(np.array([float.fromhex("-0x1.8p+0") * 0 + np.nan, 1.0]))


def test_digest_refuses_what_it_cannot_hash():
    with pytest.raises(TypeError, match="dtype complex64"):
        digest(np.zeros(2, np.complex64))
    with pytest.raises(TypeError, match="expected a numpy array or a buffer"):
        digest([1.0, 2.0])


def test_assert_same_bits_passes_equal_bits():
    x = np.array([np.nan, -0.0, 1.0], np.float32)
    assert_same_bits(x, x.copy())
    assert_same_bits(memoryview(x), x)


def test_assert_same_bits_reports_differences():
    a = np.array([[0.0, 1.0], [2.0, np.nan]], np.float32)
    b = np.array([[-0.0, 1.0], [2.0, 0.0]], np.float32)
    b[1, 1] = np.uint32(0x7FC00001).view(np.float32)
    a[1, 1] = np.uint32(0x7FC00000).view(np.float32)
    with pytest.raises(AssertionError) as e:
        assert_same_bits(a, b, err_msg="logits")
    text = str(e.value)
    assert text.startswith("logits\nnot the same bits: 2 of 4 elements differ")
    assert "at (0, 0): actual 0.0 (0x00000000), desired -0.0 (0x80000000)" in text
    assert "(0x7FC00000)" in text and "(0x7FC00001)" in text
    with pytest.raises(AssertionError, match=r"actual is float32 \(2, 2\), desired float64"):
        assert_same_bits(a, a.astype(np.float64))
    many = np.zeros(100, np.float32)
    with pytest.raises(AssertionError, match=r"100 of 100 elements differ(.|\n)*and 95 more"):
        assert_same_bits(many, many + 1)


def test_np_testing_would_miss_what_assert_same_bits_catches():
    a = np.array([0.0, np.nan], np.float32)
    b = np.array([-0.0, np.nan], np.float32)
    np.testing.assert_array_equal(a, b)                # numpy sees no difference
    with pytest.raises(AssertionError):
        assert_same_bits(a, b)


USER_TEST = """
import numpy as np

def test_logits(same_bits):
    same_bits.check("net/logits", np.arange(6, dtype=np.float32).reshape(2, 3) * SCALE)
    same_bits.check("net/argmax", np.array([2, 1], dtype=np.int64))
"""


def test_plugin_records_then_compares(pytester):
    pytester.makepyfile(test_user=USER_TEST.replace("SCALE", "np.float32(0.5)"))
    result = pytester.runpytest(*plugin_args(), "--samebits-update")
    result.assert_outcomes(passed=1)
    golden = json.loads((pytester.path / "same_bits.json").read_text())
    assert golden == {"net/argmax": digest(np.array([2, 1], np.int64)),
                      "net/logits": digest(np.arange(6, dtype=np.float32).reshape(2, 3) *
                                           np.float32(0.5))}
    result.stdout.fnmatch_lines(["*samebits: wrote 2 digest(s) to *same_bits.json"])
    pytester.runpytest(*plugin_args()).assert_outcomes(passed=1)

    # another machine computes other bits: the test fails and names the array
    pytester.makepyfile(test_user=USER_TEST.replace("SCALE", "np.float32(0.5000001)"))
    result = pytester.runpytest(*plugin_args())
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*same_bits: 1 name(s) differ from the golden file:*",
                                 "*net/logits: digest *, golden *"])
    assert "net/argmax" not in result.stdout.str()


def test_plugin_reports_missing_names_and_uses_the_ini_path(pytester):
    pytester.makepyfile(test_user=USER_TEST.replace("SCALE", "1"))
    pytester.makeini("[pytest]\nsamebits_golden = golden/digests.json\n")
    (pytester.path / "golden").mkdir()
    result = pytester.runpytest(*plugin_args())
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*net/logits: no digest in *digests.json (record it with "
                                 "pytest --samebits-update)*"])
    pytester.runpytest(*plugin_args(), "--samebits-update")
    assert set(json.loads((pytester.path / "golden" / "digests.json").read_text())) == {
        "net/logits", "net/argmax"}
    pytester.runpytest(*plugin_args()).assert_outcomes(passed=1)


def test_digest_without_numpy_is_the_same(tmp_path):
    """In Pyodide there may be no numpy: the pure-Python path (NaN rule
    included) gives the numpy path's digest."""
    import subprocess
    import sys
    x = np.array([1.0, np.nan, -0.0, 2.0], np.float32)
    x[1] = np.uint32(0xFFC00123).view(np.float32)
    (tmp_path / "x.bin").write_bytes(x.tobytes())
    code = ("import sys; sys.modules['numpy'] = None\n"
            "from samebits.testing import digest\n"
            f"v = memoryview(open({str(tmp_path / 'x.bin')!r}, 'rb').read()).cast('f', (2, 2))\n"
            "print(digest(v), digest(v, canonical_nan=False))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == [digest(x.reshape(2, 2)),
                                  digest(x.reshape(2, 2), canonical_nan=False)]


def test_portable_values_are_the_documented_stream(monkeypatch):
    """samebits.testing.portable_values: the pure-Python definition's bits, in
    the shape asked for, as numpy or (without numpy) a memoryview."""
    import struct
    import sys

    from samebits import _testdata
    from samebits.testing import portable_values

    want = _testdata.reference_bits(60, 0xC0FFEE, 8)
    got = portable_values((3, 4, 5), 0xC0FFEE, nspecial=8)
    assert got.dtype == np.float32 and got.shape == (3, 4, 5)
    assert got.view(np.uint32).ravel().tolist() == want
    monkeypatch.setitem(sys.modules, "numpy", None)
    view = portable_values((3, 20), 0xC0FFEE, nspecial=8)
    assert isinstance(view, memoryview) and view.format == "f" and view.shape == (3, 20)
    assert list(struct.unpack("<60I", view.tobytes())) == want


@pytest.mark.parametrize("args, kind, message", [
    (((2, -1), 1), ValueError, "shape must not be negative"),
    (((2, 1.5), 1), TypeError, "shape[1] must be an int"),
    ((4, -1), ValueError, "seed and nspecial must be in [0, 2**32)"),
    ((4, 2 ** 32), ValueError, "seed and nspecial must be in [0, 2**32)"),
    (((2 ** 16, 2 ** 16), 1), ValueError, "too many"),
])
def test_portable_values_refuses_bad_arguments(args, kind, message):
    from samebits.testing import portable_values
    with pytest.raises(kind, match=re.escape(message)):
        portable_values(*args)
