"""The Python API: arguments, errors, out=, buffers without numpy, paths, info."""
from __future__ import annotations

import array
import ctypes
import os
import re
import subprocess
import sys
import threading

import numpy as np
import pytest

import samebits
from samebits._ops import matmul as _matmul
from conftest import assert_same_bits, exact_oracle, test_values


def _ab(m=4, k=3, n=5):
    return test_values((m, k), 1), test_values((k, n), 2)


def test_returns_float32_product():
    a, b = _ab()
    c = samebits.matmul(a, b)
    assert isinstance(c, np.ndarray) and c.dtype == np.float32 and c.shape == (4, 5)
    np.testing.assert_allclose(c, a.astype(np.float64) @ b, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("dtype", [np.float64, np.float16, np.int32, ">f4"])
def test_wrong_dtype_is_type_error_naming_it(dtype):
    a, b = _ab()
    with pytest.raises(TypeError, match=str(np.dtype(dtype))):
        samebits.matmul(a.astype(dtype), b)
    with pytest.raises(TypeError, match="dtype"):
        samebits.matmul(a, b.astype(dtype))


def test_non_array_input_is_type_error():
    with pytest.raises(TypeError, match="buffer"):
        samebits.matmul([[1.0]], np.ones((1, 1), np.float32))
    with pytest.raises(TypeError):
        samebits.matmul(None, np.ones((1, 1), np.float32))


@pytest.mark.parametrize("shape_a,shape_b,index", [((), (3, 2), 0), ((2, 3), (), 1)])
def test_zero_dimensional_operand_is_value_error_in_numpy_words(shape_a, shape_b, index):
    with pytest.raises(ValueError, match=rf"Input operand {index} does not have enough "
                                         r"dimensions \(has 0"):
        samebits.matmul(np.ones(shape_a, np.float32), np.ones(shape_b, np.float32))


def test_mismatched_shapes_name_both():
    with pytest.raises(ValueError, match=r"\(4, 3\) and \(2, 5\)"):
        samebits.matmul(np.ones((4, 3), np.float32), np.ones((2, 5), np.float32))


def test_out_is_filled_and_returned():
    a, b = _ab()
    out = np.full((4, 5), np.nan, np.float32)
    assert samebits.matmul(a, b, mode="exact", out=out) is out
    assert_same_bits(out, exact_oracle(a, b), "out")


def test_out_with_padded_rows_and_strided_columns():
    a, b = _ab(6, 7, 9)
    want = exact_oracle(a, b)
    padded = np.zeros((6, 12), np.float32)
    samebits.matmul(a, b, mode="exact", out=padded[:, 1:10])
    assert_same_bits(padded[:, 1:10], want, "padded out")
    assert (padded[:, 0] == 0).all() and (padded[:, 10:] == 0).all()
    strided = np.zeros((9, 6), np.float32).T     # column stride != 1: written through a copy
    samebits.matmul(a, b, mode="exact", out=strided)
    assert_same_bits(strided, want, "transposed out")


@pytest.mark.parametrize("bad,err,msg", [
    (np.zeros((4, 5), np.float64), TypeError, "float32"),
    (np.zeros((5, 4), np.float32), ValueError, r"shape \(5, 4\)"),
    (np.zeros(20, np.float32), ValueError, "shape"),
])
def test_bad_out(bad, err, msg):
    a, b = _ab()
    with pytest.raises(err, match=msg):
        samebits.matmul(a, b, out=bad)


def test_read_only_out():
    a, b = _ab()
    out = np.zeros((4, 5), np.float32)
    out.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        samebits.matmul(a, b, out=out)


def test_out_overlapping_an_input():
    x = np.ones((4, 4), np.float32)
    with pytest.raises(ValueError, match="overlaps"):
        samebits.matmul(x, x, out=x)
    big = np.ones((4, 8), np.float32)
    with pytest.raises(ValueError, match="overlaps"):
        samebits.matmul(big[:, :4], np.ones((4, 4), np.float32), out=big[:, 2:6])
    # Interleaved columns of one array do not overlap: allowed.
    samebits.matmul(big[:, 0::2], np.ones((4, 4), np.float32), out=big[:, 1::2])


@pytest.mark.parametrize("mode", ["", "EXACT", "fused", None, 1])
def test_unknown_mode(mode):
    a, b = _ab()
    with pytest.raises(ValueError, match="mode"):
        samebits.matmul(a, b, mode=mode)


@pytest.mark.parametrize("threads,err", [(0, ValueError), (-3, ValueError), (1.5, TypeError),
                                          (True, TypeError), ("2", TypeError)])
def test_bad_threads(threads, err):
    a, b = _ab()
    with pytest.raises(err, match="threads"):
        samebits.matmul(a, b, threads=threads)


def test_empty_dimensions():
    for m, k, n in [(0, 3, 4), (3, 0, 4), (3, 4, 0), (0, 0, 0)]:
        c = samebits.matmul(np.ones((m, k), np.float32), np.ones((k, n), np.float32), mode="exact")
        assert c.shape == (m, n) and (c.view(np.uint32) == 0).all()


def test_unusual_strides_are_copied_not_misread():
    raw = np.frombuffer(bytearray(4 * 64 + 1), dtype=np.uint8)[1:].view(np.float32)  # unaligned
    a = raw[:12].reshape(3, 4)
    a[:] = test_values((3, 4), 9)
    b = test_values((4, 2), 10)
    assert_same_bits(samebits.matmul(a, b, mode="exact"), exact_oracle(np.array(a), b), "unaligned")
    bcast = np.broadcast_to(np.float32(2.0), (4, 3))    # zero strides
    assert_same_bits(samebits.matmul(a, bcast, mode="exact"),
                     exact_oracle(np.array(a), np.array(bcast)), "broadcast")


def test_buffer_protocol_without_numpy_arrays():
    a_np, b_np = _ab(3, 4, 2)
    a = memoryview(array.array("f", a_np.ravel().tolist())).cast("B").cast("f", (3, 4))
    b = (ctypes.c_float * 2 * 4)()
    memoryview(b).cast("B")[:] = b_np.tobytes()
    c = samebits.matmul(a, b, mode="exact")
    assert isinstance(c, memoryview) and c.format == "f" and c.shape == (3, 2)
    assert_same_bits(np.array(c.tolist(), np.float32), exact_oracle(a_np, b_np), "buffers")
    out = memoryview(bytearray(24)).cast("f", (3, 2))
    assert samebits.matmul(a, b, mode="exact", out=out) is out
    assert out.tolist() == c.tolist()
    ro = memoryview(bytes(a_np.tobytes())).cast("f", (3, 4))    # read-only input: copied
    assert samebits.matmul(ro, b, mode="exact").tolist() == c.tolist()
    with pytest.raises(ValueError, match="read-only"):
        samebits.matmul(a, b, out=memoryview(bytes(24)).cast("f", (3, 2)))
    with pytest.raises(TypeError, match="format"):
        samebits.matmul(memoryview(bytearray(24)).cast("d", (3, 1)), b)
    with pytest.raises(ValueError, match="overlaps"):
        samebits.matmul(a, memoryview(a.obj).cast("B").cast("f", (4, 3)),
                        out=memoryview(a.obj).cast("B")[:36].cast("f", (3, 3)))


def test_strided_memoryview_out():
    # A 2-D strided buffer out (not numpy) used to be refused ("must be
    # C-contiguous"); it is written through a temporary, like a strided numpy out.
    a, b = _ab(4, 3, 4)
    want = samebits.matmul(a, b, mode="exact")
    o = np.zeros((4, 8), np.float32)
    got = samebits.matmul(a, b, mode="exact", out=memoryview(o[:, ::2]))
    assert isinstance(got, memoryview)
    assert_same_bits(o[:, ::2], want, "strided memoryview out")
    assert not o[:, 1::2].any()
    # In one buffer with an input read in place: rows 0-1 are a (contiguous),
    # out is every other column of rows 2-3 (apart) or of rows 1-2 (overlapping).
    z = np.zeros((4, 8), np.float32)
    z[:2] = test_values((2, 8), 3)
    bb = test_values((8, 4), 4)
    want = samebits.matmul(z[:2].copy(), bb, mode="exact")
    samebits.matmul(memoryview(z[:2]), bb, mode="exact", out=memoryview(z[2:, ::2]))
    assert_same_bits(z[2:, ::2], want, "out beside a")
    assert not z[2:, 1::2].any()
    with pytest.raises(ValueError, match="matmul: out overlaps an input"):
        samebits.matmul(memoryview(z[:2]), bb, out=memoryview(z[1:3, ::2]))


_WITHOUT_NUMPY = r"""
import sys
sys.modules["numpy"] = None          # as in Pyodide before loadPackage("numpy")
import copy, ctypes, pickle
import samebits

def matrix(rows, cols, start=0.0):
    view = memoryview(bytearray(4 * rows * cols)).cast("f", (rows, cols))
    for i in range(rows):
        for j in range(cols):
            view[i, j] = start + (i * cols + j) % 7
    return view

def product(a, b):
    m, k = a.shape
    n = b.shape[1]
    return [[sum(a[i, p] * b[p, j] for p in range(k)) for j in range(n)] for i in range(m)]

def rows(view):
    return [[view[i, j] for j in range(view.shape[1])] for i in range(view.shape[0])]

a, b = matrix(5, 6), matrix(6, 3, 1.0)
want = product(a, b)                  # small integers: every sum is exact
assert rows(samebits.matmul(a, b, mode="exact", threads=2)) == want
packed = samebits.pack(b, threads=1)
for dup in (packed, copy.copy(packed), copy.deepcopy(packed), pickle.loads(pickle.dumps(packed))):
    assert rows(samebits.matmul(a, dup, mode="exact")) == want
# A strided out (every other row of one buffer) is written through a temporary.
z = memoryview(bytearray(4 * 10 * 3)).cast("f", (10, 3))
assert not z[::2].c_contiguous
samebits.matmul(a, b, mode="exact", out=z[::2])
assert rows(z[::2]) == want and not any(v for row in rows(z[1::2]) for v in row)
# Without numpy the overlap test stays conservative: rows 0-1 of z read in
# place as a, out every other row from 4 on: apart, but refused.
try:
    samebits.matmul(z[:2], matrix(3, 3), out=z[4:8:2])
    raise SystemExit("a strided out sharing an input's buffer was accepted")
except ValueError as e:
    assert "overlaps" in str(e), e

x = memoryview(bytearray(4 * 2 * 5 * 5)).cast("f", (1, 2, 5, 5))
for i in range(50):
    x.cast("B").cast("f")[i] = i % 5
w = memoryview(bytearray(4 * 4 * 1 * 2 * 2)).cast("f", (4, 1, 2, 2))
for i in range(16):
    w.cast("B").cast("f")[i] = 1.0
y = samebits.conv2d(x, w, stride=(1, 2), padding=(0, 1), groups=2, mode="exact")
pw = pickle.loads(pickle.dumps(samebits.pack_conv2d(w, groups=2)))
assert y.tobytes() == samebits.conv2d(x, pw, stride=(1, 2), padding=(0, 1), groups=2,
                                      mode="exact").tobytes()
p = samebits.max_pool2d(x, 2, stride=1, padding=(1, 0), threads=1)
assert tuple(p.shape) == (1, 2, 6, 4)
for bad, error in (({"stride": True}, TypeError), ({"stride": 2**64 + 1}, ValueError),
                   ({"padding": (1, 2, 3)}, ValueError), ({"threads": 0}, ValueError)):
    try:
        samebits.conv2d(x, w, groups=2, **bad)
        raise SystemExit(f"{bad} was accepted")
    except error as e:
        assert str(e).startswith("conv2d: "), e
print("ok")
"""


def test_without_numpy():
    # The Pyodide wheel runs this package before numpy is loaded: no code path
    # may need it.
    r = _run(_WITHOUT_NUMPY)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr


def test_paths_and_use_path():
    assert "scalar" in samebits.paths()
    assert samebits.path() in samebits.paths()
    with samebits.use_path("scalar"):
        assert samebits.path() == "scalar"
    with pytest.raises(ValueError, match="unknown path"):
        with samebits.use_path("sse9"):
            pass
    for name in ("avx512", "neon", "avx2", "sme"):
        if name not in samebits.paths():
            with pytest.raises(ValueError, match=name):
                with samebits.use_path(name):
                    pass


def test_use_path_is_per_thread():
    seen, default = [], samebits.path()
    with samebits.use_path("scalar"):
        t = threading.Thread(target=lambda: seen.append(samebits.path()))
        t.start()
        t.join()
    assert seen == [default]


def _run(code: str, **env) -> subprocess.CompletedProcess:
    full_env = {**os.environ, **env}
    return subprocess.run([sys.executable, "-c", code], env=full_env, capture_output=True,
                          text=True, timeout=120)


def test_env_path_forces_and_rejects():
    r = _run("import samebits; print(samebits.path())", SAMEBITS_PATH="scalar")
    assert r.returncode == 0 and r.stdout.strip() == "scalar"
    r = _run("import samebits, numpy as np; samebits.matmul(np.ones((1,1),np.float32),"
             "np.ones((1,1),np.float32))", SAMEBITS_PATH="nope")
    assert r.returncode != 0 and "SAMEBITS_PATH='nope'" in r.stderr


def test_env_threads():
    r = _run("import samebits; print(samebits.info()['threads'])", SAMEBITS_THREADS="1")
    assert r.stdout.strip() == "1"
    r = _run("import samebits; samebits.info()", SAMEBITS_THREADS="zero")
    assert r.returncode != 0 and "SAMEBITS_THREADS" in r.stderr


def test_info():
    i = samebits.info()
    assert i["version"] == samebits.__version__
    assert set(i["paths"]) <= set(i["built_paths"])
    assert i["threads"] >= 1 and i["path"] in i["paths"]


def test_concurrent_callers_get_correct_results():
    # A busy pool runs a second caller's chunks on that caller: same bits.
    a = test_values((300, 300), 21)
    b = test_values((300, 300), 22)
    want = exact_oracle(a, b)
    errors = []

    def work():
        for _ in range(5):
            got = samebits.matmul(a, b, mode="exact")
            if not np.array_equal(got.view(np.uint32), want.view(np.uint32)):
                errors.append("mismatch")

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


def test_fork_after_pool_started():
    code = ("import os, samebits, numpy as np\n"
            "a = np.ones((400, 400), np.float32)\n"
            "samebits.matmul(a, a)\n"
            "pid = os.fork()\n"
            "if pid == 0:\n"
            "    c = samebits.matmul(a, a, threads=2)\n"
            "    os._exit(0 if c[0, 0] == 400 else 1)\n"
            "_, status = os.waitpid(pid, 0)\n"
            "raise SystemExit(os.waitstatus_to_exitcode(status))\n")
    assert _run(code).returncode == 0


# ---- Integer arguments: numpy integers accepted, bool refused, range-checked ----

def _conv_call(**over):
    x, w = test_values((1, 2, 9, 9), 41), test_values((4, 1, 3, 3), 42)
    kwargs = dict(stride=2, padding=1, dilation=2, groups=2, threads=2, mode="exact")
    kwargs.update(over)
    return samebits.conv2d(x, w, **kwargs)


def _pack_conv_call(**over):
    x, w = test_values((1, 2, 9, 9), 41), test_values((4, 1, 3, 3), 42)
    kwargs = dict(groups=2)
    kwargs.update(over)
    return samebits.conv2d(x, samebits.pack_conv2d(w, **kwargs), groups=2, mode="exact")


def _pool_call(**over):
    kwargs = dict(kernel_size=3, stride=2, padding=1, dilation=2, threads=2)
    kwargs.update(over)
    return samebits.max_pool2d(test_values((1, 2, 9, 9), 43), **kwargs)


def _matmul_call(**over):
    return samebits.matmul(*_ab(7, 5, 6), mode="exact", threads=over.get("threads", 2))


def _pack_call(**over):
    a, b = _ab(7, 5, 6)
    return samebits.matmul(a, samebits.pack(b, threads=over.get("threads", 2)), mode="exact")


_INT_ARGUMENTS = [
    ("conv2d", _conv_call, "stride", 2), ("conv2d", _conv_call, "padding", 1),
    ("conv2d", _conv_call, "dilation", 2), ("conv2d", _conv_call, "groups", 2),
    ("conv2d", _conv_call, "threads", 2),
    ("pack_conv2d", _pack_conv_call, "groups", 2),
    ("max_pool2d", _pool_call, "kernel_size", 3), ("max_pool2d", _pool_call, "stride", 2),
    ("max_pool2d", _pool_call, "padding", 1), ("max_pool2d", _pool_call, "dilation", 2),
    ("max_pool2d", _pool_call, "threads", 2),
    ("matmul", _matmul_call, "threads", 2),
    ("pack", _pack_call, "threads", 2),
]
_INT_IDS = [f"{op}-{name}" for op, _, name, _ in _INT_ARGUMENTS]


@pytest.mark.parametrize("op,call,name,value", _INT_ARGUMENTS, ids=_INT_IDS)
def test_numpy_integers_are_accepted(op, call, name, value):
    want = call(**{name: value})
    for kind in (np.int64, np.int32, np.uint8):
        assert_same_bits(call(**{name: kind(value)}), want, f"{op} {name}={kind.__name__}")
    if name in ("stride", "padding", "dilation", "kernel_size"):   # in pairs too
        assert_same_bits(call(**{name: (np.int64(value), value)}), want, f"{op} {name} pair")


@pytest.mark.parametrize("op,call,name,value", _INT_ARGUMENTS, ids=_INT_IDS)
def test_bool_is_refused_naming_the_argument(op, call, name, value):
    for flag in (True, np.True_, False):
        with pytest.raises(TypeError, match=f"{op}: {name} must be an int, got bool"):
            call(**{name: flag})
    if name in ("stride", "padding", "dilation", "kernel_size"):
        with pytest.raises(TypeError, match=rf"{op}: {name} must be an int, got bool "
                                            rf"np.True_ in \(1, np.True_\)"):
            call(**{name: (1, np.True_)})


def test_threads_out_of_range_name_the_argument():
    a, b = _ab()
    with pytest.raises(ValueError, match=r"matmul: threads must be at least 1, got np.int64\(-2\)"):
        samebits.matmul(a, b, threads=np.int64(-2))
    with pytest.raises(ValueError, match="pack: threads must be at least 1, got 0"):
        samebits.pack(b, threads=0)
    with pytest.raises(TypeError, match="pack: threads must be an int, got float 2.0"):
        samebits.pack(b, threads=2.0)
    # Any cap above the cores is as good as every core: clamped, never passed on raw.
    assert_same_bits(samebits.matmul(a, b, threads=2**70), samebits.matmul(a, b), "2**70")


def test_matmul_and_pack_refuse_sizes_c_cannot_take():
    # Broadcast (stride-0) arrays hold no memory for their dimensions.
    tall = np.broadcast_to(np.float32(1), (2**41, 1))
    with pytest.raises(ValueError, match=r"matmul: a has shape \(2199023255552, 1\); "
                                         r"dimensions above 2\*\*40"):
        samebits.matmul(tall, np.ones((1, 1), np.float32))
    with pytest.raises(ValueError, match=r"pack: b has shape \(2199023255552, 1\)"):
        samebits.pack(tall)
    # Dimensions in range, but a result of 2**80 bytes: refused before allocating.
    col, row = (np.broadcast_to(np.float32(1), s) for s in ((2**39, 1), (1, 2**39)))
    with pytest.raises(ValueError, match=r"matmul: the output would have shape "
                                         r"\(549755813888, 549755813888\), \d+ bytes"):
        samebits.matmul(col, row)
    with pytest.raises(ValueError, match=r"matmul: the output would have shape"):
        _matmul._matmul_general(col, row, "fast", None, None)   # without the fast path
    # A packing of more than 2**62 bytes: refused before allocating.
    with pytest.raises(ValueError, match=r"pack: b of shape \(1073741825, 1073741825\) "
                                         r"is too large to pack"):
        samebits.pack(np.broadcast_to(np.float32(1), (2**30 + 1, 2**30 + 1)))


# ---- Failed allocations say what, how many bytes and for which shape ----------

_UNDER_ASAN = "asan" in os.environ.get("LD_PRELOAD", "")
_no_asan = pytest.mark.skipif(_UNDER_ASAN, reason="ASan aborts on an impossible allocation "
                                                  "instead of failing it")


@_no_asan
def test_failed_allocations_say_what_for():
    # 2**60 bytes: within the 2**62 bound, beyond any address space.
    huge = np.broadcast_to(np.float32(1), (2**29, 2**29))     # strides 0: read in place
    with pytest.raises(MemoryError, match=r"pack: could not allocate \d+ bytes for the packed "
                                          r"data of shape \(536870912, 536870912\)"):
        samebits.pack(huge)
    # C-contiguous strides over one float: never read, the allocation fails first.
    w = np.lib.stride_tricks.as_strided(np.zeros(1, np.float32), shape=(2**29, 2**29, 1, 1),
                                        strides=(2**31, 4, 4, 4))
    with pytest.raises(MemoryError, match=r"pack_conv2d: could not allocate \d+ bytes for the "
                                          r"packed data of shape \(536870912, 536870912, 1, 1\)"):
        samebits.pack_conv2d(w)
    col, row = huge[:, :1], huge[:1]
    with pytest.raises(MemoryError, match=r"matmul: could not allocate 1152921504606846976 bytes "
                                          r"for the output of shape \(536870912, 536870912\)"):
        samebits.matmul(col, row)
    one = np.ones((1, 1, 1, 1), np.float32)
    buffer_one = memoryview(bytearray(4)).cast("f", (1, 1, 1, 1))
    shape = r"\(1, 1, 536870913, 536870913\)"
    for x in (one, buffer_one):   # conv2d's numpy fast path, then the general path
        with pytest.raises(MemoryError, match=rf"conv2d: could not allocate \d+ bytes for the "
                                              rf"output of shape {shape}"):
            samebits.conv2d(x, one, padding=2**28)
        with pytest.raises(MemoryError, match=rf"max_pool2d: could not allocate \d+ bytes for "
                                              rf"the output of shape {shape}"):
            samebits.max_pool2d(x, 1, padding=2**28)


@_no_asan
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS and /proc: Linux")
def test_pack_under_a_memory_limit():
    # The address space capped 64 MiB above what the process uses: packing a
    # (4096, 8192) matrix needs 128 MiB.
    code = (
        "import resource, numpy as np, samebits\n"
        "b = np.broadcast_to(np.float32(1), (4096, 8192))\n"
        "used = int(open('/proc/self/statm').read().split()[0]) * resource.getpagesize()\n"
        "resource.setrlimit(resource.RLIMIT_AS, (used + (64 << 20), resource.RLIM_INFINITY))\n"
        "try:\n"
        "    samebits.pack(b, threads=1)\n"
        "except MemoryError as e:\n"
        "    print('MemoryError:', e)\n")
    r = _run(code)
    assert r.returncode == 0, r.stderr
    assert re.fullmatch(r"MemoryError: pack: could not allocate \d+ bytes for the packed data "
                        r"of shape \(4096, 8192\)", r.stdout.strip()), r.stdout
