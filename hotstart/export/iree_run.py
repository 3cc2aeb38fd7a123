"""Running a ``.vmfb`` written by hotstart's IREE export, with IREE's Python runtime (iree-base-runtime).

    from hotstart.export.iree_run import IreeModel
    m = IreeModel("digits.vmfb")
    label, probs = m.predict("img.png")    # the task's preprocessing and decoding (predictor.py)
    logits = m.run(encoded_batch)          # N x C x H x W float32 -> N x classes (any N: the batch is dynamic)

No torch: the runtime is IREE's C runtime behind a small Python binding.
"""
from __future__ import annotations

import json

import numpy as np

from ..errors import SavedModelError
from .runtime_model import RuntimeModel

FORMAT = "hotstart.iree/1"
METADATA_ATTRIBUTE = "hotstart_metadata"


class IreeModel(RuntimeModel):
    """A hotstart ``.vmfb`` loaded in IREE's runtime (``local-task``: the CPU, multithreaded;
    ``local-sync``: the calling thread only)."""

    runtime = "iree"

    def __init__(self, source, *, driver: str = "local-task"):
        import iree.runtime as rt

        self.source, data = self.read_source(source, ".vmfb")
        config = rt.Config(driver)
        try:
            module = rt.VmModule.copy_buffer(config.vm_instance, data)
            main = module.lookup_function("main")
        except (ValueError, RuntimeError) as e:
            raise SavedModelError(f"{self.source}: IREE cannot load it: {e}") from e
        raw = (main.reflection or {}).get(METADATA_ATTRIBUTE) if main is not None else None
        if raw is None:
            raise SavedModelError(f"{self.source}: not a .vmfb written by hotstart's export (its main function has "
                                  f"no {METADATA_ATTRIBUTE} attribute)")
        props = json.loads(raw)
        if props.get("format") != FORMAT:
            raise SavedModelError(f"{self.source}: not a .vmfb written by hotstart's export (format "
                                  f"{props.get('format')!r})")
        self.set_metadata(props)
        try:
            self.module = rt.load_vm_module(module, config)
        except (ValueError, RuntimeError) as e:  # e.g. compiled for CPU features this machine lacks
            raise SavedModelError(f"{self.source}: IREE cannot load it on this machine (compiled for target cpu "
                                  f"{self.meta.get('target_cpu')!r}): {e}") from e

    def run(self, batch: np.ndarray) -> np.ndarray:
        """Encoded inputs (N x ...) -> float32 outputs (N x classes)."""
        out = self.module.main(np.ascontiguousarray(batch, dtype=np.float32))
        return np.asarray(out.to_host(), dtype=np.float32)
