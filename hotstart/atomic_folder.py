"""Files that belong together, replaced as a unit: a reader sees the old set or the new, never a mix.

A saved model is two files (``weights.safetensors`` + ``task.json``); renaming each into place
(hotstart/atomic.py) keeps each file whole, but a crash between the two renames would leave new
weights beside an old task. So the whole folder is swapped:

1. write every file into a temporary folder beside the target (``.NAME.new-XXXX``), fsync'd;
2. rename the current folder aside (``.NAME.old-XXXX``), if there is one;
3. rename the temporary folder to the target;
4. rename the old folder to ``.NAME.del-XXXX`` and remove that.

Writers to one parent folder take turns (an exclusive ``flock`` on that folder, where the platform
has it), and each writer, holding that lock, first finishes what a killed writer left (`_recover`):
if the target is missing, it renames the newest ``.NAME.old-*`` back to the target, then it renames
every other leftover to a ``.del-`` name and removes it. Why that restores the last committed set,
whatever the file sets of the killed write and the next one (an export's files depend on its options,
so "the old folder holds every new name" says nothing), at each point a writer can be killed:

- in 1: the target holds the old set (or, at a first write, there is none); ``.new-`` is removed.
- between 2 and 3: no target; ``.old-`` is the old set, whole (it was moved aside by one rename),
  and it is the only ``.old-`` folder: the killed writer discarded every other one before its
  step 2, holding the lock (a leftover it cannot rename away is an error, not skipped). Restored.
- between 3 and 4: the target holds the new set; the ``.old-`` folder is stale and discarded.
- in 4: the target holds the new set. An ``.old-`` folder is only ever renamed, never emptied in
  place: a half-removed one is named ``.del-`` and is never taken for a committed set.

So a killed writer always leaves the old set or the new one, at the target or, between 2 and 3,
beside it: `read_folder` reads that one then. A `read_folder` also does the cleanup when it is
provably safe: when no writer holds the lock (a writer killed by SIGKILL no longer does), so a
killed save's ``.NAME.new-XXXX`` folder does not stay beside the model until the next save.

A reader opens the folder once and reads every file through that handle (``dir_fd``), so a swap
in the middle of a read cannot hand it one file from each set; if the old set is removed while
it reads, it starts again from the current one.

Files get the mode ``open(path, "w")`` would give them (0644 under umask 022); a new folder gets
0777 masked by the umask (0755), a replaced folder keeps its mode.
"""
from __future__ import annotations

import contextlib
import errno
import os
import secrets
import shutil
import stat
import tempfile
from pathlib import Path
from typing import Callable, Iterable, Union

from .atomic import atomic_write_bytes, default_folder_mode, fsync_dir
from .write_errors import write_error
from .folder_lock import writers_take_turns

__all__ = ["read_folder", "write_folder"]

_NEW, _OLD, _DEL = ".new-", ".old-", ".del-"

Replaces = Union[Iterable[str], Callable[[Path], Iterable[str]]]
"""`write_folder`'s `replaces`: the names it may replace, or a function of the folder that says
which (called while the writers' lock is held, after a killed writer's set was put back)."""


def write_folder(path, files: dict[str, bytes], replaces: Replaces | None = None) -> Path:
    """Make the folder `path` hold exactly `files` ({name: bytes}), replacing it as a unit.

    An existing folder is replaced only if it holds nothing but the names `replaces`: by default
    the names of `files` (what an earlier write of the same set left); a caller that knows better
    which files are its own passes them (an export folder's manifest, hotstart/export/manifest.py:
    an earlier export with more files, and not a file of yours that has one of the new names).
    Anything else there would be deleted with it, so that raises `FileExistsError` naming those
    files instead. A callable `replaces` is given the folder and asked while this write holds the
    writers' lock, after recovery: a check of the folder's content made before taking the lock
    could be stale by the time of the swap (another writer's set, a killed writer's set put back).

    A failed write (a full disk, a read-only file system) raises a `WriteError` (an `OSError` with
    the original errno) naming `path` and the file being written, not the temporary folder; the
    temporary folder is removed and the earlier folder, if any, is left as it was.
    """
    path = Path(os.path.abspath(path))  # "." or "model/" get a real name and parent
    parent = path.parent
    parent.mkdir(parents=True, exist_ok=True)
    with writers_take_turns(parent):
        _recover(path, strict=True)  # a killed writer's leftovers: stale, since we hold the writers' lock
        ours = files if replaces is None else replaces(path) if callable(replaces) else replaces
        mode = _check_replaceable(path, set(ours))
        try:
            tmp = Path(tempfile.mkdtemp(prefix=f".{path.name}{_NEW}", dir=parent))
        except OSError as e:  # a read-only file system: name the folder, not the temporary one
            raise write_error(path, e) from e
        old = parent / f".{path.name}{_OLD}{tmp.name.rsplit('-', 1)[-1]}"
        moved_aside = False
        writing = None
        try:
            for writing, data in files.items():
                atomic_write_bytes(tmp / writing, data)
            writing = None
            os.chmod(tmp, mode)
            fsync_dir(tmp)
            if path.exists():
                os.rename(path, old)
                moved_aside = True
            os.rename(tmp, path)
        except BaseException as e:
            shutil.rmtree(tmp, ignore_errors=True)
            if moved_aside and not path.exists():
                os.rename(old, path)  # put the old set back: nothing was replaced
            if isinstance(e, OSError):  # a full disk names no file; a file's error names the temporary folder
                raise write_error(path, e, detail=writing and f"its file {writing}") from e
            raise
        fsync_dir(parent)
        if moved_aside:
            _discard(path, old, strict=False)  # one that stays is removed by the next write
    return path


def read_folder(path, names) -> tuple[Path, dict[str, bytes]]:
    """Read the files `names` of one complete set: ``(folder they came from, {name: bytes})``.

    The folder is `path`, or, after a writer was killed mid-swap, the old set beside it.
    Raises `FileNotFoundError` naming the first missing file when there is no complete set, and
    `IsADirectoryError` (a folder) or `OSError` EINVAL (a FIFO, a device) naming a name of the set
    that is not a regular file.
    """
    path = Path(path)
    names = list(names)
    _clean_up_if_no_writer(path, names)
    for _ in range(5):  # a concurrent writer may remove a folder while we read it: look again
        for folder in [path, *_complete_leftovers(path, names, _OLD)]:
            try:
                return folder, _read_all(folder, names)
            except (FileNotFoundError, NotADirectoryError):
                continue
    missing = next((path / n for n in names if not (path / n).is_file()), path / names[0])
    raise FileNotFoundError(f"{missing} not found")


# --- helpers -------------------------------------------------------------------------------

def _read_all(folder: Path, names: list[str]) -> dict[str, bytes]:
    """{name: bytes} of the files `names` in `folder`, read through one handle on the folder.

    An error names the file by its full path: read through a handle, Python would name the bare
    name, or the file handle's number ("Is a directory: 4", from ``fdopen`` of a folder). So a name
    that is not a regular file is refused before ``fdopen`` (`_not_a_file`); a FIFO or a device
    would also block or never end."""
    if os.open not in os.supports_dir_fd:  # Windows: no directory handles; read by path
        out = {}
        for n in names:
            mode = (folder / n).stat().st_mode
            if not stat.S_ISREG(mode):
                raise _not_a_file(folder / n, mode)
            out[n] = (folder / n).read_bytes()
        return out
    dir_fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        out = {}
        for n in names:
            try:  # O_NONBLOCK: opening a FIFO does not wait for a writer (no effect on regular files)
                fd = os.open(n, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0), dir_fd=dir_fd)
            except OSError as e:  # the same kind (FileNotFoundError is looked for), with the full path
                raise type(e)(e.errno, e.strerror, str(folder / n)) from None
            mode = os.fstat(fd).st_mode
            if not stat.S_ISREG(mode):  # before fdopen, whose error names the handle's number
                os.close(fd)
                raise _not_a_file(folder / n, mode)
            with os.fdopen(fd, "rb") as f:
                out[n] = f.read()
        return out
    finally:
        os.close(dir_fd)


def _not_a_file(path: Path, mode: int) -> OSError:
    """The error for `path`, which is there but is no regular file: an `IsADirectoryError` for a
    folder, an `OSError` (EINVAL) for a FIFO, a socket or a device; both carry the path."""
    if stat.S_ISDIR(mode):
        return IsADirectoryError(errno.EISDIR, "is a folder, not a file", str(path))
    return OSError(errno.EINVAL, "is not a regular file (a FIFO, a socket or a device)", str(path))


def _leftovers(path: Path, tag: str) -> list[Path]:
    """Folders that interrupted writes of `path` left beside it, newest first."""
    prefix = f".{path.name}{tag}"
    try:
        entries = [path.parent / e for e in os.listdir(path.parent) if e.startswith(prefix)]
    except FileNotFoundError:
        return []
    found = []
    for p in entries:
        with contextlib.suppress(FileNotFoundError):
            found.append((p.lstat().st_mtime_ns, p))
    return [p for _, p in sorted(found, key=lambda t: t[0], reverse=True)]


def _complete_leftovers(path: Path, names, tag: str):
    for p in _leftovers(path, tag):
        if p.is_dir() and not p.is_symlink() and all((p / n).is_file() for n in names):
            yield p


def _recover(path: Path, strict: bool) -> None:
    """Finish what a killed writer left; the caller holds the writers' lock.

    With no target, the newest ``.old-`` folder is the last committed set, whatever files it holds
    (the module docstring says why): it is renamed back. Every other leftover is discarded. `strict`
    (a writer): a leftover that cannot be renamed away is an `OSError` naming it, so that the writer
    never moves a second set aside beside it; a reader leaves it."""
    if not path.exists() and not path.is_symlink():
        committed = next((p for p in _leftovers(path, _OLD) if p.is_dir() and not p.is_symlink()), None)
        if committed is not None:
            os.rename(committed, path)
            fsync_dir(path.parent)
    for p in _leftovers(path, _OLD) + _leftovers(path, _NEW) + _leftovers(path, _DEL):
        if p.is_dir() and not p.is_symlink():
            _discard(path, p, strict)


def _discard(path: Path, folder: Path, strict: bool) -> None:
    """Remove `folder`, a leftover beside `path`: renamed to a ``.del-`` name first (one rename: an
    ``.old-`` folder is never seen half removed), then removed, as far as it can be."""
    if not folder.name.startswith(f".{path.name}{_DEL}"):
        doomed = path.parent / f".{path.name}{_DEL}{secrets.token_hex(6)}"
        try:
            os.rename(folder, doomed)
        except FileNotFoundError:
            return
        except OSError as e:
            if strict:
                raise OSError(e.errno, f"cannot remove {folder}, left by an interrupted write of the folder "
                                       f"beside it ({e.strerror}); remove it by hand", str(folder)) from e
            return
        folder = doomed
    shutil.rmtree(folder, ignore_errors=True)


def _clean_up_if_no_writer(path: Path, names) -> None:
    """What killed writers left beside `path` (``.NAME.new-*``, ``.NAME.old-*``), removed by a reader
    too, but only when that is provably stale: no writer holds the parent folder's lock (every
    writer holds it from before it creates its temporary folder until after it removes it, and a
    killed writer's lock is released by the kernel). A busy lock, or a folder we may not write:
    nothing is touched, and the read goes on."""
    if not (_leftovers(path, _NEW) or _leftovers(path, _OLD) or _leftovers(path, _DEL)):
        return
    with contextlib.suppress(OSError), writers_take_turns(path.parent, wait=False) as ours:
        if ours:
            _recover(path, strict=False)


def _check_replaceable(path: Path, ours) -> int:
    """The mode the new folder gets; refuse a target that is not a folder we may replace: one
    that holds a name not in `ours`."""
    if path.is_symlink():  # swapping would replace the link, not the folder it points to
        raise FileExistsError(f"{path} is a symbolic link: save into the folder it points to "
                              f"({os.path.realpath(path)})")
    if path.exists() and not path.is_dir():
        raise FileExistsError(f"{path} exists and is not a folder: cannot save a folder there")
    if not path.exists():
        return default_folder_mode()
    extra = sorted(set(os.listdir(path)) - set(ours))
    if extra:
        shown = ", ".join(extra[:5]) + (", ..." if len(extra) > 5 else "")
        raise FileExistsError(f"{path} holds other files ({shown}): replacing the folder would delete them; "
                              f"save into a new or empty folder")
    return stat.S_IMODE(os.stat(path).st_mode)
