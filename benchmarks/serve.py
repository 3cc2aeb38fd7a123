"""The ``serve`` comparison: time to first epoch through ``hotstart serve`` (``--only serve``).

    python -m benchmarks.run --only serve             # ~5 min on 2 quiet cores

A server with the default preload is started in a temporary runtime folder (untimed, and its idle
memory read from ``/proc/PID/smaps_rollup``). Then the FastAI.jl startup workload, alternating:

- ``plain`` / ``plain_served``: ``python scripts/plain_fit.py ...`` vs ``hotstart run scripts/plain_fit.py ...``;
- ``hotstart`` / ``hotstart_served``: the same for ``scripts/hotstart_fit.py``.

Milestones are seconds from the start of the process the runner launches (the client, for a
served run), so a served ``first_epoch_end`` includes the client's own start-up and the fork.
A sampler reads every child of the server's ``smaps_rollup`` while it runs: the largest Private
(pages no other process shares: what a run costs on top of the server) and PSS.

Then ``hotstart predict MODEL_DIR one.png`` (a small CNN on digits, saved by ``hotstart train``)
served vs ``--no-server``: wall time of the whole command. Every process runs with
OMP_NUM_THREADS=1, the server too (see benchmarks/deploy.py for why on a shared 2-core machine),
unless ``--serve-threads default`` leaves it unset (torch's default threads, everywhere alike).

A busy machine (``--serve-background N``): N busy loops at ``nice -n 19`` run in this process's
session, the clients' session, during the runs (not while the server starts or predict's model
trains), as a niced job started from the same terminal would. Under the kernel's sched_autogroup
they yield to a direct run but would share the CPU equally with a served one, a session of its
own, so the client runs the script itself (hotstart/serve/autogroup.py): ``served_runs`` counts
the runs of the startup workload the server actually took. ``hotstart predict``, mostly
start-up, is served anyway (hotstart/serve/client.py: MOSTLY_START_UP). ``--serve-forced`` adds
``hotstart_served_always`` (HOTSTART_SERVER=always: served whatever runs beside it), to show what
serving would cost there.

    python -m benchmarks.run --quick --only serve --serve-threads default                          # quiet
    python -m benchmarks.run --quick --only serve --serve-threads default --serve-background 2 --serve-forced  # busy
"""
from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _hotstart_cmd(py) -> list[str]:
    """The console script next to `py` (what a user types), else ``py -m hotstart``."""
    exe = Path(py).parent / "hotstart"
    return [str(exe)] if exe.exists() else [py, "-m", "hotstart"]


def _smaps(pid) -> dict | None:
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            kib = {p[0].rstrip(":"): int(p[1]) for p in (l.split() for l in f) if len(p) == 3}
    except OSError:
        return None
    return {"rss_mib": kib.get("Rss", 0) / 1024, "pss_mib": kib.get("Pss", 0) / 1024,
            "private_mib": (kib.get("Private_Clean", 0) + kib.get("Private_Dirty", 0)) / 1024}


class ChildMemory:
    """Samples the server's children every 0.2 s: the peak Private and PSS seen per child."""

    def __init__(self, server_pid: int):
        self.server_pid, self.peaks, self._stop = server_pid, {}, threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()

    def _run(self):
        while not self._stop.wait(0.2):
            try:
                with open(f"/proc/{self.server_pid}/task/{self.server_pid}/children") as f:
                    kids = f.read().split()
            except OSError:
                continue
            for pid in kids:
                m = _smaps(pid)
                if m:
                    p = self.peaks.setdefault(pid, {"private_mib": 0.0, "pss_mib": 0.0})
                    p["private_mib"] = max(p["private_mib"], m["private_mib"])
                    p["pss_mib"] = max(p["pss_mib"], m["pss_mib"])


def _start_server(py, env, log) -> dict:
    t = time.perf_counter()
    proc = subprocess.run([py, "-m", "hotstart", "serve", "--idle", "1800"], env=env, capture_output=True, text=True,
                          cwd=ROOT)
    if proc.returncode != 0:
        raise RuntimeError(f"hotstart serve did not start:\n{proc.stderr[-2000:]}")
    log(f"  [serve] {proc.stdout.strip()} ({time.perf_counter() - t:.1f} s)")
    status = subprocess.run([py, "-c", "from hotstart.serve import daemon; import json, sys; "
                             "print(json.dumps(daemon.ask({'status': True})[0]['status']))"],
                            env=env, capture_output=True, text=True, check=True)
    return json.loads(status.stdout)


class BackgroundLoops:
    """`n` busy Python loops at nice 19 in this process's session (so in its clients' autogroup),
    for the duration of a ``with``."""

    def __init__(self, py, n: int):
        self.py, self.n, self.procs = py, n, []

    def __enter__(self):
        for _ in range(self.n):
            self.procs.append(subprocess.Popen(["nice", "-n", "19", self.py, "-c", "while True: pass"],
                                               stdin=subprocess.DEVNULL))
        return self

    def __exit__(self, *exc):
        for proc in self.procs:
            proc.kill()
        for proc in self.procs:
            proc.wait()


SERVE_OPTIONS = {"threads": "1", "background": 0, "forced": False}


def _served_count(py, env) -> int:
    """How many runs the benchmark's server has taken so far (``hotstart serve --status``'s count)."""
    status = subprocess.run([py, "-c", "from hotstart.serve import daemon; print(daemon.ask({'status': True})[0]['status']['served'])"],
                            env=env, capture_output=True, text=True, check=True)
    return int(status.stdout)


def bench_serve(py, cfg, log, compare, script_cmd, add_ratios) -> dict:
    opts = {**SERVE_OPTIONS, **cfg.get("serve", {})}
    runtime = Path(tempfile.mkdtemp(prefix="hs-bench-", dir="/tmp"))
    env = {**os.environ, "HOTSTART_RUNTIME_DIR": str(runtime), "OMP_NUM_THREADS": str(opts["threads"])}
    if opts["threads"] == "default":
        env.pop("OMP_NUM_THREADS")
    env.pop("HOTSTART_SERVER", None)
    hs = _hotstart_cmd(py)
    out = {"workload": cfg["startup"], "runs_each": cfg["runs"], "threads": opts["threads"],
           "background": opts["background"], "loadavg_start": os.getloadavg(), "notes": []}
    try:
        status = _start_server(py, env, log)
        time.sleep(2)  # let the server settle before reading its idle memory
        out["server"] = {"pid": status["pid"], "preload_s": status["preload_s"], "modules": status["modules"],
                         "idle_memory": _smaps(status["pid"])}
        commands = {}
        for contender in ("plain", "hotstart"):
            cmd = script_cmd(py, contender, cfg["startup"])
            commands[contender] = cmd
            commands[f"{contender}_served"] = [*hs, "run", *cmd[1:]]
        envs = {k: env for k in commands}
        if opts["forced"]:
            commands["hotstart_served_always"] = commands["hotstart_served"]
            envs["hotstart_served_always"] = {**env, "HOTSTART_SERVER": "always"}
        served_before = _served_count(py, env)
        with BackgroundLoops(py, opts["background"]), ChildMemory(status["pid"]) as mem:
            result = compare("serve", commands, cfg["runs"], envs=envs, log=log)
        out["served_runs"] = {"served": _served_count(py, env) - served_before,
                              "asked": sum(e["n"] for k, e in result.items() if "_served" in k)}
        out["loadavg_end"] = os.getloadavg()
        add_ratios(result)
        out["contenders"] = result
        peaks = list(mem.peaks.values())
        out["child_memory_peak"] = {k: statistics.median(p[k] for p in peaks) for k in ("private_mib", "pss_mib")} if peaks else None
        out["notes"].append("served runs: `peak RSS` is the client's; the run's own memory is child_memory_peak "
                            "(median over runs of each child's peak Private / PSS)")
        out["predict"] = _bench_predict(py, hs, env, cfg["runs"], compare, log, opts["background"])
    finally:
        subprocess.run([py, "-m", "hotstart", "serve", "--stop"], env=env, capture_output=True)
        time.sleep(1)
        shutil.rmtree(runtime, ignore_errors=True)
    return out


def _bench_predict(py, hs, env, runs, compare, log, background: int) -> dict:
    with tempfile.TemporaryDirectory(prefix="hotstart-serve-bench-") as tmp:
        model = Path(tmp) / "run"
        subprocess.run([py, "-m", "hotstart", "train", "--no-server", "--epochs", "1", "--size", "16", "16",
                        "--out", str(model), "--quiet"], env=env, check=True, capture_output=True, cwd=ROOT)
        img = Path(tmp) / "one.png"
        subprocess.run([py, "-c", "import numpy as np, sys; from PIL import Image; "
                        "a = np.load('hotstart/datasets/data/digits.npz')['images'][0]; Image.fromarray(a).save(sys.argv[1])",
                        str(img)], check=True, cwd=ROOT)
        commands = {"predict": [*hs, "predict", "--no-server", str(model / "model"), str(img)],
                    "predict_served": [*hs, "predict", str(model / "model"), str(img)]}
        with BackgroundLoops(py, background):
            res = compare("serve-predict", commands, runs, envs={k: env for k in commands}, log=log)
    base = res["predict"]["median"].get("wall_s")
    served = res["predict_served"]["median"].get("wall_s")
    pairs = [s["wall_s"] / b["wall_s"] for s, b in zip(res["predict_served"]["runs"], res["predict"]["runs"])
             if s["rc"] == 0 and b["rc"] == 0]
    return {"wall_s": {"unserved": base, "served": served}, "ratio": served / base if base and served else None,
            "paired_ratio": statistics.median(pairs) if pairs else None, "runs": res}


def table_lines(comp) -> list[str]:
    lines = []
    if comp.get("background") or comp.get("threads", "1") != "1":
        lines.append(f"  OMP_NUM_THREADS={comp.get('threads', '1')}; {comp.get('background', 0)} nice-19 busy loop(s) in "
                     f"the clients' session during the startup runs; load {comp['loadavg_start'][0]:.1f} at the start")
    sr = comp.get("served_runs")
    if sr:
        lines.append(f"  runs the server took: {sr['served']} of the {sr['asked']} sent to it (the rest ran in the client)")
    s = comp.get("server", {})
    m = s.get("idle_memory") or {}
    lines.append(f"  server: preloaded {s.get('modules')} modules in {s.get('preload_s', 0):.1f} s; idle RSS "
                 f"{m.get('rss_mib', 0):.0f} MiB, PSS {m.get('pss_mib', 0):.0f} MiB, private {m.get('private_mib', 0):.0f} MiB")
    cm = comp.get("child_memory_peak")
    if cm:
        lines.append(f"  each served run's own memory (peak, median over runs): private {cm['private_mib']:.0f} MiB, "
                     f"PSS {cm['pss_mib']:.0f} MiB")
    lines.append(f"  {'contender':<18}{'imported':>10}{'ready':>10}{'1st epoch end':>15}{'ratio':>8}{'paired':>8}{'wall':>9}{'n':>4}")
    for label, e in comp.get("contenders", {}).items():
        med, rat, pr = e.get("median", {}), e.get("ratio", {}), e.get("paired_ratio", {})
        f = lambda v, u="s": "-" if v is None else f"{v:.2f}{u}"  # noqa: E731
        lines.append(f"  {label:<18}{f(med.get('imported')):>10}{f(med.get('ready')):>10}{f(med.get('first_epoch_end')):>15}"
                     f"{f(rat.get('first_epoch_end'), 'x'):>8}{f(pr.get('first_epoch_end'), 'x'):>8}"
                     f"{f(med.get('wall_s')):>9}{e.get('n', 0):>4}")
    p = comp.get("predict")
    if p:
        lines.append(f"  hotstart predict MODEL_DIR one.png: unserved {p['wall_s']['unserved']:.2f} s, served "
                     f"{p['wall_s']['served']:.2f} s ({p['ratio']:.2f}x; run-by-run {p['paired_ratio']:.2f}x)")
    return lines
