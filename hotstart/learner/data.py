"""Data loaders from a task's encodings.

`TaskDataset` encodes raw samples on access. Augmentation randomness comes from a generator
derived from (seed, epoch, index), so a sample's augmentation does not depend on which worker
process or in which order it is loaded: the same seed gives the same batches, bit for bit, with
any `num_workers`.
"""
from __future__ import annotations

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset

from ..datasets.containers import source_index
from .rng import derive_seed, torch_generator


class TaskDataset(Dataset):
    def __init__(self, task, data, context: str, seed: int = 0):
        self.task = task
        self.inputs, self.targets = data
        self.context = context
        self.seed = seed
        self.epoch = 0

    def __len__(self):
        return len(self.inputs)

    def __getitem__(self, i):
        rng = np.random.default_rng([self.seed, self.epoch, int(i)])
        x, y = self.inputs[i], self.targets[i]
        # name the sample by its index in the whole dataset, not its position in this split
        return self.task.encode_sample((x, y), self.context, rng, where=f"sample {source_index(self.inputs, i)}")


def make_loader(dataset: TaskDataset, *, batch_size: int, train: bool, num_workers: int = 0, seed: int = 0,
                pin_memory: bool = False) -> DataLoader:
    """Training: shuffled by a seeded generator, `drop_last` (stable shapes for compiled models,
    no size-1 batch for BatchNorm) unless the set is smaller than one batch. Validation: neither."""
    n = len(dataset)
    if n == 0:
        raise ValueError(f"the {'training' if train else 'validation'} set is empty")
    return DataLoader(
        dataset,
        batch_size=batch_size,
        shuffle=train,
        drop_last=train and n >= batch_size,
        num_workers=num_workers,
        generator=torch_generator(seed),
        pin_memory=pin_memory,
        persistent_workers=False,
    )


def set_epoch(loader: DataLoader, epoch: int, seed: int) -> None:
    """Before each epoch: a new shuffle order and new augmentations, both from the seed."""
    if isinstance(loader.dataset, TaskDataset) or hasattr(loader.dataset, "epoch"):
        loader.dataset.epoch = epoch
    if getattr(loader, "generator", None) is not None:
        loader.generator.manual_seed(derive_seed(seed, epoch))
