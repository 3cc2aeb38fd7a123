"""Steady training img/s on this CPU: fp32, bf16-mixed, channels_last, and both, for one model.

    python benchmarks/scripts/precision_cpu.py --backbone resnet10t --size 128 --bs 32 --steps 6 --rounds 2

One process, the configurations alternate (A B C D A B C D ...), 2 untimed steps each time a
configuration starts; reports each one's best round (img/s) and its ratio to fp32. bf16-mixed is
``torch.autocast("cpu", dtype=torch.bfloat16)`` around forward and loss, what Lightning Fabric's
"bf16-mixed" plugin does. Prints the CPU's bf16 / AMX flags with the table.
"""
import argparse
import json
import time

import timm
import torch
import torch.nn.functional as F


def cpu_flags():
    try:
        text = open("/proc/cpuinfo").read()
    except OSError:
        return []
    return sorted({f for f in text.split() if f.startswith("amx") or f in ("avx512_bf16", "avx512_vnni")})


def steady_ips(model, opt, x, y, bf16: bool, steps: int) -> float:
    model.train()

    def step():
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
            loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    for _ in range(2):
        step()
    t0 = time.perf_counter()
    for _ in range(steps):
        step()
    return steps * len(x) / (time.perf_counter() - t0)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--backbone", default="resnet10t")
    p.add_argument("--size", type=int, default=128)
    p.add_argument("--bs", type=int, default=32)
    p.add_argument("--steps", type=int, default=6)
    p.add_argument("--rounds", type=int, default=2)
    args = p.parse_args()
    g = torch.Generator().manual_seed(0)
    x = torch.randn(args.bs, 3, args.size, args.size, generator=g)
    y = torch.randint(0, 10, (args.bs,), generator=g)
    configs = {"fp32": (False, False), "bf16-mixed": (True, False), "channels_last": (False, True),
               "bf16-mixed + channels_last": (True, True)}
    setups = {}
    for name, (_, cl) in configs.items():
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(0)
            model = timm.create_model(args.backbone, num_classes=10)
        if cl:
            model = model.to(memory_format=torch.channels_last)
        opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
        setups[name] = (model, opt, x.contiguous(memory_format=torch.channels_last) if cl else x)
    best = {name: 0.0 for name in configs}
    for _ in range(args.rounds):
        for name, (bf16, _) in configs.items():
            model, opt, xb = setups[name]
            best[name] = max(best[name], steady_ips(model, opt, xb, y, bf16, args.steps))
    print(json.dumps({"flags": cpu_flags(), "threads": torch.get_num_threads(), "args": vars(args),
                      "img_per_s": best, "ratio_to_fp32": {k: v / best["fp32"] for k, v in best.items()}}))


if __name__ == "__main__":
    main()
