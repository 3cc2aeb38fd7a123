"""Atomic writes: the one place hotstart writes a file that someone may read while it is written.

A file is written to a temporary name in its destination folder, flushed to disk, and renamed
over the target (``os.replace`` is atomic on POSIX and Windows), so a reader sees the old
content or the new, never a half-written file, even if the writer is killed (SIGKILL, power).

Temporary files from ``tempfile.mkstemp`` are private (0600); the finished file gets the mode an
ordinary ``open(path, "w")`` would give it under the user's umask (0644 under umask 022).

    atomic_write_bytes(path, data)
    with atomic_open(path) as f:   # a binary file object; renamed into place on success only
        f.write(chunk)
"""
from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

__all__ = ["atomic_open", "atomic_write_bytes", "default_file_mode", "default_folder_mode", "fsync_dir",
           "unlink_quietly"]


def _umask() -> int:
    mask = os.umask(0)  # the only portable way to read the umask is to set it and set it back
    os.umask(mask)
    return mask


def default_file_mode() -> int:
    """0o666 masked by the process umask: what ``open(path, "w")`` would create."""
    return 0o666 & ~_umask()


def default_folder_mode() -> int:
    """0o777 masked by the process umask: what ``os.mkdir(path)`` would create (``mkdtemp`` makes 0700)."""
    return 0o777 & ~_umask()


def fsync_dir(path) -> None:
    """Make the renames in the folder `path` durable (POSIX); folders cannot be fsync'd on Windows."""
    if os.name != "posix":
        return
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    except OSError:  # some file systems (network mounts) refuse to fsync a folder: the rename still happened
        pass
    finally:
        os.close(fd)


@contextlib.contextmanager
def atomic_open(path, *, suffix: str = ".tmp", fsync: bool = True):
    """Open a temporary file beside `path` for binary writing; on a clean exit rename it to `path`.

    On any exception (KeyboardInterrupt included) the temporary file is removed and `path` is
    untouched.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=suffix, dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            yield f
            f.flush()
            if fsync:
                os.fsync(f.fileno())
        os.chmod(tmp, default_file_mode())
        os.replace(tmp, path)
    except BaseException:
        unlink_quietly(tmp)
        raise


@contextlib.contextmanager
def atomic_path(path, *, suffix: str = ".tmp"):
    """A temporary file's name beside `path`, for a writer that needs a name rather than a file
    object (a compiler; a loader that checks what was written); on a clean exit the file is renamed
    to `path`. On any exception the temporary file is removed and `path` is untouched."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=suffix, dir=path.parent)
    os.close(fd)
    try:
        yield Path(tmp)
        fd = os.open(tmp, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        os.chmod(tmp, default_file_mode())
        os.replace(tmp, path)
    except BaseException:
        unlink_quietly(tmp)
        raise


def atomic_write_bytes(path, data: bytes) -> None:
    """Write `data` to `path` atomically (see the module docstring)."""
    with atomic_open(path) as f:
        f.write(data)


def unlink_quietly(path) -> None:
    """Remove `path` if it exists (cleanup after a failed write)."""
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)
