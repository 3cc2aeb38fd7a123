"""The command line names every model format it takes, and says what a folder it cannot take is.

Before: ``predict --help`` named only ".onnx or .pt2", ``export --help`` left out pte, c and web,
and ``predict`` on a web export's folder said "weights.safetensors not found: is it a folder
written by Learner.save?".
"""
import pytest

from hotstart.cli import main


def _help(capsys, command):
    with pytest.raises(SystemExit) as e:
        main([command, "--help"])
    assert e.value.code == 0
    return " ".join(capsys.readouterr().out.split())  # argparse wraps lines


def test_predict_help_lists_every_runtime_and_export_help_every_format(capsys):
    from hotstart.export import FORMATS
    from hotstart.runtimes import suffixes

    text = _help(capsys, "predict")
    assert "folder" in text and "learner.save" in text
    for suffix in suffixes():
        assert suffix in text, (suffix, text)
    assert "--no-server" in text  # predict is handed to a running server as train is (serve/client.py)
    text = _help(capsys, "export")
    for fmt in FORMATS:
        assert fmt in text, (fmt, text)
    for words in ("ExecuTorch", "static page", "microcontrollers", "--bundle", "--measure"):
        assert words in text, (words, text)


def test_predict_on_a_web_export_says_what_the_folder_is_and_what_to_pass(tmp_path, capsys):
    from hotstart import Image, ImageClassificationSingle, Label, tasklearner

    task = ImageClassificationSingle((Image(1), Label(["a", "b"])), size=(8, 8), augment=False)
    web = tmp_path / "web"
    tasklearner(task, None, progress=False).export(web, format="web")
    (tmp_path / "x.png").write_bytes(b"")
    assert main(["predict", str(web), str(tmp_path / "x.png")]) == 1
    err = capsys.readouterr().err
    assert "a web page export" in err and f"hotstart predict {web / 'model.onnx'}" in err, err
    assert "weights.safetensors" not in err
