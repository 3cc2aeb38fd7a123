"""Where the server's socket lives: ``<user runtime dir>/hotstart/serve.sock``.

A server that is stopping, once its runs end, moves its socket aside to ``stopping-<pid>.sock``
in the same folder: new runs no longer find it (and a new server may take ``serve.sock``), while
``hotstart serve --status`` and ``--stop`` still reach it there.

The runtime folder is platformdirs' ``user_runtime_dir`` (``$XDG_RUNTIME_DIR``, else
``/tmp/runtime-$UID``), or ``$HOTSTART_RUNTIME_DIR`` (tests use a temporary one). The folder is
created with mode 0700 and refused if another user owns it or others may write to it: a socket
there is reachable only by its owner, whatever the socket file's own mode.
"""
from __future__ import annotations

import os
import stat
import warnings
from pathlib import Path

from .errors import ServeError

SOCKET_NAME = "serve.sock"
STOPPING_PREFIX, STOPPING_SUFFIX = "stopping-", ".sock"
LOG_NAME = "serve.log"
# sockaddr_un.sun_path holds 108 bytes on Linux, the terminating NUL included
MAX_SOCKET_PATH = 107


def runtime_dir() -> Path:
    """The folder that holds the socket and the server's log (not created here)."""
    env = os.environ.get("HOTSTART_RUNTIME_DIR")
    if env:
        return Path(env)
    import platformdirs

    with warnings.catch_warnings():  # platformdirs warns when XDG_RUNTIME_DIR is unset; its fallback is fine
        warnings.simplefilter("ignore")
        return Path(platformdirs.user_runtime_dir("hotstart"))


def socket_path() -> Path:
    path = runtime_dir() / SOCKET_NAME
    if len(os.fsencode(str(path))) > MAX_SOCKET_PATH:
        raise ServeError(f"socket path {path} is longer than {MAX_SOCKET_PATH} bytes, the limit of a Unix "
                         f"socket address: set HOTSTART_RUNTIME_DIR to a shorter folder")
    return path


def stopping_socket_path(folder: Path, pid: int) -> Path | None:
    """Where stopping server `pid` moves its socket in `folder`; None if too long for a socket."""
    path = Path(folder) / f"{STOPPING_PREFIX}{pid}{STOPPING_SUFFIX}"
    return path if len(os.fsencode(str(path))) <= MAX_SOCKET_PATH else None


def stopping_socket_paths(folder: Path) -> list[Path]:
    """The sockets in `folder` of servers that are stopping (or that died while stopping)."""
    try:
        found = [p for p in Path(folder).iterdir()
                 if p.name.startswith(STOPPING_PREFIX) and p.name.endswith(STOPPING_SUFFIX)]
    except OSError:  # no folder (no server ever ran), or not ours to read
        return []
    return sorted(found, key=lambda p: p.name)


def log_path() -> Path:
    return runtime_dir() / LOG_NAME


def ensure_private_dir(folder: Path) -> None:
    """Create `folder` (mode 0700) if needed; refuse one that another user owns or others can write."""
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    st = folder.stat()
    if st.st_uid != os.getuid():
        raise ServeError(f"{folder} belongs to uid {st.st_uid}, not to you (uid {os.getuid()}): "
                         f"set HOTSTART_RUNTIME_DIR to a folder of your own")
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise ServeError(f"{folder} is writable by other users (mode {stat.S_IMODE(st.st_mode):o}): "
                         f"chmod 700 it, or set HOTSTART_RUNTIME_DIR")
