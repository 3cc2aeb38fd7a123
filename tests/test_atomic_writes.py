"""A failed write names its destination, and a killed writer's temporary file does not stay for good.

- A full disk or a file size limit failed ``atomic_write_bytes`` / ``atomic_open`` / ``write_folder``
  with ``OSError: [Errno 28] No space left on device`` (or 27, "File too large"), naming no file;
  a read-only file system named the temporary folder beside the destination. Now: a `WriteError`,
  still an `OSError` with the same errno, naming the destination; the temporary file is removed and
  the earlier version is intact. A forked child writes under ``RLIMIT_FSIZE`` (SIGXFSZ ignored, so
  the write fails with EFBIG as on a full disk instead of killing the process).
- A writer killed by SIGKILL mid-write left ``.NAME.XXXXXXXX.tmp`` beside the file for good; the
  next write of the same file removes it, and leaves a live writer's temporary file alone.
"""
import errno
import json
import os
import signal

import pytest

import hotstart.atomic_folder as af
from hotstart.atomic import atomic_open, atomic_write_bytes
from hotstart.atomic_folder import write_folder
from hotstart.errors import HotstartError
from hotstart.write_errors import WriteError
from killed_child import kill_hard, pause_child  # tests/ is on sys.path

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="the tests fork")

LIMIT = 64 * 1024


def _in_child_under_a_size_limit(write) -> dict:
    """Run `write()` in a forked child limited to files of LIMIT bytes; what it raised, as a dict."""
    import resource

    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(r)
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            resource.setrlimit(resource.RLIMIT_FSIZE, (LIMIT, LIMIT))
            try:
                write()
                out = {"raised": None}
            except BaseException as e:
                out = {"raised": type(e).__name__, "message": str(e), "errno": getattr(e, "errno", None),
                       "filename": getattr(e, "filename", None), "oserror": isinstance(e, OSError),
                       "hotstart": isinstance(e, HotstartError), "write_error": isinstance(e, WriteError)}
            os.write(w, json.dumps(out).encode())
        finally:
            os._exit(0)
    os.close(w)
    data = b""
    while chunk := os.read(r, 65536):
        data += chunk
    os.close(r)
    os.waitpid(pid, 0)
    return json.loads(data)


def _beside(folder):
    return sorted(p.name for p in folder.iterdir())


def test_a_write_over_the_size_limit_names_the_file_and_leaves_the_old_one(tmp_path):
    dest = tmp_path / "model.onnx"
    dest.write_bytes(b"old")
    got = _in_child_under_a_size_limit(lambda: atomic_write_bytes(dest, b"x" * (4 * LIMIT)))
    assert got["write_error"] and got["oserror"] and got["hotstart"], got
    assert got["errno"] == errno.EFBIG and got["filename"] == str(dest), got
    assert str(dest) in got["message"] and "file size limit" in got["message"], got
    assert _beside(tmp_path) == ["model.onnx"] and dest.read_bytes() == b"old"


def test_a_callers_chunked_writes_fail_naming_the_file(tmp_path):
    dest = tmp_path / "data.bin"

    def write():
        with atomic_open(dest) as f:
            for _ in range(8):
                f.write(b"y" * (LIMIT // 2))
    got = _in_child_under_a_size_limit(write)
    assert got["write_error"] and got["errno"] == errno.EFBIG and got["filename"] == str(dest), got
    assert _beside(tmp_path) == []


def test_a_callers_own_error_inside_atomic_open_goes_through_unchanged(tmp_path):
    """Only the file's own writes are ours to rename: a failure reading the source (here a network
    error, an OSError too) is not a failed write of the destination."""
    with pytest.raises(ConnectionResetError) as raised:
        with atomic_open(tmp_path / "download.bin") as f:
            f.write(b"partial")
            raise ConnectionResetError(errno.ECONNRESET, "Connection reset by peer")
    assert not isinstance(raised.value, WriteError)
    assert _beside(tmp_path) == []


def test_a_folder_over_the_size_limit_names_the_folder_and_the_file(tmp_path):
    folder = tmp_path / "model"
    write_folder(folder, {"weights.safetensors": b"old w", "task.json": b"old t"})
    got = _in_child_under_a_size_limit(
        lambda: write_folder(folder, {"weights.safetensors": b"w" * (4 * LIMIT), "task.json": b"{}"}))
    assert got["write_error"] and got["errno"] == errno.EFBIG and got["filename"] == str(folder), got
    assert "weights.safetensors" in got["message"] and ".model.new-" not in got["message"], got
    assert _beside(tmp_path) == ["model"]
    assert (folder / "weights.safetensors").read_bytes() == b"old w"


def test_a_read_only_file_system_names_the_folder_not_its_temporary_one(tmp_path, monkeypatch):
    folder = tmp_path / "model"

    def read_only(prefix, dir):
        raise OSError(errno.EROFS, "Read-only file system", os.path.join(dir, prefix + "abc123"))
    monkeypatch.setattr(af.tempfile, "mkdtemp", read_only)
    with pytest.raises(OSError) as raised:
        write_folder(folder, {"a": b"a"})
    e = raised.value
    assert isinstance(e, WriteError) and e.errno == errno.EROFS and e.filename == str(folder)
    assert "read-only" in str(e) and ".model.new-" not in str(e)


def test_a_permission_error_stays_a_permission_error(tmp_path, monkeypatch):
    """Callers (the CLI among them) catch PermissionError: a write refused so still is one."""
    import hotstart.atomic as atomic

    def refused(*a, **k):
        raise PermissionError(errno.EACCES, "Permission denied", str(tmp_path / ".x.abcdefgh.tmp"))
    monkeypatch.setattr(atomic.tempfile, "mkstemp", refused)
    with pytest.raises(PermissionError) as raised:
        atomic_write_bytes(tmp_path / "x", b"x")
    assert isinstance(raised.value, WriteError) and raised.value.filename == str(tmp_path / "x")


def _pause_child_mid_write(dest):
    """A child that writes part of `dest` through atomic_open and stops there; its pid."""
    def body(stop):
        with atomic_open(dest) as f:
            f.write(b"partial" * 1000)
            f.flush()
            stop()
    return pause_child(body)


def test_the_next_write_removes_a_killed_writers_temporary_file_and_spares_a_live_ones(tmp_path):
    dest = tmp_path / "digits.onnx"
    dest.write_bytes(b"old")
    other = tmp_path / ".other.onnx.abcdefgh.tmp"  # another file's temporary: not ours to judge
    other.write_bytes(b"?")
    pid = _pause_child_mid_write(dest)
    try:
        [tmp] = [n for n in _beside(tmp_path) if n.startswith(".digits.onnx.")]
        atomic_write_bytes(dest, b"new")
        assert tmp in _beside(tmp_path), "a live writer's temporary file was removed"
    finally:
        kill_hard(pid)
    assert tmp in _beside(tmp_path) and dest.read_bytes() == b"new"
    atomic_write_bytes(dest, b"newer")  # before: the killed writer's file stayed for good
    assert _beside(tmp_path) == sorted([".other.onnx.abcdefgh.tmp", "digits.onnx"])
    assert dest.read_bytes() == b"newer"


def test_a_new_temporary_file_taken_for_a_dead_writers_is_replaced(tmp_path, monkeypatch):
    """A remover may lock and delete a temporary file in the instant between its creation and its
    writer's lock; the writer then finds its name gone and starts again with a new file."""
    import hotstart.atomic as atomic

    real_lock, removed = atomic._lock, []

    def removed_first(fd):
        if not removed:  # as a remover would: the name no longer leads to this file
            [name] = [p for p in tmp_path.iterdir() if p.name.startswith(".x.")]
            name.unlink()
            removed.append(name)
        return real_lock(fd)
    monkeypatch.setattr(atomic, "_lock", removed_first)
    atomic_write_bytes(tmp_path / "x", b"x")
    assert removed and _beside(tmp_path) == ["x"] and (tmp_path / "x").read_bytes() == b"x"


def test_a_compilers_failure_to_write_the_temporary_name_names_the_destination(tmp_path):
    from hotstart.atomic import atomic_path

    dest = tmp_path / "model.pt2"
    with pytest.raises(WriteError) as raised:
        with atomic_path(dest, suffix=".pt2") as tmp:
            raise OSError(errno.ENOSPC, "No space left on device", str(tmp))
    assert raised.value.errno == errno.ENOSPC and raised.value.filename == str(dest)
    with pytest.raises(FileNotFoundError) as raised:  # not about the temporary file: as it was
        with atomic_path(dest, suffix=".pt2"):
            raise FileNotFoundError(errno.ENOENT, "No such file or directory", "/nowhere/lib.so")
    assert not isinstance(raised.value, WriteError) and _beside(tmp_path) == []
