"""The convolution layer lists of samebits.shapes: totals against the published
multiply-add counts, output sizes chaining through the networks, and (when
torch is installed) the same layers recorded from the torchvision-equivalent
models written here in plain torch."""
from __future__ import annotations

import dataclasses
from collections import Counter

import pytest

from samebits import shapes
from samebits.shapes import (CONV_MODELS, MOBILENETV3_LARGE_CONVS, MOBILENETV3_LARGE_SE_CONVS,
                             RESNET50_CONVS, ConvShape)


def total_macs(convs: list[ConvShape]) -> int:
    return sum(s.count * s.macs for s in convs)


def test_models_and_counts():
    assert CONV_MODELS == {"ResNet-50": RESNET50_CONVS, "MobileNetV3-large": MOBILENETV3_LARGE_CONVS}
    # ResNet-50: stem + 16 bottlenecks x 3 + 4 downsamples
    assert sum(s.count for s in RESNET50_CONVS) == 1 + 16 * 3 + 4 == 53
    assert len(RESNET50_CONVS) == 23
    # MobileNetV3-large: stem + 15 blocks (the first without expansion) x 3 - 1 + last 1x1
    assert sum(s.count for s in MOBILENETV3_LARGE_CONVS) == 1 + 15 * 3 - 1 + 1 == 46
    for convs in CONV_MODELS.values():
        keys = [dataclasses.astuple(s)[:9] for s in convs]
        assert len(set(keys)) == len(keys), "each distinct shape once"
        for s in convs:
            assert s.kh == s.kw and s.padding == s.kh // 2 and s.count >= 1
            assert s.c % s.groups == 0 and s.cout % s.groups == 0
            assert s.groups in (1, s.c)
        with pytest.raises(dataclasses.FrozenInstanceError):
            convs[0].count = 2


def test_mac_totals():
    # torchvision: ResNet-50 4.09 GMACs at 224 (convolutions + the 2048 x 1000 fc)
    assert total_macs(RESNET50_CONVS) == 4_087_136_256
    assert abs(total_macs(RESNET50_CONVS) + 2048 * 1000 - 4.09e9) < 0.005e9
    # torchvision: MobileNetV3-large 0.22 GMACs; adding back the squeeze-excitation
    # 1x1 convs (expanded -> make_divisible(expanded / 4, 8) -> expanded) and the
    # classifier (960 -> 1280 -> 1000) gives 216.6 M
    assert total_macs(MOBILENETV3_LARGE_CONVS) == 212_573_760
    se = 2 * (72 * 24 + 2 * 120 * 32 + 480 * 120 + 2 * 672 * 168 + 2 * 960 * 240)
    assert total_macs(MOBILENETV3_LARGE_SE_CONVS) == se
    classifier = 960 * 1280 + 1280 * 1000
    assert abs(total_macs(MOBILENETV3_LARGE_CONVS) + se + classifier - 0.2166e9) < 0.0005e9


def test_resnet50_chain():
    layers = shapes.resnet50_layers()
    assert layers[0][1:4] == (3, 224, 224)
    x = conv_out(layers[0])                   # (64, 112, 112)
    x = (x[0], (x[1] + 2 - 3) // 2 + 1, (x[2] + 2 - 3) // 2 + 1)   # max-pool 3x3/2 pad 1
    rest = layers[1:]
    while rest:
        block = rest[:4] if len(rest) > 3 and rest[3][0].endswith(".down") else rest[:3]
        rest = rest[len(block):]
        y = x
        for layer in block[:3]:
            assert layer[1:4] == y, layer
            y = conv_out(layer)
        if len(block) == 4:
            assert block[3][1:4] == x and conv_out(block[3]) == y
        else:
            assert y == x                     # identity shortcut
        x = y
    assert x == (2048, 7, 7)


def test_mobilenetv3_large_chain():
    layers = shapes.mobilenetv3_large_layers()
    x = (3, 224, 224)
    for layer in layers:
        assert layer[1:4] == x, layer
        x = conv_out(layer)
    assert x == (960, 7, 7)


def conv_out(layer: tuple) -> tuple[int, int, int]:
    _, c, h, w, cout, k, stride, _ = layer
    p = k // 2
    return cout, (h + 2 * p - k) // stride + 1, (w + 2 * p - k) // stride + 1


# --- the same lists recorded from plain-torch equivalents of torchvision's models

def recorded_convs(model, torch, squeeze_excitation: bool = False) -> list[ConvShape]:
    """The model's distinct convolutions: the chain, or (squeeze_excitation)
    only its squeeze-and-excitation layers."""
    seen = []

    def hook(module, inputs, output):
        if getattr(module, "squeeze_excitation", False) != squeeze_excitation:
            return
        _, c, h, w = inputs[0].shape
        assert module.padding[0] == module.padding[1] and module.stride[0] == module.stride[1]
        seen.append((c, h, w, module.out_channels, *module.kernel_size, module.stride[0],
                     module.padding[0], module.groups))
    for m in model.modules():
        if isinstance(m, torch.nn.Conv2d):
            m.register_forward_hook(hook)
    with torch.no_grad():
        model.eval()(torch.empty(1, 3, 224, 224))
    return [ConvShape(*key, count=n, name="") for key, n in Counter(seen).items()]


def torch_resnet50(torch):
    nn = torch.nn

    class Bottleneck(nn.Module):
        def __init__(self, cin, width, stride, down):
            super().__init__()
            self.conv1 = nn.Conv2d(cin, width, 1, bias=False)
            self.conv2 = nn.Conv2d(width, width, 3, stride, 1, bias=False)   # v1.5
            self.conv3 = nn.Conv2d(width, 4 * width, 1, bias=False)
            self.bn1, self.bn2 = nn.BatchNorm2d(width), nn.BatchNorm2d(width)
            self.bn3 = nn.BatchNorm2d(4 * width)
            self.down = (nn.Sequential(nn.Conv2d(cin, 4 * width, 1, stride, bias=False),
                                       nn.BatchNorm2d(4 * width)) if down else None)

        def forward(self, x):
            y = torch.relu(self.bn1(self.conv1(x)))
            y = torch.relu(self.bn2(self.conv2(y)))
            y = self.bn3(self.conv3(y))
            return torch.relu(y + (self.down(x) if self.down is not None else x))

    layers = [nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64), nn.ReLU(),
              nn.MaxPool2d(3, 2, 1)]
    cin = 64
    for width, blocks, stride in ((64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)):
        for b in range(blocks):
            layers.append(Bottleneck(cin, width, stride if b == 0 else 1, b == 0))
            cin = 4 * width
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(2048, 1000)]
    return nn.Sequential(*layers)


def torch_mobilenetv3_large(torch):
    nn = torch.nn

    def divisible(v, d=8):
        new = max(d, int(v + d / 2) // d * d)
        return new + d if new < 0.9 * v else new

    def cna(cin, cout, k, stride, groups, act):
        return [nn.Conv2d(cin, cout, k, stride, (k - 1) // 2, groups=groups, bias=False),
                nn.BatchNorm2d(cout), act()]

    class SE(nn.Module):
        def __init__(self, c):
            super().__init__()
            s = divisible(c // 4)
            self.fc1, self.fc2 = nn.Conv2d(c, s, 1), nn.Conv2d(s, c, 1)
            self.fc1.squeeze_excitation = self.fc2.squeeze_excitation = True

        def forward(self, x):
            s = torch.nn.functional.adaptive_avg_pool2d(x, 1)
            return x * torch.nn.functional.hardsigmoid(self.fc2(torch.relu(self.fc1(s))))

    class Block(nn.Module):
        def __init__(self, cin, k, exp, cout, se, act, stride):
            super().__init__()
            layers = cna(cin, exp, 1, 1, 1, act) if exp != cin else []
            layers += cna(exp, exp, k, stride, exp, act)
            if se:
                layers.append(SE(exp))
            layers += cna(exp, cout, 1, 1, 1, nn.Identity)
            self.body = nn.Sequential(*layers)
            self.residual = stride == 1 and cin == cout

        def forward(self, x):
            y = self.body(x)
            return x + y if self.residual else y

    RE, HS = nn.ReLU, nn.Hardswish
    setting = [  # torchvision's _mobilenet_v3_conf("mobilenet_v3_large")
        (16, 3, 16, 16, False, RE, 1), (16, 3, 64, 24, False, RE, 2),
        (24, 3, 72, 24, False, RE, 1), (24, 5, 72, 40, True, RE, 2),
        (40, 5, 120, 40, True, RE, 1), (40, 5, 120, 40, True, RE, 1),
        (40, 3, 240, 80, False, HS, 2), (80, 3, 200, 80, False, HS, 1),
        (80, 3, 184, 80, False, HS, 1), (80, 3, 184, 80, False, HS, 1),
        (80, 3, 480, 112, True, HS, 1), (112, 3, 672, 112, True, HS, 1),
        (112, 5, 672, 160, True, HS, 2), (160, 5, 960, 160, True, HS, 1),
        (160, 5, 960, 160, True, HS, 1)]
    layers = cna(3, 16, 3, 2, 1, HS)
    layers += [Block(*row) for row in setting]
    layers += cna(160, 960, 1, 1, 1, HS)
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(960, 1280), HS(),
               nn.Linear(1280, 1000)]
    return nn.Sequential(*layers)


@pytest.mark.parametrize("model", ["ResNet-50", "MobileNetV3-large"])
def test_against_torch_models(model):
    torch = pytest.importorskip("torch")
    build = {"ResNet-50": torch_resnet50, "MobileNetV3-large": torch_mobilenetv3_large}[model]
    with torch.device("meta"):
        recorded = recorded_convs(build(torch), torch)
    strip = lambda convs: [dataclasses.replace(s, name="") for s in convs]  # noqa: E731
    assert strip(CONV_MODELS[model]) == recorded
    if model == "MobileNetV3-large":
        with torch.device("meta"):
            squeeze = recorded_convs(build(torch), torch, squeeze_excitation=True)
        assert strip(MOBILENETV3_LARGE_SE_CONVS) == squeeze
