"""`import_paused(name)`: import a heavy library with Python's cyclic garbage collector paused.

Why: importing torch, torchvision and timm creates about 390,000 container objects (functions,
classes, dicts) that live as long as the process. CPython (3.11) runs its cyclic collector every
700 allocations and re-scans the older generations as they fill: in the startup benchmark's plain
loop (benchmarks/scripts/plain_fit.py) the imports ran 846 young, 76 middle and 6 full
collections, 0.60 s of collector time that found nothing worth freeing. hotstart imports the same
libraries through `import_paused` (its lazy public names in ``hotstart/__init__.py``, timm in
models/, Lightning Fabric in learner/backend.py), and the same script
through hotstart spends 0.004 s in the collector. Measured on this machine's 2 cores with a
``gc.callbacks`` timer, and with benchmarks/startup_phases.py: hotstart's model is "ready" about
0.5 s before the plain loop's (2.68-2.82 s against 3.26-3.33 s from process start, two pairs).

Two steps, both undone or harmless when the block ends:
- the collector is off for the import, and switched back on only if it was on when the outermost
  pause began (pauses nest, also across threads: a depth count under a lock; a caller who had
  disabled it keeps it disabled);
- the objects the import made are moved into the oldest generation with ``gc.freeze()`` then
  ``gc.unfreeze()`` (Python's documented pair: into the permanent generation, and back into the
  oldest one). Without it, the first young collection after the import scans them all, and a
  middle one again (0.08 s + 0.13 s + 0.21 s measured); with it, they wait for the next full
  collection, as long-lived objects do. It is skipped when something has frozen objects
  (``gc.get_freeze_count() > 0`` when the pause ends), whose freeze is not ours to undo, and on
  free-threaded builds (``Py_GIL_DISABLED``), where ``freeze()`` walks the heap with every thread
  stopped.

Nothing is freed later than it would be otherwise, except cyclic garbage (made before or during
the import), which waits for a full collection instead of a young one. Measured on CPython 3.11;
3.12 and 3.13 collect the same way. 3.14's collector is incremental (a young and an old
generation); the pause still saves the scans, and the frozen objects go to the old generation.
"""
from __future__ import annotations

import contextlib
import gc
import importlib
import sys
import sysconfig
import threading


_lock = threading.Lock()
_depth = 0  # pauses open now, in every thread
_restore = False  # whether the collector was on when the outermost pause began
_FREE_THREADED = bool(sysconfig.get_config_var("Py_GIL_DISABLED"))


@contextlib.contextmanager
def gc_paused():
    """The cyclic collector off for the ``with`` block; when the outermost block ends, its
    survivors into the oldest generation and the collector as it was before."""
    global _depth, _restore
    with _lock:
        if _depth == 0:
            _restore = gc.isenabled()
            gc.disable()
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _restore:
                if not _FREE_THREADED and gc.get_freeze_count() == 0:
                    gc.freeze()
                    gc.unfreeze()
                gc.enable()


def import_paused(name: str):
    """``importlib.import_module(name)`` inside `gc_paused` (costs nothing when it is loaded already)."""
    if name in sys.modules:
        return importlib.import_module(name)
    with gc_paused():
        return importlib.import_module(name)
