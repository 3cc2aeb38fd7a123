"""`hotstart train --out DIR`'s layout: ``DIR/model/``, ``DIR/history.csv``, ``DIR/loss.png``, one set.

The three belong together (the history and the loss plot describe that model), so a run replaces
them as a unit: a two-phase commit in DIR (hotstart/sibling_set.py, the set `RUN_SET`), since DIR is
the user's folder and may hold other files (checkpoints, notes) that a folder swap would delete. A
run killed while it replaces them leaves the old run's set or the new run's, finished by the next
run, or by hotstart's next read of DIR (`finish_run`, called by `deploy.model_folder`). Torch-free.
"""
from __future__ import annotations

from pathlib import Path

from .sibling_set import finish_interrupted

__all__ = ["RUN_OUTPUTS", "RUN_SET", "finish_run"]

RUN_OUTPUTS = ("model", "history.csv", "loss.png")
"""What a run writes into --out, in the order `train` reports them: an earlier run, if any is there."""

RUN_SET = "hotstart-run"
"""The set's name for hotstart/sibling_set.py: its journal is ``DIR/.hotstart-run.commit``, its
staging folder ``DIR/.hotstart-run.stage-XXXX``."""


def finish_run(out) -> None:
    """Before reading the run in `out`: finish a replacement of it that a killed run left, or remove
    the staging folder of one killed before its commit (never an active run's: it holds the lock)."""
    finish_interrupted(Path(out), RUN_SET)
