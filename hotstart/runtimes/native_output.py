"""`quiet_native_output`: drop known notices that native code writes to the process's stderr.

Two runtimes print lines that say nothing to a user, from C++ straight to file descriptor 2, where
no Python logging filter can reach them: ExecuTorch's ``cpuinfo_utils.cpp`` (on every program it
loads, on CPUs its table does not know) and AOTInductor's loader. The context manager points fd 2
at a temporary file for the duration of the call, puts it back, and writes every captured line
that is not one of `patterns` to ``sys.stderr``: a real error still reaches the user, in order,
only later. Python's own ``sys.stderr`` is flushed around the swap so nothing is lost or reordered
within it.
"""
from __future__ import annotations

import contextlib
import os
import re
import sys
import tempfile
from typing import Iterable

__all__ = ["quiet_native_output", "NATIVE_NOTICES"]

# lines that runtimes print on healthy runs (matched anywhere in the line)
NATIVE_NOTICES = (
    r"cpuinfo_utils\.cpp",  # ExecuTorch: "... cpuinfo_utils.cpp:NN] Reading file /sys/devices/..."
    r"No CUDA runtime is found",  # torch's cpp_extension on a machine with a CUDA toolkit and no GPU
)


@contextlib.contextmanager
def quiet_native_output(patterns: Iterable[str] = NATIVE_NOTICES):
    """Within the block, lines written to fd 2 that match one of `patterns` are dropped; the others
    are written to ``sys.stderr`` when the block ends (also when it raises)."""
    drop = re.compile("|".join(f"(?:{p})" for p in patterns))
    fd = 2  # what native code writes to, whatever sys.stderr is now
    try:
        saved = os.dup(fd)
    except OSError:  # no fd 2 at all: nothing to capture
        yield
        return
    sys.stderr.flush()
    with tempfile.TemporaryFile(mode="w+b") as capture:
        os.dup2(capture.fileno(), fd)
        try:
            yield
        finally:
            sys.stderr.flush()
            os.dup2(saved, fd)
            os.close(saved)
            capture.seek(0)
            kept = [line for line in capture.read().decode("utf-8", "replace").splitlines(keepends=True)
                    if not drop.search(line)]
            if kept:
                sys.stderr.write("".join(kept))
                sys.stderr.flush()
