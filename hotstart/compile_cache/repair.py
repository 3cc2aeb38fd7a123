"""`repair`: make a damaged configuration cold again, so that the next compile rebuilds it.

Inductor neither deletes a compiled-graph entry it cannot unpickle (it compiles again and writes a
new one beside it, and every later process logs the old one's traceback again) nor rebuilds a C++
kernel whose ``.so`` exists (a damaged one fails the compiled call). So the warmup, before it runs,
deletes each *damaged* file that a manifest entry recorded (artifacts.py ``problems``: missing,
another size, another checksum; never a file that no entry names) and drops those entries: they
are cold, and the workload that warms them compiles them again and records them anew. Intact files
are kept, so a configuration sharing kernels with a damaged one loses nothing it can still use.
"""
from __future__ import annotations

from dataclasses import dataclass

from .artifacts import FIELD, problems, safe_relpath
from .cache import inductor_dir, writes
from .manifest import drop, load_manifest


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
    entries = load_manifest(root)[0]["entries"]
    found = {}
    for key, entry in sorted(entries.items()):
        bad = problems(root, entry.get(FIELD) or {})
        if bad:
            found[key] = bad
    return found


def repair(root=None) -> list[Repaired]:
    """Delete the damaged recorded files of every damaged configuration in the cache `root` and drop
    those entries from the manifest; returns what it did (nothing for a sound cache)."""
    found = damaged_entries(root)
    if not found:
        return []
    base = inductor_dir(root)
    with writes(base):
        for bad in found.values():
            for rel in bad:
                if safe_relpath(rel):  # checked when the manifest was read too: never outside the folder
                    (base / rel).unlink(missing_ok=True)
    drop(list(found), root)
    return [Repaired(key, str(base), bad) for key, bad in found.items()]
