"""InceptionTime and the 1-D ResNet against their papers' layer shapes and parameter counts.

The counts are the papers' layer lists added up by hand (the reference Keras code builds the same
layers; Keras also counts BatchNorm's running mean and variance, torch keeps those as buffers).
"""
from __future__ import annotations

import torch
import torch.nn as nn

from hotstart.models.inception_time import InceptionTime
from hotstart.models.resnet1d import ResNet1d


def n_params(m: nn.Module) -> int:
    return sum(p.numel() for p in m.parameters())


def bn(c):  # BatchNorm's trainable weight and bias
    return 2 * c


def test_inception_time_parameter_count_univariate_and_multivariate():
    # module 1 on a univariate input: no bottleneck; convs 40, 20, 10 of 32 filters; pool branch 1x1 conv; BN(128)
    first = (40 + 20 + 10) * 1 * 32 + 1 * 32 + bn(128)
    # modules 2-6: bottleneck 128->32, convs from 32 channels, pool branch 128->32, BN(128)
    later = 128 * 32 + (40 + 20 + 10) * 32 * 32 + 128 * 32 + bn(128)
    shortcuts = (1 * 128 + bn(128)) + (128 * 128 + bn(128))  # after module 3 (from the input) and module 6
    assert n_params(InceptionTime(1)) == first + 5 * later + shortcuts == 420_192
    # with the 2-class head and BatchNorm's running statistics, as Keras' summary counts: 422,498
    buffers = sum(b.numel() for n, b in InceptionTime(1).named_buffers() if "running" in n)
    assert 420_192 + (128 * 2 + 2) + buffers == 422_498
    # 6 channels: the first module has a bottleneck 6->32 too, the first shortcut is 6->128
    first6 = 6 * 32 + (40 + 20 + 10) * 32 * 32 + 6 * 32 + bn(128)
    assert n_params(InceptionTime(6)) == first6 + 5 * later + (6 * 128 + bn(128)) + (128 * 128 + bn(128))


def test_inception_time_layer_shapes():
    m = InceptionTime(3).eval()
    x = torch.randn(2, 3, 57)  # an odd length: "same" padding keeps it
    shapes = []
    hooks = [mod.register_forward_hook(lambda mod, a, out: shapes.append(tuple(out.shape))) for mod in m.modules_]
    with torch.no_grad():
        out = m(x)
    for h in hooks:
        h.remove()
    assert shapes == [(2, 128, 57)] * 6 and out.shape == (2, 128) and m.num_features == 128
    module = m.modules_[1]
    assert [tuple(c[1].weight.shape) for c in module.convs] == [(32, 32, 40), (32, 32, 20), (32, 32, 10)]
    assert isinstance(InceptionTime(1).modules_[0].bottleneck, nn.Identity)  # univariate: no bottleneck
    assert len(m.shortcuts) == 2  # a residual connection every 3 modules
    with torch.no_grad():  # global average pooling: any length
        assert m(torch.randn(1, 3, 300)).shape == (1, 128)


def test_resnet1d_parameter_count_and_shapes():
    conv = lambda k, i, o: k * i * o + o  # with bias, as the reference
    block1 = conv(8, 1, 64) + conv(5, 64, 64) + conv(3, 64, 64) + 3 * bn(64) + conv(1, 1, 64) + bn(64)
    block2 = conv(8, 64, 128) + conv(5, 128, 128) + conv(3, 128, 128) + 3 * bn(128) + conv(1, 64, 128) + bn(128)
    block3 = conv(8, 128, 128) + conv(5, 128, 128) + conv(3, 128, 128) + 3 * bn(128) + bn(128)  # shortcut: BN only
    m = ResNet1d(1).eval()
    assert n_params(m) == block1 + block2 + block3 == 504_000
    shapes = []
    for b in m.blocks:
        b.register_forward_hook(lambda mod, a, out: shapes.append(tuple(out.shape)))
    with torch.no_grad():
        assert m(torch.randn(2, 1, 41)).shape == (2, 128)
    assert shapes == [(2, 64, 41), (2, 128, 41), (2, 128, 41)]
    assert [tuple(layer[1].weight.shape[-1:]) for layer in m.blocks[0].body if isinstance(layer, nn.Sequential)] == \
        [(8,), (5,), (3,)]


def test_configs_rebuild_the_same_architecture():
    for m in (InceptionTime(2, nf=8, depth=3), ResNet1d(4, widths=(8, 16, 16))):
        again = type(m).from_config(m.config)
        assert {k: v.shape for k, v in again.state_dict().items()} == {k: v.shape for k, v in m.state_dict().items()}
