"""Entries that sit side by side in a folder the user owns, replaced as a unit: a two-phase commit.

`atomic_folder.write_folder` swaps a whole folder, so it can only be used where hotstart owns the
folder. Some sets of ours are siblings in a folder that also holds the user's other files: a C
export to ``X.c`` is ``X.c`` beside ``X.h``; `hotstart train --out DIR` writes ``model/``,
``history.csv`` and ``loss.png`` into ``DIR``. No single rename replaces several of those, so they
are replaced by a two-phase commit with a journal (`replace_together`):

1. the new entries are written into a staging folder beside them (``.UNIT.stage-XXXX``), fsync'd;
2. the journal ``.UNIT.commit`` is written atomically: it names the staging folder and its entries.
   From here the new set is decided;
3. each new entry is renamed over its target (a folder target is first renamed into the staging
   folder, since a rename cannot replace a non-empty folder);
4. the journal is removed, then the staging folder (with the replaced folders in it).

A writer holds an exclusive ``flock`` on the folder throughout, and first finishes what a killed
writer left (`finish_interrupted`): with a journal, it completes step 3 from the staging folder
(every rename there is idempotent: an entry already moved in is no longer in the staging folder),
then removes the journal; without one, a staging folder is an uncommitted set and is removed. So a
writer killed or failing at any point leaves, once hotstart next writes or reads the set:

- before 2 (a full disk while writing, a kill): the old set, untouched;
- from 2 on: the new set, whole.

Between a kill in step 3 and that next write or read, the targets may be a mix; the journal beside
them says so, and hotstart's readers of such a set (`deploy.model_folder` for a train --out folder)
call `finish_interrupted` first. A reader outside hotstart (a C compiler) does not: run any hotstart
write of the same set, or `finish_interrupted`, after a crash.
"""
from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Callable

from .atomic import atomic_write_bytes, fsync_dir
from .folder_lock import writers_take_turns

__all__ = ["finish_interrupted", "journal_path", "replace_together"]

_STAGE, _COMMIT, _OLD = ".stage-", ".commit", ".old-"


def journal_path(folder, unit: str) -> Path:
    """The journal of the set `unit` in `folder`: present only while a commit is unfinished."""
    return Path(folder) / f".{unit}{_COMMIT}"


def replace_together(folder, unit: str, stage: Callable[[Path], None]) -> list[Path]:
    """Replace the entries of the set `unit` in `folder` as a unit; `stage(staging)` writes the new
    entries (files or folders) into the empty folder `staging`. Returns the targets' paths.

    An error while staging (a full disk) leaves the old set untouched and is raised naming the
    folder; nothing is changed then. So is a target that may not be replaced, checked under the
    lock before the commit (`FileExistsError` / `IsADirectoryError` naming it): a folder of the set
    that holds names the new one does not (files of yours: the swap would delete them), a folder
    or a link to one where a file goes, a file where a folder goes. See the module docstring for a
    kill."""
    folder = Path(os.path.abspath(folder))
    folder.mkdir(parents=True, exist_ok=True)
    with writers_take_turns(folder):
        _recover(folder, unit)
        staging = Path(tempfile.mkdtemp(prefix=f".{unit}{_STAGE}", dir=folder))
        try:
            stage(staging)
            names = sorted(os.listdir(staging))
            _check_targets(folder, staging, names)
            fsync_dir(staging)
            journal = {"staging": staging.name, "entries": names}
            atomic_write_bytes(journal_path(folder, unit), (json.dumps(journal) + "\n").encode())
            fsync_dir(folder)
        except (FileExistsError, IsADirectoryError):  # a target we may not replace: already names it
            shutil.rmtree(staging, ignore_errors=True)
            raise
        except OSError as e:
            shutil.rmtree(staging, ignore_errors=True)
            raise OSError(e.errno, f"{e.strerror or e}: writing the new {unit} set in {folder} failed "
                                   f"({e.filename or 'while staging it'}); nothing was changed",
                          str(folder)) from e
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        try:
            _apply(folder, unit, staging, names)
        except OSError as e:
            raise OSError(e.errno, f"the new {unit} set in {folder} is committed but not all of it is in place "
                                   f"({e.strerror}, {e.filename}); the next write or read of it finishes the "
                                   f"job (journal {journal_path(folder, unit)})", str(folder)) from e
    return [folder / n for n in names]


def finish_interrupted(folder, unit: str) -> bool:
    """Finish (or discard) what a writer of the set `unit` in `folder` left when it was killed,
    if no writer is active now; for readers. False when nothing could be done (a writer holds the
    lock, or the folder cannot be written): the read goes on with what is there."""
    folder = Path(folder)
    if not journal_path(folder, unit).exists() and not _stagings(folder, unit):
        return True
    with contextlib.suppress(OSError), writers_take_turns(folder, wait=False) as ours:
        if ours:
            _recover(folder, unit)
            return True
    return False


# --- helpers -------------------------------------------------------------------------------

def _stagings(folder: Path, unit: str) -> list[Path]:
    """Staging folders of `unit`, and temporary files of a journal write that was killed (atomic.py
    names them ``.NAME.XXXX.tmp``): what a killed writer of the set may leave besides the journal."""
    staged, journal = f".{unit}{_STAGE}", f".{journal_path(folder, unit).name}."
    try:
        return [folder / e for e in os.listdir(folder)
                if e.startswith(staged) or e.startswith(journal) and e.endswith(".tmp")]
    except OSError:
        return []


def _recover(folder: Path, unit: str) -> None:
    """The caller holds the lock: roll a committed set forward, discard uncommitted ones."""
    journal = journal_path(folder, unit)
    if journal.exists():
        try:
            record = json.loads(journal.read_text(encoding="utf-8"))
            staging_name, names = record["staging"], list(record["entries"])
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise OSError(f"{journal}: unreadable journal of an interrupted write ({e}); the set beside it may be "
                          f"a mix: write it again after removing the journal") from e
        staging = folder / staging_name
        if staging_name.startswith(f".{unit}{_STAGE}") and "/" not in staging_name and staging.is_dir():
            _apply(folder, unit, staging, names)
        else:
            journal.unlink()
    for p in _stagings(folder, unit):
        if p.is_dir() and not p.is_symlink():
            shutil.rmtree(p, ignore_errors=True)
        else:
            p.unlink(missing_ok=True)


def _check_targets(folder: Path, staging: Path, names: list[str]) -> None:
    """Refuse, before the commit, a target that the renames of `_apply` must not replace."""
    for name in names:
        new, target = staging / name, folder / name
        if not os.path.lexists(target):
            continue
        if not new.is_dir():
            if target.is_dir():
                raise IsADirectoryError(f"{target} is a folder: cannot write the file {name} there (nothing "
                                        f"was changed)")
            continue
        if target.is_symlink() or not target.is_dir():
            what = "a symbolic link" if target.is_symlink() else "not a folder"
            raise FileExistsError(f"{target} is {what}: cannot replace it with the folder {name} (nothing was changed)")
        extra = sorted(set(os.listdir(target)) - set(os.listdir(new)))
        if extra:
            shown = ", ".join(extra[:5]) + (", ..." if len(extra) > 5 else "")
            raise FileExistsError(f"{target} holds other files ({shown}): replacing the folder would delete them; "
                                  f"move them out (nothing was changed)")


def _apply(folder: Path, unit: str, staging: Path, names: list[str]) -> None:
    """Step 3 and 4: move each staged entry over its target (idempotent), drop journal and staging."""
    for name in names:
        new, target = staging / name, folder / name
        if not os.path.lexists(new):
            continue  # moved in before a kill
        if new.is_dir() and not new.is_symlink():  # `_check_targets`: the target is a folder or none
            if os.path.lexists(target):
                aside = staging / f"{_OLD}{name}"
                if os.path.lexists(aside):
                    shutil.rmtree(aside) if aside.is_dir() and not aside.is_symlink() else aside.unlink()
                os.rename(target, aside)
            os.rename(new, target)
        else:
            os.replace(new, target)
    fsync_dir(folder)
    journal_path(folder, unit).unlink()
    fsync_dir(folder)
    shutil.rmtree(staging, ignore_errors=True)
