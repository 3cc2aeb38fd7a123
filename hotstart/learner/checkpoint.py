"""Checkpoints of a running fit, and resuming from the last complete one, bit for bit.

``fit(..., checkpoint_dir=DIR)`` writes a checkpoint at the end of every epoch, and after every
`checkpoint_every` optimizer steps when that is given; while it writes, it holds a lock on
``DIR/.lock``, so a second fit writing into the same folder is refused (a `UsageError`).
``fit(..., resume=DIR)`` continues from the last complete checkpoint in DIR, and starts from
scratch when DIR holds none. A DIR that does not exist is an error, unless it is also the
fit's `checkpoint_dir` (then "resume if a run left something there"). The checkpoint holds the
task and the model's keys and shapes: a resume with another task (other classes, size, ...) or
another model is refused with an error that names what differs. A newest checkpoint that
cannot be read is named in a warning and the one before it is used. On CPU in one
process, a fit killed at any moment and resumed ends with the same weights and history (except
the wall-clock ``time`` column) as one never interrupted (tests/test_learner_checkpoint.py).

A checkpoint is a folder ``DIR/ckpt-<fit>-<batches trained>-<epoch done>`` of three files:

- ``model.safetensors``: the model's state dict;
- ``optimizer.safetensors``: every tensor of the optimizer's state (``state.<param>.<name>``) and
  the learner's private torch RNG states (``rng.cpu``, ``rng.cuda``);
- ``state.json``: everything else: the optimizer's scalars and parameter groups, the fit's
  `FitState` (``"fit"``: epochs, batches per epoch, accumulation, optimizer steps, batches done,
  the fit's seed and index; learner/fit_state.py) and the epoch to go on with (the loaders
  reshuffle from ``(fit seed, epoch)``, so that and the batches done place the sampler exactly),
  the Recorder's history, per-batch losses and running sums (every process's: each sums its own shard).

No pickle anywhere. Each file is written with ``hotstart.atomic`` into a temporary folder in DIR,
and the folder is renamed to its final name when all three are on disk: a rename is atomic, so
a ``ckpt-*`` folder is always complete, and a kill leaves at most a ``.tmp-*`` folder, removed
by the next run. The last `keep` (2) checkpoints are kept; older ones are renamed away, then
deleted. Only the first process writes; the others wait at a barrier.

A callback with ``checkpoint_state() -> (tensors, JSON)`` and ``load_checkpoint_state(tensors,
JSON)`` (`EMA`: the averaged weights) is stored too: its tensors as ``callback.<i>.<key>`` in
``optimizer.safetensors``, its JSON under ``"callbacks"`` (with its class name, checked on resume).
One whose class sets ``restore_before_checks = True`` is restored before the task is compared
(`ProgressiveResize`: the checkpoint's size), the others after the model and optimizer.
What is not in a checkpoint: other callbacks' own state (EarlyStopping's patience counter,
SaveBestModel's best value) and anything a user's `train_step` keeps on the learner.
"""
from __future__ import annotations

import dataclasses
import json
import os
import re
import shutil
import socket
import tempfile
import warnings
from pathlib import Path

import torch

from ..atomic import atomic_write_bytes, default_folder_mode, fsync_dir
from ..errors import SavedModelError, UsageError
from .fit_state import FitState

FORMAT = "hotstart.checkpoint/2"  # /2: the position is a FitState.to_dict() under "fit"
_NAME = re.compile(r"^ckpt-(\d+)-(\d+)-([01])$")


def checkpoints(folder) -> list[Path]:
    """The complete checkpoints in `folder`, oldest first."""
    folder = Path(folder)
    if not folder.is_dir():
        return []
    found = [(tuple(int(g) for g in m.groups()), p) for p in folder.iterdir() if (m := _NAME.match(p.name))]
    return [p for _, p in sorted(found)]


def _remove(path: Path) -> None:
    """Rename away, then delete: a half-deleted checkpoint never keeps a ``ckpt-*`` name."""
    trash = path.with_name(f".trash-{path.name}-{os.getpid()}")
    try:
        os.replace(path, trash)
    except FileNotFoundError:
        return
    shutil.rmtree(trash, ignore_errors=True)


# --- the optimizer's state, without pickle ---------------------------------------------------

def _flatten_optimizer(sd: dict) -> tuple[dict, dict]:
    tensors, scalars = {}, {}
    for idx, st in sd["state"].items():
        for name, v in st.items():
            if torch.is_tensor(v):
                tensors[f"state.{idx}.{name}"] = v.detach().cpu().contiguous()
            else:
                scalars.setdefault(str(idx), {})[name] = v
    groups = []
    for g in sd["param_groups"]:
        g = dict(g)
        tuples = sorted(k for k, v in g.items() if isinstance(v, tuple))
        for k in tuples:
            g[k] = list(g[k])
        g["__tuples__"] = tuples
        groups.append(g)
    return tensors, {"scalars": scalars, "param_groups": groups}


def _unflatten_optimizer(tensors: dict, meta: dict) -> dict:
    state: dict = {}
    for key, v in tensors.items():
        if key.startswith("state."):
            _, idx, name = key.split(".", 2)
            state.setdefault(int(idx), {})[name] = v
    for idx, st in meta["scalars"].items():
        state.setdefault(int(idx), {}).update(st)
    groups = []
    for g in meta["param_groups"]:
        g = dict(g)
        for k in g.pop("__tuples__", []):
            g[k] = tuple(g[k])
        groups.append(g)
    return {"state": state, "param_groups": groups}


# --- writing ------------------------------------------------------------------------------------

LOCK_NAME = ".lock"


def _lock_folder(folder: Path) -> int | None:
    """Hold an exclusive lock on ``folder/.lock`` while a fit writes there; another writer of the
    same folder (another process, or another fit in this one) gets a `UsageError` instead of
    interleaving its checkpoints with ours. The operating system's lock (``flock``) goes away
    with the process, so a killed run leaves no stale lock behind. Where ``fcntl`` is missing
    (Windows) the folder is not locked."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        return None
    fd = os.open(folder / LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        holder = os.pread(fd, 200, 0).decode(errors="replace").strip() or "another process"
        os.close(fd)
        raise UsageError(f"checkpoint_dir {folder} is being written by {holder}: two fits cannot write "
                         f"one checkpoint folder; give this one another checkpoint_dir") from None
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"process {os.getpid()} on {socket.gethostname()}".encode(), 0)
    return fd


class Checkpointer:
    """Writes the checkpoints of one fit (created by `Learner.fit` when `checkpoint_dir` is given)."""

    def __init__(self, learner, folder, every: int | None = None, keep: int = 2):
        self.learner, self.folder, self.every, self.keep = learner, Path(folder), every, int(keep)
        self._last_step = None
        self._lock = None
        if learner.backend.is_global_zero:
            self.folder.mkdir(parents=True, exist_ok=True)
            self._lock = _lock_folder(self.folder)  # before anything is cleaned up or written
            for p in self.folder.iterdir():  # what a killed writer left behind
                if p.name.startswith((".tmp-", ".trash-")) and p.is_dir():
                    shutil.rmtree(p, ignore_errors=True)

    def close(self) -> None:
        """Let another fit write into the folder (`fit` calls it when it ends, however it ends)."""
        if self._lock is not None:
            os.close(self._lock)  # closing the file releases its lock
            self._lock = None

    def maybe_save(self):
        """After a training batch: every `every` optimizer steps, unless the epoch ends now (the
        epoch's own checkpoint follows its validation)."""
        ln = self.learner
        fs = ln.fit_state
        if not self.every or fs.opt_step == self._last_step or fs.opt_step % self.every:
            return
        if ln.iter + 1 >= fs.n_iter:
            return
        from .callbacks.nan_guard import NonFiniteGuard

        guard = ln.cb(NonFiniteGuard)
        if guard is not None:  # its checks are every few steps: no checkpoint of a model that went NaN since
            guard.check()
        self.save(epoch_done=False)

    def save(self, epoch_done: bool) -> Path | None:
        ln = self.learner
        self._last_step = ln.fit_state.opt_step
        path = None
        sums = running_sums_of_every_process(ln)  # a collective: every process takes part
        if ln.backend.is_global_zero:
            path = self._write(epoch_done, sums)
        ln.backend.barrier()
        return path

    def _write(self, epoch_done: bool, process_sums: list) -> Path:
        from safetensors.torch import save as st_save

        ln = self.learner
        rec = ln.recorder
        model = {k: v.detach().cpu().contiguous().clone() for k, v in ln.task_model().state_dict().items()}
        opt_tensors, opt_meta = _flatten_optimizer(ln.opt.state_dict())
        opt_tensors["rng.cpu"] = torch.get_rng_state()
        from .rng import cuda_index

        index = cuda_index(ln.device)
        if index is not None:
            opt_tensors["rng.cuda"] = torch.cuda.get_rng_state(index)
        fs = ln.fit_state
        batches_done = 0 if epoch_done else ln.iter + 1
        callbacks = []
        for i, cb in enumerate(checkpointed_callbacks(ln)):
            tensors, meta = cb.checkpoint_state()
            opt_tensors.update({f"callback.{i}.{k}": v for k, v in tensors.items()})
            callbacks.append({"class": type(cb).__name__, "state": meta})
        state = {
            "format": FORMAT,
            "fit": dataclasses.replace(fs, skip_batches=batches_done).to_dict(),  # learner/fit_state.py
            "seed": ln.seed,
            "task": None if ln.task is None else ln.task.to_dict(),  # a resume with another task is refused
            "next_epoch": ln.epoch + 1 if epoch_done else ln.epoch,
            "optimizer": opt_meta,
            "recorder": {"history": rec.history, "losses": rec.losses, "lrs": rec.lrs, **rec.running_sums(),
                         "processes": process_sums},
            "callbacks": callbacks,
        }
        name = f"ckpt-{fs.fit_index:03d}-{fs.train_iter:09d}-{int(epoch_done)}"
        tmp = Path(tempfile.mkdtemp(prefix=f".tmp-{name}-", dir=self.folder))
        atomic_write_bytes(tmp / "model.safetensors", st_save(model, metadata={"format": FORMAT}))
        atomic_write_bytes(tmp / "optimizer.safetensors", st_save(opt_tensors, metadata={"format": FORMAT}))
        atomic_write_bytes(tmp / "state.json", json.dumps(state).encode())
        os.chmod(tmp, default_folder_mode())  # mkdtemp makes 0700; a checkpoint folder gets the usual mode
        fsync_dir(tmp)
        final = self.folder / name
        if final.exists():  # the same position written again (a resumed run): replace it
            _remove(final)
        os.replace(tmp, final)
        fsync_dir(self.folder)
        for old in checkpoints(self.folder)[:-self.keep]:
            _remove(old)
        return final


def running_sums_of_every_process(learner) -> list[dict]:
    """Every process's `Recorder.running_sums()`, in rank order, on every process.

    Each process sums the training losses of its own shard; the epoch's loss adds them up at
    the epoch's end. A checkpoint in the middle of an epoch must carry every process's sums, not
    only the writer's, for a resumed epoch to report the loss of the uninterrupted one. Gathered
    through the backend's float64 sum (each process fills its own slots, the others add zeros:
    exact), so no other collective is needed."""
    rec, backend = learner.recorder, learner.backend
    world, rank = backend.world_size, backend.global_rank
    mine = rec.running_sums()
    if world == 1:
        return [mine]
    slots = [0.0] * (4 * world)
    slots[4 * rank:4 * rank + 4] = [*mine["sum"], *mine["n"]]
    total = backend.all_reduce_sum(*slots)
    return [{"sum": list(total[4 * r:4 * r + 2]), "n": [int(v) for v in total[4 * r + 2:4 * r + 4]]}
            for r in range(world)]


def checkpointed_callbacks(learner) -> list:
    """The learner's callbacks whose state goes into checkpoints, in the learner's order."""
    return [cb for cb in learner.cbs if callable(getattr(type(cb), "checkpoint_state", None))]


# --- reading ------------------------------------------------------------------------------------

class CheckpointState:
    """A checkpoint read back: `restore` puts it into a learner inside `fit`."""

    def __init__(self, path: Path, model: dict, opt_tensors: dict, meta: dict):
        self.path, self.model, self.opt_tensors, self.meta = path, model, opt_tensors, meta
        self.fit = meta["fit"]  # FitState.to_dict() of the fit when it was written
        self.fit_index = int(self.fit["fit_index"])
        self.next_epoch = int(meta["next_epoch"])  # the epoch the resumed fit starts with

    def restore(self, learner, fit_state: FitState) -> FitState:
        """Model, optimizer, RNG and Recorder into `learner`; returns the fit's state at the
        checkpoint (`fit_state`, the state of the fit that resumes, must describe the same fit)."""
        m, saved = self.meta, self.fit
        if int(saved["n_epoch"]) != fit_state.n_epoch or int(saved["accumulate"]) != fit_state.accumulate:
            raise UsageError(f"cannot resume from {self.path}: it is a fit of {saved['n_epoch']} epochs with "
                             f"accumulate={saved['accumulate']}, this fit has {fit_state.n_epoch} epochs with "
                             f"accumulate={fit_state.accumulate}")
        if int(saved["total_steps"]) != fit_state.total_steps:
            raise UsageError(f"cannot resume from {self.path}: it has {saved['total_steps']} optimizer steps in all, "
                             f"this fit {fit_state.total_steps} (a different batch size or dataset?)")
        self._restore_callbacks(learner, before_checks=True)  # ProgressiveResize: the size the task is compared at
        self._check_task(learner)
        self._check_model(learner.task_model())
        learner.task_model().load_state_dict(self.model, strict=True)
        learner.opt.load_state_dict(_unflatten_optimizer(self.opt_tensors, m["optimizer"]))
        torch.set_rng_state(self.opt_tensors["rng.cpu"])
        from .rng import cuda_index

        index = cuda_index(learner.device)
        if index is not None and "rng.cuda" in self.opt_tensors:
            torch.cuda.set_rng_state(self.opt_tensors["rng.cuda"], index)
        self._restore_callbacks(learner, before_checks=False)
        rec = learner.recorder
        rec.history[:] = m["recorder"]["history"]
        rec.losses[:] = m["recorder"]["losses"]
        rec.lrs[:] = m["recorder"]["lrs"]
        return FitState.from_dict(saved, fit_state.schedule)

    def _restore_callbacks(self, learner, before_checks: bool) -> None:
        """Each checkpointed callback's state into this fit's callback of the same place and class:
        first (`before_checks`) those whose class says ``restore_before_checks = True``, whose state
        changes what the task check compares (ProgressiveResize: the size), then the others."""
        saved, here = self.meta.get("callbacks", []), checkpointed_callbacks(learner)
        names = [c["class"] for c in saved], [type(cb).__name__ for cb in here]
        if names[0] != names[1]:
            raise UsageError(f"cannot resume from {self.path}: it holds the state of the callbacks {names[0]}, "
                             f"this fit has {names[1]}; resume with the callbacks it was trained with")
        for i, (entry, cb) in enumerate(zip(saved, here)):
            if bool(getattr(cb, "restore_before_checks", False)) != before_checks:
                continue
            prefix = f"callback.{i}."
            tensors = {k[len(prefix):]: v for k, v in self.opt_tensors.items() if k.startswith(prefix)}
            cb.load_checkpoint_state(tensors, entry["state"])

    def _check_task(self, learner) -> None:
        """The checkpoint's task (classes, size, statistics, ...) must be this learner's."""
        saved = self.meta.get("task")
        here = None if learner.task is None else learner.task.to_dict()
        if saved is not None and here is not None and saved != here:
            where, a, b = _first_difference(saved, here)
            raise UsageError(f"cannot resume from {self.path}: it was written for another task ({where}: "
                             f"{_short(a)} in the checkpoint, {_short(b)} in this fit); resume with the task "
                             f"it was trained with, or give this fit another checkpoint folder")

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
            if len(per_process) == learner.backend.world_size:  # this process's own sums (learner/checkpoint.py)
                learner.recorder.set_running_sums(per_process[learner.backend.global_rank])
            else:  # written by another number of processes (or before "processes" was kept): the writer's
                learner.recorder.set_running_sums(rec)


def read_checkpoint(path) -> CheckpointState:
    """Read one checkpoint folder; a clear error naming the file if it is damaged."""
    from safetensors import SafetensorError
    from safetensors.torch import load as st_load

    path = Path(path)
    try:
        meta = json.loads((path / "state.json").read_bytes())
        if meta.get("format") != FORMAT:
            raise SavedModelError(f"format {meta.get('format')!r}, expected {FORMAT!r}")
        model = st_load((path / "model.safetensors").read_bytes())
        opt_tensors = st_load((path / "optimizer.safetensors").read_bytes())
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
    errors = []
    for path in reversed(checkpoints(folder)):
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
