"""Which files in an export folder are hotstart's own: the manifest every folder export writes.

A web or C export into a folder replaces that folder as a unit (hotstart/atomic_folder.py), so a
file of yours inside it would be deleted with it; the swap refuses a folder holding anything it
does not write. But which files an export writes depends on its options (``--vendor`` adds the
runtime, ``--harness`` the harnesses): a re-export with fewer options found its own earlier files
and refused them as if they were yours. So each folder export also writes `MANIFEST`, listing every
file it wrote with its sha256. A later export of the same kind replaces exactly those, and the new
set replaces the old one whole, so no file of the earlier export stays behind; a folder that holds
anything else (a file no export wrote, one changed since, an export of another kind) is refused
before the export runs, naming those files.

An export may write files in subfolders (a bundle's ``hotstart_contract/``): the manifest lists them
by their path (``hotstart_contract/model.py``), and the subfolder is the earlier export's own when
every file in it is a listed one, unchanged, except Python's ``__pycache__`` beside listed ``.py``
files (holding only ``.pyc`` files): Python derives it from our files when the bundle's predictor
runs, so replacing it loses nothing of yours. Anything else in the subfolder makes it foreign.

Folders written before the manifest existed have none: the exporter's `legacy` function says which
names an earlier version of it wrote there, for a folder that is recognizably such an export
(web: its task.json; C: its generated model.h); a name ending in ``/`` is a subfolder, which the
`legacy` function has checked itself.

Torch-free and cheap: the command line checks destinations before it loads the model.
"""
from __future__ import annotations

import hashlib
import json
import os
import stat
from pathlib import Path
from typing import Callable, Iterable

from ..atomic_folder import write_folder
from ..errors import UsageError
from ..file_digest import file_sha256

__all__ = ["MANIFEST", "FORMAT", "foreign_files", "foreign_files_message", "owned_files", "write_export_folder"]

MANIFEST = "hotstart-export.json"
FORMAT = "hotstart.export-folder/1"

Legacy = Callable[[Path], Iterable[str]]  # a folder without a manifest -> the names an older export wrote there


def write_export_folder(folder, files: dict[str, bytes], export: str, legacy: Legacy | None = None) -> Path:
    """Make `folder` hold exactly `files` and their manifest (written by the `export` kind: "web",
    "c"), replacing an earlier export of that kind as a unit, whatever options it had.

    Raises `FileExistsError` naming the files if the folder holds any that are not the earlier
    export's own (`foreign_files`), checked while the folder's writers' lock is held; nothing is
    changed then."""
    from .. import __version__

    if MANIFEST in files:
        raise UsageError(f"{MANIFEST} is the manifest's own name; an export cannot write a file of that name")
    listing = {"format": FORMAT, "export": export, "hotstart": __version__,
               "files": {name: hashlib.sha256(data).hexdigest() for name, data in sorted(files.items())}}
    manifest = (json.dumps(listing, indent=2) + "\n").encode()
    # asked under the writers' lock, just before the swap: a check made before it could be stale
    return write_folder(folder, {**files, MANIFEST: manifest}, replaces=lambda at: owned_files(at, export, legacy))


def foreign_files(folder, export: str, legacy: Legacy | None = None) -> list[str]:
    """The sorted names in the existing `folder` that an export of kind `export` must not replace:
    everything but the files an earlier such export wrote there, unchanged since. [] for a folder
    that is absent or empty."""
    folder = Path(folder)
    if not folder.is_dir():
        return []
    return sorted(set(os.listdir(folder)) - owned_files(folder, export, legacy))


def foreign_files_message(flag: str, folder, names: list[str], what: str) -> str:
    """The start of the error for a `folder` that holds `names` (from `foreign_files`): which, and
    why the export (`what`: "a web export") will not replace it; the caller adds what to do."""
    shown = ", ".join(names[:5]) + (f", ... ({len(names)} in all)" if len(names) > 5 else "")
    return (f"{flag} {folder} holds files not written by {what}, or changed since it wrote them ({shown}): "
            f"replacing the folder would delete them")


def owned_files(folder, export: str, legacy: Legacy | None = None) -> frozenset[str]:
    """The names in `folder` that an earlier export of kind `export` wrote, as it wrote them (a
    regular file whose sha256 is the one its manifest lists; a subfolder all of whose files are
    such, ``__pycache__`` aside: `_subfolder_is_ours`), with the manifest itself; without a
    manifest, the names `legacy` gives for the folder (an export older than the manifest)."""
    folder = Path(folder)
    listed = _listed_files(folder, export)
    if listed is None:
        if legacy is None or not folder.is_dir():
            return frozenset()
        return frozenset(n.rstrip("/") for n in legacy(folder)
                         if (_is_plain_folder(folder / n) if n.endswith("/") else _is_regular_file(folder / n)))
    top = {n for n, digest in listed.items() if "/" not in n and _sha256_of_regular(folder / n) == digest}
    subfolders = {n.split("/", 1)[0] for n in listed if "/" in n}
    return frozenset([MANIFEST, *top, *(d for d in subfolders if _subfolder_is_ours(folder, d, listed))])


def _subfolder_is_ours(folder: Path, sub: str, listed: dict[str, str]) -> bool:
    """Every file in `folder`/`sub` (at any depth) is listed and unchanged, or a ``.pyc`` file in a
    ``__pycache__`` beside listed ``.py`` files; no links, nothing else."""
    if not _is_plain_folder(folder / sub):
        return False
    for root, dirs, files in os.walk(folder / sub):
        rel = Path(root).relative_to(folder).as_posix()
        for d in dirs:
            if not _is_plain_folder(Path(root) / d):
                return False
        if Path(root).name == "__pycache__":
            parent = rel.rsplit("/", 1)[0]
            py_beside = any(n.endswith(".py") and n.rsplit("/", 1)[0] == parent for n in listed)
            if dirs or not py_beside or not all(f.endswith(".pyc") and _is_regular_file(Path(root) / f)
                                                for f in files):
                return False
            continue
        for f in files:
            if _sha256_of_regular(Path(root) / f) != listed.get(f"{rel}/{f}"):
                return False
    return True


def _is_plain_folder(path: Path) -> bool:
    """A folder, not a link to one."""
    try:
        return stat.S_ISDIR(path.lstat().st_mode)
    except OSError:
        return False


def _listed_files(folder: Path, export: str) -> dict[str, str] | None:
    """{name: sha256} from `folder`'s manifest written by an `export` export; None when there is no
    such manifest (none, unreadable, or another kind's: then none of the folder is ours)."""
    try:
        listing = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(listing, dict) or listing.get("format") != FORMAT or listing.get("export") != export:
        return None
    files = listing.get("files")
    if not isinstance(files, dict) or not all(isinstance(n, str) and isinstance(d, str) for n, d in files.items()):
        return None
    return {n: d for n, d in files.items() if n != MANIFEST and _safe_relative(n)}


def _safe_relative(name: str) -> bool:
    """A path inside the folder: no empty, ``.`` or ``..`` part, not absolute, no backslash."""
    return "\\" not in name and all(part not in ("", ".", "..") for part in name.split("/"))


def _is_regular_file(path: Path) -> bool:
    """A regular file, not a link to one: a link or a folder in the export's place is not ours."""
    try:
        return stat.S_ISREG(path.lstat().st_mode)
    except OSError:
        return False


def _sha256_of_regular(path: Path) -> str | None:
    """The hex sha256 of the regular file `path` (hotstart/file_digest.py); None for anything else,
    or a file that cannot be read."""
    if not _is_regular_file(path):
        return None
    try:
        return file_sha256(path)
    except OSError:
        return None
