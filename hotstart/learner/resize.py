"""Progressive resizing: train small, then larger, with one learner.

Within one schedule (one one-cycle over all the epochs, split across the sizes in order)::

    learner.fit_one_cycle(6, 1e-2, sizes=[(64, 64), (128, 128)])   # epochs 0-2 at 64, 3-5 at 128

Epoch ``e`` of ``n`` trains and validates at ``sizes[e * len(sizes) // n]`` (`ProgressiveResize`,
set at each epoch's start). A checkpoint holds the size it was written at, so a fit resumed in a
fresh learner (built at any size) goes on at the size of the epoch it resumes in, bit for bit as
the uninterrupted fit. After the fit the learner stays at the last size.

Or fastai's recipe, two fits and two schedules (train at 64x64, then 128x128, keeping the
weights and the optimizer)::

    learner.fit_one_cycle(4, 1e-2)            # at the task's size, e.g. (64, 64)
    learner.set_size((128, 128))
    learner.fit_one_cycle(2, 1e-3)            # the same model and optimizer, larger images

`set_size` replaces the learner's task by the same task at another size (the task's JSON with
another ``"size"``: every image task, whatever its kind) and points the learner's datasets at it,
so the loaders encode (resize, augment) to the new size from their next batch on; the model, the
optimizer (Adam's moments), the callbacks (EMA's average) and the seed stay. The model must accept
the new size: convolutional backbones with global pooling (SmallCNN, timm's CNNs) do, down to the
size they downsample by; a ViT with a fixed patch grid does not. Both ways check each size with
the check that `tasklearner` makes (``task.check(model)``, tasks/checks.py), before they change
anything: ``sizes=`` checks all its sizes when the fit starts, before the first batch.
`save` and `export` write the task at its current size.

Compile cache and warmup: the any-batch rule (one cached graph serves every batch size,
compile_cache/compile.py) does not extend to sizes. The input's height and width are static in a
compiled graph, and the warmup's manifest is keyed by size (compile_cache/manifest.py), so each
size is its own cache entry: warm every size you train at. A compiled model meeting a size it was
not warmed for compiles once for it (at that fit's first batch at the size, i.e. mid-fit with
``sizes=``) and is cached from then on; ``compile="auto"`` asks the manifest about the size the
learner was built at, when each fit starts.
"""
from __future__ import annotations

from ..arguments import check_size
from ..errors import UsageError
from ..tasks.checks import ModelTaskMismatch
from .callbacks.base import Callback


def _as_size(size, name: str = "size"):
    """A size as a task's JSON holds it: ``[h, w]`` (an int is a square; anything else refused,
    naming `name`: arguments.check_size)."""
    return list(check_size(name, size))


class ProgressiveResize(Callback):
    """Epoch ``e`` of an ``n_epoch`` fit at ``sizes[e * len(sizes) // n_epoch]``: the epochs split
    in order across the sizes, the earlier sizes first (``fit_one_cycle(n, sizes=[...])`` adds it)."""

    order = -20  # before every other callback's before_epoch: they see the epoch's size
    restore_before_checks = True  # a resume puts the checkpoint's size back before comparing tasks

    def __init__(self, sizes, n_epoch: int):
        sizes = list(sizes)
        if not sizes or len(sizes) > int(n_epoch):
            raise UsageError(f"sizes= needs 1 to n_epoch ({n_epoch}) sizes, one or more epochs each; got {sizes!r}")
        self.sizes, self.n_epoch = [_as_size(s, f"sizes[{i}]") for i, s in enumerate(sizes)], int(n_epoch)

    def size_at(self, epoch: int):
        return self.sizes[int(epoch) * len(self.sizes) // self.n_epoch]

    def before_fit(self):
        """Every size must suit the model before the first batch, not at the epoch that reaches it."""
        shown = "sizes=[" + ", ".join(f"({h}, {w})" for h, w in self.sizes) + "]"
        for size in self.sizes:
            task_at_size(self.learner, size, argument=shown)

    def before_epoch(self):
        if self.learner.fit_state.train_only:  # lr_find's sweep: not a fit of ours
            return
        size = self.size_at(self.learner.epoch)
        if self.learner.task.to_dict().get("size") != size:
            set_size(self.learner, size, check=False)  # before_fit checked it

    # --- checkpoints (learner/checkpoint.py restores callbacks before it compares the task) ---
    def checkpoint_state(self) -> tuple[dict, dict]:
        """The size the checkpoint was written at, which its task holds."""
        return {}, {"size": self.learner.task.to_dict().get("size")}

    def load_checkpoint_state(self, tensors: dict, meta: dict) -> None:
        set_size(self.learner, meta["size"])


def task_at_size(learner, size, *, argument: str):
    """The learner's task at `size`, after the check `tasklearner` makes (``task.check(model)``):
    a `ModelTaskMismatch` that names `argument` (the caller's words for where the size came from)
    when the learner's model cannot take that size."""
    task = learner.task
    if task is None or "size" not in task.get_config():
        raise UsageError(f"{argument} changes an image task's size; this learner's task is "
                         f"{type(task).__name__}, which has none")
    new = task.with_config(size=_as_size(size))  # the task's own checks of the size; a subclass's parameters kept
    try:
        new.check(learner.task_model())
    except ModelTaskMismatch as e:
        raise ModelTaskMismatch(f"{argument}: {e}") from e
    return new


def set_size(learner, size, *, check: bool = True) -> "object":
    """Make `learner` encode its images at `size` (``(h, w)`` or an int) from its next batch on,
    keeping its model, optimizer and callbacks: ``fit_one_cycle(4, 1e-2)`` at 64x64, then
    ``set_size((128, 128))`` and ``fit_one_cycle(2, 1e-3)``. A size the model cannot take is
    refused as `tasklearner` refuses it, and nothing changes (`check=False`: the caller checked).
    A compiled model compiles once for each size it meets (the module docstring: warm every size
    you train at)."""
    from .data import TaskDataset

    if check:
        new = task_at_size(learner, size, argument=f"set_size({size!r})")
    else:
        new = learner.task.with_config(size=_as_size(size))
    # the loaders the loop reads (each process's shard, Fabric's wrapper) share these datasets
    for loader in (learner.train_loader, learner.valid_loader):
        dataset = getattr(loader, "dataset", None)
        if isinstance(dataset, TaskDataset):
            dataset.task = new
    learner.task = new
    return learner
