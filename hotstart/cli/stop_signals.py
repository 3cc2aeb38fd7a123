"""`stop_on_signals`: Ctrl-C, SIGTERM and SIGUSR1 stop a training run at the end of a batch (or epoch).

`train` answers a stop by writing what is finished (the model as of the last whole epoch,
history.csv, loss.png). The ways a run is stopped send different signals: Ctrl-C sends SIGINT;
``timeout``, docker and SLURM's job end send SIGTERM; SLURM's ``--signal=USR1@60`` sends SIGUSR1
ahead of the end. The default action of the last two kills the process, and every finished epoch
was lost.

Inside `stop_on_signals`, the first of these signals only records itself (`StopRequest`); the
loop's next ``after_batch`` (train's callback calls `StopRequest.check`) raises `Stopped`, a
KeyboardInterrupt carrying the signal's number, so the loop unwinds as for Ctrl-C and its
``after_fit`` runs. Why not raise in the handler: a signal lands anywhere, e.g. between an epoch's
row and its checkpoint, which then would never be written; at a batch's end the epoch checkpoints
of ``--checkpoint-dir`` are complete. With several processes, they stop together at the start of
the next epoch instead (train's callback all-reduces the request there), since one process
leaving mid-epoch would leave the others waiting in a collective. A second signal raises at once (a batch that never ends
cannot hold the run), and later ones get the previous handlers back. `exit_status` gives the
conventional status, 128 + the number: 130 for Ctrl-C, 143 for TERM, 138 for USR1 (Linux).
"""
from __future__ import annotations

import contextlib
import signal
import threading


class Stopped(KeyboardInterrupt):
    """A run stopped by a signal; `signum` is the signal's number."""

    def __init__(self, signum: int):
        super().__init__(f"stopped by {signal.Signals(signum).name}")
        self.signum = signum


class StopRequest:
    """The signal received so far (None: none); `check` raises `Stopped` once one has come."""

    def __init__(self):
        self.signum: int | None = None

    def check(self) -> None:
        if self.signum is not None:
            raise Stopped(self.signum)


def stop_signals() -> list[int]:
    """SIGINT, SIGTERM, and SIGUSR1 where the platform has it."""
    return [s for s in (signal.SIGINT, signal.SIGTERM, getattr(signal, "SIGUSR1", None)) if s is not None]


def exit_status(interrupt: KeyboardInterrupt) -> int:
    """128 + the signal's number (130 for a plain KeyboardInterrupt)."""
    return 128 + int(getattr(interrupt, "signum", signal.SIGINT))


def signal_name(interrupt: KeyboardInterrupt) -> str:
    return signal.Signals(getattr(interrupt, "signum", signal.SIGINT)).name


@contextlib.contextmanager
def stop_on_signals():
    """Yield a `StopRequest` that the signals fill in. Outside the main thread (where Python runs
    no signal handlers) nothing changes, and the request stays empty."""
    request = StopRequest()
    if threading.current_thread() is not threading.main_thread():
        yield request
        return
    previous = {s: signal.getsignal(s) for s in stop_signals()}

    def handler(signum, frame):
        if request.signum is None:
            request.signum = signum  # stop at the end of the batch
            return
        for s, h in previous.items():  # the second one: now, and the next ones as before
            signal.signal(s, h)
        raise Stopped(signum)

    for s in previous:
        signal.signal(s, handler)
    try:
        yield request
    finally:
        for s, h in previous.items():
            signal.signal(s, h)


@contextlib.contextmanager
def terminate_raises():
    """SIGTERM (``timeout``, ``kill``, docker) raises `Stopped` at once, as Ctrl-C raises
    KeyboardInterrupt, so that ``finally`` blocks and atomic writes clean up what a command had
    half written (an int8 export's temporary folder beside ``--out`` was left behind). Its
    default action ends the process without unwinding. `stop_on_signals` inside (a fit) takes
    over and puts this handler back. Outside the main thread nothing changes."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum, frame):
        raise Stopped(signum)

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def stop_at_batch_end(request: StopRequest):
    """A learner callback that raises the signal `request` holds: at the end of a batch in one
    process; with several, at the start of the next epoch, where all of them agree (an all-reduce
    of the request) so that none is left waiting in a collective the others never join. Made
    here when called: importing this module must not import torch."""
    from ..learner.callbacks.base import Callback

    class StopAtBatchEnd(Callback):
        order = 100  # after every other callback has seen the batch

        def after_batch(self):
            if self.learner.backend.world_size == 1:
                request.check()

        def before_epoch(self):
            backend = self.learner.backend
            if backend.world_size > 1:
                signum = int(backend.all_reduce_max(float(request.signum or 0)))
                if signum:
                    raise Stopped(signum)

    return StopAtBatchEnd()
