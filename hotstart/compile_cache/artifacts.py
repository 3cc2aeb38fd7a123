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
(`fingerprint`) and compared when the cache is asked whether it is warm (`problems`). A size alone
would miss flipped bytes, and a trial load would cost what the warmup saves.

Hashing is for ``--status`` and the warmup's repair. A fit with ``compile="auto"`` (the default)
asks at every start, and there a full hash of every recorded file (on CUDA, Triton's cache files
too) is a cost paid before the first batch. So `fingerprint` also records each file's mtime_ns, and
the fit's check (`integrity` with `trusted_before`) takes a file whose size and mtime_ns are the
recorded ones as unchanged without reading it, hashing only the others, as ``git status`` does. A
write changes a file's mtime, except within one tick of the file system's clock: a file is trusted
only when its recorded mtime is older than the manifest that records it (its mtime, the
`trusted_before` the caller passes), so a change made after the recording, in the same tick, is
not missed ("racily clean" files, in git's words: hashed every time). What the fit's check cannot
see, a change that keeps size and mtime (a disk flipping bits, a tool that sets mtimes back), the
full check of ``--status`` and the warmup still finds. Which files are a configuration's: those created or changed in the
Inductor folder while its workload ran (`snapshot`, `changed`). A workload that finds all its graphs
already on disk writes nothing new, so the warmup keeps the files recorded before for the key (the
manifest merges them: manifest.py ``record``); an entry written by a warmup older than this check
has no file list at all, and reads as "unverified" (warm, as before, but not checked).

Recorded paths are relative to the Inductor folder and checked to stay inside it
(`safe_relpath`): the repair (repair.py) deletes damaged ones, and a manifest is only JSON.
"""
from __future__ import annotations

import os
from pathlib import Path, PurePosixPath

from ..file_digest import file_sha256
from .cache import inductor_dir

FIELD = "artifacts"
"""A manifest entry's optional field: ``{relative path: {"size": bytes, "sha256": hex, "mtime_ns":
int}}``, the files in the Inductor folder its workload wrote (or found there, written by an earlier
run). ``mtime_ns`` is absent from entries of warmups older than the fit's quick check: such a file is
always hashed."""

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
    def count(value):
        return isinstance(value, int) and not isinstance(value, bool) and value >= 0

    def ok(fp):
        return (isinstance(fp, dict) and count(fp.get("size")) and isinstance(fp.get("sha256"), str)
                and len(fp["sha256"]) == 64 and ("mtime_ns" not in fp or count(fp["mtime_ns"])))

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


def fingerprint(root, relpaths) -> dict[str, dict]:
    """``{relative path: {"size", "sha256", "mtime_ns"}}`` of those of `relpaths` that exist (the
    `FIELD`). Size and mtime are read before the hash: a file changed while it is hashed then reads as
    changed at the next check, and is hashed again."""
    base = inductor_dir(root)
    out = {}
    for rel in relpaths:
        path = base / rel
        try:
            st = path.stat()
            out[rel] = {"size": st.st_size, "sha256": file_sha256(path), "mtime_ns": st.st_mtime_ns}
        except FileNotFoundError:
            continue
    return out


def problem(root, rel: str, fp: dict, trusted_before: int | None = None) -> str | None:
    """What is wrong with the one recorded file `rel` (missing, another size, another checksum), or None.

    `trusted_before` (the fit's quick check; the module docstring says why): a file whose size and
    mtime_ns are the recorded ones, recorded mtime_ns older than `trusted_before` (the mtime_ns of
    the manifest that records it), is taken as intact without hashing it. None: always hashed."""
    path = inductor_dir(root) / rel
    try:
        st = path.stat()
    except FileNotFoundError:
        return f"{rel}: missing"
    except OSError as e:
        return f"{rel}: cannot be read ({e.strerror or e})"
    if st.st_size != fp["size"]:
        return f"{rel}: {st.st_size} bytes, recorded {fp['size']}"
    recorded_mtime = fp.get("mtime_ns")
    if trusted_before is not None and recorded_mtime == st.st_mtime_ns and recorded_mtime < trusted_before:
        return None
    try:
        digest = file_sha256(path)
    except OSError as e:
        return f"{rel}: cannot be read ({e.strerror or e})"
    return None if digest == fp["sha256"] else f"{rel}: its checksum differs from the recorded one"


def problems(root, artifacts: dict, trusted_before: int | None = None) -> dict[str, str]:
    """``{relative path: what is wrong}`` for each damaged file among `artifacts` (empty: all intact);
    `trusted_before`: as `problem`'s."""
    found = {}
    for rel, fp in sorted(artifacts.items()):
        p = problem(root, rel, fp, trusted_before)
        if p is not None:
            found[rel] = p
    return found


def integrity(root, entry: dict, trusted_before: int | None = None) -> tuple[str, str | None]:
    """``(state, why)`` of a manifest entry's files: `WARM` (all intact), `DAMAGED` (why names the
    Inductor folder, how many files and the first problem) or `UNVERIFIED` (no file list).

    `trusted_before`: None (``--status``, the warmup) hashes every file; a fit passes the mtime_ns of
    the manifest it read the entry from (manifest.py ``read_manifest_timed``), and files unchanged in
    size and mtime since they were recorded are not read (`problem`)."""
    artifacts = entry.get(FIELD)
    if not artifacts:
        return UNVERIFIED, "no list of its files was recorded (a warmup older than the check, or one that found them all cached)"
    bad = problems(root, artifacts, trusted_before)
    if not bad:
        return WARM, None
    first = next(iter(bad.values()))
    return DAMAGED, (f"{len(bad)} of its {len(artifacts)} compiled files in {inductor_dir(root)} "
                     f"{'is' if len(bad) == 1 else 'are'} damaged ({first}{'; ...' if len(bad) > 1 else ''})")
