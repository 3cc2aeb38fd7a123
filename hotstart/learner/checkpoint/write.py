"""`Checkpointer`: writes the checkpoints of one fit (created by `Learner.fit` with `checkpoint_dir`).

``state.json`` holds what is not a tensor: the optimizer's scalars and parameter groups, the fit's
`FitState` (``"fit"``: epochs, batches per epoch, accumulation, optimizer steps, batches done,
the fit's seed and index, and what identifies its schedule; learner/fit_state.py) and the epoch to go on with (the loaders
reshuffle from ``(fit seed, epoch)``, so that and the batches done place the sampler exactly),
the task, the Recorder's history, per-batch losses and running sums (every process's: each sums
its own shard), checkpointed callbacks' JSON, the run that wrote it (``"run"``) and the identity of
this fit and of each earlier fit of the learner (``"fits"``, identity.py).

Each file is written with ``hotstart.atomic`` into a temporary folder in DIR, and the folder is
renamed to its final name when all four (with ``checksums.json``, written last) are on disk: a
rename is atomic, so a ``ckpt-*`` folder is always complete, and a kill leaves at most a
``.tmp-*`` folder, removed by the next run (a write that fails in the process removes its own and
names the checkpoint). Of the running fit, `keep` (2) checkpoints are kept, the one just written
always among them, and of each earlier fit its last one (`to_rotate`); others are renamed away,
then deleted. A folder belongs to one run: a new fit refuses one holding another run's checkpoints
(`refuse_other_runs`). Only the first process writes; the others wait at a barrier.
While it writes, a fit holds the folder's `FolderLock`.
"""
from __future__ import annotations

import dataclasses
import json
import os
import shutil
import tempfile
from pathlib import Path

import torch

from ...atomic import atomic_write_bytes, default_folder_mode, fsync_dir
from ...errors import SavedModelError, UsageError
from ...write_errors import write_error
from .folder_lock import FolderLock
from .layout import (CHECKSUMS, FORMAT, checkpoint_index, checkpoint_name, checkpointed_callbacks, checkpoints,
                     flatten_optimizer, remove_checkpoint, sha256)


class Checkpointer:
    """Writes the checkpoints of one fit into `folder`, every `every` optimizer steps and at each
    epoch's end, keeping the last `keep`."""

    def __init__(self, learner, folder, every: int | None = None, keep: int = 2, *, run: str | None = None,
                 resuming: bool = False):
        self.learner, self.folder, self.every, self.keep = learner, Path(folder), every, int(keep)
        self.run = learner.run_id if run is None else run  # the run the checkpoints belong to (state.json "run")
        self._last_step = None
        self._lock = None
        if learner.backend.is_global_zero:
            try:  # a read-only or full file system: an error naming the checkpoint folder
                self.folder.mkdir(parents=True, exist_ok=True)
                self._lock = FolderLock(self.folder)  # before anything is cleaned up or written
            except OSError as e:
                raise write_error(self.folder, e, detail="the checkpoint folder") from e
            try:
                refuse_other_runs(self.folder, self.run, resuming)
            except BaseException:
                self.close()
                raise
            for p in self.folder.iterdir():  # what a killed writer left behind
                if p.name.startswith((".tmp-", ".trash-")) and p.is_dir():
                    shutil.rmtree(p, ignore_errors=True)

    def close(self) -> None:
        """Let another fit write into the folder (`fit` calls it when it ends, however it ends)."""
        if self._lock is not None:
            self._lock.release()
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
        from ..callbacks.nan_guard import NonFiniteGuard

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

        from ..rng import cuda_index

        ln = self.learner
        rec = ln.recorder
        model = {k: v.detach().cpu().contiguous().clone() for k, v in ln.task_model().state_dict().items()}
        opt_tensors, opt_meta = flatten_optimizer(ln.opt.state_dict())
        opt_tensors["rng.cpu"] = torch.get_rng_state()
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
            "run": self.run,  # which run wrote it: a new fit refuses a folder of another run's checkpoints
            # the identity of this fit and of each earlier fit of the learner (identity.py): a resume
            # checks its batch size and data, and skips a finished fit only if it is the one recorded
            "fits": [ln.fit_identities.get(i) for i in range(fs.fit_index + 1)],
            "task": None if ln.task is None else ln.task.to_dict(),  # a resume with another task is refused
            "next_epoch": ln.epoch + 1 if epoch_done else ln.epoch,
            "optimizer": opt_meta,
            "recorder": {"history": rec.history, "losses": rec.losses, "lrs": rec.lrs, **rec.running_sums(),
                         "processes": process_sums},
            "callbacks": callbacks,
        }
        files = {"model.safetensors": st_save(model, metadata={"format": FORMAT}),
                 "optimizer.safetensors": st_save(opt_tensors, metadata={"format": FORMAT}),
                 "state.json": json.dumps(state).encode()}
        name = checkpoint_name(fs.fit_index, fs.train_iter, epoch_done)
        final = self.folder / name
        tmp = Path(tempfile.mkdtemp(prefix=f".tmp-{name}-", dir=self.folder))
        try:
            for file, data in files.items():
                atomic_write_bytes(tmp / file, data)
            atomic_write_bytes(tmp / CHECKSUMS, json.dumps({f: sha256(d) for f, d in files.items()}).encode())
            os.chmod(tmp, default_folder_mode())  # mkdtemp makes 0700; a checkpoint folder gets the usual mode
            fsync_dir(tmp)
        except BaseException as e:  # a full disk, Ctrl-C: no .tmp-* folder left until the next run
            shutil.rmtree(tmp, ignore_errors=True)
            if isinstance(e, OSError):  # a WriteError naming the checkpoint (same errno and kind of OSError)
                raise write_error(final, e, detail="a checkpoint") from e
            if isinstance(e, Exception):
                raise SavedModelError(f"cannot write checkpoint {final}: {type(e).__name__}: {e}") from e
            raise
        if final.exists():  # the same position written again (a resumed run): replace it
            remove_checkpoint(final)
        os.replace(tmp, final)
        fsync_dir(self.folder)
        for old in to_rotate(checkpoints(self.folder), final, self.keep):
            remove_checkpoint(old)
        return final


def to_rotate(found: list[Path], written: Path, keep: int) -> list[Path]:
    """The checkpoints to delete after `written` was written (`found`: the folder's, oldest first).

    Of the fit that wrote it (its index), `keep` are kept: `written` itself, whatever its name
    (a name may sort below older ones), and the last others; of each other fit, its last one, the state at its end,
    which a resume that skips that finished fit loads (learner/loop.py)."""
    index = checkpoint_index(written)
    others = [p for p in found if checkpoint_index(p) == index and p != written]
    kept = {written, *(others[-(keep - 1):] if keep > 1 else [])}
    last_of_each = {checkpoint_index(p): p for p in found}  # oldest first: the last one of each fit wins
    kept.update(p for i, p in last_of_each.items() if i != index)
    return [p for p in found if p not in kept]


def refuse_other_runs(folder: Path, run: str, resuming: bool) -> None:
    """A `UsageError` when `folder` holds checkpoints of another run than `run`.

    A new fit writing into a folder that holds an earlier run's checkpoints mixed the two: the
    names of the new run sorted below the old ones, so rotation deleted the new fit's checkpoint
    at once, and a later resume continued the old run (Lightning refuses or warns too). A
    checkpoint written before runs were recorded counts as another run's, unless this fit resumes
    (it may have resumed from one of them). An unreadable ``state.json`` is left to the resume's
    reading, which names it."""
    others = []
    for path in checkpoints(folder):
        try:
            recorded = json.loads((path / "state.json").read_bytes())
        except (OSError, ValueError):
            continue
        owner = recorded.get("run") if isinstance(recorded, dict) else None
        if owner != run and not (owner is None and resuming):
            others.append(path.name)
    if others:
        shown = ", ".join(others[:3]) + (f" and {len(others) - 3} more" if len(others) > 3 else "")
        raise UsageError(f"checkpoint_dir {folder} holds checkpoints of another run ({shown}): pass resume={str(folder)!r} "
                         f"to continue that run, or give this fit a new checkpoint_dir (or delete them)")


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
