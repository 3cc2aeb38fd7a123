"""`FolderLock`: one writer per checkpoint folder, with a lock that dies with the process that took it.

A POSIX record lock (``fcntl.lockf``), not ``flock``. An flock belongs to the open file
description, which a fork shares: the DataLoader worker processes forked during a fit held it
too, and after a ``kill -9`` of the fit its orphaned workers (they notice their parent's death
only seconds later) kept the folder locked, so a resume started at once, as a preempted job is
requeued, was refused, naming the dead process (issue 32). A record lock belongs to the process
that took it: a fork does not inherit it, and the kernel releases it when that process ends,
however it ends. So the holder named in a refusal is alive.

Record locks never conflict inside one process, and closing any descriptor of the file releases
the process's lock. So this process's own locks are kept in `FolderLock.held` (the file's
identity -> the lock): a second fit of this process on a held folder is refused from there,
without the file being opened again. This is the one piece of process-wide state here, and it
mirrors one the kernel keeps per process. Where ``fcntl`` is missing (Windows) nothing is locked.
"""
from __future__ import annotations

import os
import socket
from pathlib import Path

from ...errors import UsageError

LOCK_NAME = ".lock"
"""The lock file `FolderLock` takes in a checkpoint folder: a second fit writing the same folder
is refused, naming the process that holds it."""


def _refusal(folder: Path, holder: str) -> UsageError:
    return UsageError(f"checkpoint_dir {folder} is being written by {holder}: two fits cannot write one checkpoint "
                      f"folder; give this one another checkpoint_dir")


class FolderLock:
    """The lock on ``folder/.lock`` while a fit writes checkpoints there; `release` when done.

    Raises `UsageError` naming the writer when another process, or another fit of this process,
    holds it."""

    held: dict = {}  # (st_dev, st_ino) of a lock file -> the FolderLock of this process that holds it

    def __init__(self, folder):
        self.folder, self._fd, self._key = Path(folder), None, None
        try:
            import fcntl
        except ImportError:  # pragma: no cover - Windows
            return
        path = self.folder / LOCK_NAME
        if path.exists():
            st = path.stat()
            mine = self.held.get((st.st_dev, st.st_ino))
            if mine is not None and mine.pid == os.getpid():  # closing the file again would release it
                raise _refusal(self.folder, f"another fit of this process ({mine.holder})")
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            holder = os.pread(fd, 200, 0).decode(errors="replace").strip() or "another process"
            os.close(fd)
            raise _refusal(self.folder, holder) from None
        self.pid, self.holder = os.getpid(), f"process {os.getpid()} on {socket.gethostname()}"
        os.ftruncate(fd, 0)
        os.pwrite(fd, self.holder.encode(), 0)
        st = os.fstat(fd)
        self._fd, self._key = fd, (st.st_dev, st.st_ino)
        self.held[self._key] = self

    def release(self) -> None:
        """Let another fit write into the folder (closing the file releases the lock)."""
        if self._fd is not None:
            self.held.pop(self._key, None)
            os.close(self._fd)
            self._fd = None
