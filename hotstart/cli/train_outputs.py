"""`train`'s outputs in --out: the model, history.csv and loss.png, replaced as one set (a kill
leaves the old run's or the new run's, hotstart/run_folder.py); and, after a stop or an error, the
finished epochs (`LastEpochWeights` keeps their weights)."""
from __future__ import annotations

import csv
import io
import sys
from pathlib import Path


def write_outputs(learner, out: Path) -> list[Path]:
    """The model, history.csv and loss.png in `out`, replacing an earlier run's as a unit
    (hotstart/run_folder.py); their paths. With several processes, all call this: the first writes,
    the others wait in `save`."""
    from ..run_folder import RUN_OUTPUTS, RUN_SET
    from ..sibling_set import replace_together

    if not learner.backend.is_global_zero:
        learner.save(out / "model")  # writes nothing here: waits while the first process writes
        return [out / "model"]

    def stage(staging: Path) -> None:
        learner.save(staging / "model")
        write_history(learner.history, staging / "history.csv")
        save_figure(learner.plot_loss(), staging / "loss.png")

    replace_together(out, RUN_SET, stage)
    return [out / name for name in RUN_OUTPUTS]


def save_figure(fig, path: Path) -> None:
    from ..atomic import atomic_write_bytes

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100)
    atomic_write_bytes(path, buf.getvalue())


def write_history(history, path: Path) -> None:
    from ..atomic import atomic_write_bytes

    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=list(history[0]))
    writer.writeheader()
    writer.writerows(history)
    atomic_write_bytes(path, buf.getvalue().encode())


def write_finished(learner, finished, out: Path, why: str, checkpoint_dir) -> None:
    """After an interrupt or an error: write the model as of the last whole epoch (`finished`, a
    `last_epoch_weights()` callback), with its history and loss plot, and say what was written,
    in one line on stderr (first process only)."""
    loud = learner.backend.is_global_zero
    if finished.state is None or finished.n_epochs == 0:
        if loud:
            print(f"{why} before the first epoch finished: nothing written", file=sys.stderr)
        return
    finished.restore(learner)  # the weights (and loss curve) that go with the history
    written = write_outputs(learner, out)
    if not loud:
        return
    note = ""
    if checkpoint_dir is not None:
        from ..learner.checkpoint import checkpoints

        found = checkpoints(checkpoint_dir)
        if found:
            note = f"; checkpoint {found[-1]} (continue with --resume {checkpoint_dir})"
    print(f"{why}: wrote the {len(learner.history)} finished epoch(s) to {', '.join(map(str, written))}{note}",
          file=sys.stderr)


def last_epoch_weights():
    """A callback that keeps a CPU copy of the weights at the end of each whole epoch, so that
    Ctrl-C can save the model that the history describes (not one from the middle of a step).
    Defined here, not at import time: building the parser must not import torch."""
    from ..learner.callbacks.base import Callback

    class LastEpochWeights(Callback):
        order = 45  # after the recorder (-10) has written the row, before Progress (50) prints it

        def __init__(self):
            self.state, self.n_epochs, self.n_losses = None, 0, 0

        def after_epoch(self):
            from ..learner.state_copy import copy_state

            self.state = copy_state(self.learner.task_model().state_dict(), self.state, device="cpu")
            self.n_epochs, self.n_losses = len(self.learner.history), len(self.learner.recorder.losses)

        def restore(self, learner) -> None:
            """Weights, history rows and loss curve as they were at the end of the last whole epoch."""
            rec = learner.recorder
            learner.task_model().load_state_dict(self.state)
            del rec.history[self.n_epochs:], rec.losses[self.n_losses:], rec.lrs[self.n_losses:]

    return LastEpochWeights()
