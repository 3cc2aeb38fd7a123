"""`FitState`: where one fit stands. `Learner.fit` creates it; the loop and the checkpoints read it.

Everything a fit needs to know about its own progress lives here, in one object, instead of in a
dozen loose learner attributes: the schedule, gradient accumulation, the batches per epoch, the
optimizer steps in all and so far, the fit's seed and index, and how many batches of the first
epoch a resumed fit has already trained on. A checkpoint stores `to_dict()` and a resume reads it
back with `from_dict` (learner/checkpoint/), so what is saved is exactly what the loop uses.

The learner exposes the fields that fastai's learner has (``n_epoch``, ``n_iter``, ``train_iter``,
``opt_step``, ``fit_index``, ``fit_seed``) as read-only properties; the state itself is
``learner.fit_state`` (None before the first fit; after a fit, that fit's final state).

A schedule is code, not data, so what a checkpoint keeps of it, and what the processes of one run
compare, is its `schedule_identity`: the hyperparameters it declares (`declared`: a plain fit's
``lr``; `fit_one_cycle`'s ``lr_max``, ``div``, ``div_final``, ``pct_start`` and ``moms``), else its
values at the fit's first, middle and last optimizer steps (a schedule function of your own).
"""
from __future__ import annotations

import json
import numbers
from dataclasses import asdict, dataclass, field
from typing import Callable, Optional, Tuple

Schedule = Callable[[int, int], Tuple[object, Optional[float]]]  # (optimizer step, total) -> (lr, mom)


def declared(schedule: Schedule, **hyperparameters) -> Schedule:
    """`schedule`, carrying the hyperparameters that identify it as ``schedule.hyperparameters``,
    which `schedule_identity` reads instead of calling it: `fit_one_cycle`'s schedule reads the
    optimizer's parameter groups, which a fit does not have yet when the identity is needed (the
    processes compare it before anything else), and named values make a clearer refusal."""
    schedule.hyperparameters = hyperparameters
    return schedule


def constant_schedule(lr) -> Schedule:
    """The schedule of a plain ``fit(n, lr)``: `lr` at every step, momentum left as it is."""
    return declared(lambda step, total: (lr, None), kind="constant", lr=lr)


def schedule_steps(total_steps: int) -> list[int]:
    """The optimizer steps at which an undeclared schedule is compared: the first, middle and last."""
    return sorted({0, total_steps // 2, max(0, total_steps - 1)})


def schedule_identity(schedule: Schedule, total_steps: int) -> dict:
    """What identifies `schedule` in a fit of `total_steps` optimizer steps, as JSON: its declared
    hyperparameters (`declared`), else ``{"values": {step: [lr, momentum]}}`` at `schedule_steps`.
    A checkpoint keeps it (``state.json``, ``fit.schedule``) and a resume compares it; the
    processes of a run compare it when a fit starts. Slices are written ``"slice(a, b)"``, tensors
    and arrays as lists, so that the same call gives the same JSON in every process."""
    given = getattr(schedule, "hyperparameters", None)
    if given is None:
        given = {"values": {str(s): schedule(s, total_steps) for s in schedule_steps(total_steps)}}
    return json.loads(json.dumps(_jsonable(given)))


def _jsonable(value):
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, slice):
        return f"slice({_jsonable(value.start)!r}, {_jsonable(value.stop)!r})"
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return float(value)
    if callable(getattr(value, "tolist", None)):  # a tensor or an array (a 0-d one is a number)
        return _jsonable(value.tolist())
    return repr(value)


@dataclass
class FitState:
    n_epoch: int                  # epochs in this fit
    n_iter: int                   # training batches per epoch
    accumulate: int               # batches per optimizer step
    fit_seed: int                 # the seed of this fit's shuffles and augmentations
    fit_index: int                # 0 for the learner's first fit, 1 for its second, ...
    schedule: Schedule = field(default=constant_schedule(1e-3), repr=False, compare=False)
    train_iter: int = 0           # training batches done in this fit
    opt_step: int = 0             # optimizer steps done in this fit
    skip_batches: int = 0         # batches of the current epoch trained on before a resume
    train_only: bool = False      # training phases only: no validation, no epoch ends (lr_find's sweep)
    ended: bool = False           # the fit ran to its end (or a callback cancelled it); never saved

    @property
    def steps_per_epoch(self) -> int:
        """Optimizer steps per epoch: the last accumulation group of an epoch may be short."""
        return -(-self.n_iter // self.accumulate)

    @property
    def total_steps(self) -> int:
        """Optimizer steps in the whole fit: what the schedule counts to."""
        return self.n_epoch * self.steps_per_epoch

    def accumulation_group(self, i: int) -> tuple[bool, bool, int]:
        """(first batch of its group, last batch of its group, size of the group) for batch `i`."""
        k = self.accumulate
        start = i - i % k
        size = min(k, self.n_iter - start)
        return i == start, i == start + size - 1, size

    def schedule_identity(self) -> dict:
        """This fit's `schedule_identity` (the module docstring says what it holds)."""
        return schedule_identity(self.schedule, self.total_steps)

    def same_fit(self, other: "FitState") -> bool:
        """Whether `other` is this fit again: the same epochs, batches and accumulation, and the same
        schedule (`schedule_identity`: its hyperparameters, or its values at the first, middle and
        last steps). `Learner.fit` continues a stopped fit from its checkpoint only when the new call
        is that fit (a re-run of `fine_tune` starts with its first phase, which is another fit)."""
        if (self.n_epoch, self.n_iter, self.accumulate) != (other.n_epoch, other.n_iter, other.accumulate):
            return False
        return self.schedule_identity() == other.schedule_identity()

    def to_dict(self) -> dict:
        """Everything but the schedule (a function), as JSON, with the schedule's identity in its
        place (a resume with another schedule is refused); `total_steps` too, to check a resume."""
        d = asdict(self)
        d.pop("schedule")
        d.pop("ended")  # a checkpoint is written by a fit that has not ended
        d["total_steps"] = self.total_steps
        d["schedule"] = self.schedule_identity()
        return d

    @classmethod
    def from_dict(cls, d: dict, schedule: Schedule) -> "FitState":
        """The state `to_dict` wrote, with this fit's `schedule` (schedules are code, not data)."""
        names = ("n_epoch", "n_iter", "accumulate", "fit_seed", "fit_index", "train_iter", "opt_step", "skip_batches")
        return cls(**{k: int(d[k]) for k in names}, schedule=schedule, train_only=bool(d.get("train_only", False)))
