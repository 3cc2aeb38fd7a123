"""Run the benchmarks: every contender is a separate process, runs alternate, medians are reported.

    python -m benchmarks.run --quick                       # < 10 min on 2 cores
    python -m benchmarks.run                               # the full set (longer)
    python -m benchmarks.run --quick --python "$BENCHVENV/bin/python" --out benchmarks/results/latest-scipy.json
    python -m benchmarks.run --quick --only startup,import # a subset
    python -m benchmarks.run --quick --only deploy         # torch vs ONNX fp32 / int8 vs .pt2 (benchmarks/deploy.py)
    python -m benchmarks.run --quick --only folder         # a folder of JPEGs against the in-memory compute bound
    python -m benchmarks.run --only folder --fastai-python "$FASTAIVENV/bin/python"  # fastai from a venv of its own
    python -m benchmarks.run --quick --only serve          # hotstart run / predict through hotstart serve (benchmarks/serve.py)
    python -m benchmarks.run --only timeseries             # series: hotstart vs a plain loop (benchmarks/timeseries.py)
    python -m benchmarks.run --only tta --fastai-python "$FASTAIVENV/bin/python"  # time to accuracy (benchmarks/tta.py)

How a run is measured (`run_child`): the parent notes ``time.time()`` right before it starts the
child; the child (benchmarks/scripts/*_fit.py) prints JSON-line milestones with its own
``time.time()`` (scripts/_milestones.py), so a milestone's time is measured from process start,
interpreter start-up and imports included. Wall time is the parent's ``perf_counter`` from just
before the start to the child's exit; peak RSS is the child's ``ru_maxrss`` from ``os.wait4``.

Comparisons run their contenders in turn (A B C A B C ...), so slow drifts of a shared machine hit
all of them alike, and report medians and the ratio of each median to the plain PyTorch loop's.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SCRIPTS = HERE / "scripts"
RESULTS = HERE / "results"
ROOT = HERE.parent

# Workload sizes. "startup" is fixed by the issue (FastAI.jl's startup-time workload); the others
# are cut down in --quick so that the whole run fits in 10 minutes on 2 cores.
QUICK = {
    "runs": 5,
    # images are 64x64; the task resizes them to its default 128x128, as the FastAI.jl snippet does
    "startup": {"data": "synthetic", "n": 100, "size": 128, "image_size": 64, "epochs": 2, "bs": 16,
                "backbone": "resnet18"},
    "digits": {"data": "digits", "n": 480, "size": 32, "epochs": 3, "bs": 32, "backbone": "resnet10t"},
    "synthetic128": {"data": "synthetic", "n": 100, "size": 128, "epochs": 3, "bs": 32, "backbone": "resnet10t"},
    "throughput_contenders": ("plain", "hotstart"),
    # JPEG files decoded every epoch (benchmarks/scripts/_data.py: folder_path); --quick: 300 files
    "folder": {"data": "folder", "n": 300, "size": 128, "epochs": 2, "bs": 32, "backbone": "resnet10t"},
    "folder_contenders": ("plain", "hotstart", "fastai", "lightning"),
    "warmup_runs": {"cold": 1, "warm": 1, "eager": 1, "classes7": 1, "after_warmup": 1},
    # the whole built-in warmup takes 209 s of CPU time (1.4 GB peak) on 2 cores, measured with
    # `/usr/bin/time -v python -m hotstart.warmup --cache-dir $(mktemp -d)`: --quick runs only its resnet18 workload
    "warmup_cmd_args": ("--only", "single-resnet18-*"),
    "import_runs": 9,
}
FULL = {
    "runs": 7,
    "startup": QUICK["startup"],
    "digits": {"data": "digits", "n": 0, "size": 32, "epochs": 5, "bs": 32, "backbone": "resnet10t"},
    "synthetic128": {"data": "synthetic", "n": 2000, "size": 128, "epochs": 4, "bs": 32, "backbone": "resnet10t"},
    "throughput_contenders": ("plain", "hotstart", "fastai", "lightning"),
    "folder": {"data": "folder", "n": 2000, "size": 128, "epochs": 3, "bs": 32, "backbone": "resnet10t"},
    "folder_contenders": ("plain", "hotstart", "fastai", "lightning"),
    "warmup_runs": {"cold": 3, "warm": 3, "eager": 3, "classes7": 2, "after_warmup": 2},
    "warmup_cmd_args": (),
    "import_runs": 11,
}
CONTENDERS = ("plain", "hotstart", "fastai", "lightning")  # plain first: it is the baseline
BASELINE = "plain"
TARGETS = {  # from the issues; checked at the end of every run
    "first_epoch_ratio": 1.0,       # hotstart time to first epoch / plain's, at most
    "throughput_ratio": 0.97,       # hotstart steady-state images/s / plain's, at least
    "memory_ratio": 1.1,            # hotstart peak RSS / plain's, at most
    "warm_over_cold": 0.2,          # warm first compiled epoch / cold one, at most
    "import_extra_s": 0.1,          # import hotstart - import torch, at most (seconds)
    "deploy_cold_ratio": 0.25,      # ONNX predictor cold start / `hotstart predict MODEL_DIR`'s, at most
    "serve_first_epoch_ratio": 0.5,  # `hotstart run` (served) time to first epoch / plain `python`'s, at most
    "serve_busy_ratio": 1.0,        # the same with nice-19 loops in the clients' session (--serve-background), at most
    "tta_over_plain": 0.6,          # hotstart's defaults: time to accuracy / the plain fp32 loop's, at most (issue 34)
    "tta_over_fastai": 0.5,         # ... / fastai's, at most
    "tta_over_expert": 1.1,         # ... / the expert loop's, at most
}


# --- one child process ---------------------------------------------------------------------------
EPOCH_MILESTONES = ("train_start", "train_end", "epoch_end")  # one of each per epoch, with its number


def run_child(cmd, env=None, timeout=None) -> dict:
    """Run `cmd` to its end; return wall time, peak RSS, milestones (seconds from process start),
    per-epoch records (``epoch``; ``t``: its end; ``images``; where the child reports them
    ``accuracy``, ``train_start``, ``train_end``, ``data_s``), the child's result record, exit code
    and the tail of its stderr."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start, pc0 = time.time(), time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, env=env, cwd=ROOT)
        timer = threading.Timer(timeout, proc.kill) if timeout else None
        if timer:
            timer.start()
        _, status, usage = os.wait4(proc.pid, 0)  # reaps the child: its own rusage, not all children's
        wall = time.perf_counter() - pc0
        if timer:
            timer.cancel()
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode(errors="replace"), err.read().decode(errors="replace")
    run = {"rc": proc.returncode, "wall_s": wall, "maxrss_mib": usage.ru_maxrss / 1024,  # Linux: KiB
           "cpu_s": usage.ru_utime + usage.ru_stime, "milestones": {}, "epochs": [], "result": None}
    epochs = {}  # epoch number -> its record, filled by the epoch's milestones as they come
    for line in stdout.splitlines():
        if not line.startswith("{"):
            continue
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        if "milestone" in rec:
            t = rec["t"] - start
            if rec["milestone"] in EPOCH_MILESTONES:
                ep = epochs.setdefault(rec["epoch"], {"epoch": rec["epoch"]})
                if rec["milestone"] == "epoch_end":
                    ep.update(t=t, images=rec["images"], **{k: rec[k] for k in ("accuracy",) if k in rec})
                else:
                    ep.update({rec["milestone"]: t, **{k: rec[k] for k in ("data_s",) if k in rec}})
            else:
                run["milestones"][rec["milestone"]] = t
        elif "result" in rec:
            run["result"] = rec["result"]
    run["epochs"] = [epochs[k] for k in sorted(epochs) if "t" in epochs[k]]  # the epochs that ended
    if proc.returncode != 0:
        run["stderr_tail"] = stderr[-2000:]
    run.update(derived(run))
    return run


def derived(run) -> dict:
    """The figures a table shows, from one run's milestones."""
    m, ep = run["milestones"], run["epochs"]
    d = {k: m[k] for k in ("imported", "ready", "first_epoch_end", "fit_end") if k in m}
    if "ready" in m and "first_epoch_end" in m:
        d["first_epoch_s"] = m["first_epoch_end"] - m["ready"]  # the first epoch itself (compile included)
    if len(ep) >= 2:  # steady state: epochs 2..n
        d["steady_ips"] = sum(e["images"] for e in ep[1:]) / (ep[-1]["t"] - ep[0]["t"])
    if run["result"] and "accuracy" in run["result"]:
        d["accuracy"] = run["result"]["accuracy"]
    return d


# --- alternating comparisons ---------------------------------------------------------------------
def compare(name, commands: dict, runs: int, *, envs: dict | None = None, timeout=900, log=print) -> dict:
    """Run each command `runs` times, alternating (A B A B ...); a command that fails is dropped
    after its first failure. Returns {label: {"runs": [...], "median": {...}, "n": ok runs}}."""
    out = {label: {"cmd": [str(c) for c in cmd], "runs": []} for label, cmd in commands.items()}
    failed = set()
    for i in range(runs):
        for label, cmd in commands.items():
            if label in failed:
                continue
            run = run_child(cmd, env=(envs or {}).get(label), timeout=timeout)
            out[label]["runs"].append(run)
            log(f"  [{name}] {label:>10} run {i + 1}/{runs}: rc={run['rc']} wall={run['wall_s']:.1f}s "
                f"first_epoch_end={_fmt(run.get('first_epoch_end'))} rss={run['maxrss_mib']:.0f}MiB")
            if run["rc"] != 0:
                failed.add(label)
                log(f"  [{name}] {label} failed; its stderr ends with:\n{run.get('stderr_tail', '')[-800:]}")
    for label, entry in out.items():
        summarize(entry)
    return out


def summarize(entry: dict) -> dict:
    ok = [r for r in entry["runs"] if r["rc"] == 0]
    entry["n"] = len(ok)
    keys = ("imported", "ready", "first_epoch_end", "first_epoch_s", "fit_end", "wall_s", "maxrss_mib",
            "steady_ips", "accuracy", "cpu_s")
    entry["median"] = {k: statistics.median(r[k] for r in ok) for k in keys if ok and all(k in r for r in ok)}
    return entry


PAIRED_KEYS = ("first_epoch_end", "steady_ips")


def add_ratios(result: dict, baseline: str = BASELINE) -> None:
    """ratio[k] = contender median / baseline median, for every figure both have."""
    base = result.get(baseline, {}).get("median", {})
    base_runs = result.get(baseline, {}).get("runs", [])
    for entry in result.values():
        entry["ratio"] = {k: v / base[k] for k, v in entry.get("median", {}).items() if base.get(k)}
        # runs alternate, so run i of each contender met the same machine load as the plain loop's
        # run i: the median of those run-by-run ratios is less exposed to a slow spell than the
        # ratio of medians (both are reported; the targets are judged on each)
        pairs = [(r, b) for r, b in zip(entry.get("runs", []), base_runs) if r["rc"] == 0 == b["rc"]]
        entry["paired_ratio"] = {k: statistics.median(r[k] / b[k] for r, b in pairs)
                                 for k in PAIRED_KEYS if pairs and all(r.get(k) and b.get(k) for r, b in pairs)}


def _signed(x):
    return "-" if x is None else f"{x:+.3f}s"


def _fmt(x, unit="s"):
    return "-" if x is None else f"{x:.2f}{unit}"


# --- the comparisons -----------------------------------------------------------------------------
def script_cmd(py, contender, workload: dict, *extra):
    args = [f"--{k}={v}" for k, v in workload.items()]
    return [py, str(SCRIPTS / f"{contender}_fit.py"), *args, *extra]


def available(py) -> dict:
    """Which optional contenders and hotstart features the target interpreter has, without importing them."""
    code = ("import importlib.util as u, json; print(json.dumps({m: u.find_spec(m) is not None for m in "
            "['fastai', 'pytorch_lightning', 'torchmetrics', 'scipy', 'hotstart', 'timm']}))")
    have = json.loads(subprocess.run([py, "-c", code], capture_output=True, text=True, check=True).stdout)
    code = ("import importlib.util as u; print(u.find_spec('hotstart.warmup') is not None and "
            "u.find_spec('hotstart.warmup.__main__') is not None)")
    res = subprocess.run([py, "-c", code], capture_output=True, text=True)
    have["hotstart.warmup"] = res.stdout.strip() == "True"
    return have


def versions(py) -> dict:
    code = ("import importlib.metadata as m, json, sys\nv = {'python': sys.version.split()[0]}\n"
            "for d in ['torch', 'torchvision', 'timm', 'hotstart', 'fastai', 'pytorch-lightning', 'torchmetrics', "
            "'scipy']:\n    try: v[d] = m.version(d)\n    except m.PackageNotFoundError: v[d] = None\nprint(json.dumps(v))")
    return json.loads(subprocess.run([py, "-c", code], capture_output=True, text=True, check=True).stdout)


def contender_set(names, have) -> tuple[list, list]:
    """(contenders to run, notes on the ones skipped)."""
    need = {"fastai": "fastai", "lightning": "pytorch_lightning"}
    run, notes = [], []
    for c in names:
        if c in need and not have.get(need[c]):
            notes.append(f"{c} skipped: `{need[c]}` is not importable in this interpreter "
                         f"(pip install -e '.[bench]' for fastai)")
        else:
            run.append(c)
    return run, notes


def bench_fit(name, py, cfg, workload, contenders, have, log) -> dict:
    names, notes = contender_set(contenders, have)
    commands = {c: script_cmd(py, c, workload) for c in names}
    result = compare(name, commands, cfg["runs"], log=log)
    add_ratios(result)
    return {"workload": workload, "contenders": result, "notes": notes, "runs_each": cfg["runs"]}


def hotstart_auto_workers(py) -> int:
    """The DataLoader workers hotstart's ``num_workers="auto"`` starts on this machine for a
    folder of JPEGs (learner/data.py: `workers_for_cores`); the other contenders get as many."""
    code = "from hotstart.learner.data import usable_cores, workers_for_cores; print(workers_for_cores(usable_cores()))"
    return int(subprocess.run([py, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT).stdout)


def bench_folder(py, cfg, have, log, fastai_py=None) -> dict:
    """The folder of JPEGs: the contenders decode, resize and augment every epoch; "bound" is the
    plain loop on the same model and batches with the images decoded and resized once, in
    memory, unaugmented (plain_fit.py --preload): the limit a pipeline can reach.

    hotstart runs with its defaults (``num_workers="auto"``); plain, Lightning and fastai get
    ``--workers`` = the number hotstart chooses here, so every pipeline has the same processes.
    fastai may run from its own interpreter (`fastai_py`, a venv with fastai beside torch)."""
    workload = cfg["folder"]
    fastai_py = fastai_py or py
    have = {**have, "fastai": available(fastai_py)["fastai"]}
    names, notes = contender_set(cfg["folder_contenders"], have)
    workers = hotstart_auto_workers(py)
    # the folder is written once, before any timing (scripts/_data.py: folder_path)
    subprocess.run([py, "-c", f"import _data; _data.folder_path({workload['n']}, {workload.get('classes', 10)})"],
                   cwd=SCRIPTS, check=True)
    commands = {c: script_cmd(fastai_py if c == "fastai" else py, c, workload,
                              *(() if c == "hotstart" else (f"--workers={workers}",))) for c in names}
    commands["bound"] = script_cmd(py, "plain", workload, "--preload")
    result = compare("folder", commands, cfg["runs"], log=log)
    add_ratios(result)
    add_bound_ratios(result)
    used = {str(r["result"].get("num_workers")) for r in result.get("hotstart", {}).get("runs", []) if r.get("result")}
    notes.append(f"workers: hotstart chose {sorted(used)} (training, validation); plain, lightning, fastai ran with --workers={workers}; "
                 f"the bound reads tensors in the main process")
    return {"workload": {**workload, "workers": workers}, "contenders": result, "notes": notes,
            "runs_each": cfg["runs"]}


def add_bound_ratios(result: dict) -> None:
    """bound_ratio: each contender's steady img/s over the compute bound's (run-by-run median)."""
    base_runs = result.get("bound", {}).get("runs", [])
    for entry in result.values():
        pairs = [(r, b) for r, b in zip(entry.get("runs", []), base_runs) if r["rc"] == 0 == b["rc"]
                 and r.get("steady_ips") and b.get("steady_ips")]
        entry["bound_ratio"] = statistics.median(r["steady_ips"] / b["steady_ips"] for r, b in pairs) if pairs else None


def bench_warmup(py, cfg, have, log) -> dict:
    """Compiled first epoch: cold cache, warm cache, 7 classes on the warm cache, eager, and after
    `python -m hotstart.warmup` (whose own duration and peak RSS are measured too)."""
    reps, notes, groups = cfg["warmup_runs"], [], {}
    workload = cfg["startup"]
    tmp = Path(tempfile.mkdtemp(prefix="hotstart-bench-"))

    def fresh_env():
        cache = Path(tempfile.mkdtemp(dir=tmp))
        env = dict(os.environ)
        env["HOTSTART_CACHE_DIR"] = str(cache)
        env["TORCHINDUCTOR_CACHE_DIR"] = str(cache / "torch-default")  # torch's own default can't help
        return env

    def one(label, cmd, env) -> bool:
        run = run_child(cmd, env=env, timeout=1200)
        group = groups.setdefault(label, {"cmd": [str(c) for c in cmd], "runs": []})
        group["runs"].append(run)
        log(f"  [warmup] {label:>15} run {len(group['runs'])}: rc={run['rc']} wall={run['wall_s']:.1f}s "
            f"first epoch={_fmt(run.get('first_epoch_s'))} rss={run['maxrss_mib']:.0f}MiB")
        if run["rc"] != 0:
            log(f"  [warmup] {label} failed; stderr ends with:\n{run.get('stderr_tail', '')[-800:]}")
        return run["rc"] == 0

    compiled = script_cmd(py, "hotstart", workload, "--compile")
    compiled7 = script_cmd(py, "hotstart", {**workload, "classes": 7}, "--compile")
    try:
        for i in range(reps["cold"]):  # (a) cold: a fresh cache each time; (b), (d) reuse the first one
            env = fresh_env()
            ok = one("cold", compiled, env)
            if i == 0 and ok:
                for j in range(reps["warm"]):  # kept apart: the 2nd run on a cache is what a user sees next
                    one(f"warm_run{j + 2}", compiled, env)
                for _ in range(reps["classes7"]):
                    one("warm_7_classes", compiled7, env)
            if not ok:
                notes.append("the cold compiled run failed (stderr_tail in the JSON): is compile=True working?")
                break
        for _ in range(reps["eager"]):  # (c) eager, for reference
            one("eager", script_cmd(py, "hotstart", workload), fresh_env())
        if have.get("hotstart.warmup"):  # (e) the built-in warmup, then a compiled run on what it left
            for _ in range(reps["after_warmup"]):
                env = fresh_env()
                if one("warmup_cmd", [py, "-m", "hotstart.warmup", *cfg["warmup_cmd_args"]], env):
                    status = subprocess.run([py, "-m", "hotstart.warmup", "--status"], env=env, cwd=ROOT,
                                            capture_output=True, text=True, timeout=300)
                    groups["warmup_cmd"]["status"] = (status.stdout + status.stderr)[-3000:]
                    one("after_warmup", compiled, env)
        else:
            notes.append("`python -m hotstart.warmup` is not importable yet: its duration / RSS and the "
                         "'after warmup' run are skipped")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    result = {label: summarize(g) for label, g in groups.items()}
    cold = result.get("cold", {}).get("median", {}).get("first_epoch_s")
    for entry in result.values():
        fe = entry.get("median", {}).get("first_epoch_s")
        entry["ratio"] = {"first_epoch_s": fe / cold} if fe and cold else {}
    return {"workload": workload, "contenders": result, "notes": notes,
            "runs_each": {k: v["n"] for k, v in result.items()}}


def bench_import(py, cfg, log) -> dict:
    commands = {"torch": [py, "-c", "import torch"], "torch+hotstart": [py, "-c", "import torch, hotstart"],
                "workload imports": [py, "-c", "import torch; from hotstart import Image, Label, "
                                     "ImageClassificationSingle, tasklearner"]}
    for cmd in commands.values():  # one untimed run each: the OS file cache is warm for all alike
        run_child(cmd)
    result = compare("import", commands, cfg["import_runs"], log=log)
    add_import_extras(result)
    return {"contenders": result, "importtime": importtime(py), "notes": [], "runs_each": cfg["import_runs"]}


def add_import_extras(result: dict) -> None:
    """extra_s: median minus torch's median; extra_paired_s: median of run-by-run differences (runs
    alternate, so run i of each command met the same machine load: far less noisy)."""
    base, base_runs = result["torch"]["median"].get("wall_s"), result["torch"]["runs"]
    for entry in result.values():  # a command whose every run failed has no median: None
        wall = entry["median"].get("wall_s")
        entry["extra_s"] = wall - base if wall is not None and base is not None else None
        pairs = [r["wall_s"] - b["wall_s"] for r, b in zip(entry["runs"], base_runs) if r["rc"] == 0 == b["rc"]]
        entry["extra_paired_s"] = statistics.median(pairs) if pairs else None


def importtime(py) -> dict:
    """`python -X importtime`: hotstart's own modules, and everything imported beyond `import torch`."""
    def parse(code):
        err = subprocess.run([py, "-X", "importtime", "-c", code], capture_output=True, text=True, cwd=ROOT).stderr
        rows = []
        for line in err.splitlines():
            m = re.match(r"import time:\s+(\d+) \|\s+(\d+) \|( *)(\S+)", line)
            if m:
                rows.append((m.group(4), int(m.group(1)) / 1e6, int(m.group(2)) / 1e6))
        return rows

    torch_mods = {name for name, _, _ in parse("import torch")}
    out = {}
    for label, code in (("import hotstart", "import torch, hotstart"),
                        ("workload imports", "import torch; from hotstart import Image, Label, "
                                             "ImageClassificationSingle, tasklearner")):
        rows = parse(code)
        own = [r for r in rows if r[0] == "hotstart" or r[0].startswith("hotstart.")]
        extra = [r for r in rows if r[0] not in torch_mods]
        out[label] = {"hotstart_self_s": sum(r[1] for r in own), "hotstart_modules": len(own),
                      "beyond_torch_self_s": sum(r[1] for r in extra), "beyond_torch_modules": len(extra),
                      "top_beyond_torch": sorted(((r[0], round(r[2], 4)) for r in extra if "." not in r[0]),
                                                 key=lambda t: -t[1])[:8]}
    return out


# --- targets and the table -----------------------------------------------------------------------
def check_targets(report) -> list[dict]:
    c, rows = report["comparisons"], []

    def ratio(comp, label, key, kind="ratio"):
        return c.get(comp, {}).get("contenders", {}).get(label, {}).get(kind, {}).get(key)

    def row(what, value, target, ok_if):
        ok = None if value is None else ok_if(value, target)
        rows.append({"target": what, "value": value, "limit": target, "met": ok})

    t = TARGETS
    row("startup: hotstart time to first epoch / plain <=", ratio("startup", "hotstart", "first_epoch_end"),
        t["first_epoch_ratio"], lambda v, x: v <= x)
    row("startup: same, median of run-by-run ratios <=", ratio("startup", "hotstart", "first_epoch_end", "paired_ratio"),
        t["first_epoch_ratio"], lambda v, x: v <= x)
    for comp in ("throughput_digits", "throughput_synthetic128"):
        row(f"{comp}: hotstart steady images/s / plain >=", ratio(comp, "hotstart", "steady_ips"),
            t["throughput_ratio"], lambda v, x: v >= x)
        row(f"{comp}: same, median of run-by-run ratios >=", ratio(comp, "hotstart", "steady_ips", "paired_ratio"),
            t["throughput_ratio"], lambda v, x: v >= x)
    for comp in ("startup", "throughput_digits", "throughput_synthetic128"):
        row(f"{comp}: hotstart peak RSS / plain <=", ratio(comp, "hotstart", "maxrss_mib"),
            t["memory_ratio"], lambda v, x: v <= x)
    w = c.get("warmup", {}).get("contenders", {})
    row("warmup: warm (2nd run on the cache) first compiled epoch / cold <=", w.get("warm_run2", {}).get("ratio", {}).get("first_epoch_s"),
        t["warm_over_cold"], lambda v, x: v <= x)
    row("warmup: after `python -m hotstart.warmup` / cold <=",
        w.get("after_warmup", {}).get("ratio", {}).get("first_epoch_s"), t["warm_over_cold"], lambda v, x: v <= x)
    imp = c.get("import", {}).get("contenders", {}).get("torch+hotstart", {}).get("extra_paired_s")
    row("import: `import torch, hotstart` - `import torch` (s, paired median) <=", imp, t["import_extra_s"], lambda v, x: v <= x)
    dep = c.get("deploy", {}).get("contenders", {}).get("onnx", {})
    row("deploy: ONNX predictor cold start / hotstart predict MODEL_DIR <=", dep.get("ratio", {}).get("cold_start_s"),
        t["deploy_cold_ratio"], lambda v, x: v <= x)
    row("deploy: same, median of run-by-run ratios <=", dep.get("paired_ratio", {}).get("cold_start_s"),
        t["deploy_cold_ratio"], lambda v, x: v <= x)
    busy = c.get("serve", {}).get("background")
    serve_limit = t["serve_busy_ratio"] if busy else t["serve_first_epoch_ratio"]
    for label in ("plain_served", "hotstart_served"):
        row(f"serve: {label} time to first epoch / plain{' (busy session)' if busy else ''} <=",
            ratio("serve", label, "first_epoch_end"), serve_limit, lambda v, x: v <= x)
        row("serve: same, median of run-by-run ratios <=", ratio("serve", label, "first_epoch_end", "paired_ratio"),
            serve_limit, lambda v, x: v <= x)
    for comp in (name for name in c if name.startswith("tta_")):
        for ref in ("plain", "fastai", "expert"):
            for kind, how in (("ratio", "ratio of medians"), ("paired_ratio", "seed-by-seed median")):
                row(f"{comp}: hotstart time to accuracy / {ref} ({how}) <=", ratio(comp, "hotstart", ref, kind),
                    t[f"tta_over_{ref}"], lambda v, x: v <= x)
    return rows


COLUMNS = (("imported", "imported", "s"), ("ready", "ready", "s"), ("first_epoch_end", "1st epoch end", "s"),
           ("first_epoch_s", "1st epoch", "s"), ("fit_end", "fit end", "s"), ("wall_s", "wall", "s"),
           ("cpu_s", "cpu", "s"), ("steady_ips", "img/s", ""), ("maxrss_mib", "peak RSS", "M"),
           ("accuracy", "acc", ""))


def table(report) -> str:
    lines = []
    for name, comp in report["comparisons"].items():
        lines.append(f"\n== {name} ==  {json.dumps(comp.get('workload', ''))}  runs: {comp.get('runs_each')}")
        contenders = comp.get("contenders", {})
        if name.startswith("tta_"):
            from .tta import table_lines

            lines += table_lines(name, comp)
        elif name == "deploy":
            from .deploy import table_lines

            lines += table_lines(comp)
        elif name == "serve":
            from .serve import table_lines

            lines += table_lines(comp)
        elif name == "import":
            for label, e in contenders.items():
                lines.append(f"  {label:<18} median {e['median'].get('wall_s', float('nan')):.3f}s  "
                             f"({_signed(e['extra_s'])} over torch; paired median {_signed(e.get('extra_paired_s'))})"
                             f"  peak RSS {e['median'].get('maxrss_mib', 0):.0f} MiB  n={e['n']}")
            for label, it in comp.get("importtime", {}).items():
                lines.append(f"  -X importtime, {label}: hotstart's own modules {it['hotstart_self_s']:.3f}s "
                             f"({it['hotstart_modules']} modules); everything beyond torch "
                             f"{it['beyond_torch_self_s']:.3f}s ({it['beyond_torch_modules']} modules); "
                             f"largest: {it['top_beyond_torch'][:5]}")
        else:
            cols = [c for c in COLUMNS if any(c[0] in e.get("median", {}) for e in contenders.values())]
            lines.append("  " + f"{'contender':<16}" + "".join(f"{h:>14}" for _, h, _ in cols) + f"{'n':>4}")
            for label, e in contenders.items():
                med, rat = e.get("median", {}), e.get("ratio", {})
                cells = []
                for key, _, unit in cols:
                    v = med.get(key)
                    if v is None:
                        cells.append(f"{'-':>14}")
                        continue
                    txt = f"{v:.0f}{unit}" if unit == "M" or key == "steady_ips" else f"{v:.2f}{unit}"
                    r = rat.get(key)
                    if r is not None and key != "accuracy" and label != BASELINE and (name != "warmup" or label != "cold"):
                        txt += f" {r:.2f}x"
                    cells.append(f"{txt:>14}")
                lines.append("  " + f"{label:<16}" + "".join(cells) + f"{e.get('n', 0):>4}")
            paired = [f"{label} " + ", ".join(f"{k} {v:.2f}x" for k, v in e["paired_ratio"].items())
                      for label, e in contenders.items() if label != BASELINE and e.get("paired_ratio")]
            if paired:
                lines.append("  run-by-run ratios to plain (median): " + "; ".join(paired))
            bound = [f"{label} {e['bound_ratio']:.2f}x" for label, e in contenders.items()
                     if label != "bound" and e.get("bound_ratio") is not None]
            if bound:
                lines.append("  steady img/s over the compute bound's (run-by-run median): " + "; ".join(bound))
        for note in comp.get("notes", []):
            lines.append(f"  note: {note}")
    lines.append("\n== targets ==")
    for t in report["targets"]:
        met = {True: "met", False: "NOT MET", None: "not measured"}[t["met"]]
        val = "-" if t["value"] is None else f"{t['value']:.3f}"
        lines.append(f"  {t['target']:<62} {t['limit']:<6} value {val:<8} {met}")
    return "\n".join(lines)


def retable(report) -> str:
    """A saved report's table, with ratios and targets recomputed by this version of the runner."""
    for name, comp in report["comparisons"].items():
        if name not in ("warmup", "import", "deploy") and not name.startswith("tta_"):
            add_ratios(comp["contenders"])
        if name == "folder":
            add_bound_ratios(comp["contenders"])
    if "import" in report["comparisons"]:
        add_import_extras(report["comparisons"]["import"]["contenders"])
    report["targets"] = check_targets(report)
    return table(report)


# --- main ----------------------------------------------------------------------------------------
def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.run", description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="smaller throughput workloads, fewer warmup runs")
    ap.add_argument("--python", default=sys.executable, help="interpreter the contenders run with")
    ap.add_argument("--fastai-python", default=None,
                    help="interpreter of the fastai contender of the folder and tta comparisons (default: --python), e.g. a venv "
                         "made with --system-site-packages that adds fastai")
    ap.add_argument("--out", default=None,
                    help="where the JSON goes (default: benchmarks/results/latest.json; tta.json for --only tta)")
    ap.add_argument("--only", default="startup,throughput,warmup,import",
                    help="comma-separated subset of: startup, throughput (or throughput_digits, "
                         "throughput_synthetic128), warmup, import, folder (not in the default set: a folder of JPEGs against "
                         "the in-memory compute bound), deploy (not in the default set: it trains, "
                         "exports and compiles a .pt2 first), serve (not in the default set: it starts a server), "
                         "timeseries (InceptionTime on ItalyPowerDemand, hotstart vs a plain loop), "
                         "tta (not in the default set: time to accuracy, benchmarks/tta.py)")
    ap.add_argument("--runs", type=int, default=None, help="override the runs per contender (at least 5 advised)")
    ap.add_argument("--startup-bs", type=int, default=None,
                    help="batch size of the startup workload (also the warmup comparison's); default 16, "
                         "the FastAI.jl snippet's; 64 is tasklearner's default")
    ap.add_argument("--serve-threads", default="1",
                    help="serve: OMP_NUM_THREADS of the server and every contender (default 1; 'default' leaves it unset)")
    ap.add_argument("--serve-background", type=int, default=0, metavar="N",
                    help="serve: N busy loops at nice 19 in the clients' session during the startup runs (a busy machine)")
    ap.add_argument("--serve-forced", action="store_true",
                    help="serve: add hotstart_served_always (HOTSTART_SERVER=always: served even beside other work)")
    ap.add_argument("--tta-tasks", default=None, help="tta: comma-separated subset of its tasks (digits, jpegdigits)")
    ap.add_argument("--tta-contenders", default=None,
                    help="tta: comma-separated subset of plain, expert, hotstart, fastai, lightning")
    ap.add_argument("--tta-smoke", action="store_true",
                    help="tta: tiny tasks of 1 epoch (every contender end to end; the numbers mean nothing)")
    ap.add_argument("--table", metavar="JSON", help="print the table and targets of a saved result (runs nothing)")
    args = ap.parse_args(argv)
    if args.table:
        print(retable(json.loads(Path(args.table).read_text())))
        return 0
    cfg = dict(QUICK if args.quick else FULL)
    if args.runs:
        cfg["runs"] = cfg["import_runs"] = args.runs
    if args.startup_bs:
        cfg["startup"] = {**cfg["startup"], "bs": args.startup_bs}
    cfg["serve"] = {"threads": args.serve_threads, "background": args.serve_background, "forced": args.serve_forced}
    only = {s.strip() for s in args.only.split(",") if s.strip()}
    py = args.python
    log = lambda msg: print(msg, file=sys.stderr, flush=True)  # noqa: E731

    have = available(py)
    report = {"date": datetime.datetime.now().isoformat(timespec="seconds"), "mode": "quick" if args.quick else "full",
              "python": py, "versions": versions(py), "available": have,
              "machine": {"cpus": os.cpu_count(), "platform": platform.platform(), "processor": platform.machine(),
                          "loadavg_start": os.getloadavg()},
              "config": cfg, "comparisons": {}}
    t0 = time.perf_counter()
    if "startup" in only:
        log("startup: time to first epoch and to fit end")
        report["comparisons"]["startup"] = bench_fit("startup", py, cfg, cfg["startup"], CONTENDERS, have, log)
    for key in ("digits", "synthetic128"):
        if "throughput" in only or f"throughput_{key}" in only:
            log(f"throughput: {key}")
            comp = bench_fit(f"throughput_{key}", py, cfg, cfg[key], cfg["throughput_contenders"], have, log)
            skipped = [c for c in CONTENDERS if c not in cfg["throughput_contenders"]]
            if skipped:
                comp["notes"].append(f"{', '.join(skipped)} not run in --quick (time); the full run includes them")
            report["comparisons"][f"throughput_{key}"] = comp
    if "folder" in only:
        log("folder: JPEG files decoded every epoch, against the in-memory compute bound")
        report["comparisons"]["folder"] = bench_folder(py, cfg, have, log, fastai_py=args.fastai_python)
    if "warmup" in only:
        log("warmup: cold / warm compiled first epoch")
        report["comparisons"]["warmup"] = bench_warmup(py, cfg, have, log)
    if "import" in only:
        log("import: import torch vs import torch, hotstart")
        report["comparisons"]["import"] = bench_import(py, cfg, log)
    if "timeseries" in only:
        from .timeseries import bench_timeseries

        log("timeseries: hotstart vs a plain loop, InceptionTime on ItalyPowerDemand")
        report["comparisons"]["timeseries"] = bench_timeseries(py, cfg, log, compare, add_ratios, SCRIPTS)
    if "tta" in only:
        from . import tta

        log("tta: time to accuracy, hotstart's defaults against a plain loop, an expert's loop, fastai, Lightning")
        tasks = tta.SMOKE_TASKS if args.tta_smoke else tta.TASKS
        if args.tta_tasks:
            unknown = set(args.tta_tasks.split(",")) - set(tasks)
            if unknown:
                ap.error(f"--tta-tasks: unknown {sorted(unknown)}; the tasks are {', '.join(tasks)}")
            tasks = {k: tasks[k] for k in args.tta_tasks.split(",")}
        contenders = args.tta_contenders.split(",") if args.tta_contenders else tta.CONTENDERS
        if set(contenders) - set(tta.CONTENDERS):
            ap.error(f"--tta-contenders: unknown {sorted(set(contenders) - set(tta.CONTENDERS))}; "
                     f"the contenders are {', '.join(tta.CONTENDERS)}")
        report["comparisons"].update(tta.bench_tta(
            py, log, run_child=run_child, available=available, auto_workers=hotstart_auto_workers, scripts=SCRIPTS,
            fastai_py=args.fastai_python, seeds=args.runs or 3, tasks=tasks, contenders=contenders))
    if "deploy" in only:
        from .deploy import bench_deploy

        log("deploy: cold start, latency and throughput of torch / ONNX fp32 / ONNX int8 / .pt2")
        report["comparisons"]["deploy"] = bench_deploy(py, cfg, log, compare, SCRIPTS)
    if "serve" in only:
        from .serve import bench_serve

        log("serve: time to first epoch with `hotstart run` through `hotstart serve`, and `hotstart predict`")
        report["comparisons"]["serve"] = bench_serve(py, cfg, log, compare, script_cmd, add_ratios)
    report["total_s"] = time.perf_counter() - t0
    report["machine"]["loadavg_end"] = os.getloadavg()
    report["targets"] = check_targets(report)

    out = Path(args.out or RESULTS / ("tta.json" if only == {"tta"} else "latest.json"))
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.{os.getpid()}.tmp")  # atomically: a reader never sees half a report
    tmp.write_text(json.dumps(report, indent=1))
    os.replace(tmp, out)
    print(f"python: {py}  versions: {report['versions']}")
    print(table(report))
    print(f"\ntotal {report['total_s']:.0f}s; JSON: {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
