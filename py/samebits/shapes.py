"""Matrix-product shapes of the reference models, shared by hashes and benchmarks.

Each entry is (name, m, n, k, count, b_transposed): the product C(m x n) =
A(m x k) B(k x n), how many times one forward pass runs it, and whether B is
read as the transpose of a stored matrix (the keys of attention scores).
Convolutions (ResNet-50, MobileNetV3-large) are `ConvShape`s in `CONV_MODELS`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

from ._binding.args import window_output_size


class Product(NamedTuple):
    name: str
    m: int
    n: int
    k: int
    # A field named like tuple.count, which it hides on Product (fine at run time).
    count: int   # type: ignore[assignment]
    b_transposed: bool = False


def transformer(rows: int, width: int, ffn: int, heads: int, layers: int, seq: int,
                batch: int) -> list[Product]:
    head = width // heads
    attention = batch * heads * layers
    return [
        Product("qkvo", rows, width, width, 4 * layers),
        Product("ffn_up", rows, ffn, width, layers),
        Product("ffn_down", rows, width, ffn, layers),
        Product("scores", seq, seq, head, attention, True),
        Product("context", seq, head, seq, attention),
    ]


MODELS: dict[str, list[Product]] = {
    # batch 32 x 128 tokens
    "bert-base-32x128": transformer(4096, 768, 3072, 12, 12, 128, 32),
    "minilm-l6-32x128": transformer(4096, 384, 1536, 12, 6, 128, 32),
    # encoder over 1500 frames, batch 1
    "whisper-small-enc-1500": transformer(1500, 768, 3072, 12, 12, 1500, 1),
}


# --------------------------------------------------------------------------
# Convolution layers of the reference vision models (NCHW, batch 1, 224 x 224).


@dataclass(frozen=True)
class ConvShape:
    """One distinct convolution of a model: input (1, c, h, w), weights
    (cout, c // groups, kh, kw), symmetric padding, and how many times one
    forward pass runs it (`count`)."""
    c: int
    h: int
    w: int
    cout: int
    kh: int
    kw: int
    stride: int
    padding: int
    groups: int
    count: int
    name: str

    @property
    def out_h(self) -> int:
        return window_output_size(self.h, self.padding, self.padding, self.kh, 1, self.stride)

    @property
    def out_w(self) -> int:
        return window_output_size(self.w, self.padding, self.padding, self.kw, 1, self.stride)

    @property
    def macs(self) -> int:
        """Multiply-adds of one run (batch 1)."""
        return self.out_h * self.out_w * self.cout * (self.c // self.groups) * self.kh * self.kw


# A layer in forward order: (name, c, h, w, cout, k, stride, groups).
Layer = tuple[str, int, int, int, int, int, int, int]


def _merge(layers: list[Layer]) -> list[ConvShape]:
    """From layers in forward order, (name, c, h, w, cout, k, stride, groups),
    one entry per distinct shape (in order of first occurrence, names joined
    by '+'); padding is k // 2 as in torchvision."""
    # (c, h, w, cout, kh, kw, stride, padding, groups) -> [count, names]
    merged: dict[tuple[int, int, int, int, int, int, int, int, int], list[Any]] = {}
    for name, c, h, w, cout, k, stride, groups in layers:
        key = (c, h, w, cout, k, k, stride, k // 2, groups)
        entry = merged.setdefault(key, [0, []])
        entry[0] += 1
        if name not in entry[1]:
            entry[1].append(name)
    return [ConvShape(*key, count=count, name="+".join(names))
            for key, (count, names) in merged.items()]


def resnet50_layers() -> list[Layer]:
    """torchvision ResNet-50 v1.5 (stride on the 3x3 of each bottleneck): the
    7x7/2 stem, every bottleneck conv and the 1x1 downsamples, in order.
    Names: "l2.0.conv2" is conv2 of block 0 of stage 2, "l2.1-3.conv2" that
    of blocks 1 to 3, "down" the block-0 downsample."""
    layers: list[Layer] = [("stem7x7", 3, 224, 224, 64, 7, 2, 1)]
    size, cin = 56, 64                        # after the 3x3/2 max-pool
    for stage, (width, blocks, stride) in enumerate(
            ((64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)), start=1):
        cout = 4 * width
        for b in range(blocks):
            s = stride if b == 0 else 1
            out = size // s
            tag = f"l{stage}.0" if b == 0 else f"l{stage}.1-{blocks - 1}"
            layers.append((f"{tag}.conv1", cin, size, size, width, 1, 1, 1))
            layers.append((f"{tag}.conv2", width, size, size, width, 3, s, 1))
            layers.append((f"{tag}.conv3", width, out, out, cout, 1, 1, 1))
            if b == 0:
                layers.append((f"{tag}.down", cin, size, size, cout, 1, s, 1))
            cin, size = cout, out
    return layers


# torchvision mobilenet_v3_large: (in, kernel, expanded, out, stride)
_MOBILENETV3_LARGE = [
    (16, 3, 16, 16, 1), (16, 3, 64, 24, 2), (24, 3, 72, 24, 1),
    (24, 5, 72, 40, 2), (40, 5, 120, 40, 1), (40, 5, 120, 40, 1),
    (40, 3, 240, 80, 2), (80, 3, 200, 80, 1), (80, 3, 184, 80, 1), (80, 3, 184, 80, 1),
    (80, 3, 480, 112, 1), (112, 3, 672, 112, 1),
    (112, 5, 672, 160, 2), (160, 5, 960, 160, 1), (160, 5, 960, 160, 1),
]


def mobilenetv3_large_layers() -> list[Layer]:
    """torchvision MobileNetV3-large: the 3x3/2 stem, each inverted residual's
    expansion 1x1 (absent when expanded == in), depthwise kxk and projection
    1x1, and the last 1x1 160 -> 960; squeeze-excitation and classifier left out."""
    layers: list[Layer] = [("stem3x3", 3, 224, 224, 16, 3, 2, 1)]
    size = 112
    for i, (cin, k, exp, cout, stride) in enumerate(_MOBILENETV3_LARGE):
        if exp != cin:
            layers.append((f"b{i}.expand", cin, size, size, exp, 1, 1, 1))
        layers.append((f"b{i}.dw{k}x{k}", exp, size, size, exp, k, stride, exp))
        size = window_output_size(size, k // 2, k // 2, k, 1, stride)
        layers.append((f"b{i}.project", exp, size, size, cout, 1, 1, 1))
    layers.append(("last1x1", 160, size, size, 960, 1, 1, 1))
    return layers


# The blocks of _MOBILENETV3_LARGE (by index) with squeeze-and-excitation.
_MOBILENETV3_LARGE_SE_BLOCKS = (3, 4, 5, 10, 11, 12, 13, 14)


def _squeeze_channels(expanded: int) -> int:
    """torchvision's _make_divisible(expanded // 4, 8)."""
    want = expanded // 4
    channels = max(8, (want + 4) // 8 * 8)
    return channels + 8 if channels < 0.9 * want else channels


def mobilenetv3_large_se_layers() -> list[Layer]:
    """The squeeze-and-excitation convolutions of MobileNetV3-large: in each
    block that has one, a 1x1 over the pooled 1x1 map from the expanded
    channels to the squeeze channels, and one back."""
    layers: list[Layer] = []
    for i in _MOBILENETV3_LARGE_SE_BLOCKS:
        expanded = _MOBILENETV3_LARGE[i][2]
        squeeze = _squeeze_channels(expanded)
        layers.append((f"b{i}.se.reduce", expanded, 1, 1, squeeze, 1, 1, 1))
        layers.append((f"b{i}.se.expand", squeeze, 1, 1, expanded, 1, 1, 1))
    return layers


RESNET50_CONVS: list[ConvShape] = _merge(resnet50_layers())
MOBILENETV3_LARGE_CONVS: list[ConvShape] = _merge(mobilenetv3_large_layers())
# Kept out of the benchmark chain (matrix-vector products over 1x1 maps, about
# 1% of the model's multiply-adds); the conv hash suite covers them.
MOBILENETV3_LARGE_SE_CONVS: list[ConvShape] = _merge(mobilenetv3_large_se_layers())

CONV_MODELS: dict[str, list[ConvShape]] = {
    "ResNet-50": RESNET50_CONVS,
    "MobileNetV3-large": MOBILENETV3_LARGE_CONVS,
}
