"""Run a command where a folder is read-only, or is a tiny disk that fills up: as root too.

Root writes into a folder whatever its mode says, so a test that makes a folder read-only with
``chmod`` skipped under root, that is in every CI run. A read-only bind mount holds for root as
for anyone (EROFS), and so does a full file system (ENOSPC). Both are made in a private mount
namespace (``unshare --mount``, as root; ``unshare --mount --map-root-user`` otherwise), in a
child process: nothing is mounted in the test's own namespace, and the mounts vanish with the child.

    proc = run_in_mount_namespace(["python", "-c", code], read_only=[folder], full=[other], env=env)
"""
from __future__ import annotations

import functools
import os
import shlex
import shutil
import subprocess

from needs import missing


@functools.lru_cache(maxsize=None)
def _unshare_prefix() -> tuple[str, ...] | None:
    """The unshare command that gives this user a private mount namespace here, or None."""
    if shutil.which("unshare") is None or shutil.which("mount") is None:
        return None
    for prefix in (("unshare", "--mount"), ("unshare", "--mount", "--map-root-user")):
        probe = subprocess.run([*prefix, "sh", "-c", "mount -t tmpfs -o size=4k tmpfs /mnt 2>/dev/null || "
                                                     "mount -t tmpfs -o size=4k tmpfs /tmp"],
                               capture_output=True, timeout=60)
        if probe.returncode == 0:
            return prefix
    return None


def require_mount_namespace() -> tuple[str, ...]:
    """The unshare prefix; the test is skipped (failed under CI=true) where none works."""
    prefix = _unshare_prefix()
    if prefix is None:
        missing("a private mount namespace is needed (util-linux's unshare and mount, as root or with "
                "unprivileged user namespaces) to make a folder read-only or full for root too")
    return prefix


def env_with_this_hotstart(**extra) -> dict:
    """This process's environment, with the folder of the hotstart it imported first on PYTHONPATH:
    the child imports the same hotstart (a worktree's, not the installed one)."""
    import hotstart

    root = os.path.dirname(os.path.dirname(os.path.abspath(hotstart.__file__)))
    return {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")])), **extra}


def run_in_mount_namespace(command, *, read_only=(), full=(), full_bytes: int = 64 * 1024, env=None,
                           timeout: float = 300) -> subprocess.CompletedProcess:
    """Run `command` (a list) in a private mount namespace where each folder of `read_only` is a
    read-only bind mount of itself and each folder of `full` is an empty tmpfs of `full_bytes`."""
    prefix = require_mount_namespace()
    steps = []
    for folder in read_only:
        q = shlex.quote(os.fspath(folder))
        steps.append(f"mount --bind {q} {q} && mount -o remount,bind,ro {q}")
    for folder in full:
        steps.append(f"mount -t tmpfs -o size={int(full_bytes)} tmpfs {shlex.quote(os.fspath(folder))}")
    script = " && ".join([*steps, "exec " + " ".join(shlex.quote(os.fspath(c)) for c in command)])
    return subprocess.run([*prefix, "sh", "-c", script], capture_output=True, text=True, env=env, timeout=timeout)
