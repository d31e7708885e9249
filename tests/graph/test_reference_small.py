"""The small reference networks (samebits.onnx.reference.SMALL_NETWORKS: a
silero-vad-shaped voice-activity model, SqueezeNet 1.1, a one-hot byte
classifier), which bench/bench_models.py times where dispatch dominates:
they build, load and run in samebits.onnx in both modes, agree with ONNX
Runtime, and exact mode gives the same bits at 1 and 2 threads. They are
not part of the pinned models hash suite (reference.NETWORKS)."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("onnx")

import samebits.onnx as so  # noqa: E402
from samebits.onnx import reference  # noqa: E402

ORT_TOLERANCE = 5e-5        # of the output's largest magnitude
SMALL = list(reference.SMALL_NETWORKS)


@pytest.fixture(scope="module")
def built():
    return {name: reference.build(name) for name in SMALL}


def output(data: bytes, feeds: dict, mode: str, threads: int) -> np.ndarray:
    out = so.load(data, mode=mode, threads=threads).run(feeds)
    assert len(out) == 1
    return list(out.values())[0]


def test_small_networks_are_apart_from_the_pinned_ones():
    assert SMALL == ["vad_small", "squeezenet_small", "onehot_classifier"]
    assert not set(SMALL) & set(reference.NETWORKS)
    assert len(reference.NETWORKS) == 5


@pytest.mark.parametrize("network", SMALL)
def test_builds_a_valid_deterministic_file(built, network):
    import onnx
    data = built[network]
    assert reference.build(network) == data
    model = onnx.load_from_string(data)
    onnx.checker.check_model(model, full_check=True)
    feeds = reference.inputs(network, 1)
    assert [i.name for i in model.graph.input] == list(feeds)


@pytest.mark.parametrize("network", SMALL)
def test_both_modes_agree_with_onnxruntime(built, network):
    ort = pytest.importorskip("onnxruntime")
    data = built[network]
    feeds = reference.inputs(network, 1)
    want = ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(None, feeds)[0]
    scale = float(np.abs(want).max())
    assert scale > 0.01 and np.isfinite(want).all()
    for mode in ("exact", "fast"):
        got = output(data, feeds, mode, 1)
        assert got.shape == want.shape and got.dtype == np.float32
        err = float(np.abs(got.astype(np.float64) - want).max())
        assert err <= ORT_TOLERANCE * scale, (network, mode, err, scale)


@pytest.mark.parametrize("network", SMALL)
def test_exact_mode_is_the_same_bits_at_1_and_2_threads(built, network):
    data = built[network]
    for batch in (1, 2):
        feeds = reference.inputs(network, batch)
        one = output(data, feeds, "exact", 1)
        two = output(data, feeds, "exact", 2)
        assert one.shape == two.shape and one.shape[0] == batch
        assert one.tobytes() == two.tobytes(), (network, batch)


@pytest.mark.parametrize("network", SMALL)
def test_outputs_depend_on_the_input(built, network):
    """Two entries of a batch give different outputs: the signal reaches
    the output through every layer."""
    y = output(built[network], reference.inputs(network, 2), "exact", 1)
    assert np.abs(y[0] - y[1]).max() > 1e-4 * np.abs(y).max(), network


def test_onehot_classifier_input_is_int32_byte_ids():
    ids = reference.inputs("onehot_classifier", 1)["input_ids"]
    assert ids.dtype == np.int32 and ids.shape == (1, 2048)
    assert ids.min() >= 0 and ids.max() < 256 and len(np.unique(ids)) > 200
