"""Heavy, independent subprocess work started when collection ends, on the machine's second core.

The suite's own process trains on one intra-op thread (conftest.py), so on CI's 2 cores one core
idles through most of the run. A few tests spend minutes in a child process that shares nothing
with the tests around it: the notebooks, each top to bottom in its own kernel, and the real
compiled warmup. Those children are "prestarted": when pytest has collected the tests, the
jobs the selected tests need start one at a time, in one background thread (one extra busy core,
never more), in collection order but for the jobs of ``run_last`` tests, which go first
(conftest.py). The test itself is unchanged but for where its child runs: it waits for its job
and asserts on the same process output and files as before.

A test that needs a job the background thread has not started yet runs that job itself, at once,
in the tests' own process (which would otherwise sit idle waiting for it), while the background
thread goes on with the next: the two cores share the jobs as they come, so neither waits on the
other. Why: queued strictly one at a time, the longest job (the QAT checks, ~130 s) decided the
suite's end, the tests' process idle for its last ~100 s (2026-12-07: 605 and 619 s runs, 97 and
104 s waited). A job that was never prestarted (a test run alone, a job asked for under another
name) runs the same way.

A job is a subprocess in a fresh temporary folder (`cwd`), with the environment pytest's process
had when collection ended (conftest.py's settings) plus the job's own `env`, less its `unset`.
Its torch runs as many threads as the tests' own process (``OMP_NUM_THREADS``, from
``HOTSTART_TEST_THREADS``, default 1) unless the job's `env` says otherwise: on 2 cores, a job on
two threads beside the tests' one makes three busy threads on two cores, which wait on each other.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

MARKER = "prestart"  # @pytest.mark.prestart("job name", ...): the jobs a test waits for


@dataclass
class Job:
    argv: list
    env: dict = field(default_factory=dict)  # added to the environment pytest's process has
    unset: tuple = ()                        # names taken out of it
    timeout: float = 900


@dataclass
class Result:
    returncode: int
    stdout: str
    stderr: str
    folder: Path      # the job's cwd, a fresh temporary folder (removed at the session's end)
    seconds: float
    timed_out: bool = False  # killed, with its whole process group, after the job's timeout
    started: float = 0.0     # time.perf_counter() when the job started


_JOBS: dict = {}      # name -> function returning a Job (registered by the test modules)
_started: dict = {}   # name -> threading.Event, set once the job's Result is in _results
_results: dict = {}
_queue: list = []
_lock = threading.Lock()
_wake = threading.Condition(_lock)
_worker = None
_running: set = set()  # the jobs' processes now running (the thread's, and one a test runs itself)
_folders: list = []


def job(name: str):
    """Register ``make(folder) -> Job`` under `name` (a decorator, at a test module's import);
    `folder` is the job's cwd, a fresh temporary folder."""
    def register(make):
        _JOBS[name] = make
        return make
    return register


def _run(name: str) -> Result:
    folder = Path(tempfile.mkdtemp(prefix="hotstart-prestart-"))
    _folders.append(folder)
    spec = _JOBS[name](folder)
    start = time.perf_counter()
    threads = {"OMP_NUM_THREADS": os.environ.get("HOTSTART_TEST_THREADS", "1")}  # one core: the tests' own is busy
    env = {k: v for k, v in {**os.environ, **threads, **spec.env}.items() if k not in spec.unset}
    proc = subprocess.Popen([str(a) for a in spec.argv], cwd=folder, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    _running.add(proc)
    timed_out = False
    try:
        out, err = proc.communicate(timeout=spec.timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        os.killpg(proc.pid, 9)  # the job and every process it started (a launcher's ranks)
        out, err = proc.communicate()
        err += f"\n(prestart: {name} killed after {spec.timeout} s)"
    except BaseException:  # Ctrl-C or a test's timeout in the tests' process, which runs jobs too:
        os.killpg(proc.pid, 9)  # its own session never gets the terminal's SIGINT, so stop it here
        raise
    finally:
        _running.discard(proc)
    return Result(proc.returncode, out, err, folder, time.perf_counter() - start, timed_out, start)


def _loop():
    while True:
        with _wake:
            while not _queue:
                _wake.wait()
            name = _queue.pop(0)
        if name is None:
            return
        _finish(name)


def _finish(name: str) -> None:
    """Run the job `name` in this thread, then hand its result to whoever waits for it."""
    result = None
    try:
        result = _run(name)
    except Exception as e:  # reported to the test that waits for it, never lost
        result = Result(-1, "", f"prestart: {name} could not run: {e!r}", Path(tempfile.gettempdir()), 0.0)
    finally:  # interrupted (BaseException): whoever waits is told at once, not after its timeout
        _results[name] = result or Result(-1, "", f"prestart: {name} was interrupted",
                                          Path(tempfile.gettempdir()), 0.0)
        _started[name].set()


def submit(*names: str) -> None:
    """Queue the named jobs (each once) on the background thread, in this order."""
    global _worker
    with _wake:
        for name in names:
            if name in _started:
                continue
            if name not in _JOBS:
                raise KeyError(f"no prestart job named {name!r}; known: {sorted(_JOBS)}")
            _started[name] = threading.Event()
            _queue.append(name)
        if _worker is None:
            _worker = threading.Thread(target=_loop, name="prestart", daemon=True)
            _worker.start()
        _wake.notify()


_waited: dict = {}    # name -> seconds the tests' own process waited for the job, in all
_here: set = set()    # the jobs a test ran itself, in the tests' process (`result`)


def result(name: str, timeout: float = 1800) -> Result:
    """The job's result, once it has run (it is queued now if it was not prestarted)."""
    submit(name)
    start = time.perf_counter()
    with _lock:  # not started yet: run it here rather than wait for the background thread to reach it
        mine = name in _queue
        if mine:
            _queue.remove(name)
            _here.add(name)
    if mine:
        _finish(name)
    if not _started[name].wait(timeout):
        raise TimeoutError(f"prestart job {name!r} gave no result in {timeout} s")
    _waited[name] = _waited.get(name, 0.0) + time.perf_counter() - start
    return _results[name]


def summary() -> list[str]:
    """Lines for the end of the session: each job's seconds and how long the tests waited for it,
    so a slow suite shows whether the background core or the tests' own process is the one to
    unload."""
    if not _results:
        return []
    first = min(r.started for r in _results.values())
    lines = [f"prestart: {len(_results)} jobs, {sum(r.seconds for r in _results.values()):.0f} s of work; "
             f"waited for in all {sum(_waited.values()):.0f} s"]
    for name, r in sorted(_results.items(), key=lambda kv: kv[1].started):
        where = "the tests' process" if name in _here else "background"
        lines.append(f"  {name:<34} started at {r.started - first:6.1f} s, ran {r.seconds:6.1f} s, "
                     f"waited for {_waited.get(name, 0.0):6.1f} s ({where})")
    return lines


def shutdown() -> None:
    """Stop the queue, kill a job still running (a session ended early, -x), remove the folders."""
    with _wake:
        _queue[:] = [None]
        _wake.notify()
    for proc in list(_running):
        if proc.poll() is None:
            try:
                os.killpg(proc.pid, 9)
            except OSError:
                pass
    for folder in _folders:
        shutil.rmtree(folder, ignore_errors=True)
