"""Kill tests' one way to stop a writer mid-write: fork a child that runs `body(stop)` and calls
``stop()`` where it should pause (it tells the parent, then sleeps), so the parent can look at
what the paused writer has on disk and then SIGKILL it (`kill_hard`)."""
from __future__ import annotations

import os
import signal
import time


def pause_child(body) -> int:
    """Fork a child that runs ``body(stop)``; returns its pid once it has called ``stop()``. The
    child never returns: it sleeps at ``stop()`` until killed, and exits 1 if `body` ends first
    (the parent's read then fails: "the child died before pausing")."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(r)

            def stop():
                os.write(w, b"x")
                time.sleep(600)

            body(stop)
        finally:
            os._exit(1)
    os.close(w)
    assert os.read(r, 1) == b"x", "the child died before pausing"
    os.close(r)
    return pid


def kill_hard(pid: int) -> None:
    """SIGKILL `pid` (a `pause_child` child) and reap it, checking that the signal killed it."""
    os.kill(pid, signal.SIGKILL)
    _, status = os.waitpid(pid, 0)
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL


KILL_AT_STEP = """
import os, shutil, signal
_kill_at, _steps = int(sys.argv[1]), [0]
def _step(f):
    def wrapped(*a, **k):
        _steps[0] += 1
        if _steps[0] == _kill_at:
            os.kill(os.getpid(), signal.SIGKILL)
        return f(*a, **k)
    return wrapped
for _name in ("replace", "rename", "unlink"):
    setattr(os, _name, _step(getattr(os, _name)))
shutil.rmtree = _step(shutil.rmtree)
"""
"""A child script's prelude (after ``import sys``): SIGKILL itself at the ``argv[1]``-th call of
``os.replace`` / ``os.rename`` / ``os.unlink`` / ``shutil.rmtree``; ``_steps[0]`` counts them, so a
script that prints it at its end tells the parent how many steps a whole write takes."""
