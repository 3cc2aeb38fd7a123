"""Where an export writes, checked before the export starts (an export takes seconds to minutes).

Before this check, ``export --out`` onto an existing folder, into a folder that is a file, or into
a folder without write permission failed only at the last step, after the whole export (and, for
int8, the calibration) had run. The checks here look at the file system (and create, then remove,
one empty hidden file where the export will write: permission bits do not tell a read-only mount
or /proc, nor anything to root), import nothing heavy, and run before the learner is even loaded
(``hotstart export``) and at the top of ``learner.export``.

A missing parent folder is no error: the atomic write creates it (hotstart/atomic.py).
"""
from __future__ import annotations

import os
from pathlib import Path

from ..errors import UsageError

__all__ = ["check_file_destination", "check_folder_destination", "check_outside_source"]


def check_file_destination(path, flag: str = "--out") -> Path:
    """`path` can receive a file: it is not a folder (or other non-file), and its folder is writable.
    An existing file is replaced (atomically, once the export is done and checked)."""
    path = Path(path)
    if path.is_dir():
        raise UsageError(f"{flag} {path}: is a folder; give the file to write, e.g. {path / 'model.onnx'} "
                         f"(nothing was exported)")
    if path.exists() and not path.is_file():
        raise UsageError(f"{flag} {path}: exists and is not a regular file (nothing was exported)")
    _check_writable_folder(path.parent, path, flag)
    return path


def check_folder_destination(path, flag: str) -> Path:
    """`path` can become a folder: it is a folder already, or absent with a writable parent."""
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise UsageError(f"{flag} {path}: exists and is not a folder (nothing was exported)")
    _check_writable_folder(path if path.is_dir() else path.parent, path, flag)
    return path


def check_outside_source(path, source, flag: str = "--out", replaces_folder: bool = False) -> Path:
    """`path` is neither the model being exported (`source`: its folder, or its file) nor inside it,
    nor (for an export that swaps in a whole folder: `replaces_folder`) a folder that holds it: an
    export written there would overwrite or replace the model it is made from (an ONNX file
    written over task.json, a web folder swapped in for the run folder)."""
    path, source = Path(path), Path(source)
    dest, src = path.resolve(), source.resolve()
    if dest == src or src in dest.parents:
        raise UsageError(f"{flag} {path}: is inside {source}, the model being exported; writing there would "
                         f"overwrite the model (nothing was exported). Write the export outside {source}")
    if replaces_folder and dest in src.parents:
        raise UsageError(f"{flag} {path}: holds {source}, the model being exported; the export would replace "
                         f"that folder, model included (nothing was exported). Write the export elsewhere")
    return path


def _check_writable_folder(folder: Path, path: Path, flag: str) -> None:
    """The nearest existing ancestor of `folder` is a folder this process may create files in."""
    existing = folder
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        raise UsageError(f"{flag} {path}: {existing} is a file, not a folder (nothing was exported)")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise UsageError(f"{flag} {path}: no permission to write in {existing} (nothing was exported)")
    _try_creating_a_file(existing, path, flag)


def _try_creating_a_file(folder: Path, path: Path, flag: str) -> None:
    """Create (and remove) an empty hidden file in `folder`: the permission bits that `os.access`
    reads say yes to root everywhere, and nothing about a read-only mount or /proc, where the
    export then failed at its end, naming its temporary file."""
    import tempfile

    try:
        fd, probe = tempfile.mkstemp(dir=folder, prefix=".hotstart-write-check-")
    except OSError as e:
        raise UsageError(f"{flag} {path}: cannot create files in {folder} ({e.strerror or e}; nothing was "
                         f"exported)") from None
    try:
        os.close(fd)
    finally:  # a signal in between (SIGTERM raises in the CLI) must not leave the probe behind
        os.unlink(probe)
