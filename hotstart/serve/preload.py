"""What the server imports before it serves, and whether any of it has changed on disk since.

The default list is what a hotstart training or prediction imports, measured with
``python -X importtime benchmarks/scripts/hotstart_fit.py`` (torch 2.14, 2 shared cores, load 4.6):
8.3 s of imports, of which torch's own modules 5.2 s, sympy 0.67 s (pulled in by torch / timm),
timm 0.52 s, attrs 0.47 s, torchvision 0.25 s, hotstart 0.23 s, triton 0.19 s, numpy 0.18 s,
huggingface_hub 0.14 s, PIL 0.05 s. A tiny single-process ``fit_one_cycle`` afterwards imports
nothing more of note (4 small hotstart modules). Lightning Fabric (and torchmetrics, scipy behind it) is imported only by
runs with ``devices > 1``, a GPU or mixed precision; it is in the list because those runs would
otherwise pay its ~1-2 s, and the server pays it once. ``hotstart serve --preload`` replaces the list.

`Stamps` records every loaded module's file (size and mtime) after the preload; `Stamps.changed`
names the first that differs, so a server does not hand out stale code while an editable
install is being edited (stat()ing ~4,000 files takes ~30 ms).
"""
from __future__ import annotations

import importlib
import os
import sys
import time

DEFAULT_PRELOAD = (
    "torch", "torchvision", "torchvision.transforms.v2", "timm", "numpy", "PIL.Image", "PIL.ImageFile",
    "hotstart", "hotstart.blocks", "hotstart.encodings", "hotstart.tasks", "hotstart.learner",
    "hotstart.datasets", "hotstart.metrics", "hotstart.predictor", "hotstart.cli", "hotstart.cli.train",
    "hotstart.cli.predict", "lightning_fabric",
)


def preload(names) -> dict[str, float]:
    """Import `names` in order; seconds each took (its own share, what earlier imports left)."""
    took = {}
    for name in names:
        t = time.perf_counter()
        importlib.import_module(name)
        took[name] = time.perf_counter() - t
    return took


class Stamps:
    """(size, mtime_ns) of the file behind every module loaded now."""

    def __init__(self):
        self.files = {}
        for module in list(sys.modules.values()):
            path = getattr(module, "__file__", None)
            if isinstance(path, str) and os.path.isabs(path):
                try:
                    st = os.stat(path)
                except OSError:
                    continue
                self.files[path] = (st.st_size, st.st_mtime_ns)

    def changed(self) -> str | None:
        """The first module file that changed or vanished since, or None."""
        for path, stamp in self.files.items():
            try:
                st = os.stat(path)
            except OSError:
                return path
            if (st.st_size, st.st_mtime_ns) != stamp:
                return path
        return None
