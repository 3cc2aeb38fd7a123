"""Reading a checkpoint back and resuming from it: `load_last`, `CheckpointState.restore`.

A checkpoint is checked before anything of it is used: its files against their checksums (a
file changed on disk after the write is named, and the checkpoint before it is used), then, at
`restore`, the task first (a checkpoint of another task is named as such, whatever else
differs), the model's keys and shapes, the learner's seed, the fit's length (epochs,
accumulation, steps) and its schedule (learning rates, momentum).
"""
from __future__ import annotations

import json
import os
import warnings
from pathlib import Path

import torch

from ...errors import SavedModelError, UsageError
from ..fit_state import FitState
from .layout import (CHECKSUMS, FILES, FORMAT, READABLE_FORMATS, checkpoint_index, checkpointed_callbacks, checkpoints,
                     is_checkpoint_name, sha256, unflatten_optimizer)
from .shape import check_checksums, check_shape


class CheckpointState:
    """A checkpoint read back: `restore` puts it into a learner inside `fit`."""

    def __init__(self, path: Path, model: dict, opt_tensors: dict, meta: dict):
        self.path, self.model, self.opt_tensors, self.meta = path, model, opt_tensors, meta
        self.fit = meta["fit"]  # FitState.to_dict() of the fit when it was written
        self.fit_index = int(self.fit["fit_index"])
        self.next_epoch = int(meta["next_epoch"])  # the epoch the resumed fit starts with
        self.run = meta.get("run")  # the run that wrote it (None: written before runs were kept)

    def restore(self, learner, fit_state: FitState) -> FitState:
        """Model, optimizer, RNG and Recorder into `learner`; returns the fit's state at the
        checkpoint (`fit_state`, the state of the fit that resumes, must describe the same fit).

        What differs is named in the order that explains it: the callbacks whose state the
        checkpoint holds, the task (another task changes the model and the step counts too),
        the model, then the fit's length."""
        m, saved = self.meta, self.fit
        self._restore_callbacks(learner, before_checks=True)  # ProgressiveResize: the size the task is compared at
        self._check_task(learner)
        self._check_model(learner.task_model())
        self._check_seed(learner)
        if int(saved["n_epoch"]) != fit_state.n_epoch or int(saved["accumulate"]) != fit_state.accumulate:
            raise UsageError(f"cannot resume from {self.path}: it is a fit of {saved['n_epoch']} epochs with "
                             f"accumulate={saved['accumulate']}, this fit has {fit_state.n_epoch} epochs with "
                             f"accumulate={fit_state.accumulate}")
        self._check_batches(learner, fit_state)  # before the step count, which they explain
        if int(saved["total_steps"]) != fit_state.total_steps:
            raise UsageError(f"cannot resume from {self.path}: it has {saved['total_steps']} optimizer steps in all, "
                             f"this fit {fit_state.total_steps} (a different batch size or dataset?)")
        self._check_schedule(fit_state)
        learner.task_model().load_state_dict(self.model, strict=True)
        learner.opt.load_state_dict(unflatten_optimizer(self.opt_tensors, m["optimizer"]))
        torch.set_rng_state(self.opt_tensors["rng.cpu"])
        from ..rng import cuda_index

        index = cuda_index(learner.device)
        if index is not None and "rng.cuda" in self.opt_tensors:
            torch.cuda.set_rng_state(self.opt_tensors["rng.cuda"], index)
        self._restore_callbacks(learner, before_checks=False)
        rec = learner.recorder
        rec.history[:] = m["recorder"]["history"]
        rec.losses[:] = m["recorder"]["losses"]
        rec.lrs[:] = m["recorder"]["lrs"]
        return FitState.from_dict(saved, fit_state.schedule)

    def restore_finished(self, learner, fit_state: FitState) -> FitState:
        """This checkpoint is of a later fit than `fit_state`'s: that fit finished before it was
        written, so `fit` skips it, and the learner is put in the state at its end (returned).

        Only when it is the same fit: the checkpoint records each earlier fit of its learner
        (identity.py), and this one must be the fit recorded at its index; and the state at its
        end is that fit's last checkpoint, which rotation keeps (write.py), restored with every
        check of `restore`. A changed script (``fit_one_cycle(2)`` resuming a ``fine_tune``'s
        folder) was skipped silently, leaving an untrained model: it is refused, naming what
        differs. A checkpoint that records neither is refused too: nothing shows the fit it
        skips is this one."""
        self.check_model_fits(learner)  # another model is named as such, whatever else differs
        from .identity import fit_identity

        k = fit_state.fit_index
        recorded, here = self.recorded_fit(k), fit_identity(learner, fit_state)
        if recorded is not None and recorded != here:
            where, a, b = _first_difference(recorded, here, f"fit {k}")
            raise UsageError(f"cannot resume from {self.path}: it is a checkpoint of fit {self.fit_index} of a run whose "
                             f"fit {k} was another one ({where}: {_short(a)} in the checkpoint, {_short(b)} in this "
                             f"fit), so this fit is not the one that finished there; run the script that wrote it, or "
                             f"give this fit another checkpoint folder")
        end = self._end_of_fit(k)
        if end is not None:
            return end.restore(learner, fit_state)
        if recorded is None:
            raise UsageError(f"cannot resume from {self.path}: it is a checkpoint of fit {self.fit_index}, and neither "
                             f"it nor its folder shows what fit {k} was (written by an older hotstart), so this fit "
                             f"cannot be skipped as finished; give this fit another checkpoint folder")
        warnings.warn(f"{self.path}: fit {k} finished before it, but the checkpoint of its end is no longer in "
                      f"{self.path.parent}: the model keeps its weights until the next fit resumes",
                      CheckpointWarning, stacklevel=3)
        return fit_state

    def _end_of_fit(self, fit_index: int) -> "CheckpointState | None":
        """Fit `fit_index`'s last checkpoint in this checkpoint's folder, if it is the one written
        at that fit's end and can be read; else None."""
        mine = [p for p in checkpoints(self.path.parent) if checkpoint_index(p) == fit_index]
        if not mine or not mine[-1].name.endswith("-1"):
            return None
        try:
            end = read_checkpoint(mine[-1])
        except ValueError:
            return None
        return end if end.next_epoch == int(end.fit["n_epoch"]) else None

    def _restore_callbacks(self, learner, before_checks: bool) -> None:
        """Each checkpointed callback's state into this fit's callback of the same place and class:
        first (`before_checks`) those whose class says ``restore_before_checks = True``, whose state
        changes what the task check compares (ProgressiveResize: the size), then the others."""
        saved, here = self.meta.get("callbacks", []), checkpointed_callbacks(learner)
        names = [c["class"] for c in saved], [type(cb).__name__ for cb in here]
        if names[0] != names[1]:
            # single-label image classification averages the weights by default (tasklearner's `ema`)
            hint = ("; tasklearner(ema=False) leaves out the average of the weights that single-label image "
                    "classification adds by default, ema=True adds it" if ("EMA" in names[0]) != ("EMA" in names[1])
                    else "")
            raise UsageError(f"cannot resume from {self.path}: it holds the state of the callbacks {names[0]}, "
                             f"this fit has {names[1]}; resume with the callbacks it was trained with{hint}")
        for i, (entry, cb) in enumerate(zip(saved, here)):
            if bool(getattr(cb, "restore_before_checks", False)) != before_checks:
                continue
            prefix = f"callback.{i}."
            tensors = {k[len(prefix):]: v for k, v in self.opt_tensors.items() if k.startswith(prefix)}
            cb.load_checkpoint_state(tensors, entry["state"])

    def check_model_fits(self, learner) -> None:
        """The checkpoint's weights fit `learner`'s model (the same keys and shapes, named if not).
        `restore` checks it, and so does a fit that the checkpoint shows finished already, which
        `Learner.fit` skips: a resume with another backbone was skipped silently there, leaving an
        untrained model."""
        self._check_model(learner.task_model())

    def _check_task(self, learner) -> None:
        """The checkpoint's task (classes, size, statistics, ...) must be this learner's, compared in
        the form JSON reads back (`json_dict`, as ``==`` compares tasks): a tuple parameter is the
        list the checkpoint holds."""
        saved = self.meta.get("task")
        here = None if learner.task is None else learner.task.json_dict()
        if saved is not None and here is not None and saved != here:
            where, a, b = _first_difference(saved, here)
            raise UsageError(f"cannot resume from {self.path}: it was written for another task ({where}: "
                             f"{_short(a)} in the checkpoint, {_short(b)} in this fit); resume with the task "
                             f"it was trained with, or give this fit another checkpoint folder")

    def _check_seed(self, learner) -> None:
        """The checkpoint's learner seed must be this learner's: another seed is another train /
        validation split and other augmentations."""
        saved = self.meta.get("seed")
        if saved is not None and int(saved) != learner.seed:
            raise UsageError(f"cannot resume from {self.path}: it was written by a learner with seed={saved}, "
                             f"this one has seed={learner.seed} (another train / validation split, other "
                             f"augmentations); build the learner with seed={saved} to resume it")

    def _check_schedule(self, fit_state: FitState) -> None:
        """The checkpoint's schedule must be this fit's (fit_state.py `schedule_identity`: the peak
        rate and the other hyperparameters): another one would be spliced into the fit at the
        checkpoint's step. A checkpoint written before the schedule was kept is not checked."""
        saved = self.fit.get("schedule")
        here = fit_state.schedule_identity()
        if saved is not None and saved != here:
            where, a, b = _first_difference(saved, here, "schedule")
            raise UsageError(f"cannot resume from {self.path}: it was written by a fit with another schedule "
                             f"({where}: {_short(a)} in the checkpoint, {_short(b)} in this fit); resume with the "
                             f"learning rate and schedule it was trained with, or give this fit another checkpoint "
                             f"folder")

    def recorded_fit(self, fit_index: int) -> dict | None:
        """The identity (identity.py `fit_identity`) the checkpoint recorded for its learner's fit
        `fit_index` (its own fit or an earlier one), or None when it recorded none (written before
        the fits were kept, or a fit it did not know)."""
        fits = self.meta.get("fits")
        return fits[fit_index] if isinstance(fits, list) and 0 <= fit_index < len(fits) else None

    def _check_batches(self, learner, fit_state: FitState) -> None:
        """The checkpoint's batch size and training data (identity.py) must be this fit's: with
        another batch size, or other data, giving the same batches per epoch, a resume was accepted
        silently. A checkpoint written before they were kept is not checked."""
        from .identity import fit_identity

        saved = self.recorded_fit(self.fit_index) or {}
        here = fit_identity(learner, fit_state)
        for key, other, what in (("batch_size", "another batch size", "batch size"),
                                 ("data", "other training data", "training data")):
            if key in saved and saved[key] != here[key]:
                where, a, b = _first_difference(saved[key], here[key], key)
                raise UsageError(f"cannot resume from {self.path}: it was written by a fit with {other} "
                                 f"({where}: {_short(a)} in the checkpoint, {_short(b)} in this fit); resume with "
                                 f"the {what} it was trained with, or give this fit another checkpoint folder")

    def _check_model(self, model) -> None:
        """The checkpoint's weights must fit `model`: the same keys and shapes, named if not."""
        want = model.state_dict()
        missing = sorted(set(want) - set(self.model))
        unexpected = sorted(set(self.model) - set(want))
        shapes = [f"{k} {tuple(self.model[k].shape)} in the checkpoint, {tuple(want[k].shape)} here"
                  for k in want if k in self.model and tuple(self.model[k].shape) != tuple(want[k].shape)]
        if missing or unexpected or shapes:
            parts = ([f"missing in the checkpoint: {_keys(missing)}"] if missing else []) + \
                    ([f"not in this model: {_keys(unexpected)}"] if unexpected else []) + \
                    ([f"other shapes: {_keys(shapes)}"] if shapes else [])
            raise UsageError(f"cannot resume from {self.path}: it holds the weights of another model ("
                             + "; ".join(parts) + "); resume with the model it was trained with")

    def restore_epoch(self, learner) -> None:
        """At the start of the resumed epoch (after `before_epoch` reset the running sums)."""
        if learner.fit_state.skip_batches:
            rec = self.meta["recorder"]
            per_process = rec.get("processes") or []
            if len(per_process) == learner.backend.world_size:  # this process's own sums (write.py)
                learner.recorder.set_running_sums(per_process[learner.backend.global_rank])
            else:  # written by another number of processes (or before "processes" was kept): the writer's
                learner.recorder.set_running_sums(rec)


def read_checkpoint(path) -> CheckpointState:
    """Read one checkpoint folder; a `SavedModelError` naming the file if it is damaged or was
    changed after it was written (its checksum differs)."""
    from safetensors import SafetensorError
    from safetensors.torch import load as st_load

    path = Path(path)
    try:
        raw = {name: (path / name).read_bytes() for name in FILES}
        has_sums = (path / CHECKSUMS).is_file()
        if has_sums:
            recorded = check_checksums(json.loads((path / CHECKSUMS).read_bytes()), CHECKSUMS)
            for name, data in raw.items():
                if recorded.get(name) != sha256(data):
                    raise SavedModelError(f"{name} was changed after it was written (its SHA-256 is not the one in "
                                          f"{CHECKSUMS}: damaged on disk, or overwritten)")
        meta = json.loads(raw["state.json"])
        if isinstance(meta, dict) and meta.get("format") not in READABLE_FORMATS:
            raise SavedModelError(f"format {meta.get('format')!r}, expected {FORMAT!r}")
        check_shape(meta, "state.json")  # every key reading and resuming use (shape.py)
        if meta["format"] == FORMAT and not has_sums:
            raise SavedModelError(f"{CHECKSUMS} is missing")
        model = st_load(raw["model.safetensors"])
        opt_tensors = st_load(raw["optimizer.safetensors"])
    except (OSError, ValueError, KeyError) as e:
        raise SavedModelError(f"checkpoint {path} cannot be read: {e}") from e
    except SafetensorError as e:  # a damaged tensor file
        raise SavedModelError(f"checkpoint {path} cannot be read: {type(e).__name__}: {e}") from e
    return CheckpointState(path, model, opt_tensors, meta)


class CheckpointWarning(UserWarning):
    """A checkpoint could not be read and an older one is used instead (the message names it)."""


def checkpoint_to_resume(resume, checkpoint_dir=None) -> CheckpointState | None:
    """`fit(resume=...)`'s checkpoint: the last one in `resume`. ``resume=checkpoint_dir`` means
    "go on if a run left something there" (a missing folder is no error then); any other
    `resume` folder must exist."""
    same = checkpoint_dir is not None and os.path.abspath(resume) == os.path.abspath(checkpoint_dir)
    return load_last(resume, missing_ok=same)


def load_last(folder, *, missing_ok: bool = False) -> CheckpointState | None:
    """The last complete, readable checkpoint in `folder`, or None when it holds none.

    A folder that does not exist is a `UsageError` (a misspelled ``resume=`` path must not train
    from scratch without a word, as fastai and Lightning users expect), unless `missing_ok`:
    ``fit(checkpoint_dir=D, resume=D)`` means "go on from D if a run left something there", so
    the first run of such a command starts from scratch. A newest checkpoint that cannot be read
    (damaged on disk after it was written) is named in a `CheckpointWarning`, and the one before
    it is used."""
    folder = Path(folder)
    if not folder.is_dir():
        if missing_ok:
            return None
        raise UsageError(f"resume={str(folder)!r}: no such folder; give the checkpoint_dir of the run to resume "
                         f"(pass the same folder as checkpoint_dir to start from scratch when it holds nothing)")
    found = checkpoints(folder)
    if not found:
        refuse_other_folders(folder)
    errors = []
    for path in reversed(found):
        try:
            state = read_checkpoint(path)
        except ValueError as e:  # damaged on disk after it was written: fall back to the one before
            errors.append(str(e))
            continue
        if errors:
            warnings.warn(f"{'; '.join(errors)}; resuming from the one before, {path}", CheckpointWarning,
                          stacklevel=2)
        return state
    if errors:
        raise SavedModelError("no readable checkpoint in " + str(folder) + ": " + "; ".join(errors))
    return None


def refuse_other_folders(folder: Path) -> None:
    """A `UsageError` when `folder`, given as ``resume=`` and holding no checkpoint, is one
    checkpoint's own folder or a saved model's: either trained from scratch without a word, as a
    folder that holds nothing does. The message says what to pass."""
    if is_checkpoint_name(folder.name) or any((folder / name).exists() for name in (*FILES, CHECKSUMS)):
        raise UsageError(f"resume={str(folder)!r} is one checkpoint's folder; pass the folder that holds the "
                         f"checkpoints (the fit's checkpoint_dir): resume={str(folder.parent)!r}")
    if (folder / "task.json").exists() or (folder / "weights.safetensors").exists():
        raise UsageError(f"resume={str(folder)!r} is a saved model, not a checkpoint folder: load it with "
                         f"hotstart.load_learner({str(folder)!r}) and fit that, or pass the checkpoint_dir of the run "
                         f"to resume")


def _first_difference(a, b, where: str = "task"):
    """(path, value in a, value in b) of the first place where two JSON values differ."""
    if isinstance(a, dict) and isinstance(b, dict):
        for k in [*a, *(k for k in b if k not in a)]:
            if a.get(k) != b.get(k):
                return _first_difference(a.get(k), b.get(k), f"{where}.{k}")
    nested = lambda v: isinstance(v, (dict, list))  # noqa: E731
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b) and any(map(nested, a + b)):
        for i, (x, y) in enumerate(zip(a, b)):
            if x != y:
                return _first_difference(x, y, f"{where}[{i}]")
    return where, a, b


def _short(value, limit: int = 120) -> str:
    text = json.dumps(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _keys(names, limit: int = 5) -> str:
    shown = ", ".join(names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")
