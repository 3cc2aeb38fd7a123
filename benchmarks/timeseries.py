"""The ``timeseries`` comparison (``--only timeseries``): hotstart against a plain PyTorch loop on
ItalyPowerDemand with the same InceptionTime (scripts/_series.py says what both do).

    python -m benchmarks.run --only timeseries          # ~3-5 min on 2 shared cores

Time to first epoch and steady series/s (the table's img/s column), alternating runs, medians and
ratios to the plain loop. Both run with OMP_NUM_THREADS=1: on a shared 2-core machine, two threads
waiting on each other were 4-5x slower than one (benchmarks/scripts/timeseries_accuracy.py).
"""
from __future__ import annotations

import os

WORKLOAD = {"epochs": 6, "bs": 16, "lr": 1e-2, "nf": 32}


def bench_timeseries(py, cfg, log, compare, add_ratios, scripts) -> dict:
    args = [f"--{k}={v}" for k, v in WORKLOAD.items()]
    commands = {c: [py, str(scripts / f"timeseries_{c}_fit.py"), *args] for c in ("plain", "hotstart")}
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    result = compare("timeseries", commands, cfg["runs"], envs={c: env for c in commands}, log=log)
    add_ratios(result)
    return {"workload": {"data": "ItalyPowerDemand", **WORKLOAD}, "contenders": result, "runs_each": cfg["runs"],
            "notes": ["img/s is series/s here: 64 trained + 67 evaluated per epoch"]}
