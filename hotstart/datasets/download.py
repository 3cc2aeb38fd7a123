"""Cached, verified downloads and safe archive extraction.

    path = download(url, sha256)        # <cache>/downloads/<hash8>-<name>, fetched once
    folder = extract(path, dest)        # tar(.gz/.bz2/.xz) or zip, checked member by member

Where the cache is: the `cache_dir` argument, else ``$HOTSTART_DATA_DIR`` (read at call time,
so a test or a job can redirect it), else ``platformdirs.user_cache_dir("hotstart")/datasets``.

``urllib.request``, ``tarfile`` and ``zipfile`` are imported inside the functions that use them,
keeping ``import hotstart.datasets`` cheap.

A full disk or a read-only cache folder is a `CacheWriteError` (hotstart/cache_writes.py) that
names the folder and ``HOTSTART_DATA_DIR``, not a bare ``OSError``.

Why it is careful:
- A download is streamed to a temporary file in the destination folder and renamed into place
  only when complete and verified, so a crash or Ctrl-C never leaves a half file that a later
  run would trust. A sha256 mismatch deletes the file and says expected vs actual.
- Archives come from the internet: a member named ``../../.bashrc`` or ``/etc/passwd``, a link
  pointing outside, or a device file is refused before anything is written. Extraction goes to a
  temporary folder next to `dest`, renamed into place at the end, so `dest` existing means "done".
- With no known checksum (``sha256=None``) the file is trusted on first use: the computed hash
  is recorded next to it (``<file>.sha256``) and reported in a warning (declare it to pin it).
  Every later use checks the cached file against that record (a damaged file is fetched again),
  and a fresh download must match it too: a file that changed on the server raises
  `ChecksumError`, as for a declared checksum, until the record is deleted.
"""
from __future__ import annotations

import hashlib
import os
import posixpath
import sys
import re
import tempfile
import urllib.parse
import warnings
from pathlib import Path, PureWindowsPath

from ..atomic import atomic_open, atomic_write_bytes
from ..cache_writes import cache_write_error, cache_writes
from ..errors import UsageError
from ..file_digest import file_sha256
from ..interactive import draws_bars
from .errors import ChecksumError, DatasetError

__all__ = ["download", "extract", "data_dir"]

ENV_VAR = "HOTSTART_DATA_DIR"
_CHUNK = 1 << 20
_SHA256 = re.compile(r"^[0-9a-f]{64}$")


def data_dir(cache_dir: str | os.PathLike | None = None) -> Path:
    """The datasets cache folder: `cache_dir`, else ``$HOTSTART_DATA_DIR``, else the user cache."""
    if cache_dir is not None:
        return Path(cache_dir).expanduser()
    env = os.environ.get(ENV_VAR)
    if env:
        return Path(env).expanduser()
    import platformdirs

    return Path(platformdirs.user_cache_dir("hotstart")) / "datasets"


def download(url: str, sha256: str | None, *, cache_dir: str | os.PathLike | None = None,
             progress: bool = True, timeout: float = 60.0) -> Path:
    """Download `url` into the cache once and return the file's path.

    `sha256` (64 hex digits) is checked on every fresh download and when reusing a cached file;
    pass ``None`` only when no checksum is known: the first download's hash is recorded (and
    warned about), and every later use is checked against that record.
    """
    sha256 = _check_sha256(sha256)
    scheme = urllib.parse.urlsplit(url).scheme
    if scheme not in ("http", "https", "file"):
        raise UsageError(f"download(url=...): only http(s) and file URLs are supported, got {url!r}")
    dest = data_dir(cache_dir) / "downloads" / _file_name(url)
    record = dest.with_name(dest.name + ".sha256")
    recorded = _read_record(record) if sha256 is None else None
    expected = sha256 or recorded
    if dest.is_file():
        if expected is not None and file_sha256(dest) == expected:
            return dest
        with cache_writes(dest.parent, ENV_VAR, what="datasets cache"):
            dest.unlink()  # stale, corrupt, or never recorded: fetch again
    try:
        with atomic_open(dest, suffix=".part") as out:  # renamed into place only when verified
            actual = _stream(url, out, progress=progress, timeout=timeout)
            if sha256 is not None and actual != sha256:
                raise ChecksumError(f"sha256 mismatch for {url}: expected {sha256}, got {actual}; "
                                    f"the downloaded file was deleted")
            if recorded is not None and actual != recorded:
                raise ChecksumError(f"sha256 mismatch for {url}: the first download had {recorded} (recorded in "
                                    f"{record}), this one has {actual}; the file on the server changed or the "
                                    f"download was altered. The new file was deleted; if the change is expected, "
                                    f"delete {record} (or declare the new sha256) to accept it")
    except DownloadFailed:
        raise
    except OSError as e:  # the cache's side: a full disk, a read-only folder
        raise cache_write_error(dest.parent, e, ENV_VAR, what="datasets cache") from e
    if expected is None:
        with cache_writes(record.parent, ENV_VAR, what="datasets cache"):
            atomic_write_bytes(record, (actual + "\n").encode())
        warnings.warn(f"no sha256 was declared for {url}; the downloaded file has sha256 {actual} "
                      f"(recorded in {record}); declare it to verify future downloads", stacklevel=2)
    return dest


def extract(archive: str | os.PathLike, dest: str | os.PathLike) -> Path:
    """Extract a tar (plain, gz, bz2, xz) or zip `archive` into the new folder `dest`.

    Every member is checked first; absolute paths, ``..`` components, links that point outside
    the archive, and device / fifo files are refused with `DatasetError` naming archive and
    member. `dest` must not exist yet; it appears only once extraction has succeeded.
    """
    archive, dest = Path(archive), Path(dest)
    if not archive.is_file():
        raise FileNotFoundError(f"extract(archive=...): {archive} does not exist or is not a file")
    if dest.exists():
        raise FileExistsError(f"extract(dest=...): {dest} already exists; remove it to extract again")
    in_cache = data_dir() in dest.parents
    with cache_writes(dest.parent, ENV_VAR if in_cache else None, what="datasets cache" if in_cache else "extraction"):
        return _extract_into(archive, dest)


def _extract_into(archive: Path, dest: Path) -> Path:
    import shutil
    import tarfile
    import zipfile

    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=dest.parent, prefix=f".{dest.name}.", suffix=".extracting"))
    try:
        os.chmod(tmp, 0o755)  # mkdtemp makes it private (0700); the result is an ordinary folder
        if zipfile.is_zipfile(archive):
            _extract_zip(archive, tmp)
        elif tarfile.is_tarfile(archive):
            _extract_tar(archive, tmp)
        else:
            raise DatasetError(f"extract: {archive} is not a tar or zip archive")
        try:
            os.rename(tmp, dest)
        except OSError:
            if dest.is_dir():  # another process finished the same extraction first: use theirs
                shutil.rmtree(tmp, ignore_errors=True)
                return dest
            raise
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return dest


# --- downloading ---------------------------------------------------------------------------

class DownloadFailed(OSError):
    """The network side of a download failed (no connection, a cut transfer): told apart from
    the cache's side (a full disk), which is a `CacheWriteError`."""


def _stream(url: str, out, *, progress: bool, timeout: float) -> str:
    """Copy `url` into the open file `out` in chunks; return the sha256 of what was written."""
    import urllib.request  # ~15 ms (http.client, email): only when downloading

    h = hashlib.sha256()
    request = urllib.request.Request(url, headers={"User-Agent": "hotstart"})
    try:
        response = urllib.request.urlopen(request, timeout=timeout)  # noqa: S310 - scheme checked
    except OSError as e:
        raise DownloadFailed(f"could not download {url}: {e}") from e
    with response:
        total = response.headers.get("Content-Length")
        total = int(total) if total and total.isdigit() else None
        bar, name = None, _file_name(url).split("-", 1)[-1]
        if progress and draws_bars(sys.stderr):
            from tqdm.auto import tqdm

            bar = tqdm(total=total, unit="B", unit_scale=True, unit_divisor=1024, desc=name)
        elif progress:  # a log or a pipe: two plain lines, not a stream of \r updates
            size = "" if total is None else f" ({total / 2**20:.1f} MiB)"
            print(f"downloading {name}{size} from {url}", file=sys.stderr, flush=True)
        written = 0
        try:
            while True:
                try:
                    chunk = response.read(_CHUNK)
                except OSError as e:
                    raise DownloadFailed(f"download of {url} failed after {written} bytes: {e}") from e
                if not chunk:
                    break
                out.write(chunk)
                h.update(chunk)
                written += len(chunk)
                if bar is not None:
                    bar.update(len(chunk))
        finally:
            if bar is not None:
                bar.close()
    if total is not None and written != total:
        raise DownloadFailed(f"download of {url} is incomplete: got {written} of {total} bytes")
    if progress and bar is None:
        print(f"downloaded {name}: {written / 2**20:.1f} MiB", file=sys.stderr, flush=True)
    return h.hexdigest()


def _check_sha256(sha256):
    if sha256 is None:
        return None
    if not isinstance(sha256, str) or not _SHA256.match(sha256.lower()):
        raise UsageError(f"download(sha256=...): expected 64 hex digits or None, got {sha256!r}")
    return sha256.lower()


def _read_record(record: Path) -> str | None:
    """The sha256 recorded at the first download, or None (no record, or one we cannot read)."""
    try:
        text = record.read_text(encoding="ascii").strip().lower()
    except (OSError, UnicodeDecodeError):
        return None
    return text if _SHA256.match(text) else None


def _file_name(url: str) -> str:
    """``<first 8 hex of sha256(url)>-<last path segment>``: readable, and distinct per URL."""
    name = posixpath.basename(urllib.parse.urlsplit(url).path) or "download"
    name = re.sub(r"[^A-Za-z0-9._-]", "_", name).lstrip(".") or "download"
    return f"{hashlib.sha256(url.encode()).hexdigest()[:8]}-{name}"


# --- extracting ----------------------------------------------------------------------------

def _unsafe_name(name: str) -> str | None:
    """Why a member name is unsafe to write under the destination, or None if it is fine."""
    if _is_absolute(name):
        return "absolute path"
    if ".." in re.split(r"[/\\]", name):
        return "'..' in path"
    return None


def _is_absolute(name: str) -> bool:
    return name.startswith(("/", "\\")) or bool(PureWindowsPath(name).drive)


def _escapes(target: str) -> bool:
    """True when the archive-relative path `target` is absolute or leaves the archive's root."""
    if _is_absolute(target):
        return True
    norm = posixpath.normpath(target)
    return norm == ".." or norm.startswith("../")


def _extract_tar(archive: Path, into: Path):
    import tarfile

    with tarfile.open(archive, "r:*") as tar:
        members = tar.getmembers()
        for m in members:
            problem = _unsafe_name(m.name)
            if problem is None and m.issym():
                link = posixpath.join(posixpath.dirname(m.name), m.linkname)
                outside = _is_absolute(m.linkname) or _escapes(link)  # relative to the link's folder
                problem = "symlink pointing outside the archive" if outside else None
            elif problem is None and m.islnk():
                problem = "hard link pointing outside the archive" if _escapes(m.linkname) else None
            elif problem is None and (m.isdev() or not (m.isfile() or m.isdir())):
                problem = "device, fifo or other special file"
            if problem:
                raise DatasetError(f"extract: refusing {archive}: member {m.name!r} is unsafe ({problem})")
        if hasattr(tarfile, "data_filter"):  # Python >= 3.11.4 / 3.12: a second line of defence
            tar.extractall(into, members=members, filter="data")
        else:  # pragma: no cover - every member was checked above
            tar.extractall(into, members=members)


def _extract_zip(archive: Path, into: Path):
    import zipfile

    with zipfile.ZipFile(archive) as zf:
        infos = zf.infolist()
        for info in infos:
            problem = _unsafe_name(info.filename)
            if problem:
                raise DatasetError(f"extract: refusing {archive}: member {info.filename!r} is unsafe ({problem})")
        # zipfile writes symlink entries as small regular files, so they cannot point anywhere.
        zf.extractall(into, members=infos)

