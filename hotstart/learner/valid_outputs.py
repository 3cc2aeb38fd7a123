"""The first validation samples with the model's outputs: what `show_results` shows, for images
(plots.py) and for tables (table_view.py) alike."""
from __future__ import annotations

import torch

from ..errors import UsageError


def first_valid_outputs(learner, n: int):
    """``(inputs, targets, outputs)`` of the first `n` validation samples, encoded as for
    validation (epoch 0), the outputs on the CPU in float32. A learner loaded for prediction only
    has no validation data: a `UsageError` that says how to give it some."""
    if learner.valid_loader is None:
        raise UsageError("show_results: this learner has no validation data (it was loaded for prediction only); "
                         "load it with data (load_learner(path, data=...)) or use predict() on raw inputs")
    learner._setup()  # a learner that never fitted: its model on the backend's device first
    ds = learner.valid_loader.dataset
    n = min(int(n), len(ds))
    ds.epoch = 0
    xs, ys = zip(*(ds[i] for i in range(n)))
    learner.model.eval()
    with torch.no_grad(), learner.backend.autocast(), learner.model_context():
        out = learner.model(torch.stack(xs).to(learner.device)).float().cpu()
    return xs, ys, out
