"""A damaged compile cache is not warm: ``--status`` checks each configuration's recorded compiled
files (size and SHA-256), ``compile="auto"`` and `is_warm` do too, and the warmup deletes the damaged
files and drops the entry so its workload compiles it again. No compile here: the files are written
as Inductor lays them out (compile_cache/artifacts.py); test_warmup.py checks a real compiled cache."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

import hotstart.warmup as warmup
from hotstart.compile_cache import compile_decision, config_key, is_warm, read_manifest, record
from hotstart.compile_cache.artifacts import changed, fingerprint, snapshot
from hotstart.warmup.__main__ import main as warmup_main

HERE = Path(__file__).parent
KEY = config_key(None, 1, (32, 32), "cpu", None)
FILES = {"fxgraph/ab/fabc/entry1": b"g" * 300, "aotautograd/aqx/entry2": b"a" * 200, "ab/cabc.main.so": b"\x7fELF" + b"k" * 96}


def _warmed(root: Path) -> Path:
    """A cache as a compiled workload leaves it: Inductor's files, written while it ran, recorded."""
    base = root / "inductor"
    (base / "locks").mkdir(parents=True)
    before = snapshot(root)
    for rel, data in FILES.items():
        (base / rel).parent.mkdir(parents=True, exist_ok=True)
        (base / rel).write_bytes(data)
    (base / "locks" / "cabc.lock").write_bytes(b"")
    written = fingerprint(root, changed(root, before))
    record(KEY, workload="digits", seconds=30.0, device="cpu", root=root, artifacts=written,
           step_s_per_sample=0.02, compiled_step_s_per_sample=0.01)
    return base


def _status(root, capsys) -> str:
    assert warmup_main(["--cache-dir", str(root), "--status"]) == 0
    return capsys.readouterr().out


def test_the_recorded_files_are_what_the_workload_wrote(tmp_path):
    _warmed(tmp_path)
    artifacts = read_manifest(tmp_path)["entries"][KEY]["artifacts"]
    assert sorted(artifacts) == sorted(FILES)  # not the lock files
    assert artifacts["ab/cabc.main.so"]["size"] == 100 and len(artifacts["ab/cabc.main.so"]["sha256"]) == 64


@pytest.mark.parametrize("damage", ["truncated", "same size, other bytes", "deleted"])
def test_a_damaged_configuration_is_reported_cold_naming_the_folder(tmp_path, capsys, damage):
    base = _warmed(tmp_path)
    assert "  warm  " + KEY in _status(tmp_path, capsys)
    assert is_warm(KEY, tmp_path) and compile_decision(KEY, device_type="cuda", batches=10, batch_size=16,
                                                       cache_root=tmp_path)[0]
    target = base / "fxgraph/ab/fabc/entry1"
    if damage == "truncated":
        target.write_bytes(b"g" * 100)
    elif damage == "deleted":
        target.unlink()
    else:
        target.write_bytes(b"x" * 300)
    out = _status(tmp_path, capsys)
    assert f"DAMAGED (cold)  {KEY}" in out and str(base) in out and "fxgraph/ab/fabc/entry1" in out
    assert "  warm  " not in out and "nothing is warm yet" in out
    assert not is_warm(KEY, tmp_path)
    for device in ("cuda", "cpu"):
        use, why = compile_decision(KEY, device_type=device, batches=10_000, batch_size=16, cache_root=tmp_path)
        assert not use and "damaged" in why and str(base) in why


def test_the_warmup_deletes_the_damaged_files_and_drops_the_entry(tmp_path, monkeypatch):
    """The damaged kernel would fail every compiled call (Inductor never rebuilds a ``.so`` that exists),
    and a damaged graph entry stays beside the one Inductor recompiles: the warmup deletes exactly the
    damaged files, keeps the intact ones, and says so."""
    monkeypatch.syspath_prepend(str(HERE.parent))
    base = _warmed(tmp_path)
    (base / "ab/cabc.main.so").write_bytes(b"garbage")
    report = warmup.run(only=["user_tiny"], cache_dir=tmp_path, modules=["tests.warmup_fixtures.userpkg_warm"],
                        include_builtin=False, progress=False)
    assert [r.status for r in report.results] == ["ok"]
    assert len(report.repaired) == 1 and KEY in report.repaired[0] and str(base) in report.repaired[0]
    assert "ab/cabc.main.so" in report.table()
    assert not (base / "ab/cabc.main.so").exists()
    assert (base / "fxgraph/ab/fabc/entry1").read_bytes() == FILES["fxgraph/ab/fabc/entry1"]
    assert KEY not in read_manifest(tmp_path)["entries"]
    assert warmup.run(only=["user_tiny"], cache_dir=tmp_path, modules=["tests.warmup_fixtures.userpkg_warm"],
                      include_builtin=False, progress=False).repaired == []


def test_a_second_warmup_that_writes_nothing_keeps_the_file_list(tmp_path):
    """A warm configuration's workload finds every graph cached and writes no file: its new entry still
    lists (and checks) the files recorded before, the intact ones only."""
    base = _warmed(tmp_path)
    (base / "aotautograd/aqx/entry2").unlink()
    record(KEY, workload="digits", seconds=3.0, device="cpu", root=tmp_path, artifacts={})
    entry = read_manifest(tmp_path)["entries"][KEY]
    assert sorted(entry["artifacts"]) == sorted(set(FILES) - {"aotautograd/aqx/entry2"}) and entry["seconds"] == 3.0
    assert is_warm(KEY, tmp_path)


def test_an_entry_without_a_file_list_is_warm_but_unverified(tmp_path, capsys):
    record(KEY, workload="digits", seconds=30.0, device="cpu", root=tmp_path)
    out = _status(tmp_path, capsys)
    assert f"warm, unverified  {KEY}" in out and "no list of its files" in out
    assert is_warm(KEY, tmp_path)


def test_a_recorded_path_outside_the_folder_makes_the_entry_damaged_not_deleted(tmp_path):
    _warmed(tmp_path)
    outside = tmp_path / "precious.txt"
    outside.write_text("keep me")
    data = json.loads((tmp_path / "manifest.json").read_text())
    data["entries"][KEY]["artifacts"]["../precious.txt"] = {"size": 1, "sha256": "0" * 64}
    (tmp_path / "manifest.json").write_text(json.dumps(data))
    assert KEY not in read_manifest(tmp_path)["entries"]  # a malformed entry is dropped, as before
    from hotstart.compile_cache.repair import repair

    assert repair(tmp_path) == [] and outside.read_text() == "keep me"


# --- the fit's check is cheap: files unchanged since the warmup recorded them are not hashed ---

def _count_hashes(monkeypatch) -> list:
    import hotstart.compile_cache.artifacts as artifacts

    hashed, real = [], artifacts.file_sha256

    def counting(path):
        hashed.append(Path(path).name)
        return real(path)
    monkeypatch.setattr(artifacts, "file_sha256", counting)
    return hashed


def _warmed_in_the_past(root: Path) -> Path:
    """`_warmed`, its files last written 10 s before they were recorded (no same-tick question)."""
    base = _warmed(root)
    for rel in FILES:
        st = (base / rel).stat()
        os.utime(base / rel, ns=(st.st_atime_ns, st.st_mtime_ns - 10**10))
    artifacts = fingerprint(root, FILES)
    record(KEY, workload="digits", seconds=30.0, device="cpu", root=root, artifacts=artifacts,
           step_s_per_sample=0.02, compiled_step_s_per_sample=0.01)
    return base


def test_a_fit_start_hashes_no_file_unchanged_since_the_warmup(tmp_path, monkeypatch, capsys):
    """Before, every fit start (compile="auto", the default) hashed every recorded file."""
    _warmed_in_the_past(tmp_path)
    assert all("mtime_ns" in fp for fp in read_manifest(tmp_path)["entries"][KEY]["artifacts"].values())
    hashed = _count_hashes(monkeypatch)
    assert compile_decision(KEY, device_type="cuda", batches=10, batch_size=16, cache_root=tmp_path)[0]
    assert is_warm(KEY, tmp_path)
    assert hashed == []
    assert "  warm  " + KEY in _status(tmp_path, capsys)  # --status still hashes every file
    assert sorted(hashed) == sorted(Path(rel).name for rel in FILES)


@pytest.mark.parametrize("change", ["rewritten, same bytes", "rewritten, other bytes", "same tick as the manifest"])
def test_a_fit_start_hashes_a_file_whose_mtime_is_not_to_be_trusted(tmp_path, monkeypatch, change):
    base = _warmed_in_the_past(tmp_path)
    target = base / "fxgraph/ab/fabc/entry1"
    recorded = read_manifest(tmp_path)["entries"][KEY]["artifacts"]["fxgraph/ab/fabc/entry1"]["mtime_ns"]
    if change == "same tick as the manifest":  # changed after the recording, within one tick of the clock
        target.write_bytes(b"x" * 300)
        os.utime(target, ns=(recorded, recorded))
        os.utime(tmp_path / "manifest.json", ns=(recorded, recorded))
    else:
        target.write_bytes(FILES["fxgraph/ab/fabc/entry1"] if change == "rewritten, same bytes" else b"x" * 300)
        os.utime(target, ns=(recorded + 10**9, recorded + 10**9))
    hashed = _count_hashes(monkeypatch)
    warm = change == "rewritten, same bytes"
    assert is_warm(KEY, tmp_path) is warm
    assert compile_decision(KEY, device_type="cuda", batches=10, batch_size=16, cache_root=tmp_path)[0] is warm
    if change == "same tick as the manifest":  # the files recorded in the manifest's tick or later are all hashed
        assert hashed.count("entry1") == 2
    else:
        assert hashed == ["entry1", "entry1"]  # that file only, once per check


@pytest.mark.skipif(not hasattr(os, "fork"), reason="the concurrent warmup is a forked child")
def test_a_repair_keeps_what_a_concurrent_warmup_compiled_again_and_records(tmp_path, monkeypatch):
    """While one warmup repairs, another has just compiled the damaged graph again (Inductor writes
    the fresh file, no lock of ours) and records it. Before, the repair checked without the lock and
    deleted after it: it deleted the fresh file and dropped the fresh entry."""
    import time

    import hotstart.compile_cache.repair as repair_mod

    base = _warmed(tmp_path)
    rel = "ab/cabc.main.so"
    (base / rel).write_bytes(b"garbage")
    fresh = b"\x7fELF" + b"fresh" * 20
    real_problems, pids = repair_mod.problems, []

    def then_another_warmup_writes(root, artifacts, *a, **k):
        found = real_problems(root, artifacts, *a, **k)
        if not pids:
            r, w = os.pipe()
            pid = os.fork()
            if pid == 0:  # the other warmup: a fresh kernel, then its record (which takes the lock)
                try:
                    os.close(r)
                    (base / rel).write_bytes(fresh)
                    os.write(w, b"x")
                    record(KEY, workload="digits", seconds=31.0, device="cpu", root=tmp_path,
                           artifacts=fingerprint(tmp_path, [rel]))
                    os._exit(0)
                finally:
                    os._exit(1)
            os.close(w)
            assert os.read(r, 1) == b"x"
            pids.append(pid)
            time.sleep(0.5)  # time for its record, had the repair not held the lock
        return found
    monkeypatch.setattr(repair_mod, "problems", then_another_warmup_writes)
    repair_mod.repair(tmp_path)
    _, status = os.waitpid(pids[0], 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
    assert (base / rel).read_bytes() == fresh
    entry = read_manifest(tmp_path)["entries"][KEY]
    assert entry["seconds"] == 31.0 and is_warm(KEY, tmp_path)


def test_a_repair_deletes_a_damaged_file_and_drops_only_an_entry_that_still_records_it(tmp_path):
    from hotstart.compile_cache.manifest import drop

    base = _warmed(tmp_path)
    (base / "ab/cabc.main.so").write_bytes(b"garbage")
    entry = read_manifest(tmp_path)["entries"][KEY]
    assert drop([KEY], tmp_path, expected={KEY: {"other": {"size": 1, "sha256": "0" * 64}}}) == []
    assert KEY in read_manifest(tmp_path)["entries"]
    assert drop([KEY], tmp_path, expected={KEY: entry["artifacts"]}) == [KEY]
    assert KEY not in read_manifest(tmp_path)["entries"]
