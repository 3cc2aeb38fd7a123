"""The SHA-256 of a file: hotstart's one way to hash a file on disk.

Used wherever a file is checked against a digest recorded earlier: the compile cache's artifacts
(compile_cache/artifacts.py), the files of a folder export (export/manifest.py), a downloaded
dataset (datasets/download.py), the data files shipped with hotstart. One helper, so each reads the
file the same way: in chunks (a model or a compiled kernel may be large; reading it whole would hold
it all in memory), through ``hashlib.file_digest`` where Python has it (3.11+: it reads into one
reused buffer, and releases the GIL for large reads), a chunked loop on Python 3.10.

Standard library only, and nothing of hotstart's: any layer may import it.
"""
from __future__ import annotations

import hashlib
import os

__all__ = ["file_sha256"]

_CHUNK = 1 << 20


def file_sha256(path: str | os.PathLike) -> str:
    """The hex SHA-256 of the file `path`'s content. Raises what ``open`` raises (`FileNotFoundError`,
    `IsADirectoryError`, `PermissionError`), naming the path."""
    with open(path, "rb") as f:
        if hasattr(hashlib, "file_digest"):  # Python 3.11+
            return hashlib.file_digest(f, "sha256").hexdigest()
        h = hashlib.sha256()
        for chunk in iter(lambda: f.read(_CHUNK), b""):
            h.update(chunk)
        return h.hexdigest()
