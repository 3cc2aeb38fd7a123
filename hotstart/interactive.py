"""`draws_bars(stream)`: should progress bars be drawn on this stream?

A bar is a stream of ``\\r`` updates: right on a terminal and in a Jupyter kernel (which renders
them), noise in a log file, a pipe or CI. So every progress display of hotstart (training's
bars, the warmup's, the download bar) asks this one function, and on a non-terminal prints plain
lines instead.
"""
from __future__ import annotations

import sys


def draws_bars(stream) -> bool:
    """True when `stream` is a terminal, or when running in a Jupyter kernel (which renders bars)."""
    if _in_jupyter_kernel():
        return True
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty())
    except ValueError:  # a closed stream
        return False


def _in_jupyter_kernel() -> bool:
    """Running inside a Jupyter kernel: IPython's shell has a kernel. (``ipykernel`` merely being
    imported, as test tools and notebook clients do, is not that.)"""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None and hasattr(ipython, "get_ipython") else None
    return shell is not None and getattr(shell, "kernel", None) is not None
