"""Writing into a cache folder: a failure names the folder and the variable that moves the cache.

hotstart keeps three caches: downloaded datasets (``HOTSTART_DATA_DIR``), the resized copies of
image folders (inside the datasets cache) and the compile cache (``HOTSTART_CACHE_DIR``). By
default they live in the user's cache folder, which a user did not choose and may not know. A
full disk or a read-only folder there gave a bare ``OSError`` ("[Errno 28] No space left on
device", without a path) or a ``PermissionError``, with no word on where the cache is or how to
put it elsewhere. `cache_writes` turns the `OSError` of a write into a `CacheWriteError` that says
which folder, why (the disk is full, the folder is read-only...), and which variable to set.

    with cache_writes(folder, "HOTSTART_DATA_DIR", what="datasets cache"):
        ...  # mkdir, write, rename into `folder`

Only writes go inside: a failure to read the *source* of a copy is not the cache's fault.
"""
from __future__ import annotations

import contextlib
import os

from .errors import HotstartError
from .write_errors import why_write_failed

__all__ = ["CacheWriteError", "cache_writes"]


class CacheWriteError(HotstartError, OSError):
    """A cache folder cannot be written (full disk, read-only folder...). The message names the
    folder, the reason and the environment variable that puts the cache elsewhere. An `OSError`
    too, as the error it replaces was."""


@contextlib.contextmanager
def cache_writes(folder, env_var: str | None, *, what: str = "cache"):
    """Re-raise the `OSError` of a write into `folder` as a `CacheWriteError` naming the folder,
    the reason and `env_var` (None: a folder the caller chose; the chained cause keeps the
    original error)."""
    try:
        yield
    except CacheWriteError:
        raise
    except OSError as e:
        raise cache_write_error(folder, e, env_var, what=what) from e


def cache_write_error(folder, error: OSError, env_var: str | None, *, what: str = "cache") -> CacheWriteError:
    """The `CacheWriteError` for `error`, raised while writing into `folder`."""
    why = why_write_failed(error)
    where = f" ({error.filename})" if error.filename and os.fspath(error.filename) != os.fspath(folder) else ""
    move = f", or set {env_var} to another folder (now {_current(env_var)})" if env_var else ""
    return CacheWriteError(f"cannot write the {what} in {folder}: {why}{where} [{type(error).__name__}: "
                           f"{error.strerror or error}]. Free space there or make it writable{move}")


def _current(env_var: str) -> str:
    value = os.environ.get(env_var)
    return f"{env_var}={value}" if value else f"{env_var} is unset: the user's cache folder is used"
