"""`IreeRuntime`: a hotstart ``.vmfb`` (hotstart/export/iree.py) in IREE's runtime (iree-base-runtime).

    model = open_file("digits.vmfb")            # or IreeRuntime.load(path, driver="local-sync")
    label, probs = model.predict("img.png")

The task travels inside the module as a reflection attribute of its ``main`` function,
``hotstart_metadata``: one JSON object of the contract's keys with ``format`` =
``hotstart.iree/1`` and ``target_cpu``. From Python: ``VmModule.lookup_function("main").reflection``;
from C: ``iree_vm_function_lookup_attr_by_name(&main, iree_make_cstring_view("hotstart_metadata"))``.
The batch is dynamic. No torch: IREE's C runtime behind a small Python binding.
"""
from __future__ import annotations

import numpy as np

from ..contract.errors import MetadataError
from ..contract.model import ContractModel, cannot_load, model_bytes
from ..contract.schema import format_name, props_from_json, read_metadata

__all__ = ["IreeRuntime", "FORMAT", "METADATA_ATTRIBUTE"]

FORMAT = format_name("iree")
METADATA_ATTRIBUTE = "hotstart_metadata"


class IreeRuntime(ContractModel):
    """A loaded IREE module's ``main`` and its metadata; takes any batch size."""

    def __init__(self, module, meta: dict, source: str):
        super().__init__(meta, source)
        self.module = module

    @classmethod
    def load(cls, source, *, driver: str = "local-task") -> "IreeRuntime":
        """`source`: a .vmfb path or its bytes; `driver`: ``local-task`` (the CPU, multithreaded) or
        ``local-sync`` (the calling thread only)."""
        import iree.runtime as rt

        where, data = model_bytes(source, "an IREE module (.vmfb)", "vmfb")
        config = rt.Config(driver)
        try:
            vm_module = rt.VmModule.copy_buffer(config.vm_instance, data)
            main = vm_module.lookup_function("main")
        except (ValueError, RuntimeError) as e:
            raise cannot_load(where, "IREE", e) from e
        raw = (main.reflection or {}).get(METADATA_ATTRIBUTE) if main is not None else None
        if raw is None:
            raise MetadataError(f"{where}: not a .vmfb written by hotstart's export (its main function has no "
                                f"{METADATA_ATTRIBUTE} attribute)")
        meta = read_metadata(props_from_json(raw, where, METADATA_ATTRIBUTE), where, container="iree")
        try:
            module = rt.load_vm_module(vm_module, config)
        except (ValueError, RuntimeError) as e:  # e.g. compiled for CPU features this machine lacks
            raise cannot_load(where, f"IREE (the file is compiled for target cpu {meta.get('target_cpu')!r})",
                              e) from e
        return cls(module, meta, where)

    def run(self, batch: np.ndarray) -> np.ndarray:
        """Encoded inputs (N x ...) -> float32 outputs (N x ...), all in one call."""
        out = self.module.main(np.ascontiguousarray(batch, dtype=np.float32))
        return np.asarray(out.to_host(), dtype=np.float32)
