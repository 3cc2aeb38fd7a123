"""Probes of the warmup's cache: --clear, a damaged manifest, two writers at once, a kill during the
manifest write, an unwritable cache folder, and the side-effect guard against a workload that
misbehaves. None of these compiles anything (the compiled path is in test_warmup.py)."""
from __future__ import annotations

import json
import os
import random
import signal
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import torch

import hotstart.warmup as warmup
from hotstart.compile_cache import FORMAT, config_key, load_manifest, read_manifest, record, compile_decision
from hotstart.compile_cache.clear import NotACompileCache, clear
from hotstart.warmup.__main__ import main as warmup_main

HERE = Path(__file__).parent
KEY = config_key("resnet18", 3, (128, 128), "cpu", None)


def _env():
    env = dict(os.environ)
    env["PYTHONPATH"] = str(HERE.parent) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def _fake_inductor_cache(root: Path) -> None:
    """What a warmup leaves: Inductor's folders with files in them, and the manifest."""
    for sub in ("fxgraph/ab", "aotautograd/cd", "locks"):
        (root / "inductor" / sub).mkdir(parents=True)
    (root / "inductor" / "fxgraph" / "ab" / "entry").write_bytes(b"graph")
    record(KEY, workload="w", seconds=1.0, device="cpu", root=root)


# --- --clear ---------------------------------------------------------------------------------

def test_clear_removes_the_compile_cache_and_keeps_downloaded_datasets(tmp_path, capsys):
    _fake_inductor_cache(tmp_path)
    dataset = tmp_path / "datasets" / "downloads" / "1234abcd-imagenette2-160.tgz"
    dataset.parent.mkdir(parents=True)
    dataset.write_bytes(b"a downloaded archive")
    (tmp_path / ".manifest.json.x1y2.tmp").write_bytes(b'{"format": "hotst')  # left by a killed write
    assert warmup_main(["--cache-dir", str(tmp_path), "--clear"]) == 0
    assert "cleared" in capsys.readouterr().out
    assert dataset.read_bytes() == b"a downloaded archive"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["datasets"]
    # again: nothing of ours is left, the datasets stay, and that is not an error
    assert warmup_main(["--cache-dir", str(tmp_path), "--clear"]) == 0
    assert "nothing to clear" in capsys.readouterr().out
    assert dataset.exists()


def test_clear_refuses_a_folder_that_is_not_a_compile_cache(tmp_path, capsys):
    (tmp_path / "thesis.tex").write_text("years of work")
    (tmp_path / "inductor").mkdir()                    # a folder of that name is not enough...
    (tmp_path / "inductor" / "notes.txt").write_text("mine")
    (tmp_path / "manifest.json").write_text(json.dumps({"format": "someone-else/2", "entries": {}}))
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    assert warmup_main(["--cache-dir", str(tmp_path), "--clear"]) == 2
    err = capsys.readouterr().err
    assert "refusing" in err and str(tmp_path) in err and "Nothing was deleted" in err and "thesis.tex" in err
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == before
    with pytest.raises(NotACompileCache):
        clear(tmp_path)


@pytest.mark.parametrize("dry_run", [False, True])
def test_clear_with_a_damaged_manifest_says_what_is_wrong_with_it(tmp_path, capsys, dry_run):
    """It said that there was no manifest.json, then listed manifest.json among the folder's files."""
    _fake_inductor_cache(tmp_path)
    (tmp_path / "manifest.json").write_bytes(b'{"format": "hotstart.warmup/1", "entr')  # cut short
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    assert warmup_main(["--cache-dir", str(tmp_path), "--clear", *(["--dry-run"] if dry_run else [])]) == 2
    err = capsys.readouterr().err
    assert f"{tmp_path / 'manifest.json'} is not valid JSON (JSONDecodeError)" in err, err
    assert "no manifest.json" not in err and "with a damaged manifest" in err
    assert f"delete {tmp_path / 'inductor'}, {tmp_path / 'manifest.json'} by hand" in err
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == before
    (tmp_path / "manifest.json").unlink()
    assert warmup_main(["--cache-dir", str(tmp_path), "--clear"]) == 2
    assert "it has no manifest.json" in capsys.readouterr().err


def test_clear_dry_run_deletes_nothing_and_says_what_clear_would(tmp_path, capsys):
    _fake_inductor_cache(tmp_path)
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    assert warmup_main(["--cache-dir", str(tmp_path), "--clear", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "would delete" in out and "inductor" in out and "manifest.json" in out
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == before
    assert warmup_main(["--cache-dir", str(tmp_path), "--clear"]) == 0  # the real one still does
    assert not (tmp_path / "inductor").exists()


def test_clear_refuses_an_inductor_folder_that_no_manifest_marks(tmp_path, capsys):
    """An ``inductor/`` folder with Inductor-like subfolders is not enough: only hotstart's manifest
    marks a folder as its compile cache."""
    (tmp_path / "inductor" / "cache").mkdir(parents=True)
    (tmp_path / "inductor" / "cache" / "results.bin").write_bytes(b"someone else's")
    (tmp_path / "inductor" / "fxgraph").mkdir()
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    assert warmup_main(["--cache-dir", str(tmp_path), "--clear"]) == 2
    assert "refusing" in capsys.readouterr().err
    assert warmup_main(["--cache-dir", str(tmp_path), "--clear", "--dry-run"]) == 2
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == before


def test_a_folder_marked_before_compiling_can_be_cleared(tmp_path):
    """`mark_cache` (run before anything is compiled into a folder) makes it clearable, keeps a sound
    manifest's entries, and repairs a damaged one."""
    from hotstart.compile_cache.manifest import mark_cache

    mark_cache(tmp_path)
    assert load_manifest(tmp_path) == ({"format": FORMAT, "entries": {}}, None)
    record(KEY, workload="w", seconds=1.0, device="cpu", root=tmp_path)
    mark_cache(tmp_path)
    assert KEY in read_manifest(tmp_path)["entries"]
    (tmp_path / "manifest.json").write_bytes(b"{not json")
    mark_cache(tmp_path)
    assert load_manifest(tmp_path) == ({"format": FORMAT, "entries": {}}, None)
    (tmp_path / "inductor" / "fxgraph").mkdir(parents=True)
    assert {p.name for p in clear(tmp_path)} >= {"inductor", "manifest.json"}


def test_warmup_progress_to_a_pipe_is_plain_lines(tmp_path, capsys, monkeypatch):
    """Captured stderr is not a terminal: one line per workload, no ``\r`` bar."""
    monkeypatch.syspath_prepend(str(HERE.parent))
    report = warmup.run(only=["user_tiny*"], budget=0.0, cache_dir=tmp_path, modules=["tests.warmup_fixtures.userpkg_warm"],
                        include_builtin=False, progress=True)
    err = capsys.readouterr().err
    assert "\r" not in err
    assert [line for line in err.splitlines() if line.startswith("warmup ")] == [
        f"warmup {i + 1}/2: {r.name}" for i, r in enumerate(report.results)]


def test_clear_of_a_missing_or_empty_folder_is_a_no_op(tmp_path):
    assert clear(tmp_path / "never-made") == []
    assert clear(tmp_path) == [] and tmp_path.exists()


# --- a damaged manifest ----------------------------------------------------------------------

GOOD = {"workload": "w", "seconds": 1.0, "device": "cpu", "torch": torch.__version__, "when": "2026-01-01T00:00:00"}

DAMAGED = {
    "not json": b"{not json",
    "truncated": json.dumps({"format": FORMAT, "entries": {KEY: GOOD}}).encode()[:-7],
    "empty file": b"",
    "not utf-8": b"\xff\xfe{\x00}",
    "a list": json.dumps([{"format": FORMAT}]).encode(),
    "a string": json.dumps("hotstart").encode(),
    "null": b"null",
    "a number": b"3.5",
    "deeply nested": b"[" * 100_000 + b"]" * 100_000,
    "no format": json.dumps({"entries": {KEY: GOOD}}).encode(),
    "wrong format": json.dumps({"format": "hotstart.warmup/0", "entries": {KEY: GOOD}}).encode(),
    "format not a string": json.dumps({"format": 1, "entries": {KEY: GOOD}}).encode(),
    "entries a list": json.dumps({"format": FORMAT, "entries": [KEY]}).encode(),
    "entries null": json.dumps({"format": FORMAT, "entries": None}).encode(),
    "entry a number": json.dumps({"format": FORMAT, "entries": {KEY: 5}}).encode(),
    "entry a list": json.dumps({"format": FORMAT, "entries": {KEY: [GOOD]}}).encode(),
    "entry missing a field": json.dumps({"format": FORMAT, "entries": {KEY: {**GOOD, "torch": None}}}).encode(),
    "seconds a string": json.dumps({"format": FORMAT, "entries": {KEY: {**GOOD, "seconds": "fast"}}}).encode(),
    "seconds a bool": json.dumps({"format": FORMAT, "entries": {KEY: {**GOOD, "seconds": True}}}).encode(),
    "device a number": json.dumps({"format": FORMAT, "entries": {KEY: {**GOOD, "device": 0}}}).encode(),
    "NaN seconds": json.dumps({"format": FORMAT, "entries": {KEY: {**GOOD, "seconds": float("nan")}}}).encode(),
}


@pytest.mark.parametrize("damage", sorted(DAMAGED))
def test_a_damaged_manifest_means_not_warm_and_is_repaired_by_the_next_record(tmp_path, capsys, damage):
    (tmp_path / "manifest.json").write_bytes(DAMAGED[damage])
    manifest, problem = load_manifest(tmp_path)
    if damage == "NaN seconds":  # JSON as Python writes it allows NaN: the entry is usable
        assert KEY in manifest["entries"] and problem is None
    else:
        assert manifest == {"format": FORMAT, "entries": {}}
        assert problem and "manifest.json" in problem
        assert not warmup.is_warm(KEY, tmp_path)
    # --status reports it and does not crash
    assert warmup_main(["--cache-dir", str(tmp_path), "--status"]) == 0
    out = capsys.readouterr().out
    assert problem is None or "note:" in out
    # compile="auto" asks the same manifest: damaged means eager, never an exception (on CUDA a
    # warm configuration compiles, so only the entry's soundness decides)
    assert compile_decision(KEY, device_type="cuda", batches=10, batch_size=16,
                            cache_root=tmp_path)[0] == (damage == "NaN seconds")
    # the next record writes a sound manifest that keeps what was sound
    other = config_key(None, 3, (128, 128), "cpu", None)
    record(other, workload="w2", seconds=2.0, device="cpu", root=tmp_path)
    manifest, problem = load_manifest(tmp_path)
    assert problem is None and other in manifest["entries"]


def test_a_manifest_with_one_bad_entry_keeps_the_good_ones(tmp_path):
    other = config_key(None, 3, (128, 128), "cpu", None)
    (tmp_path / "manifest.json").write_text(json.dumps({"format": FORMAT, "entries": {KEY: GOOD, other: "bad"}}))
    manifest, problem = load_manifest(tmp_path)
    assert list(manifest["entries"]) == [KEY] and "1 damaged entry" in problem


# --- two writers, and a kill during the write -------------------------------------------------

def _fork_writer(root, tag: str, n: int):
    """A child process (forked: torch is already imported, so it starts at once) that records
    `n` entries and writes each index to a pipe after its record() returned. -> (pid, pipe)."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        code = 1
        try:
            os.close(r)
            for i in range(n):
                record(f"{tag}-{i}", workload=tag, seconds=i, device="cpu", root=root)
                os.write(w, f"{i}\n".encode())
            code = 0
        finally:
            os._exit(code)
    os.close(w)
    return pid, os.fdopen(r)


def test_two_warmups_at_once_keep_every_entry(tmp_path):
    """Two processes record 30 entries each at the same time: a read-modify-write without the
    lock loses some of them."""
    n = 30
    writers = [_fork_writer(tmp_path, tag, n) for tag in ("a", "b")]
    for pid, pipe in writers:
        assert len(pipe.read().split()) == n
        assert os.waitpid(pid, 0)[1] == 0
    manifest, problem = load_manifest(tmp_path)
    assert problem is None
    assert sorted(manifest["entries"]) == sorted(f"{t}-{i}" for t in ("a", "b") for i in range(n))


def test_a_kill_during_manifest_writes_loses_nothing_recorded(tmp_path):
    """A writer is killed (SIGKILL) at random moments while it records into a large manifest,
    12 times: afterwards the manifest is sound and holds every entry whose record() had returned."""
    big = {"format": FORMAT, "entries": {f"old-{i}": dict(GOOD, workload=f"old-{i}") for i in range(500)}}
    (tmp_path / "manifest.json").write_text(json.dumps(big))
    rng = random.Random(0)
    for kill in range(12):
        pid, pipe = _fork_writer(tmp_path, f"k{kill}", 10_000)
        first = pipe.readline().strip()
        assert first == "0", "the writer failed before its first record"
        time.sleep(rng.uniform(0.0, 0.05))  # then kill it at a random moment of a later write
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        done = [first] + pipe.read().split()
        pipe.close()
        manifest, problem = load_manifest(tmp_path)
        assert problem is None, problem
        entries = manifest["entries"]
        assert all(f"old-{i}" in entries for i in range(500))
        assert all(f"k{kill}-{i}" in entries for i in done), "an entry whose record() returned was lost"
    clear(tmp_path)  # leftovers of killed writes (temporary files, the lock) go with --clear
    assert list(tmp_path.iterdir()) == []


# --- an unwritable cache ----------------------------------------------------------------------

def test_an_unwritable_cache_is_reported_and_never_fails_the_install(tmp_path, capsys):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    cache = blocker / "cache"  # cannot be created, whoever we run as
    args = ["--cache-dir", str(cache), "--no-builtin", "--module", "tests.warmup_fixtures.userpkg_warm",
            "--only", "user_tiny", "--no-progress"]
    sys.path.insert(0, str(HERE.parent))
    try:
        assert warmup_main(args) == 0
        out = capsys.readouterr().out
        assert "user_tiny" in out and "failed" in out and "not writable" in out and str(cache) in out
        assert warmup_main(args + ["--strict"]) == 1
    finally:
        sys.path.remove(str(HERE.parent))


_WARM_INTO_READ_ONLY = """
import sys
import hotstart.warmup as warmup
from hotstart.cache_writes import CacheWriteError
from hotstart.compile_cache.manifest import mark_cache

root = sys.argv[1]
report = warmup.run(cache_dir=root, registries=[warmup.Registry()], include_builtin=False, progress=False)
assert report.results == [], report.table()
report = warmup.run(only=["single-smallcnn-128-cpu"], cache_dir=root, progress=False)
assert [r.status for r in report.results] == ["failed"], report.table()
print(report.results[0].error)
try:
    mark_cache(root)
except CacheWriteError as e:
    print(e)
"""


def test_a_read_only_cache_folder_is_reported(tmp_path):
    """For root too (it skipped under root, so in every CI run): a read-only bind mount in a private
    mount namespace (tests/mount_namespace.py), the warmup in a child process. The compile cache's
    own error names the folder and HOTSTART_CACHE_DIR."""
    from mount_namespace import env_with_this_hotstart, run_in_mount_namespace

    proc = run_in_mount_namespace([sys.executable, "-c", _WARM_INTO_READ_ONLY, tmp_path], read_only=[tmp_path],
                                  env=env_with_this_hotstart())
    assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]
    warm_error, write_error = proc.stdout.splitlines()[-2:]
    assert "not writable" in warm_error and str(tmp_path) in warm_error, warm_error
    assert write_error.startswith(f"cannot write the compile cache in {tmp_path}: the file system is read-only")
    assert "set HOTSTART_CACHE_DIR to another folder" in write_error
    assert list(tmp_path.iterdir()) == []


# --- the side-effect guard --------------------------------------------------------------------

def test_the_guard_puts_back_what_a_misbehaving_workload_changed_and_says_so(tmp_path, monkeypatch):
    from tests.warmup_fixtures.misbehaving_warm import LEAKED_ENV

    monkeypatch.syspath_prepend(str(HERE.parent))
    monkeypatch.delenv(LEAKED_ENV, raising=False)
    torch.rand(2), np.random.rand(2), random.random()  # states that are not the defaults
    torch_rng, np_rng, py_rng = torch.get_rng_state(), np.random.get_state(), random.getstate()
    benchmark, threads = torch.backends.cudnn.benchmark, torch.get_num_threads()

    report = warmup.run(cache_dir=tmp_path, modules=["tests.warmup_fixtures.misbehaving_warm"], include_builtin=False,
                        progress=False)

    assert [r.status for r in report.results] == ["ok"], report.table()
    assert torch.equal(torch.get_rng_state(), torch_rng)
    after = np.random.get_state()
    assert np.array_equal(after[1], np_rng[1]) and after[2:] == np_rng[2:]
    assert random.getstate() == py_rng
    assert torch.backends.cudnn.benchmark == benchmark and torch.get_num_threads() == threads
    assert LEAKED_ENV not in os.environ
    effects = report.results[0].side_effects
    assert {"torch RNG", "numpy RNG", "random RNG", f"os.environ[{LEAKED_ENV!r}]"} <= set(effects)
    assert any(e.startswith("torch flag cudnn_benchmark") for e in effects)
    assert any(e.startswith("torch flag num_threads") for e in effects)
    assert len(effects) == 6, effects
    assert all(e.startswith("seeds_globally: ") for e in report.side_effects) and len(report.side_effects) == 6
    assert "put back a side effect: seeds_globally: torch RNG" in report.table()


def test_a_compile_cache_that_takes_no_files_is_a_cache_write_error(tmp_path, monkeypatch):
    """A read-only HOTSTART_CACHE_DIR (a bind mount, a shared image): makedirs(exist_ok=True)
    succeeded on it, and Inductor then failed deep inside the compile ("Read-only file system:
    .../inductor/locks/...lock", a traceback). The folder is now tried with a file first."""
    import errno
    import tempfile

    from hotstart.cache_writes import CacheWriteError
    from hotstart.compile_cache.cache import inductor_cache

    def read_only(*args, **kwargs):
        raise OSError(errno.EROFS, "Read-only file system", str(tmp_path / "inductor"))

    monkeypatch.setattr(tempfile, "mkstemp", read_only)
    with pytest.raises(CacheWriteError, match=r"cannot write the .* in .*: .*HOTSTART_CACHE_DIR"):
        with inductor_cache(tmp_path):
            raise AssertionError("the cache was used")
    monkeypatch.undo()
    with inductor_cache(tmp_path) as folder:
        assert [p.name for p in folder.iterdir()] == []  # the write check leaves nothing
