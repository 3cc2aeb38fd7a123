"""Checkpoints of a running fit, and resuming from the last complete one, bit for bit.

``fit(..., checkpoint_dir=DIR)`` writes a checkpoint at the end of every epoch, and after every
`checkpoint_every` optimizer steps when that is given; while it writes, it holds a lock on
``DIR/.lock`` (folder_lock.py), so a second fit writing into the same folder is refused (a
`UsageError`), and a killed fit's lock dies with it. ``fit(..., resume=DIR)`` continues from the
last complete checkpoint in DIR, and starts from scratch when DIR holds none. A DIR that does not
exist is an error, unless it is also the fit's `checkpoint_dir` (then "resume if a run left
something there"). The checkpoint holds the task and the model's keys and shapes: a resume with
another task (other classes, size, ...) or another model is refused with an error that names
what differs, the task first. A newest checkpoint that cannot be read, or whose files no longer
match their checksums, or whose JSON files are of the wrong shape, is named in a warning and the
one before it is used. ``resume=`` given one checkpoint's folder or a saved model's is refused. On CPU in one
process, a fit killed at any moment and resumed ends with the same weights and history (except
the wall-clock ``time`` column) as one never interrupted (tests/test_learner_checkpoint.py).

No pickle anywhere.

    layout.py       the folder's files and name, the optimizer's state as tensors + JSON, checksums
    write.py        `Checkpointer`: writes a fit's checkpoints (atomically: a ``ckpt-*`` folder is complete)
    read.py         `load_last`, `CheckpointState.restore`: checks, then puts a checkpoint into a learner
    shape.py        `check_shape`: state.json / checksums.json hold the keys and types reading expects
    identity.py     `fit_identity`: what identifies a fit and its training data, compared on resume
    folder_lock.py  `FolderLock`: one writer per folder, a lock that dies with its process

A callback with ``checkpoint_state() -> (tensors, JSON)`` and ``load_checkpoint_state(tensors,
JSON)`` (`EMA`: the averaged weights) is stored too: its tensors as ``callback.<i>.<key>`` in
``optimizer.safetensors``, its JSON under ``"callbacks"`` (with its class name, checked on resume).
One whose class sets ``restore_before_checks = True`` is restored before the task is compared
(`ProgressiveResize`: the checkpoint's size), the others after the model and optimizer.
What is not in a checkpoint: other callbacks' own state (EarlyStopping's patience counter,
SaveBestModel's best value) and anything a user's `train_step` keeps on the learner.
"""
from .folder_lock import LOCK_NAME, FolderLock
from .layout import FORMAT, checkpoints
from .read import CheckpointState, CheckpointWarning, checkpoint_to_resume, load_last, read_checkpoint
from .write import Checkpointer, running_sums_of_every_process

__all__ = ["Checkpointer", "CheckpointState", "CheckpointWarning", "FORMAT", "FolderLock", "LOCK_NAME",
           "checkpoint_to_resume", "checkpoints", "load_last", "read_checkpoint", "running_sums_of_every_process"]
