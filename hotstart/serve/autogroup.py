"""Whether a served run would get less CPU than the same run started directly, under sched_autogroup.

With ``/proc/sys/kernel/sched_autogroup_enabled`` = 1 (the default of most desktop and many
server kernels), Linux puts each session (``setsid``) in an autogroup of its own and shares the
CPU fairly between autogroups first; a thread's nice counts only against the other threads of
its own autogroup (sched(7), "The autogroup feature"). A served run is a fork of the server in a
session of its own (`child`): it competes with the client's session as one equal group, whatever
runs there and at whatever nice. A direct run (``python script.py``) is one more group member in
the client's session, at the client's nice.

So the two differ exactly when the client's session holds other runnable work:

- Lower-priority work (``nice -n 19 make -j``, a niced data job started from the same terminal)
  yields to a direct run: a nice-19 thread weighs 15 against a nice-0 thread's 1024. Against a
  served run it takes half the CPU. Measured on 2 cores (issue 34), with two nice-19 loops beside
  the runs: the FastAI.jl startup workload served took 1.41x (0.80-1.59) and 1.56x (1.09-1.81) a
  plain loop's time, while a direct hotstart run took 0.99x and 0.86x. A 2-thread torch matmul
  loop started with ``setsid`` beside two nice-19 loops got 0.85x the CPU of the same loop started
  directly, in every one of 4 alternating pairs on a shared machine (0.32-0.33 against 0.38-0.39
  CPU-seconds a second); on quiet cores the same pair got the same CPU (0.35-0.40 both). With
  torch's default threads on quiet cores otherwise (2026-12-03, benchmarks/README.md, "Serve"),
  a run forced into the server beside two nice-19 loops took 4.01x the plain loop's time to its
  first epoch; the fallback below ran it at 0.93x.
- Equal-priority work shares with a direct run thread by thread, and with a served run group by
  group. On C cores with nothing else running, a run of T threads beside W nice-0 threads gets
  T/(T+W) of the machine directly and 1/2 served: the direct run gets more when T > W.

A process cannot join another session's autogroup (it gets one only by fork or setsid), and an
unprivileged one may not lower an autogroup's nice below 0. So `contention` compares the two
shares from the weights the kernel gives each nice (sched_prio_to_weight: 1024 at nice 0, 1.25x
less for each step up) and the client decides: when the session's other runnable threads weigh
less than the run would, the client runs the script itself (``client.run_served``), the way a
plain ``python script.py`` would compete, and says so in one line. ``HOTSTART_SERVER=always``
serves anyway.

The session's runnable threads are read from ``/proc/PID/task/TID/stat`` (state R, session id,
nice): the processes of a session share its autogroup (both come from the same setsid and are
inherited by fork). Only the threads runnable in each of three snapshots 10 ms apart count: busy
background work is runnable in all of them, while what merely passes by (a previous run's
DataLoader workers exiting, a shell's fork) is not. (An average over three snapshots once served a
run beside a nice-19 loop in a smoke run of benchmarks/serve.py; the cause was not caught, and
something passing by at nice 0 is the likely one.) Work missed that way errs towards running
directly, which is what ``python script.py`` does. The session's processes are found in one pass over
/proc (~10 ms with 150 processes on a loaded machine), and only when a server is there to be used.
"""
from __future__ import annotations

import os
import time
from dataclasses import dataclass

SWITCH = "/proc/sys/kernel/sched_autogroup_enabled"
SNAPSHOTS = 3
SNAPSHOT_GAP_S = 0.01


def enabled() -> bool:
    """Whether the kernel shares CPU between autogroups (False where the switch is missing or 0)."""
    try:
        with open(SWITCH) as f:
            return f.read().strip() == "1"
    except OSError:
        return False


def nice_weight(nice: int) -> float:
    """The scheduler's weight for a thread at `nice` (kernel sched_prio_to_weight: 1024 at 0, and
    each step 1.25x apart; the table rounds, 15 at nice 19 where this gives 14.5)."""
    return 1024.0 / 1.25 ** nice


def run_threads(env: dict | None = None) -> int:
    """How many threads a run computes with: OMP_NUM_THREADS when set (torch's intra-op threads),
    else the CPUs this process may run on."""
    env = os.environ if env is None else env
    try:
        n = int(env.get("OMP_NUM_THREADS", ""))
        if n >= 1:
            return n
    except ValueError:
        pass
    return max(1, len(os.sched_getaffinity(0)))


@dataclass(frozen=True)
class Contention:
    """Other threads that stay runnable in a session: how many, their summed weight, and the
    highest nice among them."""
    threads: int
    weight: float
    max_nice: int

    def outweighed_by(self, run_weight: float) -> bool:
        """True when a run of `run_weight` gets more CPU as a member of this session (directly) than
        as a group of its own (served): there is other work, and it weighs less than the run."""
        return self.threads > 0 and self.weight < run_weight


def _fields(stat_path: str) -> list[str] | None:
    """The fields of a /proc stat file after the command name (field 3 on), or None if it is gone."""
    try:
        with open(stat_path) as f:
            return f.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None


def session_pids(session: int, exclude_pid: int) -> list[int]:
    """The processes of `session` (the processes of an autogroup), other than `exclude_pid`."""
    pids = []
    for name in os.listdir("/proc"):
        if name.isdigit() and int(name) != exclude_pid:
            fields = _fields(f"/proc/{name}/stat")
            if fields is not None and int(fields[3]) == session:  # field 6: session id
                pids.append(int(name))
    return pids


def runnable(pids: list[int]) -> dict[int, int]:
    """{thread id: nice} of the threads of `pids` now runnable (state R)."""
    found = {}
    for pid in pids:
        main = _fields(f"/proc/{pid}/stat")
        if main is None:
            continue
        if int(main[17]) == 1:  # field 20: the number of threads
            threads = {pid: main}
        else:
            try:
                tids = os.listdir(f"/proc/{pid}/task")
            except OSError:
                continue
            threads = {int(t): _fields(f"/proc/{pid}/task/{t}/stat") for t in tids}
        found.update({tid: int(f[16]) for tid, f in threads.items() if f is not None and f[0] == "R"})  # state, nice
    return found


def contention(snapshots: int = SNAPSHOTS, gap_s: float = SNAPSHOT_GAP_S) -> Contention:
    """The other work in this process's session that stays runnable: the threads in state R in
    each of `snapshots` looks `gap_s` apart. The session's processes are listed once (one pass
    over /proc, ~10 ms at 150 processes)."""
    pids = session_pids(os.getsid(0), os.getpid())
    steady = runnable(pids)
    for _ in range(snapshots - 1):
        time.sleep(gap_s)
        now = runnable(pids)
        steady = {tid: nice for tid, nice in steady.items() if tid in now}
    nices = list(steady.values())
    return Contention(threads=len(nices), weight=sum(map(nice_weight, nices)), max_nice=max(nices, default=0))


def why_run_directly(env: dict | None = None) -> str | None:
    """One line on why this run should not be served (it would get less CPU than run here), or None."""
    if not enabled():
        return None
    busy = contention()
    threads = run_threads(env)
    if not busy.outweighed_by(threads * nice_weight(os.getpriority(os.PRIO_PROCESS, 0))):
        return None
    n = busy.threads
    return (f"other work runs in this session ({n} runnable thread{'s' if n > 1 else ''}, nice up to "
            f"{busy.max_nice}): this run would get less CPU served than here, since sched_autogroup shares the "
            f"CPU between sessions first and a served run is a session of its own; running without the server "
            f"(HOTSTART_SERVER=always serves anyway)")
