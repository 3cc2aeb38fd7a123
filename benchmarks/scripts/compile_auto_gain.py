"""What ``compile="auto"`` gains after ``python -m hotstart.warmup``: a default fit, compiled warm,
against the same fit eager, whole process to whole process.

    python benchmarks/scripts/compile_auto_gain.py                       # 3 rounds, 128x128, 3 epochs
    python benchmarks/scripts/compile_auto_gain.py --rounds 1 --n 64 --epochs 1   # a smoke run

One private compile cache (a temporary folder, HOTSTART_CACHE_DIR) is warmed once by the warmup's
own workload (`--workload`, default ``single-smallcnn-128-cpu``: the default backbone on RGB
128x128, which is what ``tasklearner(ImageClassificationSingle(blocks), data)`` builds). Then,
alternating in each round, two fresh processes fit the same data with the same seed:

- ``auto``: the defaults (``compile`` not given): the fit's first line says whether it compiled;
- ``eager``: ``compile=False``.

A short fit (`--short-batches` training batches of `--short-batch-size`) is run once with the
defaults too, to show that it stays eager: the warmup's measured step times (printed in the summary
as ``measured``) say what compiling it would save, and a fit of a few small batches saves less than
loading the warm graphs costs. (A "short" fit in batches is not short in seconds when the batches
are large: with 3.4x measured at batch 16, two eager batches of 64 were predicted to save 15 s.) The parent times each child from spawn to exit (the whole process: imports, the
warm graphs' load, the fit); the child reports its fit time, the compile choice and its last
training loss. The summary gives medians and the auto / eager ratio of whole-process wall times. Run it
with nothing else running: the cores are shared between sessions.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CHILD = r"""
import json, sys, time
t0 = time.perf_counter()
import numpy as np
from hotstart import tasklearner
from hotstart.warmup.workloads import builtin_workloads

args = json.loads(sys.argv[1])
workload = next(w for w in builtin_workloads(cuda=False) if w.name == args["workload"])
task = workload.task()
rng = np.random.default_rng(0)
samples = [task.mock_sample(rng) for _ in range(args["n"])]
n_valid = max(1, args["n"] // 5)
data = ([s[0] for s in samples[n_valid:]], [s[1] for s in samples[n_valid:]])
valid = ([s[0] for s in samples[:n_valid]], [s[1] for s in samples[:n_valid]])
options = {} if args["compile"] == "auto" else {"compile": False}
learner = tasklearner(task, data, validdata=valid, seed=0, progress=False, batch_size=args["batch_size"],
                      num_workers=0, **options)
t_fit = time.perf_counter()
learner.fit_one_cycle(args["epochs"])
t_end = time.perf_counter()
print(json.dumps({"compile": learner.choices["compile"].value, "why": learner.choices["compile"].why,
                  "fit_s": t_end - t_fit, "in_process_s": t_end - t0,
                  "train_loss": learner.history[-1]["train_loss"], "batches": len(learner.train_loader)}))
"""


def child(args, compile_mode: str, env: dict, n: int, epochs: int, batch_size: int | None = None) -> dict:
    spec = {"workload": args.workload, "n": n, "epochs": epochs, "batch_size": batch_size or args.batch_size,
            "compile": compile_mode}
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", CHILD, json.dumps(spec)], env=env, capture_output=True,
                         text=True, check=False)
    wall = time.perf_counter() - t0
    if out.returncode != 0:
        raise SystemExit(f"{compile_mode} child failed:\n{out.stderr[-3000:]}")
    result = json.loads(out.stdout.strip().splitlines()[-1])
    result.update(mode=compile_mode, wall_s=wall)
    return result


def measured_steps(cache: str, workload: str) -> dict:
    """What the warmup measured for `workload`'s configuration in `cache` (the manifest entry's
    eager and compiled step times per sample), and their ratio: what ``compile="auto"`` decides
    from (hotstart/compile_cache/policy.py)."""
    from hotstart.compile_cache.manifest import COMPILED_STEP_FIELD, STEP_FIELD, read_manifest

    entry = next(e for e in read_manifest(cache)["entries"].values() if e["workload"] == workload)
    eager, compiled = entry.get(STEP_FIELD), entry.get(COMPILED_STEP_FIELD)
    return {"eager_step_s_per_sample": eager, "compiled_step_s_per_sample": compiled,
            "speedup": round(eager / compiled, 3) if eager and compiled else None}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--workload", default="single-smallcnn-128-cpu")
    p.add_argument("--n", type=int, default=1280, help="mock samples (a fifth validate)")
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--short-batches", type=int, default=1, help="training batches of the short fit (stays eager)")
    p.add_argument("--short-batch-size", type=int, default=8, help="the short fit's batch size")
    p.add_argument("--out", type=Path, default=None)
    args = p.parse_args(argv)

    with tempfile.TemporaryDirectory(prefix="hotstart-compile-gain-") as cache:
        env = dict(os.environ, HOTSTART_CACHE_DIR=cache)
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "hotstart.warmup", "--only", args.workload, "--strict",
                        "--no-progress"], env=env, check=True, capture_output=True)
        warmup_s = time.perf_counter() - t0
        runs = []
        for r in range(args.rounds):
            order = ("auto", "eager") if r % 2 == 0 else ("eager", "auto")
            for mode in order:
                runs.append(dict(child(args, mode, env, args.n, args.epochs), round=r))
                print(json.dumps(runs[-1]), flush=True)
        short_n = args.short_batches * args.short_batch_size * 5 // 4 + 1
        short = child(args, "auto", env, short_n, 1, args.short_batch_size)
        print(json.dumps(dict(short, short=True)), flush=True)
        measured = measured_steps(cache, args.workload)

    med = {m: statistics.median(r["wall_s"] for r in runs if r["mode"] == m) for m in ("auto", "eager")}
    fit = {m: statistics.median(r["fit_s"] for r in runs if r["mode"] == m) for m in ("auto", "eager")}
    pairs = [a["wall_s"] / e["wall_s"] for a, e in zip([r for r in runs if r["mode"] == "auto"],
                                                         [r for r in runs if r["mode"] == "eager"])]
    summary = {"warmup_s": round(warmup_s, 1), "measured": measured, "median_wall_s": med, "median_fit_s": fit,
               "ratio_auto_over_eager": round(med["auto"] / med["eager"], 3),
               "pairwise_ratios": [round(x, 3) for x in pairs],
               "auto_compiled": sorted({r["compile"] for r in runs if r["mode"] == "auto"}),
               "short_fit": {"batches": short["batches"], "compile": short["compile"], "why": short["why"]},
               "loadavg_end": os.getloadavg()}
    print(json.dumps(summary, indent=1))
    if args.out:
        args.out.write_text(json.dumps({"command": " ".join(sys.argv), "args": vars(args) | {"out": str(args.out)},
                                        "summary": summary, "runs": runs, "short": short}, indent=1))


if __name__ == "__main__":
    main()
