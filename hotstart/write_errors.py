"""A write that failed, re-raised as an error that names the file the user asked for.

A full disk fails a write with ``OSError: [Errno 28] No space left on device``, which names no
file at all; a read-only file system names the temporary file the write was going to rename into
place (``.model.new-x1y2``), a name the user never chose. `write_error` turns such an `OSError` into
a `WriteError` that names the destination and says why in words (the disk is full, the file system
is read-only...).

A `WriteError` is an `OSError` with the original ``errno`` (and, for the `OSError` subclasses that
callers test for, an instance of that subclass too: a failed write that was a `PermissionError` still
is one), so ``except OSError`` and ``e.errno == errno.ENOSPC`` keep working; ``filename`` is the
destination and the original error is chained as the cause.

    try:
        ...  # write `dest`
    except OSError as e:
        raise write_error(dest, e) from e
"""
from __future__ import annotations

import errno
import os

from .errors import HotstartError

__all__ = ["WriteError", "why_write_failed", "write_error"]

_WHY = {
    errno.ENOSPC: "the disk is full",
    errno.EDQUOT: "the disk quota is used up",
    errno.EFBIG: "the file is larger than the file system or the process's file size limit allows",
    errno.EROFS: "the file system is read-only",
    errno.EACCES: "the folder is not writable",
    errno.EPERM: "the folder is not writable",
    errno.ENOTDIR: "a file stands where a folder should be",
    errno.EEXIST: "a file stands where a folder should be",
    errno.EIO: "the disk reported an input/output error",
}


def why_write_failed(error: OSError) -> str:
    """Why the write that raised `error` failed, in words ("the disk is full"); the system's own
    message for an error without a plainer one."""
    return _WHY.get(error.errno, error.strerror or str(error))


class WriteError(HotstartError, OSError):
    """A file or folder could not be written (full disk, read-only file system, file size limit...).

    ``errno`` is the original error's, ``filename`` the destination the user asked for (not a
    temporary file beside it), ``detail`` which part of it was being written (a file of a saved
    folder) or None. The message says all three and why."""

    detail = None

    def __str__(self) -> str:
        part = f" ({self.detail})" if self.detail else ""
        code = f"[Errno {self.errno}] " if self.errno is not None else ""
        return f"cannot write {self.filename}{part}: {why_write_failed(self)} ({code}{self.strerror})"


class WritePermissionError(WriteError, PermissionError):
    """A `WriteError` that is a `PermissionError` (EACCES, EPERM), as the error it replaces was."""


class WriteFileNotFoundError(WriteError, FileNotFoundError):
    """A `WriteError` that is a `FileNotFoundError` (the folder vanished), as the error it replaces was."""


class WriteFileExistsError(WriteError, FileExistsError):
    """A `WriteError` that is a `FileExistsError`, as the error it replaces was."""


class WriteIsADirectoryError(WriteError, IsADirectoryError):
    """A `WriteError` that is an `IsADirectoryError` (a folder stands at the destination)."""


class WriteNotADirectoryError(WriteError, NotADirectoryError):
    """A `WriteError` that is a `NotADirectoryError` (a file stands where a folder should be)."""


_KINDS = [(PermissionError, WritePermissionError), (FileNotFoundError, WriteFileNotFoundError),
          (FileExistsError, WriteFileExistsError), (IsADirectoryError, WriteIsADirectoryError),
          (NotADirectoryError, WriteNotADirectoryError)]


def write_error(dest, error: OSError, *, detail: str | None = None) -> WriteError:
    """The `WriteError` for `error`, raised while writing `dest`; raise it ``from error``.

    `detail` says which part of `dest` was being written ("its file task.json"); an `error` that
    is already a `WriteError` (of a file inside `dest`) keeps its errno and reason."""
    kind = next((w for base, w in _KINDS if isinstance(error, base)), WriteError)
    strerror = error.strerror or str(error) or type(error).__name__
    out = kind(error.errno, strerror, os.fspath(dest))
    out.detail = detail
    return out
