"""A C export to ``X.c`` replaces ``X.c`` and ``X.h`` as a unit (hotstart/export/c/write.py,
hotstart/sibling_set.py): they were written one after the other, so a full disk while writing X.c
left the new X.h beside the old X.c (and the error named no file), and a kill between the two did
the same. Torch-free: `write_files` is called with the sources as text."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from killed_child import KILL_AT_STEP  # tests/ is on sys.path

from hotstart.export.c.write import write_files
from hotstart.sibling_set import finish_interrupted, journal_path

OLD = {"digits.c": "/* old c */\n" * 50, "digits.h": "/* old h */\n" * 50}
NEW = {"digits.c": "/* new c */\n" * 80, "digits.h": "/* new h */\n" * 80}
REPO = Path(__file__).resolve().parents[1]


def pair(folder: Path) -> dict[str, str]:
    return {n: (folder / n).read_text() for n in ("digits.c", "digits.h")}


def test_a_failing_write_of_the_c_file_leaves_the_old_pair_and_names_the_folder(tmp_path, monkeypatch):
    """A write that fails while the second file is written (a full disk): the old pair, whole."""
    write_files(tmp_path / "digits.c", OLD)
    (tmp_path / "mine.txt").write_text("a file of yours beside the export")
    import hotstart.atomic as atomic

    real, calls = atomic.os.replace, []

    def full_disk_at_the_second_file(src, dst, *a, **k):
        calls.append(dst)
        if len(calls) == 2:
            raise OSError(28, "No space left on device")
        return real(src, dst, *a, **k)

    monkeypatch.setattr(atomic.os, "replace", full_disk_at_the_second_file)
    with pytest.raises(OSError) as e:
        write_files(tmp_path / "digits.c", NEW)
    monkeypatch.undo()
    assert pair(tmp_path) == OLD
    assert str(tmp_path) in str(e.value) and "nothing was changed" in str(e.value)
    assert sorted(os.listdir(tmp_path)) == ["digits.c", "digits.h", "mine.txt"]  # no staging folder left


CHILD = "import sys\n" + KILL_AT_STEP + textwrap.dedent("""
    sys.path.insert(0, {repo!r})
    from hotstart.export.c.write import write_files
    write_files(sys.argv[2], {new!r})
    print("done", _steps[0])
""")



def test_a_kill_at_any_step_leaves_the_old_pair_or_the_new_one(tmp_path):
    """SIGKILL the writer at each rename/replace/unlink/rmtree it makes: afterwards (once the next
    reader or writer has finished an interrupted commit) the folder holds the old pair or the new
    pair, never one file of each; a mixed state on disk is always flagged by the journal."""
    script = tmp_path / "child.py"
    script.write_text(CHILD.format(repo=str(REPO), new=NEW))
    seen = set()
    for kill_at in range(1, 40):
        out = tmp_path / f"k{kill_at}"
        out.mkdir()
        write_files(out / "digits.c", OLD)
        r = subprocess.run([sys.executable, str(script), str(kill_at), str(out / "digits.c")],
                           capture_output=True, text=True, timeout=60)
        if r.returncode == 0:
            assert pair(out) == NEW and sorted(os.listdir(out)) == ["digits.c", "digits.h"]
            break
        assert r.returncode == -9, r.stderr
        if pair(out) not in (OLD, NEW):
            assert journal_path(out, "digits.c").exists()  # a mix on disk is flagged
        assert finish_interrupted(out, "digits.c")
        after = pair(out)
        assert after in (OLD, NEW), kill_at
        seen.add("old" if after == OLD else "new")
        assert sorted(os.listdir(out)) == ["digits.c", "digits.h"], os.listdir(out)
        write_files(out / "digits.c", OLD)  # the next export works
        assert pair(out) == OLD
    else:
        pytest.fail("the writer never finished")
    assert seen == {"old", "new"}  # kills both before and after the commit point were tried


def test_the_next_export_finishes_an_interrupted_one(tmp_path):
    """A journal left by a kill is finished by the next write before it stages its own set."""
    write_files(tmp_path / "digits.c", OLD)
    staging = tmp_path / ".digits.c.stage-x"
    staging.mkdir()
    (staging / "digits.h").write_text(NEW["digits.h"])  # digits.c already moved in
    (tmp_path / "digits.c").write_text(NEW["digits.c"])
    journal_path(tmp_path, "digits.c").write_text(json.dumps({"staging": staging.name,
                                                              "entries": ["digits.c", "digits.h"]}))
    write_files(tmp_path / "other.c", {"other.c": "x", "other.h": "y"})  # another set's write leaves it be
    assert (tmp_path / "digits.h").read_text() == OLD["digits.h"]
    write_files(tmp_path / "digits.c", NEW)
    assert pair(tmp_path) == NEW and not staging.exists() and not journal_path(tmp_path, "digits.c").exists()
