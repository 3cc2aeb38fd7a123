"""Must-show numbers of issue 12: segmentation on digits-segmentation, keypoints on discs.

    OMP_NUM_THREADS=2 python benchmarks/scripts/vision_tasks.py segmentation   # pixel acc >= 0.95, mIoU >= 0.6, < 3 min
    OMP_NUM_THREADS=2 python benchmarks/scripts/vision_tasks.py keypoints      # mean error <= 1.5 px, < 2 min

Each prints one JSON line: the validation metrics, the wall time of the whole run (data, model,
training, validation), the process's CPU time (on a machine shared with other work, wall time
overstates what 2 free cores take; CPU time / threads is the lower bound) and the settings. Both use the default small CNN at 32x32 on CPU.
"""
from __future__ import annotations

import argparse
import json
import time


def segmentation(args):
    from hotstart import ImageSegmentation, datasets, tasklearner

    data, blocks = datasets.load("digits-segmentation")
    task = ImageSegmentation(blocks, size=(32, 32), augment={"flip": 0.0, "max_rotate": 5.0, "scale": (0.85, 1.0)})
    learner = tasklearner(task, data, seed=args.seed, batch_size=args.batch_size, progress=not args.quiet)
    learner.fit_one_cycle(args.epochs, args.lr)
    return learner


def keypoints(args):
    from hotstart import ImageKeypointRegression, datasets, tasklearner

    data, blocks = datasets.load("discs", n=args.n)
    task = ImageKeypointRegression(blocks, size=(32, 32))
    learner = tasklearner(task, data, seed=args.seed, batch_size=args.batch_size, progress=not args.quiet)
    learner.fit_one_cycle(args.epochs, args.lr)
    return learner


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("task", choices=["segmentation", "keypoints"])
    p.add_argument("--epochs", type=int, default=None)
    p.add_argument("--lr", type=float, default=None)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--n", type=int, default=1000, help="keypoints: number of generated images")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--quiet", action="store_true")
    args = p.parse_args(argv)
    defaults = {"segmentation": (8, 1e-2), "keypoints": (10, 3e-3)}[args.task]
    args.epochs = args.epochs or defaults[0]
    args.lr = args.lr or defaults[1]
    start, cpu = time.perf_counter(), time.process_time()
    learner = (segmentation if args.task == "segmentation" else keypoints)(args)
    metrics = learner.validate()
    import torch

    print(json.dumps({"task": args.task, "seconds": round(time.perf_counter() - start, 1),
                      "cpu_seconds": round(time.process_time() - cpu, 1), **metrics,
                      "epochs": args.epochs, "lr": args.lr, "batch_size": args.batch_size,
                      "threads": torch.get_num_threads()}))


if __name__ == "__main__":
    main()
