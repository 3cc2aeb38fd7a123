"""Helpers for the tests of exported files in other runtimes (test_export_tflite.py, test_export_iree.py)."""
import json
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import torch


def export_with_cli(learner, root: Path, fmt: str, name: str) -> Path:
    """`hotstart export` of `learner` (saved to root/run/model first) to root/NAME; returns the path."""
    from hotstart.cli import main

    if not (root / "run" / "model").exists():
        learner.save(root / "run" / "model")
    out = root / name
    assert main(["export", str(root / "run"), "--format", fmt, "--out", str(out)]) == 0
    return out


def validation_set(learner) -> SimpleNamespace:
    """The learner's validation images and targets, their encoded batch (numpy) and torch's logits."""
    valid = learner.valid_loader.dataset
    images = [valid.inputs[i] for i in range(len(valid))]
    x = torch.stack([learner.task.encode_input(img) for img in images])
    with torch.no_grad():
        logits = learner.task_model().eval()(x).numpy()
    return SimpleNamespace(images=images, targets=[valid.targets[i] for i in range(len(valid))], x=x.numpy(),
                           logits=logits)


def predict_without_torch(model: Path, image: Path, *flags: str) -> dict:
    """`hotstart predict MODEL IMAGE --json [FLAGS]` in a fresh process, which must not import torch."""
    argv = ["predict", str(model), str(image), "--json", *flags]
    script = (f"import sys\nfrom hotstart.cli import main\nrc = main({argv!r})\n"
              "assert 'torch' not in sys.modules, 'predict imported torch'\nsys.exit(rc)\n")
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])
