"""`Progress`: a tqdm bar per phase (notebook-aware via tqdm.auto) and a table row per epoch,
after one line that says what the defaults chose (precision, layout, compile, images;
learner/choices.py), written when it differs from the previous fit's.

Bars are for people watching a terminal or a notebook. Written to a file or a pipe (a log, CI,
``| tee``), each bar refresh is a ``\r`` line that buries the result, so by default (``bars=None``)
bars are drawn only when their stream is a terminal or the code runs in a Jupyter kernel
(`hotstart.interactive.draws_bars`, which the warmup and the downloads ask too). The
epoch table is the result: it is written in every case (unless ``table=False``), one flushed line
per epoch, so ``tail -f`` of a log shows each epoch as it ends.
"""
from __future__ import annotations

import sys

from ...interactive import draws_bars
from .base import Callback


class Progress(Callback):
    """What a fit shows as it runs: the defaults' choices line, a tqdm bar per phase, and a table
    row per epoch. One of the learner's default callbacks (``Learner(progress=False)`` or
    ``tasklearner(progress=False)`` leaves it out); only the first process writes.

    Args:
        bars: draw the bars: True, False, or None (the default: only when the stream is a
            terminal or the code runs in a notebook, so a log file does not fill with ``\\r``
            refreshes).
        table: write the choices line and the epoch table (one flushed line per epoch, so
            ``tail -f`` shows each epoch as it ends).
        file (typing.TextIO | None): where the table and the bars go (None: the table to
            standard output, the bars to standard error).
        loss_every: the bar shows the training loss of every `loss_every`-th batch (reading it is
            a device-to-host sync, which a GPU should not wait for at every batch).
    """

    order = 50  # after the recorder and metrics have filled in the epoch's numbers

    def __init__(self, bars: bool | None = None, table: bool = True, file=None, loss_every: int = 25):
        self.bars, self.table, self.loss_every = bars, table, max(1, int(loss_every))
        self.file = file
        self._bar = None
        self._header_done = False
        self._choices_due = False  # the fit's choices line is still to be written (at its first epoch)
        self._choices_said = None  # the choices line last written (a learner's next fit repeats it only if it changed)

    def before_fit(self):
        self._header_done = False
        self._choices_due = True

    def before_epoch(self):
        """The choices line, once a fit, as its first epoch begins: after every callback's
        `before_fit`, where some choices are made (the average of the weights: callbacks/ema.py)."""
        if not self._choices_due:
            return
        self._choices_due = False
        from ..choices import choices_line

        line = choices_line(self.learner.choices)
        if line and line != self._choices_said and self.table and self.learner.backend.is_global_zero:
            self._write(line)
            self._choices_said = line

    def _start_bar(self, desc: str, total: int):
        if not self.learner.backend.is_global_zero or not self._show_bars():
            return
        from tqdm.auto import tqdm

        self._bar = tqdm(total=total, desc=desc, leave=False, file=self.file or sys.stderr, dynamic_ncols=True)

    def before_train(self):
        self._start_bar(f"epoch {self.learner.epoch + 1}/{self.learner.n_epoch} train", len(self.learner.dl))

    def before_validate(self):
        self._start_bar("valid", len(self.learner.dl))

    def after_batch(self):
        if self._bar is not None:
            self._bar.update(1)
            if self.learner.training and self.learner.iter % self.loss_every == 0:
                self._bar.set_postfix(loss=f"{float(self.learner.loss.detach()):.4f}", refresh=False)

    def _close(self):
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    def after_train(self):
        self._close()

    def after_validate(self):
        self._close()

    def after_epoch(self):
        if not self.table or not self.learner.backend.is_global_zero or not self.learner.history:
            return
        row = self.learner.history[-1]
        keys = list(row)
        if not self._header_done:
            self._write("  ".join(f"{k:>10}" for k in keys))
            self._header_done = True
        self._write("  ".join(_fmt(row[k]) for k in keys))

    def after_fit(self):
        self._close()

    def write_line(self, line: str):
        """Write `line` where the epoch table goes (flushed; on the first process only, and only
        with ``table=True``): a result that belongs beside the table, such as `lr_find`'s."""
        if self.table and self.learner.backend.is_global_zero:
            self._write(line)

    def _show_bars(self) -> bool:
        if self.bars is not None:
            return self.bars
        return draws_bars(self.file or sys.stderr)

    def _write(self, line: str):
        from tqdm.auto import tqdm

        out = self.file or sys.stdout
        tqdm.write(line, file=out)
        flush = getattr(out, "flush", None)
        if flush is not None:
            flush()


def _fmt(v) -> str:
    if isinstance(v, float):
        return f"{v:>10.4f}"
    return f"{v!s:>10}"
