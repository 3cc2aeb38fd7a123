"""Steady training img/s on this CPU: fp32, bf16-mixed, channels_last, torch.compile (warm), alone
and combined, for one model; and the digits' accuracy after a fixed budget in fp32 and bf16-mixed.

    python benchmarks/scripts/precision_cpu.py --backbone resnet10t --size 128 --bs 32 --steps 6 --rounds 2
    python benchmarks/scripts/precision_cpu.py --backbone resnet18 --size 128 --bs 32 --steps 4 --rounds 2 --digits-steps 0
    python benchmarks/scripts/precision_cpu.py --digits-only --digits-seeds 3   # accuracy only, 3 seeds

One process, the configurations alternate (A B C D A B C D ...), 2 untimed steps each time a
configuration starts; reports each one's best round (img/s) and its ratio to fp32. bf16-mixed is
``torch.autocast("cpu", dtype=torch.bfloat16)`` around forward and loss, what Lightning Fabric's
"bf16-mixed" plugin does. "compile" is ``torch.compile(model)`` (Inductor, default mode), timed
warm: its compilation happens in the untimed steps of the first round (`compile_s` reports how
long that took). Prints the CPU's bf16 / AMX flags with the table.

Digits (`--digits-steps`, default 150): resnet10t at 32x32 on the built-in 8x8 digits (1437
training, 360 held-out images, the same split and batches for both), AdamW 1e-3, the same steps,
in fp32 and in bf16-mixed; reports held-out accuracy, so a speed-up can be weighed against it.
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
    p.add_argument("--no-compile", action="store_true", help="leave out the torch.compile configurations")
    p.add_argument("--digits-steps", type=int, default=150, help="0: no digits accuracy")
    p.add_argument("--digits-seeds", type=int, default=1, help="seeds 0..N-1 of the digits accuracy (split, init, batches)")
    p.add_argument("--digits-only", action="store_true", help="only the digits accuracy (no speed table)")
    args = p.parse_args()
    if args.digits_only:
        print(json.dumps({"flags": cpu_flags(), "args": vars(args), "digits_accuracy": digits_table(args)}))
        return
    g = torch.Generator().manual_seed(0)
    x = torch.randn(args.bs, 3, args.size, args.size, generator=g)
    y = torch.randint(0, 10, (args.bs,), generator=g)
    configs = {"fp32": (False, False, False), "bf16-mixed": (True, False, False), "channels_last": (False, True, False),
               "bf16-mixed + channels_last": (True, True, False)}
    if not args.no_compile:
        configs.update({"compile": (False, False, True), "compile + bf16-mixed": (True, False, True)})
    setups = {}
    for name, (_, cl, compiled) in configs.items():
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(0)
            model = timm.create_model(args.backbone, num_classes=10)
        if cl:
            model = model.to(memory_format=torch.channels_last)
        opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
        setups[name] = (torch.compile(model) if compiled else model, opt,
                        x.contiguous(memory_format=torch.channels_last) if cl else x)
    best = {name: 0.0 for name in configs}
    compile_s = {}
    for r in range(args.rounds):
        for name, (bf16, _, compiled) in configs.items():
            model, opt, xb = setups[name]
            t0 = time.perf_counter()
            ips = steady_ips(model, opt, xb, y, bf16, args.steps)
            if compiled and r == 0:  # the round's time less its timed steps: the compilation
                compile_s[name] = time.perf_counter() - t0 - args.steps * len(xb) / ips
            best[name] = max(best[name], ips)
    out = {"flags": cpu_flags(), "threads": torch.get_num_threads(), "args": vars(args),
           "img_per_s": best, "ratio_to_fp32": {k: v / best["fp32"] for k, v in best.items()}, "compile_s": compile_s}
    if args.digits_steps:
        out["digits_accuracy"] = digits_table(args)
    print(json.dumps(out))


def digits_table(args) -> dict:
    """{"fp32": [accuracy per seed], "bf16-mixed": [...]} over seeds 0..digits_seeds-1."""
    return {name: [digits_accuracy(bf16, args.digits_steps, seed=seed) for seed in range(args.digits_seeds)]
            for name, bf16 in (("fp32", False), ("bf16-mixed", True))}


def digits_accuracy(bf16: bool, steps: int, bs: int = 32, seed: int = 0) -> float:
    """Held-out accuracy of resnet10t (32x32, 1 channel) on the digits after `steps` AdamW steps."""
    import importlib.util
    from pathlib import Path

    import numpy as np

    origin = Path(importlib.util.find_spec("hotstart").origin).parent
    with np.load(origin / "datasets" / "data" / "digits.npz", allow_pickle=False) as npz:
        images, targets = npz["images"], npz["targets"]
    x = torch.from_numpy(images).float().div(16.0).unsqueeze(1)
    x = F.interpolate(x, size=(32, 32), mode="bilinear", align_corners=False).sub(0.5).div(0.25)
    y = torch.from_numpy(targets).long()
    g = torch.Generator().manual_seed(seed)
    order = torch.randperm(len(x), generator=g)
    valid, train = order[:360], order[360:]
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = timm.create_model("resnet10t", num_classes=10, in_chans=1)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    model.train()
    for step in range(steps):
        idx = train[torch.randint(len(train), (bs,), generator=g)]
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
            loss = F.cross_entropy(model(x[idx]), y[idx])
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    model.eval()
    with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
        pred = model(x[valid]).argmax(1)
    return float((pred == y[valid]).float().mean())


if __name__ == "__main__":
    main()
