"""Recipes: turn a folder layout or a table on disk into ``(Data, blocks)``.

    data, blocks = ImageFolders("pets/")       # pets/<class>/*.jpg, or pets/{train,valid,test}/<class>/
    data, blocks = ImageTable("labels.csv", "file", "tags", label_sep=" ")   # (in `tables`)

Recipes only *list* files (cheap: directory walks and ``stat``); images are decoded lazily by
`load_image` when a sample is read, so a 100,000-image folder is ready in well under a second
and a bad file is reported when (and where) it is used. Everything is listed in sorted order,
so the same folder always gives the same indices, splits and class order.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Sequence

from ..blocks import Image, Label
from .containers import Data, mapobs
from .errors import DatasetError
from .images import load_image
from .image_table import ImageTable
from .walk import IMAGE_EXTENSIONS, list_image_files, normalize_extensions, require_dir, subfolders

__all__ = ["ImageFolders", "ImageTable", "IMAGE_EXTENSIONS", "list_images"]


SPLIT_NAMES = {"train": "train", "valid": "valid", "validation": "valid", "val": "valid", "test": "test"}
"""Folder names `ImageFolders` reads as splits (name -> split), as torchvision / Kaggle / fastai name them."""


def ImageFolders(path: str | os.PathLike, *, train: str | None = "train",  # noqa: N802
                 valid: str | Sequence[str] | None = ("valid", "validation", "val"), test: str | None = "test",
                 extensions: Sequence[str] = IMAGE_EXTENSIONS):
    """One subfolder per class: ``path/<class>/...images`` -> ``(Data, (Image(), Label(classes)))``.

    Two layouts, told apart by the names of `path`'s subfolders:

    - ``path/<class>/``: every subfolder is a class; the Data has no splits.
    - ``path/<split>/<class>/``: the subfolders are split names, `train` and optionally one of
      `valid` (by default "valid", "validation" or "val") and `test`. The Data has
      ``splits={"train": [...], "valid": [...], "test": [...]}`` (those present, in that order).
      ``test`` is held out: `tasklearner` never trains or validates on it (without a valid split,
      it splits validation off the training split); evaluate on ``data.split("test")``.

    A mix (split folders beside other folders, e.g. ``train/ test/ cat/``), a layout with test or
    valid but no train, or two folders for one split (``valid/`` and ``val/``) is ambiguous and
    raises a `DatasetError` that lists what was found. For a class that is really named "test",
    pass ``train=None`` (no split folders at all) or other split names.

    Images are found recursively inside a class folder, following folder links (each real folder
    once, so a link loop ends) except those back up the tree or into another class's folder,
    which are skipped with a warning naming them (see walk.py); names starting with "." are skipped (``.ipynb_checkpoints``,
    macOS ``._x.jpg``); `extensions` match case-insensitively; a broken file link is an error
    naming it. Targets are class folder names; the classes are those of the train and valid splits,
    sorted (a valid class folder that train lacks, or a test one that neither has, is an error).
    """
    root = require_dir(path, "ImageFolders(path=...)")
    exts = normalize_extensions(extensions)
    role_of = _split_roles(train, valid, test)
    names = subfolders(root)
    split_folders = [d for d in names if d.lower() in role_of]
    if not split_folders:
        parts = {None: _class_folders(root, exts, root)}
        role = {}
    else:
        _check_split_layout(root, names, split_folders, role_of)
        order = {"train": 0, "valid": 1, "test": 2}
        split_folders.sort(key=lambda d: order[role_of[d.lower()]])
        parts = {}
        for name in split_folders:  # a loop, not a comprehension: its frame would move the warnings' line
            parts[name] = _class_folders(root / name, exts, root)
        role = {name: role_of[name.lower()] for name in split_folders}
    paths, targets, splits = [], [], {}
    for part, folders in parts.items():
        start = len(paths)
        for cls, files in folders.items():
            paths += files
            targets += [cls] * len(files)
        if part is not None:
            splits[role[part]] = list(range(start, len(paths)))
    if not paths:
        raise DatasetError(f"ImageFolders: no images with extensions {list(exts)} under {root}")
    for part, folders in parts.items():
        for cls, files in folders.items():
            if not files:
                where = root / part / cls if part else root / cls
                raise DatasetError(f"ImageFolders: class folder {where} has no images with extensions "
                                   f"{list(exts)}; remove it or add images")
    classes = sorted({c for part, folders in parts.items() if role.get(part) != "test" for c in folders})
    trained = sorted({c for part, folders in parts.items() if role.get(part, "train") == "train" for c in folders})
    unlearnt = sorted({c for part, folders in parts.items() if role.get(part) == "valid" for c in folders} - set(trained))
    if unlearnt:
        raise DatasetError(f"ImageFolders: the validation split of {root} has class folder(s) {unlearnt} that the "
                           f"training folder lacks; a model cannot learn them, and they would cap the validation "
                           f"accuracy (training classes: {trained}); add training images for them or remove them")
    unknown = sorted({c for part, folders in parts.items() if role.get(part) == "test" for c in folders} - set(classes))
    if unknown:
        raise DatasetError(f"ImageFolders: the test split of {root} has class folder(s) {unknown} that no "
                           f"training or validation folder has; a model cannot learn them (classes: {classes})")
    return Data(mapobs(load_image, paths), targets, splits), (Image(), Label(classes))


def _split_roles(train, valid, test) -> dict[str, str]:
    """{lower-case folder name: "train" / "valid" / "test"} for the split names asked for."""
    if not train:
        return {}
    valid = [valid] if isinstance(valid, str) else list(valid or ())
    roles = {train.lower(): "train", **{v.lower(): "valid" for v in valid}}
    if test:
        roles[test.lower()] = "test"
    return roles


def _check_split_layout(root: Path, subfolders, split_folders, role_of) -> None:
    others = [d for d in subfolders if d.lower() not in role_of]
    found = f"found split folders {split_folders}" + (f" and other folders {others}" if others else "")
    layouts = "use either path/<class>/... or path/{train,valid,test}/<class>/..."
    if others:
        raise DatasetError(f"ImageFolders: {root} is ambiguous: {found}; {layouts} (for classes that are "
                           f"named like splits, pass train=None)")
    by_role: dict[str, list[str]] = {}
    for d in split_folders:
        by_role.setdefault(role_of[d.lower()], []).append(d)
    doubled = {r: ds for r, ds in by_role.items() if len(ds) > 1}
    if doubled:
        raise DatasetError(f"ImageFolders: {root} is ambiguous: {found}, several folders for one split "
                           f"{doubled}; keep one of them")
    if "train" not in by_role:
        raise DatasetError(f"ImageFolders: {root} has no training split: {found} but no "
                           f"{[d for d, r in role_of.items() if r == 'train']} folder; {layouts}")


def list_images(folder: str | os.PathLike, extensions: Sequence[str] = IMAGE_EXTENSIONS) -> list[Path]:
    """Image files under `folder`, recursively, sorted; hidden files and folders are skipped, and
    folder links back up the tree are not followed (walk.py)."""
    return list_image_files(Path(folder), normalize_extensions(extensions))


# --- helpers -------------------------------------------------------------------------------

def _class_folders(folder: Path, exts: tuple[str, ...], root: Path) -> dict[str, list[Path]]:
    """{class name: sorted image paths} for the non-hidden subfolders of `folder` (in the dataset `root`).
    Called by `ImageFolders` itself: a skipped link's warning names its caller's line (stacklevel 4:
    the walk, this, ImageFolders, the user)."""
    classes = subfolders(folder, root, stacklevel=4)
    if not classes:
        loose = len(list_image_files(folder, exts, recursive=False))
        hint = f" (it holds {loose} images directly; put them in one subfolder per class)" if loose else ""
        raise DatasetError(f"ImageFolders: {folder} has no class folders{hint}")
    found = {}
    for c in classes:  # a loop, not a comprehension (a frame of its own before Python 3.12)
        found[c] = list_image_files(folder / c, exts, root=root, stacklevel=4)
    return found
