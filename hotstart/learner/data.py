"""Data loaders from a task's encodings.

`TaskDataset` encodes raw samples on access. Augmentation randomness comes from a generator
derived from (seed, epoch, index), so a sample's augmentation does not depend on which worker
process or in which order it is loaded: the same seed gives the same batches, bit for bit, with
any `num_workers`.

Pipeline choices for folders of JPEGs, measured (benchmarks/results/HISTORY.md, "Folder of JPEGs, and this CPU's precisions"; the
folder workload's 160x160 q90 JPEGs to 128x128, resnet10t, batch 32; 2026-12-01 on the 2-core CPU
shared with other jobs, load average 5-14 as given; CPU ms are this process's, per image):

- where the time goes (``benchmarks/scripts/folder_profile.py``, load 9-14): per training image,
  decoding 0.28 ms CPU, the augmentation (random resized crop, flip, rotate, lighting, collate)
  6.6 ms, the model's step (forward, backward, AdamW) 106 ms. Loading is 6% of the CPU work, so
  a pipeline reaches the compute bound when it loads *beside* the compute, not before it.
- the augmentation's kernels (2026-12-02, quiet cores): torchvision's rotation and lighting
  were most of the augmentation, and hotstart/encodings/image_kernels.py computes them 3.0x
  faster with the same definitions (0.26 against 0.78 ms an image). ``folder_profile.py``
  before and after, alternating, 3 rounds (load 0.8-1.4): loading and augmenting 2.63, 2.17,
  2.73 ms CPU an image before, 2.02, 1.64, 2.00 after; the model's step 44-55 ms CPU; loading's
  share of the CPU 4.5-5.4 % before, 3.5-4.3 % after. That share is what the worker takes from
  the compute threads, hence what hotstart stays below the compute bound.
- ``num_workers="auto"`` on two cores (`FEW_CORES_SAMPLE_S`): with torch's compute threads on both
  cores, a worker's loading takes CPU from them. hotstart's fit, worker against none, alternating,
  2026-12-03 on the 2-core AVX-512 BF16 EPYC, quiet cores (load 1.6-1.9), resnet10t at batch 64
  (benchmarks/scripts/workers_ab.py; the digits: benchmarks/results/workers-ab-digits-2026-12-03.json):
  the digits at 32x32 (0.48 ms a sample to load), 5 epochs: 19.5, 21.8, 18.1, 20.7, 19.4 s with
  one worker, 17.4, 14.4, 14.9, 15.9, 15.1 s with none (0.78x; the script again: 0.75x); the
  jpegdigits folder at 64x64 (0.55 ms), 3 epochs: 29.3, 30.9 s against 27.7, 27.5 s; the folder
  workload at 128x128
  (0.83 ms), 2 epochs: 20.7, 19.5 s against 19.9, 18.0 s; 640x640 JPEGs to 128x128 uncached
  (3.9-5.4 ms a sample): 17.4, 15.1 s against 12.8, 16.8 s, even. So on two cores a worker is
  started only for samples of at least 4 ms.
- ``num_workers="auto"`` (`auto_num_workers`): the plain loop on 300 files, 2 epochs, its steady
  epoch 71 s and 44 s with 0 workers, 35 s and 38 s with 1 (alternating, load 5.5-7.3); CPU time
  62 s against 45 s: with loading in the main process, torch's compute threads wait (spinning)
  while it decodes. So on 2 cores a folder gets 1 worker, and ``cores - 1`` (at most 8)
  elsewhere. Loading that takes under `WORKER_WORTH_S` an epoch (in-memory images, tiny sets)
  stays in the process: a worker costs ~0.1 s an epoch to start (a DataLoader over 64 items:
  0.003 s in-process, 0.098 s with 1 worker, 0.188 s with 2).
- a batch encoded at once (`TaskDataset.__getitems__` -> `task.encode_batch`): the training
  augmentation's rotation and lighting run on the whole batch (one ``grid_sample``, one lighting)
  instead of image by image, and an image comes out the same alone or in a batch
  (tests/test_encode_batch.py holds them equal). Against the kernels before this (2026-12-07),
  one pixel of one image in the folder's first epoch (2,000 images, seed 2) came out one level
  apart (the batch kernels compute the same definitions in a slightly different order, so a
  value can round to the other side, rarely). A training sample's encoding and collation in the
  main process, one thread, on the time-to-accuracy benchmark's data (2026-12-07, the AVX-512 BF16
  EPYC, load 0.5-1.2; a throwaway timing loop over ``__getitems__`` and the collate, before and
  after): the jpegdigits folder at 64x64, 0.45 -> 0.27 ms; the digits at 32x32, 0.43 -> 0.19 ms.
  A batch that fails is encoded again sample by sample, so the error names the sample.
- persistent workers: not used. They would save that ~0.1 s a loader and an epoch (under 1% of
  a 30 s epoch), and they keep the dataset copy of the epoch they started in, so every epoch
  would repeat the first one's augmentations (``set_epoch`` sets the epoch before workers fork).
- decoding: PIL 2.49 ms and ``torchvision.io.decode_jpeg`` 1.87 ms an image, decode + resize,
  load ~11 (``benchmarks/scripts/decode_jpeg.py``). Kept on PIL: decoding is 0.3 of the 7 ms
  loading costs here, the image block reads every format through PIL, and training must read a
  file exactly as the deployed predictor does (`hotstart.predictor.load_image`).
- PIL's ``draft()``: none at 160 -> 128 (2.54 against 2.49 ms: JPEG DCT scaling only halves,
  quarters or eighths the size); on 640x640 q90 files 2.34 against 3.6 ms CPU with the resize
  (draft shrinks to 160). Not used in `load_image`: it changes the pixels against the
  predictor's full decode. Folders of large files use ``cache="resized"`` instead.
- resizing before augmenting: already so. The training crop is one ``resized_crop`` from the
  file's pixels to the task's size; flip, rotation and lighting then work at 128x128.
- ``cache="resized"`` (hotstart/datasets/resized_cache.py, opt-in): here the copy is slower
  (9.9 against 6.9 ms an image to load): a 128-pixel PNG decodes in 0.77 ms, the 160-pixel JPEG
  in 0.28 ms, so it stays off by default. It pays for files several times the task's size: a
  640x640 JPEG costs 3.6 ms CPU to decode and resize, every epoch.
"""
from __future__ import annotations

import time

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset

from ..datasets.containers import source_index
from ..errors import UsageError
from ..threads import one_intra_op_thread, usable_cores
from .rng import derive_seed, torch_generator


class TaskDataset(Dataset):
    """`data`'s samples encoded by `task` in `context` ("training": augmented from (seed, epoch,
    index)), each `repeats` times an epoch (timm's epoch repeats: a small training split gives
    an epoch enough steps to learn, each copy augmented on its own). `decoded`: the inputs'
    decoded images kept in memory (datasets/decoded_cache.py, ``cache="memory"``), read instead
    of `inputs` (which stay the raw inputs: files, for the exports' calibration and checks);
    filled when the first epoch starts (`set_epoch`)."""

    def __init__(self, task, data, context: str, seed: int = 0, decoded=None, repeats: int = 1):
        self.task = task
        self.inputs, self.targets = data
        self.context = context
        self.seed = seed
        self.epoch = 0
        if decoded is not None and len(decoded) != len(self.inputs):
            raise UsageError(f"the decoded images ({len(decoded)}) are not the inputs ({len(self.inputs)})")
        self.decoded = decoded
        if int(repeats) < 1:
            raise UsageError(f"epoch_repeats must be at least 1, got {repeats!r}")
        self.repeats = int(repeats)

    def set_epoch(self, epoch: int) -> None:
        """Before an epoch (in the main process): its augmentation seed; the decoded images are
        filled before the first (and are then read by every worker)."""
        self.epoch = epoch
        if self.decoded is not None:
            self.decoded.fill()

    def __len__(self):
        return len(self.inputs) * self.repeats

    def _rng(self, i) -> np.random.Generator:
        """Sample `i`'s augmentation generator this epoch (each repeat its own augmentation)."""
        return np.random.default_rng([self.seed, self.epoch, int(i)])

    def _raw(self, i) -> tuple:
        """Sample `i`'s raw ``(input, target)`` (`repeats` passes over the samples make one epoch)."""
        i = int(i) % len(self.inputs)
        return (self.inputs if self.decoded is None else self.decoded)[i], self.targets[i]

    def __getitem__(self, i):
        x, y = self._raw(i)
        # name the sample by its index in the whole dataset, not its position in this split
        where = f"sample {source_index(self.inputs, int(i) % len(self.inputs))}"
        return self.task.encode_sample((x, y), self.context, self._rng(i), where=where)

    def __getitems__(self, indices):
        """A batch's samples (DataLoader calls this when it exists), encoded together
        (`task.encode_batch`: each sample as `__getitem__` encodes it, the classification images'
        augmentation on the batch at once) with one intra-op thread (hotstart/threads.py says
        why, with the measurement). A batch that fails is encoded again one sample at a time, so
        the error names the sample."""
        with one_intra_op_thread():
            try:
                return self.task.encode_batch([self._raw(i) for i in indices], self.context,
                                              [self._rng(i) for i in indices])
            except Exception as batch_error:  # noqa: BLE001 - re-raised below unless a sample's own error names it
                for i in indices:
                    self[i]  # raises the named error of the first sample that fails
                raise batch_error


WORKER_WORTH_S = 0.5
"""`auto_num_workers` starts workers only when loading an epoch is estimated to take at least
this long: starting a worker process costs ~0.1 s an epoch (forked anew each epoch; measured)."""

FEW_CORES = 2
"""At most this many usable cores, torch's compute threads take every one of them."""

FEW_CORES_SAMPLE_S = 0.004
"""On `FEW_CORES` cores or fewer, `auto_num_workers` starts a worker only when a sample takes at
least this long to load: below it, loading in the main process ended fits sooner (measured, in
this module's docstring), because the worker's CPU is taken from the compute threads."""


def auto_num_workers(dataset, *, cores: int | None = None, probe: int = 4) -> int:
    """Worker processes for `dataset`, chosen from the cores and what a sample costs to load.

    The cost is measured: the first `probe` samples are encoded, the first untimed (it pays
    one-time imports) and the cost is the fastest of the others. One sample's time is noisy: on
    the folder workload (128x128, decoded cache) six samples in a row took 7.0, 1.72, 1.24, 1.45,
    1.14 and 1.02 ms, and in benchmarks/scripts/folder_ab.py's process the second alone once
    read 4 ms or more, which chose a worker on two cores. When an epoch's estimate (cost x
    samples) is under `WORKER_WORTH_S`, or there is one core, loading stays in the main process (0): in-memory
    images encode in well under a millisecond, and a worker would cost more than it saves. On
    two cores it stays there too unless a sample costs `FEW_CORES_SAMPLE_S` or more: the
    compute threads already use both cores, so a worker only takes CPU from them.
    Otherwise ``cores - 1`` workers, at most 8: the model's own threads keep the main process
    busy, and a worker per remaining core overlaps the decoding with the compute. A sample that
    fails to load gives 0: the loop then reports the error in the main process, naming it."""
    cores = usable_cores() if cores is None else int(cores)
    n = len(dataset)
    if cores < 2 or n == 0:
        return 0
    times = []
    try:
        with one_intra_op_thread():  # as the main process loads a batch (TaskDataset.__getitems__)
            for i in range(min(probe, n)):
                t0 = time.perf_counter()
                dataset[i]
                times.append(time.perf_counter() - t0)
        cost = min(times[1:] or times)
    except Exception:  # noqa: BLE001 - reported, with the sample's name, when the loop reads it
        return 0
    if cost * n < WORKER_WORTH_S or (cores <= FEW_CORES and cost < FEW_CORES_SAMPLE_S):
        return 0
    return workers_for_cores(cores)


def workers_for_cores(cores: int) -> int:
    """Workers when loading is worth them: one per core beside the main process's, at most 8."""
    return max(0, min(int(cores) - 1, 8))


class AutoWorkersLoader(DataLoader):
    """A DataLoader for ``num_workers="auto"``: the count is chosen (`auto_num_workers`) when the
    loader is first read, not when it is built, so that building a learner reads no sample
    (a bad file is reported when the loop reads it). Until then `num_workers` is 0."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.workers_chosen = False

    def choose_workers(self) -> int:
        """Choose the count now (once); returns it."""
        if not self.workers_chosen:
            self.workers_chosen = True
            workers = auto_num_workers(self.dataset)
            if workers:
                self.prefetch_factor = 2  # DataLoader's own default with workers (None without)
                self.num_workers = workers
        return self.num_workers

    def __iter__(self):
        self.choose_workers()
        return super().__iter__()


def make_loader(dataset: TaskDataset, *, batch_size: int, train: bool, num_workers: int | str = 0, seed: int = 0,
                pin_memory: bool = False) -> DataLoader:
    """Training: shuffled by a seeded generator, `drop_last` (stable shapes for compiled models,
    no size-1 batch for BatchNorm) unless the set is smaller than one batch. Validation: neither.
    ``num_workers="auto"``: an `AutoWorkersLoader`. Workers are not persistent: each epoch's
    workers are forked after `set_epoch`, so they encode with that epoch's augmentation seed
    (persistent workers would keep the first epoch's copy of the dataset, and its augmentations)."""
    n = len(dataset)
    if n == 0:
        raise UsageError(f"the {'training' if train else 'validation'} set is empty")
    auto = num_workers == "auto"
    if not auto and (not isinstance(num_workers, int) or isinstance(num_workers, bool) or num_workers < 0):
        raise UsageError(f"num_workers must be a non-negative int or \"auto\", got {num_workers!r}")
    return (AutoWorkersLoader if auto else DataLoader)(
        dataset,
        batch_size=batch_size,
        shuffle=train,
        drop_last=train and n >= batch_size,
        num_workers=0 if auto else num_workers,
        generator=torch_generator(seed),
        pin_memory=pin_memory,
        persistent_workers=False,
    )


def set_epoch(loader: DataLoader, epoch: int, seed: int) -> None:
    """Before each epoch: a new shuffle order and new augmentations, both from the seed."""
    if isinstance(loader.dataset, TaskDataset):
        loader.dataset.set_epoch(epoch)
    elif hasattr(loader.dataset, "epoch"):  # a user's dataset that follows the convention
        loader.dataset.epoch = epoch
    if getattr(loader, "generator", None) is not None:
        loader.generator.manual_seed(derive_seed(seed, epoch))
    sampler = getattr(loader, "sampler", None)  # a loader of `shard_loader` (across processes) reads a ShardSampler
    if isinstance(sampler, ShardSampler):
        sampler.set_epoch_seed(derive_seed(seed, epoch))


class ShardSampler(torch.utils.data.Sampler):
    """One process's shard of a dataset of `n` samples, `world_size` processes in all.

    Training (`shuffle`): every process draws the same permutation from the epoch's seed (the
    very permutation a one-process loader draws from that seed), pads it by wrapping around to a
    multiple of `world_size` (as ``DistributedSampler`` does, so every process takes the same
    number of steps), and takes every `world_size`-th index from its rank. So batch k of all
    processes together holds the samples of batch k of a one-process run with the global batch
    size, and the two runs differ only in floating-point summation order (and BatchNorm, whose
    statistics are per process unless `sync_bn`). Validation: indices ``rank, rank + world_size, ...``, not padded, so the shards are
    disjoint and cover the set exactly once; metrics summed over processes count each sample
    once (the processes may then see one batch more or less, or none: evaluation runs outside DDP's
    wrapper, so no collective waits on a batch; learner/eval_forward.py)."""

    def __init__(self, n: int, rank: int, world_size: int, shuffle: bool):
        self.n, self.rank, self.world_size, self.shuffle = int(n), int(rank), int(world_size), shuffle
        self.seed = 0

    def set_epoch_seed(self, seed: int) -> None:
        self.seed = int(seed)

    def _indices(self) -> list[int]:
        if not self.shuffle:
            return list(range(self.rank, self.n, self.world_size))
        g = torch_generator(self.seed)
        torch.empty((), dtype=torch.int64).random_(generator=g)  # the draw a DataLoader makes for its base seed
        order = torch.randperm(self.n, generator=g).tolist()
        total = -(-self.n // self.world_size) * self.world_size
        order += order[: total - self.n]
        return order[self.rank:total:self.world_size]

    def __iter__(self):
        return iter(self._indices())

    def __len__(self) -> int:
        if not self.shuffle:
            return len(range(self.rank, self.n, self.world_size))
        return -(-self.n // self.world_size)


def shard_loader(loader: DataLoader, *, rank: int, world_size: int) -> DataLoader:
    """A copy of `loader` that reads only this process's shard (a `ShardSampler`); the batch
    size stays per process, so the global batch is ``world_size * batch_size``."""
    train = isinstance(loader.sampler, torch.utils.data.RandomSampler)
    if isinstance(loader, AutoWorkersLoader):
        loader.choose_workers()  # the shard's copy needs the count (this runs at setup, when fitting)
    sampler = ShardSampler(len(loader.dataset), rank, world_size, shuffle=train)
    shard = DataLoader(loader.dataset, batch_size=loader.batch_size, sampler=sampler,
                       drop_last=loader.drop_last and len(sampler) >= (loader.batch_size or 1),
                       num_workers=loader.num_workers, pin_memory=loader.pin_memory,
                       persistent_workers=loader.persistent_workers, generator=loader.generator)
    return shard  # `set_epoch` reaches the sampler as ``shard.sampler`` (Fabric's wrapper copies it too)
