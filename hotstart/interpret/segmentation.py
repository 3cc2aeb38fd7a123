"""`SegmentationInterpretation`: IoU per class, and the samples the model gets most wrong."""
from __future__ import annotations

import math

import torch

from ..errors import UsageError
from ._outputs import collect, dataset_of


class SegmentationInterpretation:
    """Predicted masks of a segmentation learner over a labelled loader (default: validation).

    Only the predicted masks (argmax) are kept, not every class map; the per-class IoU streams
    through `hotstart.metrics.MeanIoU`, so it equals the ``mean_iou`` that `validate()` reports.
    """

    def __init__(self, learner, preds, targets, losses, iou, loader=None):
        self.learner, self.preds, self.targets, self.losses = learner, preds, targets, losses
        self._iou_metric, self.loader = iou, loader
        self.classes = list(learner.task.classes)

    @classmethod
    def from_learner(cls, learner, loader=None) -> "SegmentationInterpretation":
        from ..metrics import MeanIoU

        if learner.task is None:
            raise UsageError("interpretation needs the learner's task")
        iou = MeanIoU(len(learner.task.classes)).to(learner.device)
        preds, targets, losses = collect(learner, loader, keep=lambda p: p.argmax(1).to(torch.uint8),
                                         on_batch=iou.update)
        return cls(learner, preds, targets, losses, iou.to("cpu"), loader)

    def per_class_iou(self) -> dict:
        """{class: IoU}; NaN for a class that appears in neither the targets nor the predictions."""
        iou = self._iou_metric.per_class().tolist()
        seen = (self._iou_metric.confmat.sum(0) + self._iou_metric.confmat.sum(1)) > 0
        return {c: (v if s else math.nan) for c, v, s in zip(self.classes, iou, seen.tolist())}

    @property
    def mean_iou(self) -> float:
        return float(self._iou_metric.compute())

    def top_losses(self, k: int | None = None):
        """(losses, indices) of the `k` samples with the largest mean pixel loss."""
        losses, idx = self.losses.sort(descending=True)
        return (losses, idx) if k is None else (losses[:k], idx[:k])

    def plot_top_losses(self, k: int = 4, *, figsize=None):
        """`k` rows: the image, the true mask and the predicted one (3k panels), worst first."""
        from ..show.images import draw_image, draw_sample, grid

        losses, idx = self.top_losses(k)
        ds = dataset_of(self.learner, self.loader)
        task = self.learner.task
        fig, axes = grid(3 * len(idx), 3, figsize, panel=2.5)
        for row, (loss, i) in enumerate(zip(losses.tolist(), idx.tolist())):
            x, y = ds[i]
            img = task.decode_input(x)
            a, b, c = axes[3 * row:3 * row + 3]
            draw_image(a, img)
            a.set_title(f"#{i} loss {loss:.3f}", fontsize=9)
            draw_sample(b, task, img, y, title="truth")
            draw_sample(c, task, img, self.preds[i], title="prediction")
        fig.tight_layout()
        return fig

    def plot_per_class_iou(self, *, figsize=None):
        """A bar per class: its IoU over the whole loader (absent classes left out)."""
        import matplotlib.pyplot as plt

        items = [(str(c), v) for c, v in self.per_class_iou().items() if not math.isnan(v)]
        fig, ax = plt.subplots(figsize=figsize or (max(4, 0.45 * len(items) + 2), 3.5))
        ax.bar([c for c, _ in items], [v for _, v in items], color="tab:blue")
        ax.axhline(self.mean_iou, color="tab:red", linestyle="--", label=f"mean IoU {self.mean_iou:.3f}")
        ax.set_ylim(0, 1)
        ax.set_ylabel("IoU")
        ax.legend(loc="lower right")
        ax.tick_params(axis="x", rotation=45)
        fig.tight_layout()
        return fig
