"""Accuracy of hotstart's series tasks on the archives' own test splits, over several seeds.

    nice python -m benchmarks.scripts.timeseries_accuracy --nf 8          # what benchmarks/README.md reports
    nice python -m benchmarks.scripts.timeseries_accuracy                 # the paper's width (nf 32): ~16x the CPU
    nice python -m benchmarks.scripts.timeseries_accuracy --sets GunPoint --seeds 1 --scale 0.1   # a smoke run

Each run trains one InceptionTime (6 modules, a residual every 3; `--nf` filters per branch, the
paper's 32 by default) with `fit_one_cycle` (epochs, batch and lr_max in `PLAN`) on the whole
training split (validation only watches 16 training series: nothing is selected on it), then
scores the held-out test split once. The published figures are from hfawaz/InceptionTime
``results-InceptionTime-128.csv`` (UCR 2018 archive): an ensemble of 5 networks of width 32
trained 1,500 epochs each; ours are single networks trained far shorter, because 2 shared CPU
cores allow no more. Covid3Month (TSER) is a regression: RMSE of InceptionTime beside a ridge
regression on the same standardised series (alpha by 5-fold CV on the training split).

Prints one JSON line per run and, after each set, writes what is done to `--out`
(default benchmarks/results/timeseries-accuracy.json).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path

import numpy as np

PUBLISHED = {"GunPoint": 1.000, "ItalyPowerDemand": 0.965}  # results-InceptionTime-128.csv, UCR 2018
TARGETS = {"GunPoint": 0.98, "ItalyPowerDemand": 0.95, "BasicMotions": 0.95, "JapaneseVowels": 0.95}
# epochs, batch size, lr_max: sized so that one seed of all five sets takes a few minutes on 2 cores
PLAN = {"GunPoint": (30, 16, 1e-2), "ItalyPowerDemand": (30, 16, 1e-2), "BasicMotions": (30, 8, 1e-2),
        "JapaneseVowels": (12, 32, 1e-2), "Covid3Month": (15, 16, 3e-3)}
RESULTS = Path(__file__).resolve().parents[1] / "results" / "timeseries-accuracy.json"


def run_one(name: str, seed: int, scale: float, backbone: str, nf: int) -> dict:
    from hotstart import TSClassificationSingle, TSRegression, datasets, tasklearner
    from hotstart.learner.data import TaskDataset, make_loader

    epochs, bs, lr = PLAN[name]
    epochs = max(1, round(epochs * scale))
    data, blocks = datasets.load(name)
    train, test = data.split("train"), data.split("test")
    regression = name == "Covid3Month"
    task = (TSRegression if regression else TSClassificationSingle)(blocks)
    t0 = time.perf_counter()
    net = backbone
    if nf != 32:  # a narrower network than the paper's, as a module (the named backbone is the paper's size)
        from hotstart.models.inception_time import InceptionTime
        from hotstart.models.resnet1d import ResNet1d

        c = blocks[0].channels
        net = InceptionTime(c, nf=nf) if backbone == "inceptiontime" else ResNet1d(c, widths=(nf * 2, nf * 4, nf * 4))
    learn = tasklearner(task, train, validdata=train.subset(range(16)), backbone=net, batch_size=bs,
                        seed=seed, progress=False)
    learn.fit_one_cycle(epochs, lr_max=lr)
    fit_s = time.perf_counter() - t0
    loader = make_loader(TaskDataset(learn.task, test, "validation", seed), batch_size=64, train=False)
    scores = learn.validate(loader)
    out = {"set": name, "seed": seed, "epochs": epochs, "bs": bs, "lr_max": lr, "backbone": backbone, "nf": nf,
           "fit_s": round(fit_s, 1)}
    if regression:
        out["rmse"] = float(scores["rmse"])
    else:
        out["accuracy"] = float(scores["accuracy"])
    return out


def ridge_rmse(name: str) -> float:
    """RMSE on the test split of a ridge regression on the standardised, flattened series."""
    from hotstart import datasets

    data, _ = datasets.load(name)
    tr, te = data.split("train"), data.split("test")
    x = np.stack([np.asarray(s).reshape(-1) for s in tr[0]])
    y = np.array([float(t[0]) for t in tr[1]])
    xt = np.stack([np.asarray(s).reshape(-1) for s in te[0]])
    yt = np.array([float(t[0]) for t in te[1]])
    mu, sd = x.mean(0), x.std(0) + 1e-8
    x, xt = (x - mu) / sd, (xt - mu) / sd

    def fit(a, b, alpha):
        xm, ym = a.mean(0), b.mean()
        w = np.linalg.solve((a - xm).T @ (a - xm) + alpha * np.eye(a.shape[1]), (a - xm).T @ (b - ym))
        return lambda z: (z - xm) @ w + ym

    folds = np.array_split(np.random.default_rng(0).permutation(len(x)), 5)
    best = min(10.0 ** np.arange(-3, 5), key=lambda alpha: np.mean([
        np.mean((fit(np.delete(x, f, 0), np.delete(y, f), alpha)(x[f]) - y[f]) ** 2) for f in folds]))
    return float(np.sqrt(np.mean((fit(x, y, best)(xt) - yt) ** 2)))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sets", default=",".join(PLAN), help="comma-separated built-in sets")
    p.add_argument("--seeds", type=int, default=5)
    p.add_argument("--scale", type=float, default=1.0, help="multiply every set's epochs")
    p.add_argument("--backbone", default="inceptiontime")
    p.add_argument("--nf", type=int, default=32, help="filters per Inception branch (the paper: 32)")
    p.add_argument("--out", type=Path, default=RESULTS)
    p.add_argument("--threads", type=int, default=1,
                   help="torch intra-op threads (1: on 2 shared, oversubscribed cores, 2 threads ran 4-5x slower)")
    args = p.parse_args(argv)
    import torch

    torch.set_num_threads(args.threads)  # this script's own process: no library code sets it
    t_all = time.perf_counter()
    load_start = os.getloadavg()
    runs = []
    for name in args.sets.split(","):
        for seed in range(args.seeds):
            r = run_one(name, seed, args.scale, args.backbone, args.nf)
            print(json.dumps(r), flush=True)
            runs.append(r)
        write(args.out, runs, t_all, load_start)  # after each set: a run cut short keeps what it finished


def summarise(runs: list[dict]) -> dict:
    summary = {}
    for name in dict.fromkeys(r["set"] for r in runs):
        rs = [r for r in runs if r["set"] == name]
        key = "rmse" if name == "Covid3Month" else "accuracy"
        vals = [r[key] for r in rs]
        s = {"metric": key, "mean": round(statistics.mean(vals), 4), "min": round(min(vals), 4),
             "max": round(max(vals), 4), "std": round(statistics.pstdev(vals), 4), "seeds": len(vals),
             "fit_s_mean": round(statistics.mean(r["fit_s"] for r in rs), 1), "epochs": rs[0]["epochs"]}
        if name in PUBLISHED:
            s["published_inceptiontime"] = PUBLISHED[name]
        if name in TARGETS:
            s["target"] = TARGETS[name]
        if key == "rmse":
            s["ridge_rmse"] = round(ridge_rmse(name), 4)
        summary[name] = s
    return summary


def write(out: Path, runs: list[dict], t_all: float, load_start) -> None:
    from hotstart.atomic import atomic_write_bytes

    result = {"summary": summarise(runs), "runs": runs, "wall_s": round(time.perf_counter() - t_all, 1),
              "loadavg_start": list(load_start), "loadavg_end": list(os.getloadavg()), "cpus": os.cpu_count()}
    print(json.dumps(result["summary"]), flush=True)
    atomic_write_bytes(out, (json.dumps(result, indent=1) + "\n").encode())


if __name__ == "__main__":
    main()
