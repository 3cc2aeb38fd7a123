"""The server must be safe to fork: one thread, no CUDA context. Checked before every fork.

A fork copies only the calling thread; a lock that another thread held stays locked forever in
the child. So the server never runs a thread, and neither may its preloaded libraries. What the
preload starts, measured with torch 2.14 on Linux (``/proc/self/task``): ``import torch`` and
``import numpy`` start no Python thread, but OpenBLAS (numpy's, and scipy's when torchmetrics
pulls it in) starts its worker threads (``blas_thread_server``) as soon as its library loads.
OpenBLAS registers a ``pthread_atfork`` handler that stops those workers before any fork, and the
server never does BLAS work, so one throw-away fork right after the preload (`settle`) leaves the
server with a single thread for good; a child that uses BLAS starts its own workers. Torch's
intra-op (OpenMP) and inter-op pools start on the first parallel op, which the server never runs:
`torch.get_num_threads()` does not start them either, and neither does anything in the preload.

`check` runs before every fork and refuses to fork (ServeError) when a second thread exists or
CUDA is initialised, naming what it found.
"""
from __future__ import annotations

import os
import sys
import threading

from .errors import ServeError


def thread_names() -> list[str]:
    """The OS threads of this process, by name (``/proc/self/task/*/comm``)."""
    names = []
    for tid in sorted(os.listdir("/proc/self/task"), key=int):
        try:
            with open(f"/proc/self/task/{tid}/comm") as f:
                names.append(f"{tid}:{f.read().strip()}")
        except OSError:  # it ended while we looked
            pass
    return names


def settle() -> None:
    """One fork whose child exits at once: pthread_atfork handlers (OpenBLAS's) stop their pools."""
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)


def problems() -> list[str]:
    """What would make a fork unsafe now; empty when it is safe."""
    out = []
    names = thread_names()
    if len(names) > 1:
        out.append(f"{len(names)} OS threads ({', '.join(names)})")
    if threading.active_count() > 1:
        out.append(f"Python threads {[t.name for t in threading.enumerate()]}")
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_initialized():
        out.append("CUDA is initialised")
    return out


def check() -> None:
    found = problems()
    if found:
        raise ServeError("the server is not safe to fork: " + "; ".join(found))
