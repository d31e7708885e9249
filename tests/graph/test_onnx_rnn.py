"""samebits.onnx's LSTM, GRU and RNN against ONNX Runtime in the forms
exporters emit (directions, layouts, biases, initial states, GRU's
linear_before_reset), exact mode bit for bit against a plain-loop oracle of
the order docs/onnx.md writes down, and weights computed in the graph (or
fed as inputs) bit for bit against the same weights as constants, every
path, 1 and 2 threads. Plus the refusals."""
from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")
from onnx import helper  # noqa: E402

import samebits.onnx as so  # noqa: E402

import elementwise_reference as ref  # noqa: E402
from conftest import bits  # noqa: E402
from test_onnx_ops import F, compare, model, rand  # noqa: E402

SEQ, BATCH, INPUT, H = 5, 3, 4, 6


def rnn_model(kind, direction="forward", bias=True, initial=False, layout=0, opset=14,
              seq_lens=False, weights_in_graph=False, **attrs):
    """weights_in_graph: W, R and B graph inputs, W read through a Neg node
    (an intermediate); the feeds then hold them (W negated)."""
    gates = {"LSTM": 4, "GRU": 3, "RNN": 1}[kind]
    dirs = 2 if direction == "bidirectional" else 1
    inits = {"W": rand(dirs, gates * H, INPUT, scale=0.5), "R": rand(dirs, gates * H, H, scale=0.5)}
    names = ["X", "W", "R"]
    if bias:
        inits["B"] = rand(dirs, 2 * gates * H, scale=0.5)
    names.append("B" if bias else "")
    feeds = {"X": rand(*((SEQ, BATCH, INPUT) if layout == 0 else (BATCH, SEQ, INPUT)))}
    if seq_lens:
        inits["L"] = np.full(BATCH, SEQ, np.int32)
    names.append("L" if seq_lens else "")
    state = (dirs, BATCH, H) if layout == 0 else (BATCH, dirs, H)
    if initial:
        feeds["h0"] = rand(*state)
        names.append("h0")
        if kind == "LSTM":
            feeds["c0"] = rand(*state)
            names.append("c0")
    outs = ["Y", "Y_h"] + (["Y_c"] if kind == "LSTM" else [])
    if opset >= 14:
        attrs["layout"] = layout
    nodes = []
    if weights_in_graph:
        for n in ("W", "R", "B"):
            if n in inits:
                feeds[n] = -inits[n] if n == "W" else inits[n]
        inits = {n: v for n, v in inits.items() if n not in ("W", "R", "B")}
        nodes.append(helper.make_node("Neg", ["W"], ["Wn"]))
        names[1] = "Wn"
    nodes.append(helper.make_node(kind, names, outs, hidden_size=H, direction=direction, **attrs))
    data = model(nodes, {n: (F, list(v.shape)) for n, v in feeds.items()},
                 {o: (F, None) for o in outs}, inits, opset)
    return data, feeds, inits


@pytest.mark.parametrize("kind", ["LSTM", "GRU", "RNN"])
@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
@pytest.mark.parametrize("bias,initial", [(True, False), (False, True), (True, True)])
def test_rnn_matches_onnxruntime(kind, direction, bias, initial):
    data, feeds, _ = rnn_model(kind, direction, bias, initial)
    (compare if kind != "RNN" else compare_with_onnxruntime)(data, feeds, rtol=1e-5, atol=1e-6)


def compare_with_onnxruntime(data, feeds, rtol, atol):
    """compare() for forms the Python runner never ran (no record): ONNX
    Runtime's values, and exact mode's bits at 1 and 2 threads alike."""
    import onnxruntime as ort
    want = ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(None, feeds)
    exact = [so.load(data, mode="exact", threads=n).run(feeds) for n in (1, 2)]
    fast = so.load(data, mode="fast").run(feeds)
    for w, e1, e2, f in zip(want, *(list(o.values()) for o in (*exact, fast))):
        assert bits(e1).tobytes() == bits(e2).tobytes()
        for got in (e1, f):
            np.testing.assert_allclose(got, w, rtol=rtol, atol=atol)


@pytest.mark.parametrize("kind", ["LSTM", "GRU"])
def test_rnn_batch_first_layout_and_full_sequence_lens(kind):
    """layout=1 (which ONNX Runtime's CPU kernels refuse): the layout=0 node
    on the transposed tensors, bit for bit."""
    data, feeds, _ = rnn_model(kind, "bidirectional", initial=True, layout=1, seq_lens=True)
    m = onnx.load_from_string(data)
    m.graph.node[0].attribute[-1].i = 0                 # layout
    assert m.graph.node[0].attribute[-1].name == "layout"
    for inp in m.graph.input:
        dims = inp.type.tensor_type.shape.dim
        dims[0].dim_value, dims[1].dim_value = dims[1].dim_value, dims[0].dim_value
    swapped = {n: np.ascontiguousarray(v.swapaxes(0, 1)) for n, v in feeds.items()}
    compare(m.SerializeToString(), swapped, rtol=1e-5, atol=1e-6)
    for mode in ("exact", "fast"):
        got = so.load(data, mode=mode).run(feeds)
        want = so.load(m.SerializeToString(), mode=mode).run(swapped)
        assert bits(got["Y"]).tobytes() == bits(np.ascontiguousarray(
            want["Y"].transpose(2, 0, 1, 3))).tobytes()
        for name in ("Y_h", "Y_c") if kind == "LSTM" else ("Y_h",):
            assert bits(got[name]).tobytes() == bits(np.ascontiguousarray(
                want[name].swapaxes(0, 1))).tobytes()
    data, feeds, _ = rnn_model(kind, opset=11)
    compare(data, feeds, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("reset_first", [0, 1])
def test_gru_linear_before_reset(reset_first):
    data, feeds, _ = rnn_model("GRU", "bidirectional", initial=True,
                               linear_before_reset=reset_first)
    compare(data, feeds, rtol=1e-5, atol=1e-6)


def _serial_linear(x, w, b):
    """x @ w.T + b with each sum serial from +0 in float32, then one add."""
    out = np.empty((x.shape[0], w.shape[0]), np.float32)
    for i in range(x.shape[0]):
        for j in range(w.shape[0]):
            acc = np.float32(0.0)
            for p in range(x.shape[1]):
                acc = np.float32(acc + np.float32(x[i, p] * w[j, p]))
            out[i, j] = acc
    return out + b


def test_lstm_exact_is_the_documented_order():
    data, feeds, inits = rnn_model("LSTM", "forward", bias=True, initial=True)
    got = so.load(data, mode="exact").run(feeds)
    w, r, b = inits["W"][0], inits["R"][0], inits["B"][0]
    h, c = feeds["h0"][0], feeds["c0"][0]
    for t in range(SEQ):
        g = _serial_linear(feeds["X"][t], w, b[:4 * H]) + _serial_linear(h, r, b[4 * H:])
        i, o, f, cc = (g[:, k * H:(k + 1) * H] for k in range(4))
        c = ref.sigmoid(f) * c + ref.sigmoid(i) * ref.tanh(cc)
        h = ref.sigmoid(o) * ref.tanh(c)
        assert bits(got["Y"][t, 0]).tobytes() == bits(h).tobytes(), t
    assert bits(got["Y_c"][0]).tobytes() == bits(c).tobytes()


def test_rnn_exact_is_the_documented_order():
    """RNN: h = tanh(linear(x, W, Wb) + linear(h, R, Rb)), each step."""
    data, feeds, inits = rnn_model("RNN", "forward", bias=True, initial=True)
    got = so.load(data, mode="exact").run(feeds)
    w, r, b = inits["W"][0], inits["R"][0], inits["B"][0]
    h = feeds["h0"][0]
    for t in range(SEQ):
        h = ref.tanh(_serial_linear(feeds["X"][t], w, b[:H]) + _serial_linear(h, r, b[H:]))
        assert bits(got["Y"][t, 0]).tobytes() == bits(h).tobytes(), t
    assert bits(got["Y_h"][0]).tobytes() == bits(h).tobytes()


@pytest.mark.parametrize("kind,attrs", [("LSTM", {}), ("GRU", {"linear_before_reset": 0}),
                                        ("GRU", {"linear_before_reset": 1}), ("RNN", {})])
@pytest.mark.parametrize("bias", [True, False])
def test_weights_computed_in_the_graph(kind, attrs, bias):
    """W through a Neg node, R and B graph inputs: packed at each run, the
    bits of the same weights as constants (packed at load)."""
    import samebits
    data, feeds, inits = rnn_model(kind, "bidirectional", bias, initial=True, **attrs)
    computed, feeds2, _ = rnn_model(kind, "bidirectional", bias, initial=True, weights_in_graph=True,
                                    **attrs)
    # the same operands: the constants' values, W negated for the Neg node
    feeds2 = {**feeds, **{n: -v if n == "W" else v for n, v in inits.items() if n in feeds2}}
    for path in samebits.paths():
        with samebits.use_path(path):
            for mode in ("exact", "fast"):
                want = so.load(data, mode=mode).run(feeds)
                for threads in (1, 2):
                    got = so.load(computed, mode=mode, threads=threads).run(feeds2)
                    for name in want:
                        assert bits(got[name]).tobytes() == bits(want[name]).tobytes(), \
                            (path, mode, threads, name)
    compare_with_onnxruntime(computed, feeds2, rtol=1e-5, atol=1e-6)
    free = onnx.load_from_string(computed)      # R without a declared shape: checked at run
    next(i for i in free.graph.input if i.name == "R").type.tensor_type.ClearField("shape")
    sess = so.load(free.SerializeToString())
    with pytest.raises(so.UnsupportedModelError, match="do not fit"):
        sess.run({**feeds2, "R": feeds2["R"][:, :, :-1]})


@pytest.mark.parametrize("attrs,match", [
    ({"clip": 3.0}, "clip"), ({"activations": ["Tanh", "Tanh", "Tanh"]}, "activations"),
    ({"input_forget": 1}, "input_forget"),
])
def test_rnn_refusals(attrs, match):
    data, _, _ = rnn_model("LSTM", **attrs)
    with pytest.raises(so.UnsupportedModelError, match=match):
        so.load(data)


def test_rnn_shorter_sequences_are_refused_at_run():
    data, feeds, _ = rnn_model("GRU")
    node = onnx.load_from_string(data)
    node.graph.input.append(helper.make_tensor_value_info("L", onnx.TensorProto.INT32, [BATCH]))
    node.graph.node[0].input[4] = "L"
    sess = so.load(node.SerializeToString())
    with pytest.raises(ValueError, match="sequence_lens"):
        sess.run({**feeds, "L": np.array([SEQ, 2, SEQ], np.int32)})


@pytest.mark.parametrize("direction", ["forward", "bidirectional"])
def test_lstm_peepholes(direction):
    """LSTM with input P: i and f see c(t-1), o sees c(t), each as
    g + p * c (one multiply, one add) before the sigmoid; exact bit for bit
    against the serial-loop oracle, and ONNX Runtime's values."""
    data, feeds, inits = rnn_model("LSTM", direction, bias=True, initial=True)
    dirs = 2 if direction == "bidirectional" else 1
    m = onnx.load_from_string(data)
    peep = rand(dirs, 3 * H, scale=0.5)
    m.graph.initializer.append(onnx.numpy_helper.from_array(peep, "P"))
    node = m.graph.node[0]
    while len(node.input) < 7:
        node.input.append("")
    node.input.append("P")
    data = m.SerializeToString()
    got = so.load(data, mode="exact").run(feeds)
    w, r, b = inits["W"][0], inits["R"][0], inits["B"][0]
    h, c = feeds["h0"][0], feeds["c0"][0]
    p_i, p_o, p_f = peep[0, :H], peep[0, H:2 * H], peep[0, 2 * H:]
    for t in range(SEQ):
        g = _serial_linear(feeds["X"][t], w, b[:4 * H]) + _serial_linear(h, r, b[4 * H:])
        i, o, f, cc = (g[:, k * H:(k + 1) * H] for k in range(4))
        i = ref.sigmoid(i + p_i * c)
        f = ref.sigmoid(f + p_f * c)
        c = f * c + i * ref.tanh(cc)
        o = ref.sigmoid(o + p_o * c)
        h = o * ref.tanh(c)
        assert bits(got["Y"][t, 0]).tobytes() == bits(h).tobytes(), t
    compare_with_onnxruntime(data, feeds, rtol=1e-5, atol=1e-6)
