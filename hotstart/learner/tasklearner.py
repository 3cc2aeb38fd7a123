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
| epoch_repeats          | learner/data.py         | passes over the training split an epoch (timm's)     |
| cache                  | datasets/decoded_cache, | None (auto): image files decoded once into memory    |
|                        | datasets/resized_cache  | where they fit; "memory"; "resized": a reduced copy  |
|                        |                         | on disk; False: every file read every epoch          |
| backbone, model,       | models/ (factory.py)    | timm name / nn.Module / small CNN, + task head;      |
| pretrained             |                         | pretrained stats replace the task's normalization    |
| layers, ps, emb_drop   | models/tabular.py       | tables: MLP widths, dropouts, embedding dropout      |
| compile                | learner/compiling.py,   | torch.compile of the backbone (False, True, None =   |
|                        | compile_cache/policy.py | "auto": at each fit's start, if warm and long enough)|
| channels_last          | learner/memory_format.py| the batches' layout (None: channels_last at 96 px+)  |
| device, precision,     | learner/backend.py,     | one CPU process (fp32, or bf16 through autocast), or |
| devices, strategy,     | learner/precision.py    | Lightning Fabric (GPU, other precisions, multi-      |
| num_nodes, sync_bn,    |                         | process: devices=2 re-launches the script, torchrun /|
| ToDevice/ToGPU in cbs  |                         | SLURM detected; sync_bn converts to SyncBatchNorm)   |
| optimizer, wd          | learner/optim.py        | AdamW (default), Adam, SGD or your callable          |
| metrics                | learner/callbacks       | dict name -> metric (default: the task's)            |
| callbacks, progress    | learner/callbacks       | events of the loop; progress bars and epoch table    |
| ema                    | learner/callbacks/ema.py| an average of the weights (None: the task's)         |
| seed                   | learner/rng.py          | model init, shuffling, augmentation, dropout         |

Arguments left at ``None`` fall back to the owner's default, so a CLI can pass every option.

The defaults that make a fit fast where that is safe, each measured where its module says, and
each said, with its reason, in the fit's first line (learner/choices.py):

- ``precision=None``: bf16-mixed for image classification on hardware with bf16 units (CPUs with
  AMX or AVX-512 BF16, bf16-capable GPUs), fp32 elsewhere and for other tasks
  (learner/precision.py); ``"32-true"`` for fp32, ``"auto"`` for bf16 wherever it runs;
- ``channels_last=None``: channels_last batches for convolutional models at 96x96 and up
  (learner/memory_format.py);
- ``compile=None`` ("auto"): compiled when a fit starts if the warmup warmed its configuration and
  the fit is long enough to gain (compile_cache/policy.py);
- ``cache=None``: a folder's images decoded once into memory when they fit the budget
  (datasets/decoded_cache.py);
- ``ema=None``: single-label image classification validates on, and keeps, an average of the
  weights in fits of 100 steps or more (`EMA`; tasks/classification.py has the measurements).

Given explicitly, each is used exactly as given.
"""
from __future__ import annotations

from typing import Sequence

from ..errors import UsageError
from .callbacks.base import Callback
from .callbacks.device import ToDevice


def tasklearner(task, data, *, backbone=None, model=None, batch_size: int | None = None, valid_pct: float = 0.2,
                layers=None, ps=None, emb_drop=None,
                validdata=None, callbacks: Sequence[Callback] = (), metrics=None, optimizer="adamw",
                seed: int | None = None, num_workers: int | str = "auto", compile=None, device=None, precision=None,
                pretrained: bool = False, progress: bool = True, wd: float = 0.01, devices=None, strategy=None,
                num_nodes=None, sync_bn: bool = False, cache=None, channels_last: bool | None = None,
                epoch_repeats: int = 1, ema: float | bool | None = None):
    """A `Learner` for `task` on `data`: the model (backbone + the task's head), the seeded loaders,
    the loss, the metrics and the backend, with the defaults that make a fit fast where that is
    safe, each said with its reason in the fit's first line::

        data, blocks = datasets.load("digits")        # 1,797 8x8 images, labels 0..9
        task = ImageClassificationSingle(blocks, size=(16, 16), augment={"flip": 0.0})
        learner = tasklearner(task, data, seed=0)      # 20% of the samples held out to validate
        learner.fit_one_cycle(2, lr_max=3e-3)

    Everything the model could not work with is refused before any data is read or weight
    trained: a misspelled backbone, a model whose output does not fit the task (checked on meta
    tensors), a target its block refuses (every target of an ``(inputs, targets)`` pair is
    checked first, naming the sample). The module docstring has the table of which part of
    hotstart owns each argument; arguments left at None get that owner's default.

    Args:
        task (SupervisedTask): what a sample is and how it is encoded, the head, the loss, the
            metrics and the decoding (hotstart/tasks/).
        data (Data | tuple | torch.utils.data.Dataset | None): the training data: an ``(inputs, targets)`` pair of sequences, a container of
            hotstart.datasets (`ImageFolders`, `ImageTable`, ...; its "train" and "valid" splits
            are used when it has them, never its "test" split), or a map-style dataset of
            ``(input, target)`` samples. None: a learner that only predicts (what `load_learner`
            builds without data).
        backbone (str | torch.nn.Module | None): a timm model name (``"resnet18"``), a name of
            hotstart's (``"inceptiontime"``, ``"resnet1d"``, ``"smallcnn_micro"``) or your
            module, to which the task's head is added. None: the task's ``default_backbone``,
            else hotstart's small CNN for images. A misspelled name is an error here, naming
            the close ones.
        model (torch.nn.Module | None): a complete model instead (the head included): used as
            given; not with `backbone`.
        batch_size: samples per batch. None: the task's ``default_batch_size`` for this many
            training samples (image tasks: 32 below 4,096 images; the series tasks shrink it for
            small archives), else 64. A chosen batch is said on the fit's first line.
        valid_pct: the share of the training samples held out for validation when neither
            `validdata` nor a "valid" split is given (a random split, seeded by `seed`).
        layers (Sequence[int] | None): tables only: the MLP's widths (None: (200, 100), as
            fastai's ``tabular_learner``).
        ps (float | Sequence[float] | None): tables only: the dropout after each MLP layer
            (None: 0.1).
        emb_drop (float | None): tables only: the dropout after the embeddings (None: 0).
        validdata (Data | tuple | torch.utils.data.Dataset | None): the validation data, in any form `data` takes (instead of a split of `data`).
        callbacks: callbacks added to the learner's defaults for every fit (`EarlyStopping`,
            `SaveBestModel`, `EMA`, ...); a `ToDevice` / `ToGPU` among them chooses the device
            instead, and is not kept.
        metrics (dict | None): name -> metric object (torchmetrics' protocol). None: the task's
            (accuracy for single-label classification, F1 and accuracy for multi-label, ...).
        optimizer (str | Callable): ``"adamw"`` (the default), ``"adam"``, ``"sgd"`` or a
            callable (see `Learner`).
        seed: the one seed of the model's initialization, the validation split, the shuffles, the
            augmentations and the dropout: the same seed repeats the fit (on the same hardware
            and precision). None: a fresh one from the OS, kept as ``learner.seed``.
        num_workers: DataLoader worker processes. ``"auto"`` (the default) times the first
            samples when the loader is first read: an epoch estimated to load quickly (in-memory
            images: well under a millisecond a sample) stays in the main process, as does one
            of samples under 4 ms on two cores (the compute threads use both), else one worker
            per core but one, at most 8 (learner/data.py).
        compile (bool | str | None): ``torch.compile`` of the backbone: True compiles now, False
            never. None (``"auto"``): decided as each fit starts, compiled only when the warmup
            (``python -m hotstart.warmup``) has warmed this configuration and the fit is long
            enough to repay loading it (on a 2-core EPYC, resnet10t at 128x128, batch 32: 3 s to
            load the warm graphs against steps at least 1.12x as fast, so from about 50 batches;
            a cold compile took 34 s, which is why a cold configuration stays eager;
            compile_cache/policy.py). On CUDA a warm configuration is always compiled.
        device (str | None): ``"cpu"``, ``"cuda"`` (or ``"gpu"``), ``"mps"``, ... None: a GPU
            when there is one, else the CPU.
        precision (str | None): Fabric's name: ``"32-true"``, ``"bf16-mixed"``, ``"16-mixed"``,
            or ``"auto"`` (bf16-mixed where the hardware has bf16 units). None: ``"auto"`` for
            image classification, fp32 for the other tasks (learner/precision.py: on an AVX-512
            BF16 CPU bf16-mixed ran resnet10t at 128x128 1.84x as fast, and its mean accuracy over
            5 seeds lay within fp32's spread; the other tasks were not measured).
        pretrained: load the timm backbone's pretrained weights (downloaded once, or from the
            local cache); its normalization statistics then replace the task's.
        progress: show the choices line, the bars and the epoch table (the `Progress` callback).
        wd: the weight decay (0.01, fastai's default).
        devices (int | None): how many devices (processes) to train on: ``devices=2`` re-launches
            the script as two DDP processes; under torchrun or SLURM their process count is used.
        strategy (str | None): Fabric's strategy (None: ``"ddp"`` for several processes).
        num_nodes (int | None): machines to train on (Fabric); under torchrun or SLURM the
            launcher's count is used.
        sync_bn: across processes, BatchNorm over the global batch (``SyncBatchNorm``, CUDA only).
        cache (bool | str | None): how image files are read. None / ``"auto"``: decoded once into
            memory when the training and validation images fit the budget (at most 1 GiB:
            21,845 images at 128x128 RGB), so later epochs decode nothing; ``"memory"``: in
            memory, as many as fit; ``"resized"``: a copy reduced to the task's size on disk,
            for folders too large for memory (not for masks and keypoints); False: every file
            read at every epoch (datasets/decoded_cache.py).
        channels_last: the batches' memory layout. None: channels_last for convolutional models
            at 96x96 and up (resnet10t trained 1.14x as fast at 128x128 on a 2-core EPYC, and
            0.92x at 32x32; learner/memory_format.py); True / False as given.
        epoch_repeats: passes over the training samples in one epoch, each copy augmented on its
            own (timm's ``--epoch-repeats``). A small folder needs several hundred steps to learn
            from random weights, far more than one pass over a few dozen pictures gives; ``hotstart
            train`` sets it for small folders (cli/small_folder.py). 1: an epoch is one pass.
        ema (float | bool | None): an exponential moving average of the weights, validated on
            during the fit and kept when it ends (the `EMA` callback, with timm's warm-up of the
            decay, so a short fit averages over its last few dozen steps, not a thousand). None:
            the task's ``default_ema`` for fits of 100 optimizer steps or more (0.999 for
            single-label image classification: on the digits and a JPEG folder, resnet10t from
            random weights reached 0.96-0.98 and 0.91-0.92 after its second epoch against
            0.86-0.96 and 0.85-0.86 without; tasks/classification.py; a shorter fit ends better
            unaveraged: callbacks/ema.py `DEFAULT_MIN_STEPS`), none for the other tasks; a
            number: that decay, for every fit; True: the task's, else 0.999, for every fit;
            False: none. Each fit's first line says whether it averages. An `EMA` among
            `callbacks` is used instead.

    Returns:
        learner (Learner): the learner, not yet trained: call ``fit_one_cycle``, ``fine_tune`` or ``fit``.
    """
    from ..arguments import check_int, check_number
    from ..datasets.decoded_cache import check_cache
    from ..tasks.base import check_task
    from .backend import check_accelerator, make_backend, resolve_accelerator
    from .choices import Choice
    from .compiling import check_compile
    from .data import TaskDataset, make_loader
    from .memory_format import choose_channels_last
    from .precision import choose_precision
    from .loop import Learner
    from ..models.factory import check_backbone, create_model
    from ..models.timm_backbone import timm_stats
    from ..models.user_module import whole_module_config
    from .rng import fresh_seed, seeded_torch_rng

    check_task(task)
    seed = None if seed is None else check_int("seed", seed)  # None: drawn once the processes are known
    compile = "auto" if compile is None else compile
    check_compile(compile)
    check_cache(cache)
    if batch_size is not None:
        batch_size = check_int("batch_size", batch_size, minimum=1)
    if valid_pct is not None:  # used only without validdata or a valid split; split_random refuses 0 and 1
        check_number("valid_pct", valid_pct, minimum=0, maximum=1)
    check_number("wd", wd, minimum=0)
    if backbone is not None and model is not None:
        raise UsageError("pass either backbone= (a timm name or module, the task adds its head) or model= (complete), not both")
    given_model = model is not None  # the user's complete model: no compile-cache key names it
    if model is None and backbone is None:
        backbone = task.default_backbone  # series tasks: "inceptiontime"
    if model is None:
        check_backbone(backbone, pretrained)  # a misspelled name fails here, before any data is read

    dev = next((c for c in callbacks if isinstance(c, ToDevice)), None)
    accelerator = resolve_accelerator(device or (dev.accelerator if dev else None))
    check_accelerator(accelerator, f"device={device!r}" if device else f"{type(dev).__name__}({dev.accelerator!r})"
                      if dev else "device")
    requested = precision or (dev.precision if dev else None)
    # with or without data: a model loaded to predict predicts as the learner that saved it did
    chosen, why = choose_precision(requested, accelerator=accelerator, bf16_by_default=task.bf16_by_default)
    choices = {"precision": Choice(chosen, why)}
    backend = make_backend(accelerator=accelerator, devices=devices or (dev.devices if dev else None),
                           strategy=strategy or (dev.strategy if dev else None), precision=chosen, num_nodes=num_nodes)

    if seed is None:
        seed = fresh_seed()
        if backend.world_size > 1:  # each process drew its own: all take the largest, so that every one
            seed = int(backend.all_reduce_max(float(seed)))  # splits, initializes and reports alike

    if pretrained and isinstance(backbone, str):
        stats = timm_stats(backbone, getattr(task.encoded_blocks()[0], "channels", 3))
        if stats is not None:
            task = task.with_stats(*stats)

    size = getattr(task.encoded_blocks()[0], "size", None)  # images: (H, W)
    if cache == "resized":  # image files read from a copy at the task's size (datasets/resized_cache.py)
        from ..datasets.resized_cache import cache_data

        if task.targets_on_input_grid:  # a reduced image would no longer match its mask / keypoints
            raise UsageError(f'cache="resized" reduces the images alone, but {type(task).__name__}\'s targets live '
                             "on the image's pixel grid; use cache=\"memory\" (images kept at their own size) or None")

        data = None if data is None else cache_data(data, cache, size, argument="data")
        validdata = None if validdata is None else cache_data(validdata, cache, size, argument="validdata")

    train = valid = None
    if data is not None:
        train, valid = _split(task, data, validdata, valid_pct, seed)
        if task.needs_setup:  # statistics from the training split only (tables)
            task = task.setup(train)
    batch_chosen = None  # the task's choice for this many training samples (tasks/base.py), said on the fit's first line
    if batch_size is None:
        batch_chosen = None if train is None else task.default_batch_size(len(train[0]))
        batch_size = batch_chosen or 64
    if batch_chosen is not None:
        choices["batch"] = Choice(str(batch_chosen), f"{type(task).__name__}'s default for {len(train[0]):,} training "
                                                     "samples; batch_size= to change")

    with seeded_torch_rng(seed):  # timm's init draws from torch's global RNG: give it a private one
        if model is None:
            model, model_config = create_model(task, backbone, pretrained=pretrained, layers=layers, ps=ps,
                                               emb_drop=emb_drop)
        else:
            model_config = whole_module_config(model)

    if data is not None:
        task.check(model)  # shapes on meta tensors, before any data is read or weight trained (tasks/checks.py)

    channels_last, why = choose_channels_last(channels_last, model, size)
    if why is not None:
        choices["layout"] = Choice("channels_last" if channels_last else "contiguous", why)

    compiled = auto_compile = None
    if compile is True:
        from .compiling import compile_now

        compiled = compile_now(model)
        choices["compile"] = Choice("compiled", "as asked")
    elif compile == "auto":  # decided when each fit starts, once its length is known
        from .compiling import AutoCompile, compile_key

        key = None if given_model else compile_key(task, backbone, size, backend.device.type, backend.precision,
                                                   channels_last)
        auto_compile = AutoCompile(key, backend.device.type)
    else:
        choices["compile"] = Choice("eager", "as asked")

    train_loader = valid_loader = None
    if train is not None:
        from ..datasets.decoded_cache import memory_caches

        decoded, said = memory_caches(cache, [train[0], valid[0]], task.blocks[0], size,
                                      shrink=not task.targets_on_input_grid)
        if said is not None:
            choices["images"] = Choice(*said)
        pin = backend.device.type == "cuda"
        if int(epoch_repeats) > 1:
            choices["epoch"] = Choice(f"{int(epoch_repeats)} passes", f"epoch_repeats: {len(train[0])} training samples, "
                                      f"{int(epoch_repeats) * len(train[0])} an epoch")
        train_loader = make_loader(TaskDataset(task, train, "training", seed, decoded=decoded[0], repeats=epoch_repeats),
                                   batch_size=batch_size, train=True, num_workers=num_workers, seed=seed, pin_memory=pin)
        valid_loader = make_loader(TaskDataset(task, valid, "validation", seed, decoded=decoded[1]),
                                   batch_size=batch_size, train=False, num_workers=num_workers, seed=seed, pin_memory=pin)

    user_cbs = [c for c in callbacks if not isinstance(c, ToDevice)]
    averaged = _weight_average(task, ema, user_cbs, train is not None)
    if averaged is not None:
        user_cbs.append(averaged)
    return Learner(model, train_loader, valid_loader, task.loss_fn(), optimizer=optimizer,
                   metrics=metrics if metrics is not None else task.metrics, callbacks=user_cbs, task=task,
                   seed=seed, backend=backend, progress=progress, model_config=model_config, wd=wd,
                   sync_bn=sync_bn, compiled=compiled, auto_compile=auto_compile, channels_last=channels_last,
                   choices=choices)


def _weight_average(task, ema, callbacks, training: bool):
    """The `EMA` callback for `tasklearner`'s `ema`, or None: given False, without training data,
    or with an `EMA` of the user's among `callbacks` (theirs is used, and an `ema` asked for
    besides it is refused: two averages of one model would fight over its weights). The task's
    default average skips fits shorter than `DEFAULT_MIN_STEPS`; one asked for averages every fit.
    Each fit's first line says whether it averages (callbacks/ema.py)."""
    from .callbacks.ema import DEFAULT_MIN_STEPS, EMA

    if not (ema is None or isinstance(ema, bool) or isinstance(ema, (int, float))):
        raise UsageError(f"ema must be a decay in [0, 1), True, False or None (the task's default), got {ema!r}")
    if any(isinstance(c, EMA) for c in callbacks):
        if ema is not None and ema is not False:
            raise UsageError(f"ema={ema!r} and an EMA among callbacks: give one of them")
        return None
    if ema is False or not training:
        return None
    if ema is None:
        if task.default_ema is None:
            return None
        return EMA(decay=task.default_ema, warmup=True, min_steps=DEFAULT_MIN_STEPS,
                   said_as=f"{type(task).__name__}'s default")
    decay = (task.default_ema if task.default_ema is not None else EMA().decay) if ema is True else float(ema)
    if not 0.0 <= decay < 1.0:
        raise UsageError(f"ema must be a decay in [0, 1), True, False or None (the task's default), got {ema!r}")
    return EMA(decay=decay, warmup=True, said_as="as asked")


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
        _check_targets(task, validdata, of=" of validdata")
    return split_train_valid(data, valid_pct, seed, validdata)


def _check_targets(task, data, of: str = "") -> None:
    """Targets are cheap to read (no I/O): check them all now, not at batch 300 of epoch 2. `of`
    says which dataset the sample belongs to in the error (" of validdata").

    Not for a map-style dataset (``dataset[i] -> (x, y)``): its targets come only with whole
    samples, images included, so reading them all would cost an epoch before the first one. Those
    targets are checked as each sample is encoded, and the error names the sample's index.
    """
    from ..datasets.containers import reads_whole_samples

    if reads_whole_samples(data[1]):
        return
    block = task.target_block
    for i in range(len(data[1])):
        block.validate(data[1][i], where=f"target of sample {i}{of}")
