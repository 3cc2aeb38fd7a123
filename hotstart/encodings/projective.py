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

from ..arguments import check_number, check_size
from ..blocks import Block, Image, Keypoints, Mask
from ..errors import SampleError, UsageError, UsageTypeError
from .base import Context, Encoding
from .preprocessing import image_tensor

_DEFAULT_AUGMENT = {"scale": (0.7, 1.0), "ratio": (3 / 4, 4 / 3), "flip": 0.5, "max_rotate": 10.0,
                    "max_lighting": 0.2, "channel_shuffle": 0.0, "invert": 0.0, "rot90": 0.0}

_PROBABILITIES = ("flip", "channel_shuffle", "invert", "rot90")


def _check_augment_options(augment: dict) -> None:
    """Refuse an augment option whose value cannot mean anything, naming it: a probability outside
    [0, 1] (``{"flip": 5}`` flipped every image, as a typo for 0.5 would not), a negative rotation or
    lighting, a crop scale or aspect-ratio range that is not two positive numbers, low to high. A
    hand-edited ``task.json`` is refused on load this way (hotstart/learner/loading.py names the file)."""
    for name, value in augment.items():
        what = f"augment option {name}"
        if name in _PROBABILITIES:
            check_number(what, value, minimum=0.0, maximum=1.0)
        elif name == "max_rotate":
            check_number(what, value, minimum=0.0, maximum=180.0)
        elif name == "max_lighting":
            check_number(what, value, minimum=0.0, maximum=1.0)
        elif name in ("scale", "ratio"):
            if isinstance(value, (str, bytes)) or not isinstance(value, (list, tuple)) or len(value) != 2:
                raise UsageTypeError(f"{what} must be (low, high), two numbers, got {value!r}")
            low, high = (check_number(what, v, minimum=0.0) for v in value)
            if not 0 < low <= high:
                raise UsageError(f"{what} must be (low, high) with 0 < low <= high, got {value!r}")


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
        self.size = check_size("size", size)
        if isinstance(augment, dict):
            unknown = set(augment) - set(_DEFAULT_AUGMENT)
            if unknown:
                raise UsageError(f"unknown augment option(s) {sorted(unknown)}; known: {sorted(_DEFAULT_AUGMENT)}")
            _check_augment_options(augment)
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

    def encode_batch(self, blocks, samples, context, rngs) -> list:
        """`encode_sample` for each of `samples` (lists of values, one per block) with its own rng
        of `rngs`: the same parameters drawn in the same order, so each sample is augmented as
        `encode_sample` augments it. Where a sample's only spatial value is an `Image` (the
        classification tasks), the training augmentation works on the batch at once: the crops
        and flips one image at a time, then one rotation (`rotate_nearest_batch`) and one lighting
        (`adjust_lighting_batch`) for all. Their per-image arithmetic is `encode_sample`'s (it runs
        the same kernels on a batch of one); a training sample then costs the loader 0.27 against
        0.45 ms at 64x64 and 0.19 against 0.43 ms at 32x32 (hotstart/learner/data.py has the
        measurement). Anything else goes sample by sample."""
        import torch
        import torchvision.transforms.v2.functional as F

        context = Context.of(context)
        spatial = [i for i, b in enumerate(blocks) if self.applies(b)]
        if (context != Context.TRAINING or self.augment is False or len(spatial) != 1
                or not isinstance(blocks[spatial[0]], Image) or not samples):
            return super().encode_batch(blocks, samples, context, rngs)
        i, block = spatial[0], blocks[spatial[0]]
        images, drawn = [], []
        for values, rng in zip(samples, rngs):
            if rng is None:
                raise UsageError("ProjectiveTransforms needs an rng (numpy.random.Generator) to augment in training")
            x = image_tensor(block, values[i])
            p = self._draw(tuple(x.shape[-2:]), rng)
            x = _turned(_flipped(F.resized_crop(x, *p["crop"], list(self.size), antialias=True), p), p)
            images.append(x)
            drawn.append(p)
        lit = [None] * len(images)
        groups: dict = {}  # images that stack together (one batch may mix gray and colour, uint8 and float)
        for k, x in enumerate(images):
            groups.setdefault((x.dtype, tuple(x.shape)), []).append(k)
        for ks in groups.values():
            batch = _rotate_and_light_batch(torch.stack([images[k] for k in ks]), [drawn[k] for k in ks])
            for k, x in zip(ks, batch.unbind(0)):
                lit[k] = x
        out = []
        for values, x, p in zip(samples, lit, drawn):
            encoded = list(values)
            encoded[i] = _recolour(x, p["order"], p["invert"]) if (p["order"] is not None or p["invert"]) else x
            out.append(encoded)
        return out

    # --- augmentation: parameters from rng, kernels from torchvision (two from image_kernels) ------
    def _draw(self, canvas, rng: np.random.Generator) -> dict:
        """One sample's augmentation parameters, drawn from `rng` in a fixed order (the crop, the
        flip, the quarter turns, the rotation, the lighting, the colours): the one place they are
        drawn, for `encode_sample` and `encode_batch` alike."""
        o = self.options
        crop = _random_resized_crop_params(canvas, o["scale"], o["ratio"], rng)
        flip = bool(rng.random() < o["flip"])
        turns = int(rng.integers(1, 4)) if o["rot90"] > 0 and rng.random() < o["rot90"] else 0
        angle = float(rng.uniform(-o["max_rotate"], o["max_rotate"])) if o["max_rotate"] > 0 else None
        lighting = None
        if o["max_lighting"] > 0:
            brightness = float(1.0 + rng.uniform(-o["max_lighting"], o["max_lighting"]))
            contrast = float(1.0 + rng.uniform(-o["max_lighting"], o["max_lighting"]))
            lighting = (brightness, contrast)
        shuffle = o["channel_shuffle"] > 0 and rng.random() < o["channel_shuffle"]
        order = rng.permutation(3) if shuffle else None
        invert = bool(o["invert"] > 0 and rng.random() < o["invert"])
        return {"crop": crop, "flip": flip, "turns": turns, "angle": angle, "lighting": lighting, "order": order,
                "invert": invert}

    def _augment(self, items, canvas, rng: np.random.Generator):
        import torch
        import torchvision.transforms.v2.functional as F
        from torchvision import tv_tensors

        p = self._draw(canvas, rng)
        top, left, h, w = p["crop"]
        # masks: crop, then resize with nearest-exact (torchvision's resized_crop of a mask ignores `interpolation`)
        items = [F.resize(F.crop(t, top, left, h, w), list(self.size), antialias=True, **_resample(t))
                 if isinstance(t, tv_tensors.Mask) else F.resized_crop(t, top, left, h, w, list(self.size), antialias=True)
                 for t in items]
        if p["flip"]:
            # torchvision flips keypoints as pixel centres (x -> W - 1 - x); in edge coordinates
            # the mirror image of x is W - x, hence the + 1
            items = [_flip_edge_keypoints(t) if isinstance(t, tv_tensors.KeyPoints) else F.horizontal_flip(t)
                     for t in items]
        if p["turns"]:
            items = [_turn_edge_keypoints(t, p["turns"], self.size[0]) if isinstance(t, tv_tensors.KeyPoints)
                     else tv_tensors.wrap(t.as_subclass(torch.Tensor).rot90(p["turns"], (-2, -1)), like=t)
                     for t in items]
        items = [_rotate_and_light(t, p["angle"], p["lighting"]) for t in items]
        if p["order"] is None and not p["invert"]:  # the default: nothing to recolour
            return items
        return [_recolour(t, p["order"], p["invert"]) if isinstance(t, tv_tensors.Image) else t for t in items]


def _flipped(x, p: dict):
    """A plain C x H x W image tensor mirrored left to right when the draw `p` says so."""
    return x.flip(-1) if p["flip"] else x


def _turned(x, p: dict):
    """A plain image tensor turned by the draw's quarter turns (as `_augment` turns an image)."""
    return x.rot90(p["turns"], (-2, -1)) if p["turns"] else x


def _rotate_and_light_batch(images, drawn: list[dict]):
    """N same-sized images (N x C x H x W, uint8 or float in [0, 1]) after their crops and flips,
    each rotated and lit by its draw: `_rotate_and_light` for the whole batch (the same kernels;
    converted to float once and rounded back once)."""
    import torch

    from .image_kernels import adjust_lighting_batch, rotate_nearest_batch

    angles = [p["angle"] for p in drawn]
    lights = [p["lighting"] for p in drawn]
    rotate, light = any(a is not None for a in angles), any(v is not None for v in lights)
    if not rotate and not light:
        return images
    y = images if images.is_floating_point() else images.to(torch.float32)
    if rotate:
        y = rotate_nearest_batch(y, [0.0 if a is None else a for a in angles])
    if light:
        y = adjust_lighting_batch(y if y is not images else y.clone(), [1.0 if v is None else v[0] for v in lights],
                                  [1.0 if v is None else v[1] for v in lights],
                                  bound=1.0 if images.is_floating_point() else 255.0)
    if not images.is_floating_point():
        y = y.round_().to(images.dtype)
    return y


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
    lit by ``(brightness, contrast)``. Images go through `_rotate_and_light_batch` as a batch of
    one, masks through `rotate_nearest` (`image_kernels`: 0.26 against 0.78 ms an image with
    torchvision's kernels), both in float, converted and rounded back once; keypoints through
    torchvision's rotation."""
    import torch
    import torchvision.transforms.v2.functional as F
    from torchvision import tv_tensors

    from .image_kernels import rotate_nearest

    if isinstance(t, tv_tensors.KeyPoints):
        return F.rotate(t, angle) if angle is not None else t
    if isinstance(t, tv_tensors.Image):  # a batch of one: the arithmetic of `encode_batch`'s images
        image = t.as_subclass(torch.Tensor).unsqueeze(0)
        return tv_tensors.wrap(_rotate_and_light_batch(image, [{"angle": angle, "lighting": lighting}])[0], like=t)
    if angle is None:  # a mask: rotated, never lit
        return t
    x = t.as_subclass(torch.Tensor)
    y = rotate_nearest(x if x.is_floating_point() else x.to(torch.float32), angle)
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

