"""`RuntimeModel`: what every non-ONNX runtime adapter shares (LiteRT, TF Lite Micro, IREE).

An adapter opens one exported file, reads the task's metadata from it (checked key by key by
predictor.py, as the ONNX predictor checks its own), and offers the same three things:
``meta`` (and ``classes``), ``run(encoded batch) -> float32 outputs``, and ``predict(raw input)
-> (label, probabilities)`` with the task's preprocessing and decoding from predictor.py. A
subclass reads its format and implements `run`. No torch.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np


class RuntimeModel:
    """Base of the runtime adapters: `meta`, `classes`, `run` (the subclass's), `predict`."""

    runtime = "?"  # the runtime's name, for reports
    meta: dict
    source: str

    @staticmethod
    def read_source(source, suffix: str) -> tuple[str, bytes]:
        """(a name for messages, the file's bytes) of `source`: a path, or the bytes themselves."""
        if isinstance(source, (bytes, bytearray)):
            return "<bytes>", bytes(source)
        if not Path(source).is_file():
            raise FileNotFoundError(f"{source}: no such {suffix} file")
        return str(source), Path(source).read_bytes()

    def set_metadata(self, props: dict[str, str]) -> None:
        """The file's flat string metadata, decoded and checked as predictor.py does."""
        from ..predictor import check_metadata, decode_metadata

        self.meta = decode_metadata(props, self.source)
        check_metadata(self.meta, self.source)
        self.classes = self.meta.get("classes")

    def run(self, batch: np.ndarray) -> np.ndarray:
        """Encoded inputs (N x ..., float32, as predictor.py's `preprocess` makes them) -> float32 outputs."""
        raise NotImplementedError

    def predict(self, item):
        """(label, probabilities) for one raw input, preprocessed and decoded as predictor.py does."""
        from ..predictor import KINDS

        kind = KINDS[self.meta["kind"]]
        return kind.decode(self.run(kind.encode(item, self.meta)[None])[0], self.meta)

    def __repr__(self):
        return f"{type(self).__name__}({self.source!r}, kind={self.meta['kind']}, runtime={self.runtime})"
