"""samebits' reference networks, written as ONNX files with onnx.helper:
ResNet-50, MobileNetV3-large, a BERT-base encoder (and MiniLM-L6) and the
Whisper-small encoder (NETWORKS, pinned by the models hash suite), and three
small networks where dispatch between the kernels dominates (SMALL_NETWORKS:
a silero-vad-shaped voice-activity model, SqueezeNet 1.1, a one-hot byte
classifier), with deterministic synthetic weights.

    from samebits.onnx import reference
    data = reference.build("resnet50")               # the .onnx file's bytes
    feeds = reference.inputs("resnet50", batch=1)    # {name: numpy array}

Nothing is downloaded: every weight comes from a counter-based generator
(SplitMix64 over the tensor's name and the seed), so the same seed gives the
same file on every machine and with every numpy version. The graphs follow
what torch.onnx exports for these models (BatchNormalization kept as its
own node, GELU as its erf formula, the attention reshapes computed from
Shape), so that the runner sees the operators real exports contain.

Needs numpy and onnx (native only). The runner itself needs neither.
"""
from __future__ import annotations

import hashlib
import math
from typing import Any, Callable

import numpy as np

NETWORKS = ("resnet50", "mobilenet_v3_large", "bert_base", "minilm_l6", "whisper_small_encoder")
DEFAULT_SEED = 2026
OPSET = 17


# ---- deterministic values ---------------------------------------------------------

_MASK = np.uint64(0xFFFFFFFFFFFFFFFF)


def _splitmix64(start: int, count: int) -> np.ndarray:
    """SplitMix64 outputs for counters start+1 .. start+count (uint64)."""
    with np.errstate(over="ignore"):
        z = (np.arange(1, count + 1, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
             + np.uint64(start))
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


def uniform(name: str, shape: tuple[int, ...], scale: float, seed: int = DEFAULT_SEED) -> np.ndarray:
    """float32 values k * 2^-23 * scale, k uniform in [-2^23, 2^23), for the
    tensor `name`: the same on every machine."""
    key = int.from_bytes(hashlib.sha256(f"{seed}:{name}".encode()).digest()[:8], "little")
    n = int(np.prod(shape)) if shape else 1
    bits = _splitmix64(key, n) >> np.uint64(40)             # 24 random bits
    k = bits.astype(np.int64) - (1 << 23)
    return (k.astype(np.float32) * np.float32(2.0 ** -23 * scale)).reshape(shape)


# ---- graph building -------------------------------------------------------------------

# A graph's inputs and outputs: onnx ValueInfoProto messages (onnx is imported
# where a graph is built, so its message types stay Any here).
_GraphIO = tuple[list[Any], list[Any]]

class _Graph:
    """Collects nodes and initializers; names are made unique by a counter."""

    def __init__(self, seed: int) -> None:
        from onnx import helper, numpy_helper
        self.helper, self.numpy_helper = helper, numpy_helper
        self.seed = seed
        self.nodes: list[Any] = []   # onnx NodeProto and TensorProto messages
        self.inits: list[Any] = []
        self.count = 0

    def name(self, base: str) -> str:
        self.count += 1
        return f"{base}_{self.count}"

    def const(self, name: str, array: np.ndarray) -> str:
        self.inits.append(self.numpy_helper.from_array(array, name))
        return name

    def weight(self, name: str, shape: tuple[int, ...], scale: float) -> str:
        return self.const(name, uniform(name, shape, scale, self.seed))

    def node(self, op: str, inputs: list[str], outputs: int = 1, **attrs: Any) -> list[str]:
        outs = [self.name(op.lower()) for _ in range(outputs)]
        self.nodes.append(self.helper.make_node(op, inputs, outs, name=self.name(op), **attrs))
        return outs

    def one(self, op: str, inputs: list[str], **attrs: Any) -> str:
        return self.node(op, inputs, 1, **attrs)[0]

    def model(self, name: str, inputs: list[Any], outputs: list[Any]) -> bytes:
        h = self.helper
        graph = h.make_graph(self.nodes, name, inputs, outputs, self.inits)
        model = h.make_model(graph, opset_imports=[h.make_opsetid("", OPSET)],
                             producer_name="samebits.onnx.reference")
        model.ir_version = 8
        data: bytes = model.SerializeToString()
        return data


# ---- convolutional networks -----------------------------------------------------------------

def _conv_bn(g: _Graph, x: str, prefix: str, cin: int, cout: int, k: int, stride: int = 1,
             groups: int = 1, act: str = "", gain: float = 1.0) -> str:
    """Conv (no bias), BatchNormalization, then the activation. Weights are
    uniform with variance gain / fan_in."""
    fan_in = cin // groups * k * k
    w = g.weight(f"{prefix}.conv.weight", (cout, cin // groups, k, k),
                 math.sqrt(3.0 * gain / fan_in))
    y = g.one("Conv", [x, w], kernel_shape=[k, k], strides=[stride, stride],
              pads=[k // 2] * 4, group=groups, dilations=[1, 1])
    gamma = g.const(f"{prefix}.bn.weight", 1.0 + uniform(f"{prefix}.bn.weight", (cout,), 0.1,
                                                         g.seed))
    beta = g.weight(f"{prefix}.bn.bias", (cout,), 0.1)
    mean = g.weight(f"{prefix}.bn.running_mean", (cout,), 0.1)
    var = g.const(f"{prefix}.bn.running_var",
                  1.0 + uniform(f"{prefix}.bn.running_var", (cout,), 0.5, g.seed))
    y = g.one("BatchNormalization", [y, gamma, beta, mean, var], epsilon=1e-5, momentum=0.9)
    if act == "relu":
        y = g.one("Relu", [y])
    elif act == "hardswish":
        y = g.one("HardSwish", [y])
    return y


def _resnet50(g: _Graph) -> _GraphIO:
    h = g.helper
    from onnx import TensorProto
    x = "input"
    y = _conv_bn(g, x, "conv1", 3, 64, 7, 2, act="relu")
    y = g.one("MaxPool", [y], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    cin = 64
    for stage, (blocks, width) in enumerate(zip((3, 4, 6, 3), (64, 128, 256, 512))):
        for b in range(blocks):
            stride = 2 if b == 0 and stage > 0 else 1
            p = f"layer{stage + 1}.{b}"
            out = width * 4
            z = _conv_bn(g, y, f"{p}.1", cin, width, 1, act="relu")
            z = _conv_bn(g, z, f"{p}.2", width, width, 3, stride, act="relu")
            z = _conv_bn(g, z, f"{p}.3", width, out, 1)
            if b == 0:
                y = _conv_bn(g, y, f"{p}.downsample", cin, out, 1, stride)
            y = g.one("Relu", [g.one("Add", [z, y])])
            cin = out
    y = g.one("GlobalAveragePool", [y])
    y = g.one("Flatten", [y], axis=1)
    w = g.weight("fc.weight", (1000, 2048), math.sqrt(3.0 / 2048))
    bias = g.weight("fc.bias", (1000,), 0.01)
    g.nodes.append(h.make_node("Gemm", [y, w, bias], ["logits"], name="fc", transB=1))
    return ([h.make_tensor_value_info("input", TensorProto.FLOAT, ["batch", 3, 224, 224])],
            [h.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", 1000])])


def _make_divisible(v: float, divisor: int = 8) -> int:
    new = max(divisor, int(v + divisor / 2) // divisor * divisor)
    return new + divisor if new < 0.9 * v else new


# kernel, expanded, out, squeeze-and-excite, activation, stride (torchvision's table)
_MOBILENET_V3_LARGE = [
    (3, 16, 16, False, "relu", 1), (3, 64, 24, False, "relu", 2),
    (3, 72, 24, False, "relu", 1), (5, 72, 40, True, "relu", 2),
    (5, 120, 40, True, "relu", 1), (5, 120, 40, True, "relu", 1),
    (3, 240, 80, False, "hardswish", 2), (3, 200, 80, False, "hardswish", 1),
    (3, 184, 80, False, "hardswish", 1), (3, 184, 80, False, "hardswish", 1),
    (3, 480, 112, True, "hardswish", 1), (3, 672, 112, True, "hardswish", 1),
    (5, 672, 160, True, "hardswish", 2), (5, 960, 160, True, "hardswish", 1),
    (5, 960, 160, True, "hardswish", 1),
]


def _mobilenet_v3_large(g: _Graph) -> _GraphIO:
    h = g.helper
    from onnx import TensorProto
    y = _conv_bn(g, "input", "features.0", 3, 16, 3, 2, act="hardswish", gain=2.0)
    cin = 16
    for i, (k, exp, out, se, act, stride) in enumerate(_MOBILENET_V3_LARGE):
        p = f"features.{i + 1}"
        z = y
        if exp != cin:
            z = _conv_bn(g, z, f"{p}.expand", cin, exp, 1, act=act, gain=2.0)
        z = _conv_bn(g, z, f"{p}.depthwise", exp, exp, k, stride, groups=exp, act=act,
                     gain=2.0)
        if se:
            sq = _make_divisible(exp // 4, 8)
            s = g.one("GlobalAveragePool", [z])
            w1 = g.weight(f"{p}.se.fc1.weight", (sq, exp, 1, 1), math.sqrt(3.0 / exp))
            b1 = g.weight(f"{p}.se.fc1.bias", (sq,), 0.1)
            s = g.one("Relu", [g.one("Conv", [s, w1, b1], kernel_shape=[1, 1])])
            w2 = g.weight(f"{p}.se.fc2.weight", (exp, sq, 1, 1), math.sqrt(3.0 / sq))
            b2 = g.weight(f"{p}.se.fc2.bias", (exp,), 0.1)
            s = g.one("Conv", [s, w2, b2], kernel_shape=[1, 1])
            s = g.one("HardSigmoid", [s], alpha=1.0 / 6.0, beta=0.5)
            z = g.one("Mul", [s, z])
        z = _conv_bn(g, z, f"{p}.project", exp, out, 1)
        if stride == 1 and cin == out:
            z = g.one("Add", [z, y])
        y, cin = z, out
    y = _conv_bn(g, y, "features.16", cin, 960, 1, act="hardswish", gain=2.0)
    y = g.one("Flatten", [g.one("GlobalAveragePool", [y])], axis=1)
    w = g.weight("classifier.0.weight", (1280, 960), math.sqrt(3.0 / 960))
    b = g.weight("classifier.0.bias", (1280,), 0.01)
    y = g.one("HardSwish", [g.one("Gemm", [y, w, b], transB=1)])
    w = g.weight("classifier.3.weight", (1000, 1280), math.sqrt(3.0 / 1280))
    b = g.weight("classifier.3.bias", (1000,), 0.01)
    g.nodes.append(h.make_node("Gemm", [y, w, b], ["logits"], name="classifier.3", transB=1))
    return ([h.make_tensor_value_info("input", TensorProto.FLOAT, ["batch", 3, 224, 224])],
            [h.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", 1000])])


# ---- transformers ------------------------------------------------------------------------------

def _i64(values: Any) -> np.ndarray:
    return np.array(values, dtype=np.int64)


def _linear(g: _Graph, x: str, prefix: str, cin: int, cout: int, bias: bool = True) -> str:
    w = g.weight(f"{prefix}.weight.T", (cin, cout), math.sqrt(3.0 / cin))
    y = g.one("MatMul", [x, w])
    if bias:
        y = g.one("Add", [g.weight(f"{prefix}.bias", (cout,), 0.02), y])
    return y


def _layer_norm(g: _Graph, x: str, prefix: str, d: int) -> str:
    gamma = g.const(f"{prefix}.weight", 1.0 + uniform(f"{prefix}.weight", (d,), 0.1, g.seed))
    beta = g.weight(f"{prefix}.bias", (d,), 0.1)
    return g.one("LayerNormalization", [x, gamma, beta], axis=-1, epsilon=1e-5)


def _gelu_erf(g: _Graph, x: str) -> str:
    """x * 0.5 * (1 + erf(x / sqrt(2))), the graph torch exports for GELU."""
    sqrt2 = g.const(g.name("sqrt2"), np.array(1.4142135381698608, np.float32))
    one = g.const(g.name("one"), np.array(1.0, np.float32))
    half = g.const(g.name("half"), np.array(0.5, np.float32))
    e = g.one("Erf", [g.one("Div", [x, sqrt2])])
    return g.one("Mul", [g.one("Mul", [x, g.one("Add", [e, one])]), half])


def _heads_reshape(g: _Graph, x: str, heads: int, head_dim: int) -> str:
    """(B, T, heads*head_dim) -> (B, heads, T, head_dim), with the target
    shape computed from Shape as exporters do."""
    shape = g.one("Shape", [x])
    b = g.one("Gather", [shape, g.const(g.name("zero"), _i64(0))], axis=0)
    t = g.one("Gather", [shape, g.const(g.name("one_i"), _i64(1))], axis=0)
    dims = [g.one("Unsqueeze", [b, g.const(g.name("ax0"), _i64([0]))]),
            g.one("Unsqueeze", [t, g.const(g.name("ax0"), _i64([0]))]),
            g.const(g.name("heads"), _i64([heads])), g.const(g.name("hd"), _i64([head_dim]))]
    target = g.one("Concat", dims, axis=0)
    y = g.one("Reshape", [x, target])
    return g.one("Transpose", [y], perm=[0, 2, 1, 3])


def _merge_heads(g: _Graph, x: str, d: int) -> str:
    y = g.one("Transpose", [x], perm=[0, 2, 1, 3])
    return g.one("Reshape", [y, g.const(g.name("merge"), _i64([0, 0, d]))])


def _attention(g: _Graph, q: str, k: str, v: str, mask: str, heads: int, head_dim: int,
               d: int, scale_qk: bool) -> str:
    qh, kh, vh = (_heads_reshape(g, t, heads, head_dim) for t in (q, k, v))
    kt = g.one("Transpose", [kh], perm=[0, 1, 3, 2])
    if scale_qk:      # Whisper: q and k each scaled by head_dim^-1/4
        s = g.const(g.name("scale"), np.array(head_dim ** -0.25, np.float32))
        scores = g.one("MatMul", [g.one("Mul", [qh, s]), g.one("Mul", [kt, s])])
    else:             # BERT: scores / sqrt(head_dim)
        s = g.const(g.name("sqrt_d"), np.array(math.sqrt(head_dim), np.float32))
        scores = g.one("Div", [g.one("MatMul", [qh, kt]), s])
    if mask:
        scores = g.one("Add", [scores, mask])
    p = g.one("Softmax", [scores], axis=-1)
    return _merge_heads(g, g.one("MatMul", [p, vh]), d)


def _bert(g: _Graph, layers: int, d: int, heads: int, ffn: int, seq: int,
          vocab: int = 30522) -> _GraphIO:
    h = g.helper
    from onnx import TensorProto
    word = g.weight("embeddings.word_embeddings.weight", (vocab, d), 0.05)
    pos = g.weight("embeddings.position_embeddings.weight", (512, d), 0.05)
    typ = g.weight("embeddings.token_type_embeddings.weight", (2, d), 0.05)
    ids_shape = g.one("Shape", ["input_ids"])
    t = g.one("Gather", [ids_shape, g.const("seq_axis", _i64(1))], axis=0)
    positions = g.one("Range", [g.const("r0", _i64(0)), t, g.const("r1", _i64(1))])
    positions = g.one("Unsqueeze", [positions, g.const("pos_axis", _i64([0]))])
    types = g.one("ConstantOfShape", [ids_shape],
                  value=h.make_tensor("zero_i", TensorProto.INT64, [1], [0]))
    e = g.one("Add", [g.one("Gather", [word, "input_ids"]), g.one("Gather", [typ, types])])
    e = g.one("Add", [e, g.one("Gather", [pos, positions])])
    x = _layer_norm(g, e, "embeddings.LayerNorm", d)
    # the additive mask: (1 - mask) * float32 lowest, as (B, 1, 1, T)
    m = g.one("Unsqueeze", ["attention_mask", g.const("mask_axes", _i64([1, 2]))])
    m = g.one("Cast", [m], to=TensorProto.FLOAT)
    m = g.one("Sub", [g.const("mask_one", np.array(1.0, np.float32)), m])
    mask = g.one("Mul", [m, g.const("mask_min", np.array(np.finfo(np.float32).min, np.float32))])
    for i in range(layers):
        p = f"encoder.layer.{i}"
        q = _linear(g, x, f"{p}.attention.self.query", d, d)
        k = _linear(g, x, f"{p}.attention.self.key", d, d)
        v = _linear(g, x, f"{p}.attention.self.value", d, d)
        a = _attention(g, q, k, v, mask, heads, d // heads, d, False)
        a = _linear(g, a, f"{p}.attention.output.dense", d, d)
        x = _layer_norm(g, g.one("Add", [a, x]), f"{p}.attention.output.LayerNorm", d)
        f = _gelu_erf(g, _linear(g, x, f"{p}.intermediate.dense", d, ffn))
        f = _linear(g, f, f"{p}.output.dense", ffn, d)
        x = _layer_norm(g, g.one("Add", [f, x]), f"{p}.output.LayerNorm", d)
    g.nodes.append(h.make_node("Identity", [x], ["last_hidden_state"], name="output"))
    ins = [h.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", seq]),
           h.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", seq])]
    return ins, [h.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT,
                                          ["batch", seq, d])]


def _whisper_encoder(g: _Graph, layers: int = 12, d: int = 768, heads: int = 12,
                     ffn: int = 3072, mels: int = 80, frames: int = 3000) -> _GraphIO:
    h = g.helper
    from onnx import TensorProto
    w1 = g.weight("conv1.weight", (d, mels, 3), math.sqrt(3.0 / (mels * 3)))
    b1 = g.weight("conv1.bias", (d,), 0.02)
    x = _gelu_erf(g, g.one("Conv", ["input_features", w1, b1], kernel_shape=[3], pads=[1, 1]))
    w2 = g.weight("conv2.weight", (d, d, 3), math.sqrt(3.0 / (d * 3)))
    b2 = g.weight("conv2.bias", (d,), 0.02)
    x = _gelu_erf(g, g.one("Conv", [x, w2, b2], kernel_shape=[3], pads=[1, 1], strides=[2]))
    x = g.one("Transpose", [x], perm=[0, 2, 1])
    x = g.one("Add", [x, g.weight("embed_positions.weight", (frames // 2, d), 0.05)])
    for i in range(layers):
        p = f"layers.{i}"
        y = _layer_norm(g, x, f"{p}.self_attn_layer_norm", d)
        q = _linear(g, y, f"{p}.self_attn.q_proj", d, d)
        k = _linear(g, y, f"{p}.self_attn.k_proj", d, d, bias=False)
        v = _linear(g, y, f"{p}.self_attn.v_proj", d, d)
        a = _attention(g, q, k, v, "", heads, d // heads, d, True)
        x = g.one("Add", [x, _linear(g, a, f"{p}.self_attn.out_proj", d, d)])
        y = _layer_norm(g, x, f"{p}.final_layer_norm", d)
        y = _linear(g, _gelu_erf(g, _linear(g, y, f"{p}.fc1", d, ffn)), f"{p}.fc2", ffn, d)
        x = g.one("Add", [x, y])
    x = _layer_norm(g, x, "layer_norm", d)
    g.nodes.append(h.make_node("Identity", [x], ["last_hidden_state"], name="output"))
    ins = [h.make_tensor_value_info("input_features", TensorProto.FLOAT,
                                    ["batch", mels, frames])]
    return ins, [h.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT,
                                          ["batch", frames // 2, d])]


_BUILDERS: dict[str, Callable[[_Graph], _GraphIO]] = {
    "resnet50": _resnet50,
    "mobilenet_v3_large": _mobilenet_v3_large,
    "bert_base": lambda g: _bert(g, 12, 768, 12, 3072, 128),
    "minilm_l6": lambda g: _bert(g, 6, 384, 12, 1536, 128),
    "whisper_small_encoder": _whisper_encoder,
}


# ---- small networks, where dispatch dominates ------------------------------------------------
#
# Not part of NETWORKS (the models hash suite pins those): small graphs whose
# run time is spent between the kernels as much as in them, for the
# benchmark (bench/bench_models.py) and tests/graph/test_reference_small.py.

def _conv1d_relu(g: _Graph, x: str, prefix: str, cin: int, cout: int, k: int,
                 stride: int = 1) -> str:
    """Conv1d with bias (padding k // 2), then Relu; He-uniform weights."""
    w = g.weight(f"{prefix}.weight", (cout, cin, k), math.sqrt(6.0 / (cin * k)))
    b = g.weight(f"{prefix}.bias", (cout,), 0.02)
    y = g.one("Conv", [x, w, b], kernel_shape=[k], strides=[stride], pads=[k // 2, k // 2],
              dilations=[1])
    return g.one("Relu", [y])


def _vad_small(g: _Graph, samples: int = 576, n_fft: int = 256, hop: int = 64,
               hidden: int = 128) -> _GraphIO:
    """A voice-activity model of silero-vad's shape: a window of `samples`
    samples, an STFT written as a Conv1d (n_fft // 2 + 1 frequency bins,
    real and imaginary parts as 2 * bins output channels, stride `hop`), the
    magnitude sqrt(re^2 + im^2), four Conv1d + Relu layers (two of stride 2),
    an LSTM over the frames, and a Linear to one logit with a Sigmoid: the
    probability of speech, (batch, 1). The STFT filters are synthetic
    (uniform, like every weight here), not a windowed Fourier basis."""
    h = g.helper
    from onnx import TensorProto
    bins = n_fft // 2 + 1
    x = g.one("Unsqueeze", ["input", g.const("channel_axis", _i64([1]))])    # (B, 1, samples)
    basis = g.weight("stft.forward_basis", (2 * bins, 1, n_fft), math.sqrt(3.0 / n_fft))
    spec = g.one("Conv", [x, basis], kernel_shape=[n_fft], strides=[hop], pads=[0, 0],
                 dilations=[1])                                              # (B, 2 bins, T)
    axis = g.const("bin_axis", _i64([1]))
    re = g.one("Slice", [spec, g.const("re_start", _i64([0])), g.const("re_end", _i64([bins])),
                         axis])
    im = g.one("Slice", [spec, g.const("im_start", _i64([bins])),
                         g.const("im_end", _i64([2 * bins])), axis])
    power = g.one("Add", [g.one("Mul", [re, re]), g.one("Mul", [im, im])])
    y = g.one("Sqrt", [power])                                               # (B, bins, T)
    for i, (cin, cout, stride) in enumerate(((bins, 128, 1), (128, 64, 2), (64, 64, 2),
                                             (64, hidden, 1))):
        y = _conv1d_relu(g, y, f"encoder.{i}", cin, cout, 3, stride)
    y = g.one("Transpose", [y], perm=[2, 0, 1])                              # (T, B, hidden)
    s = 1.0 / math.sqrt(hidden)
    w = g.weight("lstm.weight_ih", (1, 4 * hidden, hidden), s)
    r = g.weight("lstm.weight_hh", (1, 4 * hidden, hidden), s)
    b = g.weight("lstm.bias", (1, 8 * hidden), s)
    _, last, _ = g.node("LSTM", [y, w, r, b], 3, hidden_size=hidden)         # Y_h (1, B, hidden)
    z = g.one("Relu", [g.one("Squeeze", [last, g.const("dir_axis", _i64([0]))])])
    z = g.one("MatMul", [z, g.weight("decoder.weight.T", (hidden, 1), math.sqrt(3.0 / hidden))])
    z = g.one("Add", [z, g.weight("decoder.bias", (1,), 0.1)])
    g.nodes.append(h.make_node("Sigmoid", [z], ["prob"], name="output"))
    return ([h.make_tensor_value_info("input", TensorProto.FLOAT, ["batch", samples])],
            [h.make_tensor_value_info("prob", TensorProto.FLOAT, ["batch", 1])])


def _fire(g: _Graph, x: str, prefix: str, cin: int, squeeze: int, expand: int) -> str:
    """SqueezeNet's Fire module: squeeze 1x1 + Relu, then expand 1x1 and 3x3
    (each + Relu) concatenated along the channels: 2 * expand channels."""
    def conv(y: str, name: str, ci: int, co: int, k: int) -> str:
        w = g.weight(f"{prefix}.{name}.weight", (co, ci, k, k), math.sqrt(6.0 / (ci * k * k)))
        b = g.weight(f"{prefix}.{name}.bias", (co,), 0.02)
        return g.one("Relu", [g.one("Conv", [y, w, b], kernel_shape=[k, k],
                                    pads=[k // 2] * 4, strides=[1, 1], dilations=[1, 1])])
    s = conv(x, "squeeze", cin, squeeze, 1)
    return g.one("Concat", [conv(s, "expand1x1", squeeze, expand, 1),
                            conv(s, "expand3x3", squeeze, expand, 3)], axis=1)


def _squeezenet_small(g: _Graph) -> _GraphIO:
    """SqueezeNet 1.1 (torchvision's layout) for 3 x 224 x 224: conv 3x3/2 +
    Relu, then Fire modules between three ceil-mode max pools, a 1x1 conv to
    1000 classes, Relu and a global average pool."""
    h = g.helper
    from onnx import TensorProto
    w = g.weight("features.0.weight", (64, 3, 3, 3), math.sqrt(6.0 / 27))
    b = g.weight("features.0.bias", (64,), 0.02)
    y = g.one("Relu", [g.one("Conv", ["input", w, b], kernel_shape=[3, 3], strides=[2, 2],
                             pads=[0, 0, 0, 0], dilations=[1, 1])])

    def pool(x: str) -> str:
        return g.one("MaxPool", [x], kernel_shape=[3, 3], strides=[2, 2], pads=[0, 0, 0, 0],
                     ceil_mode=1)
    y = pool(y)
    # (feature index, in channels, squeeze, expand), a max pool after 4 and 7
    fires = [(3, 64, 16, 64), (4, 128, 16, 64), (6, 128, 32, 128), (7, 256, 32, 128),
             (9, 256, 48, 192), (10, 384, 48, 192), (11, 384, 64, 256), (12, 512, 64, 256)]
    for index, cin, squeeze, expand in fires:
        y = _fire(g, y, f"features.{index}", cin, squeeze, expand)
        if index in (4, 7):
            y = pool(y)
    w = g.weight("classifier.1.weight", (1000, 512, 1, 1), math.sqrt(6.0 / 512))
    b = g.weight("classifier.1.bias", (1000,), 0.02)
    y = g.one("Relu", [g.one("Conv", [y, w, b], kernel_shape=[1, 1])])
    y = g.one("GlobalAveragePool", [y])
    g.nodes.append(h.make_node("Flatten", [y], ["logits"], name="output", axis=1))
    return ([h.make_tensor_value_info("input", TensorProto.FLOAT, ["batch", 3, 224, 224])],
            [h.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", 1000])])


def _onehot_classifier(g: _Graph, tokens: int = 2048, depth: int = 256, embed: int = 64,
                       width: int = 128, classes: int = 8) -> _GraphIO:
    """A byte classifier whose preprocessing is integer work: int32 token ids
    (batch, tokens) in [0, depth) one-hot encoded as exporters write it (Cast
    to int64, Unsqueeze, Equal against Range(0, depth), Cast to float32:
    (batch, tokens, depth)), a MatMul to `embed` features, two Conv1d + Relu
    over the tokens (stride 4 each), ReduceMean over the tokens, a Gemm to
    `classes` logits and a Softmax."""
    h = g.helper
    from onnx import TensorProto
    ids = g.one("Cast", ["input_ids"], to=TensorProto.INT64)
    ids = g.one("Unsqueeze", [ids, g.const("onehot_axis", _i64([-1]))])     # (B, T, 1)
    classes_range = g.one("Range", [g.const("range_start", _i64(0)),
                                    g.const("range_depth", _i64(depth)),
                                    g.const("range_step", _i64(1))])         # (depth,)
    onehot = g.one("Cast", [g.one("Equal", [ids, classes_range])], to=TensorProto.FLOAT)
    y = g.one("MatMul", [onehot, g.weight("embedding.weight", (depth, embed), 1.0)])
    y = g.one("Transpose", [y], perm=[0, 2, 1])                              # (B, embed, T)
    y = _conv1d_relu(g, y, "conv.0", embed, width, 5, 4)
    y = _conv1d_relu(g, y, "conv.1", width, width, 5, 4)
    y = g.one("ReduceMean", [y], axes=[2], keepdims=0)                      # (B, width)
    w = g.weight("head.weight", (classes, width), math.sqrt(3.0 / width))
    b = g.weight("head.bias", (classes,), 0.1)
    y = g.one("Gemm", [y, w, b], transB=1)
    g.nodes.append(h.make_node("Softmax", [y], ["probs"], name="output", axis=-1))
    return ([h.make_tensor_value_info("input_ids", TensorProto.INT32, ["batch", tokens])],
            [h.make_tensor_value_info("probs", TensorProto.FLOAT, ["batch", classes])])


SMALL_NETWORKS: dict[str, Callable[[_Graph], _GraphIO]] = {
    "vad_small": _vad_small,
    "squeezenet_small": _squeezenet_small,
    "onehot_classifier": _onehot_classifier,
}


def build(name: str, seed: int = DEFAULT_SEED) -> bytes:
    """The ONNX file of reference network `name` (one of NETWORKS or
    SMALL_NETWORKS)."""
    builder = _BUILDERS.get(name) or SMALL_NETWORKS.get(name)
    if builder is None:
        raise ValueError(f"unknown network {name!r}; choose from {NETWORKS} or "
                         f"{tuple(SMALL_NETWORKS)}")
    g = _Graph(seed)
    ins, outs = builder(g)
    return g.model(name, ins, outs)


def inputs(name: str, batch: int = 1, seed: int = DEFAULT_SEED) -> dict[str, np.ndarray]:
    """Deterministic inputs for network `name` at `batch`."""
    if name in ("resnet50", "mobilenet_v3_large"):
        return {"input": uniform(f"input:{batch}", (batch, 3, 224, 224), 2.0, seed)}
    if name in ("bert_base", "minilm_l6"):
        raw = uniform(f"ids:{batch}", (batch, 128), 1.0, seed)
        ids = ((raw.astype(np.float64) + 1.0) * 15000).astype(np.int64) % 30522
        mask = np.ones((batch, 128), np.int64)
        for b in range(batch):     # entry b has its last 8*b tokens masked out
            if b:
                mask[b, 128 - 8 * b:] = 0
        return {"input_ids": ids, "attention_mask": mask}
    if name == "whisper_small_encoder":
        return {"input_features": uniform(f"mel:{batch}", (batch, 80, 3000), 1.0, seed)}
    if name == "vad_small":
        return {"input": uniform(f"audio:{batch}", (batch, 576), 0.5, seed)}
    if name == "squeezenet_small":
        return {"input": uniform(f"input:{batch}", (batch, 3, 224, 224), 2.0, seed)}
    if name == "onehot_classifier":
        raw = uniform(f"bytes:{batch}", (batch, 2048), 1.0, seed)
        return {"input_ids": (((raw.astype(np.float64) + 1.0) * 128).astype(np.int64) % 256)
                .astype(np.int32)}
    raise ValueError(f"unknown network {name!r}; choose from {NETWORKS} or "
                     f"{tuple(SMALL_NETWORKS)}")
