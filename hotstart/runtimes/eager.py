"""`EagerRuntime`: a torch module run eagerly, behind the runtime interface.

A model folder (``learner.save``) opens as one (hotstart/deploy.py): its network, with the
contract's encoding and decoding (so it answers as its exports do), on the device its weights are on.
"""
from __future__ import annotations

import numpy as np

from ..contract.model import ContractModel

__all__ = ["EagerRuntime"]


class EagerRuntime(ContractModel):
    """`module` (eval mode, no gradients) for the task `meta` describes."""

    def __init__(self, module, meta: dict, source: str = "<torch module>"):
        super().__init__(meta, source)
        self.module = module.eval()

    def run(self, batch: np.ndarray) -> np.ndarray:
        import torch

        device = next((p.device for p in self.module.parameters()), torch.device("cpu"))
        x = torch.from_numpy(np.ascontiguousarray(batch, dtype=np.float32)).to(device)
        with torch.no_grad():
            out = self.module(x)
        out = out[0] if isinstance(out, (list, tuple)) else out
        return out.float().cpu().numpy()
