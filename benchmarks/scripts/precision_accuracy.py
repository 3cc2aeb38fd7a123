"""Does bf16 mixed precision keep the accuracy? fp32 against bf16-mixed, 5 seeds, on both tasks of
the time-to-accuracy benchmark (benchmarks/tta.py `TASKS`: the digits at 32x32 and the jpegdigits
folder at 64x64, each with its model, batch size, learning rate and epoch budget).

Accuracy, not time: the numbers do not depend on the machine's load, so this runs on busy cores.
It is the measurement behind hotstart's default precision (learner/precision.py): bf16-mixed is
the default on hardware with bf16 units only if, on both tasks, bf16's mean final accuracy lies
within fp32's spread over the seeds (at or above the lowest fp32 seed).

    cd benchmarks/scripts && PYTHONPATH=../.. python precision_accuracy.py --seeds 5 \\
        --out ../results/precision-accuracy.json

On a CPU without bf16 units torch falls back to slow reference kernels for bf16 convolutions
(35-40x the time of fp32 on this machine's AVX2 cores, 2026-12-03: 13-15 s of CPU a step of
resnet10t at 32x32, batch 64, against 0.34-0.39 s), which makes 20 fits take days. There,
``--emulate-bf16`` computes every convolution and linear layer that autocast runs in bf16 as the
bf16 kernels do, faster: the operands rounded to bf16, products summed in float32 (a product of two
bf16 numbers is exact in float32), the result rounded to bf16; the gradients are rounded at the same
places (`EmulatedBF16`). Everything else (the casts, batch norm, activations and sums on bf16
tensors, the loss) runs as in bf16-mixed itself. The summation order differs from a bf16 kernel's,
as it differs between CPUs; ``--check-emulation`` measures how far the emulation's logits and
gradients are from the real bf16 kernels' on a small batch, against how far fp32's are, and the
report keeps those numbers.

Each run is ``tasklearner(task, data, backbone=..., batch_size=..., seed=s, precision=P)`` and
``fit_one_cycle(epochs, lr)``, as the benchmark's hotstart contender builds it (scripts/hotstart_fit.py:
the digits' fixed validation split, the folder's own valid/ files), with the precision the one
thing that differs: ``"32-true"`` and ``"bf16-mixed"``, alternating per seed. Everything else
(memory layout, compile, data cache) is set explicitly, the same for both, so that only the precision
differs: contiguous tensors, eager, files decoded every epoch.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

PRECISIONS = ("32-true", "bf16-mixed")


class EmulatedBF16:
    """A torch function mode (built by `emulation_mode`) that runs ``F.conv2d`` and ``F.linear``
    under bf16 autocast as float32 computations on bf16-rounded operands, rounded to bf16 (the
    module docstring says why that is the bf16 kernels' arithmetic)."""


def emulation_mode():
    import torch
    import torch.nn.functional as F
    from torch.overrides import TorchFunctionMode

    def rounded(t):
        return None if t is None else t.to(torch.bfloat16).float()

    class Mode(TorchFunctionMode, EmulatedBF16):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            kwargs = dict(kwargs or {})
            if func in (F.conv2d, F.linear) and torch.is_autocast_enabled("cpu") \
                    and torch.get_autocast_dtype("cpu") == torch.bfloat16:
                x, w, *rest = args
                if rest:
                    rest[0] = rounded(rest[0])
                elif "bias" in kwargs:
                    kwargs["bias"] = rounded(kwargs["bias"])
                with torch.autocast("cpu", enabled=False):
                    return func(rounded(x), rounded(w), *rest, **kwargs).to(torch.bfloat16)
            return func(*args, **kwargs)

    return Mode()


def check_emulation(seed: int = 0) -> dict:
    """One step of resnet10t (32x32, 1 channel, batch 4) in bf16-mixed with torch's bf16 kernels,
    with the emulation, and in fp32: how far the emulation's and fp32's logits and gradients are
    from the real bf16 ones (the norm of the difference over the norm of the real bf16 values, all
    gradients together). The emulation should be much nearer than fp32."""
    import timm
    import torch

    from hotstart.learner.mixed_precision import MixedPrecisionModule

    torch.manual_seed(seed)
    model = timm.create_model("resnet10t", num_classes=10, in_chans=1)
    x, y = torch.randn(4, 1, 32, 32), torch.tensor([0, 1, 2, 3])

    def step(mixed: bool, emulate: bool):
        model.zero_grad(set_to_none=True)
        run = MixedPrecisionModule(model) if mixed else model
        with (emulation_mode() if emulate else torch.autocast("cpu", enabled=False)):
            out = run(x)
        torch.nn.functional.cross_entropy(out, y).backward()
        return out.detach().float(), torch.cat([p.grad.flatten() for p in model.parameters()])

    real, emulated, fp32 = step(True, False), step(True, True), step(False, False)

    def rel(a, b):
        return round(float((a - b).norm() / b.norm()), 4)

    return {what: {"emulated": rel(emulated[k], real[k]), "fp32": rel(fp32[k], real[k])}
            for k, what in enumerate(("logits_rel_l2", "grads_rel_l2"))}


def parse(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--tasks", default="digits,jpegdigits", help="comma-separated names of benchmarks/tta.py TASKS")
    ap.add_argument("--smoke", action="store_true", help="the benchmark's tiny smoke tasks (SMOKE_TASKS): numbers mean nothing")
    ap.add_argument("--out", default=None, help="JSON file to write (atomically); else stdout only")
    ap.add_argument("--emulate-bf16", action="store_true",
                    help="bf16's arithmetic in float32 kernels (a CPU without bf16 units: the module docstring)")
    ap.add_argument("--check-emulation", action="store_true", help="measure the emulation against real bf16 first")
    ap.add_argument("--threads", type=int, default=None, help="torch intra-op threads (default: torch's)")
    ap.add_argument("--bs", type=int, default=None,
                    help="batch size for every task (default: each task's, 64); 32 is hotstart's default since "
                         "2026-12-07 for splits this small (tasks/image_base.py)")
    ap.add_argument("--defaults", action="store_true",
                    help="hotstart's own batch size, peak rate and warm-up (tasklearner's batch_size=None, "
                         "fit_one_cycle(epochs)) instead of the task's bs and lr; --bs then is ignored")
    return ap.parse_args(argv)


def build(workload: dict, seed: int, precision: str, defaults: bool = False):
    """The learner of one run (the benchmark's hotstart contender, precision given; `defaults`:
    the task's own batch size)."""
    import _data
    from hotstart import ImageClassificationSingle, tasklearner

    args = _data.parse_args([f"--{k}={v}" for k, v in workload.items()])
    size = (args.size, args.size)
    if args.data not in ("digits", "jpegdigits"):
        raise SystemExit(f"task data {args.data!r}: only digits and jpegdigits are compared here")
    data, validdata, blocks = _data.hotstart_data(args)
    task = ImageClassificationSingle(blocks, size=size, augment={"flip": 0.0})  # digits: no mirror images
    learner = tasklearner(task, data, validdata=validdata, backbone=args.backbone, batch_size=None if defaults else args.bs, seed=seed,
                          progress=False, precision=precision, compile=False, channels_last=False, cache=False)
    return learner, args


def run(name: str, spec: dict, seed: int, precision: str, emulate: bool = False, defaults: bool = False) -> dict:
    import contextlib

    learner, args = build(spec["workload"], seed, precision, defaults)
    t0 = time.perf_counter()
    with emulation_mode() if emulate and precision == "bf16-mixed" else contextlib.nullcontext():
        if defaults:
            learner.fit_one_cycle(args.epochs)
        else:
            learner.fit_one_cycle(args.epochs, args.lr)
    accs = [round(float(h["accuracy"]), 4) for h in learner.history]
    return {"task": name, "seed": seed, "precision": learner.backend.precision, "accuracies": accs,
            "final_accuracy": accs[-1], "fit_s": round(time.perf_counter() - t0, 1),
            "batch_size": learner.train_loader.batch_size, "peak_lr": max(learner.recorder.lrs)}


def verdict(runs: list[dict]) -> dict:
    """Per task: each precision's final accuracies, their mean and range, and whether bf16's mean
    is within fp32's spread (not below fp32's lowest seed)."""
    out = {}
    for task in dict.fromkeys(r["task"] for r in runs):
        finals = {p: [r["final_accuracy"] for r in runs if r["task"] == task and r["precision"] == p] for p in PRECISIONS}
        stats = {p: {"final": v, "mean": round(statistics.mean(v), 4), "min": min(v), "max": max(v)}
                 for p, v in finals.items() if v}
        if len(stats) == 2:
            stats["bf16_mean_within_fp32_spread"] = stats["bf16-mixed"]["mean"] >= stats["32-true"]["min"]
        out[task] = stats
    return out


def main(argv=None):
    args = parse(argv)
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository: benchmarks.tta
    from benchmarks.tta import SMOKE_TASKS, TASKS
    from hotstart.learner.precision import cpu_flags

    tasks = SMOKE_TASKS if args.smoke else TASKS
    names = [t for t in args.tasks.split(",") if t]
    unknown = [t for t in names if t not in tasks]
    if unknown:
        raise SystemExit(f"unknown task(s) {unknown}; known: {sorted(tasks)}")
    import torch

    if args.threads:
        torch.set_num_threads(args.threads)
    emulation = check_emulation() if args.check_emulation else None
    if emulation is not None:
        print(json.dumps({"emulation_check": emulation}), flush=True)
    runs = []
    if args.bs is not None:
        tasks = {n: {**t, "workload": {**t["workload"], "bs": args.bs}} for n, t in tasks.items()}
    for name in names:
        for seed in range(args.seeds):
            order = PRECISIONS if seed % 2 == 0 else PRECISIONS[::-1]
            for precision in order:
                runs.append(run(name, tasks[name], seed, precision, args.emulate_bf16, args.defaults))
                print(json.dumps(runs[-1]), flush=True)
    report = {"what": "final validation accuracy, fp32 against bf16-mixed (benchmarks/scripts/precision_accuracy.py)",
              "command": "python precision_accuracy.py " + " ".join(argv if argv is not None else sys.argv[1:]),
              "torch": torch.__version__, "cpu_bf16_flags": sorted(f for f in cpu_flags() if "bf16" in f or "amx" in f),
              "bf16": "emulated (--emulate-bf16)" if args.emulate_bf16 else "torch's bf16 kernels",
              "emulation_check": emulation, "threads": torch.get_num_threads(),
              "tasks": {n: tasks[n] for n in names}, "runs": runs, "summary": verdict(runs),
              "when": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
    print(json.dumps(report["summary"], indent=2))
    if args.out:
        from hotstart.atomic import atomic_write_bytes

        atomic_write_bytes(Path(args.out), (json.dumps(report, indent=1) + "\n").encode())


if __name__ == "__main__":
    main()
