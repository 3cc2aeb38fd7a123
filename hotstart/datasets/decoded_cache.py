"""``cache="memory"``: image files decoded once, kept in memory as uint8 tensors.

Why: a fit reads every file again in every epoch, and decodes it again (JPEG decoding, the mode
conversion, and for large files a resize to the task's size). Decoded once, the epochs after the
first decode nothing: each sample starts from its pixels in memory, and only the augmentation
runs (benchmarks/results/HISTORY.md, "Folder of JPEGs, and this CPU's precisions": decoding is about 0.3 ms of the ~2-7 ms it costs
to load an image there; ``benchmarks/scripts/folder_ab.py --cache memory`` measures it against
``cache="resized"`` and the in-memory bound).

What is kept, per image: the pixels the encodings would start from, as a C x H x W uint8 tensor,
at the size the ``cache="resized"`` copy has (resized_cache.py: the smallest aspect-kept size that
covers the task's (H, W), antialiased; an image no larger than that as it is), converted to the
input block's channels (`Image.to_pil`, as the encodings convert a decoded image). So a sample
is encoded exactly as it is without the cache when its file is no larger than that size (the
usual case for a folder made for the task), and exactly as through ``cache="resized"`` when it is
larger: the augmentation (crop, flip, rotation, lighting) starts from the same pixels and draws
the same random numbers. tests/test_decoded_cache.py holds both. A task whose target lives on the
image's grid (a mask, keypoints: ``targets_on_input_grid``) transforms image and target together,
so its images are kept at their own size (``shrink=False``): its samples equal those decoded
every epoch, whatever the files' sizes.

When (`DecodedImages.fill`): when a loader over the images is first read (learner/data.py's
`set_epoch`, in the main process, before DataLoader workers start): all images at once, decoded
by one thread per core (PIL and torch release the GIL while they decode and resize). Workers are
forked per epoch and read the parent's tensors; they never fill the cache themselves (what a
worker stored would be lost when it exits). A file that cannot be read is not kept: it is read,
and its error reported, when its sample is encoded, as without the cache.

How much (`memory_budget`): at most 1 GiB, and at most an eighth of the machine's memory, for
the training and validation images together. A fit also holds its model, optimizer, activations
and loader workers, and the machine runs other things; 1 GiB holds 21,845 images of 128x128 RGB
or 87,381 of 64x64, the small and medium folders this is for. The default (``cache=None``,
``"auto"``) keeps the images in memory when their estimated size (the count times the task's H x W
x channels) fits the budget, and says so in the fit's first line; larger sets are decoded every
epoch (``cache="resized"`` then keeps a reduced copy on disk). ``cache="memory"`` keeps as many as
fit even when not all do. In every case images are stored only while the budget lasts: the
budget is respected whatever the images' real sizes.

Files that change: each kept image remembers its file's stamp (inode, byte size, modification and
status-change times: resized_cache.py's `file_stamp`, read before the file was decoded), and every
read of a sample stats its file again (a few microseconds, against the milliseconds of its
augmentation). A file whose stamp changed is decoded again at that read, as without the cache:
its new contents are trained on, and a file damaged or removed meanwhile is reported, naming it,
when its sample is read. Only a change within the filesystem's timestamp tick that keeps the
byte size and the inode goes unseen (as for ``cache="resized"``).

The tensors are kept in large chunks (`CHUNK_BYTES`), not one allocation per image: a forked
worker that reads an image then touches no page it shares with Python objects whose reference
counts change, so the operating system copies nothing for it.
"""
from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor

from ..errors import UsageError
from .resized_cache import file_stamp, image_paths, reads_image_files, shrunk_pixels

MEMORY_BUDGET_CAP = 1 << 30
"""The most the decoded images of a fit may take (bytes): 1 GiB (the module docstring says why)."""

MEMORY_FRACTION = 8
"""... and at most this fraction (1 / 8) of the machine's memory."""

CHUNK_BYTES = 64 << 20
"""Decoded images are packed into chunks of this size (an image larger than it gets its own)."""


def total_memory() -> int | None:
    """The machine's physical memory in bytes, where the OS says (Linux, macOS); else None."""
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return None


def memory_budget(total: int | None = None) -> int:
    """Bytes the decoded images of a fit may take: `MEMORY_BUDGET_CAP`, and at most
    1 / `MEMORY_FRACTION` of `total` (default: `total_memory`)."""
    total = total_memory() if total is None else total
    return MEMORY_BUDGET_CAP if total is None else min(MEMORY_BUDGET_CAP, int(total) // MEMORY_FRACTION)


class MemoryBudget:
    """Bytes left for decoded images, shared by the caches of one fit (training and validation)."""

    def __init__(self, limit: int):
        self.limit, self.used = int(limit), 0
        self._lock = threading.Lock()

    def take(self, n: int) -> bool:
        """Reserve `n` bytes if they are left; whether they were."""
        with self._lock:
            if self.used + n > self.limit:
                return False
            self.used += n
            return True


class _Chunks:
    """Append-only storage of uint8 tensors in `CHUNK_BYTES` chunks; `put` returns a view."""

    def __init__(self):
        self.chunks, self.pos = [], CHUNK_BYTES

    def put(self, t):
        import torch

        n = t.numel()
        if n > CHUNK_BYTES:
            return t.contiguous().clone()
        if self.pos + n > CHUNK_BYTES:
            # untouched pages of a fresh chunk are never made resident: a last, part-used chunk
            # costs only what is written into it
            self.chunks.append(torch.empty(CHUNK_BYTES, dtype=torch.uint8))
            self.pos = 0
        view = self.chunks[-1][self.pos:self.pos + n].view(t.shape)
        view.copy_(t)
        self.pos += n
        return view


class DecodedImages:
    """A container of `images` (a container of decoded PIL images, e.g. image files through
    `load_image`) as the pixels the encodings start from (the module docstring): item ``i`` is
    a C x H x W uint8 tensor, from memory once `fill` has stored it, else decoded now."""

    def __init__(self, images, block, size, budget: MemoryBudget, *, shrink: bool = True):
        self.images, self.block = images, block
        self.size = (int(size[0]), int(size[1]))
        self.shrink = shrink  # False: every image at its own size (a target on its grid: a mask, keypoints)
        self.budget = budget
        self.paths = image_paths(images)  # None: not files, nothing on disk can change
        self.stored: list = [None] * len(images)
        self.stamps: list = [None] * len(images)  # each kept image's file stamp when it was read
        self.filled = False
        self._chunks = _Chunks()
        self._pid = os.getpid()  # the process that fills (DataLoader workers only read)

    def __len__(self):
        return len(self.images)

    def __getitem__(self, i):
        kept = self.stored[i]
        if kept is not None and self._unchanged(i):
            return kept
        return self.pixels(self.images[i])  # not kept, or its file changed: read it as without the cache

    def _unchanged(self, i) -> bool:
        if self.paths is None:
            return True
        try:
            return file_stamp(self.paths[i]) == self.stamps[i]
        except OSError:  # removed or unreadable: reading it reports that, naming the file
            return False

    def pixels(self, image):
        """One decoded image's pixels as this cache keeps them (C x H x W uint8)."""
        import torchvision.transforms.v2.functional as F

        shrunk = shrunk_pixels(image, self.size) if self.shrink else None
        if shrunk is not None:
            image = F.to_pil_image(shrunk)
        return F.pil_to_tensor(self.block.to_pil(image))  # the encodings' conversion (`image_tensor`)

    @property
    def stored_bytes(self) -> int:
        return sum(t.numel() for t in self.stored if t is not None)

    @property
    def count(self) -> int:
        """How many images are in memory."""
        return sum(t is not None for t in self.stored)

    def fill(self, threads: int | None = None) -> None:
        """Decode every image not yet stored and store it while the budget lasts; once, in the
        process that built the cache (a DataLoader worker returns at once)."""
        if self.filled or os.getpid() != self._pid:
            return
        self.filled = True
        todo = [i for i, t in enumerate(self.stored) if t is None]
        if not todo:
            return
        from ..threads import one_intra_op_thread, usable_cores

        def decode(i):
            try:
                stamp = None if self.paths is None else file_stamp(self.paths[i])  # before reading: a later change shows
                return i, self.pixels(self.images[i]), stamp
            except Exception:  # noqa: BLE001 - the sample reports it, naming the file, when it is encoded
                return i, None, None

        workers = max(1, usable_cores() if threads is None else int(threads))
        with one_intra_op_thread(), ThreadPoolExecutor(max_workers=workers) as pool:
            for i, t, stamp in pool.map(decode, todo):
                if t is not None and self.budget.take(t.numel()):
                    self.stored[i], self.stamps[i] = self._chunks.put(t), stamp


CACHE_CHOICES = (None, False, "auto", "memory", "resized")
"""``tasklearner(cache=...)``: None and "auto" (the default: in memory where the images fit),
"memory", "resized" (a reduced copy on disk: resized_cache.py), False (every file read every epoch)."""


def check_cache(cache) -> None:
    """Refuse an unknown `cache=`, naming the known ones."""
    if not any(cache is c or (isinstance(c, str) and cache == c) for c in CACHE_CHOICES):
        raise UsageError(f"cache={cache!r} is not known; use one of {list(CACHE_CHOICES)}")


def memory_caches(cache, inputs: list, block, size, *, budget: int | None = None, shrink: bool = True
                  ) -> tuple[list, tuple[str, str] | None]:
    """The `DecodedImages` for each container of `inputs` (the training and validation inputs;
    None for a cache that is not made), and (what, why) for the fit's first line, or None when
    there is nothing to say (the inputs are not image files and nothing was asked).

    `cache`: the `tasklearner` argument (`CACHE_CHOICES`). "memory" on inputs that are not image
    files is a `UsageError`; "auto" then makes no cache. `shrink`: False keeps every image at its
    own size (a task whose target lives on the image's grid: ``targets_on_input_grid``), whose
    samples then equal those decoded every epoch whatever the files' sizes."""
    from ..blocks import Image

    none = [None] * len(inputs)
    if cache == "resized":
        return none, None
    files = all(reads_image_files(x) for x in inputs) and isinstance(block, Image)
    if cache is False:
        return none, ("off", "as asked: every file is read at every epoch") if files else None
    if not files:
        if cache == "memory":
            raise UsageError('cache="memory" needs image files (from ImageFolders or ImageTable) as inputs; '
                             f"these inputs are {inputs[0]!r}")
        return none, None
    if size is None:
        if cache == "memory":
            raise UsageError('cache="memory" needs a task whose images have a size (ImageClassificationSingle(size=...))')
        return none, None
    limit = memory_budget() if budget is None else int(budget)
    n = sum(len(x) for x in inputs)
    estimate = n * int(size[0]) * int(size[1]) * (block.channels or 3)
    mb = lambda b: f"{b / 2**20:.0f} MB" if b >= 2**20 else f"{b / 2**20:.1f} MB"  # noqa: E731
    if estimate > limit and cache != "memory":
        return none, ("off", f"{n} images of {size[0]}x{size[1]} would take ~{mb(estimate)}, over the {mb(limit)} "
                             f"budget; every file is decoded at every epoch (cache='resized' keeps a reduced copy on disk)")
    shared = MemoryBudget(limit)
    caches = [DecodedImages(x, block, size, shared, shrink=shrink) for x in inputs]
    how = "as asked" if cache == "memory" else "cache=False to decode every epoch"
    return caches, ("memory", f"{n} images decoded once, ~{mb(estimate)} of the {mb(limit)} budget; {how}")
