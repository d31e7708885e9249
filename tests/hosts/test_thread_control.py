"""The process-wide thread default: samebits.set_num_threads/get_num_threads,
threadpoolctl's controller, and the environment (SAMEBITS_THREADS, then
OMP_NUM_THREADS) read at import."""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import samebits
from samebits._binding import threads as _threads


@pytest.fixture
def restore_threads():
    before = samebits.get_num_threads()
    yield
    samebits.set_num_threads(before)


def _planned_threads(a) -> int:
    return samebits.explain(samebits.matmul, a, a).threads


def test_set_and_get(restore_threads):
    samebits.set_num_threads(1)
    assert samebits.get_num_threads() == 1
    a = np.ones((512, 512), np.float32)
    assert _planned_threads(a) == 1
    samebits.set_num_threads(np.int64(3))
    assert samebits.get_num_threads() == 3
    samebits.set_num_threads(10**6)
    assert samebits.get_num_threads() == 1024


@pytest.mark.parametrize("bad,error", [(0, ValueError), (-2, ValueError), (1.5, TypeError),
                                       ("2", TypeError), (True, TypeError)])
def test_set_refuses_bad_values(bad, error, restore_threads):
    with pytest.raises(error, match="set_num_threads: n must"):
        samebits.set_num_threads(bad)


def test_results_do_not_depend_on_it(restore_threads):
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((300, 200), np.float32), rng.standard_normal((200, 260), np.float32)
    samebits.set_num_threads(1)
    one = samebits.matmul(a, b, mode="exact")
    samebits.set_num_threads(2)
    assert samebits.matmul(a, b, mode="exact").tobytes() == one.tobytes()


def test_threadpoolctl_sees_and_limits_samebits(restore_threads):
    threadpoolctl = pytest.importorskip("threadpoolctl")
    infos = [i for i in threadpoolctl.threadpool_info() if i["internal_api"] == "samebits"]
    assert infos and infos[0]["user_api"] == "samebits"
    assert infos[0]["version"] == samebits.__version__
    assert infos[0]["num_threads"] == samebits.get_num_threads()
    samebits.set_num_threads(2)
    a = np.ones((1024, 1024), np.float32)
    with threadpoolctl.threadpool_limits(1):
        assert samebits.get_num_threads() == 1
        assert _planned_threads(a) == 1          # the pool is not woken
    assert samebits.get_num_threads() == 2
    with threadpoolctl.threadpool_limits(limits=1, user_api="blas"):
        assert samebits.get_num_threads() == 2   # another API's limit
    with threadpoolctl.threadpool_limits(limits={"samebits": 1}):
        assert samebits.get_num_threads() == 1


def _default_in_fresh_process(env: dict) -> str:
    code = "import samebits\ntry:\n print(samebits.get_num_threads())\nexcept ValueError as e:\n print(e)"
    full = {k: v for k, v in os.environ.items()
            if k not in ("SAMEBITS_THREADS", "OMP_NUM_THREADS")}
    full.update(env)
    return subprocess.run([sys.executable, "-c", code], env=full, capture_output=True, text=True,
                          check=True).stdout.strip()


def test_environment_at_import():
    cores = _threads.cpu_count()
    assert _default_in_fresh_process({}) == str(cores)
    assert _default_in_fresh_process({"OMP_NUM_THREADS": "1"}) == "1"
    assert _default_in_fresh_process({"OMP_NUM_THREADS": "1,4"}) == "1"
    assert _default_in_fresh_process({"SAMEBITS_THREADS": "1", "OMP_NUM_THREADS": "9"}) == "1"
    assert "OMP_NUM_THREADS='x' is not an integer" in _default_in_fresh_process(
        {"OMP_NUM_THREADS": "x"})
