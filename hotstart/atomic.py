"""Atomic writes: the one place hotstart writes a file that someone may read while it is written.

A file is written to a temporary name in its destination folder, flushed to disk, and renamed
over the target (``os.replace`` is atomic on POSIX and Windows), so a reader sees the old
content or the new, never a half-written file, even if the writer is killed (SIGKILL, power).

A failed write (a full disk, a read-only file system, a file size limit) raises a `WriteError`
(hotstart/write_errors.py): an `OSError` with the original errno that names `path`, not the
temporary file nor nothing at all; the temporary file is removed.

A writer killed by SIGKILL (or a power cut) cannot remove its temporary file, ``.NAME.XXXXXXXX.tmp``;
the next write of the same `path` does. To tell a dead writer's file from a live one's, each writer
holds an exclusive ``flock`` on its temporary file from its creation until the rename: the kernel
drops it when the writer dies, so a temporary nobody holds is stale. Where that cannot be known (no
``flock``: Windows, a network mount without locks; a file we may not open) nothing is removed.

Temporary files from ``tempfile.mkstemp`` are private (0600); the finished file gets the mode an
ordinary ``open(path, "w")`` would give it under the user's umask (0644 under umask 022).

    atomic_write_bytes(path, data)
    with atomic_open(path) as f:   # a binary file object; renamed into place on success only
        f.write(chunk)
"""
from __future__ import annotations

import contextlib
import errno
import io
import os
import re
import stat
import tempfile
from pathlib import Path

from .write_errors import WriteError, write_error

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
    untouched. A failed write of ours (a full disk, a read-only file system, a file size limit:
    the file's own ``write`` and ``flush`` included) raises a `WriteError` naming `path`; an
    exception of the caller's own code inside the block goes through as it is. Temporaries of
    `path` that a killed writer left are removed first (`remove_dead_temporaries`).
    """
    path = Path(path)
    with _naming(path):
        fd, tmp, lock = _new_temporary(path, suffix)
    try:
        with io.BufferedWriter(_DestinationFile(fd, path)) as f:
            yield f
            with _naming(path):
                f.flush()
                if fsync:
                    os.fsync(f.fileno())
        with _naming(path):
            os.chmod(tmp, default_file_mode())
            os.replace(tmp, path)
    except BaseException:
        unlink_quietly(tmp)
        raise
    finally:
        _release(lock)


@contextlib.contextmanager
def atomic_path(path, *, suffix: str = ".tmp"):
    """A temporary file's name beside `path`, for a writer that needs a name rather than a file
    object (a compiler; a loader that checks what was written); on a clean exit the file is renamed
    to `path`. On any exception the temporary file is removed and `path` is untouched.

    A failure of ours, or of the writer's when it is about the temporary file (its name, or a
    full disk / a file size limit that names no file), raises a `WriteError` naming `path`."""
    path = Path(path)
    with _naming(path):
        fd, tmp, lock = _new_temporary(path, suffix)
    os.close(fd)
    try:
        try:
            yield Path(tmp)
        except OSError as e:
            if isinstance(e, WriteError) or not _about_the_temporary(e, tmp):
                raise
            raise write_error(path, e) from e
        with _naming(path):
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
    finally:
        _release(lock)


def atomic_write_bytes(path, data: bytes) -> None:
    """Write `data` to `path` atomically (see the module docstring)."""
    with atomic_open(path) as f:
        f.write(data)


def unlink_quietly(path) -> None:
    """Remove `path` if it exists (cleanup after a failed write)."""
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)


# --- helpers -------------------------------------------------------------------------------

@contextlib.contextmanager
def _naming(path: Path):
    """Re-raise an `OSError` of our own steps of the write of `path` as a `WriteError` naming it."""
    try:
        yield
    except WriteError:
        raise
    except OSError as e:
        raise write_error(path, e) from e


class _DestinationFile(io.FileIO):
    """The temporary file's raw file: a failed ``write`` (so a buffered ``write`` or ``flush``) raises
    a `WriteError` naming the destination, wherever in the caller's code it happens."""

    def __init__(self, fd: int, destination: Path):
        super().__init__(fd, "wb", closefd=True)
        self.destination = destination

    def write(self, data):
        try:
            return super().write(data)
        except OSError as e:
            raise write_error(self.destination, e) from e


def _about_the_temporary(error: OSError, tmp: str) -> bool:
    """Whether `error`, raised by a writer handed the name `tmp`, is a failure to write it: it names
    `tmp`, or it is a full disk / a file size limit that names no file."""
    if error.filename is not None:
        return os.fspath(error.filename) == os.fspath(tmp)
    return error.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)


def _temporary_pattern(path: Path, suffix: str) -> re.Pattern:
    """The names ``tempfile.mkstemp(prefix=".NAME.", suffix=suffix)`` gives beside `path`: 8 random
    characters between them, so another destination's temporaries never match."""
    return re.compile(rf"\.{re.escape(path.name)}\.[a-z0-9_]{{8}}{re.escape(suffix)}")


def _new_temporary(path: Path, suffix: str) -> tuple[int, str, int | None]:
    """A new temporary file beside `path`, held: ``(fd, name, lock fd)``.

    Stale temporaries of `path` are removed first. The lock fd (a ``dup`` of `fd`, holding the
    ``flock``, None without locks) stays open until `_release`, after the rename, so that closing
    the file does not drop the lock. A remover may take a new file for a dead writer's in the
    instant between its creation and its locking; then the name no longer leads to our file and
    we start again with another."""
    path.parent.mkdir(parents=True, exist_ok=True)
    _remove_dead_temporaries(path, suffix)
    for _ in range(100):
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=suffix, dir=path.parent)
        try:
            lock = _lock(fd)
            mine = os.fstat(fd)
            now = os.lstat(tmp)
        except FileNotFoundError:
            lock = None
        else:
            if (now.st_dev, now.st_ino) == (mine.st_dev, mine.st_ino):
                return fd, tmp, lock
        os.close(fd)
        _release(lock)
    raise OSError(errno.EAGAIN, "temporary files are removed as soon as they are made", str(path.parent))


def _lock(fd: int) -> int | None:
    """Hold an exclusive ``flock`` on the file `fd` (waiting for a remover that is looking at it);
    the fd that holds it (a ``dup``), or None where there are no locks (the write goes on unlocked)."""
    try:
        import fcntl
    except ImportError:  # Windows
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
    except OSError:  # a file system without locks (some network mounts)
        return None
    return os.dup(fd)


def _release(lock: int | None) -> None:
    if lock is not None:
        os.close(lock)  # with the file's own fd closed too, the lock is dropped


def _remove_dead_temporaries(path: Path, suffix: str) -> None:
    """Remove the temporary files of `path` (``.NAME.XXXXXXXX<suffix>``) that no live writer holds.

    A file whose lock we get, and that its name still leads to, is stale: every writer holds the
    lock from (just after) creating it until after renaming it away. Nothing here fails the write:
    a file we cannot open or lock (another user's; a file system without locks) is left."""
    try:
        import fcntl
    except ImportError:  # Windows: no way to tell a dead writer from a live one
        return
    pattern = _temporary_pattern(path, suffix)
    try:
        names = [n for n in os.listdir(path.parent) if pattern.fullmatch(n)]
    except OSError:
        return
    for name in names:
        tmp = path.parent / name
        with contextlib.suppress(OSError):
            fd = os.open(tmp, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # OSError: a live writer holds it
                held, now = os.fstat(fd), os.lstat(tmp)
                if stat.S_ISREG(held.st_mode) and (now.st_dev, now.st_ino) == (held.st_dev, held.st_ino):
                    os.unlink(tmp)
            finally:
                os.close(fd)
