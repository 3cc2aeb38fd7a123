"""What a small folder of shapes needs to learn: validation accuracy over drawing seeds for one
setting of input size, batch size, learning rate, augmentation and backbone (issue 34, item 4).

    PYTHONPATH=.:tests python benchmarks/scripts/shapes_defaults.py --seeds 3 --size 48 --bs 8 --lr 3e-3

Each seed draws a fresh folder (tests/shapes_folder.py: 30 JPEGs per class at 48 px, circles,
squares, triangles), trains through `tasklearner` and `fit_one_cycle` as the CLI does (20%
validation split from the seed), and records the last epoch's validation accuracy. `--size 0` and
`--bs 0` leave the choice to hotstart (what the CLI does without --size / --batch-size). Prints
one JSON line.

Measured 2026-12 on the shared 2-core CPU (OMP_NUM_THREADS=1), small CNN, 30 pictures per class
(72 training, 18 validation), last epoch's validation accuracy; chance is 0.333:
- the CLI's defaults (128 px, batch 64 = 1 step per epoch, lr 3e-3, 10 epochs), seed 0: 0.056;
- 48 px, batch 8 (9 steps per epoch), lr 3e-3, 10 epochs, seeds 0-2: 0.056, 0.222, 0.389;
  the same at lr 1e-2 / 3e-2 (seed 0, no augmentation): 0.111 / 0.111; 40 epochs: 0.167;
- resnet10t (lr 3e-3) and resnet18 (lr 1e-3) at 48 px, batch 8, seeds 0-1: means 0.222, 0.223.
No choice of size, batch, rate or backbone learned the folder in 10 epochs from random weights.
"""
import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--first-seed", type=int, default=0)
    ap.add_argument("--epochs", type=int, default=10)
    ap.add_argument("--n-per-class", type=int, default=30)
    ap.add_argument("--picture", type=int, default=48, help="the drawn pictures' side in pixels")
    ap.add_argument("--size", type=int, default=0, help="input side; 0: hotstart's choice")
    ap.add_argument("--bs", type=int, default=0, help="batch size; 0: hotstart's choice")
    ap.add_argument("--lr", type=float, default=None, help="peak rate; default: the CLI's")
    ap.add_argument("--augment", default="true", help='true, false or a JSON dict (e.g. {"max_rotate": 30})')
    ap.add_argument("--backbone", default=None)
    args = ap.parse_args(argv)

    from shapes_folder import make_shapes

    from hotstart import datasets, tasklearner
    from hotstart.cli.train_build import make_task

    augment = json.loads(args.augment)
    out = {"args": vars(args), "accuracy": [], "fit_s": []}
    for seed in range(args.first_seed, args.first_seed + args.seeds):
        with tempfile.TemporaryDirectory() as tmp:
            folder = make_shapes(Path(tmp) / "photos", n_per_class=args.n_per_class, size=args.picture, seed=seed)
            data, blocks = datasets.ImageFolders(folder)
            cli = argparse.Namespace(task=None, size=[args.size] * 2 if args.size else None, no_flip=False)
            task = make_task(cli, blocks, builtin=False)
            if augment is not True:
                task = type(task)(task.blocks, size=task.size, augment=augment)
            learner = tasklearner(task, data, backbone=args.backbone, batch_size=args.bs or None, seed=seed,
                                  progress=False)
            t0 = time.perf_counter()
            learner.fit_one_cycle(args.epochs, args.lr or (3e-3 if args.backbone is None else 1e-3))
            out["fit_s"].append(round(time.perf_counter() - t0, 1))
            out["accuracy"].append(round(float(learner.history[-1]["accuracy"]), 3))
    out["size"], out["batch_size"] = list(task.size), learner.train_loader.batch_size
    out["mean_accuracy"] = round(statistics.mean(out["accuracy"]), 3)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
