"""``cache="resized"``: train on image files through a copy reduced to the task's size, made once.

Why: every epoch decodes every file again. For files near the task's size (a 160x160 JPEG for a
128x128 task) that is cheap (~0.4 ms), and the copy does not pay (benchmarks/results/HISTORY.md, "Folder
of JPEGs"); for photographs several times larger, decoding and shrinking the original costs far
more than decoding a copy at the task's size, and the copy is made once for all epochs and runs.

The copy of each image is the smallest that still covers the task's (H, W) with its aspect ratio
kept (scale ``max(H / h, W / w)``), resized with torchvision's antialiased bilinear kernel, the
one the image encodings use, and stored as PNG (lossless: the copy is exactly that resize).
Images no larger than that are not copied: their original file is read. The copy is read through
`load_image`, like the originals, so it goes through the same checks.

Where: ``<the datasets cache>/resized/<source>-<key>/`` (download.py's `data_dir`: platformdirs'
user cache, ``HOTSTART_DATA_DIR`` overrides it, as for downloaded datasets). `key` is a digest of
the size, this format's version and, for every file in order, its absolute path, inode, byte size,
modification time and status-change time (ctime): a changed, added or removed file, or another
size, gives another key, so a stale copy is never read. The mtime alone is not enough: ``cp -p``,
``rsync -t`` and ``tar x`` put back the old mtime on new contents, and a file of the same byte
size was then served from its old copy. The ctime cannot be set back (every write and every
``utime`` sets it to now), and a replacement by rename (rsync, tar) also gets a new inode. The key
costs no more than before: the same ``stat`` of each file, no read (a content hash would read
every byte of every file at each start). The files are stat'ed again after the copy is made, and
a copy of files that changed meanwhile is thrown away and made again. What remains is the
kernel's timestamp tick (a few ms): two changes of one file within one tick, around the start
of the copy, look like one.

`source` is a digest of the files' common folder: once a new copy of a folder is complete, its
older copies (other keys) are removed, unless a process uses them. A process uses a copy from
the moment it gets its paths (`resized_copy`, `cache_data`) until the list of paths it got, and
everything built on it (the Data, the learner), is gone: it holds a shared `flock` on the copy's
``in-use`` file meanwhile (its DataLoader workers share it), and pruning takes the lock
exclusively or leaves the copy alone. A second run at another size so never removes the copy
that a running fit reads.

Written once and atomically: the files go into a temporary folder beside the target, each
fsync'd, and the folder is renamed into place (the commit step of hotstart/atomic_folder.py, for
a folder whose name is new, so it never has to be swapped). A reader sees a complete copy or
none; two processes building the same copy both finish, and the second one's is discarded.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import weakref
from pathlib import Path

from ..cache_writes import cache_writes
from ..errors import UsageError
from .containers import Data, Subset, as_data, mapobs
from .errors import DatasetError
from .images import load_image

__all__ = ["CACHE_KINDS", "CopyPaths", "cache_data", "cache_root", "file_stamp", "image_paths", "reads_image_files",
           "resized_copy", "resized_size", "shrunk_pixels"]

CACHE_KINDS = ("resized",)
FORMAT_VERSION = 2  # 2: the key holds inode and ctime; each copy has an in-use lock file
IN_USE = "in-use"
_BUILD_TRIES = 3  # files that keep changing while the copy is made: give up after this many tries


def cache_root() -> Path:
    """The datasets cache's ``resized`` folder (download.py's `data_dir`: ``$HOTSTART_DATA_DIR``,
    else ``platformdirs.user_cache_dir("hotstart")/datasets``)."""
    from .download import data_dir

    return data_dir() / "resized"


def resized_size(hw, size) -> tuple[int, int] | None:
    """(H, W) of the smallest aspect-kept copy of an (h, w) image that covers `size`, or None
    when the image is not larger than that (it is read as it is)."""
    h, w = hw
    scale = max(size[0] / h, size[1] / w)
    if scale >= 1.0:
        return None
    new = (max(int(size[0]), round(h * scale)), max(int(size[1]), round(w * scale)))
    return None if new == (h, w) else new


def image_paths(inputs) -> list | None:
    """The files of `inputs`, in order, when they are image files read by `load_image` (the inputs
    of `ImageFolders` / `ImageTable` data: ``mapobs(load_image, paths)``), possibly through `Subset`
    views (a split); None when they are not."""
    views = []
    while isinstance(inputs, Subset):
        views.append(inputs.indices)
        inputs = inputs.container
    if not (isinstance(inputs, mapobs) and inputs.f is load_image
            and all(isinstance(p, (str, os.PathLike)) for p in inputs.container)):
        return None
    paths = list(inputs.container)
    for indices in reversed(views):
        paths = [paths[i] for i in indices]
    return paths


def reads_image_files(inputs) -> bool:
    """Whether `inputs` are image files read by `load_image` (`image_paths`)."""
    return image_paths(inputs) is not None


def file_stamp(path) -> tuple:
    """What tells a file's contents apart without reading them: inode, byte size, modification and
    status-change times (the module docstring says why the mtime alone is not enough)."""
    st = os.stat(path)
    return st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns


def shrunk_pixels(image, size):
    """The copy's pixels of a decoded image (PIL, "L" or "RGB"): C x H x W uint8, resized with the
    antialiased bilinear kernel to `resized_size`; None when the image is read as it is (not
    larger). The copy on disk stores exactly these (PNG is lossless), and ``cache="memory"``
    (decoded_cache.py) keeps them in memory."""
    new = resized_size((image.height, image.width), size)
    if new is None:
        return None
    import torchvision.transforms.v2.functional as F

    return F.resize(F.pil_to_tensor(image), list(new), antialias=True)


def cache_data(data, cache: str, size, *, argument: str = "data") -> Data:
    """`data` (image files: `ImageFolders` / `ImageTable` data) read through a cached copy at `size`.

    Raises `UsageError` naming `argument` when `cache` is unknown, the task has no image size,
    or the inputs are not image files read by `load_image`."""
    if cache not in CACHE_KINDS:
        raise UsageError(f"cache={cache!r} is not known; use one of {list(CACHE_KINDS)} or None")
    if size is None:
        raise UsageError(f'cache="resized" needs a task whose images have a size (ImageClassificationSingle(size=...))')
    data = as_data(data)
    inputs = data.inputs
    if not (isinstance(inputs, mapobs) and reads_image_files(inputs)):
        raise UsageError(f'cache="resized": {argument} must hold image files (from ImageFolders or ImageTable); '
                         f"its inputs are {inputs!r}")
    paths = resized_copy([os.fspath(p) for p in inputs.container], size)
    return Data(mapobs(load_image, paths), data.targets, data.splits)


class CopyPaths(list):
    """The paths `resized_copy` returns (a list of str), holding the copy's in-use lock for as long
    as the list lives. Pickled as a plain list: a lock does not travel to another process (a
    spawned DataLoader worker relies on its parent's)."""

    lease: "_Lease | None" = None

    def __reduce__(self):
        return list, (list(self),)


class _Lease:
    """A shared flock on a copy's in-use file, released when this object is collected."""

    def __init__(self, fd: int):
        self.fd = fd
        self._close = weakref.finalize(self, os.close, fd)


def resized_copy(paths, size, *, root: str | os.PathLike | None = None) -> CopyPaths:
    """For each image file of `paths`, the file to read instead: its copy at `size` (H, W) in the
    cache (built now if missing or stale), or the file itself when it is not larger. The copy is
    kept (never pruned) while the returned list, or anything holding it, lives."""
    size = (int(size[0]), int(size[1]))
    paths = [os.path.abspath(p) for p in paths]
    root = Path(root) if root is not None else cache_root()
    for _ in range(_BUILD_TRIES):
        source, key = _digests(paths, size)
        folder = root / f"{source}-{key}"
        lease = _take_lease(folder)
        if lease is None:
            lease = _build(paths, size, folder, key)
            if lease is None:  # a file changed while the copy was made: make it again
                continue
            _prune(root, source, keep=folder.name)
        names = json.loads((folder / "index.json").read_text())
        out = CopyPaths(p if name is None else str(folder / name) for p, name in zip(paths, names))
        out.lease = lease
        return out
    raise DatasetError(f'cache="resized": the files under {os.path.commonpath(paths)} kept changing while their '
                       f"copy at {size[0]}x{size[1]} was made ({_BUILD_TRIES} tries); train when they are settled")


def _digests(paths, size) -> tuple[str, str]:
    common = os.path.commonpath(paths) if paths else ""
    source = hashlib.sha256(common.encode()).hexdigest()[:12]
    h = hashlib.sha256(json.dumps({"size": size, "version": FORMAT_VERSION}).encode())
    for p in paths:
        ino, size_, mtime, ctime = file_stamp(p)  # a missing file: FileNotFoundError naming it, as reading it would
        h.update(f"\0{p}\0{ino}\0{size_}\0{mtime}\0{ctime}".encode())
    return source, h.hexdigest()[:24]


def _take_lease(folder: Path) -> _Lease | None:
    """A lease on the complete copy `folder`, or None if there is none (or it was just pruned)."""
    import fcntl

    try:
        fd = os.open(folder / IN_USE, os.O_RDONLY | os.O_CLOEXEC)
    except (FileNotFoundError, NotADirectoryError):  # not made yet (or the cache folder cannot exist)
        return None
    lease = _Lease(fd)
    fcntl.flock(fd, fcntl.LOCK_SH)  # waits while a pruner holds it: then the copy is gone
    return lease if (folder / "index.json").is_file() else None


def _build(paths, size, folder: Path, key: str) -> _Lease | None:
    """Make the copy in a temporary folder and rename it to `folder`; a lease on it, or None when a
    file changed meanwhile (the files' digest is no longer `key`: the copy is thrown away). A write
    that fails (full disk, read-only cache) is a `CacheWriteError` naming the folder."""
    import fcntl

    import torch
    import torchvision.transforms.v2.functional as F

    from ..atomic import fsync_dir
    from .download import ENV_VAR

    def writes():
        return cache_writes(folder.parent, ENV_VAR, what='cache="resized" copy')

    with writes():
        folder.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{folder.name}.new-", dir=folder.parent))
    try:
        with writes():
            fd = os.open(tmp / IN_USE, os.O_RDONLY | os.O_CREAT | os.O_CLOEXEC, 0o644)
        lease = _Lease(fd)
        fcntl.flock(fd, fcntl.LOCK_SH)  # in use from the moment it exists under its name
        names = []
        with torch.inference_mode():
            for i, p in enumerate(paths):
                image = load_image(p)  # a source that cannot be read is its own error, not the cache's
                pixels = shrunk_pixels(image, size)
                if pixels is None:
                    names.append(None)
                    continue
                name = f"{i:07d}.png"
                with writes():
                    _write_fsynced(tmp / name, F.to_pil_image(pixels), image.mode)
                names.append(name)
        if _digests(paths, size)[1] != key:
            return None
        with writes():
            (tmp / "index.json").write_text(json.dumps(names))
            with open(tmp / "index.json", "rb+") as f:
                os.fsync(f.fileno())
            fsync_dir(tmp)
            try:
                os.rename(tmp, folder)
            except OSError:  # another process committed the same copy first: it is the same, use it
                if not (folder / "index.json").is_file():
                    raise
                return _take_lease(folder)
            fsync_dir(folder.parent)
        return lease
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _write_fsynced(path: Path, image, mode: str) -> None:
    with open(path, "wb") as f:
        image.convert(mode).save(f, format="PNG")
        f.flush()
        os.fsync(f.fileno())


def _prune(root: Path, source: str, keep: str) -> None:
    """Older copies of the same folder (another key, another size) that no process uses: each is
    removed while its in-use file is locked exclusively, so nobody can take it meanwhile."""
    import fcntl

    for other in root.glob(f"{source}-*"):
        if other.name == keep or not other.is_dir():
            continue
        try:
            fd = os.open(other / IN_USE, os.O_RDONLY | os.O_CLOEXEC)
        except FileNotFoundError:  # a copy of format 1 (no lock file): no process of this version reads it
            shutil.rmtree(other, ignore_errors=True)
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:  # a process reads it: it goes once none does, at a later prune
            os.close(fd)
            continue
        try:
            shutil.rmtree(other, ignore_errors=True)
        finally:
            os.close(fd)
