"""`stop_on_signals`: SIGTERM and SIGUSR1 stop a training run the way Ctrl-C does.

Ctrl-C raises KeyboardInterrupt, and `train` answers it by writing what is finished (the model as
of the last whole epoch, history.csv, loss.png). The other ways a run is stopped send other
signals: ``timeout``, docker and SLURM's job end send SIGTERM, and SLURM's ``--signal=USR1@60``
sends SIGUSR1 ahead of the end. Their default action kills the process, and every finished epoch
was lost. Inside `stop_on_signals` they raise `Stopped` (a KeyboardInterrupt, so the loop unwinds
exactly as for Ctrl-C and its ``after_fit`` still runs) carrying the signal's number, from which
`exit_status` gives the conventional status (128 + number: 143 for TERM, 130 for Ctrl-C).

The handlers are put back on exit, and only the first signal raises: a second one while the
outputs are written gets the previous handler (the default: the process ends, and the atomic
writes leave whole files or none).
"""
from __future__ import annotations

import contextlib
import signal
import threading


class Stopped(KeyboardInterrupt):
    """A run stopped by a signal other than Ctrl-C; `signum` is the signal's number."""

    def __init__(self, signum: int):
        super().__init__(f"stopped by {signal.Signals(signum).name}")
        self.signum = signum


def stop_signals() -> list[int]:
    """SIGTERM, and SIGUSR1 where the platform has it."""
    return [s for s in (signal.SIGTERM, getattr(signal, "SIGUSR1", None)) if s is not None]


def exit_status(interrupt: KeyboardInterrupt) -> int:
    """128 + the signal's number (130 for a plain Ctrl-C)."""
    return 128 + int(getattr(interrupt, "signum", signal.SIGINT))


def signal_name(interrupt: KeyboardInterrupt) -> str:
    return signal.Signals(getattr(interrupt, "signum", signal.SIGINT)).name


@contextlib.contextmanager
def stop_on_signals():
    """While inside: SIGTERM / SIGUSR1 raise `Stopped` in the main thread (elsewhere: no change,
    since Python runs handlers in the main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {s: signal.getsignal(s) for s in stop_signals()}

    def handler(signum, frame):
        for s, h in previous.items():  # only the first signal raises
            signal.signal(s, h)
        raise Stopped(signum)

    for s in previous:
        signal.signal(s, handler)
    try:
        yield
    finally:
        for s, h in previous.items():
            signal.signal(s, h)
