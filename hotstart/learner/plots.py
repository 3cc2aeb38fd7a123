"""Plots with matplotlib: predictions on validation samples, and the loss curves."""
from __future__ import annotations

import math

import torch


def show_results(learner, n: int = 9, *, ncols: int = 3, figsize=None):
    """A grid of validation inputs titled ``target / prediction`` (green when right).

    For table tasks: a `ResultsTable` of validation rows with truth and prediction (see table_view.py).
    """
    if learner.task is None:
        raise ValueError("show_results needs the learner's task")
    from .table_view import is_table_task, show_table_results

    if is_table_task(learner.task):
        return show_table_results(learner, n)
    if learner.valid_loader is None:
        raise ValueError("show_results: this learner has no validation data (it was loaded for prediction only); "
                         "load it with data (load_learner(path, data=...)) or use predict() on raw inputs")
    import matplotlib.pyplot as plt

    ds = learner.valid_loader.dataset
    n = min(n, len(ds))
    ds.epoch = 0
    xs, ys = zip(*(ds[i] for i in range(n)))
    learner.model.eval()
    with torch.no_grad(), learner.backend.autocast(), learner.model_context():
        out = learner.model(torch.stack(xs).to(learner.device)).float().cpu()
    nrows = math.ceil(n / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=figsize or (3 * ncols, 3 * nrows), squeeze=False)
    for ax in axes.flat:
        ax.axis("off")
    for ax, x, y, o in zip(axes.flat, xs, ys, out):
        img = learner.task.decode_input(x)
        target = learner.task.decode_target(y)
        pred, _ = learner.task.decode_output(o)
        ax.imshow(img, cmap="gray" if getattr(img, "mode", "") == "L" else None)
        ax.set_title(f"{target} / {pred}", color="green" if pred == target else "red", fontsize=10)
    fig.tight_layout()
    return fig


def plot_loss(learner, *, ax=None):
    """Training loss per batch, and validation loss at the end of each epoch."""
    import matplotlib.pyplot as plt

    rec = learner.recorder
    if ax is None:
        fig, ax = plt.subplots(figsize=(6, 4))
    else:
        fig = ax.figure
    ax.plot(range(1, len(rec.losses) + 1), rec.losses, label="train (per batch)", alpha=0.8)
    if rec.history and rec.losses:
        per_epoch = len(rec.losses) / len(rec.history)
        ax.plot([per_epoch * (i + 1) for i in range(len(rec.history))], [h["valid_loss"] for h in rec.history],
                "o-", label="valid (per epoch)")
    ax.set_xlabel("batch")
    ax.set_ylabel("loss")
    ax.legend()
    return fig
