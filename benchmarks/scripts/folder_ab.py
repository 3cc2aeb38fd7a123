"""The folder of JPEGs, epoch against epoch in one process: hotstart, the plain loop, the bound
(and, with ``--also lightning,fastai,twin``, those and a second plain loop).

    cd benchmarks/scripts && python folder_ab.py --data folder --n 2000 --size 128 --bs 32 \\
        --backbone resnet10t --workers 1 --epochs 4 [--also lightning,fastai,twin]

`python -m benchmarks.run --only folder` runs each contender in its own process, minutes apart;
on this shared machine, whose speed drifts by up to 40 % within half an hour, two runs of one
contender there differ by up to 30 %. Here the three contenders alternate single epochs (training
batches, then validation) inside one process, so the epochs compared are seconds apart, and the
ratios are the medians of per-round ratios over `--epochs` rounds (after one untimed warm-up
round; the order turns by one each round, so that no contender always runs right after the same one):

- hotstart: ``tasklearner`` on ``datasets.ImageFolders`` with its defaults (it chooses its
  workers, and keeps the decoded images in memory where they fit), one ``learner.fit(1)`` a round
  (``--hotstart-precision 32-true``: in fp32, as the plain loop and the bound run, where hotstart
  would choose bf16-mixed);
  ``--caches memory,resized,off`` adds one hotstart contender per ``cache=`` (``hotstart-memory``:
  decoded once into memory, datasets/decoded_cache.py; ``hotstart-resized``: a reduced copy on disk;
  ``hotstart-off``: every file decoded every epoch), to compare them against each other and the bound
  in the same rounds;
- plain: torchvision's ``ImageFolder`` way (`_data.torchvision_datasets`: the same augmentation
  written with ``transforms.v2``) in a DataLoader with `--workers` workers;
- bound: the plain loop's model, batch size and batch count on tensors decoded and resized once
  (validation's transforms), in the main process: what the model alone costs;
- lightning (``--also``): lightning_fit.py's LightningModule on the plain loop's DataLoaders, a
  new ``Trainer(max_epochs=1)`` a round (a Trainer's one-off setup is in its epoch, as
  ``learner.fit(1)``'s is in hotstart's);
- twin (``--also``): a second plain loop, its own model, the same code: how far apart two identical
  contenders come out, the noise floor of every other ratio;
- fastai (``--also``): fastai_fit.py's ``ImageDataLoaders.from_folder`` + ``vision_learner``,
  ``learn.fit(1)`` a round, its loaders with `--workers` workers. fastai is not a hotstart
  dependency: run this script with an interpreter that has it (benchmarks/README.md's
  ``$FASTAIVENV``).

Every contender has its own resnet, the same AdamW settings as the plain loop (a constant
learning rate `--lr`: the schedule does not change the cost of a step). Prints one JSON line.
"""
import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import _data  # noqa: E402
from _plain_loop import one_epoch  # noqa: E402


def main():
    extra = argparse.ArgumentParser(add_help=False)
    extra.add_argument("--also", default="", help="more contenders, comma-separated: lightning, fastai, twin")
    extra.add_argument("--caches", default="", help="more hotstart contenders, one per cache=: memory, resized, off")
    extra.add_argument("--hotstart-precision", default=None,
                       help="the hotstart contenders' precision (default: hotstart's own choice, bf16-mixed on a "
                            "CPU with bf16 units); 32-true compares them with the fp32 plain loop and bound")
    more, rest = extra.parse_known_args()
    also = [a for a in more.also.split(",") if a]
    if set(also) - {"lightning", "fastai", "twin"}:
        raise SystemExit(f"--also: any of lightning, fastai, twin, got {more.also!r}")
    caches = {c: {"memory": "memory", "resized": "resized", "off": False}.get(c) for c in more.caches.split(",") if c}
    if None in caches.values():
        raise SystemExit(f"--caches: any of memory, resized, off, got {more.caches!r}")
    args = _data.parse_args(rest)
    import timm
    import torch
    from torch.utils.data import DataLoader, TensorDataset

    from hotstart import ImageClassificationSingle, datasets, tasklearner

    images, labels, classes = _data.load(args)
    train_ds, valid_ds = _data.torchvision_datasets(args, images, labels, classes)
    workers = _data.loader_kwargs(args)

    def in_memory(idx):
        _, resize_only = _data.torchvision_datasets(args, images, labels, classes)
        resize_only.idx = idx
        xs, ys = zip(*(resize_only[i] for i in range(len(resize_only))))
        return TensorDataset(torch.stack(xs), torch.tensor(ys))

    def plain_contender(train, valid, loader_kwargs):
        model = timm.create_model(args.backbone, num_classes=len(classes), in_chans=3)
        opt = torch.optim.AdamW(model.parameters(), lr=args.lr, betas=(0.9, 0.99), eps=1e-5, weight_decay=0.01)
        train_dl = DataLoader(train, batch_size=args.bs, shuffle=True, drop_last=True,
                              generator=torch.Generator().manual_seed(0), **loader_kwargs)
        valid_dl = DataLoader(valid, batch_size=args.bs, **loader_kwargs)

        def epoch():
            one_epoch(model, opt, train_dl, valid_dl)
            return len(train_dl) * args.bs + len(valid)
        return epoch

    bound = plain_contender(in_memory(train_ds.idx), in_memory(valid_ds.idx), {})
    plain = plain_contender(train_ds, valid_ds, workers)
    data, blocks = datasets.ImageFolders(_data.folder_path(args.n, args.classes))
    task = ImageClassificationSingle(blocks, size=(args.size, args.size))

    def hotstart_contender(**options):
        if more.hotstart_precision:
            options = {"precision": more.hotstart_precision, **options}
        learner = tasklearner(task, data, backbone=args.backbone, batch_size=args.bs, seed=0, progress=False, **options)

        def epoch():
            learner.fit(1, args.lr)
            return len(learner.train_loader) * args.bs + len(learner.valid_loader.dataset)
        epoch.learner = learner
        return epoch

    hotstart = hotstart_contender()
    learner = hotstart.learner
    contenders = {"hotstart": hotstart, "plain": plain, "bound": bound}
    for name, cache in caches.items():
        contenders[f"hotstart-{name}"] = hotstart_contender(cache=cache)
    if "lightning" in also:
        contenders["lightning"] = lightning_contender(args, len(classes), train_ds, valid_ds, workers)
    if "fastai" in also:
        contenders["fastai"] = fastai_contender(args, workers)
    if "twin" in also:
        contenders["twin"] = plain_contender(train_ds, valid_ds, workers)
    for fn in contenders.values():
        fn()  # untimed: first-epoch costs (allocations, worker imports) out of the way
    ips = {name: [] for name in contenders}
    loads = []
    names = list(contenders)
    for r in range(args.epochs):
        loads.append(open("/proc/loadavg").read().split()[0])
        for name in names[r % len(names):] + names[:r % len(names)]:  # each contender leads a round in turn
            fn = contenders[name]
            t = time.perf_counter()
            n = fn()
            ips[name].append(n / (time.perf_counter() - t))

    def paired(a, b):
        return round(statistics.median(x / y for x, y in zip(ips[a], ips[b])), 3)

    out = {"over_bound": {k: paired(k, "bound") for k in ips}, "over_plain": {k: paired(k, "plain") for k in ips},
           "args": {k: v for k, v in vars(args).items()}, "rounds": args.epochs, "load_at_round_start": loads,
           "num_workers": [learner.train_loader.num_workers, learner.valid_loader.num_workers],
           "hotstart_choices": {k: f"{c.value} ({c.why})" for k, c in learner.choices.items()},
           "img_per_s": {k: [round(v, 2) for v in vs] for k, vs in ips.items()},
           "hotstart_over_bound": paired("hotstart", "bound"), "plain_over_bound": paired("plain", "bound"),
           "hotstart_over_plain": paired("hotstart", "plain")}
    print(json.dumps(out))


def lightning_contender(args, n_classes, train_ds, valid_ds, loader_kwargs):
    """lightning_fit.py's module (cross-entropy, torchmetrics accuracy) at a constant `--lr`."""
    import pytorch_lightning as pl
    import torch
    from torch.utils.data import DataLoader

    from _lightning_module import Classifier

    module = Classifier(args.backbone, n_classes, lr=args.lr)
    train_dl = DataLoader(train_ds, batch_size=args.bs, shuffle=True, drop_last=True,
                          generator=torch.Generator().manual_seed(0), **loader_kwargs)
    valid_dl = DataLoader(valid_ds, batch_size=args.bs, **loader_kwargs)

    def epoch():
        trainer = pl.Trainer(max_epochs=1, accelerator="cpu", logger=False, enable_checkpointing=False,
                             enable_progress_bar=False, enable_model_summary=False)
        trainer.fit(module, train_dl, valid_dl)
        return len(train_dl) * args.bs + len(valid_ds)
    return epoch


def fastai_contender(args, loader_kwargs):
    """fastai_fit.py's loaders and learner on the same folder, ``learn.fit(1)`` at a constant `--lr`."""
    from fastai.vision.all import (ImageDataLoaders, Normalize, RandomResizedCrop, accuracy, aug_transforms,
                                   imagenet_stats, vision_learner)

    batch_tfms = [*aug_transforms(max_rotate=10.0, max_zoom=1.0, max_lighting=0.2, max_warp=0.0),
                  Normalize.from_stats(*imagenet_stats)]
    dls = ImageDataLoaders.from_folder(_data.folder_path(args.n, args.classes), valid_pct=0.2, seed=0,
                                       item_tfms=RandomResizedCrop(args.size, min_scale=0.7), batch_tfms=batch_tfms,
                                       bs=args.bs, num_workers=loader_kwargs["num_workers"], device="cpu")
    learn = vision_learner(dls, args.backbone, pretrained=False, metrics=accuracy)

    def epoch():
        with learn.no_bar(), learn.no_logging():
            learn.fit(1, args.lr)
        return len(dls.train) * args.bs + len(dls.valid_ds)
    return epoch


if __name__ == "__main__":
    main()
