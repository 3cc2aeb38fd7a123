"""A configuration's compiled artifacts: which files in the Inductor folder it wrote, and whether
they are still intact.

Why: the manifest said "warm" from its own entry alone, so a damaged cache still read as warm. What
Inductor (torch 2.14) keeps under ``inductor/`` and what damage does to each (tried on a warm cache
of tests/warmup_fixtures' compiled workload):

- ``fxgraph/<2 chars>/<graph key>/<entry>`` and ``aotautograd/<key>/<entry>``: pickled compiled
  graphs. A damaged one fails to unpickle; Inductor logs the traceback, compiles the graph again
  and writes a new entry *beside* the damaged one, which stays and is tried (and logged) again in
  every later process.
- ``<2 chars>/c<hash>.py``, ``.cpp``, ``.so`` (and ``.main.cpp``/``.main.so``): the generated
  wrapper and C++ kernels. A ``.so`` is never rebuilt while it exists, so a damaged one fails the
  compiled call itself ("invalid ELF header", a BackendCompilerFailed), warm or not.
- ``locks/``: empty lock files, not artifacts.

The check that catches all of these is a file's size and SHA-256, recorded when the warmup wrote it
(`fingerprint`) and compared when the cache is asked whether it is warm (`problems`): a few MB per
configuration, milliseconds to hash. A size alone would miss flipped bytes, and a trial load would
cost what the warmup saves. Which files are a configuration's: those created or changed in the
Inductor folder while its workload ran (`snapshot`, `changed`). A workload that finds all its graphs
already on disk writes nothing new, so the warmup keeps the files recorded before for the key (the
manifest merges them: manifest.py ``record``); an entry written by a warmup older than this check
has no file list at all, and reads as "unverified" (warm, as before, but not checked).

Recorded paths are relative to the Inductor folder and checked to stay inside it
(`safe_relpath`): the repair (repair.py) deletes damaged ones, and a manifest is only JSON.
"""
from __future__ import annotations

import hashlib
import os
from pathlib import Path, PurePosixPath

from .cache import inductor_dir

FIELD = "artifacts"
"""A manifest entry's optional field: ``{relative path: {"size": bytes, "sha256": hex}}``, the files
in the Inductor folder its workload wrote (or found there, written by an earlier run)."""

NOT_ARTIFACTS = ("locks",)
"""Top-level folders of the Inductor folder that hold no compiled artifact (empty lock files)."""

WARM, DAMAGED, UNVERIFIED = "warm", "damaged", "unverified"
"""`integrity`'s states: every recorded file intact; one or more missing or changed; no file list."""


def safe_relpath(rel) -> bool:
    """Is `rel` a relative POSIX path that stays inside the folder (no ``..``, not absolute)?"""
    if not isinstance(rel, str) or not rel or "\\" in rel or "\x00" in rel:
        return False
    p = PurePosixPath(rel)
    return not p.is_absolute() and ".." not in p.parts and "." not in p.parts


def valid_artifacts(value) -> bool:
    """Does `value` have the shape of the `FIELD` (what manifest.py accepts in an entry)?"""
    def ok(fp):
        return (isinstance(fp, dict) and isinstance(fp.get("size"), int) and not isinstance(fp.get("size"), bool)
                and fp["size"] >= 0 and isinstance(fp.get("sha256"), str) and len(fp["sha256"]) == 64)

    return isinstance(value, dict) and all(safe_relpath(k) and ok(v) for k, v in value.items())


def snapshot(root=None) -> dict[str, tuple[int, int]]:
    """Every artifact file under the Inductor folder of the cache `root`: ``{relative path: (size,
    mtime_ns)}`` (dot-files, Inductor's temporary files mid-write, and `NOT_ARTIFACTS` left out)."""
    base = inductor_dir(root)
    out: dict[str, tuple[int, int]] = {}
    for dirpath, dirnames, filenames in os.walk(base):
        here = Path(dirpath)
        if here == base:
            dirnames[:] = [d for d in dirnames if d not in NOT_ARTIFACTS]
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        for name in filenames:
            if name.startswith("."):
                continue
            path = here / name
            try:
                st = path.stat()
            except FileNotFoundError:  # removed while we walked
                continue
            out[path.relative_to(base).as_posix()] = (st.st_size, st.st_mtime_ns)
    return out


def changed(root, before: dict) -> list[str]:
    """The artifact files created or rewritten since `before` (a `snapshot`)."""
    return sorted(rel for rel, stat in snapshot(root).items() if before.get(rel) != stat)


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def fingerprint(root, relpaths) -> dict[str, dict]:
    """``{relative path: {"size", "sha256"}}`` of those of `relpaths` that exist (the `FIELD`)."""
    base = inductor_dir(root)
    out = {}
    for rel in relpaths:
        path = base / rel
        try:
            out[rel] = {"size": path.stat().st_size, "sha256": _sha256(path)}
        except FileNotFoundError:
            continue
    return out


def problem(root, rel: str, fp: dict) -> str | None:
    """What is wrong with the one recorded file `rel` (missing, another size, another checksum), or None."""
    path = inductor_dir(root) / rel
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        return f"{rel}: missing"
    except OSError as e:
        return f"{rel}: cannot be read ({e.strerror or e})"
    if size != fp["size"]:
        return f"{rel}: {size} bytes, recorded {fp['size']}"
    try:
        digest = _sha256(path)
    except OSError as e:
        return f"{rel}: cannot be read ({e.strerror or e})"
    return None if digest == fp["sha256"] else f"{rel}: its checksum differs from the recorded one"


def problems(root, artifacts: dict) -> dict[str, str]:
    """``{relative path: what is wrong}`` for each damaged file among `artifacts` (empty: all intact)."""
    found = {}
    for rel, fp in sorted(artifacts.items()):
        p = problem(root, rel, fp)
        if p is not None:
            found[rel] = p
    return found


def integrity(root, entry: dict) -> tuple[str, str | None]:
    """``(state, why)`` of a manifest entry's files: `WARM` (all intact), `DAMAGED` (why names the
    Inductor folder, how many files and the first problem) or `UNVERIFIED` (no file list)."""
    artifacts = entry.get(FIELD)
    if not artifacts:
        return UNVERIFIED, "no list of its files was recorded (a warmup older than the check, or one that found them all cached)"
    bad = problems(root, artifacts)
    if not bad:
        return WARM, None
    first = next(iter(bad.values()))
    return DAMAGED, (f"{len(bad)} of its {len(artifacts)} compiled files in {inductor_dir(root)} "
                     f"{'is' if len(bad) == 1 else 'are'} damaged ({first}{'; ...' if len(bad) > 1 else ''})")
