"""`FitState`: where one fit stands. `Learner.fit` creates it; the loop and the checkpoints read it.

Everything a fit needs to know about its own progress lives here, in one object, instead of in a
dozen loose learner attributes: the schedule, gradient accumulation, the batches per epoch, the
optimizer steps in all and so far, the fit's seed and index, and how many batches of the first
epoch a resumed fit has already trained on. A checkpoint stores `to_dict()` and a resume reads it
back with `from_dict` (learner/checkpoint/), so what is saved is exactly what the loop uses.

The learner exposes the fields that fastai's learner has (``n_epoch``, ``n_iter``, ``train_iter``,
``opt_step``, ``fit_index``, ``fit_seed``) as read-only properties; the state itself is
``learner.fit_state`` (None before the first fit; after a fit, that fit's final state).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Callable, Optional, Tuple

Schedule = Callable[[int, int], Tuple[object, Optional[float]]]  # (optimizer step, total) -> (lr, mom)


def constant_schedule(lr) -> Schedule:
    """The schedule of a plain ``fit(n, lr)``: `lr` at every step, momentum left as it is."""
    return lambda step, total: (lr, None)


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

    def same_fit(self, other: "FitState") -> bool:
        """Whether `other` is this fit again: the same epochs, batches and accumulation, and the same
        schedule (learning rates and momentum) at its first, middle and last steps. `Learner.fit`
        continues a stopped fit from its checkpoint only when the new call is that fit (a re-run of
        `fine_tune` starts with its first phase, which is another fit)."""
        if (self.n_epoch, self.n_iter, self.accumulate) != (other.n_epoch, other.n_iter, other.accumulate):
            return False
        total = self.total_steps
        return all(self.schedule(s, total) == other.schedule(s, total) for s in {0, total // 2, max(0, total - 1)})

    def to_dict(self) -> dict:
        """Everything but the schedule (a function), as JSON; `total_steps` too, to check a resume."""
        d = asdict(self)
        d.pop("schedule")
        d.pop("ended")  # a checkpoint is written by a fit that has not ended
        d["total_steps"] = self.total_steps
        return d

    @classmethod
    def from_dict(cls, d: dict, schedule: Schedule) -> "FitState":
        """The state `to_dict` wrote, with this fit's `schedule` (schedules are code, not data)."""
        names = ("n_epoch", "n_iter", "accumulate", "fit_seed", "fit_index", "train_iter", "opt_step", "skip_batches")
        return cls(**{k: int(d[k]) for k in names}, schedule=schedule, train_only=bool(d.get("train_only", False)))
