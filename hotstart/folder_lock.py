"""One writer at a time in a folder: an exclusive ``flock`` on the folder itself.

Used by `atomic_folder` (on a target folder's parent) and `sibling_set` (on the folder that holds
entries of ours beside the user's files). The two never nest on one folder in one process: an
``flock`` taken twice through two handles would wait for itself.
"""
from __future__ import annotations

import contextlib
import os

__all__ = ["writers_take_turns"]


@contextlib.contextmanager
def writers_take_turns(folder, wait: bool = True):
    """Hold an exclusive lock on `folder` for one write (a no-op without fcntl: Windows).

    Yields whether this process holds it: always True when `wait` (a file system without locks
    writes unlocked); with ``wait=False``, False when another process holds it or locks cannot be
    had, so that a reader can tell "no writer is active" from "don't know"."""
    try:
        import fcntl
    except ImportError:  # Windows
        yield wait
        return
    fd = os.open(folder, os.O_RDONLY)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX if wait else fcntl.LOCK_EX | fcntl.LOCK_NB)
            held = True
        except OSError:  # busy (wait=False), or a file system without locks (some network mounts)
            held = wait
        yield held
    finally:
        os.close(fd)  # closing releases the lock
