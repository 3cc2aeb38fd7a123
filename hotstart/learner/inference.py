"""Prediction with a learner: one raw input, or the whole validation set."""
from __future__ import annotations

import os
from typing import Any

import torch

from ..errors import UsageError
from .data import set_epoch
from .rng import seeded_torch_rng


def predict(learner, raw_input) -> tuple[Any, torch.Tensor]:
    """Encode one raw input as in inference, run the model, decode: (label, probabilities).

    For an image task, `raw_input` may also be a file's path (str or ``os.PathLike``), as in fastai.
    """
    if learner.task is None:
        raise UsageError("predict needs the learner's task (build it with tasklearner)")
    x = learner.task.encode_input(load_raw_input(learner.task, raw_input))
    learner._setup()
    learner.model.eval()
    with torch.no_grad(), learner.backend.autocast(), learner.model_context():
        out = learner.model(x.unsqueeze(0).to(learner.device))
    decode = getattr(learner.task, "decode_prediction", None)  # back to the given image's size, where it matters
    if decode is not None:
        return decode(out[0].float().cpu(), raw_input)
    return learner.task.decode_output(out[0].float().cpu())


def load_raw_input(task, raw_input):
    """A path becomes the image it names when the task's input is an `Image` (else it is left alone).

    Reading goes through `datasets.load_image`, the loader that the folder and table recipes use:
    the same decoding (EXIF rotation, mode conversion) as in training, errors that name the file.
    """
    from ..blocks import Image

    if isinstance(raw_input, (str, os.PathLike)) and isinstance(task.blocks[0], Image):
        from ..datasets.images import load_image

        return load_image(raw_input)
    return raw_input


def get_preds(learner, loader=None):
    """(probabilities, encoded targets) over `loader` (default: the validation set), in order.

    `loader` is any DataLoader of encoded ``(input, target)`` batches, e.g. one made with
    ``hotstart.learner.data.make_loader``; its augmentation epoch and shuffle are set from the
    learner's seed, so two calls give the same result. A learner loaded for prediction only has
    no validation set: pass `loader`, or use `predict` on raw inputs."""
    if loader is None and learner.valid_loader is None:
        raise UsageError("get_preds: this learner has no validation data (it was loaded for prediction only); "
                         "pass get_preds(loader) with a DataLoader of encoded batches, or use predict()")
    learner._setup()
    raw, dl = (learner.valid_loader, learner._valid_dl) if loader is None else (loader, loader)
    learner.model.eval()
    preds, targets = [], []
    act = getattr(learner.task, "activation", lambda o: o)
    with torch.no_grad(), seeded_torch_rng(learner.seed, learner.device), learner.model_context():
        set_epoch(raw, 0, learner.seed)  # the loader that is read, not the validation loader
        for batch in dl:
            xb, yb = learner.backend.to_device(batch)
            with learner.backend.autocast():
                preds.append(act(learner.model(xb).float()).cpu())
            targets.append(yb.cpu())
    return torch.cat(preds), torch.cat(targets)


class InputDataset(torch.utils.data.Dataset):
    """Raw inputs (no targets) encoded as in inference: what `Learner.test_loader` batches."""

    def __init__(self, task, items):
        self.task, self.items = task, items

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        try:
            return self.task.encode_input(self.items[i])
        except (ValueError, TypeError) as e:
            raise type(e)(f"item {i}: {e}") from e


def test_loader(learner, items, batch_size: int | None = None):
    """A DataLoader over new, unlabelled raw inputs (fastai's ``test_dl``), in order."""
    if learner.task is None:
        raise UsageError("test_loader needs the learner's task (build it with tasklearner)")
    if batch_size is None:
        batch_size = getattr(learner.valid_loader, "batch_size", None) or 64
    return torch.utils.data.DataLoader(InputDataset(learner.task, items), batch_size=int(batch_size), shuffle=False)


def predict_items(learner, items, batch_size: int | None = None) -> torch.Tensor:
    """Probabilities (the task's activation of the outputs) for raw inputs, in order."""
    loader = test_loader(learner, items, batch_size)
    learner._setup()
    learner.model.eval()
    act = getattr(learner.task, "activation", lambda o: o)
    preds = []
    with torch.no_grad(), seeded_torch_rng(learner.seed), learner.model_context():
        for xb in loader:
            with learner.backend.autocast():
                preds.append(act(learner.model(xb.to(learner.device)).float()).cpu())
    return torch.cat(preds)
