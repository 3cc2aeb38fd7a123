"""Listing the folders of a dataset: its class folders, its image files, the extensions asked for.

The walk itself (which links are followed, why one is skipped, the sorted order) is the model
contract's (hotstart/contract/image_files.py), so that ``hotstart predict DIR`` and a bundle's
predictor.py list a folder as the recipes do; here it is adapted to the datasets' errors (a
`DatasetError`).
"""
from __future__ import annotations

from pathlib import Path
from typing import Iterable

from ..contract import image_files
from ..contract.errors import ImageInputError
from ..contract.image_files import IMAGE_EXTENSIONS, link_problem, warn_link_skipped
from .errors import DatasetError

__all__ = ["IMAGE_EXTENSIONS", "list_image_files", "subfolders", "normalize_extensions", "require_dir",
           "link_problem"]


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


def subfolders(folder: Path, root: Path | None = None, stacklevel: int = 3) -> list[str]:
    """Names of `folder`'s non-hidden subfolders (links allowed by `link_problem`), sorted.
    `stacklevel`: which frame a link-skipped warning names, counted from here as ``warnings.warn``
    counts (3: the caller of the function that called this one)."""
    root = folder if root is None else root
    names = []
    for d in sorted(folder.iterdir()):
        if d.name.startswith(".") or not d.is_dir():
            continue
        problem = link_problem(d, root)
        if problem is not None:
            warn_link_skipped(d, problem, stacklevel=stacklevel + 1)
            continue
        names.append(d.name)
    return names


def list_image_files(folder: Path, exts: tuple[str, ...], *, root: Path | None = None,
                     recursive: bool = True, stacklevel: int = 3) -> list[Path]:
    """Image files under `folder` (part of the dataset `root`, default `folder`), sorted
    (contract/image_files.py); a broken file link is a `DatasetError` naming it. `stacklevel`: as
    the contract's, counted from here (this wrapper passes one more, for its own frame)."""
    try:
        return image_files.list_image_files(folder, exts, root=root, recursive=recursive,
                                            stacklevel=stacklevel + 1)
    except ImageInputError as e:
        raise DatasetError(str(e)) from None
