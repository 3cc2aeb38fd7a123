"""What identifies a fit and its training data in a checkpoint: `fit_identity`, `data_fingerprint`.

A resume must continue the very fit that wrote the checkpoint. Its length and schedule were kept
already (fit_state.py); the batch size and the training data were not, and another batch size, or
other data of the same size, gives the same batches per epoch and steps in all, so such a resume
was accepted silently and spliced the new data into the old fit. A checkpoint now keeps, for the
fit that wrote it and for each earlier fit of its learner (``state.json``, ``"fits"``), the
identity this module computes, and a resume or a skipped finished fit compares it.

The data's fingerprint is cheap: no sample is read. It is the number of training samples, the
size of the source they come from, which of its samples they are (their indices through
`Subset` views, hashed) and, when the source is a list of file paths or names, those (hashed).
Other data of the same size from the same source (another subset, another split) differs; the
same files with other pixels or labels do not (hashing every image would cost an epoch).
"""
from __future__ import annotations

import hashlib
import json
from pathlib import PurePath

from ...datasets.containers import Subset


def data_fingerprint(dataset) -> dict:
    """The fingerprint of a training dataset (the module docstring says what it holds), as JSON."""
    inputs = getattr(dataset, "inputs", None)
    found = {"samples": len(dataset)}
    if inputs is None:  # a dataset of the user's own kind: its length is all we can read cheaply
        return found
    indices, source = None, inputs
    while isinstance(source, Subset):
        indices = source.indices if indices is None else [source.indices[i] for i in indices]
        source = source.container
    found["source_size"] = len(source)
    if indices is not None:
        found["indices"] = _digest(indices)
    if isinstance(source, (list, tuple)) and source and all(isinstance(p, (str, PurePath)) for p in source):
        found["names"] = _digest([str(p) for p in source])
    return found


def fit_identity(learner, fit_state) -> dict:
    """What identifies `fit_state`'s fit of `learner`, as JSON: its epochs, batches per epoch,
    accumulation, schedule (`FitState.schedule_identity`), batch size and training data."""
    loader = learner.train_loader
    dataset = getattr(loader, "dataset", None)
    return {"n_epoch": fit_state.n_epoch, "n_iter": fit_state.n_iter, "accumulate": fit_state.accumulate,
            "schedule": fit_state.schedule_identity(), "batch_size": getattr(loader, "batch_size", None),
            "data": None if dataset is None else data_fingerprint(dataset)}


def _digest(values: list) -> str:
    return hashlib.sha256(json.dumps(values).encode()).hexdigest()[:16]
