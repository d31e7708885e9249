"""The C ABI: the argument structures as py/samebits/_binding/abi.py declares them match
csrc/samebits.h field for field, the library exports only its public API, the
version is one, and the C entry points refuse out-of-range arguments with a
status (never a crash) whatever Python lets through."""
from __future__ import annotations

import ctypes
import re
import shutil
import struct
import subprocess
from pathlib import Path

import numpy as np
import pytest

from samebits._binding import abi as _abi, lib as _lib, paths as _paths
from samebits._binding.codes import ACTIVATION_CODES
from samebits._version import __version__

ACTIVATION_COUNT = len(ACTIVATION_CODES)   # SB_ACT_COUNT: the first code that is not one

HEADER = (Path(__file__).resolve().parents[2] / "csrc" / "samebits.h").read_text()


def _c_fields(struct_name: str) -> list[str]:
    """The field names of `typedef struct <name> {...}` in samebits.h, in order."""
    body = re.search(r"typedef struct %s \{(.*?)\} %s;" % (struct_name, struct_name), HEADER,
                     re.S).group(1)
    body = re.sub(r"/\*.*?\*/", "", body, flags=re.S)
    names = []
    for decl in body.split(";"):
        decl = decl.strip()
        if not decl:
            continue
        assert decl.startswith("int64_t "), decl
        for part in decl[len("int64_t "):].split(","):
            names.append(part.strip().split("[")[0])
    return names


@pytest.mark.parametrize("c_name,py", [("sb_matmul_args", _abi.MatmulArgs),
                                       ("sb_batch", _abi.Batch),
                                       ("sb_conv2d_args", _abi.Conv2dArgs),
                                       ("sb_max_pool2d_args", _abi.MaxPool2dArgs),
                                       ("sb_unary_args", _abi.UnaryArgs),
                                       ("sb_binary_args", _abi.BinaryArgs),
                                       ("sb_reduce_args", _abi.ReduceArgs),
                                       ("sb_norm_args", _abi.NormArgs),
                                       ("sb_avg_pool2d_args", _abi.AvgPool2dArgs),
                                       ("sb_copy_args", _abi.CopyArgs),
                                       ("sb_resize2d_args", _abi.Resize2dArgs),
                                       ("sb_plan_info", _abi.PlanInfo)])
def test_structures_match_the_header(c_name, py):
    assert [name for name, _ in py._fields_] == _c_fields(c_name)
    arrays = [name for name, kind in py._fields_ if kind is not ctypes.c_int64]
    if arrays:                 # int64 arrays of SB_MAX_BATCH_DIMS: the C sizes
        assert all(getattr(py, name).size == 8 * _abi.MAX_BATCH_DIMS for name in arrays)
    else:                      # all int64: the struct packers write the same bytes
        assert ctypes.sizeof(py) == struct.calcsize("=" + "q" * len(py._fields_))
        values = list(range(1, len(py._fields_) + 1))
        assert _abi.packer(py)(*values) == bytes(py(*values))
    assert _abi.MAX_BATCH_DIMS == int(re.search(r"#define SB_MAX_BATCH_DIMS (\d+)",
                                                HEADER).group(1))


def test_the_library_exports_only_its_public_api():
    nm = shutil.which("nm")
    if nm is None:
        pytest.skip("nm (binutils) is not installed")
    out = subprocess.run([nm, "-D", "--defined-only", _lib.LIBRARY_PATH], capture_output=True,
                         text=True, check=True).stdout
    exported = {line.split()[-1] for line in out.splitlines() if " T " in line}
    declared = set(re.findall(r"SB_API [^;(]*?\b(sb_\w+)\(", HEADER))
    assert exported == declared, (exported ^ declared)


def test_one_version():
    assert _lib.lib.sb_version().decode() == __version__


def _matmul_status(**over) -> int:
    a = np.ones((4, 4), np.float32)
    c = np.zeros((4, 4), np.float32)
    fields = dict(path=_paths.path_index(_paths.path()), mode=1, max_threads=1, m=4, n=4, k=4,
                  a=a.ctypes.data, a_row=4, a_col=1, b=a.ctypes.data, b_row=4, b_col=1,
                  b_packed=0, c=c.ctypes.data, c_row=4, bias=0, activation=0, batch=0)
    fields.update(over)
    args = _abi.MatmulArgs(**fields)   # alive for the call
    return _lib.lib.sb_matmul(ctypes.addressof(args))


def test_matmul_refuses_out_of_range_arguments():
    assert _matmul_status() == 0
    limit = 1 << 40
    for bad in [dict(m=-1), dict(n=limit + 1), dict(k=-5), dict(mode=2), dict(max_threads=0),
                dict(activation=ACTIVATION_COUNT), dict(activation=-1), dict(activation=1 | (5 << 32)),
                dict(activation=3 | (1 << 8)), dict(path=99), dict(a_row=1 << 62), dict(c=0),
                dict(a=0), dict(b_col=-(1 << 62))]:
        assert _matmul_status(**bad) == _lib.STATUS_ARGUMENT, bad
    batch = _abi.Batch()
    batch.ndim = 17
    assert _matmul_status(batch=ctypes.addressof(batch)) == _lib.STATUS_ARGUMENT
    batch.ndim, batch.shape[0] = 1, -2
    assert _matmul_status(batch=ctypes.addressof(batch)) == _lib.STATUS_ARGUMENT


def test_conv_references_refuse_windows_that_overflow():
    """A kernel of 2**24 + 1 taps with dilation 2**40 spans more than int64:
    every entry point says no instead of wrapping."""
    x = np.ones((1, 1, 4, 4), np.float32)
    w = np.ones((1, 1, 1, 1), np.float32)
    y = np.zeros((1, 1, 4, 4), np.float32)

    def conv(function, **over):
        fields = dict(path=0, mode=1, max_threads=1, n=1, c=1, h=4, w=4, cout=1, kh=1, kw=1,
                      groups=1, stride_h=1, stride_w=1, dil_h=1, dil_w=1, pad_top=0,
                      pad_bottom=0, pad_left=0, pad_right=0, x=x.ctypes.data,
                      weights=w.ctypes.data, packed=0, bias=0, activation=0, y=y.ctypes.data)
        fields.update(over)
        args = _abi.Conv2dArgs(**fields)   # alive for the call
        return function(ctypes.addressof(args))
    for function in (_lib.lib.sb_conv2d_naive, _lib.lib.sb_conv2d):
        assert conv(function) == 0
        for bad in [dict(kh=(1 << 24) + 1, dil_h=1 << 40), dict(stride_w=(1 << 40) + 1),
                    dict(pad_left=-1), dict(dil_w=0), dict(groups=0), dict(h=1 << 41),
                    dict(activation=ACTIVATION_COUNT), dict(activation=2 | (1 << 32))]:
            assert conv(function, **bad) == _lib.STATUS_ARGUMENT, (function, bad)
    pool = _abi.MaxPool2dArgs(1, 1, 4, 4, (1 << 24) + 1, 1, 1, 1, 1 << 40, 1, 0, 0, 0, 0,
                              x.ctypes.data, y.ctypes.data, 1)
    assert _lib.lib.sb_max_pool2d(ctypes.addressof(pool)) == _lib.STATUS_ARGUMENT


def test_operator_entry_points_refuse_bad_arguments():
    """The operators' C entry points answer out-of-range arguments with a
    status, whatever reaches them (never a crash)."""
    x = np.ones(64, np.float32)
    y = np.empty(64, np.float32)
    xp, yp = x.ctypes.data, y.ctypes.data
    lib = _lib.lib
    best = _paths.active_path_index()

    def unary(**over):
        f = dict(path=best, mode=1, op=0, max_threads=1, count=64, x=xp, y=yp, param=0)
        f.update(over)
        args = _abi.UnaryArgs(**f)   # alive for the call
        return lib.sb_unary(ctypes.addressof(args))
    assert unary() == 0
    from samebits._ops.elementwise import _OPS   # every enum sb_unary_op code, 0 .. count - 1
    assert sorted(_OPS.values()) == list(range(len(_OPS)))
    for bad in [dict(op=len(_OPS)), dict(op=-1), dict(mode=2), dict(count=-1), dict(max_threads=0),
                dict(param=5), dict(op=7, param=1 << 33), dict(x=0), dict(y=xp + 4)]:
        assert unary(**bad) == _lib.STATUS_ARGUMENT, bad
    assert unary(path=99) == _lib.STATUS_PATH

    dims = (ctypes.c_int64 * _abi.MAX_BATCH_DIMS)

    def binary(**over):
        f = dict(path=best, mode=1, op=0, max_threads=1, ndim=1, shape=dims(64), a=xp,
                 a_stride=dims(1), b=xp, b_stride=dims(0), y=yp)
        f.update(over)
        args = _abi.BinaryArgs(**f)   # alive for the call
        return lib.sb_binary(ctypes.addressof(args))
    assert binary() == 0
    for bad in [dict(op=7), dict(ndim=0), dict(ndim=17), dict(shape=dims(-1)),
                dict(shape=dims((1 << 40) + 1)), dict(a_stride=dims(1 << 61)), dict(y=0)]:
        assert binary(**bad) == _lib.STATUS_ARGUMENT, bad

    def reduce(**over):
        f = dict(path=best, mode=1, op=0, max_threads=1, outer=8, n=8, inner=1, x=xp, y=yp,
                 weight=0, bias=0, eps=0)
        f.update(over)
        args = _abi.ReduceArgs(**f)   # alive for the call
        return lib.sb_reduce(ctypes.addressof(args))
    assert reduce() == 0
    for bad in [dict(op=5), dict(n=-1), dict(inner=1 << 41), dict(op=4, inner=2),
                dict(op=0, weight=xp), dict(eps=1 << 33), dict(y=0)]:
        assert reduce(**bad) == _lib.STATUS_ARGUMENT, bad

    def norm(**over):
        f = dict(path=best, mode=1, op=1, max_threads=1, n=2, c=4, spatial=8, groups=2, x=xp,
                 y=yp, mean=0, var=0, weight=0, bias=0, eps=0)
        f.update(over)
        args = _abi.NormArgs(**f)   # alive for the call
        return lib.sb_norm(ctypes.addressof(args))
    assert norm() == 0
    for bad in [dict(op=2), dict(groups=3), dict(groups=0), dict(op=0, groups=0),
                dict(c=-4), dict(eps=-1)]:
        assert norm(**bad) == _lib.STATUS_ARGUMENT, bad

    def pool(**over):
        f = dict(n=1, c=1, h=8, w=8, oh=4, ow=4, kh=2, kw=2, stride_h=2, stride_w=2, pad_top=0,
                 pad_bottom=0, pad_left=0, pad_right=0, count_include_pad=1, divisor_override=0,
                 adaptive=0, x=xp, y=yp, max_threads=1)
        f.update(over)
        args = _abi.AvgPool2dArgs(**f)   # alive for the call
        return lib.sb_avg_pool2d(ctypes.addressof(args))
    assert pool() == 0
    for bad in [dict(oh=5), dict(kh=0), dict(h=0), dict(count_include_pad=2),
                dict(stride_w=1 << 41), dict(adaptive=1, oh=1 << 40, h=1 << 40),
                dict(divisor_override=-1)]:
        assert pool(**bad) == _lib.STATUS_ARGUMENT, bad

    def copy(**over):
        f = dict(ndim=1, shape=dims(64), x=xp, x_stride=dims(1), y=yp, y_stride=dims(1),
                 max_threads=1)
        f.update(over)
        args = _abi.CopyArgs(**f)   # alive for the call
        return lib.sb_copy(ctypes.addressof(args))
    assert copy() == 0
    for bad in [dict(ndim=0), dict(ndim=17), dict(y_stride=dims(-1)), dict(shape=dims(-2)),
                dict(x=0), dict(max_threads=0)]:
        assert copy(**bad) == _lib.STATUS_ARGUMENT, bad
