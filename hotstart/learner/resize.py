"""Progressive resizing: train small, then larger, with one learner.

fastai's recipe (train at 64x64, then 128x128, keeping the weights and the optimizer)::

    learner.fit_one_cycle(4, 1e-2)            # at the task's size, e.g. (64, 64)
    learner.set_size((128, 128))
    learner.fit_one_cycle(2, 1e-3)            # the same model and optimizer, larger images

`set_size` replaces the learner's task by the same task at another size (the task's JSON with
another ``"size"``: every image task, whatever its kind) and points the learner's datasets at it,
so the loaders encode (resize, augment) to the new size from their next batch on; the model, the
optimizer (Adam's moments), the callbacks (EMA's average) and the seed stay. The model must accept
the new size: convolutional backbones with global pooling (SmallCNN, timm's CNNs) do; a ViT with a
fixed patch grid does not. `save` and `export` write the task at its current size.

Compile cache and warmup: the any-batch rule (one cached graph serves every batch size,
compile_cache/compile.py) does not extend to sizes. The input's height and width are static in a
compiled graph, and the warmup's manifest is keyed by size (compile_cache/manifest.py), so each
size is its own cache entry: warm every size you train at. A compiled model meeting a size it was
not warmed for compiles once for it (at that fit's first batch) and is cached from then on;
``compile="auto"`` decided when the learner was built, for its first size.
"""
from __future__ import annotations

from ..errors import UsageError


def set_size(learner, size) -> "object":
    """Make `learner` encode its images at `size` (``(h, w)`` or an int) from its next batch on."""
    from ..tasks import SupervisedTask
    from .data import TaskDataset

    task = learner.task
    params = None if task is None else task.to_dict()
    if params is None or "size" not in params:
        raise UsageError(f"set_size changes an image task's size; this learner's task is "
                         f"{type(task).__name__}, which has none")
    params["size"] = list(size) if isinstance(size, (tuple, list)) else size
    new = SupervisedTask.from_dict(params)  # the task's own checks of the size
    # the loaders the loop reads (each process's shard, Fabric's wrapper) share these datasets
    for loader in (learner.train_loader, learner.valid_loader):
        dataset = getattr(loader, "dataset", None)
        if isinstance(dataset, TaskDataset):
            dataset.task = new
    learner.task = new
    return learner
