"""Check hotstart on one CUDA GPU in under 5 minutes: one line per check, exit 1 if any fails.

    python scripts/gpu_check.py                 # every check, on CUDA
    python scripts/gpu_check.py --dry-run       # list the checks, run nothing
    python scripts/gpu_check.py --device cpu    # the checks that also run on a CPU
    python scripts/gpu_check.py --only eager,onnx-export

Each check trains through hotstart's public API (tasklearner, fit, export, the warmup command)
on tiny models and data; nothing in hotstart is replaced or patched. A check prints
``PASS name: numbers``, ``FAIL name: why`` or ``SKIP name: why`` (a CUDA-only check on
``--device cpu``). The ones that time things (compile cache, throughput) print their numbers so
that a run on a GPU can be copied into benchmarks/README.md; their pass thresholds are loose on
purpose (a shared machine is noisy) and say what they guard against.

The compile-cache check runs its fits in child processes (this script with ``--child``), so
that a cold compile is really cold: Inductor keeps compiled graphs in memory within a process.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
import traceback
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parent.parent
WARMUP_WORKLOAD = "single-resnet18-128-{device}"  # hotstart/warmup/workloads.py: resnet18, 128x128, batch 16


@dataclass(frozen=True)
class Check:
    name: str
    what: str
    run: Callable[["Context"], str]   # returns the numbers to print; raises on failure
    on_cpu: bool                      # also runs with --device cpu


@dataclass
class Context:
    device: str
    workdir: Path
    seconds: float = 0.0

    @property
    def cuda(self) -> bool:
        return self.device == "cuda"


class CheckFailed(AssertionError):
    pass


def require(condition, message: str) -> None:
    if not condition:
        raise CheckFailed(message)


# --- shared pieces -------------------------------------------------------------------------------
def digits(n: int = 240):
    """(Data, blocks): the first n of hotstart's built-in 8x8 digits."""
    from hotstart import datasets

    data, blocks = datasets.load("digits")
    return data.subset(list(range(n))), blocks


def digits_learner(ctx: Context, n: int = 240, **kwargs):
    """hotstart's small CNN on digits at 8x8, batch 16 (fast everywhere, learns in 3 epochs)."""
    from hotstart import ImageClassificationSingle, tasklearner

    data, blocks = digits(n)
    task = ImageClassificationSingle(blocks, size=(8, 8), augment={"flip": 0.0})
    kwargs.setdefault("batch_size", 16)
    return tasklearner(task, data, seed=0, progress=False, device=ctx.device, **kwargs)


def finite_weights(learner) -> bool:
    import torch

    return all(bool(torch.isfinite(t).all()) for t in learner.task_model().state_dict().values()
               if t.is_floating_point())


def synchronize(ctx: Context) -> None:
    if ctx.cuda:
        import torch

        torch.cuda.synchronize()


# --- the checks ----------------------------------------------------------------------------------
def check_eager(ctx: Context) -> str:
    learner = digits_learner(ctx)
    require(learner.device.type == ctx.device, f"the learner runs on {learner.device}, not {ctx.device}")
    learner.fit_one_cycle(3, 1e-2)
    acc = learner.history[-1]["accuracy"]
    require(acc > 0.6, f"accuracy {acc:.3f} after 3 epochs (10 classes: expected > 0.6)")
    on = {p.device.type for p in learner.task_model().parameters()}
    require(on == {ctx.device}, f"parameters on {on}")
    return f"accuracy {acc:.3f} after 3 epochs on {learner.device}"


def check_fp16_guard(ctx: Context) -> str:
    """16-mixed: the GradScaler skips the step of a batch whose gradients overflow fp16 (its loss
    is multiplied by 1e30 after the forward pass: finite in fp32, infinite in fp16's backward),
    halves its scale, leaves the weights as they were, and the NonFiniteGuard lets training go on."""
    import torch

    from hotstart.learner.callbacks import Callback, NonFiniteGuard

    learner = digits_learner(ctx, precision="16-mixed" if ctx.cuda else None)
    if not ctx.cuda:  # Fabric gives CPU 16-mixed no scaler: pass one, as a user would (Fabric's plugin API)
        from lightning_fabric import Fabric
        from lightning_fabric.plugins.precision import MixedPrecision

        from hotstart.learner.backend import FabricBackend

        learner.backend = backend = FabricBackend(accelerator="cpu")
        backend.fabric = Fabric(accelerator="cpu", plugins=[
            MixedPrecision("16-mixed", "cpu", scaler=torch.amp.GradScaler("cpu"))])
    scaler = learner.backend.grad_scaler
    require(scaler is not None and scaler.is_enabled(), "16-mixed has no enabled GradScaler")
    bad_batch = 3

    class Overflow(Callback):
        def __init__(self):
            self.before = self.after = self.scales = None

        def after_loss(self):
            if self.learner.fit_state.train_iter == bad_batch:
                self.learner.loss = self.learner.loss * 1e30
                self.before = {k: v.detach().clone() for k, v in self.learner.task_model().state_dict().items()}
                self.scales = [scaler.get_scale()]

        def after_step(self):
            if self.learner.fit_state.train_iter == bad_batch:
                self.after = {k: v.detach().clone() for k, v in self.learner.task_model().state_dict().items()}
                self.scales.append(scaler.get_scale())

    overflow = Overflow()
    learner.fit_one_cycle(3, 1e-2, callbacks=[overflow, NonFiniteGuard(check_every=1)])
    require(overflow.after is not None, "the crafted batch never reached the optimizer step")
    changed = [k for k, v in overflow.before.items() if v.is_floating_point() and "running" not in k
               and "num_batches" not in k and not torch.equal(v, overflow.after[k])]
    require(not changed, f"the overflowing batch changed weights: {changed[:3]}")
    require(overflow.scales[1] < overflow.scales[0], f"the scale did not drop: {overflow.scales}")
    require(len(learner.history) == 3 and finite_weights(learner), "the fit did not finish with finite weights")
    acc = learner.history[-1]["accuracy"]
    require(acc > 0.6, f"accuracy {acc:.3f} after 3 epochs")
    return f"batch {bad_batch} skipped (scale {overflow.scales[0]:g} -> {overflow.scales[1]:g}), accuracy {acc:.3f}"


def check_bf16(ctx: Context) -> str:
    import torch

    learner = digits_learner(ctx, precision="bf16-mixed")
    seen = set()  # dtypes of the convolutions' outputs (the head may return fp32 logits)
    hooks = [m.register_forward_hook(lambda m, i, o: seen.add(o.dtype)) for m in learner.task_model().modules()
             if isinstance(m, torch.nn.Conv2d)]
    try:
        learner.fit_one_cycle(3, 1e-2)
    finally:
        for h in hooks:
            h.remove()
    require(torch.bfloat16 in seen, f"no bf16 convolution outputs under bf16-mixed: {seen}")
    acc = learner.history[-1]["accuracy"]
    require(acc > 0.6, f"accuracy {acc:.3f} after 3 epochs")
    require(next(learner.task_model().parameters()).dtype == torch.float32, "weights are not kept in fp32")
    return f"convolutions bf16, weights fp32, accuracy {acc:.3f}"


def _child_fit(ctx: Context, cache: Path, batch_size: int, compile: bool) -> dict:
    env = dict(os.environ, HOTSTART_CACHE_DIR=str(cache), PYTHONPATH=os.pathsep.join(
        [str(ROOT)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", "--device", ctx.device,
           "--batch-size", str(batch_size)] + (["--compile"] if compile else [])
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=240)
    require(out.returncode == 0, f"child fit failed: {out.stderr.strip().splitlines()[-1:] or out.returncode}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def child_fit(device: str, batch_size: int, compile: bool) -> dict:
    """In a child process: the warmup workload's task and backbone, one epoch of 4 batches."""
    import numpy as np

    from hotstart import Image, ImageClassificationSingle, Label, tasklearner

    t0 = time.perf_counter()
    task = ImageClassificationSingle((Image(), Label([str(i) for i in range(10)])))
    rng = np.random.default_rng(0)
    samples = [task.mock_sample(rng) for _ in range(batch_size * 5)]
    learner = tasklearner(task, ([s[0] for s in samples], [s[1] for s in samples]), backbone="resnet18",
                          batch_size=batch_size, compile=compile, device=device, seed=0, progress=False,
                          valid_pct=0.2)
    t1 = time.perf_counter()
    learner.fit_one_cycle(1, 1e-3)
    if device == "cuda":
        import torch

        torch.cuda.synchronize()
    return {"build_s": t1 - t0, "first_epoch_s": time.perf_counter() - t1,
            "compiled": getattr(learner.model, "compiled_with", None) is not None}


def check_compile_cache(ctx: Context) -> str:
    """Cold compiled first epoch, `python -m hotstart.warmup --only ...`, then warm (and warm at
    batch 32, which the warmup did not train at): warm must be at most half of cold."""
    cache = ctx.workdir / "compile-cache"
    eager = _child_fit(ctx, cache, 16, compile=False)
    cold = _child_fit(ctx, cache, 16, compile=True)
    require(cold["compiled"], "compile=True did not compile")
    warm_cmd = [sys.executable, "-m", "hotstart.warmup", "--only", WARMUP_WORKLOAD.format(device=ctx.device),
                "--cache-dir", str(ctx.workdir / "warm-cache"), "--strict", "--no-progress"]
    t0 = time.perf_counter()
    out = subprocess.run(warm_cmd, capture_output=True, text=True, timeout=300)
    warmup_s = time.perf_counter() - t0
    require(out.returncode == 0, f"{' '.join(warm_cmd[1:])} failed: {out.stdout[-300:]} {out.stderr[-300:]}")
    warm = _child_fit(ctx, ctx.workdir / "warm-cache", 16, compile=True)
    warm32 = _child_fit(ctx, ctx.workdir / "warm-cache", 32, compile=True)
    ratio, ratio32 = warm["first_epoch_s"] / cold["first_epoch_s"], warm32["first_epoch_s"] / cold["first_epoch_s"]
    numbers = (f"first epoch: eager {eager['first_epoch_s']:.1f} s, cold compiled {cold['first_epoch_s']:.1f} s, "
               f"warmup {warmup_s:.1f} s, warm {warm['first_epoch_s']:.1f} s (warm/cold {ratio:.2f}), "
               f"warm at batch 32 {warm32['first_epoch_s']:.1f} s ({ratio32:.2f}); "
               f"warm/eager {warm['first_epoch_s'] / eager['first_epoch_s']:.2f}")
    require(ratio <= 0.5 and ratio32 <= 0.5, "the warm compiled first epoch is not half the cold one: " + numbers)
    return numbers


def check_compile_auto(ctx: Context) -> str:
    """compile="auto" (the default) compiles on CUDA, when a fit starts, once the warmup made the
    configuration warm (the compile-cache check's folder, else a warmup run here); on a CPU whose
    cache is cold it stays eager (compile_cache/policy.py). The key is the learner's own: the
    warmup runs the same defaults (precision, memory layout) as the learner."""
    import numpy as np

    from hotstart import Image, ImageClassificationSingle, Label, tasklearner
    from hotstart.compile_cache.manifest import is_warm

    cache = ctx.workdir / "warm-cache"
    task = ImageClassificationSingle((Image(), Label([str(i) for i in range(10)])))
    rng = np.random.default_rng(0)
    samples = [task.mock_sample(rng) for _ in range(8)]
    saved = os.environ.get("HOTSTART_CACHE_DIR")
    os.environ["HOTSTART_CACHE_DIR"] = str(cache)
    try:
        learner = tasklearner(task, ([s[0] for s in samples], [s[1] for s in samples]), backbone="resnet18",
                              batch_size=4, device=ctx.device, seed=0, progress=False)
        key = learner.auto_compile.key
        if ctx.cuda and not is_warm(key, cache):
            cmd = [sys.executable, "-m", "hotstart.warmup", "--only", WARMUP_WORKLOAD.format(device=ctx.device),
                   "--cache-dir", str(cache), "--strict", "--no-progress"]
            out = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
            require(out.returncode == 0, f"warmup failed: {out.stdout[-300:]}")
        warm = is_warm(key, cache)
        learner.fit(1, 1e-3)  # "auto" is decided here, when the fit starts
    finally:
        if saved is None:
            os.environ.pop("HOTSTART_CACHE_DIR", None)
        else:
            os.environ["HOTSTART_CACHE_DIR"] = saved
    compiled = learner.compiled is not None
    if ctx.cuda:
        require(warm and compiled, f"warm={warm}, compiled={compiled}: auto should compile a warm configuration "
                                   f"({learner.choices['compile'].why})")
    else:
        require(not compiled, f"compile='auto' compiled a cold configuration on a CPU ({learner.choices['compile'].why})")
    return f"manifest warm: {warm}, compiled: {compiled}"


def _trained_for_export(ctx: Context):
    learner = digits_learner(ctx)
    learner.fit_one_cycle(2, 1e-2)
    data, _ = digits(260)
    return learner, [data[0][i] for i in range(240, 260)]


def check_onnx(ctx: Context) -> str:
    import numpy as np

    from hotstart.predictor import Predictor

    learner, images = _trained_for_export(ctx)
    path = ctx.workdir / "digits.onnx"
    learner.export(path)
    predictor = Predictor.load(path)
    worst, same = 0.0, 0
    for img in images:
        label, probs = learner.predict(img)
        plabel, pprobs = predictor.predict(img)
        same += label == plabel
        worst = max(worst, float(np.abs(probs.cpu().numpy() - pprobs).max()))
    require(same == len(images), f"{len(images) - same} of {len(images)} labels differ")
    require(worst < 1e-3, f"probabilities differ by {worst:.2e}")
    return f"{len(images)} images, same labels, max |probs diff| {worst:.1e}"


def check_pt2(ctx: Context) -> str:
    import torch

    from hotstart.export.pt2 import load_pt2

    learner, images = _trained_for_export(ctx)
    path = ctx.workdir / "digits.pt2"
    report = learner.export(path, tolerance=1e-3)
    model, meta = load_pt2(path)
    task = learner.task
    x = torch.stack([task.encode_input(img) for img in images[:7]]).to(learner.device)
    with torch.no_grad():
        want = learner.task_model().eval()(x)
        got = model(x)
    got = got[0] if isinstance(got, (list, tuple)) else got
    diff = float((got.to(want.device) - want).abs().max())
    require(tuple(got.shape) == (7, 10) and diff <= 1e-3, f"shape {tuple(got.shape)}, max diff {diff:.2e}")
    return f"export diff {report.max_abs_diff:.1e}, batch 7 diff {diff:.1e}"


def check_resume(ctx: Context) -> str:
    import torch

    from hotstart.learner.callbacks import Callback

    class Crash(Exception):
        pass

    class CrashAtEpoch1(Callback):
        def before_epoch(self):
            if self.learner.epoch == 1:
                raise Crash

    ref = digits_learner(ctx)
    ref.fit_one_cycle(2, 1e-2)
    folder = ctx.workdir / "checkpoints"
    killed = digits_learner(ctx)
    with contextlib.suppress(Crash):
        killed.fit_one_cycle(2, 1e-2, checkpoint_dir=folder, callbacks=[CrashAtEpoch1()])
    resumed = digits_learner(ctx)
    resumed.fit_one_cycle(2, 1e-2, checkpoint_dir=folder, resume=folder)
    a, b = ref.task_model().state_dict(), resumed.task_model().state_dict()
    worst = max(float((a[k].float() - b[k].float()).abs().max()) for k in a)
    # bit for bit on a CPU; cuDNN's convolution algorithms may differ between two processes' runs
    require(worst == 0.0 if not ctx.cuda else worst < 1e-3, f"resumed weights differ by {worst:.2e}")
    require(b[next(iter(b))].device.type == ctx.device, "the resumed model is not on the device")
    accs = (ref.history[-1]["accuracy"], resumed.history[-1]["accuracy"])
    return f"max |weight diff| {worst:.1e}, accuracy {accs[0]:.3f} / {accs[1]:.3f}"


def check_host_syncs(ctx: Context) -> str:
    """Counts the syncs CUDA reports (torch.cuda.set_sync_debug_mode) in the training phase of an
    epoch of 10 and of 20 batches: no per-batch sync means the same count."""
    import torch

    from hotstart.learner.callbacks import Callback

    class Count(Callback):
        def __init__(self):
            self.counts, self._caught = [], None

        def before_train(self):
            self._caught = warnings.catch_warnings(record=True)
            self._log = self._caught.__enter__()
            warnings.simplefilter("always")
            torch.cuda.synchronize()
            torch.cuda.set_sync_debug_mode("warn")

        def after_train(self):
            torch.cuda.set_sync_debug_mode("default")
            self._caught.__exit__(None, None, None)
            self.counts.append(sum("synchroniz" in str(w.message) for w in self._log))

    saved = torch.cuda.get_sync_debug_mode()
    try:
        per_epoch = []
        for n in (200, 400):  # 160 / 320 training images at batch 16: 10 and 20 batches
            learner = digits_learner(ctx, n=n)
            counter = Count()
            learner.fit(2, 1e-3, callbacks=[counter])
            per_epoch.append(counter.counts[-1])  # the second epoch: nothing left to set up
    finally:
        torch.cuda.set_sync_debug_mode(saved)
    require(per_epoch[0] == per_epoch[1], f"syncs in training grow with batches: {per_epoch} for 10 / 20 batches")
    return f"syncs in an epoch's training: {per_epoch[0]} (10 batches), {per_epoch[1]} (20 batches)"


def _plain_steady(ctx: Context, images, labels, classes, epochs: int, bs: int) -> float:
    """The benchmarks' plain PyTorch loop (benchmarks/scripts/plain_fit.py) moved to the device."""
    import timm
    import torch
    import torch.nn.functional as F
    from torch.utils.data import DataLoader

    sys.path.insert(0, str(ROOT / "benchmarks" / "scripts"))
    import _data

    args = argparse.Namespace(data="synthetic", size=128)
    train_ds, valid_ds = _data.torchvision_datasets(args, images, labels, classes)
    g = torch.Generator().manual_seed(0)
    train_dl = DataLoader(train_ds, batch_size=bs, shuffle=True, drop_last=True, generator=g, pin_memory=ctx.cuda)
    valid_dl = DataLoader(valid_ds, batch_size=bs, pin_memory=ctx.cuda)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        model = timm.create_model("resnet18", num_classes=len(classes)).to(ctx.device)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, betas=(0.9, 0.99), eps=1e-5, weight_decay=0.01)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=1e-3, total_steps=epochs * len(train_dl), pct_start=0.25)
    times = []
    for _ in range(epochs):
        synchronize(ctx)
        t0 = time.perf_counter()
        model.train()
        for xb, yb in train_dl:
            xb, yb = xb.to(ctx.device, non_blocking=True), yb.to(ctx.device, non_blocking=True)
            loss = F.cross_entropy(model(xb), yb)
            loss.backward()
            opt.step()
            sched.step()
            opt.zero_grad(set_to_none=True)
        model.eval()
        correct = torch.zeros((), device=ctx.device)
        with torch.no_grad():
            for xb, yb in valid_dl:
                xb, yb = xb.to(ctx.device, non_blocking=True), yb.to(ctx.device, non_blocking=True)
                correct += (model(xb).argmax(1) == yb).sum()
        synchronize(ctx)
        times.append(time.perf_counter() - t0)
    n = len(train_dl) * bs + len(valid_ds)
    return n * (epochs - 1) / sum(times[1:])


def _hotstart_steady(ctx: Context, images, labels, classes, epochs: int, bs: int) -> float:
    from hotstart import Image, ImageClassificationSingle, Label, tasklearner
    from hotstart.learner.callbacks import Callback

    task = ImageClassificationSingle((Image(), Label(classes)))
    learner = tasklearner(task, (images, labels), backbone="resnet18", batch_size=bs, device=ctx.device,
                          seed=0, progress=False)
    times = []

    class Clock(Callback):
        def before_epoch(self):
            synchronize(ctx)
            self.t0 = time.perf_counter()

        def after_epoch(self):
            synchronize(ctx)
            times.append(time.perf_counter() - self.t0)

    learner.fit_one_cycle(epochs, 1e-3, callbacks=[Clock()])
    n = len(learner.train_loader) * bs + len(learner.valid_loader.dataset)
    return n * (epochs - 1) / sum(times[1:])


def check_throughput(ctx: Context) -> str:
    """The startup workload (benchmarks/run.py: 64x64 images resized to 128x128, resnet18,
    batch 16, the default augmentations, num_workers 0), 800 images, steady state = epochs 2-3;
    hotstart against the plain loop, alternating, the better of two runs each."""
    sys.path.insert(0, str(ROOT / "benchmarks" / "scripts"))
    import _data

    images, labels, classes = _data.synthetic(800, 64)
    plain, ours = [], []
    for _ in range(2):
        plain.append(_plain_steady(ctx, images, labels, classes, 3, 16))
        ours.append(_hotstart_steady(ctx, images, labels, classes, 3, 16))
    ratio = max(ours) / max(plain)
    numbers = f"steady img/s: hotstart {max(ours):.0f}, plain {max(plain):.0f} (ratio {ratio:.2f})"
    require(ratio >= 0.9, "hotstart is more than 10% slower than the plain loop: " + numbers)
    return numbers


CHECKS = (
    Check("eager", "eager fit on the device: accuracy > 0.6, parameters on it", check_eager, True),
    Check("fp16-guard", "16-mixed: GradScaler skips an overflowing batch, NonFiniteGuard lets the fit go on",
          check_fp16_guard, True),
    Check("bf16", "bf16-mixed: bf16 convolutions, fp32 weights, accuracy > 0.6", check_bf16, True),
    Check("compile-cache", "cold compiled first epoch -> python -m hotstart.warmup --only ... -> warm "
          "(ratio), and warm at batch 32", check_compile_cache, False),
    Check("compile-auto", 'compile="auto" compiles a warm configuration on CUDA (stays eager on CPU)',
          check_compile_auto, True),
    Check("onnx-export", "ONNX from a device-trained model: the predictor's labels and probabilities",
          check_onnx, True),
    Check("pt2-export", ".pt2 (AOTInductor) from a device-trained model: outputs equal the model's", check_pt2, False),
    Check("resume", "checkpoint, crash, resume: equals an uninterrupted fit", check_resume, True),
    Check("host-syncs", "syncs per epoch (torch.cuda.set_sync_debug_mode) do not grow with batches",
          check_host_syncs, False),
    Check("throughput", "steady img/s against the plain PyTorch loop on the startup workload", check_throughput,
          False),
)


def run_checks(checks, ctx: Context, out=None) -> int:
    out = sys.stdout if out is None else out  # looked up now: a caller may have redirected it
    failed = 0
    width = max(len(c.name) for c in checks)
    for c in checks:
        if not ctx.cuda and not c.on_cpu:
            print(f"SKIP {c.name:<{width}}  CUDA only (or too slow for a CPU check)", file=out, flush=True)
            continue
        t0 = time.perf_counter()
        try:
            detail = c.run(ctx)
        except Exception as e:  # one failing check is reported; the others still run
            failed += 1
            msg = f"{type(e).__name__}: {e}" if not isinstance(e, CheckFailed) else str(e)
            print(f"FAIL {c.name:<{width}}  {msg} ({time.perf_counter() - t0:.1f} s)", file=out, flush=True)
            if not isinstance(e, CheckFailed):
                traceback.print_exc(file=sys.stderr)
        else:
            print(f"PASS {c.name:<{width}}  {detail} ({time.perf_counter() - t0:.1f} s)", file=out, flush=True)
    return 1 if failed else 0


def select(only: str | None):
    if not only:
        return list(CHECKS)
    names = [n.strip() for n in only.split(",") if n.strip()]
    unknown = [n for n in names if n not in {c.name for c in CHECKS}]
    if unknown:
        raise SystemExit(f"unknown check(s) {unknown}; the checks are: {', '.join(c.name for c in CHECKS)}")
    return [c for c in CHECKS if c.name in names]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    p.add_argument("--dry-run", action="store_true", help="list the checks and exit")
    p.add_argument("--only", help="comma-separated check names")
    p.add_argument("--child", action="store_true", help=argparse.SUPPRESS)  # one fit, for compile-cache
    p.add_argument("--batch-size", type=int, default=16, help=argparse.SUPPRESS)
    p.add_argument("--compile", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        print(json.dumps(child_fit(args.device, args.batch_size, args.compile)))
        return 0
    checks = select(args.only)
    if args.dry_run:
        for c in checks:
            print(f"{c.name:<14} {'cpu+cuda' if c.on_cpu else 'cuda':<8}  {c.what}")
        return 0
    import torch

    if args.device == "cuda" and not torch.cuda.is_available():
        print("no CUDA GPU here: run with --device cpu for the checks that run on a CPU", file=sys.stderr)
        return 2
    where = torch.cuda.get_device_name(0) if args.device == "cuda" else "cpu"
    print(f"hotstart gpu_check on {where}, torch {torch.__version__}", flush=True)
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="hotstart-gpu-check-") as tmp:
        rc = run_checks(checks, Context(args.device, Path(tmp)))
    print(f"{'all passed' if rc == 0 else 'FAILED'} in {time.perf_counter() - t0:.0f} s", flush=True)
    return rc


if __name__ == "__main__":
    sys.exit(main())
