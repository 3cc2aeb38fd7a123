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


def test_export_options_that_do_not_go_together(tmp_path, capsys, make_learner, monkeypatch):
    """Refused before the model is loaded (export.check_options; plain ValueErrors with a traceback
    once, then errors after a 5-7 s load); --batch-size, which only a .pte takes, is no longer
    ignored silently."""
    model = make_learner().save(tmp_path / "model")
    import hotstart.learner

    def no_load(*args, **kwargs):
        raise AssertionError("the model was loaded before the options were checked")

    monkeypatch.setattr(hotstart.learner, "load_learner", no_load)
    cases = [(["--format", "pt2", "--quantize", "int8", "--out", str(tmp_path / "m.pt2")], ("quantize='int8'", "'pte'")),
             (["--format", "web", "--quantize", "int8", "--out", str(tmp_path / "web")], ("quantize='int8'", "web")),
             (["--format", "pte", "--batch-size", "0", "--out", str(tmp_path / "m.pte")], ("--batch-size", "0")),
             (["--format", "iree", "--quantize", "int8", "--out", str(tmp_path / "m.vmfb")], ("quantize='int8'", "fp32")),
             (["--format", "onnx", "--quantize", "int8", "--calibrate", "0", "--out", str(tmp_path / "m.onnx")],
              ("calibrate", "at least 1", "0")),
             (["--format", "onnx", "--batch-size", "8", "--out", str(tmp_path / "m.onnx")], ("--batch-size", "pte"))]
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


def test_sigterm_during_an_int8_export_leaves_no_temporaries_and_the_old_file(tmp_path, make_learner):
    """``timeout`` and ``kill`` send SIGTERM, whose default action ends the process without
    unwinding: the int8 export's temporary folder beside --out stayed behind. Now SIGTERM unwinds
    like Ctrl-C (cli/stop_signals.py `terminate_raises`): exit 143, the folder removed, an earlier
    file at --out untouched. The child pauses inside the temporary folder's lifetime (its
    quantization step waits) so that the signal lands there every time."""
    import signal
    import subprocess
    import sys

    model = make_learner().save(tmp_path / "model")
    out = tmp_path / "m.onnx"
    out.write_bytes(b"an earlier export")
    child = (
        "import sys, time, onnxruntime.quantization as q\n"
        "def waiting(*args, **kwargs):\n"
        "    print('quantizing', flush=True); time.sleep(120)\n"
        "q.quantize_static = waiting\n"
        "from hotstart.cli import main\n"
        f"sys.exit(main(['export', {str(model)!r}, '--quantize', 'int8', '--calibrate', '8', '--out', {str(out)!r}]))\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", child], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        assert line.strip() == "quantizing", (line, proc.stderr.read() if proc.poll() is not None else "")
        assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".m.onnx.")], "no temporary folder yet"
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 128 + signal.SIGTERM, err
    assert "Traceback" not in err and "interrupted" in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.onnx", "model"]
    assert out.read_bytes() == b"an earlier export"
