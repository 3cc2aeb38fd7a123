"""`run`: the warmup itself. Each workload fits a tiny model on mock data, compiled, so the
compile cache is filled; each is timed, guarded, and reported; none can fail the install.

    python -m hotstart.warmup            # all built-in workloads (CPU; CUDA too when present)
    python -m hotstart.warmup --status   # what is warm for this torch version and device
"""
from __future__ import annotations

import resource
import sys
import time
import traceback
from dataclasses import dataclass, field

import numpy as np

from ..compile_cache.cache import cache_dir as resolve_cache_dir
from ..compile_cache.quiet import quiet_torch_notices
from ..errors import UsageError
from ..interactive import draws_bars
from .budget import over_budget
from .guard import SideEffectGuard
from .workloads import Registry, Workload, builtin_workloads

DEFAULT_MAX_MEMORY_MB = 3072


@dataclass
class WorkloadResult:
    """How one workload of a warmup went: a row of `WarmupReport.table`.

    Attributes:
        name: the workload's name.
        status: ``"ok"`` (its configuration is now warm), ``"failed"`` (an error, reported, never
            fatal: the next workloads still run), ``"skipped"`` (the budget was used up or its
            expected duration does not fit what is left, the memory cap was reached, or it needs a
            CUDA device this machine lacks) or ``"cut"`` (the budget ran out while it ran; `error`
            says what it kept).
        seconds: how long it ran: task, mock data, learner, compile and a few training steps (and,
            for a compiled workload, a few eager steps of the same configuration, timed).
        key: the compile-cache key recorded in the manifest (None when it compiled nothing).
        error: why it failed or was skipped, one line (at most 200 characters).
        detail: the failure's full traceback (not in the repr).
        side_effects: the global state it changed and the warmup's guard put back (should be
            empty: a workload must leave the process as it found it).
    """

    name: str
    status: str                  # "ok", "failed", "skipped", "cut"
    seconds: float = 0.0
    key: str | None = None       # manifest key (what is now warm)
    error: str | None = None     # one line; the traceback goes to `detail`
    detail: str | None = field(default=None, repr=False)
    side_effects: list[str] = field(default_factory=list)  # global state it changed, put back by the guard


@dataclass
class WarmupReport:
    """What a warmup run returns (``hotstart.warmup.run``): a result per workload, and what the
    run cost. ``python -m hotstart.warmup`` prints its `table`, and with ``--strict`` exits 1
    unless `ok` (without it, 0: a warmup never breaks an install).

    Attributes:
        results: one `WorkloadResult` per selected workload, in the order they ran.
        seconds: the whole run's wall time.
        peak_rss_mb: the process's peak resident memory, in MB (``getrusage``'s ``ru_maxrss``):
            what the ``max_memory_mb`` cap is checked against between workloads.
        cache_dir: the compile cache folder that was warmed.
        side_effects: what the guards had to put back, as ``"workload: what"`` (should be empty).
        repaired: one line per configuration whose recorded compiled files were damaged, which the
            run deleted before its workloads ran (compile_cache/repair.py), so they compile again.
    """

    results: list[WorkloadResult]
    seconds: float
    peak_rss_mb: float
    cache_dir: str
    side_effects: list[str]      # what the guards had to put back, "workload: what" (should be empty)
    repaired: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when no workload failed (skipped ones do not count against it)."""
        return all(r.status != "failed" for r in self.results)

    def table(self) -> str:
        """The report as text: a row per workload (name, status, seconds, note), then the totals
        (time, peak memory, cache folder) and any side effect put back."""
        width = max([len(r.name) for r in self.results] + [8])
        lines = list(self.repaired)
        lines.append(f"{'workload':<{width}}  {'status':<8} {'seconds':>8}  note")
        for r in self.results:
            lines.append(f"{r.name:<{width}}  {r.status:<8} {r.seconds:>8.1f}  {r.error or ''}")
        lines.append(f"total {self.seconds:.1f} s, peak memory {self.peak_rss_mb:.0f} MB, cache {self.cache_dir}")
        for effect in self.side_effects:
            lines.append(f"put back a side effect: {effect}")
        return "\n".join(lines)


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # KiB on Linux


def select(registries, only=None) -> list[Workload]:
    """The workloads `only`'s patterns match (all without `only`); each pattern must match one, so
    a misspelt name is refused rather than silently dropped beside names that match."""
    workloads = [w for reg in registries for w in reg]
    unmatched = [p for p in (only or ()) if not any(w.matches([p]) for w in workloads)]
    if unmatched:
        raise UsageError(f"--only {unmatched} matches no workload; known: {[w.name for w in workloads]}")
    return [w for w in workloads if w.matches(only)]


def run(only=None, budget: float | None = None, cache_dir=None, *, registries=None, modules=(),
        include_builtin: bool = True, max_memory_mb: float = DEFAULT_MAX_MEMORY_MB, progress: bool = True,
        seed: int = 0) -> WarmupReport:
    """Run the workloads in this process and return a report.

    `only`: name patterns (fnmatch); `budget`: seconds. A workload starts only if its expected
    duration fits in what is left (a compiled one: its last recorded run, else a cold compile's
    ~27 s; warmup/budget.py), otherwise it is skipped, saying so; a running fit is cancelled at its
    next batch (a compile in progress cannot be stopped), and what it compiled stays in the cache.
    So the run overruns the budget by at most one batch, or by a compile whose estimate was low;
    `cache_dir`:
    defaults to ``HOTSTART_CACHE_DIR`` or the platformdirs user cache. `modules`: importable
    names of user modules whose `Registry` objects add workloads.
    """
    import importlib

    from .workloads import registries_in_module

    regs = list(registries) if registries is not None else []
    if include_builtin and registries is None:
        regs.insert(0, Registry(builtin_workloads()))
    for name in modules:
        found = registries_in_module(importlib.import_module(name))
        if not found:
            raise UsageError(f"module {name!r} defines no hotstart.warmup.Registry")
        regs.extend(found)
    workloads = select(regs, only)
    root = resolve_cache_dir(cache_dir)
    start = time.perf_counter()
    results: list[WorkloadResult] = []
    problem = _unwritable(root)
    if problem is not None:  # never fatal: every workload is reported as failed, and the caller decides
        results = [WorkloadResult(w.name, "failed", error=problem) for w in workloads]
        return WarmupReport(results, time.perf_counter() - start, peak_rss_mb(), str(root), [])
    from ..compile_cache.repair import repair

    repaired = [r.line() for r in repair(root)]  # damaged configurations are cold: their workloads recompile them
    bar = None
    if progress and draws_bars(sys.stderr):
        from tqdm.auto import tqdm

        bar = tqdm(total=len(workloads), desc="warmup", file=sys.stderr, leave=False)
    elif progress:  # a log or a pipe: one plain line per workload (`_run_all`), not \r updates
        bar = _PlainLines(len(workloads), sys.stderr)
    with SideEffectGuard() as guard:
        import os

        from ..compile_cache.cache import ENV_VAR, inductor_cache

        saved_env = os.environ.get(ENV_VAR)
        os.environ[ENV_VAR] = str(root)  # so tasklearner(compile=True) compiles into this cache
        try:
            with inductor_cache(root), quiet_torch_notices():  # torch's first import of _dynamo (optimizers do it) sets Inductor env vars
                _run_all(workloads, root, budget, max_memory_mb, seed, start, results, bar)
        finally:
            if saved_env is None:
                os.environ.pop(ENV_VAR, None)
            else:
                os.environ[ENV_VAR] = saved_env
    if bar is not None:
        bar.close()
    effects = [f"{r.name}: {e}" for r in results for e in r.side_effects] + [f"warmup: {e}" for e in guard.changed]
    return WarmupReport(results, time.perf_counter() - start, peak_rss_mb(), str(root), effects, repaired)


def _unwritable(root) -> str | None:
    """Why the cache folder cannot take the compile cache (one line), or None if it can."""
    import tempfile

    from ..compile_cache.cache import inductor_dir
    from ..compile_cache.manifest import mark_cache

    try:
        target = inductor_dir(root)
        target.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=target):
            pass
        mark_cache(root)  # the folder is hotstart's compile cache from now on (what --clear checks)
    except OSError as e:
        return f"cache folder {root} is not writable ({e.strerror or e}); nothing was warmed"
    return None


class _PlainLines:
    """The bar's interface for a non-terminal: a flushed line as each workload starts."""

    def __init__(self, total: int, stream):
        self.total, self.stream, self.done = total, stream, 0

    def set_postfix_str(self, name: str) -> None:
        print(f"warmup {self.done + 1}/{self.total}: {name}", file=self.stream, flush=True)

    def update(self, n: int) -> None:
        self.done += n

    def close(self) -> None:
        pass


def _run_all(workloads, root, budget, max_memory_mb, seed, start, results, bar):
    for w in workloads:
        if bar is not None:
            bar.set_postfix_str(w.name)
        elapsed = time.perf_counter() - start
        too_long = None if budget is None else over_budget(w, root, budget - elapsed)
        if budget is not None and elapsed >= budget:
            results.append(WorkloadResult(w.name, "skipped", error=f"budget of {budget:g} s used up"))
        elif too_long is not None:  # a compile cannot be stopped midway: do not start one that cannot fit
            results.append(WorkloadResult(w.name, "skipped", error=too_long))
        elif peak_rss_mb() > max_memory_mb:
            results.append(WorkloadResult(w.name, "skipped", error=f"memory cap {max_memory_mb:.0f} MB reached"))
        else:
            deadline = None if budget is None else start + budget
            with SideEffectGuard() as guard:  # per workload: the report names the one that misbehaved
                result = _run_one(w, root, deadline, seed)
            result.side_effects = guard.changed
            results.append(result)
        if bar is not None:
            bar.update(1)


def _run_one(w: Workload, root, deadline, seed) -> WorkloadResult:
    """Build the task, mock data from a private generator, tasklearner, a few one-cycle steps; for
    a compiled workload, then time the same configuration eager (step_times.py), so the manifest
    holds this machine's measured speed-up for ``compile="auto"``."""
    import torch

    from ..learner import tasklearner
    from ..learner.callbacks import Callback, CancelFit
    from ..compile_cache.artifacts import changed, fingerprint, snapshot
    from ..compile_cache.manifest import record
    from .step_times import COMPILED_SKIP, compiled_steps, eager_step_s, step_clock

    t0 = time.perf_counter()
    before = snapshot(root) if w.compile else {}  # the files it writes are its configuration's (artifacts.py)
    try:
        if w.device == "cuda" and not torch.cuda.is_available():
            return WorkloadResult(w.name, "skipped", error="no CUDA device")
        task = w.task()
        rng = np.random.default_rng(seed)
        steps = compiled_steps(w.steps) if w.compile else w.steps
        n_train, n_valid = w.batch_size * steps, w.batch_size + max(1, w.batch_size // 2)
        train = [task.mock_sample(rng) for _ in range(n_train)]
        valid = [task.mock_sample(rng) for _ in range(n_valid)]  # two batch sizes: dynamic batch dim

        class Deadline(Callback):
            def after_batch(self):
                if deadline is not None and time.perf_counter() > deadline:
                    raise CancelFit("warmup budget used up")

        def build(compile, callbacks, **options):
            return tasklearner(task, ([s[0] for s in train], [s[1] for s in train]),
                               validdata=([s[0] for s in valid], [s[1] for s in valid]),
                               backbone=w.backbone, batch_size=w.batch_size, compile=compile, device=w.device,
                               seed=seed, progress=False, callbacks=[Deadline(), *callbacks], **options)

        clock = step_clock(COMPILED_SKIP)
        learner = build(w.compile, [clock], precision=w.precision)
        learner.fit_one_cycle(1, 1e-3)
        seconds = time.perf_counter() - t0  # the manifest's: what warming this configuration took
        if deadline is not None and time.perf_counter() > deadline and len(learner.history) == 0:
            return WorkloadResult(w.name, "cut", seconds, error=_cut(w, len(clock.times), steps))
        key = None
        if w.compile:
            from ..learner.compiling import compile_key

            # as the learner chose them (the task's default precision and layout, or the workload's)
            precision, channels_last = learner.backend.precision, learner.channels_last
            key = compile_key(task, w.backbone, w.size, w.device, precision, channels_last)
            if key is not None:
                written = fingerprint(root, changed(root, before))
                # the eager twin: the same configuration, so the two times give this machine's speed-up
                eager = eager_step_s(lambda callbacks: build(False, callbacks, precision=precision,
                                                             channels_last=channels_last))
                compiled = clock.warm_step_s
                record(key, workload=w.name, seconds=seconds, device=w.device, root=root,
                       step_s_per_sample=None if eager is None else eager / w.batch_size,
                       compiled_step_s_per_sample=None if compiled is None else compiled / w.batch_size,
                       artifacts=written)
        return WorkloadResult(w.name, "ok", time.perf_counter() - t0, key=key)
    except Exception as e:  # a failing workload is reported, never fatal
        return WorkloadResult(w.name, "failed", time.perf_counter() - t0, error=f"{type(e).__name__}: {e}"[:200],
                              detail=traceback.format_exc())


def _cut(w: Workload, done: int, steps: int) -> str:
    """What a workload stopped by the budget before its validation kept, and why it is not recorded."""
    where = f"cut by the budget after {done} of {steps} training batches, before validation"
    if not w.compile:
        return f"{where} (an eager workload leaves nothing in the cache)"
    return (f"{where}: what it compiled stays in the cache (the next warmup loads it), but the configuration is "
            "not recorded warm: its validation graph was not compiled nor its step times measured")


def status(cache_dir=None) -> list[dict]:
    """Manifest entries for this torch version and the devices present, each with ``state`` (``"warm"``,
    ``"damaged"``: recorded compiled files missing or changed, ``"unverified"``: no file list recorded)
    and ``problem`` (why, naming the Inductor folder; None when warm): what the entry claims is
    checked against the files (compile_cache/artifacts.py), not taken on its word."""
    import torch

    from ..compile_cache.artifacts import integrity
    from ..compile_cache.manifest import read_manifest

    devices = {"cpu"} | ({"cuda"} if torch.cuda.is_available() else set())
    entries = read_manifest(cache_dir)["entries"]
    out = []
    for k, v in sorted(entries.items()):
        if v.get("torch") == torch.__version__ and v.get("device") in devices:
            state, problem = integrity(cache_dir, v)
            out.append(dict(key=k, **v, state=state, problem=problem))
    return out
