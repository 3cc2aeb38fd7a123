"""The learnable JPEG folder of the time-to-accuracy benchmark ("jpegdigits"): hotstart's built-in
8x8 digits as small colour photographs, written once as JPEG files.

Why a new folder: the folder workload of `--only folder` (_data.folder_path) stays near chance
after 3 epochs for every contender, so it measures speed only. (Its ink and background colours are
drawn independently, and it scales the digits' 0-255 pixels by 1/16 before clipping to 1, which
thickens every stroke into a blob; which of the two keeps it at chance was not measured.) Time to accuracy needs a task that every
contender *learns* within a few epochs, yet costs what photographs cost (JPEG decode, resize,
augmentation at 64-128 px, 3 channels).

Layout: ``root/train/<class>/<i>.jpg`` and ``root/valid/<class>/<i>.jpg``, the layout that
torchvision's ``ImageFolder`` (one per split), fastai's ``ImageDataLoaders.from_folder`` and
hotstart's ``datasets.ImageFolders`` all read as given: every contender validates on the same
files, with no split of its own. Training files are drawn from the digits' training split and
validation files from its held-out digits (``_data.split(1797)``: 1437 / 360), so validation
measures handwriting never seen in training.

Each image (`size` x `size`, RGB): a background of two colours in a linear gradient of random
direction, with a texture of two random sinusoidal gratings (amplitude 9 each) and Gaussian noise (sigma
10); the digit, upscaled (bicubic) to 65-95 % of the image at a random place, in a dark ink on the
light background, both of random hues (channels in [0, 90] and [150, 255]). Saved at JPEG quality 85.

Deterministic: file i of a split draws from ``numpy.random.default_rng([seed, split, i])``, so the
same arguments give the same bytes. Written atomically (a temporary sibling folder, then one rename),
under the system temp dir, keyed by every argument; never committed.
"""
from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

JPEG_QUALITY, SEED = 85, 0
VERSION = 2  # of the rendering below: part of the folder's name, so a changed rendering is written anew
SPLITS = ("train", "valid")


def jpeg_digits_path(n_train: int, n_valid: int, size: int, classes: int, source) -> Path:
    """The folder (written on first use): `n_train` / `n_valid` files, classes in turn (file i is of
    class ``i % classes``), `size` x `size` pixels. ``source()`` gives the digits to draw from, when
    the folder must be written: (8x8 images, int labels, training indices, validation indices)."""
    root = Path(tempfile.gettempdir()) / (f"hotstart-bench-jpegdigits-{n_train}-{n_valid}-{classes}-{size}"
                                          f"-q{JPEG_QUALITY}-s{SEED}-v{VERSION}")
    if root.is_dir():
        return root
    images, labels, train_idx, valid_idx = source()
    tmp = Path(tempfile.mkdtemp(prefix=root.name + ".", dir=root.parent))
    try:
        for split_id, (name, count, pool) in enumerate((("train", n_train, train_idx), ("valid", n_valid, valid_idx))):
            by_class = {c: [images[j] for j in pool if labels[j] == c] for c in range(classes)}
            for i in range(count):
                c = i % classes
                out = tmp / name / str(c)
                out.mkdir(parents=True, exist_ok=True)
                photo(by_class[c], size, (SEED, split_id, i)).save(out / f"{i:05d}.jpg", quality=JPEG_QUALITY)
        os.rename(tmp, root)
    except FileExistsError:  # another process wrote it first: theirs is the same bytes
        shutil.rmtree(tmp, ignore_errors=True)
    except OSError as e:
        shutil.rmtree(tmp, ignore_errors=True)
        if not root.is_dir():  # rename onto a non-empty folder fails with ENOTEMPTY, not FileExistsError
            raise OSError(f"could not write the jpegdigits folder {root}: {e}") from e
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return root


def photo(candidates, size: int, key):
    """One image: a digit drawn from `candidates` (8x8 PIL "L", values 0-255), rendered as the module
    docstring says, from ``default_rng(key)``."""
    import numpy as np
    from PIL import Image

    rng = np.random.default_rng(key)
    digit = candidates[int(rng.integers(len(candidates)))]
    bg_a, bg_b = rng.uniform(150, 255, (2, 3))  # light, of any hue
    ink = rng.uniform(0, 90, 3)  # dark, of any hue
    yy, xx = np.mgrid[0:size, 0:size] / size
    angle = rng.uniform(0, 2 * np.pi)
    ramp = (np.cos(angle) * (xx - 0.5) + np.sin(angle) * (yy - 0.5) + 0.71) / 1.42  # 0..1 along a random direction
    pixels = bg_a * (1 - ramp[..., None]) + bg_b * ramp[..., None]
    for _ in range(2):  # texture: random gratings
        f, theta, phase = rng.uniform(2, 9), rng.uniform(0, np.pi), rng.uniform(0, 2 * np.pi)
        pixels += 9 * np.sin(2 * np.pi * f * (np.cos(theta) * xx + np.sin(theta) * yy) + phase)[..., None]
    side = int(size * rng.uniform(0.65, 0.95))
    top, left = (int(v) for v in rng.integers(0, size - side + 1, 2))
    shape = np.asarray(digit.resize((side, side), Image.BICUBIC), dtype=np.float32) / 255.0
    mix = np.zeros((size, size, 1), np.float32)
    mix[top:top + side, left:left + side, 0] = np.clip(shape, 0, 1)
    pixels = pixels * (1 - mix) + ink * mix + rng.normal(0, 10, (size, size, 3))
    return Image.fromarray(np.clip(pixels, 0, 255).astype(np.uint8))
