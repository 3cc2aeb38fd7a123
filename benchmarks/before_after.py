"""Two checkouts of hotstart against each other (and the plain loop), alternating, one workload.

    python -m benchmarks.before_after --before /path/to/main --after . --runs 5 \\
        --out benchmarks/results/before-after.json -- --data=digits --n=480 --size=32 --epochs=3 \\
        --bs=32 --backbone=resnet10t

Each round runs the plain loop (from `--before`), hotstart from `--before`, hotstart from
`--after`, each a fresh process with ``PYTHONPATH`` set to its checkout, and notes the milestones
of benchmarks/scripts/_milestones.py as seconds from process start: ``ready`` (model and loaders
built), ``first_epoch`` (end of epoch 1), ``fit_end``, and the steady img/s of epochs 2..n, with
the load average at each start. `benchmarks.run` compares contenders of one checkout; this
compares two checkouts, which is what a change to the loop needs.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time


def run_once(root: str, script: str, workload: list[str]) -> dict:
    env = {**os.environ, "PYTHONPATH": root}
    load = open("/proc/loadavg").read().split()[:3] if os.path.exists("/proc/loadavg") else None
    t0 = time.time()
    p = subprocess.run([sys.executable, os.path.join(root, "benchmarks", "scripts", script), *workload], cwd=root,
                       env=env, capture_output=True, text=True)
    ms, images = {}, 0
    for line in p.stdout.splitlines():
        try:
            d = json.loads(line)
        except ValueError:
            continue
        if "milestone" in d:
            ms.setdefault(d["milestone"], d["t"] - t0)
            if d["milestone"] == "epoch_end":
                ms["last_epoch_end"] = d["t"] - t0
                images += d["images"] if d["epoch"] > 1 else 0
    steady = ms.get("last_epoch_end", 0) - ms.get("first_epoch_end", 0)
    row = {"rc": p.returncode, "load": load, "ready": ms.get("ready"), "first_epoch": ms.get("first_epoch_end"),
           "fit_end": ms.get("fit_end"), "img_s": images / steady if images and steady > 0 else None}
    if p.returncode:
        row["stderr"] = p.stderr[-1000:]
    return row


def summary(rows: list[dict]) -> dict:
    """Medians per contender, and run-by-run ratios of `after` to `before` (the same round's load)."""
    out = {}
    for who in ("plain", "before", "after"):
        mine = [r for r in rows if r["who"] == who and r["rc"] == 0]
        out[who] = {k: statistics.median(r[k] for r in mine) if mine else None
                    for k in ("ready", "first_epoch", "fit_end", "img_s")}
        out[who]["n"] = len(mine)
    pairs = [(b, a) for b in rows for a in rows
             if b["who"] == "before" and a["who"] == "after" and a["round"] == b["round"] and a["rc"] == b["rc"] == 0]
    out["after/before run-by-run"] = {
        "first_epoch": statistics.median(a["first_epoch"] / b["first_epoch"] for b, a in pairs) if pairs else None,
        "img_s": statistics.median(a["img_s"] / b["img_s"] for b, a in pairs) if pairs else None}
    return out


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--before", required=True, help="checkout of the reference (also runs the plain loop)")
    p.add_argument("--after", required=True, help="checkout with the change")
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--out", default=None, help="JSON written after every run")
    p.add_argument("workload", nargs="*", help="arguments of benchmarks/scripts/*_fit.py (after --)")
    args = p.parse_args(argv)
    contenders = [("plain", args.before, "plain_fit.py"), ("before", args.before, "hotstart_fit.py"),
                  ("after", args.after, "hotstart_fit.py")]
    rows = []
    for r in range(args.runs):
        for who, root, script in contenders:
            row = {"round": r, "who": who, **run_once(os.path.abspath(root), script, args.workload)}
            rows.append(row)
            print(json.dumps(row), flush=True)
            if args.out:
                with open(args.out, "w") as f:
                    json.dump({"workload": args.workload, "rows": rows, "summary": summary(rows)}, f, indent=1)
    print(json.dumps(summary(rows), indent=1))


if __name__ == "__main__":
    main()
