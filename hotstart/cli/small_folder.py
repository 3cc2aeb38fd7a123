"""What ``hotstart train FOLDER`` chooses from the pictures themselves: their size, and for a small
folder trained from random weights, the net, the augmentation, the batch and the epoch's length.

Why (issue 34, item 4): 90 JPEGs of circles, squares and triangles in random colours stayed at
chance with the CLI's old defaults (SmallCNN at 128x128, batch 64: one step an epoch). Measured on
that folder (tests/shapes_folder.py; benchmarks/scripts/shapes_plain.py and shapes_defaults.py):

- a stride-2 net does not fit it from random weights; the same net halving by max pooling does,
  and reliably only with a fourth stage, down to 6x6 (models/small_cnn_maxpool.py);
- a net memorises the colours unless they are augmented away (0.37 validation without, 0.92
  with the channels shuffled and inverted), so the colour options are turned on when the
  pictures' mean colours do not predict their class (`colour_predicts_class`);
- it takes several hundred steps of 32, far more than 10 passes over 72 pictures give, so an
  epoch of a small folder repeats it (`STEPS_AN_EPOCH`);
- the default crop, 10-degree rotation and lighting kept it at chance through hotstart (a 16-32-64
  max-pooling net, 990 steps, seed 1: last epoch's training loss 0.95), and so did the crop
  alone (0.81) and the rotation alone (0.81), where flips and quarter turns alone learned it
  (0.13, validation 0.89);
- upscaling 48-pixel pictures to 128 only costs time, so the size follows the pictures.

Each choice is printed with its reason before the fit, and an option given on the command line
is used as given.

``hotstart train photos --epochs 10 --seed S`` on shapes folders drawn with
``tests/shapes_folder.make_shapes(seed=F)`` (30 JPEGs a class; 18 validation pictures), last
epoch's validation accuracy (2026-12-07, 2-core AVX-512 BF16 EPYC, bf16-mixed, one torch thread a
run, two runs at a time, through `hotstart.cli.main`; a sweep script that
benchmarks/scripts/shapes_cli.py now writes down, e.g. ``--runs 0:0 0:1 --widths 16 32 64 --steps
150`` for the first row):

| net | steps an epoch | runs (folder F, seed S) | accuracy | seconds a run |
|---|---|---|---|---|
| 16-32-64 | 150 | (0, 0), (0, 1) | 0.94, 0.44 | 106, 92 |
| 16-32-64, two threads, alone | 150 | (0, 0) | 0.28 | 62 |
| 16-32-64-128 | 150 | (0, 0-3), (1, 0), (2, 0) | 1.00 x 5, 0.94 (F 2) | 106-122 |
| 16-32-64-128 | 100 | (0, 0-2), (1, 0), (2, 0), (3, 0) | 1.00 x 5, 0.94 (F 2) | 70-78 |

The three-stage net's runs learned or did not by chance (the same run on two threads instead of
one fell the other way); the four-stage net reached 0.83-1.00 by the third epoch in every run, so
100 steps an epoch are enough and cost two thirds of 150. tests/test_small_folder.py runs the
command on folder 0.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from ..tasks.image_base import SMALL_SET_BATCH

SMALL_FOLDER = 1000
"""A folder of at most this many training pictures is small: trained from random weights, one
pass over it is far too few steps to learn from."""

SMALL_BATCH = SMALL_SET_BATCH
"""A small folder's batch, the batch of the measured runs: the image task's own default for a
small training split (tasks/image_base.py), which the learner takes when ``--batch-size`` is not
given; this module only sizes the epoch by it."""

STEPS_AN_EPOCH = 100
"""A small folder's epoch repeats its training pictures to about this many steps of `SMALL_BATCH`
(the next whole pass), so ``--epochs 10`` gives the ~1,000 steps that learned the shapes folder on
every seed tried (the module docstring). With another ``--batch-size`` the epoch keeps its number
of pictures, not of steps."""

LARGEST_SIDE = 128
"""The input side for pictures this large or larger (the CLI's size before it followed the pictures)."""

SIDE_SAMPLE = 16
"""Pictures whose size is read to choose the input size (evenly spaced through the folder)."""

COLOUR_SAMPLE = 300
"""At most this many pictures (evenly spaced) are read to ask whether colour predicts the class."""


@dataclass
class FolderChoices:
    """What the pictures chose: the input `size`, and for a small folder the `backbone`, `augment`
    options and `epoch_repeats` (None where nothing was chosen); `reasons`, one line each. The
    batch is the task's default (32 for a small split: tasks/image_base.py), said on the fit's
    first line."""

    size: tuple[int, int] | None = None
    backbone: str | None = None
    augment: dict | None = None
    epoch_repeats: int = 1
    reasons: list[str] = field(default_factory=list)


def evenly_spaced(n: int, m: int) -> list[int]:
    """`m` indices spread evenly over ``range(n)``, first and last included (all of them when
    ``n <= m``): a folder's pictures come class by class, so a sample must span it."""
    m = min(m, n)
    return sorted({round(k * (n - 1) / max(m - 1, 1)) for k in range(m)})


def picture_side(pictures, sample: int = SIDE_SAMPLE) -> int:
    """The input side for these pictures: the median shorter side of up to `sample` of them, rounded
    down to a multiple of 8, between 16 and `LARGEST_SIDE`."""
    sides = sorted(min(pictures[i].size) for i in evenly_spaced(len(pictures), sample))
    side = sides[len(sides) // 2]
    return max(16, min(LARGEST_SIDE, side // 8 * 8))


def colour_predicts_class(pictures, targets, sample: int = COLOUR_SAMPLE) -> tuple[bool, float, float]:
    """Whether the pictures' mean colours predict their class: (predicts, accuracy, chance).

    The accuracy is leave-one-out nearest class mean of each picture's mean RGB colour, on up to
    `sample` pictures; chance is the commonest class's share. Colour predicts the class when the
    accuracy beats chance by more than two standard errors of chance (``2 * sqrt(p (1 - p) / n)``):
    on the shapes folder, whose colours are drawn at random, it read near chance, so the colour
    options are turned on there; a folder where colour is a real cue keeps its colours.
    """
    import numpy as np

    picks = evenly_spaced(len(pictures), sample)
    colours = np.stack([np.asarray(pictures[i].convert("RGB"), dtype=np.float64).reshape(-1, 3).mean(0)
                        for i in picks])
    labels = [targets[i] for i in picks]
    if len(picks) < 2:  # nothing to leave one out from (the split's own error comes later)
        return False, 0.0, 1.0
    classes = sorted(set(labels), key=str)
    y = np.array([classes.index(t) for t in labels])
    counts = np.bincount(y, minlength=len(classes)).astype(np.float64)
    sums = np.stack([colours[y == c].sum(0) for c in range(len(classes))])
    right = 0
    for i in range(len(y)):  # each picture against the class means of the others
        means_sum, counts_i = sums.copy(), counts.copy()
        means_sum[y[i]] -= colours[i]
        counts_i[y[i]] -= 1
        alive = counts_i > 0
        means = means_sum[alive] / counts_i[alive, None]
        guess = np.flatnonzero(alive)[np.argmin(((means - colours[i]) ** 2).sum(1))]
        right += int(guess == y[i])
    accuracy = right / len(y)
    chance = counts.max() / len(y)
    return accuracy > chance + 2 * math.sqrt(chance * (1 - chance) / len(y)), accuracy, chance


def folder_choices(pictures, targets, *, n_train: int, size_given, backbone_given: bool,
                   flip: bool, rgb: bool, pretrained: bool = False) -> FolderChoices:
    """The choices for a folder of `pictures` and their `targets` (all but a test split), of
    which `n_train` will train, leaving alone what the command line gave: `size_given`, the
    (H, W) of ``--size`` or None. `flip`: the pictures may be mirrored or turned (no
    ``--no-flip``); `rgb`: colour pictures (grayscale ones have no colour to augment);
    `pretrained`: pretrained weights, which keep the usual input size (they learned at it)."""
    out = FolderChoices()
    n = n_train
    if not size_given and not pretrained:
        side = picture_side(pictures)
        out.size = (side, side)
        out.reasons.append(f"size {side}x{side} (the pictures' median shorter side, at most {LARGEST_SIDE}; "
                           "--size to change)")
    if n > SMALL_FOLDER or backbone_given:  # a timm backbone (perhaps pretrained) keeps the usual recipe
        return out
    out.backbone = "smallcnn_maxpool"
    out.reasons.append(f"backbone smallcnn_maxpool (a small folder, {n} pictures, from random weights; --backbone "
                       "to change)")
    size = tuple(size_given) if size_given else (out.size or (LARGEST_SIDE, LARGEST_SIDE))
    turns = flip and size is not None and size[0] == size[1]  # a quarter turn keeps only a square's shape
    augment = {"scale": (1.0, 1.0), "ratio": (1.0, 1.0), "max_rotate": 0.0, "max_lighting": 0.0,
               "flip": 0.5 if flip else 0.0, "rot90": 0.75 if turns else 0.0}
    said = ("flips and quarter turns" if turns else "flips, no quarter turns (a size that is not square)" if flip
            else "no flips or quarter turns (--no-flip)") + ", no crop, rotation or lighting"
    if rgb:
        predicts, accuracy, chance = colour_predicts_class(pictures, targets)
        if not predicts:
            augment.update(channel_shuffle=0.5, invert=0.5)
            said += (f"; colours shuffled and inverted (the mean colour tells the class {accuracy:.2f} of the time, "
                     f"chance {chance:.2f})")
        else:
            said += f"; colours kept (the mean colour tells the class {accuracy:.2f} of the time, chance {chance:.2f})"
    out.augment = augment
    out.reasons.append(f"augmentation: {said}")
    out.epoch_repeats = max(1, math.ceil(STEPS_AN_EPOCH * SMALL_BATCH / n_train))
    if out.epoch_repeats > 1:
        out.reasons.append(f"{out.epoch_repeats} passes over the {n_train} training pictures an epoch "
                           f"(about {STEPS_AN_EPOCH * SMALL_BATCH} pictures)")
    return out
