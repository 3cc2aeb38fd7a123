"""1 process against 2 processes (DDP through Lightning Fabric, gloo on CPU) on the digits job.

    python -m benchmarks.ddp                       # small CNN, 16x16, global batch 64, 3 epochs
    python -m benchmarks.ddp --model mlp --size 8  # the test suite's job

Each configuration runs tests/scripts/ddp_digits.py as a fresh process (``--devices 2``: Fabric
re-launches it for the second rank). Reported, from rank 0's milestones (seconds since its
process started): ``1st epoch end``; ``img/s``: training images of epochs 2..n (both ranks'
shards) plus the validation set, over those epochs' time; ``peak RSS``: the sum over the ranks of
each one's ``ru_maxrss``; ``wall``: the launcher's wall clock, start-up and launch included.
Writes benchmarks/results/ddp.json.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SCRIPT = HERE.parent / "tests" / "scripts" / "ddp_digits.py"


def run(devices: int, args) -> dict:
    out = tempfile.mkdtemp(prefix=f"hotstart-ddp{devices}-")
    env = {**os.environ, "PYTHONPATH": str(HERE.parent), "OMP_NUM_THREADS": str(args.threads)}
    cmd = [sys.executable, str(SCRIPT), out, "--devices", str(devices), "--epochs", str(args.epochs),
           "--batch-size", str(args.batch // devices), "--model", args.model, "--size", str(args.size),
           "--no-progress"]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=3600)
    wall = time.perf_counter() - t0
    if proc.returncode:
        raise RuntimeError(proc.stdout[-2000:] + proc.stderr[-2000:])
    ranks = sorted((json.loads(line[7:]) for line in proc.stdout.splitlines() if line.startswith("RESULT ")),
                   key=lambda r: r["rank"])
    r0 = ranks[0]
    ends = r0["epoch_ends"]
    per_epoch_imgs = r0["iters_per_epoch"] * r0["batch_size"] * devices + r0["n_valid"]
    steady = (len(ends) - 1) * per_epoch_imgs / (ends[-1] - ends[0]) if len(ends) > 1 else None
    return {"devices": devices, "wall": wall, "imported": r0["imported"], "ready": r0["ready"],
            "first_epoch_end": ends[0], "first_epoch": ends[0] - r0["ready"], "steady_ips": steady,
            "peak_rss_mib_sum": sum(r["maxrss_mib"] for r in ranks), "accuracy": r0["history"][-1]["accuracy"],
            "valid_loss": r0["history"][-1]["valid_loss"]}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", choices=["mlp", "smallcnn"], default="smallcnn")
    p.add_argument("--size", type=int, default=16)
    p.add_argument("--batch", type=int, default=64, help="global batch size")
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--threads", type=int, default=1, help="OMP threads per process")
    p.add_argument("--out", default=str(HERE / "results" / "ddp.json"))
    args = p.parse_args(argv)
    rows = [run(d, args) for d in (1, 2)]
    print(f"digits, {args.model} {args.size}x{args.size}, global batch {args.batch}, {args.epochs} epochs, "
          f"{args.threads} thread(s) per process, {os.cpu_count()} CPUs")
    print(f"{'processes':>9} {'wall':>7} {'ready':>7} {'1st epoch end':>13} {'img/s':>8} {'peak RSS':>9} {'accuracy':>8}")
    for r in rows:
        print(f"{r['devices']:>9} {r['wall']:>6.1f}s {r['ready']:>6.1f}s {r['first_epoch_end']:>12.1f}s "
              f"{r['steady_ips']:>8.0f} {r['peak_rss_mib_sum']:>6.0f}MiB {r['accuracy']:>8.4f}")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps({"config": vars(args), "rows": rows}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
