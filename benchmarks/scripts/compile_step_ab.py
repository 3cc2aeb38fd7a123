"""One training step of a timm backbone, eager against torch.compile (dynamic and static batch), on CPU.

    python benchmarks/scripts/compile_step_ab.py --size 128 --chans 3                  # resnet10t, batch 32
    python benchmarks/scripts/compile_step_ab.py --size 32 --chans 1 --steps 40       # the digits' input
    python benchmarks/scripts/compile_step_ab.py --rounds 1 --steps 4 --size 32       # a smoke run

Why: ``compile="auto"`` compiles a warm configuration only where the warmup measured compiled steps
faster than eager ones (hotstart/compile_cache/policy.py), and on the 2-core CPUs here that reading
moved between 0.96x and 1.09x from one hour to the next. This isolates the step from everything
else a fit does (data, callbacks, validation): the same model, batch and optimizer as a default
fit (bf16 autocast where asked, channels_last from 48 px as learner/memory_format.py chooses,
fused AdamW), timed as

- ``eager``;
- ``dynamic``: the backbone compiled as hotstart compiles it (compile_cache/compile.py: the batch
  dimension marked dynamic, ``backed_size_oblivious``);
- ``static``: compiled with ``dynamic=False`` (one graph for this batch size).

Each variant runs in a fresh process of its own, alternating in each round, with its own Inductor
cache (a temporary folder): the first round compiles cold (its ``first_s``), later rounds load
the warm graphs. A step's time is its median over `--steps` steps after 3 untimed ones. The
summary is each variant's median over the rounds after the first and its ratio to eager (above 1:
faster than eager). Run it with nothing else running: the cores are shared between sessions.
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

VARIANTS = ("eager", "dynamic", "static")
UNTIMED = 3

CHILD = r"""
import contextlib, json, statistics, sys, time
args = json.loads(sys.argv[1])
import torch, timm
import torch.fx.experimental._config as shape_config

g = torch.Generator().manual_seed(0)
body = timm.create_model(args["backbone"], pretrained=False, num_classes=0, in_chans=args["chans"])
head = torch.nn.Linear(body.num_features, 10)
channels_last = args["size"] >= 48
if channels_last:
    body = body.to(memory_format=torch.channels_last)
opt = torch.optim.AdamW(list(body.parameters()) + list(head.parameters()), lr=1e-3, fused=True)
x = torch.randn(args["bs"], args["chans"], args["size"], args["size"], generator=g)
if channels_last:
    x = x.contiguous(memory_format=torch.channels_last)
y = torch.randint(0, 10, (args["bs"],), generator=g)
variant, context = args["variant"], contextlib.nullcontext()
if variant == "dynamic":
    body.compile()
    context = shape_config.patch(backed_size_oblivious=True)
elif variant == "static":
    body.compile(dynamic=False)


def step():
    if variant == "dynamic":
        torch._dynamo.maybe_mark_dynamic(x, 0)
    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=args["bf16"]):
        loss = torch.nn.functional.cross_entropy(head(body(x)).float(), y)
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)


times = []
with context:
    for _ in range(args["untimed"] + args["steps"]):
        t = time.perf_counter()
        step()
        times.append(time.perf_counter() - t)
timed = times[args["untimed"]:]
print(json.dumps({"first_s": times[0], "median_s": statistics.median(timed), "min_s": min(timed),
                  "threads": torch.get_num_threads()}))
"""


def run_child(spec: dict, cache: Path) -> dict:
    env = dict(os.environ, TORCHINDUCTOR_CACHE_DIR=str(cache))
    out = subprocess.run([sys.executable, "-c", CHILD, json.dumps(spec)], env=env, capture_output=True,
                         text=True, check=False)
    if out.returncode != 0:
        raise SystemExit(f"{spec['variant']} failed (exit {out.returncode}):\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--backbone", default="resnet10t")
    p.add_argument("--size", type=int, default=128)
    p.add_argument("--chans", type=int, default=3)
    p.add_argument("--bs", type=int, default=32)
    p.add_argument("--fp32", action="store_true", help="no bf16 autocast")
    p.add_argument("--rounds", type=int, default=4, help="the first compiles cold and is left out of the summary")
    p.add_argument("--steps", type=int, default=20, help="timed steps a process")
    p.add_argument("--out", type=Path, default=None)
    args = p.parse_args(argv)
    load_start, t_all = os.getloadavg(), time.perf_counter()
    runs = []
    with tempfile.TemporaryDirectory(prefix="compile-step-ab-") as tmp:
        for r in range(args.rounds):
            for variant in VARIANTS:
                spec = {"backbone": args.backbone, "size": args.size, "chans": args.chans, "bs": args.bs,
                        "bf16": not args.fp32, "variant": variant, "steps": args.steps, "untimed": UNTIMED}
                result = {"round": r, "variant": variant, **run_child(spec, Path(tmp) / variant)}
                print(json.dumps(result), flush=True)
                runs.append(result)
    warm = [r for r in runs if r["round"] > 0] or runs
    medians = {v: statistics.median(r["median_s"] for r in warm if r["variant"] == v) for v in VARIANTS}
    summary = {v: {"median_step_s": round(medians[v], 5), "speed_vs_eager": round(medians["eager"] / medians[v], 3)}
               for v in VARIANTS}
    result = {"config": {k: v for k, v in vars(args).items() if k != "out"}, "summary": summary, "runs": runs,
              "loadavg_start": list(load_start), "loadavg_end": list(os.getloadavg()),
              "wall_s": round(time.perf_counter() - t_all, 1), "cpus": os.cpu_count()}
    print(json.dumps(summary))
    if args.out is not None:
        sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
        from hotstart.atomic import atomic_write_bytes

        atomic_write_bytes(args.out, (json.dumps(result, indent=1) + "\n").encode())


if __name__ == "__main__":
    main()
