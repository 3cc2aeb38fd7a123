"""The warmup: side-effect free (audited in a subprocess), registrable, budgeted, recorded."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import hotstart.warmup as warmup
import prestart
from hotstart.warmup import Registry, Workload
from hotstart.compile_cache.manifest import config_key, read_manifest, record

HERE = Path(__file__).parent
FIXTURES = "tests.warmup_fixtures.userpkg_warm"


def _env():
    env = dict(os.environ)
    env["PYTHONPATH"] = str(HERE.parent) + os.pathsep + env.get("PYTHONPATH", "")
    # Inductor generates CPU kernels for the thread count, and it is part of their cache key: the
    # warmup and the later compiled fit (which pins one thread to stay fast) must use the same one,
    # as they do for a user whose runs share one machine.
    env["OMP_NUM_THREADS"] = "1"
    return env


@pytest.fixture
def user_module(monkeypatch):
    monkeypatch.syspath_prepend(str(HERE.parent))
    return FIXTURES


@prestart.job("warmup:compiled")
def _audited_compiled_warmup(folder):
    """One real compiled warmup (the user's tiny compiled workload, batch 4) in a subprocess under
    an audit hook, on a fresh cache (in the job's own folder, its cwd). A prestart job
    (tests/prestart.py): it compiles for a minute or more, in the background from the start."""
    return prestart.Job([sys.executable, HERE / "warmup_fixtures" / "audited_run.py", folder / "cache",
                         "user_tiny_compiled", FIXTURES], env=_env(), timeout=900)


@pytest.fixture(scope="module")
def warm_cache():
    """The compiled warmup's (cache folder, the run's JSON verdict)."""
    out = prestart.result("warmup:compiled")
    assert out.returncode == 0, out.stderr[-3000:]
    assert "No CUDA runtime" not in out.stderr  # torch's notice is not part of the warmup's output
    return out.folder / "cache", json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.prestart("warmup:compiled")
def test_real_compiled_warmup_is_side_effect_free(warm_cache):
    """A compiled workload, run in-process under an audit hook: RNGs, flags and os.environ are
    unchanged, nothing is written outside the cache and temp folders, no data file is read,
    no socket is opened, and the manifest records the now-warm configuration."""
    cache, verdict = warm_cache
    assert [r["status"] for r in verdict["results"]] == ["ok"], verdict["results"]
    assert verdict["torch_rng_same"] and verdict["numpy_rng_same"] and verdict["random_rng_same"]
    assert verdict["flags_same"]
    assert verdict["env_diff"] == []
    assert verdict["side_effects_put_back"] == []
    assert verdict["writes_outside"] == []
    assert verdict["data_reads"] == []
    assert verdict["sockets"] == []
    assert 0 < verdict["peak_rss_mb"] < 3072
    key = verdict["results"][0]["key"]
    assert key and key in read_manifest(cache)["entries"]
    # the eager and the warm compiled step's times, per sample, for compile="auto" (compile_cache/policy.py)
    entry = read_manifest(cache)["entries"][key]
    assert 0 < entry["step_s_per_sample"] < 60 and 0 < entry["compiled_step_s_per_sample"] < 60, entry
    assert any((cache / "inductor").iterdir()), "the compile cache folder should be filled"
    # the files it wrote are recorded with their sizes and checksums, and check out (compile_cache/artifacts.py)
    kinds = {rel.split("/")[0] for rel in entry["artifacts"]}
    assert {"fxgraph", "aotautograd"} <= kinds and any(rel.endswith(".so") for rel in entry["artifacts"]), entry
    assert [e["state"] for e in warmup.status(cache) if e["key"] == key] == ["warm"]


@pytest.mark.prestart("warmup:compiled")
def test_the_warmed_graphs_serve_a_batch_size_the_warmup_never_used(warm_cache):
    """The warmup trained at batch 4 and validated at 4 and 2. A compiled fit in a new process at
    batch 6 (validation 6 and 3), other classes, finds every graph in the cache: no AOTAutograd
    and no FX-graph cache miss, so nothing is compiled again."""
    cache, _ = warm_cache
    out = subprocess.run([sys.executable, str(HERE / "warmup_fixtures" / "compiled_fit.py"), str(cache), "6", "12", "9"],
                         capture_output=True, text=True, env=_env(), timeout=900, cwd=cache.parent)
    assert out.returncode == 0, out.stderr[-3000:]
    counters = json.loads(out.stdout.strip().splitlines()[-1])
    aot, inductor = counters["aot_autograd"], counters["inductor"]
    assert aot.get("autograd_cache_miss", 0) == 0 and aot.get("autograd_cache_guard_miss", 0) == 0, counters
    assert inductor.get("fxgraph_cache_miss", 0) == 0, counters
    assert aot.get("autograd_cache_hit", 0) >= 2, counters  # the training graph and the inference graph
    assert np.isfinite(counters["valid_loss"])


@pytest.mark.prestart("warmup:compiled")
def test_compile_auto_keeps_a_short_fit_eager_and_compiles_a_long_warm_one(warm_cache, tmp_path):
    """After the warmup, ``compile="auto"`` (the default) in a new process: a 1-epoch fit stays
    eager, saying why; the next fit, 3 epochs, compiles, and every graph comes from the warm cache
    (no AOTAutograd or FX-graph miss). The step time is set in a copy of the manifest
    (auto_compiled_fit.py), so the decision is the same on any machine."""
    import shutil

    cache, _ = warm_cache
    copy = tmp_path / "cache"
    shutil.copytree(cache, copy)
    out = subprocess.run([sys.executable, str(HERE / "warmup_fixtures" / "auto_compiled_fit.py"), str(copy)],
                         capture_output=True, text=True, env=_env(), timeout=900, cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-3000:]
    result = json.loads(out.stdout.strip().splitlines()[-1])
    (first, first_why), (second, second_why) = result["said"]
    assert first == "eager" and "1.25x eager's speed here, but 2 steps would save ~2.4 s, less than the ~3 s" in first_why
    assert second == "compiled" and "1.25x eager's speed here; 6 steps save ~7 s, more than the ~3 s" in second_why
    assert result["compiled"]
    aot, inductor = result["aot_autograd"], result["inductor"]
    assert aot.get("autograd_cache_miss", 0) == 0 and inductor.get("fxgraph_cache_miss", 0) == 0, result
    assert aot.get("autograd_cache_hit", 0) >= 2, result
    assert np.isfinite(result["valid_loss"])


def test_the_eager_twin_times_the_fastest_step_after_the_first_and_stops_before_validating(make_learner):
    """warmup/step_times.py: the eager twin runs `EAGER_SKIP + EAGER_TIMED` training batches and no
    validation, and its time is the fastest batch after the untimed first; a compiled workload
    runs enough batches to time `COMPILED_TIMED` after the `COMPILED_SKIP` slow ones."""
    from hotstart.warmup import step_times

    built = []

    def build(callbacks):
        built.append(make_learner(precision="32-true", callbacks=callbacks))  # 5 batches of 32 an epoch
        return built[-1]

    step = step_times.eager_step_s(build)
    learner = built[0]
    clock = next(cb for cb in learner.cbs if hasattr(cb, "warm_step_s"))
    assert len(clock.times) == step_times.EAGER_SKIP + step_times.EAGER_TIMED == 3
    assert step == min(clock.times[1:]) > 0
    assert len(learner.history) == 0  # cancelled before the epoch's validation
    assert step_times.compiled_steps(2) == step_times.COMPILED_SKIP + step_times.COMPILED_TIMED == 4
    assert step_times.compiled_steps(10) == 10


def test_user_workloads_run_and_failures_are_reported(tmp_path, user_module):
    report = warmup.run(only=["user_tiny", "user_broken"], cache_dir=tmp_path, modules=[user_module],
                        include_builtin=False, progress=False)
    by_name = {r.name: r for r in report.results}
    assert by_name["user_tiny"].status == "ok"
    assert by_name["user_broken"].status == "failed"
    assert "broken on purpose" in by_name["user_broken"].error
    assert not report.ok
    assert "user_broken" in report.table()
    assert report.side_effects == []


def test_registry_is_explicit_and_resettable():
    reg = Registry()

    @reg.workload(size=(8, 8))
    def mine():
        return None

    assert "mine" in reg and len(reg) == 1
    with pytest.raises(ValueError, match="already registered"):
        reg.add(Workload("mine", mine))
    reg.clear()
    assert len(reg) == 0
    names = [w.name for w in warmup.builtin_workloads(cuda=False)]
    assert "single-resnet18-128-cpu" in names and "multi-smallcnn-128-cpu" in names
    assert not any("cuda" in n for n in names)
    assert any("cuda" in w.name for w in warmup.builtin_workloads(cuda=True))


def test_budget_stops_the_run_cleanly(tmp_path, user_module):
    report = warmup.run(only=["user_tiny*"], budget=0.0, cache_dir=tmp_path, modules=[user_module],
                        include_builtin=False, progress=False)
    assert [r.status for r in report.results] == ["skipped", "skipped"]
    assert all("budget" in r.error for r in report.results)
    assert read_manifest(tmp_path)["entries"] == {}


def test_unknown_only_pattern_is_a_clear_error(tmp_path):
    with pytest.raises(ValueError, match="matches no workload"):
        warmup.run(only=["no-such-workload"], cache_dir=tmp_path, progress=False)


def test_manifest_is_written_atomically_and_survives_damage(tmp_path):
    key = config_key("resnet18", 3, (128, 128), "cpu", None)
    record(key, workload="w", seconds=1.5, device="cpu", root=tmp_path)
    data = json.loads((tmp_path / "manifest.json").read_text())
    assert data["entries"][key]["workload"] == "w"
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
    (tmp_path / "manifest.json").write_text("{not json")
    assert read_manifest(tmp_path)["entries"] == {}


def test_config_key_ignores_classes_and_batch_but_not_backbone_or_size():
    a = config_key("resnet18", 3, (128, 128), "cpu", None)
    assert a == config_key("resnet18", 3, [128, 128], "cpu", "32-true")
    assert a != config_key("resnet18", 3, (64, 64), "cpu", None)
    assert a != config_key(None, 3, (128, 128), "cpu", None)
    assert a != config_key("resnet18", 1, (128, 128), "cpu", None)
    assert config_key(object(), 3, (128, 128), "cpu", None) is None


def test_cli_list_dry_run_status_and_clear(tmp_path, capsys):
    """`python -m hotstart.warmup` as a process once (--list), then the same `main` in this process
    for the other options: their output and exit codes."""
    from hotstart.warmup.__main__ import main

    def cli(*args):
        rc = main(["--cache-dir", str(tmp_path), *args])
        captured = capsys.readouterr()
        return subprocess.CompletedProcess(args, rc, captured.out, captured.err)

    out = subprocess.run([sys.executable, "-m", "hotstart.warmup", "--cache-dir", str(tmp_path), "--list"],
                         capture_output=True, text=True, env=_env(), timeout=300)
    assert out.returncode == 0 and "single-resnet18-128-cpu" in out.stdout
    out = cli("--dry-run", "--only", "digits*")
    assert out.returncode == 0 and "would run" in out.stdout and "digits-smallcnn-32-cpu" in out.stdout
    out = cli("--dry-run", "--only", "digits*,tabular-mlp-cpu")  # commas separate names too
    assert out.returncode == 0 and "digits-smallcnn-32-cpu" in out.stdout and "tabular-mlp-cpu" in out.stdout
    assert "single-smallcnn-128-cpu" not in out.stdout
    assert not (tmp_path / "manifest.json").exists()
    out = cli("--status")
    assert out.returncode == 0 and "nothing is warm" in out.stdout
    record(config_key(None, 1, (32, 32), "cpu", None), workload="digits-smallcnn-32-cpu", seconds=2.0,
           device="cpu", root=tmp_path)
    out = cli("--status")
    assert "SmallCNN|in1|32x32" in out.stdout
    out = cli("--only", "nothing-matches")
    assert out.returncode == 2 and "matches no workload" in out.stderr
    out = cli("--dry-run", "--only", "digits*,nosuch")  # one pattern matching nothing is not dropped silently
    assert out.returncode == 2 and "['nosuch'] matches no workload" in out.stderr
    out = cli("--dry-run", "--only", "")  # would have selected every workload
    assert out.returncode == 2 and "--only needs workload names" in out.stderr
    out = cli("--clear", "--only", "digits-smalcnn-32-cpu")  # a typo: refused before anything is deleted
    assert out.returncode == 2 and "matches no workload" in out.stderr and (tmp_path / "manifest.json").exists()
    out = cli("--clear")
    assert out.returncode == 0 and not (tmp_path / "manifest.json").exists()


def test_cli_strict_exit_code(tmp_path, user_module, capsys):
    """A failed workload: exit 0 (a warmup never breaks an install) unless --strict, then the
    process exits 1 (as a process: the exit status a CI script sees)."""
    from hotstart.warmup.__main__ import main

    args = ["--cache-dir", str(tmp_path), "--no-builtin", "--module", FIXTURES, "--only", "user_broken",
            "--no-progress"]
    assert main(args) == 0 and "failed" in capsys.readouterr().out
    strict = subprocess.run([sys.executable, "-m", "hotstart.warmup", *args, "--strict"], capture_output=True,
                            text=True, env=_env(), timeout=300)
    assert strict.returncode == 1 and "failed" in strict.stdout


def test_a_budget_that_is_not_positive_is_refused(tmp_path, capsys):
    """``--budget -1`` skipped every workload and exited 0, as if the warmup were done."""
    from hotstart.warmup.__main__ import main

    for budget in ("-1", "0"):
        with pytest.raises(SystemExit) as info:
            main(["--budget", budget, "--cache-dir", str(tmp_path)])
        assert info.value.code == 2
        assert f"--budget must be a positive number of seconds, got {float(budget):g}" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []
