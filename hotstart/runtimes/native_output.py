"""`quiet_native_output`: drop known notices that native code writes to the process's stderr.

Runtimes print lines that say nothing to a user, from C or C++, where no Python logging filter can
reach them: ExecuTorch's ``cpuinfo_utils.cpp`` (when a program's first method loads, on CPUs its
table does not know; through its Python bindings, which write to ``sys.stderr``), torch's
"No CUDA runtime is found" (on a machine with a CUDA toolkit and no GPU) and LiteRT's "Created
TensorFlow Lite XNNPACK delegate for CPU". The context manager points file descriptor 2 at a
temporary file and ``sys.stderr`` at a buffer for the duration of the call, puts both back, and
writes every captured line that is not one of `patterns` to ``sys.stderr``: a real error still
reaches the user, only later.

It also hands the captured text to the caller (``with quiet_native_output(...) as captured:`` then
``captured.text``), for native output that is the answer itself (TF Lite Micro prints its arena
use) or that explains a failure (the .tflite converter's error lines): ``patterns=ALL`` then keeps
everything off the terminal.
"""
from __future__ import annotations

import contextlib
import io
import os
import re
import sys
import tempfile
from typing import Iterable

__all__ = ["quiet_native_output", "NATIVE_NOTICES", "ALL", "Captured"]

# lines that runtimes print on healthy runs (matched anywhere in the line)
NATIVE_NOTICES = (
    r"cpuinfo_utils\.cpp",  # ExecuTorch: "... cpuinfo_utils.cpp:NN] Reading file /sys/devices/..."
    r"No CUDA runtime is found",  # torch's cpp_extension on a machine with a CUDA toolkit and no GPU
    r"Created TensorFlow Lite XNNPACK delegate",  # LiteRT's interpreter, on every load
)
ALL = (r"",)  # `patterns` that drop every line: the caller reads `Captured.text` instead


class Captured:
    """What was written to stderr (fd 2 and ``sys.stderr``) inside the block, every line, filled in
    when the block ends."""

    text: str = ""


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
    are written to ``sys.stderr`` when the block ends (also when it raises). Yields a `Captured`."""
    drop = re.compile("|".join(f"(?:{p})" for p in patterns))
    captured = Captured()
    fd = 2  # what native code writes to, whatever sys.stderr is now
    try:
        saved = os.dup(fd)
    except OSError:  # no fd 2 at all: nothing to capture
        yield captured
        return
    sys.stderr.flush()
    python_side = io.StringIO()
    with tempfile.TemporaryFile(mode="w+b") as capture:
        os.dup2(capture.fileno(), fd)
        try:
            with contextlib.redirect_stderr(python_side):
                yield captured
        finally:
            _flush_c_streams()  # what native code still holds in a C stdio buffer belongs to the capture
            os.dup2(saved, fd)
            os.close(saved)
            capture.seek(0)
            text = capture.read().decode("utf-8", "replace") + python_side.getvalue()
            captured.text = text
            kept = [line for line in text.splitlines(keepends=True) if not drop.search(line)]
            if kept:
                sys.stderr.write("".join(kept))
                sys.stderr.flush()
