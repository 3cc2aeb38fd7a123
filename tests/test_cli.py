"""``python -m hotstart train``: outputs on disk, clear errors, argument checks, the module entry point."""
import csv
import json
import os
import subprocess
import sys

import pytest

from hotstart.cli import main


def test_train_digits_writes_model_history_and_plot(tmp_path, capsys):
    out = tmp_path / "run"
    rc = main(["train", "--epochs", "1", "--size", "16", "16", "--out", str(out), "--no-progress"])
    assert rc == 0
    assert sorted(p.name for p in (out / "model").iterdir()) == ["task.json", "weights.safetensors"]
    assert json.loads((out / "model" / "task.json").read_text())["task"]["size"] == [16, 16]

    with open(out / "history.csv", newline="") as f:
        rows = list(csv.reader(f))
    assert rows[0] == ["epoch", "train_loss", "valid_loss", "accuracy", "time"]
    assert len(rows) == 2 and rows[1][0] == "0"
    assert (out / "loss.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert not list(out.rglob("*.tmp"))

    text = capsys.readouterr().out
    assert "digits" in text and "accuracy" in text and "done:" in text

    import hotstart

    learner = hotstart.load_learner(out / "model")
    assert learner.task.classes == list(range(10))


def test_missing_path_is_reported(tmp_path, capsys):
    missing = tmp_path / "no_such_folder"
    rc = main(["train", str(missing), "--epochs", "1", "--out", str(tmp_path / "run"), "--no-progress"])
    assert rc != 0
    assert str(missing) in capsys.readouterr().err
    assert not (tmp_path / "run").exists()


def test_wrong_kind_of_path_is_reported(tmp_path, capsys):
    f = tmp_path / "notes.txt"
    f.write_text("hello")
    assert main(["train", str(f), "--out", str(tmp_path / "run"), "--no-progress"]) != 0
    assert str(f) in capsys.readouterr().err


@pytest.mark.parametrize("argv", [
    ["train", "--epochs", "0"],
    ["train", "--epochs", "two"],
    ["train", "--size", "16"],
    ["train", "--size", "16", "-3"],
    ["train", "--batch-size", "0"],
    ["train", "--no-such-option"],
    [],
])
def test_bad_arguments_exit_nonzero(argv, capsys):
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code not in (0, None)
    assert "usage" in capsys.readouterr().err


def test_module_entry_point(tmp_path):
    out = tmp_path / "run"
    env = {**os.environ, "MPLBACKEND": "Agg", "OMP_NUM_THREADS": "1"}
    proc = subprocess.run([sys.executable, "-m", "hotstart", "train", "--epochs", "1", "--size", "8", "8",
                           "--out", str(out), "--no-progress"],
                          capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert (out / "model" / "weights.safetensors").is_file() and (out / "history.csv").is_file()

    proc = subprocess.run([sys.executable, "-m", "hotstart", "train", str(tmp_path / "nope"), "--out", str(out)],
                          capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path)
    assert proc.returncode == 1 and "nope" in proc.stderr
