"""Plots with matplotlib: training samples, predictions beside the truth, and the loss curves.

Every function returns its ``Figure`` and never calls ``plt.show()`` (a notebook shows a returned
figure; a script saves it). What a panel shows follows from the task's target block, decoded
back from the encoded sample: a label is a title, a `Mask` a colour overlay (background, class
0, transparent), `Keypoints` markers.
"""
from __future__ import annotations

import math

import numpy as np
import torch

from ..errors import UsageError


# --- drawing one sample ------------------------------------------------------------------------

def _as_numpy(value):
    return value.detach().cpu().numpy() if torch.is_tensor(value) else np.asarray(value)


def draw_image(ax, img):
    ax.imshow(img, cmap="gray" if getattr(img, "mode", "") == "L" else None, vmin=0, vmax=255)
    ax.axis("off")


def draw_mask(ax, mask, num_classes: int, alpha: float = 0.5):
    """Overlay a class-index mask: one colour per class, class 0 (background) left transparent."""
    import matplotlib.pyplot as plt

    mask = _as_numpy(mask).astype(np.int64)
    cmap = plt.get_cmap("tab20", max(num_classes, 2))
    rgba = cmap(mask % cmap.N)
    rgba[..., 3] = np.where(mask > 0, alpha, 0.0)
    ax.imshow(rgba, interpolation="nearest")


def draw_points(ax, points, color="lime", marker="o", label=None):
    pts = _as_numpy(points).reshape(-1, 2)
    edge = {} if marker in ("x", "+", "1", "2", "3", "4") else {"edgecolors": "black", "linewidths": 0.5}
    ax.scatter(pts[:, 0], pts[:, 1], s=40, c=color, marker=marker, label=label, **edge)


def _kind(task) -> str:
    from ..blocks import Keypoints, Mask

    target = task.target_block
    return "mask" if isinstance(target, Mask) else "points" if isinstance(target, Keypoints) else "label"


def draw_sample(ax, task, img, target, title=None, color="black"):
    """An image with its (decoded) target drawn the way the task's target block is shown."""
    from .series_view import draw_series, is_series_task

    (draw_series if is_series_task(task) else draw_image)(ax, img)
    kind = _kind(task)
    if kind == "mask":
        draw_mask(ax, target, len(task.target_block.classes))
    elif kind == "points":
        draw_points(ax, target)
    elif title is None:
        title = " ".join(f"{float(t):.3g}" for t in target.ravel()) if isinstance(target, np.ndarray) else str(target)
    if title is not None:
        ax.set_title(title, color=color, fontsize=10)


def _grid(n: int, ncols: int, figsize=None, panel: float = 3.0):
    import matplotlib.pyplot as plt

    ncols = max(1, min(ncols, n))
    nrows = math.ceil(n / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=figsize or (panel * ncols, panel * nrows), squeeze=False)
    for ax in axes.flat[n:]:
        fig.delaxes(ax)  # no empty panels: the figure has exactly n
    return fig, list(axes.flat[:n])


# --- views --------------------------------------------------------------------------------------

def show_batch(learner, n: int = 9, *, ncols: int = 3, figsize=None):
    """`n` training samples as the model sees them (augmented), decoded back for display."""
    if learner.task is None or learner.train_loader is None:
        raise ValueError("show_batch needs the learner's task and training data")
    from .table_view import is_table_task

    if is_table_task(learner.task):
        raise TypeError("show_batch draws images; a table task's rows are shown by show_results (a ResultsTable)")
    ds = learner.train_loader.dataset
    n = min(int(n), len(ds))
    task = learner.task
    fig, axes = _grid(n, ncols, figsize)
    for i, ax in enumerate(axes):
        x, y = ds[i]
        draw_sample(ax, task, task.decode_input(x), task.decode_target(y))
    fig.tight_layout()
    return fig


def show_results(learner, n: int = 9, *, ncols: int = 3, figsize=None):
    """Validation samples, prediction beside the truth.

    Labels: `n` panels titled ``target / prediction`` (green when right). Masks: `n` rows of two
    panels, truth then prediction (2n panels). Keypoints: `n` panels with the true points (green
    circles) and the predicted ones (red crosses), titled with the mean error in pixels.
    """
    if learner.task is None:
        raise UsageError("show_results needs the learner's task (build it with tasklearner or load_learner)")
    from .table_view import is_table_task, show_table_results

    if is_table_task(learner.task):  # table tasks: a ResultsTable of rows (see table_view.py)
        return show_table_results(learner, n)
    task = learner.task
    from .valid_outputs import first_valid_outputs

    xs, ys, out = first_valid_outputs(learner, n)
    kind = _kind(task)
    if kind == "mask":
        fig, axes = _grid(2 * len(xs), 2, figsize, panel=2.5)
        for k, (x, y, o) in enumerate(zip(xs, ys, out)):
            img = task.decode_input(x)
            pred, _ = task.decode_output(o)
            draw_sample(axes[2 * k], task, img, task.decode_target(y), title="truth")
            draw_sample(axes[2 * k + 1], task, img, pred, title="prediction")
    else:
        fig, axes = _grid(len(xs), ncols, figsize)
        for ax, x, y, o in zip(axes, xs, ys, out):
            img = task.decode_input(x)
            target = task.decode_target(y)
            pred, _ = task.decode_output(o)
            if kind == "points":
                draw_image(ax, img)
                draw_points(ax, target, color="lime", marker="o")
                draw_points(ax, pred, color="red", marker="x")
                err = float(np.linalg.norm(np.asarray(pred) - np.asarray(target), axis=1).mean())
                ax.set_title(f"error {err:.2f} px", fontsize=10)
            else:
                if isinstance(target, np.ndarray):  # regression targets (series): numbers, no right or wrong
                    text = " ".join(f"{float(t):.3g}" for t in target.ravel()) + " / " + \
                        " ".join(f"{float(p):.3g}" for p in np.ravel(pred))
                    draw_sample(ax, task, img, target, title=text)
                else:
                    draw_sample(ax, task, img, target, title=f"{target} / {pred}",
                                color="green" if pred == target else "red")
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
