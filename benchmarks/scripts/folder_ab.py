"""The folder of JPEGs, epoch against epoch in one process: hotstart, the plain loop, the bound.

    cd benchmarks/scripts && python folder_ab.py --data folder --n 2000 --size 128 --bs 32 \\
        --backbone resnet10t --workers 1 --epochs 4

`python -m benchmarks.run --only folder` runs each contender in its own process, minutes apart;
on this shared machine, whose speed drifts by up to 40 % within half an hour, two runs of one
contender there differ by up to 30 %. Here the three contenders alternate single epochs (training
batches, then validation) inside one process, so the epochs compared are seconds apart, and the
ratios are the medians of per-round ratios over `--epochs` rounds (after one untimed warm-up
round):

- hotstart: ``tasklearner`` on ``datasets.ImageFolders`` with its defaults (it chooses its
  workers), one ``learner.fit(1)`` a round;
- plain: torchvision's ``ImageFolder`` way (`_data.torchvision_datasets`: the same augmentation
  written with ``transforms.v2``) in a DataLoader with `--workers` workers;
- bound: the plain loop's model, batch size and batch count on tensors decoded and resized once
  (validation's transforms), in the main process: what the model alone costs.

Every contender has its own resnet, the same AdamW settings as the plain loop (a constant
learning rate `--lr`: the schedule does not change the cost of a step). Prints one JSON line.
"""
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import _data  # noqa: E402
from _plain_loop import one_epoch  # noqa: E402


def main():
    args = _data.parse_args()
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
    learner = tasklearner(task, data, backbone=args.backbone, batch_size=args.bs, seed=0, progress=False)

    def hotstart():
        learner.fit(1, args.lr)
        return len(learner.train_loader) * args.bs + len(learner.valid_loader.dataset)

    contenders = {"hotstart": hotstart, "plain": plain, "bound": bound}
    for fn in contenders.values():
        fn()  # untimed: first-epoch costs (allocations, worker imports) out of the way
    ips = {name: [] for name in contenders}
    loads = []
    for _ in range(args.epochs):
        loads.append(open("/proc/loadavg").read().split()[0])
        for name, fn in contenders.items():
            t = time.perf_counter()
            n = fn()
            ips[name].append(n / (time.perf_counter() - t))

    def paired(a, b):
        return round(statistics.median(x / y for x, y in zip(ips[a], ips[b])), 3)

    out = {"args": {k: v for k, v in vars(args).items()}, "rounds": args.epochs, "load_at_round_start": loads,
           "num_workers": [learner.train_loader.num_workers, learner.valid_loader.num_workers],
           "img_per_s": {k: [round(v, 2) for v in vs] for k, vs in ips.items()},
           "hotstart_over_bound": paired("hotstart", "bound"), "plain_over_bound": paired("plain", "bound"),
           "hotstart_over_plain": paired("hotstart", "plain")}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
