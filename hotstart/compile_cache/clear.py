"""`clear`: delete what the warmup wrote into a cache folder, and nothing else.

The cache root is shared: hotstart's downloaded datasets live beside the compile cache
(``<user cache>/hotstart/datasets``), and ``--cache-dir`` may name any folder. So clearing removes
only the compile cache's own entries, the Inductor folder and the manifest (with its lock and any
temporary file a killed write left behind), and refuses a folder that does not look like a compile
cache rather than guessing.
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

from .cache import cache_dir
from .manifest import FORMAT, LOCK, MANIFEST
from ..errors import HotstartError

INDUCTOR = "inductor"
# what Inductor / AOTAutograd / Triton create in TORCHINDUCTOR_CACHE_DIR
_INDUCTOR_MARKS = {"fxgraph", "aotautograd", "locks", "triton", "cache", "gcc", "precompiled_headers"}


class NotACompileCache(HotstartError, ValueError):
    """The folder given to `clear` does not look like a hotstart compile cache."""


def _has_hotstart_manifest(root: Path) -> bool:
    try:
        data = json.loads((root / MANIFEST).read_bytes().decode("utf-8"))
    except (OSError, ValueError, RecursionError):
        return False
    return isinstance(data, dict) and data.get("format") == FORMAT


def _has_inductor_folder(root: Path) -> bool:
    folder = root / INDUCTOR
    if not folder.is_dir() or folder.is_symlink():
        return False
    names = {p.name for p in folder.iterdir()}
    return not names or bool(names & _INDUCTOR_MARKS)  # empty: made by inductor_cache, nothing compiled yet


def looks_like_compile_cache(root) -> bool:
    """A manifest in hotstart's format, or an Inductor folder with Inductor's own subfolders."""
    root = Path(root)
    return _has_hotstart_manifest(root) or _has_inductor_folder(root)


def compile_cache_paths(root) -> list[Path]:
    """The paths in `root` that the warmup writes (those that exist)."""
    root = Path(root)
    paths = [root / INDUCTOR, root / MANIFEST, root / LOCK]
    paths += sorted(root.glob(f".{MANIFEST}.*.tmp"))  # left by a write that was killed
    return [p for p in paths if p.exists() or p.is_symlink()]


def clear(root=None) -> list[Path]:
    """Remove the compile cache in `root` (default: the user cache) and return what was removed.

    Raises `NotACompileCache` (naming the folder and what it lacks) if `root` holds files but
    neither a hotstart manifest nor an Inductor cache folder; deletes nothing then. A folder
    with nothing of ours (missing, empty, or only downloaded datasets) is left alone: ``[]``.
    """
    root = cache_dir(root)
    if not root.is_dir():
        return []
    ours = compile_cache_paths(root)
    if not looks_like_compile_cache(root):
        others = sorted(p.name for p in root.iterdir() if p.name != "datasets")
        if not others:
            return []
        raise NotACompileCache(
            f"{root} does not look like a hotstart compile cache (no {MANIFEST} of format {FORMAT!r} and no "
            f"{INDUCTOR}/ folder of Inductor's); it holds {others[:5]}{' ...' if len(others) > 5 else ''}. "
            "Nothing was deleted.")
    for p in ours:
        if p.is_dir() and not p.is_symlink():
            shutil.rmtree(p)
        else:
            p.unlink()
    return ours
