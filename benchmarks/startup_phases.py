"""Where the time to first epoch goes: one startup script, with a timestamp around each step.

    cd benchmarks/scripts
    nice -n 19 python ../startup_phases.py hotstart --data=synthetic --n=100 --size=128 \
        --image_size=64 --epochs=1 --bs=16 --backbone=resnet18          # or: plain
    PHASES_STOP=1 ...   # stop after the first training step (before/after checks of the build)

It runs benchmarks/scripts/{hotstart,plain}_fit.py in this process (runpy), so the script is
unchanged. Printed: seconds from the process's start (/proc/self/stat, Linux) at each milestone
of the script, at the first import of torch / torchvision / timm, and at the start and end of the
first call of each timed function (hotstart: backbone check (imports timm), model build, the
meta-tensor check, Fabric detection, setup, the optimizer, NonFiniteGuard.before_fit, the first
batch, train_step; plain: timm.create_model and the DataLoader's batches); then each function's
total time. Wrapping costs microseconds a call. Run under ``nice -n 19`` on a shared machine:
the shares of the phases are what to read, not the seconds. Results: benchmarks/README.md,
"Where the time to first epoch goes"."""
import builtins
import functools
import importlib
import os
import runpy
import sys
import time


def since_start() -> float:
    """Seconds since this process started (its start time in clock ticks since boot)."""
    with open("/proc/self/stat") as f:
        start_ticks = int(f.read().rsplit(")", 1)[1].split()[19])
    with open("/proc/uptime") as f:
        up = float(f.read().split()[0])
    return up - start_ticks / os.sysconf("SC_CLK_TCK")


T0 = time.perf_counter() - since_start()
events = []  # (seconds from process start, what happened)


def ev(name):
    events.append((round(time.perf_counter() - T0, 3), name))


ev("python started, harness running")

spent = {}  # "module:qualname" -> seconds of each call


def wrap(target):
    """Time every call of `target` ("module:qualname"); mark its first call's start and end."""
    mod, qual = target.split(":")
    m = importlib.import_module(mod)
    owner, attr = m, qual
    parts = qual.split(".")
    for p in parts[:-1]:
        owner = getattr(owner, p)
    attr = parts[-1]
    fn = getattr(owner, attr)

    @functools.wraps(fn)
    def timed(*a, **k):
        if target not in spent:
            ev(f"{target} first call starts")
        t = time.perf_counter()
        try:
            return fn(*a, **k)
        finally:
            first = target not in spent
            spent.setdefault(target, []).append(round(time.perf_counter() - t, 3))
            if first:
                ev(f"{target} first call ends")
                if target.endswith("train_step") and os.environ.get("PHASES_STOP"):
                    for t_, n_ in events: print(f"{t_:8.3f}  {n_}")
                    sys.stdout.flush(); os._exit(0)
    setattr(owner, attr, timed)



who = sys.argv[1]
script = os.path.abspath(f"{who}_fit.py")  # run from benchmarks/scripts
sys.argv = [script, *sys.argv[2:]]
sys.path.insert(0, os.path.dirname(script))
import _milestones


def mark(name, **extra):
    """The script's milestones, as events; at "imported", the timed functions are wrapped."""
    ev("milestone " + name)
    if name == "imported":
        if who == "hotstart":
            for t in ["hotstart.models.factory:check_backbone", "hotstart.models.factory:create_model",
                      "hotstart.tasks.base:SupervisedTask.check", "hotstart.learner.backend:make_backend",
                      "hotstart.learner.loop:Learner.setup", "hotstart.learner.loop:Learner._prepare_optimizer",
                      "hotstart.learner.callbacks.nan_guard:NonFiniteGuard.before_fit",
                      "hotstart.learner.loop:Learner.train_step", "hotstart.learner.loop:Learner._eval_loop",
                      "hotstart.learner.data:TaskDataset.__getitems__", "hotstart.learner.tasklearner:_split",
                      "hotstart.learner.compiling:maybe_compile"]:
                wrap(t)
        else:
            import timm, torch
            wrap("timm:create_model"); wrap("_data:load"); wrap("_data:torchvision_datasets")
            wrap("torch.utils.data.dataloader:_BaseDataLoaderIter.__next__")
_milestones.mark = mark
real_import = builtins.__import__
seen = set()


def imp(name, *a, **k):
    """Mark the first import of torch, torchvision and timm."""
    r = real_import(name, *a, **k)
    top = name.split(".")[0]
    if top in ("torch", "timm", "torchvision") and top not in seen and top in sys.modules:
        seen.add(top); ev(f"{top} imported")
    return r


builtins.__import__ = imp
try:
    runpy.run_path(script, run_name="__main__")
finally:
    builtins.__import__ = real_import
    for t, n in events: print(f"{t:8.3f}  {n}")
    for k, v in spent.items(): print(f"  {k}: calls {len(v)}, total {sum(v):.3f}, first {v[0]:.3f}")
