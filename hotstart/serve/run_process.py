"""The client's own handle on its run's process, for when the server that forked it is gone.

The server reports a run's exit status, and the client asks the server to forward its signals.
When the server dies during a run, neither is possible. Left alone, the run would go on as an
orphan: it would still write to the client's terminal after the client returned, and Ctrl-C
could not reach it. So the client stops the run itself. The child asks the kernel for SIGTERM
when the server dies (`child`: PR_SET_PDEATHSIG), and the client also sends SIGTERM to the run's
process group (DataLoader workers and other ranks included). The client then waits for the run
to end, sends its own signals to the run directly, and says what happened, with the run's pid.

The handle is a pidfd, opened as soon as the server names the pid, so that a reused pid can never
be mistaken for the run. Where pidfds are missing (Linux < 5.3) it falls back to the pid.
"""
from __future__ import annotations

import os
import select
import signal
import time


class RunProcess:
    """The served run's process (the leader of its own process group, by setsid)."""

    def __init__(self, pid: int):
        self.pid = pid
        try:
            self.pidfd = os.pidfd_open(pid)
        except (AttributeError, OSError):  # no pidfds here, or the run has already ended
            self.pidfd = None

    def signal_group(self, sig: int) -> None:
        """Send `sig` to the run's process group, or to the run alone before it has its own group."""
        if self.ended():
            return
        for send in (os.killpg, os.kill):
            try:
                send(self.pid, sig)
                return
            except (ProcessLookupError, PermissionError):
                continue

    def ended(self, timeout_s: float = 0.0) -> bool:
        """Whether the run has exited (a zombie counts), after waiting up to `timeout_s` seconds."""
        if self.pidfd is not None:
            poller = select.poll()
            poller.register(self.pidfd, select.POLLIN)
            return bool(poller.poll(timeout_s * 1000))
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                with open(f"/proc/{self.pid}/stat") as f:
                    if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                        return True
            except (FileNotFoundError, ProcessLookupError):
                return True
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.05)

    def wait_ended(self) -> None:
        """Block until the run has exited; signals that arrive meanwhile run their handlers."""
        while not self.ended(timeout_s=1.0):
            pass

    def close(self) -> None:
        if self.pidfd is not None:
            os.close(self.pidfd)
            self.pidfd = None


def stop_orphaned_run(run: RunProcess, say, forwarded) -> int:
    """The server is gone: stop the run (SIGTERM to its group), forward our signals to it directly
    until it has ended (the signals in `forwarded`), and say so with its pid. The status to exit
    with: 1, since the run's own status died with the server."""
    def forward(signum, frame):
        run.signal_group(signum)

    if not run.ended():
        say(f"the server went away during the run: stopping the run (pid {run.pid}) with SIGTERM")
        previous = {sig: signal.signal(sig, forward) for sig in forwarded}
        try:
            run.signal_group(signal.SIGTERM)
            run.wait_ended()
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
    say(f"the run (pid {run.pid}) has ended; its exit status is unknown: the server that reports it went away")
    return 1
