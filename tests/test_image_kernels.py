"""hotstart.encodings.image_kernels: the rotation and lighting kernels equal torchvision's."""
import numpy as np
import pytest
import torch
import torchvision.transforms.v2.functional as F
from torchvision import tv_tensors

from hotstart.blocks import Image, Mask
from hotstart.encodings import ProjectiveTransforms
from hotstart.encodings.image_kernels import adjust_lighting, rotate_nearest, rotation_grid

ANGLES = [-10.0, -7.31, -2.5, -0.4, 0.9, 3.3, 5.77, 9.99, 25.0, 89.0]


@pytest.mark.parametrize("shape", [(3, 128, 128), (1, 17, 23), (3, 40, 31)])
def test_rotate_nearest_equals_torchvision_rotate(shape):
    g = torch.Generator().manual_seed(0)
    image = torch.rand(shape, generator=g)
    for angle in ANGLES:
        ours, theirs = rotate_nearest(image, angle), F.rotate(image, angle)
        assert ours.shape == theirs.shape and ours.dtype == theirs.dtype
        # the grids agree to float rounding, so a pixel may only differ where a sample point sits
        # on a tie between two source pixels
        mismatched = (ours != theirs).any(0).float().mean().item()
        assert mismatched <= 1e-3, (angle, mismatched)


def test_rotation_grid_is_the_identity_at_zero_degrees():
    grid = rotation_grid(0.0, 4, 6)
    xs = (torch.arange(6) + 0.5) / 3 - 1  # pixel centres, align_corners=False
    ys = (torch.arange(4) + 0.5) / 2 - 1
    torch.testing.assert_close(grid[0, ..., 0], xs.expand(4, 6))
    torch.testing.assert_close(grid[0, ..., 1], ys[:, None].expand(4, 6))


def test_rotate_nearest_takes_a_mask_without_channels():
    mask = torch.zeros(20, 20)
    mask[5:9, 3:15] = 1.0
    rotated = rotate_nearest(mask, 12.0)
    assert rotated.shape == (20, 20)
    expected = F.rotate(tv_tensors.Mask(mask.to(torch.int64)), 12.0).as_subclass(torch.Tensor)
    assert torch.equal(rotated.round().to(torch.int64), expected)


@pytest.mark.parametrize("channels", [1, 3])
@pytest.mark.parametrize("brightness,contrast", [(1.0, 1.0), (1.2, 0.8), (0.8, 1.2), (1.19, 1.17)])
def test_adjust_lighting_equals_torchvision_on_float_images(channels, brightness, contrast):
    image = torch.rand(channels, 24, 20, generator=torch.Generator().manual_seed(1))
    expected = F.adjust_contrast(F.adjust_brightness(image, brightness), contrast)
    ours = adjust_lighting(image.clone(), brightness, contrast, bound=1.0)
    torch.testing.assert_close(ours, expected, atol=1e-6, rtol=0)


def test_adjust_lighting_on_uint8_levels_is_within_torchvisions_truncation():
    """On a uint8 image (as float 0..255, rounded once at the end) it differs from torchvision's
    uint8 chain, which truncates after each step, by at most 2 levels."""
    u8 = torch.randint(0, 256, (3, 32, 32), dtype=torch.uint8, generator=torch.Generator().manual_seed(2))
    for brightness, contrast in [(1.2, 0.8), (0.85, 1.15), (1.0, 1.2)]:
        expected = F.adjust_contrast(F.adjust_brightness(u8, brightness), contrast)
        ours = adjust_lighting(u8.to(torch.float32), brightness, contrast, bound=255.0).round_().to(torch.uint8)
        assert (ours.int() - expected.int()).abs().max() <= 2


def test_kernels_refuse_integer_images():
    u8 = torch.zeros(3, 4, 4, dtype=torch.uint8)
    with pytest.raises(TypeError, match="floating-point image, got torch.uint8"):
        rotate_nearest(u8, 3.0)
    with pytest.raises(TypeError, match="floating-point image"):
        adjust_lighting(u8, 1.1, 0.9, bound=255.0)
    with pytest.raises(ValueError, match="1 or 3 channels, got 2"):
        adjust_lighting(torch.zeros(2, 4, 4), 1.1, 0.9, bound=1.0)


def test_rotation_only_augmentation_equals_torchvision_pixel_for_pixel():
    """ProjectiveTransforms with only rotation on: its uint8 image and int64 mask are exactly
    torchvision's ``F.rotate`` of the resized input (no lighting, so no rounding difference)."""
    rng = np.random.default_rng(3)
    arr = rng.integers(0, 256, size=(32, 32, 3), dtype=np.uint8)
    mask = (rng.random((32, 32)) > 0.5).astype(np.int64)
    pt = ProjectiveTransforms((32, 32), augment={"scale": (1, 1), "ratio": (1, 1), "flip": 0.0,
                                                  "max_rotate": 15.0, "max_lighting": 0.0})
    for seed in range(5):
        x, m = pt.encode_sample([Image(channels=3), Mask(["a", "b"])], [arr, mask], "training",
                                np.random.default_rng(seed))
        draw = np.random.default_rng(seed)  # the same draws: crop (scale 1: the whole image), flip, angle
        draw.uniform(1, 1), draw.uniform(0, 0), draw.integers(0, 1), draw.integers(0, 1), draw.random()
        angle = float(draw.uniform(-15.0, 15.0))
        expected_x = F.rotate(torch.as_tensor(arr).permute(2, 0, 1).contiguous(), angle)
        expected_m = F.rotate(tv_tensors.Mask(torch.as_tensor(mask)), angle).as_subclass(torch.Tensor)
        assert (x != expected_x).any(0).float().mean() <= 1e-3
        assert (m != expected_m).float().mean() <= 1e-3
        assert x.dtype == torch.uint8 and m.dtype == torch.int64
