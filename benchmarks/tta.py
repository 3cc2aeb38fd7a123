"""Time to accuracy (``python -m benchmarks.run --only tta``): the seconds from ``python train.py``
to a model that is good enough, as DAWNBench measured it, for hotstart's defaults against a plain
fp32 loop, an expert's loop, fastai and Lightning.

    python -m benchmarks.run --only tta --fastai-python /path/to/venv-fastai/bin/python
    python -m benchmarks.run --only tta --tta-tasks digits --tta-contenders plain,hotstart --runs 1
    python -m benchmarks.run --only tta --tta-smoke --fastai-python ...   # every contender, tiny, ~minutes
    python -m benchmarks.run --table benchmarks/results/tta.json         # a saved run's tables again

fastai runs from the interpreter of ``--fastai-python`` (a venv of its own: python -m venv, then
``pip install torch==2.14.1 torchvision==0.29.1 fastai timm``); without it, or where that
interpreter cannot import fastai, fastai is skipped with a note. The JSON goes to
benchmarks/results/tta.json unless ``--out`` says otherwise.

**Tasks** (`TASKS`), the same for every contender: the model, timm ``resnet10t`` from random
weights; the epoch budget; the batch size and peak learning rate, 64 and 1e-3, fastai's defaults
and hotstart's before 2026-12-07 (hotstart gets neither: it runs on its own defaults, and its result
record says what it chose; a note says so when that differs from the task's: since 2026-12-07 an
image split under 4,096 samples gets batches of 32, tasks/image_base.py); hotstart's default
augmentation without the flip (digits are not mirror-symmetric), written in each framework's own
transforms; the same fixed validation images.

- ``digits``: the built-in 8x8 digits at 32x32, one channel, 1,437 training and 360 validation
  images (scripts/_data.py: `split`), loaded in memory. Budget 5 epochs, target 0.9.
- ``jpegdigits``: 2,500 JPEG files, 2,000 in train/ and 500 in valid/, 64x64 RGB: the digits as
  coloured, textured, noisy photographs (scripts/_jpeg_digits.py, written once under the temp dir),
  decoded every epoch, with the DataLoader workers that hotstart's ``num_workers="auto"`` chooses
  for a folder on this machine (the other contenders get as many). Budget 6 epochs, target 0.8.

**Budgets and targets.** A target is an accuracy every contender reaches within the budget in fp32,
with a margin for the seeds, and reached before the last epoch, so that the time to it tells fast
from slow rather than only measuring the whole budget. Calibration (seed 0, 2026-12-03, on a
loaded machine: accuracies do not depend on the load), validation accuracy after each epoch:

- digits, 5 epochs: plain 0.106, 0.582, 0.972, 0.983, 0.986 (Lightning the very same numbers: the
  same loop, data and seed); the expert 0.106, 0.630, 0.964, 0.983, 0.986; hotstart's defaults
  0.142, 0.838, 0.983, 0.986, 0.992; fastai 0.095, 0.518, 0.875, 0.955, 0.958 (its bigger head
  learns more slowly: 0.95 would leave it no margin). Target 0.9: everyone passes it in epoch 3,
  fastai in epoch 4.
- jpegdigits at 64x64, 6 epochs: plain 0.144, 0.354, 0.676, 0.906, 0.954, 0.948; hotstart 0.134,
  0.248, 0.748, 0.908, 0.960, 0.952; fastai 0.134, 0.236, 0.426, 0.700, 0.836, 0.860. Target 0.8:
  plain and hotstart pass it in epoch 4 (from 0.68-0.75 to 0.91), fastai in epoch 5, and fastai's
  last epoch keeps 6 points of margin.
- At 128x128 the same folder learned far more slowly per epoch (plain: 0.126, 0.152, 0.248 after
  3 of 6 epochs) at 4x the cost of an epoch, so the folder is 64x64, the lower end of the issue's
  64-128 px. A first rendering with light-on-dark as well as dark-on-light digits stayed at
  0.09-0.12 for 3 epochs at 128x128: the digits are dark ink on a light background.

Why resnet10t: the smallest ResNet in timm (4.9 M parameters, the deep "tiered" stem), so an epoch of
the folder costs seconds to tens of seconds on 2 cores, not minutes; every contender takes it by
its timm name (fastai's ``vision_learner`` puts its own two-layer head on the timm body: the only
difference in the model); the other benchmarks in this folder use it too, so their numbers compare.

**Contenders** (each its own fresh process, scripts/*_fit.py):

- ``plain``: PyTorch + timm, fp32, the shared loop (scripts/_plain_loop.py) with AdamW and a
  one-cycle schedule (hotstart's and fastai's settings);
- ``expert``: the same loop as an expert writes it by hand (``plain_fit.py --expert``):
  ``torch.autocast`` to bf16 where the CPU has bf16 units (fp32 elsewhere: emulated bf16 is
  slower), channels_last weights and batches, fused AdamW, persistent workers;
- ``hotstart``: ``tasklearner(task, data, backbone=..., seed=...)`` and ``fit_one_cycle(epochs)``,
  nothing else (precision, compile, memory layout, batch size, learning rate, the average of
  the weights, workers: its defaults
  at run time; ``hotstart_fit.py --defaults``);
- ``fastai``: ``vision_learner`` + ``fit_one_cycle`` (``fastai_fit.py``);
- ``lightning``: ``Trainer.fit`` on a LightningModule (``lightning_fit.py``, scripts/_lightning_module.py).

**What is measured**, for each task, seed and contender (runs alternate: for each seed, every
contender in turn, the first one turning with the seed):

- ``time to target``: seconds from process start (the parent's ``time.time()`` just before it
  starts the child; interpreter start-up and imports included) to the end of the first epoch whose
  validation accuracy reaches the task's target, "never" when no epoch of the budget does. Every
  contender validates after every epoch. Reaching means ``accuracy >= target - 1e-6`` (Lightning's
  and fastai's accuracies are float32: 0.9 reads 0.89999998);
- ``final accuracy``: the validation accuracy after the last epoch of the budget;
- the medians over seeds (a seed that never reaches counts as infinitely slow: 2 of 3 must reach
  for a median), and ``X / Y``: this contender's median time to target over contender Y's, for Y
  = plain, expert, fastai, lightning, and its median over seeds of the same ratio seed by seed;
- the profile (median over seeds, seconds, up to the epoch that reached the target, or the whole
  fit when none did): ``start+import`` (process start to the script's imports done), ``build``
  (data, loaders, model, optimizer), ``fit setup`` (from there to the first training batch being
  asked for: the framework's own setup, Lightning's sanity validation), ``data wait`` (the
  training loop waiting for batches), ``train steps`` (the rest of the training phase: forward,
  backward, optimizer), ``validation``, ``between epochs``; they add up to the time to target.
"""
from __future__ import annotations

import math
import statistics
import subprocess

MODEL = "resnet10t"
TRAINING = {"backbone": MODEL, "bs": 64, "lr": 1e-3, "classes": 10}
# budgets and targets: "Tasks, budgets and targets" in the module docstring
TASKS = {
    "digits": {"workload": {"data": "digits", "n": 0, "size": 32, "epochs": 5, **TRAINING}, "target": 0.9},
    "jpegdigits": {"workload": {"data": "jpegdigits", "n": 2500, "size": 64, "epochs": 6, **TRAINING}, "target": 0.8},
}
# `--tta-smoke`: every contender end to end in seconds each (its numbers mean nothing)
SMOKE_TASKS = {
    "digits": {"workload": {"data": "digits", "n": 100, "size": 32, "epochs": 1, **TRAINING}, "target": 0.2},
    "jpegdigits": {"workload": {"data": "jpegdigits", "n": 100, "size": 32, "epochs": 1, **TRAINING}, "target": 0.2},
}
CONTENDERS = ("plain", "expert", "hotstart", "fastai", "lightning")
REFERENCES = ("plain", "expert", "fastai", "lightning")  # the columns of ratios
REACH_TOLERANCE = 1e-6
PHASES = ("start+import", "build", "fit setup", "data wait", "train steps", "validation", "between epochs")


# --- one run -------------------------------------------------------------------------------------
def time_to_accuracy(epochs: list[dict], target: float) -> tuple[float | None, int | None]:
    """(seconds from process start to the end of the first epoch whose accuracy reaches `target`,
    that epoch's number), or (None, None) when none does."""
    for ep in epochs:
        acc = ep.get("accuracy")
        if acc is not None and acc >= target - REACH_TOLERANCE:
            return ep["t"], ep["epoch"]
    return None, None


def profile(run: dict, upto_epoch: int | None) -> dict:
    """Where the run's time went until the end of epoch `upto_epoch` (None: every epoch), as the
    module docstring's `PHASES`; a phase the contender does not mark is None."""
    m = run["milestones"]
    epochs = [e for e in run["epochs"] if upto_epoch is None or e["epoch"] <= upto_epoch]
    if "imported" not in m or "ready" not in m or not epochs:
        return {}
    out = dict.fromkeys(PHASES)
    out["start+import"], out["build"] = m["imported"], m["ready"] - m["imported"]
    if all("train_start" in e and "train_end" in e for e in epochs):
        out["fit setup"] = epochs[0]["train_start"] - m["ready"]
        train = sum(e["train_end"] - e["train_start"] for e in epochs)
        if all("data_s" in e for e in epochs):
            out["data wait"] = sum(e["data_s"] for e in epochs)
            out["train steps"] = train - out["data wait"]
        out["validation"] = sum(e["t"] - e["train_end"] for e in epochs)
        out["between epochs"] = sum(b["train_start"] - a["t"] for a, b in zip(epochs, epochs[1:]))
    out["total"] = epochs[-1]["t"]
    return out


def run_summary(run: dict, target: float) -> dict:
    """The figures of one run: time to target, the epoch that reached it, accuracies, profile."""
    tta, epoch = time_to_accuracy(run["epochs"], target)
    return {"tta_s": tta, "reached_epoch": epoch, "accuracies": [e.get("accuracy") for e in run["epochs"]],
            "final_accuracy": run["epochs"][-1].get("accuracy") if run["epochs"] else None,
            "profile": profile(run, epoch)}


# --- medians and ratios --------------------------------------------------------------------------
def median_time(times: list[float | None]) -> float | None:
    """Median time to target, a run that never reached counting as infinitely slow; None when that
    median is a run that never reached (or there are no runs)."""
    if not times:
        return None
    med = statistics.median(math.inf if t is None else t for t in times)
    return None if math.isinf(med) else med


def summarize_contender(entry: dict) -> dict:
    ok = [r for r in entry["runs"] if r["rc"] == 0]
    times = [r["summary"]["tta_s"] for r in ok]
    finals = [r["summary"]["final_accuracy"] for r in ok if r["summary"]["final_accuracy"] is not None]
    phases = {}
    for k in (*PHASES, "total"):
        vals = [r["summary"]["profile"].get(k) for r in ok]
        if vals and all(v is not None for v in vals):
            phases[k] = statistics.median(vals)
    entry.update(n=len(ok), reached=sum(t is not None for t in times), median_tta_s=median_time(times),
                 final_accuracy={"mean": statistics.fmean(finals), "min": min(finals), "max": max(finals)}
                 if finals else None, profile=phases)
    return entry


def add_tta_ratios(contenders: dict) -> None:
    """ratio[Y] = this contender's median time to target / Y's; paired_ratio[Y] = the median over
    seeds of the same ratio seed by seed (runs of one seed ran back to back: they met about the
    same machine load), over the seeds that both reached."""
    for entry in contenders.values():
        entry["ratio"], entry["paired_ratio"] = {}, {}
        for ref in REFERENCES:
            other = contenders.get(ref)
            if other is None:
                continue
            if entry.get("median_tta_s") and other.get("median_tta_s"):
                entry["ratio"][ref] = entry["median_tta_s"] / other["median_tta_s"]
            mine = {r["seed"]: r["summary"]["tta_s"] for r in entry["runs"] if r["rc"] == 0}
            theirs = {r["seed"]: r["summary"]["tta_s"] for r in other["runs"] if r["rc"] == 0}
            pairs = [mine[s] / theirs[s] for s in mine if mine[s] and theirs.get(s)]
            if pairs:
                entry["paired_ratio"][ref] = statistics.median(pairs)


# --- the comparison ------------------------------------------------------------------------------
def contender_cmd(contender: str, py: str, fastai_py: str, scripts, workload: dict, seed: int, workers) -> list:
    """The command line of one run (scripts/<contender>_fit.py; the expert is plain_fit.py --expert)."""
    script = "plain" if contender == "expert" else contender
    args = [f"--{k}={v}" for k, v in workload.items()] + [f"--seed={seed}"]
    if contender == "hotstart":
        args.append("--defaults")  # its own batch size, learning rate and workers
    elif workers:
        args.append(f"--workers={workers}")
    if contender == "expert":
        args.append("--expert")
    return [fastai_py if contender == "fastai" else py, str(scripts / f"{script}_fit.py"), *args]


def bench_tta(py, log, *, run_child, available, auto_workers, scripts, fastai_py=None, seeds: int = 3,
              tasks: dict | None = None, contenders=CONTENDERS, timeout: float = 3600) -> dict:
    """Every task: for each seed, every contender in turn; returns {"tta_<task>": comparison}.

    `run_child(cmd, timeout=)` runs one process and parses its milestones (benchmarks/run.py);
    `available(py)` says which optional packages an interpreter has; `auto_workers(py)` is the
    DataLoader workers hotstart's ``num_workers="auto"`` chooses for a folder on this machine."""
    tasks = TASKS if tasks is None else tasks
    fastai_py = fastai_py or py
    have = available(py)
    need = {"fastai": (fastai_py, "fastai"), "lightning": (py, "pytorch_lightning")}
    names, notes = [], []
    for c in contenders:
        if c in need:
            interp, module = need[c]
            if not (have if interp == py else available(interp)).get(module):
                notes.append(f"{c} skipped: `{module}` is not importable by {interp}"
                             + (" (give --fastai-python a venv that has fastai)" if c == "fastai" else ""))
                continue
        names.append(c)
    notes.append(f"this CPU's bf16 units (the expert's autocast runs on them, or is emulated without): "
                 f"{cpu_bf16_flags(py) or 'none'}")
    out = {}
    for task_name, task in tasks.items():
        workload = task["workload"]
        workers = auto_workers(py) if workload["data"] in ("folder", "jpegdigits") else 0
        if workload["data"] == "jpegdigits":  # written once, before any timing
            code = (f"import _data; _data.jpeg_digits_root(_data.parse_args(['--data=jpegdigits', "
                    f"'--n={workload['n']}', '--size={workload['size']}', '--classes={workload['classes']}']))")
            subprocess.run([py, "-c", code], cwd=scripts, check=True)
        result = {c: {"runs": []} for c in names}
        failed = set()
        for seed in range(seeds):
            order = names[seed % len(names):] + names[:seed % len(names)] if names else []
            for c in order:
                if c in failed:
                    continue
                cmd = contender_cmd(c, py, fastai_py, scripts, workload, seed, workers)
                run = run_child(cmd, timeout=timeout)
                run.update(seed=seed, cmd=[str(x) for x in cmd], summary=run_summary(run, task["target"]))
                result[c]["runs"].append(run)
                s = run["summary"]
                log(f"  [tta {task_name}] seed {seed} {c:>9}: rc={run['rc']} wall={run['wall_s']:.1f}s "
                    f"time to {task['target']}={_secs(s['tta_s'])} (epoch {s['reached_epoch']}) "
                    f"accuracies={[None if a is None else round(a, 3) for a in s['accuracies']]}")
                if run["rc"] != 0:
                    failed.add(c)
                    log(f"  [tta {task_name}] {c} failed; its stderr ends with:\n{run.get('stderr_tail', '')[-800:]}")
        for entry in result.values():
            summarize_contender(entry)
        add_tta_ratios(result)
        task_notes = list(notes)
        hs = [r["result"] for r in result.get("hotstart", {}).get("runs", []) if r.get("result")]
        if hs:
            shown = {"peak_lr": lambda v: str(v) if v is None else f"{v:.3g}"}  # the highest rate of any step
            chose = {k: sorted({shown.get(k, str)(h.get(k)) for h in hs})
                     for k in ("batch_size", "peak_lr", "precision", "ema", "num_workers")}
            task_notes.append(f"hotstart's defaults chose: {chose}; the other contenders ran at batch {workload['bs']}, "
                              f"lr_max {workload['lr']}, {workers} workers")
            if chose["batch_size"] != [str(workload["bs"])]:
                task_notes.append(f"hotstart's default batch size {chose['batch_size']} differs from the task's "
                                  f"{workload['bs']}: the contenders did not train alike")
        out[f"tta_{task_name}"] = {"workload": {**workload, "workers": workers}, "target": task["target"],
                                   "seeds": seeds, "runs_each": seeds, "contenders": result, "notes": task_notes}
    return out


def cpu_bf16_flags(py) -> list[str]:
    """This CPU's bf16 flags, as hotstart's ``precision="auto"`` reads them (learner/precision.py)."""
    code = ("from hotstart.learner.precision import BF16_CPU_FLAGS, cpu_flags; "
            "print(' '.join(sorted(cpu_flags() & set(BF16_CPU_FLAGS))))")
    return subprocess.run([py, "-c", code], capture_output=True, text=True, check=True).stdout.split()


# --- the tables ----------------------------------------------------------------------------------
def _secs(x) -> str:
    return "never" if x is None else f"{x:.1f}s"


def table_lines(name: str, comp: dict) -> list[str]:
    """Markdown: time to target with the ratios, then the profile."""
    w, contenders = comp["workload"], comp["contenders"]
    lines = [f"\n### {name}: {w['data']} at {w['size']}x{w['size']}, {w['backbone']}, target accuracy "
             f"{comp['target']} within {w['epochs']} epochs, {comp['seeds']} seeds", "",
             "| contender | time to target, median | per seed | reached | final accuracy, mean (min-max) | "
             + " | ".join(f"/ {r}" for r in REFERENCES) + " |",
             "|---|---:|---|---:|---|" + "---:|" * len(REFERENCES)]
    for label, e in contenders.items():
        per_seed = ", ".join(_secs(r["summary"]["tta_s"]) if r["rc"] == 0 else "failed" for r in e["runs"])
        fa = e.get("final_accuracy")
        final = "-" if not fa else f"{fa['mean']:.3f} ({fa['min']:.3f}-{fa['max']:.3f})"
        ratios = []
        for ref in REFERENCES:
            r, p = e.get("ratio", {}).get(ref), e.get("paired_ratio", {}).get(ref)
            ratios.append("-" if ref == label or (r is None and p is None) else
                          f"{'-' if r is None else f'{r:.2f}x'} ({'-' if p is None else f'{p:.2f}x'})")
        lines.append(f"| {label} | {_secs(e.get('median_tta_s'))} | {per_seed} | {e.get('reached', 0)}/{e.get('n', 0)} "
                     f"| {final} | " + " | ".join(ratios) + " |")
    lines += ["", "Ratios: median time to target over the column's median (in brackets: the median of the "
              "seed-by-seed ratios).", "",
              "| contender | " + " | ".join(PHASES) + " | = time to target (or to the end) |",
              "|---|" + "---:|" * (len(PHASES) + 1)]
    for label, e in contenders.items():
        ph = e.get("profile", {})
        lines.append(f"| {label} | " + " | ".join("-" if ph.get(k) is None else f"{ph[k]:.1f}" for k in PHASES)
                     + f" | {'-' if ph.get('total') is None else format(ph['total'], '.1f')} |")
    return lines  # the runner's table prints the notes
