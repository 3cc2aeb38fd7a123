"""Listing image files under a folder tree: the one folder walker of the dataset recipes.

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
nowhere is a `DatasetError` naming it. Names starting with "." are skipped (``.ipynb_checkpoints``,
macOS ``._x.jpg``). Everything is returned sorted, so one folder always gives the same order.
"""
from __future__ import annotations

import os
import warnings
from pathlib import Path
from typing import Iterable

from .errors import DatasetError

__all__ = ["IMAGE_EXTENSIONS", "list_image_files", "subfolders", "normalize_extensions", "require_dir",
           "link_problem"]

IMAGE_EXTENSIONS = (".jpg", ".jpeg", ".png", ".bmp", ".gif", ".tif", ".tiff", ".webp")
"""The file suffixes a folder walk counts as images when no ``extensions=`` is given, matched in
any letter case (``.JPG`` is an image); other files, and hidden ones, are left out."""


def require_dir(path, argument: str) -> Path:
    """`path` as a Path, or a `DatasetError` naming `argument` if it is missing or not a folder."""
    p = Path(path)
    if not p.exists():
        raise DatasetError(f"{argument}: {p} does not exist")
    if not p.is_dir():
        raise DatasetError(f"{argument}: {p} is not a folder")
    return p


def normalize_extensions(extensions: Iterable[str]) -> tuple[str, ...]:
    """('.JPG', 'png') -> ('.jpg', '.png'): lower case, with the dot, sorted, at least one."""
    if isinstance(extensions, str):
        extensions = (extensions,)
    exts = tuple(sorted({e.lower() if e.startswith(".") else "." + e.lower() for e in extensions}))
    if not exts:
        raise DatasetError("extensions must name at least one file extension, e.g. ('.jpg', '.png')")
    return exts


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


def _skip(link: Path, problem: str) -> None:
    warnings.warn(f"{link} is a folder link that is not followed: {problem}. Remove it (or link the "
                  f"images themselves) to silence this", UserWarning, stacklevel=4)


def subfolders(folder: Path, root: Path | None = None) -> list[str]:
    """Names of `folder`'s non-hidden subfolders (links allowed by `link_problem`), sorted."""
    root = folder if root is None else root
    names = []
    for d in sorted(folder.iterdir()):
        if d.name.startswith(".") or not d.is_dir():
            continue
        problem = link_problem(d, root)
        if problem is not None:
            _skip(d, problem)
            continue
        names.append(d.name)
    return names


def list_image_files(folder: Path, exts: tuple[str, ...], *, root: Path | None = None,
                     recursive: bool = True) -> list[Path]:
    """Image files under `folder` (part of the dataset `root`, default `folder`), sorted."""
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
                _skip(Path(dirpath) / d, problem)
                continue
            keep.append(d)
        dirnames[:] = keep
        for n in filenames:
            if n.startswith(".") or os.path.splitext(n)[1].lower() not in exts:
                continue
            file = Path(dirpath) / n
            if not file.exists():  # os.walk lists a broken link as a file
                raise DatasetError(f"{file} is a broken link (it points to "
                                   f"{os.readlink(file)!r}, which does not exist); remove or fix it")
            found.append(file)
    return sorted(found)
