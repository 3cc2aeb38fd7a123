"""hotstart's series defaults on four UCR sets it does not ship, against InceptionTime's published accuracy.

    pip download --no-deps aeon==1.6.0 -d /tmp/aeon
    python -m benchmarks.scripts.ts_unshipped_data --wheel /tmp/aeon/aeon-1.6.0-py3-none-any.whl   # once
    nice python -m benchmarks.scripts.timeseries_unshipped                      # 4 sets x 3 seeds
    nice python -m benchmarks.scripts.timeseries_unshipped --sets ArrowHead --seeds 1 --epochs 2   # a smoke run

Each run is what a user writes, with nothing tuned by hand: ``TSClassificationSingle(blocks)``,
``tasklearner(task, train)`` (backbone, batch size: the task's defaults) and
``fit_one_cycle(EPOCHS)`` with no learning rate (the task's ``default_lr``), then one score of the
archive's held-out test split. As in the paper, the network trains on the whole training split:
validation (``validdata``) only watches its first 8 series, nothing is selected on it.

The budget is `EPOCHS` epochs of the task's default batch size (the steps each set gets are in
the results); the seconds are measured on this machine's 2 cores, shared with other work while
they ran (the load averages are in the results): re-time on quiet cores.

The published figures are hfawaz/InceptionTime's ``results-InceptionTime-128.csv`` (UCR 2018
archive, column ``accuracy``): an ensemble of 5 networks, each trained 1,500 epochs with batch 64.
`TUNED` names the two sets the defaults were chosen on; the other two were never run before
the defaults were fixed. ``--sets GunPoint,ItalyPowerDemand`` runs two shipped sets the same way.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path

# results-InceptionTime-128.csv (github.com/hfawaz/InceptionTime), UCRArchive_2018, column "accuracy"
PUBLISHED = {"ArrowHead": 0.8457, "PickupGestureWiimoteZ": 0.7600, "ACSF1": 0.9200, "OSULeaf": 0.9421}
SHIPPED = {"GunPoint": 1.0000, "ItalyPowerDemand": 0.9650}  # the same file: the check that they hold
TUNED = ("ArrowHead", "PickupGestureWiimoteZ")  # the defaults were chosen on these two only
EPOCHS = 40
RESULTS = Path(__file__).resolve().parents[1] / "results" / "timeseries-unshipped.json"


def run_one(name: str, seed: int, epochs: int) -> dict:
    from hotstart import TSClassificationSingle, datasets, tasklearner
    from hotstart.learner.data import TaskDataset, make_loader

    from .ts_unshipped_data import load

    data, blocks = datasets.load(name) if name in SHIPPED else load(name)
    train, test = data.split("train"), data.split("test")
    t0 = time.perf_counter()
    learn = tasklearner(TSClassificationSingle(blocks), train, validdata=train.subset(range(8)), seed=seed,
                        progress=False)
    learn.fit_one_cycle(epochs)
    fit_s = time.perf_counter() - t0
    loader = make_loader(TaskDataset(learn.task, test, "validation", seed), batch_size=64, train=False)
    accuracy = float(learn.validate(loader)["accuracy"])
    batch = learn.train_loader.batch_size
    return {"set": name, "seed": seed, "epochs": epochs, "batch_size": batch, "steps": epochs * len(learn.train_loader),
            "lr_max": learn.task.default_lr, "fit_s": round(fit_s, 1), "accuracy": round(accuracy, 4),
            "loadavg": [round(v, 2) for v in os.getloadavg()]}


def summarise(runs: list[dict]) -> dict:
    summary = {}
    for name in dict.fromkeys(r["set"] for r in runs):
        rs = [r for r in runs if r["set"] == name]
        acc = [r["accuracy"] for r in rs]
        published = {**PUBLISHED, **SHIPPED}[name]
        summary[name] = {"published_inceptiontime": published, "mean": round(statistics.mean(acc), 4),
                         "min": min(acc), "max": max(acc), "seeds": len(acc),
                         "gap_points": round(100 * (published - statistics.mean(acc)), 1),
                         "role": "shipped" if name in SHIPPED else "tuned on" if name in TUNED else "untouched", "epochs": rs[0]["epochs"], "batch_size": rs[0]["batch_size"],
                         "steps": rs[0]["steps"], "lr_max": rs[0]["lr_max"],
                         "fit_s_mean": round(statistics.mean(r["fit_s"] for r in rs), 1)}
    return summary


def write(out: Path, runs: list[dict], t_all: float, load_start, threads: int, wall_s: float | None = None) -> None:
    from hotstart.atomic import atomic_write_bytes

    wall_s = round(time.perf_counter() - t_all, 1) if wall_s is None else wall_s
    result = {"summary": summarise(runs), "runs": runs, "wall_s": wall_s,
              "torch_threads": threads, "loadavg_start": list(load_start), "loadavg_end": list(os.getloadavg()),
              "cpus": os.cpu_count(),
              "published_source": "github.com/hfawaz/InceptionTime results-InceptionTime-128.csv, column accuracy"}
    print(json.dumps(result["summary"]), flush=True)
    atomic_write_bytes(out, (json.dumps(result, indent=1) + "\n").encode())


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sets", default=",".join(PUBLISHED),
                   help=f"comma-separated, of {', '.join(PUBLISHED)} (or the shipped {', '.join(SHIPPED)})")
    p.add_argument("--seeds", type=int, default=3)
    p.add_argument("--epochs", type=int, default=EPOCHS)
    p.add_argument("--threads", type=int, default=None, help="torch intra-op threads (default: torch's)")
    p.add_argument("--out", type=Path, default=RESULTS)
    p.add_argument("--combine", type=Path, nargs="+", default=None,
                   help="write --out from these result files' runs (runs made in parallel processes), run nothing")
    args = p.parse_args(argv)
    if args.combine:
        parts = [json.loads(f.read_text()) for f in args.combine]
        runs = [r for part in parts for r in part["runs"]]
        return write(args.out, runs, time.perf_counter(), parts[0]["loadavg_start"], parts[0]["torch_threads"],
                     wall_s=max(part["wall_s"] for part in parts))
    import torch

    if args.threads is not None:
        torch.set_num_threads(args.threads)  # this script's own process: no library code sets it
    t_all, load_start, runs = time.perf_counter(), os.getloadavg(), []
    for name in args.sets.split(","):
        for seed in range(args.seeds):
            r = run_one(name, seed, args.epochs)
            print(json.dumps(r), flush=True)
            runs.append(r)
        write(args.out, runs, t_all, load_start, torch.get_num_threads())  # a run cut short keeps what it finished


if __name__ == "__main__":
    main()
