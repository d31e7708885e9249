"""The planner (csrc/framework/tiling.c) through sb_matmul_plan and sb_conv2d_plan: a pure
function of the shape; the thread budget changes how many threads wake, never
the chunks; routes as docs/design.md describes them."""
from __future__ import annotations

import ctypes
import itertools

import numpy as np
import pytest

from samebits._binding import abi as _abi, lib as _lib, paths as _paths
from conftest import assert_same_bits, exact_oracle, path_params, raw_sgemm, test_values

lib = _lib.lib


def _info_tuple(info: _abi.PlanInfo) -> dict:
    return {name: getattr(info, name) for name, _ in _abi.PlanInfo._fields_}


def plan_matmul(path: str, mode: int, threads: int, m: int, n: int, k: int, *,
                a_strides=None, b_strides=None, packed: bool = False, batch=None,
                memory=None) -> dict:
    """sb_matmul_plan for an (m, k) x (k, n) product. memory: an array whose
    address stands in for every operand (the planner must never touch it)."""
    base = memory.ctypes.data if memory is not None else 64
    a_row, a_col = a_strides or (k, 1)
    b_row, b_col = b_strides or (n, 1)
    args = _abi.MatmulArgs(_paths.path_index(path), mode, threads, m, n, k, base, a_row, a_col,
                           base, b_row, b_col, int(packed), base, n, 0, 0,
                           ctypes.addressof(batch) if batch is not None else 0)
    info = _abi.PlanInfo()
    status = lib.sb_matmul_plan(ctypes.addressof(args), ctypes.addressof(info))
    assert status == 0, status
    return _info_tuple(info)


def make_batch(shape, a_stride, b_stride, c_stride) -> _abi.Batch:
    batch = _abi.Batch()
    batch.ndim = len(shape)
    for d, (s, sa, sb, sc) in enumerate(zip(shape, a_stride, b_stride, c_stride)):
        batch.shape[d], batch.a_stride[d], batch.b_stride[d], batch.c_stride[d] = s, sa, sb, sc
    return batch


SHAPES = [(1, 1, 1), (1, 768, 768), (5, 7, 3), (64, 64, 64), (128, 128, 64), (32, 768, 768),
          (200, 3000, 300), (1024, 1024, 1024), (4096, 768, 3072), (0, 5, 5), (5, 0, 5),
          (5, 5, 0), (13, 1, 700), (48, 20000, 8)]


def test_every_tile_satisfies_the_framework():
    assert lib.sb_plan_selfcheck() == 0


@pytest.mark.parametrize("path", path_params())
@pytest.mark.parametrize("mode", [0, 1], ids=["fast", "exact"])
def test_chunks_do_not_depend_on_the_thread_budget(path, mode):
    for m, n, k in SHAPES:
        plans = [plan_matmul(path, mode, t, m, n, k) for t in (1, 2, 3, 64)]
        for p in plans[1:]:
            different = {key for key in p if p[key] != plans[0][key]} - {"threads",
                                                                         "workspace_bytes"}
            assert not different, ((m, n, k), different, plans[0], p)
        assert plans[0]["threads"] == (0 if plans[0]["route"] == 0 else 1)
        assert all(p["threads"] <= min(t, max(1, p["compute_chunks"]))
                   for p, t in zip(plans, (1, 2, 3, 64)))


def test_routes_follow_the_shape():
    path = samebits_path()
    assert plan_matmul(path, 1, 2, 0, 5, 5)["route"] == 0          # empty
    assert plan_matmul(path, 1, 2, 5, 5, 0)["route"] == 1          # no terms
    assert plan_matmul(path, 1, 2, 1, 768, 768)["route"] == 4      # one row: the row kernel
    big = plan_matmul(path, 1, 2, 1024, 1024, 1024)
    assert big["route"] == 2 and big["b_source"] == 2              # tiles over B packed whole
    assert big["threads"] == 2 and big["prepare_chunks"] > 0
    wide = plan_matmul(path, 1, 2, 32, 768, 768)
    assert wide["route"] == 3 and wide["pack_a"] == 1               # few rows: panels
    narrow = plan_matmul(path, 1, 2, 40, 256, 512)
    assert narrow["route"] == 3 and narrow["a_in_place"] == 1       # A read where it is
    assert plan_matmul(path, 1, 2, 64, 64, 64)["a_in_place"] == 1   # small: no packing
    packed = plan_matmul(path, 1, 2, 1024, 1024, 1024, packed=True)
    assert packed["b_source"] == 1 and packed["prepare_chunks"] == 0
    # B's columns contiguous, its rows apart (linear's weights): on paths that
    # read A in place the transposed product on the column route, B in place;
    # elsewhere the row kernel over B packed whole
    transposed = plan_matmul(path, 1, 2, 1, 300, 70, b_strides=(1, 70))
    assert (transposed["m"], transposed["n"], transposed["k"]) == (1, 300, 70)
    if path == "scalar":
        assert transposed["route"] == 4 and transposed["b_source"] == 2
    else:
        assert transposed["route"] == 5 and transposed["b_source"] == 3
    apart = plan_matmul(path, 1, 2, 1, 300, 70, b_strides=(2, 140))   # neither contiguous
    assert apart["route"] == 4 and apart["b_source"] == 2             # packed
    tiny = plan_matmul(path, 1, 4, 16, 16, 16)
    assert tiny["threads"] == 1                                     # not worth a wake-up


@pytest.mark.parametrize("path", path_params())
@pytest.mark.parametrize("m,n,k", [(64, 169, 512), (32, 729, 128), (16, 40, 4000)])
def test_one_tile_row_with_few_panels_shares_them(path, m, n, k):
    """One tile row whose B makes fewer than 8 panels (a small map's 1x1
    layer) is cut into narrower panels, so that two threads have chunks (it
    used to be one chunk); every output keeps its sum order: exact mode is
    the oracle's bits at 1 and 2 threads."""
    p = plan_matmul(path, 1, 2, m, n, k)
    assert p["compute_chunks"] >= 2, p                              # (some paths: tiles)
    a, b = test_values((m, k), 1, 5), test_values((k, n), 2, 5)
    want = exact_oracle(a, b)
    for threads in (1, 2):
        out = np.empty((m, n), np.float32)
        raw_sgemm(path, "exact", threads, a, b, out)
        assert_same_bits(out, want, f"{path} {m}x{n}x{k} at {threads} threads")


@pytest.mark.parametrize("path", path_params())
@pytest.mark.parametrize("n,k,b_strides", [(1000, 2048, None), (1000, 300, (1, 300)),
                                           (777, 96, None), (4100, 33, None), (40, 7, None)])
def test_one_row_is_cut_into_chunks_for_the_threads(path, n, k, b_strides):
    """The row route (m = 1: a classifier, a Gemm on one row) cuts n into
    about 8 chunks of whole row-kernel groups, so that two threads both
    stream B (ResNet-50's 1 x 1000 x 2048 was one chunk); every output keeps
    its sum order: exact mode is the oracle's bits at 1 and 2 threads, B in
    place, with a ragged last group, and packed (columns apart)."""
    p = plan_matmul(path, 1, 2, 1, n, k, b_strides=b_strides)
    if p["route"] != 4:
        pytest.skip(f"{path}: one row takes route {p['route']} here, not the row kernel")
    assert p["compute_chunks"] >= min(6, max(1, n // 256)), p   # (groups rounded up)
    a = test_values((1, k), 1, 5)
    b = test_values((k, n), 2, 5)
    b_given = b if b_strides is None else np.ascontiguousarray(b.T).T
    want = exact_oracle(a, b)
    for threads in (1, 2):
        out = np.empty((1, n), np.float32)
        raw_sgemm(path, "exact", threads, a, b_given, out)
        assert_same_bits(out, want, f"{path} 1x{n}x{k} at {threads} threads")


def samebits_path() -> str:
    return _paths.paths()[-1]


def test_planning_touches_no_memory():
    memory = np.full(1 << 16, 7.0, np.float32)
    for (m, n, k), mode in itertools.product(SHAPES, (0, 1)):
        if m * k > memory.size or k * n > memory.size or m * n > memory.size:
            continue
        plan_matmul(samebits_path(), mode, 2, m, n, k, memory=memory)
    assert (memory == 7.0).all()


def test_batch_dimensions_that_stack_rows_fold_into_m():
    # (8, 128, 64) contiguous times one (64, 32): one product of 1024 rows.
    batch = make_batch([8], [128 * 64], [0], [128 * 32])
    p = plan_matmul(samebits_path(), 1, 2, 128, 32, 64, batch=batch)
    assert (p["products"], p["m"]) == (1, 1024)
    # Attention heads: (12, 128, 64) times (12, 64, 128): twelve products in one run.
    heads = make_batch([12], [128 * 64], [64 * 128], [128 * 128])
    p = plan_matmul(samebits_path(), 1, 2, 128, 128, 64, batch=heads)
    assert (p["products"], p["m"]) == (12, 128)
    assert p["compute_chunks"] % 12 == 0
    # Dimensions of extent 1 are dropped, whatever their strides.
    ones = make_batch([1, 3, 1], [999, 128 * 64, -5], [7, 64 * 128, 3], [1, 128 * 128, 0])
    assert plan_matmul(samebits_path(), 1, 2, 128, 128, 64, batch=ones)["products"] == 3


def test_conv_plans_cover_every_image_and_group():
    path = _paths.path_index(samebits_path())
    x = np.zeros((4, 8, 14, 14), np.float32)
    w = np.zeros((16, 4, 3, 3), np.float32)
    y = np.zeros((4, 16, 14, 14), np.float32)
    args = _abi.Conv2dArgs(path, 1, 2, 4, 8, 14, 14, 16, 3, 3, 2, 1, 1, 1, 1, 1, 1, 1, 1,
                           x.ctypes.data, w.ctypes.data, 0, 0, 0, y.ctypes.data)
    info = _abi.PlanInfo()
    assert lib.sb_conv2d_plan(ctypes.addressof(args), ctypes.addressof(info)) == 0
    assert info.products == 8 and (info.m, info.n, info.k) == (8, 196, 36)
    assert (y == 0).all()
    depthwise = _abi.Conv2dArgs(path, 1, 2, 4, 8, 14, 14, 8, 3, 3, 8, 1, 1, 1, 1, 1, 1, 1, 1,
                                x.ctypes.data, w.ctypes.data, 0, 0, 0, y.ctypes.data)
    assert lib.sb_conv2d_plan(ctypes.addressof(depthwise), ctypes.addressof(info)) == 0
    assert info.route == 6 and info.products == 32
