"""`Pt2Runtime`: a ``.pt2`` package (torch.export + AOTInductor, hotstart/export/pt2.py) behind the
runtime interface. The task travels in the package's AOTInductor metadata, read with
``get_metadata()`` and checked by the contract. Needs torch (not hotstart's training code).
"""
from __future__ import annotations

import numpy as np

from ..contract.model import ContractModel, cannot_load, model_file
from ..contract.schema import read_metadata
from .native_output import quiet_native_output

__all__ = ["Pt2Runtime", "load_package"]


def load_package(path):
    """``torch._inductor.aoti_load_package``, without the notices it prints on a healthy load (on a CPU
    machine with a CUDA toolkit, "No CUDA runtime is found", logged and printed natively)."""
    import torch

    from ..compile_cache.quiet import quiet_torch_notices

    with quiet_torch_notices(), quiet_native_output():
        return torch._inductor.aoti_load_package(str(path))


class Pt2Runtime(ContractModel):
    """A loaded AOTInductor package and its metadata; takes any batch size."""

    def __init__(self, package, meta: dict, source: str):
        super().__init__(meta, source)
        self.package = package

    @classmethod
    def load(cls, path) -> "Pt2Runtime":
        path = model_file(path, "an AOTInductor package (.pt2)")
        try:
            package = load_package(path)
        except Exception as e:  # torch raises RuntimeError and others for a damaged or foreign package
            raise cannot_load(path, "AOTInductor", e) from e
        return cls(package, read_metadata(dict(package.get_metadata()), path, container="pt2"), path)

    def run(self, batch: np.ndarray) -> np.ndarray:
        import torch

        x = torch.from_numpy(np.ascontiguousarray(batch, dtype=np.float32))
        with torch.no_grad():
            out = self.package(x)
        out = out[0] if isinstance(out, (list, tuple)) else out
        return out.float().numpy()
