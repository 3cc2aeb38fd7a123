"""A small folder of JPEG pictures of circles, squares and triangles, drawn as a new user would
draw them with PIL's ImageDraw: one class folder per shape, each picture with its own background
and shape colour (never too alike to tell apart), size, place and rotation.

What a user tried ``hotstart train photos/`` on (issue 32, "A folder of shapes did not learn";
issue 34, "Defaults that learn small data"). The one drawing helper of tests/test_training_hint.py
and of benchmarks/scripts/shapes_defaults.py, which measures what such a folder needs over seeds.
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np

SHAPES = ("circle", "square", "triangle")


def shape_picture(kind: str, size: int, rng: np.random.Generator):
    """One `size` x `size` RGB picture of a `kind` shape: random colours, radius, place, rotation."""
    from PIL import Image, ImageDraw

    background = rng.integers(0, 256, 3)
    colour = rng.integers(0, 256, 3)
    while np.abs(colour - background).sum() < 150:  # a shape the eye can see against its background
        colour = rng.integers(0, 256, 3)
    picture = Image.new("RGB", (size, size), tuple(int(v) for v in background))
    r = float(rng.uniform(size / 6, size / 3))  # the radius of the circle through the corners
    x, y = (float(v) for v in rng.uniform(r, size - r, 2))
    fill = tuple(int(v) for v in colour)
    draw = ImageDraw.Draw(picture)
    if kind == "circle":
        draw.ellipse([x - r, y - r, x + r, y + r], fill=fill)
    else:
        corners = 4 if kind == "square" else 3
        turn = float(rng.uniform(0, 2 * math.pi))
        draw.polygon([(x + r * math.cos(turn + 2 * math.pi * k / corners),
                       y + r * math.sin(turn + 2 * math.pi * k / corners)) for k in range(corners)], fill=fill)
    return picture


def make_shapes(root: Path, n_per_class: int = 30, size: int = 48, seed: int = 0) -> Path:
    """`root`/{circle,square,triangle}/NN.jpg: `n_per_class` JPEG pictures (quality 90) per class of
    `size` x `size` pixels. Deterministic for a `seed`; returns `root`."""
    rng = np.random.default_rng(seed)
    root = Path(root)
    for kind in SHAPES:
        (root / kind).mkdir(parents=True)
        for i in range(n_per_class):
            shape_picture(kind, size, rng).save(root / kind / f"{i:02d}.jpg", quality=90)
    return root
