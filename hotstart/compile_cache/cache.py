"""The compile cache's folder: one persistent folder, shared by the warmup and the learner.

Inductor (torch.compile's backend) keeps its FX-graph, AOTAutograd and kernel caches in the
folder named by ``TORCHINDUCTOR_CACHE_DIR``, falling back to a folder in the system temp dir
that can vanish at reboot, and it *writes* that variable into ``os.environ`` when it picks one.
So every compiled call of a hotstart model runs inside `inductor_cache`, which points the
variable at our folder and puts ``os.environ`` back as it found it.

The folder is ``platformdirs.user_cache_dir("hotstart")``; ``HOTSTART_CACHE_DIR`` overrides it,
and so does an explicit ``cache_dir=``. A folder that cannot be created or written (read-only,
full disk) is a `CacheWriteError` naming it and ``HOTSTART_CACHE_DIR`` (`writes`).
"""
from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

from ..cache_writes import cache_writes

ENV_VAR = "HOTSTART_CACHE_DIR"
"""The environment variable that moves the compile cache: ``HOTSTART_CACHE_DIR=/scratch/hs python
-m hotstart.warmup`` warms a cache that a fit run with the same variable then reads."""


def writes(root):
    """Writes into the compile cache `root`: an `OSError` becomes a `CacheWriteError` that names
    the folder and ``HOTSTART_CACHE_DIR`` (hotstart/cache_writes.py)."""
    return cache_writes(root, ENV_VAR, what="compile cache")


def cache_dir(override=None) -> Path:
    """The cache folder (not created here)."""
    if override is not None:
        return Path(override).expanduser().resolve()
    env = os.environ.get(ENV_VAR)
    if env:
        return Path(env).expanduser().resolve()
    import platformdirs

    return Path(platformdirs.user_cache_dir("hotstart", appauthor=False)).resolve()


def inductor_dir(root=None) -> Path:
    """The ``inductor`` folder inside the compile cache `root` (None: `cache_dir`'s choice), where
    Inductor keeps its FX-graph, AOTAutograd and kernel caches while `inductor_cache` points
    ``TORCHINDUCTOR_CACHE_DIR`` at it. Not created here: ``hotstart.warmup --clear`` removes it
    with the manifest, so a fresh warmup starts cold."""
    return cache_dir(root) / "inductor"


_INDUCTOR_ENV_PREFIXES = ("TORCHINDUCTOR", "_TORCHINDUCTOR", "TRITON")


@contextlib.contextmanager
def inductor_cache(root=None):
    """Point Inductor at hotstart's cache for the duration; afterwards put back every
    Inductor / Triton variable of ``os.environ`` as it was (Inductor sets some as it works)."""
    target = str(inductor_dir(root))
    with writes(cache_dir(root)):
        os.makedirs(target, exist_ok=True)  # succeeds on a folder that exists, read-only or not:
        fd, probe = tempfile.mkstemp(dir=target, prefix=".write-check-")  # Inductor's own lock files
        try:  # would fail later, as a traceback from deep inside a compile
            os.close(fd)
        finally:
            os.unlink(probe)
    saved = {k: v for k, v in os.environ.items() if k.startswith(_INDUCTOR_ENV_PREFIXES)}
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = target
    try:
        yield Path(target)
    finally:
        for k in [k for k in os.environ if k.startswith(_INDUCTOR_ENV_PREFIXES)]:
            if k not in saved:
                del os.environ[k]
        os.environ.update(saved)
