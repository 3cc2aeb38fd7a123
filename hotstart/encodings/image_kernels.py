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

Each works on a batch too (`rotate_nearest_batch`, `adjust_lighting_batch`; the single-image
functions are batches of one), which the training loader uses (`ProjectiveTransforms.encode_batch`):
an image's result does not depend on the batch around it.

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


def rotation_grids(angles, height: int, width: int, dtype=torch.float32) -> torch.Tensor:
    """The N x H x W x 2 `grid_sample` grids of rotations by `angles` degrees (counter-clockwise,
    one per image) about the image centre: torchvision's inverse matrix and pixel convention
    (centres at ``i + 0.5``, ``align_corners=False``), evaluated by broadcasting instead of a
    matrix product. Each grid is computed elementwise, so an image's grid does not depend on the
    others in the batch (`rotation_grid` is the batch of one)."""
    rot = [math.radians(-float(a)) for a in angles]  # torchvision's rotate passes -angle to its inverse matrix
    cos = torch.tensor([math.cos(r) for r in rot], dtype=torch.float64)
    sin = torch.tensor([math.sin(r) for r in rot], dtype=torch.float64)
    half_w, half_h = 0.5 * width, 0.5 * height

    def per_image(values):  # one coefficient an image, rounded once to `dtype`, broadcast over H x W
        return values.to(dtype).view(-1, 1, 1)

    xs = torch.linspace((1.0 - width) * 0.5, (width - 1.0) * 0.5, width, dtype=dtype)
    ys = torch.linspace((1.0 - height) * 0.5, (height - 1.0) * 0.5, height, dtype=dtype).unsqueeze(-1)
    grid = torch.empty(len(rot), height, width, 2, dtype=dtype)
    # inverse map: source x = cos * X + sin * Y, source y = -sin * X + cos * Y, normalised by the half size
    torch.add(xs * per_image(cos / half_w), ys * per_image(sin / half_w), out=grid[..., 0])
    torch.add(xs * per_image(-sin / half_h), ys * per_image(cos / half_h), out=grid[..., 1])
    return grid


def rotation_grid(angle: float, height: int, width: int, dtype=torch.float32) -> torch.Tensor:
    """The 1 x H x W x 2 grid of one rotation (`rotation_grids` of one angle)."""
    return rotation_grids([angle], height, width, dtype)


def rotate_nearest_batch(images: torch.Tensor, angles) -> torch.Tensor:
    """N floating-point images (N x C x H x W) each rotated by its angle in `angles` degrees, as
    ``F.rotate(image, angle)``: nearest neighbour, the same size, zeros where the rotation leaves
    the canvas. One `grid_sample` for the whole batch; each output pixel reads its own image only."""
    if not images.is_floating_point():
        raise UsageTypeError(f"rotate_nearest needs a floating-point image, got {images.dtype}")
    n, _, height, width = images.shape
    if len(angles) != n:
        raise UsageError(f"rotate_nearest_batch: {len(angles)} angles for {n} images")
    grids = rotation_grids(angles, height, width, dtype=images.dtype)
    return nnf.grid_sample(images, grids, mode="nearest", padding_mode="zeros", align_corners=False)


def rotate_nearest(image: torch.Tensor, angle: float) -> torch.Tensor:
    """`image` (... x H x W, floating point: C x H x W, or a mask's H x W) rotated by `angle`
    degrees, as ``F.rotate(image, angle)`` (`rotate_nearest_batch` of one)."""
    if not image.is_floating_point():
        raise UsageTypeError(f"rotate_nearest needs a floating-point image, got {image.dtype}")
    height, width = image.shape[-2:]
    return rotate_nearest_batch(image.reshape(1, -1, height, width), [angle]).reshape(image.shape)


def adjust_lighting_batch(images: torch.Tensor, brightness, contrast, *, bound: float) -> torch.Tensor:
    """`adjust_lighting` on N floating-point images (N x C x H x W, C = 1 or 3), each with its own
    `brightness` and `contrast` (sequences of N). Works in place on `images` and returns it.

    Every step is elementwise, or a reduction over one image's own pixels, and none fuses a
    multiply into an add (a fused multiply-add rounds differently from the two it replaces), so an
    image's result does not depend on the batch around it."""
    if not images.is_floating_point():
        raise UsageTypeError(f"adjust_lighting needs a floating-point image, got {images.dtype}")
    if images.ndim != 4 or images.shape[1] not in (1, 3):
        raise UsageError(f"adjust_lighting needs 1 or 3 channels, got {images.shape[1:-2]}")
    n = images.shape[0]
    if len(brightness) != n or len(contrast) != n:
        raise UsageError(f"adjust_lighting_batch: {len(brightness)} brightness and {len(contrast)} contrast "
                         f"factors for {n} images")
    per_image = (n, 1, 1, 1)
    b = torch.tensor([float(v) for v in brightness], dtype=torch.float64).to(images.dtype).view(per_image)
    c64 = torch.tensor([float(v) for v in contrast], dtype=torch.float64)
    x = images.mul_(b).clamp_(0.0, bound)
    if images.shape[1] == 3:
        luma = x[:, 0] * _LUMA[0]
        luma += x[:, 1] * _LUMA[1]
        luma += x[:, 2] * _LUMA[2]
    else:
        luma = x[:, 0]
    mean = luma.mean(dim=(-2, -1)).view(per_image)
    c = c64.to(images.dtype).view(per_image)
    return x.mul_(c).add_(mean * (1.0 - c64).to(images.dtype).view(per_image)).clamp_(0.0, bound)


def adjust_lighting(image: torch.Tensor, brightness: float, contrast: float, *, bound: float) -> torch.Tensor:
    """``F.adjust_contrast(F.adjust_brightness(image, brightness), contrast)`` on a floating-point
    C x H x W image (C = 1 or 3) whose values run from 0 to `bound` (255.0 for a uint8 image
    converted to float, 1.0 for a float image). Works in place on `image` and returns it
    (`adjust_lighting_batch` of one)."""
    if not image.is_floating_point():
        raise UsageTypeError(f"adjust_lighting needs a floating-point image, got {image.dtype}")
    if image.shape[-3] not in (1, 3):
        raise UsageError(f"adjust_lighting needs 1 or 3 channels, got {image.shape[-3]}")
    adjust_lighting_batch(image.unsqueeze(0), [brightness], [contrast], bound=bound)
    return image
