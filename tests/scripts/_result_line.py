"""One ``RESULT {json}`` line per process, for the multi-process test scripts in this folder.

The ranks share one stdout pipe. `print` may reach it in several writes (with PYTHONUNBUFFERED,
text and newline go separately), and another rank's line can land in between. So everything
printed before is flushed, and the line goes out in one write(2) below PIPE_BUF, which a pipe
never interleaves.
"""
import json
import os
import sys


def emit_result(obj) -> None:
    line = ("RESULT " + json.dumps(obj) + "\n").encode()
    assert len(line) < 4096, len(line)  # PIPE_BUF on Linux
    sys.stdout.flush()
    os.write(sys.stdout.fileno(), line)
