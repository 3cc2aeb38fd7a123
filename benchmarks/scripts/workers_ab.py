"""Loader workers on a few cores: hotstart's default fit with one DataLoader worker against none,
alternating, whole fit to whole fit. The measurement behind learner/data.py's `FEW_CORES_SAMPLE_S`.

    cd benchmarks/scripts && PYTHONPATH=../.. python workers_ab.py --data digits --size 32 --epochs 5 --pairs 3
    cd benchmarks/scripts && PYTHONPATH=../.. python workers_ab.py --data jpegdigits --n 2500 --size 64 --epochs 3

Each run is a fresh process of ``hotstart_fit.py --defaults`` (the time-to-accuracy contender:
``tasklearner`` and ``fit_one_cycle`` with hotstart's own batch size, rate and precision) with
``--workers 1`` or ``--workers 0``; the two alternate pair by pair, so a change in the machine's
load hits both. Reported per run: the fit's seconds (its "ready" to "fit_end" milestones) and
what one training sample costs to load (`auto_num_workers`'s own probe, measured in the parent on
the same data). Prints one JSON object; ``--out`` writes it too (atomically). Run it with
nothing else running: the cores are shared between sessions.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def parse(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default="digits", choices=["digits", "jpegdigits", "folder"])
    ap.add_argument("--n", type=int, default=0, help="files for jpegdigits / folder (0: the digits)")
    ap.add_argument("--size", type=int, default=32)
    ap.add_argument("--epochs", type=int, default=5)
    ap.add_argument("--backbone", default="resnet10t")
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default=None)
    return ap.parse_args(argv)


def fit_seconds(args, workers: int) -> float:
    """One fresh process's fit time (s) with `workers` loader workers."""
    cmd = [sys.executable, str(HERE / "hotstart_fit.py"), f"--data={args.data}", f"--n={args.n}",
           f"--size={args.size}", f"--epochs={args.epochs}", f"--backbone={args.backbone}", "--bs=64",
           "--lr=0.001", "--classes=10", f"--seed={args.seed}", "--defaults", f"--workers={workers}"]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True, env=os.environ.copy()).stdout
    marks = {}
    for line in out.splitlines():
        if line.startswith("{") and '"milestone"' in line:
            record = json.loads(line)
            marks[record["milestone"]] = record["pc"]
    return marks["fit_end"] - marks["ready"]


def sample_cost(args) -> float:
    """Seconds to load one training sample, as `auto_num_workers` probes it (the median of 20)."""
    sys.argv = [sys.argv[0], f"--data={args.data}", f"--n={args.n}", f"--size={args.size}", "--classes=10"]
    sys.path.insert(0, str(HERE))
    import _data

    from hotstart import ImageClassificationSingle, tasklearner
    from hotstart.threads import one_intra_op_thread

    data, validdata, blocks = _data.hotstart_data(_data.parse_args())
    task = ImageClassificationSingle(blocks, size=(args.size, args.size), augment={"flip": 0.0})
    dataset = tasklearner(task, data, validdata=validdata, backbone=args.backbone, progress=False).train_loader.dataset
    times = []
    with one_intra_op_thread():
        dataset[0]
        for i in range(1, 21):
            t0 = time.perf_counter()
            dataset[i]
            times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main(argv=None):
    args = parse(argv)
    runs = {"1": [], "0": []}
    load_start = os.getloadavg()
    for _ in range(args.pairs):
        for workers in (1, 0):
            runs[str(workers)].append(round(fit_seconds(args, workers), 2))
            print(json.dumps({"workers": workers, "fit_s": runs[str(workers)][-1]}), flush=True)
    out = {"args": vars(args), "fit_s": runs, "median_ratio_none_to_one": round(
        statistics.median(runs["0"]) / statistics.median(runs["1"]), 3),
        "sample_ms": round(sample_cost(args) * 1e3, 3), "loadavg_start": load_start, "loadavg_end": os.getloadavg()}
    print(json.dumps(out))
    if args.out:
        from hotstart.atomic import atomic_write_bytes

        atomic_write_bytes(args.out, (json.dumps(out, indent=1) + "\n").encode())


if __name__ == "__main__":
    main()
