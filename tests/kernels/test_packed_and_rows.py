"""Prepacked B and the single-row / small-m strategies give the blocked bits."""
from __future__ import annotations

import gc
import pickle

import numpy as np
import pytest

import samebits
from conftest import assert_same_bits, duplicate, exact_oracle, test_values, unrunnable_path


@pytest.mark.parametrize("m", [1, 2, 5, 6, 7, 13, 32, 96, 97, 200])
@pytest.mark.parametrize("k,n", [(1, 1), (70, 65), (257, 63), (600, 131), (768, 768)])
def test_packed_equals_unpacked_and_oracle(path, m, k, n):
    a = test_values((m, k), m + k, 6)
    b = test_values((k, n), n + k, 6)
    with samebits.use_path(path):
        packed = samebits.pack(b)
        for mode in ("exact", "fast"):
            plain = samebits.matmul(a, b, mode=mode)
            assert_same_bits(samebits.matmul(a, packed, mode=mode), plain,
                             f"path {path} {mode} m={m} k={k} n={n}")
            bt = np.ascontiguousarray(b.T).T          # B with a column stride: packed per call
            assert_same_bits(samebits.matmul(a, bt, mode=mode), plain, f"{mode} B^T view")
        assert_same_bits(plain if mode == "exact" else samebits.matmul(a, b, mode="exact"),
                         exact_oracle(a, b), f"path {path} exact m={m} k={k} n={n}")


# n past a whole number of the row kernel's groups (128 columns on avx512, 64
# on avx2) reads its ragged last group in place through a window over B's last
# columns; 2098 puts that window across a chunk boundary (2048 columns)
@pytest.mark.parametrize("n", [1, 15, 16, 17, 63, 64, 65, 128, 255, 256, 257, 1000, 2098])
def test_single_row_matches_oracle_across_k_blocks(path, n):
    rng = np.random.default_rng(n)
    for k in (3, 256, 257, 700):
        # special values (NaN and inf make many outputs alike), and finite
        # values whose outputs all differ, so that a column read from the
        # wrong place shows
        for a, b in ((test_values((1, k), k, 3), test_values((k, n), n, 3)),
                     (rng.standard_normal((1, k)).astype(np.float32),
                      rng.standard_normal((k, n)).astype(np.float32))):
            with samebits.use_path(path):
                got = samebits.matmul(a, b, mode="exact", threads=2)
                assert_same_bits(got, exact_oracle(a, b), f"path {path} 1x{n}x{k}")
                assert_same_bits(samebits.matmul(a, b, mode="exact", threads=1), got, "1 thread")
                # a row taken from a column-major A: a column stride != 1
                a_cm = np.asfortranarray(np.vstack([a, a]))[:1]
                assert_same_bits(samebits.matmul(a_cm, b, mode="exact"), got, "strided row")
                # fast mode: B read in place (the window) gives packed B's bits
                packed = samebits.pack(b)
                for threads in (1, 2):
                    assert_same_bits(samebits.matmul(a, b, mode="fast", threads=threads),
                                     samebits.matmul(a, packed, mode="fast", threads=threads),
                                     f"fast in place vs packed 1x{n}x{k}")


def test_packed_errors():
    b = test_values((8, 5), 1)
    packed = samebits.pack(b)
    assert packed.shape == (8, 5) and packed.nbytes > 0 and packed.path == samebits.path()
    with pytest.raises(ValueError, match=r"\(3, 7\) and \(8, 5\)"):
        samebits.matmul(test_values((3, 7), 2), packed)
    other = next((p for p in samebits.paths() if p != packed.path), None)
    if other:
        with samebits.use_path(other):
            with pytest.raises(ValueError, match="packed for path"):
                samebits.matmul(test_values((3, 8), 2), packed)
    with pytest.raises(TypeError, match="float32"):
        samebits.pack(np.ones((3, 3)))


def test_packed_is_a_copy():
    b = test_values((40, 30), 3)
    packed = samebits.pack(b)
    a = test_values((10, 40), 4)
    want = samebits.matmul(a, b, mode="exact")
    b[:] = 0
    assert_same_bits(samebits.matmul(a, packed, mode="exact"), want, "after changing b")


# ---- Copies and pickles own their packed data ----------------------------------

@pytest.mark.parametrize("how", ["copy", "deepcopy", "pickle2", "pickle5"])
def test_packed_copy_owns_its_memory(how):
    a, b = test_values((9, 70), 1), test_values((70, 33), 2)
    packed = samebits.pack(b)
    want = {mode: samebits.matmul(a, packed, mode=mode) for mode in ("exact", "fast")}
    dup = duplicate(packed, how)
    assert type(dup) is samebits.PackedMatrix
    assert (dup.path, dup.shape, dup.nbytes) == (packed.path, packed.shape, packed.nbytes)
    original = packed.address
    # A copy that kept the original's address read freed memory (ASan:
    # heap-use-after-free): free it, and reuse the memory for other data.
    del packed
    gc.collect()
    others = [samebits.pack(np.full_like(b, np.nan)) for _ in range(8)]
    for mode, bits in want.items():
        assert_same_bits(samebits.matmul(a, dup, mode=mode), bits, f"{how} {mode}")
    assert dup.address != original and dup.address % 64 == 0 and others


def test_unpickling_a_packing_for_a_path_this_machine_cannot_run():
    a, b = test_values((3, 8), 1), test_values((8, 5), 2)
    packed = samebits.pack(b)
    packed.path = unrunnable_path()   # as if packed on a machine that runs that path
    loaded = pickle.loads(pickle.dumps(packed))
    assert loaded.path == packed.path and loaded.shape == (8, 5)
    with pytest.raises(ValueError, match=f"matmul: b was packed for path '{packed.path}' but "
                                         f"the active path is '{samebits.path()}'"):
        samebits.matmul(a, loaded)


def test_unpickling_an_inconsistent_packing_is_refused():
    packed = samebits.pack(test_values((8, 5), 2))
    state = packed.__getstate__()
    for change in ({"data": state["data"][:-4]}, {"nbytes": state["nbytes"] - 4},
                   {"shape": (8, 2**41)}, {"shape": (8,)}, {"version": 0}):
        broken = {**state, **change}
        if "data" not in change and "nbytes" in change:
            broken["data"] = state["data"][:broken["nbytes"]]   # consistent, but not the size
        with pytest.raises(ValueError, match="pack: unpickling a PackedMatrix"):
            samebits.PackedMatrix.__new__(samebits.PackedMatrix).__setstate__(broken)
