"""Every user mistake at the command line is one line on stderr and exit status 1, no traceback.

The mistakes below reach hotstart's code past argparse (a value argparse accepts, a folder or
table that is wrong); each raised a plain ValueError before, which the CLI printed as a traceback.
"""
import numpy as np

from hotstart.cli import main


def _folder(root, classes):
    from PIL import Image as PILImage

    for name in classes:
        (root / name).mkdir(parents=True)
        for i in range(4):
            PILImage.fromarray(np.full((8, 8, 3), 40 * i, np.uint8)).save(root / name / f"{i}.png")
    return root


def _one_line(capsys, rc, *words):
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 1 and len(err) == 1 and err[0].startswith("error: "), err
    assert all(w in err[0] for w in words), err[0]


def test_a_valid_pct_outside_0_1(tmp_path, capsys):
    rc = main(["train", "--valid-pct", "1.5", "--epochs", "1", "--size", "8", "8", "--out", str(tmp_path / "r"),
               "--quiet"])
    _one_line(capsys, rc, "valid_pct", "1.5")


def test_a_folder_with_one_class(tmp_path, capsys):
    root = _folder(tmp_path / "images", ["cats"])
    rc = main(["train", str(root), "--epochs", "1", "--size", "8", "8", "--out", str(tmp_path / "r"), "--quiet"])
    _one_line(capsys, rc, "2 classes", "cats")


def test_a_table_with_valid_pct_0(tmp_path, capsys):
    rc = main(["train", "--task", "tabular", "--target", "species", "--valid-pct", "0", "--epochs", "1",
               "--out", str(tmp_path / "r"), "--quiet"])
    _one_line(capsys, rc, "valid_pct", "0.0")


def test_export_options_that_do_not_go_together(tmp_path, capsys, make_learner):
    """Caught by hotstart/export/ once the model is loaded (plain ValueErrors, a traceback, before)."""
    model = make_learner().save(tmp_path / "model")
    cases = [(["--format", "pt2", "--quantize", "int8", "--out", str(tmp_path / "m.pt2")], ("quantize='int8'", "'pte'")),
             (["--format", "web", "--quantize", "int8", "--out", str(tmp_path / "web")], ("quantize='int8'", "web")),
             (["--format", "pte", "--batch-size", "0", "--out", str(tmp_path / "m.pte")], ("batch_size", "0"))]
    for args, words in cases:
        _one_line(capsys, main(["export", str(model), *args]), *words)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model"]  # nothing was written
