"""Two augmentation kernels written here: torchvision's were most of the folder workload's loading.

The training loader's worker spends its CPU beside the model's threads, on 2 cores: every
millisecond it takes is a millisecond a compute thread waits. On the folder workload (160x160
JPEGs to 128x128, `benchmarks/scripts/folder_profile.py`) the augmentation was the largest part
of loading, and two torchvision kernels most of it. One thread, a 3 x 128 x 128 uint8 image, CPU
ms a call (``cd benchmarks/scripts && python augment_kernels.py --size 128 --n 400 --rounds 3``,
2026-12-02, load average 0.75, the contenders alternating):

- ``F.rotate``: 0.47 ms; it builds the sampling grid as a (H*W x 3) @ (3 x 2) ``bmm``, which
  alone took 0.22 of its 0.37 ms in a profile. `rotate_nearest`, the same grid from two broadcast
  multiply-adds, with the float conversion and the rounding back: 0.19 ms, the same pixels;
- ``F.adjust_brightness`` then ``F.adjust_contrast`` on uint8 (each converts to float and back):
  0.21 ms; `adjust_lighting` on the float image, conversion and rounding included: 0.14 ms;
- both, as the augmentation runs them: 0.78 ms against 0.26 ms (3.0x).

Both keep torchvision's definitions, so a test holds them equal to torchvision on float images:
the rotation is ``F.rotate(image, angle)`` (nearest neighbour, about the centre, zeros outside);
the lighting is brightness (``x * b``, clamped) then contrast (blend with the mean of the ITU-R
601 luminance, clamped). On uint8 images the results differ by rounding only (at most 2 levels,
tested): torchvision truncates to uint8 after each step and floors the luminance before its mean,
the caller here rounds once at the end.
"""
from __future__ import annotations

import math

import torch
import torch.nn.functional as nnf

from ..errors import UsageError, UsageTypeError

_LUMA = (0.2989, 0.587, 0.114)  # torchvision's rgb_to_grayscale weights


def rotation_grid(angle: float, height: int, width: int, dtype=torch.float32) -> torch.Tensor:
    """The 1 x H x W x 2 `grid_sample` grid of a rotation by `angle` degrees (counter-clockwise)
    about the image centre: torchvision's inverse matrix and pixel convention (centres at
    ``i + 0.5``, ``align_corners=False``), evaluated by broadcasting instead of a matrix product."""
    rot = math.radians(-angle)  # torchvision's rotate passes -angle to its inverse affine matrix
    cos, sin = math.cos(rot), math.sin(rot)
    xs = torch.linspace((1.0 - width) * 0.5, (width - 1.0) * 0.5, width, dtype=dtype)
    ys = torch.linspace((1.0 - height) * 0.5, (height - 1.0) * 0.5, height, dtype=dtype).unsqueeze(-1)
    grid = torch.empty(1, height, width, 2, dtype=dtype)
    # inverse map: source x = cos * X + sin * Y, source y = -sin * X + cos * Y, normalised by the half size
    torch.add(xs * (cos / (0.5 * width)), ys * (sin / (0.5 * width)), out=grid[0, ..., 0])
    torch.add(xs * (-sin / (0.5 * height)), ys * (cos / (0.5 * height)), out=grid[0, ..., 1])
    return grid


def rotate_nearest(image: torch.Tensor, angle: float) -> torch.Tensor:
    """`image` (... x H x W, floating point: C x H x W, or a mask's H x W) rotated by `angle`
    degrees, as ``F.rotate(image, angle)``: nearest neighbour, the same size, zeros where the
    rotation leaves the canvas."""
    if not image.is_floating_point():
        raise UsageTypeError(f"rotate_nearest needs a floating-point image, got {image.dtype}")
    height, width = image.shape[-2:]
    grid = rotation_grid(angle, height, width, dtype=image.dtype)
    planes = image.reshape(1, -1, height, width)
    return nnf.grid_sample(planes, grid, mode="nearest", padding_mode="zeros",
                           align_corners=False).reshape(image.shape)


def adjust_lighting(image: torch.Tensor, brightness: float, contrast: float, *, bound: float) -> torch.Tensor:
    """``F.adjust_contrast(F.adjust_brightness(image, brightness), contrast)`` on a floating-point
    C x H x W image (C = 1 or 3) whose values run from 0 to `bound` (255.0 for a uint8 image
    converted to float, 1.0 for a float image). Works in place on `image` and returns it."""
    if not image.is_floating_point():
        raise UsageTypeError(f"adjust_lighting needs a floating-point image, got {image.dtype}")
    if image.shape[-3] not in (1, 3):
        raise UsageError(f"adjust_lighting needs 1 or 3 channels, got {image.shape[-3]}")
    x = image.mul_(float(brightness)).clamp_(0.0, bound)
    if image.shape[-3] == 3:
        r, g, b = x.unbind(-3)
        mean = r.mul(_LUMA[0]).add_(g, alpha=_LUMA[1]).add_(b, alpha=_LUMA[2]).mean()
    else:
        mean = x.mean()
    contrast = float(contrast)
    return x.mul_(contrast).add_(mean * (1.0 - contrast)).clamp_(0.0, bound)
