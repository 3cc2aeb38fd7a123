"""`MixUp` and `CutMix`: train on mixed pairs of images and their mixed (soft) targets, on timm's
``timm.data.Mixup``.

timm's `Mixup` draws its coin flips, lambdas and boxes from numpy's *global* RNG. hotstart never
lets a library touch the caller's global RNGs, so every batch's call runs inside
`seeded_numpy_global_rng` (learner/rng.py): numpy's global state is saved, seeded with
``derive_seed(fit_seed, epoch, batch, "mix")`` — a stream that belongs to the learner's seed — and
put back afterwards. The draws are therefore exactly timm's (``np.random.seed(s)`` then
``Mixup(...)(x, y)`` gives the same batch: tests/test_learner_recipes.py), the caller's numpy state
is untouched, and a fit resumed from a checkpoint mixes each batch as the uninterrupted fit did
(the seed depends only on where the batch is, not on what ran before).

Training batches only: validation (and `validate`, `get_preds`, `tta`) never sees mixed inputs.
While training, the loss is timm's ``SoftTargetCrossEntropy`` on the soft targets, smoothed with
the task's ``label_smoothing`` unless `label_smoothing=` is given. Single-label image
classification only (`ImageClassificationSingle`): mixed targets mean nothing to other tasks, which
get a `UsageError`.

timm mixes the batch with its reverse (image ``i`` with image ``n - 1 - i``), so it needs an even
batch: reversed, an odd batch's middle image would be mixed with itself. An odd batch of ``n``
images is mixed by timm as a batch of ``n + 1`` whose extra image is a copy of the second one:
each image then has another image of the batch as its partner (the first image is paired with
the copy of the second), and the copy's own result is dropped. No image is left unmixed, as it
was before, when an odd batch's last image (all of a batch of one) kept its own target without a
word. A single image has nothing to mix with: a fit whose training batches hold one image is
refused, and a stray one-image batch is left as it is, with a warning.
"""
from __future__ import annotations

import warnings

from ...errors import UsageError
from ..rng import derive_seed, seeded_numpy_global_rng
from .base import Callback

_STREAM = 0x4D4958  # "MIX": this callback's own stream of the fit's seed


class MixUp(Callback):
    """``callbacks=[MixUp()]`` (timm's defaults for mixup: ``alpha=0.8``, every batch).

    `mixup_alpha` / `cutmix_alpha` > 0 turn each on; with both, each batch is cutmix with
    probability `switch_prob`, else mixup. `prob` is the chance that a batch is mixed at all.
    `mode` is timm's ("batch", "pair" or "elem": one lambda per batch, pair or image)."""

    order = -30  # before every callback that reads the batch (Recorder, Metrics, NonFiniteGuard)

    def __init__(self, mixup_alpha: float = 0.8, cutmix_alpha: float = 0.0, *, prob: float = 1.0,
                 switch_prob: float = 0.5, mode: str = "batch", cutmix_minmax=None, correct_lam: bool = True,
                 label_smoothing: float | None = None):
        if mixup_alpha <= 0 and cutmix_alpha <= 0 and cutmix_minmax is None:
            raise UsageError(f"{type(self).__name__}: mixup_alpha or cutmix_alpha must be > 0 "
                             f"(got mixup_alpha={mixup_alpha!r}, cutmix_alpha={cutmix_alpha!r})")
        self.options = dict(mixup_alpha=float(mixup_alpha), cutmix_alpha=float(cutmix_alpha),
                            cutmix_minmax=cutmix_minmax, prob=float(prob), switch_prob=float(switch_prob),
                            mode=mode, correct_lam=bool(correct_lam))
        self.label_smoothing = label_smoothing
        self.mixup = None
        self._loss_func = None

    def before_fit(self):
        from timm.data import Mixup

        task = self.learner.task
        from ...tasks.classification import ImageClassificationSingle

        if not isinstance(task, ImageClassificationSingle):
            raise UsageError(f"{type(self).__name__} mixes images and their class targets: it needs an "
                             f"ImageClassificationSingle task, this learner's task is {type(task).__name__}")
        batch_size = getattr(self.learner.train_loader, "batch_size", None)
        if batch_size == 1:
            raise UsageError(f"{type(self).__name__} mixes each image with another image of its batch: with "
                             f"batch_size=1 there is none, and nothing would be mixed; use batch_size=2 or more")
        smoothing = task.label_smoothing if self.label_smoothing is None else float(self.label_smoothing)
        self.mixup = Mixup(**self.options, label_smoothing=smoothing, num_classes=len(task.classes))
        self._warned_single = False

    def before_train(self):
        from timm.loss import SoftTargetCrossEntropy

        if self._loss_func is None:
            self._loss_func = self.learner.loss_func
            self.learner.loss_func = SoftTargetCrossEntropy()

    def after_train(self):
        if self._loss_func is not None:
            self.learner.loss_func, self._loss_func = self._loss_func, None

    after_fit = after_train  # also when the fit stops inside a training phase

    def before_batch(self):
        ln = self.learner
        if not ln.training:
            return
        if len(ln.xb) < 2 and not self._warned_single:
            self._warned_single = True
            warnings.warn(f"{type(self).__name__}: a training batch of one image (epoch {ln.epoch}, batch {ln.iter}) "
                          f"has no other image to mix with and is trained on as it is", UserWarning, stacklevel=2)
        seed = derive_seed(ln.fit_state.fit_seed, ln.epoch, ln.iter, _STREAM)
        ln.xb, ln.yb = mix_batch(self.mixup, ln.xb, ln.yb, seed)


def mix_batch(mixup, x, y, seed: int):
    """timm's ``mixup(x, y)`` with its numpy draws from `seed` (numpy's global state untouched), on
    a copy of `x` (timm mixes in place). An odd batch is mixed as the batch plus a copy of its
    second image, whose result is dropped, so that no image is its own partner (the module doc);
    a batch of one image is returned as it is, with its target as timm encodes an unmixed one."""
    import torch
    from timm.data.mixup import mixup_target

    n = len(x)
    if n < 2:
        return x, mixup_target(y, mixup.num_classes, 1.0, mixup.label_smoothing)
    x = x.clone()
    with seeded_numpy_global_rng(seed):
        if n % 2 == 0:
            return mixup(x, y)
        mixed_x, mixed_y = mixup(torch.cat([x, x[1:2]]), torch.cat([y, y[1:2]]))
    return mixed_x[:n], mixed_y[:n]


class CutMix(MixUp):
    """``callbacks=[CutMix()]``: `MixUp` with cutmix alone (timm's ``cutmix_alpha=1.0``)."""

    def __init__(self, cutmix_alpha: float = 1.0, **kwargs):
        super().__init__(mixup_alpha=0.0, cutmix_alpha=cutmix_alpha, **kwargs)
