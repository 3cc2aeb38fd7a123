"""Built-in data for dense and keypoint tasks, made on the spot (no download, deterministic).

    data, (image, mask) = datasets.load("digits-segmentation")   # 1,797 digits at 32x32, 11 classes
    data, (image, mask) = datasets.load("shapes", n=1000)         # discs, squares, triangles
    data, (image, points) = datasets.load("discs", n=1000)        # bright discs on noise, their centres

- ``digits-segmentation``: the built-in digits upsampled (bicubic) to `size`; every pixel whose
  brightness is at least `threshold` is labelled with the digit's class ("0".."9"), every other
  pixel "background". Real strokes, so the masks are real shapes.
- ``shapes``: one to three filled discs, squares and triangles on a noisy background; each pixel
  is labelled with the shape that covers it last (drawn in order), or "background".
- ``discs``: `points` bright discs (of distinct radii, so they can be told apart in any flip or
  rotation: point i is the centre of the i-th smallest disc) on a noisy background. Keypoints
  use torchvision's convention: pixel (column i, row j) is centred at (i, j).

Everything comes from ``numpy.random.default_rng(seed)``; samples are built once, when loaded
(a few milliseconds per thousand at 32x32), and returned as PIL images and uint8 / float32 arrays.
"""
from __future__ import annotations

import numpy as np

from ..blocks import Image, Keypoints, Mask
from ..errors import UsageError
from .containers import Data, Samples

__all__ = ["load_digits_segmentation", "load_shapes", "load_discs"]


def _pil_samples(arrays: np.ndarray, name: str) -> Samples:
    def get(i: int):
        from PIL import Image as PILImage

        return PILImage.fromarray(arrays[i])

    get.__name__ = name
    return Samples(len(arrays), get)


def _array_samples(arrays: np.ndarray, name: str) -> Samples:
    def get(i: int):
        return arrays[i].copy()

    get.__name__ = name
    return Samples(len(arrays), get)


def load_digits_segmentation(size: int = 32, threshold: int = 128):
    """``(Data, (Image(channels=1), Mask(["background", "0", ..., "9"])))`` at `size` x `size`."""
    from PIL import Image as PILImage

    from .digits import load_digits

    data, _ = load_digits()
    images, masks = [], []
    for i in range(len(data[0])):
        img = np.asarray(data[0][i].resize((size, size), PILImage.BICUBIC))
        images.append(img)
        masks.append(np.where(img >= threshold, int(data[1][i]) + 1, 0).astype(np.uint8))
    images, masks = np.stack(images), np.stack(masks)
    classes = ["background"] + [str(d) for d in range(10)]
    return Data(_pil_samples(images, "digits_segmentation_image"), _array_samples(masks, "digits_segmentation_mask")), \
        (Image(channels=1), Mask(classes))


def _noise_background(rng, n, size, channels):
    base = rng.uniform(20, 90, size=(n, 1, 1, channels))
    return base + rng.normal(0, 12, size=(n, size, size, channels))


def load_shapes(n: int = 1000, size: int = 32, seed: int = 0):
    """``(Data, (Image(channels=3), Mask(["background", "disc", "square", "triangle"])))``."""
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:size, 0:size] + 0.0
    images = _noise_background(rng, n, size, 3)
    masks = np.zeros((n, size, size), dtype=np.uint8)
    for i in range(n):
        for _ in range(int(rng.integers(1, 4))):
            kind = int(rng.integers(1, 4))
            r = rng.uniform(0.12, 0.25) * size
            cx, cy = rng.uniform(r, size - 1 - r, size=2)
            if kind == 1:
                inside = (xx - cx) ** 2 + (yy - cy) ** 2 <= r * r
            elif kind == 2:
                inside = (np.abs(xx - cx) <= r * 0.85) & (np.abs(yy - cy) <= r * 0.85)
            else:  # an upright triangle: below the apex, inside both slanted sides
                inside = (yy <= cy + r * 0.8) & (yy - (cy - r) >= 2 * np.abs(xx - cx))
            colour = rng.uniform(140, 255, size=3)
            images[i][inside] = colour + rng.normal(0, 8, size=(int(inside.sum()), 3))
            masks[i][inside] = kind
    images = np.clip(images, 0, 255).astype(np.uint8)
    return Data(_pil_samples(images, "shapes_image"), _array_samples(masks, "shapes_mask")), \
        (Image(channels=3), Mask(["background", "disc", "square", "triangle"]))


def load_discs(n: int = 1000, size: int = 32, points: int = 1, seed: int = 0):
    """``(Data, (Image(channels=1), Keypoints(points)))``: disc centres as (x, y) in pixels."""
    if int(points) < 1:
        raise UsageError(f"discs: points must be at least 1, got {points!r}")
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:size, 0:size] + 0.0
    images = _noise_background(rng, n, size, 1)[..., 0]
    centres = np.zeros((n, points, 2), dtype=np.float32)
    for i in range(n):
        for k in range(points):
            r = size * (0.08 + 0.05 * k)  # distinct radii: point k is always the k-th smallest disc
            margin = r + 1
            cx, cy = rng.uniform(margin, size - 1 - margin, size=2)
            # anti-aliased edge: coverage falls from 1 to 0 over one pixel around the radius
            cover = np.clip(r + 0.5 - np.sqrt((xx - cx) ** 2 + (yy - cy) ** 2), 0, 1)
            brightness = rng.uniform(170, 255)
            images[i] = images[i] * (1 - cover) + brightness * cover
            centres[i, k] = (cx, cy)
    images = np.clip(images, 0, 255).astype(np.uint8)
    return Data(_pil_samples(images, "discs_image"), _array_samples(centres, "discs_points")), \
        (Image(channels=1), Keypoints(points))
