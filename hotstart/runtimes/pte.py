"""`PteRuntime`: an ExecuTorch ``.pte`` program (hotstart/export/pte.py) behind the runtime interface.

The task travels in the program as a constant method, ``hotstart_metadata``, returning one JSON
string of the metadata keys (``format`` ``hotstart.pte/1``, and ``batch_size``). **The batch size
is static**: ExecuTorch plans its memory ahead of time, so `run` pads a shorter batch with zeros
and splits a longer one. ExecuTorch's Python runtime takes torch tensors, so this needs torch.
"""
from __future__ import annotations

import numpy as np

from ..contained_import import import_contained
from ..contract.errors import MetadataError
from ..contract.model import ContractModel, cannot_load, model_file
from ..contract.schema import props_from_json, read_metadata
from .native_output import quiet_native_output

__all__ = ["PteRuntime", "METADATA_METHOD"]

METADATA_METHOD = "hotstart_metadata"


class PteRuntime(ContractModel):
    """A loaded ExecuTorch program's ``forward`` method and its metadata."""

    def __init__(self, method, meta: dict, source: str):
        super().__init__(meta, source)
        if "batch_size" not in meta:  # its type and range: the contract's check_file_io
            raise MetadataError(f"{source}: metadata key 'batch_size' is missing (a .pte's batch size is static)")
        self.batch_size = meta["batch_size"]
        self.method = method

    @classmethod
    def load(cls, source) -> "PteRuntime":
        """`source`: a .pte path, or its bytes (the export checks the program before writing it)."""
        Runtime = import_contained("executorch.runtime").Runtime  # its import adds warnings filters: undone

        if isinstance(source, (bytes, bytearray)):
            where, source = "<pte bytes>", bytes(source)
        else:
            where = source = model_file(source, "an ExecuTorch program (.pte)")
        try:
            with quiet_native_output():
                program = Runtime.get().load_program(source)
                names = program.method_names
                if METADATA_METHOD not in names:
                    raise MetadataError(f"{where}: not a .pte written by hotstart's export (no {METADATA_METHOD} "
                                        "method)")
                raw = program.load_method(METADATA_METHOD).execute([])[0]
                method = program.load_method("forward")
        except MetadataError:
            raise
        except Exception as e:  # ExecuTorch raises RuntimeError and others
            raise cannot_load(where, "ExecuTorch", e) from e
        props = props_from_json(raw, where, METADATA_METHOD)
        return cls(method, read_metadata(props, where, container="pte"), where)

    def run(self, batch: np.ndarray) -> np.ndarray:
        """Encoded inputs (N x ...) -> outputs (N x ...), `batch_size` at a time (the last padded)."""
        import torch

        batch = np.ascontiguousarray(batch, dtype=np.float32)
        outs = []
        for start in range(0, len(batch), self.batch_size):
            chunk = batch[start:start + self.batch_size]
            n = len(chunk)
            if n < self.batch_size:  # the program's batch size is static: pad with zeros
                chunk = np.concatenate([chunk, np.zeros((self.batch_size - n, *chunk.shape[1:]), np.float32)])
            out = self.method.execute([torch.from_numpy(chunk)])[0]
            outs.append(out.numpy()[:n])
        return np.concatenate(outs)
