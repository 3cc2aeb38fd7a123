"""Loaders for the downloadable datasets: each turns an extracted folder into ``(Data, blocks)``.

The registry fetches (downloads, verifies, extracts) and then calls one of these with the
folder, so each loader is a few lines of layout knowledge and testable on a fake folder.
"""
from __future__ import annotations

from pathlib import Path

from ..blocks import Image, Label
from .containers import Data, mapobs
from .errors import DatasetError
from .images import load_image
from .recipes import ImageFolders, list_images

__all__ = ["imagenette", "mnist_png", "oxford_pets", "pets_label"]


def imagenette(root: Path, **kw):
    """``imagenette2-160/{train,val}/<wnid>/*.JPEG``; the classes are ImageNet WordNet ids."""
    return ImageFolders(root, train="train", valid="val", **kw)


def mnist_png(root: Path, **kw):
    """``mnist_png/{training,testing}/<digit>/*.png``; targets are the digit folder names ("0".."9")."""
    return ImageFolders(root, train="training", valid="testing", **kw)


def pets_label(file_name: str) -> str:
    """Oxford-IIIT Pet names files ``<Breed_name>_<number>.jpg``: the breed is all but the number.

    Cat breeds are capitalized (``Bengal``), dog breeds are not (``great_pyrenees``).
    """
    stem = Path(file_name).stem
    breed, sep, number = stem.rpartition("_")
    if not sep or not breed or not number.isdigit():
        raise DatasetError(f"oxford-iiit-pet: {file_name!r} is not named <breed>_<number>")
    return breed


def oxford_pets(root: Path, *, extensions=(".jpg", ".jpeg", ".png")):
    """``oxford-iiit-pet/images/<Breed>_<n>.jpg`` -> 37 breeds, labels from the file names."""
    folder = Path(root) / "images"
    if not folder.is_dir():
        raise DatasetError(f"oxford-iiit-pet: expected an images/ folder in {root}")
    paths = list_images(folder, extensions)
    if not paths:
        raise DatasetError(f"oxford-iiit-pet: no images with extensions {list(extensions)} in {folder}")
    targets = [pets_label(p.name) for p in paths]
    return Data(mapobs(load_image, paths), targets), (Image(), Label(sorted(set(targets))))
