"""The manifest: what the warmup has warmed, as JSON in the cache folder.

Written atomically (hotstart.atomic: a reader sees the old file or the new, even if the writer is
killed), and read-merge-written under an exclusive lock on ``manifest.lock``, so two warmups
running at once on one cache both keep their entries. A damaged manifest (not JSON, the wrong
shape, entries of the wrong types) means "nothing known warm" for what is damaged, never a crash;
`load_manifest` says what was wrong, for ``--status``.

Entries are keyed by what decides whether a compiled backbone's cache entries can be reused:
torch version, device type, backbone, input channels and size, precision. Not the batch size
(the batch dimension is compiled dynamic) and not the number of classes (the head is not compiled).
"""
from __future__ import annotations

import contextlib
import json
import os
import time
from pathlib import Path

from ..precisions import FP32, canonical_precision
from .artifacts import FIELD as ARTIFACTS_FIELD, problem, valid_artifacts
from .cache import cache_dir, writes

FORMAT = "hotstart.warmup/1"
"""The manifest's ``format`` value; a manifest of another format is read as "nothing warm", and
``--status`` says why."""


def config_key(backbone, in_chans: int, size, device_type: str, precision: str | None,
               channels_last: bool = False) -> str | None:
    """The cache-relevant configuration as a string; None when it cannot be named (a custom module).

    `channels_last`: the batches' memory layout (learner/memory_format.py). Compiled graphs guard on
    the input's strides, so graphs warmed with contiguous batches do not serve channels_last ones;
    the key of a contiguous configuration is the one it had before layouts were chosen."""
    import torch

    if backbone is None:
        name = "SmallCNN"
    elif isinstance(backbone, str):
        name = backbone
    else:
        return None
    precision = canonical_precision(precision or FP32)  # one key per precision
    h, w = (int(s) for s in size)
    layout = "|channels_last" if channels_last else ""
    return f"torch={torch.__version__}|{device_type}|{name}|in{int(in_chans)}|{h}x{w}|{precision}{layout}"


STEP_FIELD = "step_s_per_sample"
"""An entry's optional field: the warmup's eager training step of this configuration, seconds per
sample. (Warmups before the compiled step was timed too wrote the compiled step's time here; such an
entry has no `COMPILED_STEP_FIELD`, so ``compile="auto"`` does not use it.)"""

COMPILED_STEP_FIELD = "compiled_step_s_per_sample"
"""An entry's optional field: the warmup's warm compiled training step, seconds per sample. With
`STEP_FIELD`, this machine's measured speed-up for the configuration (policy.py)."""

MANIFEST = "manifest.json"
LOCK = "manifest.lock"

# an entry's fields and the types they must have (anything else: the entry is dropped as damaged)
_ENTRY_TYPES = {"workload": str, "seconds": (int, float), "device": str, "torch": str, "when": str}


def manifest_path(root=None) -> Path:
    """``manifest.json`` in the compile cache `root` (None: `cache_dir`'s choice): the file that
    says which configurations the warmup has compiled (`record` writes it, `read_manifest` reads
    it). It may not exist yet: a cache never warmed has no manifest, and nothing is warm."""
    return cache_dir(root) / MANIFEST


def _empty() -> dict:
    return {"format": FORMAT, "entries": {}}


def _valid_entry(value) -> bool:
    return (isinstance(value, dict)
            and all(isinstance(value.get(k), t) and not isinstance(value.get(k), bool) for k, t in _ENTRY_TYPES.items())
            and (ARTIFACTS_FIELD not in value or valid_artifacts(value[ARTIFACTS_FIELD])))


def _parse(raw: bytes) -> tuple[dict | None, str | None]:
    """(the manifest's object, None), or (None, what is wrong with the file, as words that follow
    its path): the file must be a JSON object of hotstart's format."""
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as e:  # JSONDecodeError is a ValueError
        return None, f"is not valid JSON ({type(e).__name__})"
    if not isinstance(data, dict):
        return None, f"holds a JSON {type(data).__name__}, not an object"
    if data.get("format") != FORMAT:
        return None, f"has format {data.get('format')!r}, not {FORMAT!r}"
    return data, None


def unmarked_reason(root=None) -> str | None:
    """Why the folder `root` is not marked as hotstart's compile cache, naming its manifest (absent,
    unreadable, not JSON, another format); None when its manifest marks it (whatever its entries)."""
    path = manifest_path(root)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return f"it has no {MANIFEST}"
    except OSError as e:
        return f"{path} cannot be read ({e.strerror or e})"
    problem = _parse(raw)[1]
    return None if problem is None else f"{path} {problem}"


def load_manifest(root=None) -> tuple[dict, str | None]:
    """``(manifest, problem)``: the manifest with only its well-formed entries, and what was wrong
    with the file (None when it was missing or sound)."""
    path = manifest_path(root)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return _empty(), None
    except OSError as e:
        return _empty(), f"cannot read {path}: {e.strerror or e}"
    data, problem = _parse(raw)
    if problem is not None:
        return _empty(), f"{path} {problem}; treated as empty"
    entries = data.get("entries")
    if not isinstance(entries, dict):
        return _empty(), f"{path}: 'entries' is a {type(entries).__name__}, not an object; treated as empty"
    good = {k: v for k, v in entries.items() if _valid_entry(v)}
    problem = None
    if len(good) != len(entries):
        bad = sorted(set(entries) - set(good))
        problem = f"{path}: {len(bad)} damaged entr{'y' if len(bad) == 1 else 'ies'} ignored: {bad[:3]}"
    return {"format": FORMAT, "entries": good}, problem


def read_manifest(root=None) -> dict:
    """The manifest's well-formed entries (``{"format": ..., "entries": {key: entry}}``)."""
    return load_manifest(root)[0]


def read_manifest_timed(root=None) -> tuple[dict, int | None]:
    """``(read_manifest(root), the manifest's mtime_ns)``: what a fit's quick check of an entry's
    files needs (artifacts.py ``integrity``'s `trusted_before`). The time is read first: a manifest
    replaced in between is newer than it, which only makes the check hash more. None: no manifest."""
    try:
        written = manifest_path(root).stat().st_mtime_ns
    except OSError:
        written = None
    return read_manifest(root), written


@contextlib.contextmanager
def manifest_lock(root=None, timeout: float = 60.0):
    """An exclusive lock on the cache's ``manifest.lock`` (POSIX ``flock``; Windows ``msvcrt``),
    held while the manifest is read, merged and replaced. Released when the holder exits or dies."""
    path = cache_dir(root) / LOCK
    with writes(path.parent):
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    try:
        deadline = time.monotonic() + timeout
        while not _try_lock(fd):
            if time.monotonic() > deadline:
                raise TimeoutError(f"could not lock {path} within {timeout:g} s (another warmup is writing)")
            time.sleep(0.02)
        try:
            yield
        finally:
            _unlock(fd)
    finally:
        os.close(fd)


def _try_lock(fd) -> bool:
    """Take the lock if it is free; False if another process holds it."""
    try:
        import fcntl
    except ImportError:  # Windows
        import msvcrt

        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError:  # EACCES / EDEADLOCK: held elsewhere
            return False
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def _unlock(fd) -> None:
    try:
        import fcntl
    except ImportError:
        import msvcrt

        os.lseek(fd, 0, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)
    else:
        fcntl.flock(fd, fcntl.LOCK_UN)


def record(key: str, *, workload: str, seconds: float, device: str, root=None,
           step_s_per_sample: float | None = None, compiled_step_s_per_sample: float | None = None,
           artifacts: dict | None = None) -> None:
    """Add (or replace) one entry: under the lock, re-read the manifest, merge, replace atomically.

    `artifacts`: the files in the Inductor folder that the workload wrote (artifacts.py
    ``fingerprint``), merged with those the entry it replaces recorded that are still intact: a
    second warmup of a warm configuration writes nothing new, and its entry still lists the files
    (``--status`` and ``compile="auto"`` check them: artifacts.py ``integrity``).

    `step_s_per_sample` and `compiled_step_s_per_sample`: an eager and a warm compiled training
    step of this configuration, seconds per sample, as the warmup measured them on this machine
    (``compile="auto"`` decides from their ratio and the eager time: policy.py); optional, an entry
    without both is warm but never compiled by ``"auto"`` on CPU."""
    import torch

    from ..atomic import atomic_write_bytes

    entry = {"workload": workload, "seconds": round(float(seconds), 3), "device": device,
             "torch": torch.__version__, "when": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
    if step_s_per_sample is not None:
        entry[STEP_FIELD] = float(step_s_per_sample)
    if compiled_step_s_per_sample is not None:
        entry[COMPILED_STEP_FIELD] = float(compiled_step_s_per_sample)
    with manifest_lock(root), writes(cache_dir(root)):
        data = read_manifest(root)
        kept = {rel: fp for rel, fp in data["entries"].get(key, {}).get(ARTIFACTS_FIELD, {}).items()
                if problem(root, rel, fp) is None}
        if kept or artifacts:
            entry[ARTIFACTS_FIELD] = {**kept, **(artifacts or {})}
        data["entries"][key] = entry
        atomic_write_bytes(manifest_path(root), json.dumps(data, indent=2, sort_keys=True).encode())


def mark_cache(root=None) -> None:
    """Write an empty manifest into `root` unless a sound one is there: the mark that this folder is
    hotstart's compile cache, which is what lets ``python -m hotstart.warmup --clear`` delete it
    (it refuses a folder without it). Called before anything is compiled into the folder."""
    from ..atomic import atomic_write_bytes

    if manifest_path(root).exists() and load_manifest(root)[1] is None:
        return
    with manifest_lock(root):
        if manifest_path(root).exists() and load_manifest(root)[1] is None:
            return
        data = read_manifest(root)  # keeps the sound entries of a damaged file
        with writes(cache_dir(root)):
            atomic_write_bytes(manifest_path(root), json.dumps(data, indent=2, sort_keys=True).encode())


def drop(keys, root=None, *, expected: dict | None = None, lock_held: bool = False) -> list[str]:
    """Remove the entries `keys` (those present) from the manifest, under the lock, atomically: a
    configuration whose compiled files are damaged is not warm until the warmup records it again.
    Returns the keys dropped.

    `expected` ({key: its entry's artifacts as the caller saw them}): drop a key only while its
    entry still records those, so a warmup that re-recorded it since (fresh files) keeps its entry.
    `lock_held`: the caller holds `manifest_lock` already (repair.py holds it across its check, its
    deletions and this); the lock is not reentrant, so taking it again would wait for ourselves."""
    from ..atomic import atomic_write_bytes

    with contextlib.nullcontext() if lock_held else manifest_lock(root), writes(cache_dir(root)):
        data = read_manifest(root)
        gone = [k for k in keys if k in data["entries"]
                and (expected is None or data["entries"][k].get(ARTIFACTS_FIELD) == expected.get(k))]
        if not gone:
            return []
        for k in gone:
            del data["entries"][k]
        atomic_write_bytes(manifest_path(root), json.dumps(data, indent=2, sort_keys=True).encode())
        return gone


def is_warm(key: str | None, root=None) -> bool:
    """Whether the warmup recorded the configuration `key` (a `config_key`) in the manifest of the
    cache `root`: its compiled graphs are then on disk, and compiling it is a cache read (resnet10t
    at 128x128 on a 2-core EPYC: 3 s warm against 34 s cold; compile_cache/policy.py, whose
    `compile_decision` looks the key up the same way). False for ``key=None`` (a custom module,
    which no warmup can name), for a missing or damaged manifest (`read_manifest` keeps only
    the well-formed entries), and for an entry whose recorded compiled files are missing or changed
    (artifacts.py ``integrity``: a damaged cache is cold, whatever its manifest says). Asked when a
    fit starts: files unchanged in size and mtime since the warmup recorded them are not hashed."""
    from .artifacts import DAMAGED, integrity

    if key is None:
        return False
    data, written = read_manifest_timed(root)
    entry = data["entries"].get(key)
    return entry is not None and integrity(root, entry, trusted_before=written)[0] != DAMAGED
