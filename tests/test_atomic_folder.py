"""What a killed save leaves beside a folder (``.NAME.new-*``, ``.NAME.old-*``) is cleaned up by the
next save or load, when provably stale: no writer holds the parent folder's lock.

A forked child writes a folder and stops in the middle (at a chosen step); the parent checks that
a load while the child lives leaves its temporary folder alone, then SIGKILLs the child and checks
that the next load removes what it left (and puts back the committed set when the kill came
between the swap's two renames).
"""
import os
import shutil
import signal

import pytest

import hotstart.atomic_folder as af
from hotstart.atomic_folder import read_folder, write_folder
from killed_child import kill_hard, pause_child  # tests/ is on sys.path

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="the kill tests fork")

OLD = {"a.bin": b"old a", "b.bin": b"old b"}
NEW = {"a.bin": b"new a", "b.bin": b"new b"}


def _pause_child_at(step: str, folder):
    """A child that writes NEW into `folder` and stops forever at `step`; its pid."""
    def body(stop):
        if step == "after the first file":
            real = af.atomic_write_bytes

            def slow(path, data):
                real(path, data)
                stop()
            af.atomic_write_bytes = slow
        else:  # "between the renames": the old set moved aside, the new one not yet in
            real_rename = os.rename

            def rename(src, dst):
                real_rename(src, dst)
                stop()
            af.os.rename = rename
        write_folder(folder, NEW)
    return pause_child(body)


_kill = kill_hard


def _beside(folder):
    return sorted(p.name.rsplit("-", 1)[0] for p in folder.parent.iterdir() if p.name != folder.name)


def test_a_load_removes_a_killed_saves_temporary_folder_and_spares_a_live_one(tmp_path):
    folder = tmp_path / "model"
    write_folder(folder, OLD)
    pid = _pause_child_at("after the first file", folder)
    try:
        assert _beside(folder) == [".model.new"]
        assert read_folder(folder, OLD)[1] == OLD
        assert _beside(folder) == [".model.new"], "a live writer's temporary folder was removed"
    finally:
        _kill(pid)
    assert _beside(folder) == [".model.new"]  # before: it stayed there until the next save
    got_from, files = read_folder(folder, OLD)
    assert (got_from, files) == (folder, OLD)
    assert _beside(folder) == []


def test_a_load_after_a_kill_between_the_renames_puts_the_committed_set_back(tmp_path):
    folder = tmp_path / "model"
    write_folder(folder, OLD)
    pid = _pause_child_at("between the renames", folder)
    try:
        assert not folder.exists() and _beside(folder) == [".model.new", ".model.old"]
        got_from, files = read_folder(folder, OLD)  # the old set, read beside the target
        assert files == OLD and got_from != folder
        assert _beside(folder) == [".model.new", ".model.old"]  # the writer lives: nothing touched
    finally:
        _kill(pid)
    got_from, files = read_folder(folder, OLD)
    assert (got_from, files) == (folder, OLD) and _beside(folder) == []


def test_a_save_after_a_kill_removes_the_leftovers(tmp_path):
    folder = tmp_path / "model"
    write_folder(folder, OLD)
    _kill(_pause_child_at("after the first file", folder))
    write_folder(folder, NEW)
    assert _beside(folder) == [] and read_folder(folder, NEW)[1] == NEW


def test_a_load_from_a_read_only_folder_still_reads(tmp_path, monkeypatch):
    """Cleaning up is best effort: a load never fails because it could not remove a leftover."""
    folder = tmp_path / "model"
    write_folder(folder, OLD)
    _kill(_pause_child_at("after the first file", folder))
    monkeypatch.setattr(af.shutil, "rmtree", lambda *a, **k: (_ for _ in ()).throw(PermissionError("read-only")))
    assert read_folder(folder, OLD)[1] == OLD
    monkeypatch.setattr(af.shutil, "rmtree", shutil.rmtree)


@pytest.mark.parametrize("what", ["folder", "fifo"])
def test_a_name_that_is_not_a_file_is_an_error_naming_its_path(tmp_path, what):
    """A folder (or a FIFO) where a file of the set should be: the error carries the file's path,
    never the number of the handle it was read through ("Is a directory: 4"), and a FIFO with no
    writer does not block the read."""
    folder = tmp_path / "model"
    write_folder(folder, OLD)
    os.remove(folder / "b.bin")
    if what == "folder":
        os.mkdir(folder / "b.bin")
    else:
        os.mkfifo(folder / "b.bin")
    before = signal.signal(signal.SIGALRM, lambda *_: pytest.fail("the read blocked on the FIFO"))
    signal.alarm(20)
    try:
        with pytest.raises(IsADirectoryError if what == "folder" else OSError) as info:
            read_folder(folder, OLD)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, before)
    assert info.value.filename == str(folder / "b.bin")
    assert str(folder / "b.bin") in str(info.value)


# --- recovery puts back the committed set, whatever files the next write has -------------------
#
# The swap (atomic_folder.py's docstring) is killed at each point, in a child (SIGKILL), and the
# next write, whose file set differs from the killed one's (an export's depends on its options),
# fails while writing its temporary folder (a full disk). The folder must hold a whole set, the
# old one or the new one. Before, recovery put the old set back only if it held every name of the
# *next* write's set, and removed it otherwise: the folder was gone.

OTHER = {"a.bin": b"other a", "c.bin": b"other c"}  # another file set: what a re-export with other options writes
LEGACY = {"a.bin": b"legacy a"}  # fewer files than either


def _pause_child_at_rename(folder, files, nth):
    """A child that writes `files` into `folder` and stops forever after its `nth` rename of a
    folder (1: the old set moved aside; 2: the new set moved in); its pid."""
    def body(stop):
        real_rename, count = os.rename, [0]

        def rename(src, dst):
            real_rename(src, dst)
            count[0] += 1
            if count[0] == nth:
                stop()
        af.os.rename = rename
        write_folder(folder, files)
    return pause_child(body)


def _pause_child_in_removal(folder, files):
    """A child that writes `files` into `folder` and stops forever halfway through removing the
    old set (one file of it deleted); its pid."""
    def body(stop):
        def rmtree(p, *a, **k):
            os.unlink(os.path.join(p, sorted(os.listdir(p))[0]))
            stop()
        af.shutil.rmtree = rmtree
        write_folder(folder, files)
    return pause_child(body)


def _failing_write(folder, files, monkeypatch, replaces=(*OLD, *NEW, *OTHER)):
    """A write of `files` into `folder` that fails writing its temporary folder (ENOSPC)."""
    def full(path, data):
        raise OSError(28, "No space left on device", str(path))
    with monkeypatch.context() as m:
        m.setattr(af, "atomic_write_bytes", full)
        with pytest.raises(OSError, match="No space left"):
            write_folder(folder, files, replaces=replaces)


def _contents(folder):
    return {p.name: p.read_bytes() for p in folder.iterdir()}


@pytest.mark.parametrize("kill_at", ["after the first file", "between the renames", "after the renames",
                                     "in the removal"])
@pytest.mark.parametrize("old_set", [OLD, LEGACY], ids=["same names", "fewer names"])
def test_a_failed_write_after_a_killed_one_leaves_a_whole_set(tmp_path, monkeypatch, kill_at, old_set):
    folder = tmp_path / "model"
    write_folder(folder, old_set)
    if kill_at == "after the first file":
        pid = _pause_child_at(kill_at, folder)
    elif kill_at == "in the removal":
        pid = _pause_child_in_removal(folder, NEW)
    else:
        pid = _pause_child_at_rename(folder, NEW, 1 if kill_at == "between the renames" else 2)
    _kill(pid)
    _failing_write(folder, OTHER, monkeypatch)
    committed = old_set if kill_at in ("after the first file", "between the renames") else NEW
    assert _contents(folder) == committed
    assert _beside(folder) == []
    write_folder(folder, OTHER, replaces={*OLD, *NEW})  # and the next write replaces it
    assert _contents(folder) == OTHER and _beside(folder) == []


def test_the_newest_old_folder_is_the_committed_set_even_with_none_of_the_new_names(tmp_path, monkeypatch):
    """Simulated on disk: the target missing, an older export (other names) moved aside."""
    folder = tmp_path / "site"
    old = tmp_path / ".site.old-abc123"
    old.mkdir()
    (old / "task.json").write_bytes(b"{}")
    (old / "index.html").write_bytes(b"<html>")
    _failing_write(folder, {"index.html": b"new", "hotstart-export.json": b"{}"}, monkeypatch,
                   replaces=["task.json", "index.html"])
    assert _contents(folder) == {"task.json": b"{}", "index.html": b"<html>"} and _beside(folder) == []


def test_a_leftover_that_cannot_be_moved_away_stops_the_write_naming_it(tmp_path, monkeypatch):
    """A writer never moves a second set aside beside an old one it could not remove: the next
    recovery could not tell which is the committed one."""
    folder = tmp_path / "model"
    write_folder(folder, OLD)
    stale = tmp_path / ".model.old-zzz"
    stale.mkdir()
    real = os.rename

    def refuse(src, dst):
        if str(src) == str(stale):
            raise PermissionError(13, "Permission denied")
        real(src, dst)
    monkeypatch.setattr(af.os, "rename", refuse)
    with pytest.raises(OSError, match=r"cannot remove .*\.model\.old-zzz"):
        write_folder(folder, NEW)
    assert _contents(folder) == OLD


def test_a_callable_replaces_is_asked_under_the_lock_after_recovery(tmp_path):
    folder = tmp_path / "model"
    old = tmp_path / ".model.old-abc"
    old.mkdir()
    (old / "x.bin").write_bytes(b"x")
    seen = []

    def replaces(at):
        seen.append(sorted(os.listdir(at)))
        return ["x.bin"]
    write_folder(folder, NEW, replaces=replaces)
    assert seen == [["x.bin"]] and _contents(folder) == NEW
