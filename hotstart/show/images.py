"""Image views with matplotlib: samples as the model sees them, and predictions beside the truth.

Every figure function returns its ``Figure`` and never calls ``plt.show()`` (a notebook shows a
returned figure; a script saves it). What a panel shows follows from the task's target block,
decoded back from the encoded sample: a label is a title, a `Mask` a colour overlay (background,
class 0, transparent), `Keypoints` markers. The functions take encoded samples and model outputs,
never a learner: they draw, they do not run anything.
"""
from __future__ import annotations

import math

import numpy as np
import torch


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


def target_view(task) -> str:
    """How the task's target is drawn: "mask" (an overlay), "points" (markers) or "label" (a title)."""
    from ..blocks import Keypoints, Mask

    target = task.target_block
    return "mask" if isinstance(target, Mask) else "points" if isinstance(target, Keypoints) else "label"


def draw_sample(ax, task, img, target, title=None, color="black"):
    """An image with its (decoded) target drawn the way the task's target block is shown."""
    from .series import draw_series, is_series_task

    (draw_series if is_series_task(task) else draw_image)(ax, img)
    kind = target_view(task)
    if kind == "mask":
        draw_mask(ax, target, len(task.target_block.classes))
    elif kind == "points":
        draw_points(ax, target)
    elif title is None:
        title = " ".join(f"{float(t):.3g}" for t in target.ravel()) if isinstance(target, np.ndarray) else str(target)
    if title is not None:
        ax.set_title(title, color=color, fontsize=10)


def grid(n: int, ncols: int, figsize=None, panel: float = 3.0):
    """(figure, its `n` axes) in rows of `ncols` panels of `panel` inches."""
    import matplotlib.pyplot as plt

    ncols = max(1, min(ncols, n))
    nrows = math.ceil(n / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=figsize or (panel * ncols, panel * nrows), squeeze=False)
    for ax in axes.flat[n:]:
        fig.delaxes(ax)  # no empty panels: the figure has exactly n
    return fig, list(axes.flat[:n])


# --- figures ------------------------------------------------------------------------------------

def batch_figure(task, samples, *, ncols: int = 3, figsize=None):
    """Encoded ``(input, target)`` samples, decoded back for display, one panel each."""
    fig, axes = grid(len(samples), ncols, figsize)
    for ax, (x, y) in zip(axes, samples):
        draw_sample(ax, task, task.decode_input(x), task.decode_target(y))
    fig.tight_layout()
    return fig


def results_figure(task, inputs, targets, outputs, *, ncols: int = 3, figsize=None):
    """Encoded samples with the model's outputs for them, prediction beside the truth.

    Labels: one panel per sample titled ``target / prediction`` (green when right). Masks: a row
    of two panels per sample, truth then prediction. Keypoints: one panel per sample with the
    true points (green circles) and the predicted ones (red crosses), titled with the mean error
    in pixels.
    """
    kind = target_view(task)
    if kind == "mask":
        fig, axes = grid(2 * len(inputs), 2, figsize, panel=2.5)
        for k, (x, y, o) in enumerate(zip(inputs, targets, outputs)):
            img = task.decode_input(x)
            pred, _ = task.decode_output(o)
            draw_sample(axes[2 * k], task, img, task.decode_target(y), title="truth")
            draw_sample(axes[2 * k + 1], task, img, pred, title="prediction")
    else:
        fig, axes = grid(len(inputs), ncols, figsize)
        for ax, x, y, o in zip(axes, inputs, targets, outputs):
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
