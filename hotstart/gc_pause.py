"""`import_paused(name)`: import a heavy library with Python's cyclic garbage collector paused.

Why: importing torch, torchvision and timm creates about 390,000 container objects (functions,
classes, dicts) that live as long as the process. CPython (3.11) runs its cyclic collector every
700 allocations and re-scans the older generations as they fill: in the startup benchmark's plain
loop (benchmarks/scripts/plain_fit.py) the imports ran 846 young, 76 middle and 6 full
collections, 0.60 s of collector time that found nothing worth freeing. hotstart imports the same
libraries through `import_paused` (its lazy public names in ``hotstart/__init__.py``, timm in
models/, Lightning Fabric in learner/backend.py, the CLI's command modules), and the same script
through hotstart spends 0.004 s in the collector. Measured on this machine's 2 cores with a
``gc.callbacks`` timer, and with benchmarks/startup_phases.py: hotstart's model is "ready" about
0.5 s before the plain loop's (2.68-2.82 s against 3.26-3.33 s from process start, two pairs).

Two steps, both undone or harmless when the block ends:
- the collector is off for the import, and switched back on only if it was on (so it nests, and a
  caller who disabled it keeps it disabled);
- the objects the import made are moved into the oldest generation with ``gc.freeze()`` then
  ``gc.unfreeze()`` (Python's documented pair: into the permanent generation, and back into the
  oldest one). Without it, the first young collection after the import scans them all, and a
  middle one again (0.08 s + 0.13 s + 0.21 s measured); with it, they wait for the next full
  collection, as long-lived objects do. It is skipped when something else has frozen objects
  (``gc.get_freeze_count() > 0``), whose freeze is not ours to undo.

Nothing is freed later than it would be otherwise except cyclic garbage made before the import,
which waits for a full collection instead of a young one.
"""
from __future__ import annotations

import contextlib
import gc
import importlib
import sys


@contextlib.contextmanager
def gc_paused():
    """The cyclic collector off for the ``with`` block; the block's survivors into the oldest
    generation; then the collector as it was before."""
    was_enabled = gc.isenabled()
    nobody_froze = gc.get_freeze_count() == 0
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            if nobody_froze:
                gc.freeze()
                gc.unfreeze()
            gc.enable()


def import_paused(name: str):
    """``importlib.import_module(name)`` inside `gc_paused` (costs nothing when it is loaded already)."""
    if name in sys.modules:
        return importlib.import_module(name)
    with gc_paused():
        return importlib.import_module(name)
