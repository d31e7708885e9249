"""The models hash suite: samebits' reference networks (ResNet-50,
MobileNetV3-large, BERT-base, MiniLM-L6, the Whisper-small encoder) built as
ONNX files and run by samebits.onnx. Exact outputs must hash to the pinned
digests on every path and thread count; both modes must agree with ONNX
Runtime within a stated tolerance; and the runner must give the same bits
without numpy, from buffers."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("onnx")

import samebits  # noqa: E402
import samebits.onnx as so  # noqa: E402
from samebits._binding import paths as _paths  # noqa: E402
from samebits.onnx import reference, suite  # noqa: E402

from conftest import path_or_skip  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]

from model_digests import LARGE, PINNED, SMALL  # noqa: E402,F401  (the pinned digests: every host's tests read them)


@pytest.fixture(scope="module")
def files():
    built: dict[str, tuple[bytes, dict]] = {}

    def get(name: str):
        if name not in built:
            data, packed = suite.build_files([name])[name]
            built[name] = (data, suite.unpack_feeds(packed))
        return built[name]
    return get


def test_suite_covers_the_pinned_networks():
    assert set(PINNED) == set(suite.SUITE_NETWORKS) == set(reference.NETWORKS)
    assert suite.MODELS_SUITE_VERSION == 1


@pytest.mark.parametrize("network", list(PINNED))
def test_exact_digest_is_pinned_at_1_and_2_threads(files, network):
    data, feeds = files(network)
    for threads in (1, 2):
        assert suite.network_digest(data, feeds, "exact", None, threads) == PINNED[network], \
            (network, threads)


@pytest.mark.parametrize("path", _paths.ALL_PATHS)
@pytest.mark.parametrize("network", SMALL)
def test_exact_digest_on_every_path(files, network, path):
    path_or_skip(path)
    data, feeds = files(network)
    assert suite.network_digest(data, feeds, "exact", path, 1) == PINNED[network]


# whisper_small_encoder on the scalar path takes two minutes, a tenth of make
# test's CI budget, so that one case runs in make test-long. Here the scalar
# path is held to the pinned digests on the other four networks (their
# convolutions, attention and GELU among them), and whisper on every other
# path.
_LARGE_CASES = [pytest.param(network, path, marks=pytest.mark.long)
                if (network, path) == ("whisper_small_encoder", "scalar") else (network, path)
                for network in LARGE for path in _paths.ALL_PATHS]


@pytest.mark.slow
@pytest.mark.parametrize("network,path", _LARGE_CASES)
def test_exact_digest_on_every_path_large(files, network, path):
    """At 1 thread: test_exact_digest_is_pinned_at_1_and_2_threads holds the
    second thread count, and chunks never depend on it."""
    path_or_skip(path)
    data, feeds = files(network)
    assert suite.network_digest(data, feeds, "exact", path, 1) == PINNED[network]


def test_fast_mode_repeats_across_threads(files):
    data, feeds = files("minilm_l6")
    assert suite.network_digest(data, feeds, "fast", None, 1) == \
        suite.network_digest(data, feeds, "fast", None, 2)


# ONNX Runtime computes in another order (and fuses): outputs agree within
# 5e-5 of the output's largest magnitude. Measured maxima are far below it:
# 1e-6 to 2e-6 of the largest magnitude, exact and fast alike.
ORT_TOLERANCE = 5e-5


@pytest.mark.parametrize("network", list(PINNED))
def test_both_modes_agree_with_onnxruntime(network):
    ort = pytest.importorskip("onnxruntime")
    data = reference.build(network)
    feeds = reference.inputs(network, suite.SUITE_NETWORKS[network])
    want = ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(None, feeds)[0]
    scale = float(np.abs(want).max())
    assert scale > 0.1 and np.isfinite(want).all()
    for mode in ("exact", "fast"):
        got = list(so.load(data, mode=mode).run(feeds).values())[0]
        assert got.shape == want.shape and got.dtype == np.float32
        err = float(np.abs(got.astype(np.float64) - want).max())
        assert err <= ORT_TOLERANCE * scale, (network, mode, err, scale)


def test_outputs_depend_on_the_input(files):
    """A reference network whose output ignored its input would hash the
    same for a runner bug that loses the signal: two inputs must give outputs
    apart by well over rounding (ResNet-50's synthetic weights leave a large
    input-independent part: its entries differ by about 3.5% of the spread)."""
    for network in ("resnet50", "mobilenet_v3_large", "minilm_l6"):
        data = reference.build(network)
        y = list(so.load(data).run(reference.inputs(network, 2)).values())[0]
        assert np.abs(y[0] - y[1]).max() > 0.01 * y.std(), network


def test_reference_files_are_deterministic():
    assert reference.build("mobilenet_v3_large") == reference.build("mobilenet_v3_large")
    a = reference.uniform("w", (5,), 1.0)
    assert a.view(np.uint32).tolist() == reference.uniform("w", (5,), 1.0).view(np.uint32).tolist()
    assert not np.array_equal(a, reference.uniform("w", (5,), 1.0, seed=7))


def test_runner_without_numpy_gives_the_same_bits(files, tmp_path):
    """In a process where numpy cannot be imported, buffers in and out:
    the digests equal the pinned ones (MiniLM runs the int64 shape and
    mask path; MobileNet the convolutions, SE blocks and hardswish)."""
    for network in ("minilm_l6", "mobilenet_v3_large"):
        data, packed = suite.build_files([network])[network]
        (tmp_path / f"{network}.onnx").write_bytes(data)
        (tmp_path / f"{network}.feeds").write_bytes(packed)
    script = textwrap.dedent(f"""
        import sys
        sys.modules["numpy"] = None          # import numpy now raises ImportError
        import samebits.onnx as so
        from samebits.onnx import suite
        from pathlib import Path
        d = Path({str(tmp_path)!r})
        for network in ("minilm_l6", "mobilenet_v3_large"):
            feeds = suite.unpack_feeds((d / f"{{network}}.feeds").read_bytes())
            sess = so.load(d / f"{{network}}.onnx", mode="exact")
            out = sess.run(feeds)
            first = next(iter(out.values()))
            assert isinstance(first, memoryview), type(first)
            print(network, suite.output_digest(out))
        """)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(Path(samebits.__file__).parent.parent)] + sys.path)}
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr
    got = dict(line.split() for line in proc.stdout.splitlines())
    assert got == {"minilm_l6": PINNED["minilm_l6"],
                   "mobilenet_v3_large": PINNED["mobilenet_v3_large"]}


def test_feeds_container_round_trips():
    feeds = {"a": np.arange(6, dtype=np.float32).reshape(2, 3) - 2.5,
             "ids": np.array([[1, -2, 2 ** 40]], np.int64)}
    back = suite.unpack_feeds(suite.pack_feeds(feeds))
    assert np.array_equal(np.asarray(back["a"]), feeds["a"])
    assert np.array_equal(np.asarray(back["ids"]), feeds["ids"])
    # a 0-d input keeps its shape (silero-vad's sample rate, which a model
    # checks: it came back as shape (1,) and the run was refused), and a
    # strided one its values
    scalars = suite.unpack_feeds(suite.pack_feeds({"sr": np.array(16000, np.int64),
                                                   "t": feeds["a"][:, ::2]}))
    assert scalars["sr"].shape == () and np.asarray(scalars["sr"]) == 16000
    assert np.array_equal(np.asarray(scalars["t"]), feeds["a"][:, ::2])
    with pytest.raises(TypeError, match="float64"):
        suite.pack_feeds({"x": np.zeros(2)})


def test_output_digest_of_integer_outputs():
    """Integer and bool outputs hash as little-endian int64 in C order,
    whatever their own type and rank."""
    import hashlib
    ints = np.array([[1, -2], [3, 4]], np.int32)
    want = hashlib.sha256(ints.astype("<i8").tobytes()).hexdigest()
    assert suite.output_digest({"y": ints}) == want
    assert suite.output_digest({"y": ints.astype(np.int64)}) == want
    flags = np.array([[True, False]])
    assert suite.output_digest({"b": flags}) == \
        hashlib.sha256(np.array([[1, 0]], "<i8").tobytes()).hexdigest()


def test_suite_lines_parse():
    line = suite.format_line("resnet50", "exact", "avx2", 2, "ab" * 32)
    assert suite.parse_line(line) == ("resnet50", "exact", "avx2", 2, "ab" * 32)
    with pytest.raises(ValueError):
        suite.parse_line("exact avx2 threads=1 sha256=00")
