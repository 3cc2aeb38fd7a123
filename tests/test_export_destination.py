"""Export destinations are checked before the export runs (it takes seconds to minutes).

Before, ``hotstart export --out`` onto an existing folder, below a file, or onto a foreign web
folder failed only after loading the model and exporting (and, for int8, calibrating) it. Here the
model is never loaded: `load_learner` is replaced by a function that fails the test if called.
"""
import os
from pathlib import Path

import pytest

from hotstart.errors import UsageError


@pytest.fixture
def no_loading(monkeypatch):
    import hotstart.learner

    def fail(*args, **kwargs):
        raise AssertionError("the model was loaded before the destination was checked")

    monkeypatch.setattr(hotstart.learner, "load_learner", fail)


def _cases(tmp):
    (tmp / "folder").mkdir()
    (tmp / "folder" / "keep.txt").write_text("mine")
    (tmp / "file").write_text("mine")
    (tmp / "bundle").mkdir()
    (tmp / "bundle" / "model.onnx").mkdir()
    altered, first_refused = _altered_ort_web(tmp / "ort")
    return {
        "onnx onto a folder": (["--out", str(tmp / "folder")], "is a folder"),
        "int8 onto a folder": (["--quantize", "int8", "--out", str(tmp / "folder")], "is a folder"),
        "pt2 onto a folder": (["--format", "pt2", "--out", str(tmp / "folder")], "is a folder"),
        "below a file": (["--out", str(tmp / "file" / "sub" / "m.onnx")], "is a file, not a folder"),
        "web onto a file": (["--format", "web", "--out", str(tmp / "file")], "not a folder"),
        "web onto a folder of yours": (["--format", "web", "--out", str(tmp / "folder")], "not written by a web export"),
        "web with a bad vendor": (["--format", "web", "--out", str(tmp / "new"), "--vendor", str(tmp / "nope")],
                                  "--vendor"),
        "web with an altered runtime": (["--format", "web", "--out", str(tmp / "new"), "--vendor", str(altered)],
                                        f"{first_refused} has sha384"),
        "c onto a folder of yours": (["--format", "c", "--out", str(tmp / "folder")],
                                     "not written by a C export, or changed since it wrote them (keep.txt)"),
        "bundle onto a file": (["--bundle", str(tmp / "file")], "not a folder"),
        "bundle whose model.onnx is a folder": (["--bundle", str(tmp / "bundle")],
                                                "not written by a bundle export, or changed since it wrote them "
                                                "(model.onnx)"),
    }


def _altered_ort_web(root: Path) -> tuple[Path, Path]:
    """An onnxruntime-web package of the pinned version whose .wasm (with HOTSTART_ORT_WEB, else
    every file) is not the published one, and the file the check refuses first."""
    import shutil

    from hotstart.export.web import ORT_RUNTIME_FILES, ORT_WEB_VERSION

    (root / "dist").mkdir(parents=True)
    (root / "package.json").write_text(f'{{"name": "onnxruntime-web", "version": "{ORT_WEB_VERSION}"}}')
    real = os.environ.get("HOTSTART_ORT_WEB")
    for name in ORT_RUNTIME_FILES:  # the real files where there are, so that only the .wasm differs
        if real and (Path(real) / "dist" / name).is_file() and not name.endswith(".wasm"):
            shutil.copyfile(Path(real) / "dist" / name, root / "dist" / name)
        else:
            (root / "dist" / name).write_text("// not the published file")
    return root, root / "dist" / ("ort-wasm-simd-threaded.wasm" if real else ORT_RUNTIME_FILES[0])


def test_bad_destinations_fail_before_the_model_is_loaded(tmp_path, capsys, no_loading):
    from hotstart.cli import main

    model = tmp_path / "model"  # looks like a saved model to the CLI's first check; never loaded
    model.mkdir()
    (model / "task.json").write_text("{}")
    for name, (args, message) in _cases(tmp_path).items():
        assert main(["export", str(model), *args]) == 1, name
        err = capsys.readouterr().err
        assert message in err and "Traceback" not in err, (name, err)
    assert (tmp_path / "folder" / "keep.txt").read_text() == "mine"
    assert sorted(p.name for p in (tmp_path / "folder").iterdir()) == ["keep.txt"]  # nothing left beside it


_EXPORT_WITHOUT_LOADING = """
import sys
import hotstart.learner

def fail(*args, **kwargs):
    raise AssertionError("the model was loaded before the destination was checked")

hotstart.learner.load_learner = fail
from hotstart.cli import main
sys.exit(main(["export", sys.argv[1], "--out", sys.argv[2]]))
"""


def test_a_folder_without_write_permission_fails_first(tmp_path):
    """A read-only folder, for root too (it skipped under root, so in every CI run): a read-only bind
    mount in a private mount namespace (tests/mount_namespace.py), the export in a child process."""
    import sys

    from mount_namespace import run_in_mount_namespace

    locked = tmp_path / "locked"
    locked.mkdir()
    model = tmp_path / "model"
    model.mkdir()
    (model / "task.json").write_text("{}")
    from mount_namespace import env_with_this_hotstart

    proc = run_in_mount_namespace([sys.executable, "-c", _EXPORT_WITHOUT_LOADING, model, locked / "m.onnx"],
                                  read_only=[locked], env=env_with_this_hotstart())
    assert proc.returncode == 1, proc.stderr[-2000:]
    assert f"no permission to write in {locked}" in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
    assert list(locked.iterdir()) == []


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="Linux's /proc")
def test_a_folder_that_takes_no_new_files_fails_first_for_root_too(monkeypatch):
    """/proc's permission bits let root write (and `os.access` says yes to root everywhere), but no
    file can be created there: the export ran to its end and then failed naming its temporary file.
    The check now creates (and removes) a file in the folder; `os.access` answers yes here, as it
    does to root, so the creation is what refuses, whoever runs the test."""
    import os

    from hotstart.export.destination import check_file_destination, check_folder_destination

    monkeypatch.setattr(os, "access", lambda *args, **kwargs: True)
    with pytest.raises(UsageError, match=r"--out /proc/m.onnx: cannot create files in /proc"):
        check_file_destination("/proc/m.onnx")
    with pytest.raises(UsageError, match=r"--out /proc/web: cannot create files in /proc"):
        check_folder_destination("/proc/web", "--out")


def test_the_write_check_leaves_nothing_behind(tmp_path):
    from hotstart.export.destination import check_file_destination

    check_file_destination(tmp_path / "new" / "m.onnx")
    assert list(tmp_path.iterdir()) == []


def test_learner_export_c_refuses_a_folder_of_yours_before_touching_the_learner(tmp_path):
    from hotstart.export import export

    (tmp_path / "fw").mkdir()
    (tmp_path / "fw" / "main.c").write_text("int main(void) { return 0; }")
    with pytest.raises(UsageError, match=r"export path .*fw holds files not written by a C export.*\(main.c\)"):
        export(None, tmp_path / "fw", "c")
    assert [p.name for p in (tmp_path / "fw").iterdir()] == ["main.c"]


@pytest.mark.parametrize("fmt", ["onnx", "pt2", "web"])
def test_learner_export_checks_the_destination_before_touching_the_learner(tmp_path, fmt):
    """`learner.export` too: with no learner at all, the destination's error comes first."""
    from hotstart.export import export

    target = tmp_path / "file" if fmt == "web" else tmp_path
    (tmp_path / "file").write_text("mine")
    with pytest.raises(UsageError, match="export path"):
        export(None, target, fmt)
    with pytest.raises(UsageError, match="export path"):
        export(None, tmp_path / "file" / "m.onnx", "onnx", quantize="int8")


def test_a_destination_inside_the_model_folder_is_refused_for_every_format(tmp_path, capsys, no_loading):
    """Before, ``--out RUN/model/task.json`` wrote the ONNX file over the model's task.json (exit 0,
    and the model no longer loaded); a web or C folder swapped in for the run folder would take the
    model with it. Every format, and the bundle, refuse it before the model is loaded."""
    from hotstart.cli import main

    run = tmp_path / "run"
    model = run / "model"
    model.mkdir(parents=True)
    (model / "task.json").write_text("{}")
    (model / "weights.safetensors").write_bytes(b"weights")
    cases = {
        "onnx over task.json": ["--out", str(model / "task.json")],
        "int8 beside the weights": ["--quantize", "int8", "--out", str(model / "m.onnx")],
        "pt2 inside": ["--format", "pt2", "--out", str(model / "m.pt2")],
        "pte over the weights": ["--format", "pte", "--out", str(model / "weights.safetensors")],
        "web as the run folder": ["--format", "web", "--out", str(run)],
        "web inside": ["--format", "web", "--out", str(model / "web")],
        "c folder as the run folder": ["--format", "c", "--out", str(run)],
        "c file inside": ["--format", "c", "--out", str(model / "m.c")],
        "bundle inside": ["--bundle", str(model / "deploy")],
        "the model folder itself": ["--format", "web", "--out", str(model)],
    }
    for name, args in cases.items():
        for source in (run, model):  # train's --out folder, or the model folder itself
            assert main(["export", str(source), *args]) == 1, name
            err = capsys.readouterr().err
            assert str(model) in err and "model being exported" in err and "Traceback" not in err, (name, err)
    assert sorted(p.name for p in model.iterdir()) == ["task.json", "weights.safetensors"]
    assert (model / "task.json").read_text() == "{}" and (model / "weights.safetensors").read_bytes() == b"weights"
    assert sorted(p.name for p in run.iterdir()) == ["model"]


def test_a_c_export_of_an_onnx_file_is_not_written_over_it(tmp_path, capsys):
    from hotstart.cli import main

    source = tmp_path / "m-int8.onnx"
    source.write_bytes(b"an int8 model")
    assert main(["export", str(source), "--format", "c", "--out", str(source)]) == 1
    assert "model being exported" in capsys.readouterr().err
    assert source.read_bytes() == b"an int8 model"


def test_the_int8_exports_refuse_options_they_do_not_take(tmp_path):
    """``export("m.tflite", quantize="int8", batch_size=8)`` wrote a batch-1 file and ``measure=True``
    for a .pte reported nothing: the int8 .pte and .tflite paths dropped every other keyword."""
    from hotstart.export import export

    with pytest.raises(UsageError, match=r"format='tflite', quantize='int8' takes no 'batch_size', 'bogus' \(it "
                                         r"takes no other option\)"):
        export(None, tmp_path / "m.tflite", quantize="int8", batch_size=8, bogus=1)
    with pytest.raises(UsageError, match=r"format='pte', quantize='int8' takes no 'measure' \(it takes 'batch_size'\); "
                                         r"measure= is for format='onnx', quantize='int8'"):
        export(None, tmp_path / "m.pte", quantize="int8", measure=True)
    assert list(tmp_path.iterdir()) == []
