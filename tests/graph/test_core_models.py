"""The reference networks through the C graph runtime from C alone: the
C program tests/native/run_model.c, built for arm64 and run under qemu-user,
gives the pinned models-suite digests (whole networks checked on arm64's
neon path and on the sme path at every streaming vector length, where the
Python package cannot run); natively it gives them too (the three small
networks at 1 and 2 threads, the large two at 1)."""
from __future__ import annotations

import concurrent.futures
import os
import re
import subprocess
from pathlib import Path

import pytest

pytest.importorskip("onnx")

from samebits.onnx import suite  # noqa: E402

from conftest import require_tool  # noqa: E402
from native_build import build_check, qemu_arm64  # noqa: E402
from model_digests import LARGE, PINNED, SMALL  # noqa: E402

pytestmark = pytest.mark.slow




@pytest.fixture(scope="module")
def network_files(tmp_path_factory) -> dict[str, tuple[Path, Path]]:
    out = tmp_path_factory.mktemp("networks")
    files = {}
    for name, (model, feeds) in suite.build_files(list(PINNED)).items():
        (out / f"{name}.onnx").write_bytes(model)
        (out / f"{name}.feeds").write_bytes(feeds)
        files[name] = (out / f"{name}.onnx", out / f"{name}.feeds")
    return files


def _digest(cmd: list[str]) -> str:
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=3000)
    assert r.returncode == 0, r.stdout + r.stderr
    return re.search(r"^digest ([0-9a-f]{64}) ", r.stdout, re.M).group(1)


def test_native_program_gives_the_pinned_digests(network_files, tmp_path):
    program = tmp_path / "run_model"
    build_check(require_tool("cc"), ["run_model.c", "sha256.c"], program,
                x86=os.uname().machine == "x86_64")
    for name, (model, feeds) in network_files.items():
        # the large networks at 1 thread only: test_onnx_models pins them at
        # 2 threads through the same C core
        for threads in (1, 2) if name in SMALL else (1,):
            got = _digest([str(program), str(model), str(feeds), "--threads", str(threads)])
            assert got == PINNED[name], (name, threads)


def _under_qemu(network_files, names, tmp_path, path: str = "neon",
                vector_bits: tuple = (None,)) -> dict[tuple, str]:
    """The networks' digests on one of arm64's paths, at each streaming
    vector length given (the sme path's), one run per core at a time."""
    cc = require_tool("aarch64-linux-gnu-gcc")
    qemu = require_tool("qemu-aarch64")
    program = tmp_path / "run_model_arm64"
    build_check(cc, ["run_model.c", "sha256.c"], program, x86=False)

    def one(job: tuple) -> tuple[tuple, str]:
        name, bits = job
        model, feeds = network_files[name]
        return job, _digest([*qemu_arm64(qemu, bits), str(program), str(model), str(feeds),
                             "--threads", "1", "--path", path])
    jobs = [(name, bits) for name in names for bits in vector_bits]
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        return dict(pool.map(one, jobs))


SME_VECTOR_BITS = (128, 256, 512, 1024, 2048)


def test_arm64_under_qemu_gives_the_pinned_digests(network_files, tmp_path):
    """The three smaller networks (a CNN with residual adds, a depthwise CNN
    with squeeze-and-excitation, a transformer encoder: every operator type of
    the two large ones) on the neon path under qemu, in make test."""
    assert _under_qemu(network_files, SMALL, tmp_path) == {(n, None): PINNED[n] for n in SMALL}


def test_arm64_sme_under_qemu_gives_the_pinned_digests(network_files, tmp_path):
    """The sme path: the depthwise CNN (convolutions, products, squeeze and
    excitation) at every streaming vector length from 128 to 2048 bits
    (emulated outer products are slow: the other networks are make
    test-long's)."""
    got = _under_qemu(network_files, ["mobilenet_v3_large"], tmp_path, "sme", SME_VECTOR_BITS)
    assert got == {("mobilenet_v3_large", b): PINNED["mobilenet_v3_large"] for b in SME_VECTOR_BITS}


@pytest.mark.long
def test_arm64_sme_under_qemu_gives_the_pinned_digests_all(network_files, tmp_path):
    """The three smaller networks on the sme path at every streaming vector
    length (an hour or more of emulation): make test-long."""
    got = _under_qemu(network_files, SMALL, tmp_path, "sme", SME_VECTOR_BITS)
    assert got == {(n, b): PINNED[n] for n in SMALL for b in SME_VECTOR_BITS}


@pytest.mark.long
def test_arm64_under_qemu_gives_the_pinned_digests_large(network_files, tmp_path):
    """bert_base and whisper_small_encoder under qemu: 10 to 30 minutes of
    emulation on a 2-core machine, so in make test-long, not make test."""
    assert _under_qemu(network_files, LARGE, tmp_path) == {(n, None): PINNED[n] for n in LARGE}
