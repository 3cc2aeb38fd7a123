"""`tasklearner`: a task and data in, a ready `Learner` out.

Which part of hotstart owns each argument (read this before adding one):

| argument               | owner                   | what it decides                                      |
|------------------------|-------------------------|------------------------------------------------------|
| task                   | tasks/                  | encodings, head, loss, metrics, decoding             |
| data, validdata        | datasets/ (containers)  | raw samples: ``(inputs, targets)`` or a dataset      |
| valid_pct, seed        | datasets/ split_random  | the random split when no validdata / folder split    |
| batch_size, num_workers| learner/data.py         | DataLoaders (seeded shuffle, drop_last in training); |
|                        |                         | batch_size None: the task's, else 64                 |
|                        |                         | num_workers "auto": from the cores and sample cost   |
| cache                  | datasets/resized_cache  | "resized": image files read from a copy at the size  |
| backbone, model,       | models/ (factory.py)    | timm name / nn.Module / small CNN, + task head;      |
| pretrained             |                         | pretrained stats replace the task's normalization    |
| layers, ps, emb_drop   | models/tabular.py       | tables: MLP widths, dropouts, embedding dropout      |
| compile                | learner/compiling.py    | torch.compile of the backbone (False, True, "auto")  |
| device, precision,     | learner/backend.py      | plain CPU, or Lightning Fabric (GPU, mixed precision,|
| devices, strategy,     |                         | multi-process: devices=2 re-launches the script,     |
| num_nodes, sync_bn,    |                         | torchrun / SLURM detected; sync_bn converts          |
| ToDevice/ToGPU in cbs  |                         | BatchNorm to SyncBatchNorm)                          |
| optimizer, wd          | learner/optim.py        | AdamW (default), Adam, SGD or your callable          |
| metrics                | learner/callbacks       | dict name -> metric (default: the task's)            |
| callbacks, progress    | learner/callbacks       | events of the loop; progress bars and epoch table    |
| seed                   | learner/rng.py          | model init, shuffling, augmentation, dropout         |

Arguments left at ``None`` fall back to the owner's default, so a CLI can pass every option.
``precision=None`` is fp32; ``precision="auto"`` is bf16-mixed on CPUs with AMX or AVX-512 BF16
units and on bf16-capable GPUs, fp32 elsewhere (learner/precision.py, with the measurements).
"""
from __future__ import annotations

from typing import Sequence

from ..errors import UsageError
from .callbacks.base import Callback
from .callbacks.device import ToDevice


def tasklearner(task, data, *, backbone=None, model=None, batch_size: int | None = None, valid_pct: float = 0.2,
                layers=None, ps=None, emb_drop=None,
                validdata=None, callbacks: Sequence[Callback] = (), metrics=None, optimizer="adamw",
                seed: int | None = None, num_workers: int | str = "auto", compile=False, device=None, precision=None,
                pretrained: bool = False, progress: bool = True, wd: float = 0.01, devices=None, strategy=None,
                num_nodes=None, sync_bn: bool = False, cache: str | None = None):
    from .backend import make_backend
    from .compiling import maybe_compile
    from .data import TaskDataset, make_loader
    from .loop import Learner
    from ..models.factory import check_backbone, create_model
    from ..models.timm_backbone import timm_stats
    from ..models.user_module import module_config
    from .rng import fresh_seed, seeded_torch_rng

    seed = fresh_seed() if seed is None else int(seed)
    if batch_size is not None and int(batch_size) < 1:
        raise UsageError(f"batch_size must be at least 1, got {batch_size!r}")
    if backbone is not None and model is not None:
        raise UsageError("pass either backbone= (a timm name or module, the task adds its head) or model= (complete), not both")
    if model is None and backbone is None:
        backbone = task.default_backbone  # series tasks: "inceptiontime"
    if model is None:
        check_backbone(backbone, pretrained)  # a misspelled name fails here, before any data is read

    if pretrained and isinstance(backbone, str):
        stats = timm_stats(backbone, getattr(task.encoded_blocks()[0], "channels", 3))
        if stats is not None:
            task = task.with_stats(*stats)

    if cache is not None:  # image files read from a copy at the task's size (datasets/resized_cache.py)
        from ..datasets.resized_cache import cache_data

        size = getattr(task.encoded_blocks()[0], "size", None)
        data = None if data is None else cache_data(data, cache, size, argument="data")
        validdata = None if validdata is None else cache_data(validdata, cache, size, argument="validdata")

    train = valid = None
    if data is not None:
        train, valid = _split(task, data, validdata, valid_pct, seed)
        if task.needs_setup:  # statistics from the training split only (tables)
            task = task.setup(train)
    if batch_size is None:  # the task's choice for this many training samples (tasks/base.py), else 64
        batch_size = (None if train is None else task.default_batch_size(len(train[0]))) or 64

    with seeded_torch_rng(seed):  # timm's init draws from torch's global RNG: give it a private one
        if model is None:
            model, model_config = create_model(task, backbone, pretrained=pretrained, layers=layers, ps=ps,
                                               emb_drop=emb_drop)
        else:
            model_config = {"backbone": module_config(model)}

    if data is not None:
        task.check(model)  # shapes on meta tensors, before any data is read or weight trained (tasks/checks.py)

    dev = next((c for c in callbacks if isinstance(c, ToDevice)), None)
    backend = make_backend(
        accelerator=device or (dev.accelerator if dev else None),
        devices=devices or (dev.devices if dev else None),
        strategy=strategy or (dev.strategy if dev else None),
        precision=precision or (dev.precision if dev else None),
        num_nodes=num_nodes,
    )
    size = getattr(task.encoded_blocks()[0], "size", (64, 64))
    compiled = maybe_compile(model, compile, task=task, backbone=backbone, size=size, batch_size=batch_size,
                          device=backend.device, precision=backend.precision)

    train_loader = valid_loader = None
    if train is not None:
        pin = backend.device.type == "cuda"
        train_loader = make_loader(TaskDataset(task, train, "training", seed), batch_size=batch_size, train=True,
                                   num_workers=num_workers, seed=seed, pin_memory=pin)
        valid_loader = make_loader(TaskDataset(task, valid, "validation", seed), batch_size=batch_size,
                                   train=False, num_workers=num_workers, seed=seed, pin_memory=pin)

    user_cbs = [c for c in callbacks if not isinstance(c, ToDevice)]
    return Learner(model, train_loader, valid_loader, task.loss_fn(), optimizer=optimizer,
                   metrics=metrics if metrics is not None else task.metrics, callbacks=user_cbs, task=task,
                   seed=seed, backend=backend, progress=progress, model_config=model_config, wd=wd,
                   sync_bn=sync_bn, compiled=compiled)


def _split(task, data, validdata, valid_pct, seed):
    """(train, valid): `validdata` if given, else the data's "train" / "valid" splits (a "test" split
    is never used here), else a seeded random split. Before the model is built: a table task learns
    its statistics from `train`."""
    from ..datasets.containers import as_data, split_train_valid
    from ..datasets.errors import DatasetError

    data = as_data(data)
    if len(data[0]) == 0:
        raise DatasetError("the dataset is empty: no samples to train on")
    _check_targets(task, data)
    if validdata is not None:
        validdata = as_data(validdata)
        _check_targets(task, validdata)
    return split_train_valid(data, valid_pct, seed, validdata)


def _check_targets(task, data) -> None:
    """Targets are cheap to read (no I/O): check them all now, not at batch 300 of epoch 2.

    Not for a map-style dataset (``dataset[i] -> (x, y)``): its targets come only with whole
    samples, images included, so reading them all would cost an epoch before the first one. Those
    targets are checked as each sample is encoded, and the error names the sample's index.
    """
    from ..datasets.containers import reads_whole_samples

    if reads_whole_samples(data[1]):
        return
    block = task.target_block
    for i in range(len(data[1])):
        block.validate(data[1][i], where=f"target of sample {i}")
