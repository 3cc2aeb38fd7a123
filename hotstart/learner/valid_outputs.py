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
    ds = learner.valid_loader.dataset
    n = min(int(n), len(ds))
    loader = torch.utils.data.DataLoader(ds, batch_size=max(n, 1), sampler=range(n))  # the first n, in order
    xs, ys, out = learner.run_eval(loader, keep=lambda out, xb, yb: (xb, yb, out))
    return xs, ys, out
