"""The command line rejects a mistake before importing torch (cli/preflight.py), and never
replaces an earlier run silently."""
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hotstart.cli import main

HERE = Path(__file__).parent

# each: argv, what the one-line error must say. Run in ONE fresh interpreter, which must never import torch.
SCRIPT = """
import json, sys, time
from hotstart.cli import main
results = []
for argv in json.loads(sys.argv[1]):
    t0 = time.perf_counter()
    try:
        rc = main(argv)
    except SystemExit as e:
        rc = e.code
    results.append([rc, time.perf_counter() - t0, "torch" in sys.modules])
print("RESULT " + json.dumps(results))
"""


def _mistakes(tmp):
    table = tmp / "table.csv"
    table.write_text("file,label,price\na.png,cat,1.0\n")
    run = tmp / "run"
    (run / "model").mkdir(parents=True)
    (run / "history.csv").write_text("epoch\n0\n")
    photos = tmp / "photos"
    photos.mkdir()
    (photos / "loose.png").write_bytes(b"")
    (tmp / "old-ckpt" / "ckpt-000-000000005-1").mkdir(parents=True)  # an earlier run's checkpoint
    return [
        (["train", str(tmp / "no" / "such" / "folder")], "no such file or folder"),
        (["train", str(table), "--path-col", "file", "--label-col", "lable"], "--label-col 'lable': "),
        (["train", str(table), "--path-col", "flie"], "did you mean 'file'?"),
        (["train", str(table), "--target", "prize"], "--target 'prize'"),
        (["train", str(photos)], "expected a folder of class folders"),
        (["train", "--task", "segmentation", str(photos)], "images: no such folder"),
        (["train", "--out", str(run)], "already holds an earlier run (model, history.csv)"),
        (["train", "--resume", str(tmp / "ckpt-typo")], f"--resume {tmp / 'ckpt-typo'}: no such folder"),
        (["train", "--resume", str(table)], f"--resume {table} is a file, not a folder"),
        (["train", "--out", str(table)], f"--out {table} is a file, not a folder"),
        (["train", "--out", str(table / "sub")], f"--out {table / 'sub'} lies below {table}, which is a file"),
        (["train", "--checkpoint-dir", str(table / "ckpt")], "--checkpoint-dir"),
        (["train", "--checkpoint-dir", str(tmp / "old-ckpt")], "holds checkpoints of an earlier run: add --resume"),
        (["train", str(table), "--target", "price", "--continuous", "prize"], "--continuous 'prize': "),
        (["predict", str(photos), str(photos / "loose.png")], "not a model folder"),
        (["predict", str(tmp / "missing.onnx"), "x.png"], "no such file or folder"),
        (["export", str(photos), "--out", str(tmp / "m.onnx")], "not a model folder"),
    ]


def test_mistakes_fail_before_torch_is_imported(tmp_path):
    cases = _mistakes(tmp_path)
    proc = subprocess.run([sys.executable, "-c", SCRIPT, json.dumps([argv for argv, _ in cases])],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path)
    results = json.loads(proc.stdout.split("RESULT ", 1)[1])
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == len(cases), proc.stderr
    for (argv, says), (rc, seconds, torch_imported), error in zip(cases, results, errors):
        assert rc == 1 and says in error, (argv, error)
        assert not torch_imported, f"{argv} imported torch before its error"


def test_an_earlier_run_is_never_replaced_silently(tmp_path, capsys):
    out = tmp_path / "run"
    (out / "model").mkdir(parents=True)
    (out / "model" / "weights.safetensors").write_bytes(b"the earlier run's weights")
    import numpy as np
    from PIL import Image

    for i, name in enumerate(["dark", "light"] * 4):
        (tmp_path / "images" / name).mkdir(parents=True, exist_ok=True)
        Image.fromarray(np.full((8, 8, 3), 40 + 160 * (name == "light"), np.uint8)).save(tmp_path / "images" / name / f"{i}.png")
    argv = ["train", str(tmp_path / "images"), "--epochs", "1", "--size", "8", "8", "--batch-size", "4",
            "--out", str(out), "--quiet"]
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert f"--out {out} already holds an earlier run (model)" in err and f"--out {out}-2" in err
    assert "--overwrite" in err
    (tmp_path / "no-checkpoints").mkdir()  # a --resume folder with nothing to continue: a fresh run, refused too
    assert main(argv + ["--resume", str(tmp_path / "no-checkpoints")]) == 1
    assert f"--out {out} already holds an earlier run" in capsys.readouterr().err
    assert (out / "model" / "weights.safetensors").read_bytes() == b"the earlier run's weights"
    assert main(argv + ["--overwrite"]) == 0
    assert (out / "model" / "weights.safetensors").read_bytes()[:8] != b"the earl"
    assert (out / "history.csv").is_file()
