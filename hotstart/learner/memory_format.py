"""The batches' memory layout: channels_last where it was measured to pay, contiguous elsewhere.

channels_last stores an image batch as N x H x W x C in memory (the tensor's shape stays N x C x H
x W). oneDNN's convolutions on x86 run faster on it at larger images; the model's weights are left
as they are (a convolution follows its input's layout), so saved models, checkpoints and exports
are unchanged. Only the batches are converted, as they reach the device.

The rule (`choose_channels_last`): channels_last when the model has 2-D convolutions and both
sides of the input are at least `MIN_SIDE` pixels. Measured on this machine's 2-core AMD EPYC
(benchmarks/results/HISTORY.md, "Precision and compile on this CPU"; one-epoch fits in one process,
alternating, the batch converted in the learner):

- resnet10t at 128x128, batch 32: 1.14x; resnet18 at 128x128, batch 16 (the startup workload):
  1.015x; on bare model steps (``precision_cpu.py``, quiet cores) 1.25x (resnet10t) and 1.15x
  (resnet18) at 128x128, and with bf16-mixed on top 1.26x and 1.14x over bf16 alone;
- resnet10t on the digits at 32x32, batch 32: 0.92x, slower (bare step: 0.91x).

So it pays at 128 px and loses at 32 px. The sizes between, on the machine with AVX-512 BF16
(2026-12-07, load 1.8-2.0, batch 32, best of 3 rounds of 6 steps, both layouts alternating in one
process; ``cd benchmarks/scripts && PYTHONPATH=../.. python channels_last_sizes.py --backbones
resnet10t,smallcnn --sizes 48,64,96 --precisions bf16-mixed,32-true --bs 32 --steps 6 --rounds 3``,
results/channels-last-sizes-2026-12-07-bf16.json), channels_last / contiguous img/s:

| backbone | 48 bf16 / fp32 | 64 bf16 / fp32 | 96 bf16 / fp32 |
|---|---|---|---|
| resnet10t | 1.10 / 0.93 | 1.02 / 1.00 | 1.18 / 1.14 |
| smallcnn | 1.10 / 1.15 | 1.15 / 1.14 | 1.12 / 1.30 |

At 96 px it paid in all four, below it not in every one (resnet10t at 64 gained nothing), so
`MIN_SIDE` is 96; the script re-measures, to move the line again. Models without 2-D convolutions
(MLPs, transformers, 1-D series models) gain nothing from the layout and stay contiguous.
``channels_last=True`` / ``False`` overrides the rule.
"""
from __future__ import annotations

import torch

MIN_SIDE = 96
"""The smallest image side (pixels) where channels_last is the default (the rule above)."""


def has_conv2d(model: torch.nn.Module) -> bool:
    """Whether `model` has a 2-D convolution (the layers whose speed depends on the layout)."""
    return any(isinstance(m, torch.nn.Conv2d) for m in model.modules())


def choose_channels_last(requested: bool | None, model: torch.nn.Module, size) -> tuple[bool, str | None]:
    """(channels_last?, why) for inputs of `size` ((H, W) for images; anything else is not an
    image) to `model`. `requested` True / False is used as given. `why` is None where the layout
    is no question (not an image model, nothing asked): the fit's first line then omits it."""
    image = isinstance(size, (tuple, list)) and len(size) == 2
    if requested is not None:
        return bool(requested), "as asked"
    if not image or not has_conv2d(model):
        return False, None
    h, w = (int(s) for s in size)
    if min(h, w) >= MIN_SIDE:
        return True, f"{h}x{w} images to a convolutional model; channels_last=False for contiguous"
    return False, f"{h}x{w} images: channels_last pays from {MIN_SIDE}x{MIN_SIDE}; channels_last=True to force"


def to_channels_last(xb):
    """A 4-D floating-point batch in channels_last layout; anything else as it is."""
    if torch.is_tensor(xb) and xb.ndim == 4 and xb.is_floating_point():
        return xb.contiguous(memory_format=torch.channels_last)
    return xb
