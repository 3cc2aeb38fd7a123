"""`captured_native_stderr`: what C and C++ code writes to the process's stderr, captured.

Native libraries (TF Lite Micro's allocator report, LiteRT's converter logs, absl's notices) write
to file descriptor 2 directly, past Python's ``sys.stderr``: only redirecting the descriptor
catches them. The descriptor is restored on exit, whatever happens inside.
"""
from __future__ import annotations

import contextlib
import os
import sys
import tempfile


class Captured:
    """The text written to descriptor 2 inside the block (filled in when the block ends)."""

    text: str = ""


@contextlib.contextmanager
def captured_native_stderr():
    """``with captured_native_stderr() as c: ...`` then ``c.text``."""
    captured = Captured()
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as f:
        os.dup2(f.fileno(), 2)
        try:
            yield captured
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            f.seek(0)
            captured.text = f.read().decode(errors="replace")
