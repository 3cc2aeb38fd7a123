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


def test_export_refuses_before_exporting_what_it_could_not_write_usefully(tmp_path, capsys, make_learner):
    """A --out suffix of another format (or none a reader opens), and a C folder holding files a C
    export does not write (the docs once built the harness binary inside it): refused at once."""
    model = make_learner().save(tmp_path / "model")
    cases = [(["--format", "onnx", "--out", str(tmp_path / "m.tflite")], ("names a tflite file", "--format is onnx")),
             (["--out", str(tmp_path / "m.txt")], ("a onnx file ends in .onnx",)),
             (["--format", "pte", "--out", str(tmp_path / "m")], ("a pte file ends in .pte",))]
    for args, words in cases:
        _one_line(capsys, main(["export", str(model), *args]), *words)
    folder = tmp_path / "digits-c"
    folder.mkdir()
    (folder / "model.c").write_text("/* an earlier export */")
    (folder / "harness").write_bytes(b"\x7fELF")
    _one_line(capsys, main(["export", str(model), "--format", "c", "--out", str(folder)]),
              "holds files a C export does not write (harness)", "nothing was changed")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["digits-c", "model"]
    assert sorted(p.name for p in folder.iterdir()) == ["harness", "model.c"]


def test_a_text_cell_in_a_numeric_column_names_the_cell_and_the_flag(tmp_path, capsys):
    """The column becomes categorical with a warning that names the file, the line, the column
    and the cell, and the flag that changes it (issue 32: it suggested ``continuous=[...]``, which
    the command line had no flag for); with ``--continuous x`` the cell is an error naming it."""
    rows = ["x,z,t"] + [f"{i * 0.37:.2f},{i % 3},{'ab'[i % 2]}" for i in range(40)]
    rows[8] = "oops,1,a"
    table = tmp_path / "t.csv"
    table.write_text("\n".join(rows) + "\n")
    common = ["train", str(table), "--target", "t", "--epochs", "1", "--batch-size", "16"]
    assert main([*common, "--out", str(tmp_path / "r1")]) == 0
    captured = capsys.readouterr()
    warning = [line for line in captured.err.splitlines() if line.startswith("warning: ")]
    assert warning == [f"warning: column 'x' of {table} is read as categorical although 39 of its 40 values are "
                       f"numbers; 1 not, first 'oops' in line 9. Fix or empty those cells, or pass --continuous x "
                       f"(then they are an error naming the cell)"]
    assert "categorical ['x', 'z']" in captured.out
    _one_line(capsys, main([*common, "--continuous", "x", "--out", str(tmp_path / "r2")]),
              "continuous column 'x'", str(table), "'oops' in line 9")
    rows[8] = "0.5,1,a"
    table.write_text("\n".join(rows) + "\n")
    assert main([*common, "--continuous", "x,z", "--out", str(tmp_path / "r3")]) == 0
    out = capsys.readouterr().out
    assert "categorical []; continuous ['x', 'z']" in out  # z (3 integers) would be categorical by the rule
