"""Where does channels_last pay? Training steps with contiguous against channels_last batches, by
image size, backbone and precision: the measurement behind learner/memory_format.py's rule
(`MIN_SIDE`), to re-run on quiet cores when the rule is to move.

    cd benchmarks/scripts && PYTHONPATH=../.. python channels_last_sizes.py \\
        --backbones resnet10t,resnet18,smallcnn --sizes 32,48,64,96,128,160 --bs 32 --steps 4 --rounds 3 \\
        --out ../results/channels-last-sizes.json

Each step is what the learner runs: the model (timm's, or hotstart's small CNN for "smallcnn") with
its weights left contiguous, the batch converted to channels_last as it reaches the model
(`to_channels_last`), forward and loss (under bf16 autocast through `MixedPrecisionModule` for
"bf16-mixed"), backward, AdamW. Per (backbone, size, precision) both layouts run in one process,
alternating round by round, after a warm-up step each; a round times `--steps` steps. Reported:
each layout's best img/s over the rounds (best, not mean: other work only slows a round down) and
the ratio channels_last / contiguous. Timing: run it on quiet cores (``uptime`` says the load), never
beside other work. Prints one JSON object; ``--out`` writes it too (atomically).
"""
from __future__ import annotations

import argparse
import json
import time


def parse(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backbones", default="resnet10t,resnet18,smallcnn")
    ap.add_argument("--sizes", default="32,48,64,96,128,160")
    ap.add_argument("--precisions", default="32-true,bf16-mixed")
    ap.add_argument("--channels", type=int, default=3)
    ap.add_argument("--bs", type=int, default=32)
    ap.add_argument("--steps", type=int, default=4, help="timed steps per round")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, default=None, help="torch intra-op threads (default: torch's)")
    ap.add_argument("--out", default=None)
    return ap.parse_args(argv)


def make_model(backbone: str, channels: int, size: int):
    import timm

    if backbone == "smallcnn":
        import torch.nn as nn

        from hotstart.models.small_cnn import SmallCNN

        body = SmallCNN(channels, (size, size))
        return nn.Sequential(body, nn.Linear(body.num_features, 10))
    return timm.create_model(backbone, num_classes=10, in_chans=channels)


def steps_per_second(step, n: int) -> float:
    t0 = time.perf_counter()
    for _ in range(n):
        step()
    return n / (time.perf_counter() - t0)


def measure(backbone: str, size: int, precision: str, args) -> dict:
    import torch

    from hotstart.learner.memory_format import to_channels_last
    from hotstart.learner.mixed_precision import MixedPrecisionModule

    torch.manual_seed(0)
    model = make_model(backbone, args.channels, size)
    run = MixedPrecisionModule(model) if precision == "bf16-mixed" else model
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    x, y = torch.randn(args.bs, args.channels, size, size), torch.randint(0, 10, (args.bs,))
    inputs = {"contiguous": x, "channels_last": to_channels_last(x)}

    def step_with(layout):
        def step():
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=precision == "bf16-mixed"):
                loss = torch.nn.functional.cross_entropy(run(inputs[layout]), y)
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
        return step

    best = {}
    for layout in inputs:
        step_with(layout)()  # warm-up: allocator, oneDNN primitive caches
    for r in range(args.rounds):
        order = list(inputs) if r % 2 == 0 else list(inputs)[::-1]
        for layout in order:
            ips = steps_per_second(step_with(layout), args.steps) * args.bs
            best[layout] = max(best.get(layout, 0.0), ips)
    return {"backbone": backbone, "size": size, "precision": precision,
            "img_s": {k: round(v, 2) for k, v in best.items()},
            "channels_last_ratio": round(best["channels_last"] / best["contiguous"], 3)}


def main(argv=None):
    args = parse(argv)
    import os

    import torch

    from hotstart.learner.memory_format import MIN_SIDE
    from hotstart.learner.precision import BF16_CPU_FLAGS, cpu_flags

    if args.threads:
        torch.set_num_threads(args.threads)
    rows = [measure(b, int(s), p, args) for b in args.backbones.split(",") for s in args.sizes.split(",")
            for p in args.precisions.split(",")]
    for r in rows:
        print(json.dumps(r), flush=True)
    report = {"what": "training img/s, contiguous against channels_last batches (benchmarks/scripts/channels_last_sizes.py)",
              "args": vars(args), "threads": torch.get_num_threads(), "torch": torch.__version__,
              "cpu_bf16_flags": sorted(cpu_flags() & set(BF16_CPU_FLAGS)), "load_average": os.getloadavg(),
              "rule_min_side_now": MIN_SIDE, "rows": rows, "when": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
    print(json.dumps({"load_average_end": os.getloadavg()}))
    if args.out:
        from pathlib import Path

        from hotstart.atomic import atomic_write_bytes

        atomic_write_bytes(Path(args.out), (json.dumps(report, indent=1) + "\n").encode())


if __name__ == "__main__":
    main()
