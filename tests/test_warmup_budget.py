"""``warmup --budget``: a workload starts only if its expected time fits what is left (a compile cannot
be stopped midway), and one that the budget cuts says what it kept. No compile runs here."""
from __future__ import annotations

import time
from pathlib import Path

import torch

import hotstart.warmup as warmup
from hotstart import Image, ImageClassificationSingle, Label
from hotstart.compile_cache import record
from hotstart.warmup import Registry, Workload
from hotstart.warmup.budget import COLD_COMPILE_S, expected_seconds

HERE = Path(__file__).parent


def _tiny_task():
    return ImageClassificationSingle((Image(channels=1), Label(["a", "b"])), size=(16, 16))


def test_a_cold_compiled_workload_that_cannot_fit_is_skipped_before_it_starts(tmp_path, monkeypatch):
    """A budget of 8 s ran 29.5 s: the compile (the first batch) cannot be interrupted, and the deadline
    was only checked after it. Now the workload is not started, and the report says why."""
    monkeypatch.syspath_prepend(str(HERE.parent))
    t0 = time.perf_counter()
    report = warmup.run(only=["user_tiny_compiled"], budget=8.0, cache_dir=tmp_path,
                        modules=["tests.warmup_fixtures.userpkg_warm"], include_builtin=False, progress=False)
    took = time.perf_counter() - t0
    (result,) = report.results
    assert result.status == "skipped" and took < 8.0, (result, took)
    assert f"expected ~{COLD_COMPILE_S['cpu']:.0f} s" in result.error and "cold compile" in result.error
    assert "of the budget left" in result.error
    assert not (tmp_path / "inductor").exists() or not any((tmp_path / "inductor").rglob("*.so"))


def test_the_expected_time_is_the_last_intact_run_else_a_cold_compile(tmp_path):
    w = Workload("mine", _tiny_task, size=(16, 16), compile=True)
    assert expected_seconds(w, tmp_path)[0] == COLD_COMPILE_S["cpu"]
    assert expected_seconds(Workload("eager", _tiny_task, size=(16, 16), compile=False), tmp_path)[0] is None
    folder = tmp_path / "inductor" / "ab"
    folder.mkdir(parents=True)
    (folder / "c.so").write_bytes(b"kernel")
    from hotstart.compile_cache.artifacts import fingerprint

    key = "torch=x|cpu|SmallCNN|in1|16x16|32-true"
    record(key, workload="mine", seconds=4.2, device="cpu", root=tmp_path, artifacts=fingerprint(tmp_path, ["ab/c.so"]))
    assert expected_seconds(w, tmp_path) == (4.2, "its last run took 4 s")
    (folder / "c.so").write_bytes(b"garbage!")  # damaged: the next run compiles again
    assert expected_seconds(w, tmp_path)[0] == COLD_COMPILE_S["cpu"]
    if not torch.cuda.is_available():
        assert expected_seconds(Workload("gpu", _tiny_task, size=(16, 16), device="cuda"), tmp_path)[0] == COLD_COMPILE_S["cuda"]


def test_a_workload_the_budget_cuts_says_what_it_kept(tmp_path):
    """An eager workload starts (its batches are short) and is stopped at a batch when the budget runs out:
    reported as cut, with how far it got, not as skipped."""
    reg = Registry([Workload("long", _tiny_task, size=(16, 16), batch_size=4, steps=400, compile=False)])
    report = warmup.run(budget=1.0, cache_dir=tmp_path, registries=[reg], progress=False)
    (result,) = report.results
    assert result.status == "cut", result
    assert "cut by the budget after" in result.error and "of 400 training batches" in result.error
    assert "eager workload leaves nothing in the cache" in result.error
    assert report.ok
