"""``python -m hotstart train``: outputs on disk, clear errors, argument checks, the module entry point."""
import csv
import json
import os
import subprocess
import sys

import pytest

import prestart
from hotstart.cli import main


def make_tiny_folder(root):
    """Two classes of 8 tiny PNGs each (dark / light) in `root`: a CLI run on it takes well under a
    second an epoch."""
    import numpy as np
    from PIL import Image as PILImage

    rng = np.random.default_rng(0)
    for name, base in (("dark", 40), ("light", 200)):
        (root / name).mkdir(parents=True)
        for i in range(8):
            arr = np.clip(base + rng.integers(-30, 30, size=(8, 8, 3)), 0, 255).astype(np.uint8)
            PILImage.fromarray(arr).save(root / name / f"{i}.png")
    return root


@pytest.fixture
def tiny_folder(tmp_path):
    return make_tiny_folder(tmp_path / "images")


TINY = ["--size", "8", "8", "--batch-size", "4"]
PIPE_ENV = {"MPLBACKEND": "Agg", "OMP_NUM_THREADS": "1"}


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


@prestart.job("cli:train-to-a-pipe")
def _train_to_a_pipe(folder):
    """`python -m hotstart train` on a tiny folder, stdout and stderr pipes, in the background
    from the start (tests/prestart.py): the run writes into `folder`/run."""
    images = make_tiny_folder(folder / "images")
    return prestart.Job([sys.executable, "-m", "hotstart", "train", images, "--epochs", "2", *TINY,
                         "--out", folder / "run"], env=PIPE_ENV, timeout=300)


@prestart.job("cli:train-a-missing-path")
def _train_a_missing_path(folder):
    return prestart.Job([sys.executable, "-m", "hotstart", "train", folder / "nope", "--out", folder / "run"],
                        env=PIPE_ENV, timeout=300)


@pytest.mark.prestart("cli:train-to-a-pipe", "cli:train-a-missing-path")
def test_module_entry_point_to_a_pipe_prints_the_table_and_no_bars():
    proc = prestart.result("cli:train-to-a-pipe")
    out = proc.folder / "run"
    assert proc.returncode == 0, proc.stderr
    assert (out / "model" / "weights.safetensors").is_file() and (out / "history.csv").is_file()
    # stdout and stderr are pipes, not terminals: no progress bars (\r updates), the epoch table in full
    assert "\r" not in proc.stdout and "\r" not in proc.stderr and "it/s" not in proc.stderr
    table = _table_rows(proc.stdout)
    assert [row[0] for row in table] == ["epoch", "0", "1"]
    assert table[0] == ["epoch", "train_loss", "valid_loss", "accuracy", "time"]
    # 2 epochs of 3 batches: the end-of-fit hint says so, in this command's options
    assert "hint: this fit made only 6 optimizer step(s) in 2 epoch(s)" in proc.stderr or float(table[-1][3]) >= 0.9
    if "hint:" in proc.stderr:
        assert "more --epochs (now 2), a smaller --batch-size (now 4)" in proc.stderr

    proc = prestart.result("cli:train-a-missing-path")
    assert proc.returncode == 1 and "nope" in proc.stderr and not (proc.folder / "run").exists()


def _table_rows(text: str) -> list[list[str]]:
    """The epoch table's lines (header and rows) in the CLI's output, split into cells."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.split()[:1] == ["epoch"])
    rows = [lines[start].split()]
    for line in lines[start + 1:]:
        if not line.split() or not line.split()[0].isdigit():
            break
        rows.append(line.split())
    return rows


def test_quiet_prints_neither_bars_nor_table_and_no_progress_keeps_the_table(tmp_path, tiny_folder, capsys):
    argv = ["train", str(tiny_folder), "--epochs", "1", *TINY, "--out", str(tmp_path / "run")]
    assert main([*argv, "--quiet"]) == 0
    captured = capsys.readouterr()
    assert "epoch" not in captured.out and "\r" not in captured.err and "ImageClassificationSingle" not in captured.out
    assert captured.out.startswith("done: ") and "accuracy" in captured.out  # only the final summary

    assert main([*argv, "--no-progress", "--overwrite"]) == 0
    captured = capsys.readouterr()
    assert [row[0] for row in _table_rows(captured.out)] == ["epoch", "0"]
    assert "\r" not in captured.err and "it/s" not in captured.err


def test_progress_bars_only_on_a_terminal(monkeypatch):
    """Default (bars=None): bars on a terminal or in a Jupyter kernel, not on files or pipes."""
    import io

    from hotstart.learner.callbacks.progress import Progress

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    import types

    monkeypatch.delitem(sys.modules, "IPython", raising=False)
    monkeypatch.setitem(sys.modules, "ipykernel", sys)  # imported (as notebook clients do) is not running in one
    assert Progress(file=Terminal())._show_bars() is True
    assert Progress(file=io.StringIO())._show_bars() is False
    assert Progress(bars=True, file=io.StringIO())._show_bars() is True
    assert Progress(bars=False, file=Terminal())._show_bars() is False
    shell = types.SimpleNamespace(kernel=object())  # IPython's shell inside a Jupyter kernel
    monkeypatch.setitem(sys.modules, "IPython", types.SimpleNamespace(get_ipython=lambda: shell))
    assert Progress(file=io.StringIO())._show_bars() is True
    shell.kernel = None  # a terminal IPython: no kernel
    assert Progress(file=io.StringIO())._show_bars() is False


@pytest.mark.parametrize("flag, expected", [([], "auto"), (["--compile", "auto"], "auto"),
                                            (["--compile", "on"], True), (["--compile", "off"], False)])
def test_compile_option_reaches_tasklearner(flag, expected, monkeypatch):
    import hotstart.learner

    from hotstart.cli import build_parser
    from hotstart.cli.train import build_learner

    seen = {}
    real = hotstart.learner.tasklearner

    def spy(*args, **kwargs):
        seen["compile"] = kwargs["compile"]
        return real(*args, **{**kwargs, "compile": False})  # the policy is tested below, compiling is slow

    monkeypatch.setattr(hotstart.learner, "tasklearner", spy)
    args = build_parser().parse_args(["train", "--size", "8", "8", "--quiet", *flag])
    build_learner(args)
    assert seen["compile"] == expected


def test_compile_auto_stays_eager_on_cpu(tmp_path, monkeypatch):
    """`--compile auto` is the library's policy: on CPU it never compiles, warm cache or not."""
    from hotstart.cli import build_parser
    from hotstart.cli.train import build_learner

    monkeypatch.setenv("HOTSTART_CACHE_DIR", str(tmp_path / "cache"))
    learner = build_learner(build_parser().parse_args(["train", "--size", "8", "8", "--quiet", "--compile", "auto"]))
    assert learner.device.type == "cpu"
    assert learner.task_model().compiled_with is None
    with pytest.raises(SystemExit):
        build_parser().parse_args(["train", "--compile", "maybe"])


def test_console_script_help_names_hotstart(monkeypatch, capsys):
    script = os.path.join(os.path.dirname(sys.executable), "hotstart")
    if os.path.isfile(script):  # the installed console script (pip install -e .)
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
        proc = subprocess.run([script, "--help"], capture_output=True, text=True, timeout=120, env=env)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.startswith("usage: hotstart ") and "python -m" not in proc.stdout
    monkeypatch.setattr(sys, "argv", ["/some/venv/bin/hotstart", "--help"])
    with pytest.raises(SystemExit):
        main()
    assert capsys.readouterr().out.startswith("usage: hotstart ")
    monkeypatch.setattr(sys, "argv", ["/repo/hotstart/__main__.py", "--help"])
    with pytest.raises(SystemExit):
        main()
    assert capsys.readouterr().out.startswith("usage: python -m hotstart ")


def test_train_help_says_what_it_trains_and_lists_every_flag_it_takes(capsys):
    """`train` trains images, tables, series, masks and points (issue 32: its help said "an image
    classifier"), and takes --no-server (which the launcher strips before parsing) like any flag."""
    with pytest.raises(SystemExit):
        main(["--help"])
    line = next(line for line in capsys.readouterr().out.splitlines() if line.strip().startswith("train "))
    assert "image classifier" not in line and all(w in line for w in ("images", "tables", "series", "masks"))
    with pytest.raises(SystemExit):
        main(["train", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    for words in ("--no-server run in this process", "--task tabular takes a CSV table",
                  "--task timeseries a .ts file", "--continuous COL,COL", "--categorical COL,COL"):
        assert words in text, words


def test_misspelled_backbone_fails_before_the_data_with_suggestions(tmp_path, capsys):
    rc = main(["train", "--backbone", "resnt18", "--out", str(tmp_path / "run")])
    captured = capsys.readouterr()
    assert rc == 1 and "resnt18" in captured.err and "resnet18" in captured.err
    assert "data:" not in captured.out  # nothing was loaded or described
    assert not (tmp_path / "run").exists()


def test_pretrained_needs_a_timm_backbone(tmp_path, capsys):
    assert main(["train", "--pretrained", "--out", str(tmp_path / "run")]) == 1
    assert "pretrained" in capsys.readouterr().err


def test_pretrained_without_network_or_cache_fails_fast(tmp_path, monkeypatch, capsys):
    import time

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf"))
    monkeypatch.setenv("TORCH_HOME", str(tmp_path / "torch"))
    start = time.perf_counter()
    rc = main(["train", "--backbone", "resnet10t", "--pretrained", "--out", str(tmp_path / "run")])
    err = capsys.readouterr().err
    assert rc == 1 and time.perf_counter() - start < 10
    assert "network" in err and "cache" in err and "leave out --pretrained" in err
    assert not (tmp_path / "run").exists()


def _train_until_first_epoch(tmp_path, folder, *extra):
    """Start ``python -m hotstart train`` on `folder` for many epochs; return (process, out folder,
    the stdout lines so far) once the first epoch's row is printed (one whole epoch is finished)."""
    out = tmp_path / "run"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}  # the CLI must flush its rows itself
    env.update(MPLBACKEND="Agg", OMP_NUM_THREADS="1")
    proc = subprocess.Popen([sys.executable, "-m", "hotstart", "train", str(folder), "--epochs", "100000",
                             *TINY, "--out", str(out), *extra], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env, cwd=tmp_path)
    lines = []
    for line in proc.stdout:
        lines.append(line)
        if line.split()[:1] == ["0"]:
            return proc, out, lines
    proc.kill()
    raise AssertionError("the run ended before its first epoch: " + proc.communicate()[1][-2000:])


def _finish(proc, timeout=120):
    import threading

    timer = threading.Timer(timeout + 10, proc.kill)  # never hang the suite
    timer.start()
    try:
        return proc.communicate(timeout=timeout)
    finally:
        timer.cancel()


def _assert_finished_epochs_written(out, classes=("dark", "light")):
    with open(out / "history.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) >= 1 and rows[0]["epoch"] == "0"
    assert (out / "loss.png").read_bytes()[:4] == b"\x89PNG"
    import hotstart

    learner = hotstart.load_learner(out / "model")
    assert learner.task.classes == list(classes)
    return rows


@pytest.mark.parametrize("sig, status", [("SIGINT", 130), ("SIGTERM", 143)])
def test_a_signal_writes_the_finished_epochs_and_exits_128_plus_its_number(tmp_path, tiny_folder, sig, status):
    """Ctrl-C, and SIGTERM as ``timeout``, docker and SLURM send it: the model as of the last whole
    epoch, its history and plot; the checkpoint folder holds a checkpoint to resume from; "interrupted"
    is said once. (SLURM's SIGUSR1 takes the same handler: cli/stop_signals.py, test_stop_signals.)"""
    import signal

    ckpt = tmp_path / "ckpt"
    proc, out, _ = _train_until_first_epoch(tmp_path, tiny_folder, "--checkpoint-dir", str(ckpt))
    proc.send_signal(getattr(signal, sig))
    _, err = _finish(proc)
    assert proc.returncode == status, err
    assert err.count("interrupted") == 1, err
    assert sig in err and f"--resume {ckpt}" in err
    rows = _assert_finished_epochs_written(out)
    from hotstart.learner.checkpoint import checkpoints

    assert checkpoints(ckpt), "no checkpoint to resume from"
    assert (out / "model" / "weights.safetensors").is_file() and len(rows) >= 1


def test_a_damaged_image_in_a_later_epoch_writes_the_finished_epochs_first(tmp_path, tiny_folder):
    """Images are read again every epoch: one damaged after the first epoch stops the run with a
    one-line error naming it, after the finished epoch's model is written."""
    proc, out, _ = _train_until_first_epoch(tmp_path, tiny_folder)
    for path in sorted(tiny_folder.rglob("*.png")):
        path.write_bytes(b"not a png any more")
    _, err = _finish(proc)
    assert proc.returncode == 1, err
    assert "Traceback" not in err
    errors = [line for line in err.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1 and ".png" in errors[0], err
    assert "stopped by an error: wrote the" in err
    _assert_finished_epochs_written(out)


@pytest.mark.skipif(not hasattr(__import__("signal"), "SIGUSR1"), reason="SIGUSR1 is POSIX only")
def test_stop_signals():
    """SLURM's SIGUSR1 (and TERM, INT) is recorded and raised at the batch's end as `Stopped`
    (exit 128 + its number); a second signal raises at once; the handlers are put back."""
    import signal

    from hotstart.cli.stop_signals import Stopped, exit_status, stop_on_signals

    before = signal.getsignal(signal.SIGUSR1)
    with stop_on_signals() as stop:
        os.kill(os.getpid(), signal.SIGUSR1)
        assert stop.signum == signal.SIGUSR1
        with pytest.raises(Stopped) as info:
            stop.check()
        assert exit_status(info.value) == 128 + signal.SIGUSR1 and isinstance(info.value, KeyboardInterrupt)
        with pytest.raises(Stopped):
            os.kill(os.getpid(), signal.SIGTERM)  # the second: at once
    assert signal.getsignal(signal.SIGUSR1) is before
