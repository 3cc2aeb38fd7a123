"""`repair`: make a damaged configuration cold again, so that the next compile rebuilds it.

Inductor neither deletes a compiled-graph entry it cannot unpickle (it compiles again and writes a
new one beside it, and every later process logs the old one's traceback again) nor rebuilds a C++
kernel whose ``.so`` exists (a damaged one fails the compiled call). So the warmup, before it runs,
deletes each *damaged* file that a manifest entry recorded (artifacts.py ``problems``: missing,
another size, another checksum; never a file that no entry names) and drops those entries: they
are cold, and the workload that warms them compiles them again and records them anew. Intact files
are kept, so a configuration sharing kernels with a damaged one loses nothing it can still use.

Another warmup may run at once on the same cache, and may have just compiled a damaged file's
graph again (Inductor writes the fresh file without any lock of ours) and be about to record it.
So the repair holds the manifest's lock across its check, its deletions and the drop (a record
waits for it), notes each file's identity (inode, size, mtime) before hashing it, deletes a damaged
file only if it is still that same file right before the unlink (a fresh one is someone's new
work), and drops an entry only while it still records the files it checked.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .artifacts import FIELD, problems, safe_relpath
from .cache import inductor_dir, writes
from .manifest import drop, load_manifest, manifest_lock


@dataclass(frozen=True)
class Repaired:
    """One configuration `repair` found damaged: its manifest key, and the files it deleted (paths
    relative to `folder`, the Inductor folder) with what was wrong with each."""

    key: str
    folder: str
    removed: dict

    def line(self) -> str:
        """One line for the warmup's report."""
        first = next(iter(self.removed.values()), "")
        return (f"repaired {self.key}: deleted {len(self.removed)} damaged compiled file(s) in {self.folder} "
                f"({first}{'; ...' if len(self.removed) > 1 else ''}); it is cold until its workload runs again")


def damaged_entries(root=None) -> dict[str, dict[str, str]]:
    """``{key: {relative path: what is wrong}}`` for each manifest entry with damaged recorded files."""
    return {key: {rel: why for rel, (why, _) in bad.items()}
            for key, bad in _damaged(root, load_manifest(root)[0]["entries"]).items()}


def repair(root=None) -> list[Repaired]:
    """Delete the damaged recorded files of every damaged configuration in the cache `root` and drop
    those entries from the manifest; returns what it did (nothing for a sound cache). Holds the
    manifest's lock throughout (the module docstring says why)."""
    base = inductor_dir(root)
    with manifest_lock(root):
        entries = load_manifest(root)[0]["entries"]
        found = _damaged(root, entries)
        if not found:
            return []
        removed: dict[str, dict[str, str]] = {}
        with writes(base):
            for key, bad in found.items():
                removed[key] = {}
                for rel, (why, seen) in bad.items():
                    # recorded paths are checked when the manifest is read too: never outside the folder
                    if safe_relpath(rel) and seen is not None and _identity(base / rel) == seen:
                        (base / rel).unlink(missing_ok=True)
                        removed[key][rel] = why
        drop(list(found), root, expected={k: entries[k].get(FIELD) for k in found}, lock_held=True)
    return [Repaired(key, str(base), removed[key]) for key in found]


def _identity(path: Path) -> tuple[int, int, int, int] | None:
    """``(device, inode, size, mtime_ns)`` of the file `path`, None when it is missing: the same
    tuple later means the same file, unchanged."""
    try:
        st = path.stat()
    except FileNotFoundError:
        return None
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns


def _damaged(root, entries: dict) -> dict[str, dict[str, tuple[str, tuple | None]]]:
    """``{key: {relative path: (what is wrong, its `_identity` before it was checked)}}`` for each
    of `entries` with damaged recorded files."""
    base = inductor_dir(root)
    found = {}
    for key, entry in sorted(entries.items()):
        artifacts = entry.get(FIELD) or {}
        seen = {rel: _identity(base / rel) if safe_relpath(rel) else None for rel in artifacts}
        bad = problems(root, artifacts)
        if bad:
            found[key] = {rel: (why, seen.get(rel)) for rel, why in bad.items()}
    return found
