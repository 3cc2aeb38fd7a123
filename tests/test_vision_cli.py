"""``python -m hotstart train --task segmentation|keypoints``: built-in data, folders, tables."""
import csv
import json

import numpy as np
import pytest
from PIL import Image as PILImage

from hotstart.cli import main


def test_segmentation_builtin_data_and_task():
    """Without PATH, --task segmentation trains on digits-segmentation (a full run is the folder test's
    path plus this data; the suite skips it for time)."""
    from hotstart.cli import build_parser
    from hotstart.cli.train import load_data, make_task

    args = build_parser().parse_args(["train", "--task", "segmentation"])
    data, blocks, name = load_data(args)
    task = make_task(args, blocks, builtin=True)
    assert name == "digits-segmentation" and len(data[0]) == 1797
    assert type(task).__name__ == "ImageSegmentation" and task.size == (32, 32) and task.augment == {"flip": 0.0}


@pytest.mark.parametrize("task,metrics", [("keypoints", ["mean_distance"])])
def test_train_task_on_builtin_data(task, metrics, tmp_path, capsys):
    out = tmp_path / "run"
    rc = main(["train", "--task", task, "--epochs", "1", "--size", "8", "8", "--out", str(out), "--no-progress"])
    assert rc == 0
    meta = json.loads((out / "model" / "task.json").read_text())
    assert meta["task"]["kind"] == {"segmentation": "ImageSegmentation", "keypoints": "ImageKeypointRegression"}[task]
    with open(out / "history.csv", newline="") as f:
        header = next(csv.reader(f))
    assert header == ["epoch", "train_loss", "valid_loss", *metrics, "time"]
    text = capsys.readouterr().out
    assert {"segmentation": "digits-segmentation", "keypoints": "discs"}[task] in text and "done:" in text

    import hotstart

    learner = hotstart.load_learner(out / "model")
    assert type(learner.task).__name__ == meta["task"]["kind"]


def test_train_segmentation_folder_and_keypoint_table(tmp_path, capsys):
    rng = np.random.default_rng(0)
    root = tmp_path / "seg"
    (root / "images").mkdir(parents=True)
    (root / "masks").mkdir()
    rows = []
    for i in range(12):
        img = rng.integers(0, 255, (10, 10), dtype=np.uint8)
        PILImage.fromarray(img).save(root / "images" / f"s{i}.png")
        PILImage.fromarray((img > 128).astype(np.uint8)).save(root / "masks" / f"s{i}.png")
        rows.append(f"images/s{i}.png,{i % 10},{(3 * i) % 10}")
    assert main(["train", str(root), "--task", "segmentation", "--classes", "dark,bright", "--epochs", "1",
                 "--size", "8", "8", "--batch-size", "4", "--out", str(tmp_path / "r1"), "--no-progress"]) == 0
    (root / "points.csv").write_text("file,x,y\n" + "\n".join(rows) + "\n")
    assert main(["train", str(root / "points.csv"), "--task", "keypoints", "--path-col", "file", "--point-cols", "x,y",
                 "--epochs", "1", "--size", "8", "8", "--batch-size", "4", "--out", str(tmp_path / "r2"),
                 "--no-progress"]) == 0
    rc = main(["train", str(root), "--task", "segmentation", "--out", str(tmp_path / "r3"), "--no-progress"])
    assert rc != 0 and "--classes" in capsys.readouterr().err
