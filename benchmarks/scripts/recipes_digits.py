"""fastai's recipes with little data: digits at 16x16, 100 training images (10 per class), every
other digit for validation, SmallCNN, 20 epochs of one-cycle; over several seeds, accuracy
without and with MixUp + label smoothing + EMA.

    python benchmarks/scripts/recipes_digits.py --seeds 5 --epochs 20

The 100 training images are the same for every seed (the first 10 of each class); the seed sets
the initial weights, the shuffles and the mixing. The images are encoded once, without
augmentation (resized to 16x16 and normalized, then kept as tensors): on our shared, loaded
2-core machine hotstart's per-sample augmentation cost ~30 s an epoch here, which 10 runs of
20 epochs cannot afford. Accuracy is measured once, after the fit, on all 1,697 other digits
(each epoch's own validation runs on 100 of them only). The recipe's settings suit 100 optimizer steps: EMA's decay 0.9 (timm's
0.9998 would average mostly the initial weights), mixup alpha 0.4, label smoothing 0.1.
Prints one JSON object: each seed's pair of accuracies, the gain's mean, standard deviation and
range, and the load average before and after.
"""
import argparse
import json
import os
import statistics
import time


def digits_split():
    from hotstart import datasets

    data, blocks = datasets.load("digits")
    targets = [int(t) for t in data.targets]
    train, seen = [], {}
    for i, t in enumerate(targets):
        if seen.get(t, 0) < 10:
            train.append(i)
            seen[t] = seen.get(t, 0) + 1
    chosen = set(train)
    rest = [i for i in range(len(targets)) if i not in chosen]
    return data.subset(train), data.subset(rest), blocks


def encoded(task, data):
    """The images and targets as tensors, encoded once (the validation encoding: resize and
    normalize, no augmentation)."""
    import torch

    from hotstart.learner.data import TaskDataset

    ds = TaskDataset(task, (data.inputs, data.targets), "validation", 0)
    xs, ys = zip(*(ds[i] for i in range(len(ds))))
    return torch.utils.data.TensorDataset(torch.stack(xs), torch.stack([torch.as_tensor(y) for y in ys]))


def make_task(blocks, label_smoothing=0.0):
    from hotstart import ImageClassificationSingle

    return ImageClassificationSingle(blocks, size=(16, 16), augment=False, label_smoothing=label_smoothing)


def run_one(seed, recipe, args, train, rest, blocks, tensors):
    import torch

    from hotstart import tasklearner
    from hotstart.learner import EMA, MixUp
    from hotstart.learner.rng import torch_generator

    task = make_task(blocks, args.label_smoothing if recipe else 0.0)
    callbacks = [MixUp(mixup_alpha=args.mixup_alpha), EMA(decay=args.ema_decay)] if recipe else []
    learner = tasklearner(task, train, validdata=rest.subset(list(range(100))), batch_size=args.bs, seed=seed,
                          progress=False, callbacks=callbacks)
    train_t, rest_t = tensors
    loader = torch.utils.data.DataLoader
    learner.train_loader = loader(train_t, batch_size=args.bs, shuffle=True, drop_last=True,
                                  generator=torch_generator(seed))
    learner.valid_loader = loader(torch.utils.data.Subset(rest_t, range(100)), batch_size=256)
    learner.fit_one_cycle(args.epochs, args.lr)
    return learner.validate(loader(rest_t, batch_size=256))["accuracy"]


def main(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("--seeds", type=int, default=5)
    p.add_argument("--first_seed", type=int, default=0, help="seeds first_seed .. first_seed + seeds - 1")
    p.add_argument("--epochs", type=int, default=20)
    p.add_argument("--bs", type=int, default=20)
    p.add_argument("--lr", type=float, default=1e-2)
    p.add_argument("--mixup_alpha", type=float, default=0.4)
    p.add_argument("--label_smoothing", type=float, default=0.1)
    p.add_argument("--ema_decay", type=float, default=0.9)
    args = p.parse_args(argv)
    load_before = os.getloadavg()
    train, rest, blocks = digits_split()
    t0 = time.perf_counter()
    tensors = encoded(make_task(blocks), train), encoded(make_task(blocks), rest)
    rows = []
    for seed in range(args.first_seed, args.first_seed + args.seeds):
        plain = run_one(seed, False, args, train, rest, blocks, tensors)
        recipe = run_one(seed, True, args, train, rest, blocks, tensors)
        rows.append({"seed": seed, "plain": plain, "recipe": recipe, "gain": recipe - plain})
        print(json.dumps(rows[-1]), flush=True)
    gains = [r["gain"] for r in rows]
    out = {"args": vars(args), "runs": rows,
           "plain_mean": statistics.mean(r["plain"] for r in rows),
           "recipe_mean": statistics.mean(r["recipe"] for r in rows),
           "gain_mean": statistics.mean(gains), "gain_std": statistics.stdev(gains) if len(gains) > 1 else 0.0,
           "gain_min": min(gains), "gain_max": max(gains), "wins": sum(g > 0 for g in gains),
           "seconds": round(time.perf_counter() - t0, 1), "loadavg_before": load_before,
           "loadavg_after": os.getloadavg()}
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
