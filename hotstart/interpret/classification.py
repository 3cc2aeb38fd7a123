"""`ClassificationInterpretation` (fastai's): confusion matrix, most confused pairs, top losses."""
from __future__ import annotations

import numpy as np
import torch

from ..errors import UsageError, UsageTypeError
from ._outputs import collect, dataset_of


class ClassificationInterpretation:
    """Predictions of a single-label classifier over a labelled loader (default: validation).

    Rows of the confusion matrix are the actual classes, columns the predicted ones, as in
    fastai and sklearn. `losses` are the learner's loss per sample (cross entropy).
    """

    def __init__(self, learner, probs, targets, losses, loader=None):
        self.learner, self.probs, self.targets, self.losses = learner, probs, targets, losses
        self.loader = loader
        self.classes = list(learner.task.classes)
        if targets.ndim != 1:
            raise UsageTypeError("ClassificationInterpretation is for single-label tasks (one class per sample); "
                            f"the targets here have shape {tuple(targets.shape)}")
        self.preds = probs.argmax(1)

    @classmethod
    def from_learner(cls, learner, loader=None) -> "ClassificationInterpretation":
        if learner.task is None:
            raise UsageError("interpretation needs the learner's task")
        probs, targets, losses = collect(learner, loader)
        return cls(learner, probs, targets, losses, loader)

    def confusion_matrix(self) -> np.ndarray:
        """(C, C) int64 counts: entry [i, j] = samples of class i predicted as class j."""
        n = len(self.classes)
        flat = self.targets.long() * n + self.preds.long()
        return torch.bincount(flat, minlength=n * n).reshape(n, n).numpy()

    def most_confused(self, min_val: int = 1) -> list[tuple]:
        """[(actual, predicted, count)] off the diagonal with ``count >= min_val``, most first
        (ties in class order)."""
        cm = self.confusion_matrix()
        pairs = [(self.classes[i], self.classes[j], int(cm[i, j]))
                 for i in range(len(cm)) for j in range(len(cm)) if i != j and cm[i, j] >= min_val]
        return sorted(pairs, key=lambda p: -p[2])

    def top_losses(self, k: int | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """(losses, indices) of the `k` samples with the largest loss (all, when k is None)."""
        losses, idx = self.losses.sort(descending=True)
        return (losses, idx) if k is None else (losses[:k], idx[:k])

    def plot_confusion_matrix(self, normalize: bool = False, *, figsize=None, cmap="Blues"):
        """The confusion matrix as a heat map with counts (or row fractions) written in each cell."""
        import matplotlib.pyplot as plt

        cm = self.confusion_matrix().astype(np.float64)
        if normalize:
            cm = cm / np.maximum(cm.sum(1, keepdims=True), 1)
        n = len(self.classes)
        fig, ax = plt.subplots(figsize=figsize or (max(4, 0.5 * n + 2), max(4, 0.5 * n + 2)))
        ax.imshow(cm, cmap=cmap)
        ax.set_xticks(range(n), [str(c) for c in self.classes], rotation=90)
        ax.set_yticks(range(n), [str(c) for c in self.classes])
        ax.set_xlabel("predicted")
        ax.set_ylabel("actual")
        ax.set_title("confusion matrix" + (" (normalized)" if normalize else ""))
        top = cm.max() if cm.size else 0
        for i in range(n):
            for j in range(n):
                ax.text(j, i, f"{cm[i, j]:.2f}" if normalize else f"{int(cm[i, j])}", ha="center", va="center",
                        fontsize=8, color="white" if cm[i, j] > top / 2 else "black")
        fig.tight_layout()
        return fig

    def plot_top_losses(self, k: int = 9, *, ncols: int = 3, figsize=None):
        """The `k` worst samples, titled ``predicted / actual / loss / probability of predicted``."""
        from ..show import input_view
        from ..show.images import draw_image, grid

        task = self.learner.task
        input_view(task, "plot_top_losses")  # an input block of your own: a clear error, not matplotlib's
        losses, idx = self.top_losses(k)
        ds = dataset_of(self.learner, self.loader)
        fig, axes = grid(len(idx), ncols, figsize)
        for ax, loss, i in zip(axes, losses.tolist(), idx.tolist()):
            x, _ = ds[i]
            draw_image(ax, task.decode_input(x))
            p = int(self.preds[i])
            ax.set_title(f"{self.classes[p]} / {self.classes[int(self.targets[i])]} / {loss:.2f} / "
                         f"{float(self.probs[i, p]):.2f}", fontsize=9)
        fig.suptitle("predicted / actual / loss / probability")
        fig.tight_layout()
        return fig
