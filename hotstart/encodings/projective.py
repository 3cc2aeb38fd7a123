"""`ProjectiveTransforms`: resize and augment a whole sample jointly, on torchvision.transforms.v2.

An image and its mask or keypoints get the *same* crop, flip and rotation: the sample's spatial
values are wrapped as ``tv_tensors`` (Image, Mask, KeyPoints) and each goes through the same
``transforms.v2.functional`` call with the same parameters, so torchvision picks the right kernel
for each kind (nearest-neighbour for masks, coordinate maps for keypoints).

Keypoints are (x, y) pixel coordinates with pixel (column i, row j) centred at (i, j). Inside,
they are shifted by half a pixel so that every torchvision kernel maps them exactly as it maps
the image (its keypoint flip assumes pixel centres, its resize and rotation pixel edges).

The random parameters are drawn here from the ``numpy.random.Generator`` passed in, never from
torch's global RNG (which torchvision's random transform classes would use). In validation and
inference the pipeline is a deterministic resize to `size`: torchvision's antialiased bilinear,
the algorithm the model contract's numpy `resize_uint8` (hotstart/contract/resize.py) implements
for the runtimes, bit for bit on x86; torchvision's is kept here because it is 15 times faster,
and tests/test_deploy.py holds the two equal.
"""
from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from ..blocks import Block, Image, Keypoints, Mask
from ..errors import SampleError, UsageError, UsageTypeError
from .base import Context, Encoding
from .preprocessing import image_tensor

_DEFAULT_AUGMENT = {"scale": (0.7, 1.0), "ratio": (3 / 4, 4 / 3), "flip": 0.5, "max_rotate": 10.0,
                    "max_lighting": 0.2, "channel_shuffle": 0.0, "invert": 0.0, "rot90": 0.0}


class ProjectiveTransforms(Encoding):
    """Resize to `size` (H, W); in training also random-resized-crop, flip, rotate and lighting.

    `augment` is True (the defaults above), False (resize only, in every context) or a dict that
    overrides some defaults, e.g. ``{"flip": 0.0}`` for digits, which flipping would corrupt.

    Two colour options are off by default: ``channel_shuffle`` (the probability that an image's
    colour channels are put in a random order) and ``invert`` (the probability that it is inverted,
    ``255 - x``). They teach a model that colour says nothing about the class, which a model
    trained from random weights does not learn from a few dozen pictures of randomly coloured
    things: on the shapes folder of issue 34 (72 training pictures, 48x48), a plain loop's small
    VGG-style net reached 0.92 validation accuracy with both, 0.37 without them and 0.36 with
    the shuffle alone (300 steps of 32; benchmarks/scripts/shapes_plain.py). Only images are
    coloured; masks and keypoints are left as they are.

    ``rot90`` (off by default) is the probability of a quarter, half or three-quarter turn, each
    as likely, after the flip: exact, with no interpolation and no corners to fill, for things
    that have no up (shapes, cells, aerial views). It needs a square `size`; masks and keypoints
    turn with their image. On the shapes folder, 300 plain-loop steps reached 0.92 with it and
    0.72 without it (benchmarks/scripts/shapes_plain.py).
    """

    def __init__(self, size: Sequence[int] = (128, 128), augment: bool | dict = True):
        self.size = _as_size(size)
        if isinstance(augment, dict):
            unknown = set(augment) - set(_DEFAULT_AUGMENT)
            if unknown:
                raise UsageError(f"unknown augment option(s) {sorted(unknown)}; known: {sorted(_DEFAULT_AUGMENT)}")
        elif not isinstance(augment, bool):
            raise UsageTypeError(f"augment must be a bool or a dict of options, got {augment!r}")
        # JSON-native form (tuples -> lists, a copy), so `to_dict` round-trips through JSON unchanged
        self.augment = ({k: list(v) if isinstance(v, (tuple, list)) else v for k, v in augment.items()}
                        if isinstance(augment, dict) else augment)
        self.options = {**_DEFAULT_AUGMENT, **(augment if isinstance(augment, dict) else {})}
        if self.options["rot90"] > 0 and self.size[0] != self.size[1]:
            raise UsageError(f"augment option rot90 turns images by 90 degrees, which needs a square size; "
                             f"got size={list(self.size)}")

    def _params(self):
        return {"size": list(self.size), "augment": self.augment}

    def applies(self, block: Block) -> bool:
        return isinstance(block, (Image, Mask, Keypoints))

    def encoded_block(self, block: Block) -> Block | None:
        if isinstance(block, Image):
            return Image(channels=block.channels, size=self.size)
        if isinstance(block, (Mask, Keypoints)):
            return block
        return None

    def encode(self, block, value, context, rng=None):
        return self.encode_sample([block], [value], context, rng)[0]

    def encode_sample(self, blocks, values, context, rng=None) -> list:
        import torch
        import torchvision.transforms.v2.functional as F
        from torchvision import tv_tensors

        context = Context.of(context)
        spatial = [i for i, b in enumerate(blocks) if self.applies(b)]
        if not spatial:
            return list(values)
        wrapped: dict[int, Any] = {}
        canvas = None
        for i in spatial:  # images and masks first: they define the canvas keypoints live on
            b, v = blocks[i], values[i]
            if isinstance(b, Image):
                t = tv_tensors.Image(image_tensor(b, v))
            elif isinstance(b, Mask):
                b.validate(v)
                t = tv_tensors.Mask(torch.as_tensor(np.asarray(v)).to(torch.int64))
            else:
                continue
            hw = tuple(t.shape[-2:])
            if canvas is not None and hw != canvas:
                raise SampleError(f"sample's images/masks differ in size: {canvas} vs {hw} ({b!r})")
            canvas, wrapped[i] = hw, t
        for i in spatial:
            if isinstance(blocks[i], Keypoints):
                if canvas is None:
                    raise UsageError("Keypoints need an Image or Mask in the same sample to define their canvas")
                blocks[i].validate(values[i])
                # + 0.5: to pixel-edge coordinates, where torchvision's resize, crop and rotate
                # kernels are exact (pixel centres at i + 0.5); undone below
                pts = torch.as_tensor(np.asarray(values[i], dtype=np.float32)) + 0.5
                wrapped[i] = tv_tensors.KeyPoints(pts, canvas_size=canvas)

        items = [wrapped[i] for i in spatial]
        if context == Context.TRAINING and self.augment is not False:
            if rng is None:
                raise UsageError("ProjectiveTransforms needs an rng (numpy.random.Generator) to augment in training")
            items = self._augment(items, canvas, rng)
        else:
            items = [F.resize(t, list(self.size), antialias=True, **_resample(t)) for t in items]

        out = list(values)
        for i, t in zip(spatial, items):
            plain = t.as_subclass(torch.Tensor)
            out[i] = plain.to(torch.float32) - 0.5 if isinstance(blocks[i], Keypoints) else plain
        return out

    # --- augmentation: parameters from rng, kernels from torchvision (two from image_kernels) ------
    def _augment(self, items, canvas, rng: np.random.Generator):
        import torch
        import torchvision.transforms.v2.functional as F
        from torchvision import tv_tensors

        o = self.options
        top, left, h, w = _random_resized_crop_params(canvas, o["scale"], o["ratio"], rng)
        # masks: crop, then resize with nearest-exact (torchvision's resized_crop of a mask ignores `interpolation`)
        items = [F.resize(F.crop(t, top, left, h, w), list(self.size), antialias=True, **_resample(t))
                 if isinstance(t, tv_tensors.Mask) else F.resized_crop(t, top, left, h, w, list(self.size), antialias=True)
                 for t in items]
        if rng.random() < o["flip"]:
            # torchvision flips keypoints as pixel centres (x -> W - 1 - x); in edge coordinates
            # the mirror image of x is W - x, hence the + 1
            items = [_flip_edge_keypoints(t) if isinstance(t, tv_tensors.KeyPoints) else F.horizontal_flip(t)
                     for t in items]
        if o["rot90"] > 0 and rng.random() < o["rot90"]:
            turns = int(rng.integers(1, 4))
            items = [_turn_edge_keypoints(t, turns, self.size[0]) if isinstance(t, tv_tensors.KeyPoints)
                     else tv_tensors.wrap(t.as_subclass(torch.Tensor).rot90(turns, (-2, -1)), like=t) for t in items]
        angle = float(rng.uniform(-o["max_rotate"], o["max_rotate"])) if o["max_rotate"] > 0 else None
        lighting = None
        if o["max_lighting"] > 0:
            brightness = float(1.0 + rng.uniform(-o["max_lighting"], o["max_lighting"]))
            contrast = float(1.0 + rng.uniform(-o["max_lighting"], o["max_lighting"]))
            lighting = (brightness, contrast)
        items = [_rotate_and_light(t, angle, lighting) for t in items]
        shuffle = o["channel_shuffle"] > 0 and rng.random() < o["channel_shuffle"]
        order = rng.permutation(3) if shuffle else None
        invert = o["invert"] > 0 and rng.random() < o["invert"]
        if order is None and not invert:  # the default: nothing to recolour
            return items
        return [_recolour(t, order, invert) if isinstance(t, tv_tensors.Image) else t for t in items]


def _recolour(image, order, invert: bool):
    """An image with its 3 colour channels in `order` (None, or an image of another channel count:
    as they are) and, if `invert`, inverted (``255 - x`` for uint8, ``1 - x`` for float)."""
    import torch
    from torchvision import tv_tensors

    x = image.as_subclass(torch.Tensor)
    if order is not None and x.shape[-3] == 3:
        x = x[..., torch.as_tensor(order), :, :]
    if invert:
        x = (1.0 if x.is_floating_point() else 255) - x
    return tv_tensors.wrap(x, like=image)


def _rotate_and_light(t, angle: float | None, lighting: tuple[float, float] | None):
    """One item after the crop and flip: rotated by `angle` (None: not rotated) and, for images,
    lit by ``(brightness, contrast)``. Images and masks go through `image_kernels` in float, once
    converted and rounded back once (0.26 against 0.78 ms an image with torchvision's kernels,
    hotstart/encodings/image_kernels.py); keypoints through torchvision's rotation."""
    import torch
    import torchvision.transforms.v2.functional as F
    from torchvision import tv_tensors

    from .image_kernels import adjust_lighting, rotate_nearest

    if isinstance(t, tv_tensors.KeyPoints):
        return F.rotate(t, angle) if angle is not None else t
    lit = lighting if isinstance(t, tv_tensors.Image) else None
    if angle is None and lit is None:
        return t
    x = t.as_subclass(torch.Tensor)
    y = x if x.is_floating_point() else x.to(torch.float32)
    if angle is not None:
        y = rotate_nearest(y, angle)
    if lit is not None:
        y = adjust_lighting(y if y is not x else y.clone(), *lit, bound=1.0 if x.is_floating_point() else 255.0)
    if not x.is_floating_point():
        y = y.round_().to(x.dtype)
    return tv_tensors.wrap(y, like=t)


def _resample(t) -> dict:
    """Masks: nearest-exact, which samples at pixel centres as the image's bilinear kernel does
    (torchvision's default "nearest" for masks is shifted by up to half a pixel against the image)."""
    from torchvision import tv_tensors
    from torchvision.transforms import InterpolationMode

    return {"interpolation": InterpolationMode.NEAREST_EXACT} if isinstance(t, tv_tensors.Mask) else {}


def _flip_edge_keypoints(points):
    import torchvision.transforms.v2.functional as F
    from torchvision import tv_tensors

    import torch

    flipped = F.horizontal_flip(points).as_subclass(torch.Tensor)
    return tv_tensors.wrap(flipped + flipped.new_tensor([1.0, 0.0]), like=points)


def _turn_edge_keypoints(points, turns: int, side: int):
    """Keypoints in pixel-edge coordinates on a `side` x `side` canvas, turned as
    ``torch.rot90(image, turns, (-2, -1))`` turns their image: one turn maps (x, y) to
    (y, side - x)."""
    import torch
    from torchvision import tv_tensors

    p = points.as_subclass(torch.Tensor)
    for _ in range(turns):
        p = torch.stack([p[..., 1], side - p[..., 0]], dim=-1)
    return tv_tensors.wrap(p, like=points)


def _random_resized_crop_params(canvas, scale, ratio, rng):
    """torchvision's RandomResizedCrop.get_params, drawing from a numpy Generator instead."""
    height, width = canvas
    area = height * width
    log_ratio = (math.log(ratio[0]), math.log(ratio[1]))
    for _ in range(10):
        target_area = area * rng.uniform(scale[0], scale[1])
        aspect = math.exp(rng.uniform(*log_ratio))
        w = int(round(math.sqrt(target_area * aspect)))
        h = int(round(math.sqrt(target_area / aspect)))
        if 0 < w <= width and 0 < h <= height:
            return int(rng.integers(0, height - h + 1)), int(rng.integers(0, width - w + 1)), h, w
    in_ratio = width / height  # fallback: a central crop
    if in_ratio < min(ratio):
        w, h = width, int(round(width / min(ratio)))
    elif in_ratio > max(ratio):
        h, w = height, int(round(height * max(ratio)))
    else:
        w, h = width, height
    return (height - h) // 2, (width - w) // 2, h, w


def _as_size(size) -> tuple[int, int]:
    if isinstance(size, int):
        size = (size, size)
    size = tuple(int(s) for s in size)
    if len(size) != 2 or min(size) < 1:
        raise UsageError(f"size must be (height, width) with positive values, got {size!r}")
    return size

