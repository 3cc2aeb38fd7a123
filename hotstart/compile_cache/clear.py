"""`clear`: delete what the warmup wrote into a cache folder, and nothing else.

The cache root is shared: hotstart's downloaded datasets live beside the compile cache
(``<user cache>/hotstart/datasets``), and ``--cache-dir`` may name any folder. So clearing removes
only the compile cache's own entries, the Inductor folder and the manifest (with its lock and any
temporary file a killed write left behind), and only in a folder that hotstart's manifest marks as
its compile cache (`manifest.mark_cache` writes it before anything is compiled there). An
``inductor/`` folder alone is not enough: it is a common name, and guessing from its subfolders
once deleted a folder that was not ours. `paths_to_clear` says what `clear` would delete, for
``--clear --dry-run``.
"""
from __future__ import annotations

import shutil
from pathlib import Path

from .cache import cache_dir
from .manifest import LOCK, MANIFEST, unmarked_reason
from ..errors import HotstartError

INDUCTOR = "inductor"


class NotACompileCache(HotstartError, ValueError):
    """The folder given to `clear` does not look like a hotstart compile cache."""


def looks_like_compile_cache(root) -> bool:
    """Does `root` hold a manifest in hotstart's format (the mark of its compile cache)?"""
    return unmarked_reason(Path(root)) is None


def compile_cache_paths(root) -> list[Path]:
    """The paths in `root` that the warmup writes (those that exist)."""
    root = Path(root)
    paths = [root / INDUCTOR, root / MANIFEST, root / LOCK]
    paths += sorted(root.glob(f".{MANIFEST}.*.tmp"))  # left by a write that was killed
    return [p for p in paths if p.exists() or p.is_symlink()]


def paths_to_clear(root=None) -> list[Path]:
    """What `clear` would delete in `root` (default: the user cache); deletes nothing.

    Raises `NotACompileCache` (naming the folder and what it lacks) if `root` holds files but no
    hotstart manifest. A folder with nothing of ours (missing, empty, or only downloaded datasets)
    gives ``[]``.
    """
    root = cache_dir(root)
    if not root.is_dir():
        return []
    reason = unmarked_reason(root)
    if reason is not None:
        others = sorted(p.name for p in root.iterdir() if p.name != "datasets")
        if not others:
            return []
        damaged = (root / MANIFEST).exists()
        raise NotACompileCache(
            f"{root} is not marked as a hotstart compile cache: {reason}. It holds {others[:5]}"
            f"{' ...' if len(others) > 5 else ''}. Nothing was deleted (if it is hotstart's cache"
            f"{' with a damaged manifest' if damaged else ', an old one'}, delete "
            f"{', '.join(str(root / n) for n in (INDUCTOR, MANIFEST) if n in others) or 'it'} by hand).")
    return compile_cache_paths(root)


def clear(root=None) -> list[Path]:
    """Remove the compile cache in `root` (default: the user cache) and return what was removed;
    refuses as `paths_to_clear` does (deleting nothing then)."""
    ours = paths_to_clear(root)
    for p in ours:
        if p.is_dir() and not p.is_symlink():
            shutil.rmtree(p)
        else:
            p.unlink()
    return ours
