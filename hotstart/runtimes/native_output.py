"""`quiet_native_output`: drop known notices that native code writes to the process's stderr.

Two runtimes print lines that say nothing to a user, from C++, where no Python logging filter can
reach them: ExecuTorch's ``cpuinfo_utils.cpp`` (when a program's first method loads, on CPUs its
table does not know; through its Python bindings, which write to ``sys.stderr``) and torch's
"No CUDA runtime is found" (on a machine with a CUDA toolkit and no GPU). The context manager
points file descriptor 2 at a temporary file and ``sys.stderr`` at a buffer for the duration of
the call, puts both back, and writes every captured line that is not one of `patterns` to
``sys.stderr``: a real error still reaches the user, only later.
"""
from __future__ import annotations

import contextlib
import io
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


def _flush_c_streams() -> None:
    """``fflush(NULL)``: every C stdio stream's buffer, written out now."""
    import ctypes

    try:
        ctypes.CDLL(None).fflush(None)
    except (OSError, AttributeError):  # no C library to call (not a POSIX system)
        pass


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
    python_side = io.StringIO()
    with tempfile.TemporaryFile(mode="w+b") as capture:
        os.dup2(capture.fileno(), fd)
        try:
            with contextlib.redirect_stderr(python_side):
                yield
        finally:
            _flush_c_streams()  # what native code still holds in a C stdio buffer belongs to the capture
            os.dup2(saved, fd)
            os.close(saved)
            capture.seek(0)
            text = capture.read().decode("utf-8", "replace") + python_side.getvalue()
            kept = [line for line in text.splitlines(keepends=True) if not drop.search(line)]
            if kept:
                sys.stderr.write("".join(kept))
                sys.stderr.flush()
