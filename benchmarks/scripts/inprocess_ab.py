"""In-process A/B of one training epoch: hotstart's learner against the plain loop, same images.

The whole-process comparisons (benchmarks/run.py) carry the machine's noise and every one-time
cost; this one alternates single epochs inside one process, so it isolates the per-epoch cost
(the loaders alone are timed too). Not a target, a diagnostic:

    python benchmarks/scripts/inprocess_ab.py --data digits --n 480 --size 32 --bs 32 --backbone resnet10t
    python benchmarks/scripts/inprocess_ab.py --data synthetic --n 100 --size 128 --bs 32 --backbone resnet10t

Each hotstart epoch is ``learner.fit(1)``, so it also pays a fit's set-up (optimizer, RNG fork).
The plain loop uses ``torch.optim.AdamW`` as a user writes it (torch's default kernel on CPU);
hotstart's "adamw" is the fused kernel (hotstart/learner/optim.py): part of what this measures.
"""
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import _data  # noqa: E402
from _plain_loop import one_epoch  # noqa: E402

ROUNDS = int(os.environ.get("AB_ROUNDS", 6))


def main():
    args = _data.parse_args()
    import timm
    import torch
    from torch.utils.data import DataLoader

    from hotstart import Image, ImageClassificationSingle, Label, datasets, tasklearner

    images, labels, classes = _data.load(args)
    train_ds, valid_ds = _data.torchvision_datasets(args, images, labels, classes)
    train_dl = DataLoader(train_ds, batch_size=args.bs, shuffle=True, drop_last=True,
                          generator=torch.Generator().manual_seed(0))
    valid_dl = DataLoader(valid_ds, batch_size=args.bs)
    model = timm.create_model(args.backbone, num_classes=len(classes), in_chans=1 if args.data == "digits" else 3)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, betas=(0.9, 0.99), eps=1e-5, weight_decay=0.01)

    if args.data == "digits":
        data, blocks = datasets.load("digits")
        data = data.subset(list(range(args.n))) if args.n else data
        task = ImageClassificationSingle(blocks, size=(args.size, args.size), augment={"flip": 0.0})
    else:
        data = (images, labels)
        task = ImageClassificationSingle((Image(), Label(classes)), size=(args.size, args.size))
    learner = tasklearner(task, data, backbone=args.backbone, batch_size=args.bs, seed=0, progress=False)

    def plain_epoch():
        one_epoch(model, opt, train_dl, valid_dl)

    def loaders(*dls):
        def run():
            for dl in dls:
                for _ in dl:
                    pass
        return run

    contenders = {"plain epoch": plain_epoch, "hotstart epoch": lambda: learner.fit(1, args.lr),
                  "plain loaders": loaders(train_dl, valid_dl),
                  "hotstart loaders": loaders(learner.train_loader, learner.valid_loader)}
    plain_epoch(), learner.fit(1, args.lr)  # first-iteration costs out of the way
    times = {name: [] for name in contenders}
    for _ in range(ROUNDS):
        for name, fn in contenders.items():
            t = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t)
    for name, ts in times.items():
        print(f"{name:<17} median {statistics.median(ts):.3f}s  min {min(ts):.3f}s  ({ROUNDS} rounds)")
    ratio = statistics.median(times["hotstart epoch"]) / statistics.median(times["plain epoch"])
    print(f"hotstart epoch / plain epoch (medians): {ratio:.3f}  (hotstart: fused AdamW; plain: torch's default AdamW)")


if __name__ == "__main__":
    main()
