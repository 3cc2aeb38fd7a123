"""Prediction with a learner: one raw input, or the whole validation set."""
from __future__ import annotations

from typing import Any

import torch

from ..errors import UsageError


def encode_raw_input(task, raw_input):
    """`raw_input` encoded as in inference, after the task loads it (``task.load_input``: an image
    file's path becomes its image). The one reading of a raw input for `predict`, `get_preds(items=)`
    and `test_loader`, so all three take the same inputs."""
    return task.encode_input(task.load_input(raw_input))


def predict(learner, raw_input) -> tuple[Any, torch.Tensor]:
    """Encode one raw input as in inference, run the model, decode: (label, probabilities).

    For an image task, `raw_input` may also be a file's path (str or ``os.PathLike``), as in fastai.
    """
    if learner.task is None:
        raise UsageError("predict needs the learner's task (build it with tasklearner)")
    x = encode_raw_input(learner.task, raw_input)  # errors about the input as it is
    out = learner.run_eval(torch.utils.data.DataLoader([x], batch_size=1), keep=lambda out, xb, yb: (out,))[0][0]
    return learner.task.decode_prediction(out, raw_input)  # back to the given image's size, where it matters


def get_preds(learner, loader=None):
    """(probabilities, encoded targets) over `loader` (default: the validation set), in order.

    `loader` is any DataLoader of encoded ``(input, target)`` batches, e.g. one made with
    ``hotstart.learner.data.make_loader``; its augmentation epoch and shuffle are set from the
    learner's seed, so two calls give the same result. A learner loaded for prediction only has
    no validation set: pass `loader`, or use `predict` on raw inputs."""
    if loader is None and learner.valid_loader is None:
        raise UsageError("get_preds: this learner has no validation data (it was loaded for prediction only); "
                         "pass get_preds(loader) with a DataLoader of encoded batches, or use predict()")
    return learner.run_eval(loader, keep=lambda out, xb, yb: (learner.activation(out), yb))


class InputDataset(torch.utils.data.Dataset):
    """Raw inputs (no targets) encoded as in inference (`encode_raw_input`, as `predict` reads
    one): what `Learner.test_loader` batches."""

    def __init__(self, task, items):
        self.task, self.items = task, items

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        try:
            return encode_raw_input(self.task, self.items[i])
        except (ValueError, TypeError, OSError) as e:  # OSError: a path that cannot be read (as predict's)
            raise type(e)(f"item {i}: {e}") from e


def test_loader(learner, items, batch_size: int | None = None):
    """A DataLoader over new, unlabelled raw inputs (fastai's ``test_dl``), in order."""
    if learner.task is None:
        raise UsageError("test_loader needs the learner's task (build it with tasklearner)")
    if batch_size is None:
        batch_size = getattr(learner.valid_loader, "batch_size", None) or 64
    return torch.utils.data.DataLoader(InputDataset(learner.task, items), batch_size=int(batch_size), shuffle=False)


def labelled_loader(learner, data, batch_size: int | None = None):
    """A DataLoader over labelled raw data, encoded as in validation, in order (fastai's
    ``test_dl(items, with_labels=True)``): `data` is a `Data`, an ``(inputs, targets)`` pair or a
    map-style dataset of samples, as `tasklearner` takes. What scores a held-out split:
    ``learner.validate(data.split("test"))`` builds one."""
    from ..datasets.containers import as_data
    from .data import TaskDataset, make_loader

    if learner.task is None:
        raise UsageError("labelled_loader needs the learner's task (build it with tasklearner)")
    if batch_size is None:
        batch_size = getattr(learner.valid_loader, "batch_size", None) or 64
    return make_loader(TaskDataset(learner.task, as_data(data), "validation", learner.seed),
                       batch_size=int(batch_size), train=False, seed=learner.seed)


def predict_items(learner, items, batch_size: int | None = None) -> torch.Tensor:
    """Probabilities (the task's activation of the outputs) for raw inputs, in order."""
    loader = test_loader(learner, items, batch_size)
    return learner.run_eval(loader, keep=lambda out, xb, yb: (learner.activation(out),))[0]
