"""Image files under folders: hotstart's one folder walker, for the dataset recipes, ``hotstart
predict DIR`` and a bundle's ``python predictor.py model.onnx DIR`` alike.

It lives in the contract (standard library only) because a bundle carries the contract and nothing
else of hotstart's: a bundle's predictor lists a folder exactly as ``hotstart predict`` does, with
this code, not a copy. hotstart/datasets/walk.py builds the dataset folders' listing on it.

Links are followed, because datasets are often assembled from links (a class folder that links to
a store elsewhere, a file linked in). But a folder link is followed only when what it reaches is
new to the walk. It is skipped, with a warning that names it, when its target:

- is the folder holding the link or one above it ("back up the tree": ``cat/up -> ..``,
  ``cat/sub/loop -> ../``), or contains the dataset's root (``cat/all -> /``): followed, it would
  label every other class's images as this class too (before: silently), or turn the whole tree
  into one more class (``root/loop -> .``);
- lies inside the dataset's root but outside the class folder being listed (``cat/dogs -> ../dog``,
  or a class folder ``alias -> cat``): those images belong to another class folder, and would be
  counted twice under two labels.

Within one listing each real folder is visited once, so a link loop ends. A file link that leads
nowhere is an `ImageInputError` naming it. Names starting with "." are skipped
(``.ipynb_checkpoints``, macOS ``._x.jpg``). Everything is returned sorted, so one folder always
gives the same order.
"""
from __future__ import annotations

import os
import warnings
from pathlib import Path

from .errors import ImageInputError, InputValueError

__all__ = ["IMAGE_EXTENSIONS", "image_paths", "link_problem", "list_image_files", "warn_link_skipped"]

IMAGE_EXTENSIONS = (".jpg", ".jpeg", ".png", ".bmp", ".gif", ".tif", ".tiff", ".webp")
"""The file suffixes a folder walk counts as images when no ``extensions=`` is given, matched in
any letter case (``.JPG`` is an image); other files, and hidden ones, are left out."""


def image_paths(inputs) -> list[str]:
    """`inputs` (paths) with each folder replaced by the image files under it (sorted, recursively,
    hidden ones skipped: `list_image_files`); a folder without images is an `InputValueError`
    naming it. Files are kept as given: a missing or unreadable one gets its own error line when
    it is predicted (report.py)."""
    paths = []
    for given in map(str, inputs):
        if not Path(given).is_dir():
            paths.append(given)
            continue
        found = list_image_files(Path(given), IMAGE_EXTENSIONS)
        if not found:
            raise InputValueError(f"{given}: a folder with no image files under it ({', '.join(IMAGE_EXTENSIONS)}); "
                                  f"give image files or a folder of them")
        paths.extend(str(f) for f in found)
    return paths


def _inside(path: str, folder: str) -> bool:
    """`path` is `folder` or below it (both real paths)."""
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def link_problem(link: Path, root: Path, own: Path | None = None) -> str | None:
    """Why the folder link `link` in the dataset `root` is not followed (None: it is). `own` is the
    folder being listed, into which a link may point (a class folder); None when `link` is itself a
    class or split folder, which may point anywhere but into the dataset. See the module docstring."""
    if not link.is_symlink():
        return None
    target = os.path.realpath(link)
    where, top = os.path.realpath(link.parent), os.path.realpath(root)
    if _inside(where, target) or _inside(top, target):
        return f"it points back up the tree, to {target}"
    if _inside(target, top) and (own is None or not _inside(target, os.path.realpath(own))):
        return f"it points into another folder of the dataset, {target}, whose images would be counted twice"
    return None


def warn_link_skipped(link: Path, problem: str, stacklevel: int = 4) -> None:
    """The warning for a folder link the walk does not follow (`link_problem` says why); the
    default `stacklevel` names the caller of the function that walked (a recipe, a predictor).
    A function between (a wrapper of `list_image_files`) passes a larger one (`list_image_files`'s
    `stacklevel`), so the warning still names the user's line, not one inside hotstart."""
    warnings.warn(f"{link} is a folder link that is not followed: {problem}. Remove it (or link the "
                  f"images themselves) to silence this", UserWarning, stacklevel=stacklevel)


def list_image_files(folder: Path, exts: tuple[str, ...], *, root: Path | None = None,
                     recursive: bool = True, stacklevel: int = 3) -> list[Path]:
    """Image files under `folder` (part of the dataset `root`, default `folder`), sorted; `exts`:
    lower-case suffixes with the dot (`IMAGE_EXTENSIONS`). `stacklevel`: which frame a link-skipped
    warning names, counted as ``warnings.warn`` counts them from here (3: the caller of the function
    that called this one; a wrapper adds one for itself: datasets/walk.py)."""
    root = folder if root is None else root
    found, seen = [], set()
    for dirpath, dirnames, filenames in os.walk(folder, followlinks=True):
        real = os.path.realpath(dirpath)
        if real in seen:  # reached again through a link: a loop, or two links to one folder
            dirnames[:] = []
            continue
        seen.add(real)
        keep = []
        for d in sorted(dirnames) if recursive else []:
            if d.startswith("."):
                continue
            problem = link_problem(Path(dirpath) / d, root, own=folder)
            if problem is not None:
                warn_link_skipped(Path(dirpath) / d, problem, stacklevel=stacklevel + 1)
                continue
            keep.append(d)
        dirnames[:] = keep
        for n in filenames:
            if n.startswith(".") or os.path.splitext(n)[1].lower() not in exts:
                continue
            file = Path(dirpath) / n
            if not file.exists():  # os.walk lists a broken link as a file
                raise ImageInputError(f"{file} is a broken link (it points to "
                                      f"{os.readlink(file)!r}, which does not exist); remove or fix it")
            found.append(file)
    return sorted(found)
