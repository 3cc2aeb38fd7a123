"""The notebooks run top to bottom without an error, and are stored executed: with their outputs
(plots, tables, numbers, for a reader where they are hosted), minus what changes from run to run
(notebooks/store_outputs.py makes them so)."""
import importlib.util
import sys
from pathlib import Path

import nbformat
import pytest

import prestart

NOTEBOOK = Path(__file__).resolve().parents[1] / "notebooks" / "quickstart.ipynb"
MAX_STORED_BYTES = 400_000  # figures are PNGs: keep each notebook small
RUN_NOTEBOOK = Path(__file__).parent / "scripts" / "run_notebook.py"
NOTEBOOK_NAMES = ["quickstart", "tabular", "deploy", "segmentation", "keypoints", "timeseries", "warm",
                  "small_devices"]


# conftest.py sets HOTSTART_SERVER=0 (no test's run may be taken by a server it did not start); the
# warm notebook starts its own server, in its own runtime folder, and shows runs served by it
UNSET = {"warm": ("HOTSTART_SERVER",)}


def _register(name):
    # each notebook runs in its own kernel in a fresh folder, in the background from the end of
    # collection on (tests/prestart.py): the tests below wait for it and check what it printed
    prestart.job(f"notebook:{name}")(lambda folder: prestart.Job([sys.executable, RUN_NOTEBOOK,
                                                                  NOTEBOOK.parent / f"{name}.ipynb"],
                                                                 unset=UNSET.get(name, ()), timeout=1200))


for _name in NOTEBOOK_NAMES:
    _register(_name)


def _executed(name: str):
    """The notebook `name`, executed top to bottom in a fresh kernel (its prestart job): the
    notebook with its outputs, and the folder it ran in."""
    run = prestart.result(f"notebook:{name}")
    assert run.stdout.strip(), f"{name}.ipynb did not run: {run.stderr[-3000:]}"
    nb = nbformat.reads(run.stdout, as_version=4)
    errors = [out for cell in nb.cells for out in cell.get("outputs", []) if out.get("output_type") == "error"]
    assert not errors, "\n".join("\n".join(e.get("traceback", [])) for e in errors)[-5000:]
    assert run.returncode == 0, run.stderr[-3000:]
    return nb, run.folder


def _store_outputs():
    spec = importlib.util.spec_from_file_location("store_outputs", NOTEBOOK.parent / "store_outputs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _assert_stored_executed(path: Path) -> None:
    """Every code cell ran, in order, without an error; outputs are stored; nothing volatile is
    (stderr, timestamps, timings, temporary paths: storing again changes nothing)."""
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    assert sum(c.cell_type == "markdown" for c in nb.cells) >= 3
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert [c.execution_count for c in code] == list(range(1, len(code) + 1)), "not stored executed, in order"
    outputs = [o for c in code for o in c.outputs]
    assert outputs, f"{path.name} is stored without outputs (run python notebooks/store_outputs.py)"
    assert not [o for o in outputs if o.get("output_type") == "error"]
    assert not [o for o in outputs if o.get("name") == "stderr"], "stderr (progress bars, warnings) is stored"
    assert not [c for c in nb.cells if "execution" in c.metadata], "execution timestamps are stored"
    texts = [t for o in outputs for t in [o.get("text", "")] + [v for k, v in o.get("data", {}).items()
                                                              if k.startswith("text/") and isinstance(v, str)]]
    clean_text = _store_outputs()._clean_text
    assert [clean_text(t) for t in texts] == texts, "a timing or a temporary path is stored"
    assert path.stat().st_size < MAX_STORED_BYTES


def test_store_outputs_keeps_out_what_changes_from_run_to_run():
    clean_text = _store_outputs()._clean_text
    import tempfile

    table = ("epoch  train_loss  valid_loss  accuracy       time\n"
             "    0      0.8123      0.4000    0.9100       3.21\n"
             "    1      0.5000      0.3000    0.9500      12.50\n")
    assert clean_text(table) == table.replace("      3.21", "      …").replace("     12.50", "     …")
    assert clean_text(table + "validation: loss 0.1228, accuracy 0.9666") == \
        clean_text(table) + "validation: loss 0.1228, accuracy 0.9666"  # the table ended
    assert clean_text(clean_text(table)) == clean_text(table)
    assert clean_text(f"wrote {tempfile.gettempdir()}/hotstart-deploy-x1y2/digits.onnx (0.15 MB)") == \
        "wrote <tmp>/digits.onnx (0.15 MB)"
    assert clean_text("took 3.5 s; 10 classes, 3 steps") == "took … s; 10 classes, 3 steps"
    assert clean_text("  latency batch 1 fp32 / int8 (ms): 0.422 / 0.158\n  size ratio: 3.86") == \
        "  latency batch 1 fp32 / int8 (ms): …\n  size ratio: 3.86"
    assert clean_text("pid 19847 on /run/serve.sock, 1 runs served\nmemory: RSS 827 MiB, PSS 580.5 MiB") == \
        "pid … on /run/serve.sock, 1 runs served\nmemory: RSS … MiB, PSS … MiB"
    warmup = ("workload         status    seconds  note\n"
              "tabular-mlp-cpu  ok            2.2  \n"
              "digits-smallcnn  failed       12.75 an error\n"
              "total 15.0 s, peak memory 683 MB, cache x\n")
    assert clean_text(warmup) == ("workload         status    seconds  note\n"
                                  "tabular-mlp-cpu  ok            …  \n"
                                  "digits-smallcnn  failed       … an error\n"
                                  "total … s, peak memory … MB, cache x\n")
    assert clean_text(clean_text(warmup)) == clean_text(warmup)  # storing again changes nothing


def _outputs_text(nb) -> str:
    parts = []
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            if "text" in out:
                parts.append(out["text"])
            for value in out.get("data", {}).values():
                if isinstance(value, str):
                    parts.append(value)
    return "\n".join(parts)


def test_notebook_is_stored_executed():
    _assert_stored_executed(NOTEBOOK)


@pytest.mark.slow
@pytest.mark.prestart("notebook:quickstart")
def test_quickstart_notebook_runs():
    nb, cwd = _executed("quickstart")
    text = _outputs_text(nb)
    assert "accuracy" in text
    assert "the loaded model predicts" in text
    assert not list(cwd.iterdir())  # the notebook saves into a temporary folder, not the cwd


TABULAR = NOTEBOOK.parent / "tabular.ipynb"


def test_tabular_notebook_is_stored_executed():
    _assert_stored_executed(TABULAR)


@pytest.mark.slow
@pytest.mark.prestart("notebook:tabular")
def test_tabular_notebook_runs():
    """Penguin species (accuracy >= 0.95) and body mass (R2 >= 0.75, RMSE within 10% of least
    squares): the notebook asserts both itself; here we check it ran and said so."""
    nb, cwd = _executed("tabular")
    text = _outputs_text(nb)
    assert "species: validation accuracy" in text and "least squares: RMSE" in text
    assert "the loaded model predicts" in text and "<table>" in text  # show_results as an HTML table
    assert not list(cwd.iterdir())


DEPLOY_NOTEBOOK = NOTEBOOK.parent / "deploy.ipynb"


def test_deploy_notebook_is_stored_executed():
    _assert_stored_executed(DEPLOY_NOTEBOOK)


def _has_executorch() -> bool:
    return importlib.util.find_spec("executorch") is not None


@pytest.mark.slow
@pytest.mark.skipif(not _has_executorch(), reason="the deploy notebook's .pte / QAT cells need hotstart[edge]")
@pytest.mark.prestart(*(["notebook:deploy"] if _has_executorch() else []))
def test_deploy_notebook_runs():
    nb, cwd = _executed("deploy")
    text = _outputs_text(nb)
    assert "caught: the model outputs (7,) per sample" in text
    assert "Total params:" in text
    assert "largest difference from torch" in text
    assert "labels equal learner.predict on 359/359 validation images" in text
    assert "valid accuracy int8" in text and "size ratio" in text
    assert "img1.png: " in text and "img2.png: " in text
    assert ".pte labels equal learner.predict on 359/359 validation images" in text
    assert "QAT int8 .pte accuracy:" in text
    assert not list(cwd.iterdir())


VISION_NOTEBOOKS = {"segmentation.ipynb": ["pixel accuracy", "mean IoU", "with TTA"],
                    "keypoints.ipynb": ["mean distance", "predicted (64x64)", "with TTA"]}


@pytest.mark.parametrize("name", sorted(VISION_NOTEBOOKS))
def test_vision_notebook_is_stored_executed(name):
    _assert_stored_executed(NOTEBOOK.parent / name)


@pytest.mark.slow
@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.prestart(f"notebook:{n[:-len('.ipynb')]}"))
                                  for n in sorted(VISION_NOTEBOOKS)])
def test_vision_notebook_runs(name):
    """show_batch, training, show_results, interpretation, predict and TTA, top to bottom."""
    nb, cwd = _executed(name[:-len(".ipynb")])
    text = _outputs_text(nb)
    for expected in VISION_NOTEBOOKS[name]:
        assert expected in text
    assert not list(cwd.iterdir())


TIMESERIES = NOTEBOOK.parent / "timeseries.ipynb"


def test_timeseries_notebook_is_stored_executed():
    _assert_stored_executed(TIMESERIES)


@pytest.mark.slow
@pytest.mark.prestart("notebook:timeseries")
def test_timeseries_notebook_runs():
    """ItalyPowerDemand with InceptionTime: test accuracy, views, save / load, ONNX and the predictor."""
    nb, cwd = _executed("timeseries")
    text = _outputs_text(nb)
    accuracy = float(text.split("test accuracy ")[1].split()[0])
    assert accuracy >= 0.85  # chance: 0.5 (1,029 test series)
    assert "agrees with learner.predict on 200 test series: True" in text
    assert not list(cwd.iterdir())  # the notebook saves into a temporary folder, not the cwd


def _has(*modules: str) -> bool:
    return all(importlib.util.find_spec(m) is not None for m in modules)


@pytest.mark.parametrize("name", ["warm.ipynb", "small_devices.ipynb"])
def test_warm_and_small_devices_notebooks_are_stored_executed(name):
    _assert_stored_executed(NOTEBOOK.parent / name)


def _work_folder(name: str):
    """The temporary folder that notebook `name` printed as ``work folder: PATH`` (None if it did not)."""
    run = prestart.result(f"notebook:{name}")
    try:
        text = _outputs_text(nbformat.reads(run.stdout, as_version=4))
    except Exception:  # noqa: BLE001 - no notebook came back: the test says why
        return None
    found = [line.split("work folder: ", 1)[1].strip() for line in text.splitlines() if line.startswith("work folder: ")]
    return Path(found[0]) if found else None


def _stop_server_in(work) -> None:
    """Stop a server the warm notebook left running (a cell failed before its last), and remove its folder."""
    import os
    import shutil
    import subprocess
    import time

    if work is None or not work.exists():
        return
    env = {**os.environ, "HOTSTART_RUNTIME_DIR": str(work / "run")}
    subprocess.run([sys.executable, "-m", "hotstart", "serve", "--stop"], env=env, capture_output=True, timeout=60)
    deadline = time.monotonic() + 30
    while any((work / "run").glob("*.sock")) and time.monotonic() < deadline:
        time.sleep(0.2)
    shutil.rmtree(work, ignore_errors=True)


@pytest.mark.slow
@pytest.mark.prestart("notebook:warm")
def test_warm_notebook_runs():
    """The warmup runs one workload into the notebook's own cache; a served run prints exactly what
    the direct run prints (the same final loss to 8 digits) and says it was served; the server
    reports the run, and stops; nothing is left behind."""
    work = _work_folder("warm")
    try:
        nb, cwd = _executed("warm")
        text = _outputs_text(nb)
        assert "tabular-mlp-cpu  ok" in text and "nothing is warm yet" in text
        assert "compile eager (compile='auto': this configuration is not warm" in text
        served, direct = text.split("$ python -m hotstart run train.py")[1].split("$ python train.py")
        assert "served: yes" in served and "served: no" in direct
        losses = [line for line in text.splitlines() if line.startswith("final valid loss ")]
        assert len(losses) == 2 and losses[0] == losses[1], losses
        seconds = [float(text.split(f"{label}:")[1].split()[0]) for label in ("hotstart run train.py", "python train.py")]
        assert all(s > 0 for s in seconds)
        assert "same final loss served and direct: True" in text
        assert "1 runs served" in text and "preloaded" in text
        assert "server stopped: True" in text
        assert work is not None and not work.exists()  # the notebook removed its folder, cache and socket
        assert not list(cwd.iterdir())
    finally:
        _stop_server_in(work)


_TFLITE_MODULES = ("litert_torch", "ai_edge_litert", "tflite_micro")


@pytest.mark.slow
@pytest.mark.prestart(*(["notebook:small_devices"] if _has(*_TFLITE_MODULES) else []))
def test_small_devices_notebook_runs():
    """smallcnn_micro at 16x16: TF Lite Micro's labels equal LiteRT's on >= 98% of the validation
    digits, the C's equal onnxruntime's on all of them, every int8 runtime is within 3 points of
    torch fp32, and the C's arena (activations only) is smaller than TF Lite Micro's."""
    from needs import missing, need

    for module in _TFLITE_MODULES:
        need(module, "install hotstart[tflite] (litert-torch, ai-edge-litert, tflite-micro)")
    from hotstart.export.c.host import find_cc

    if find_cc() is None:
        missing("no C compiler (cc): install gcc")
    nb, cwd = _executed("small_devices")
    text = _outputs_text(nb)
    same, n = text.split("TF Lite Micro labels equal LiteRT's on ")[1].split()[0].split("/")
    assert int(n) == 359 and int(same) / int(n) >= 0.98
    assert "labels equal onnxruntime's: 359 / 359" in text  # the C export's own host check
    c_same, c_n = text.split("labels equal TF Lite Micro's on ")[1].split()[0].split("/")
    assert int(c_n) == 359 and int(c_same) / int(c_n) >= 0.95  # two quantizers: a few digits may differ
    table = {line[:30].strip(): line[30:].split() for line in text.split("arena bytes\n")[1].splitlines()[:4]}
    fp32 = float(table["torch fp32"][0])
    assert fp32 >= 0.9
    for name in ("LiteRT int8 (.tflite)", "TF Lite Micro int8 (.tflite)", "hotstart C int8 (host build)"):
        assert abs(float(table[name][0]) - fp32) <= 0.03, (name, table[name])
    tflm_arena = int(table["TF Lite Micro int8 (.tflite)"][1].replace(",", ""))
    c_arena = int(table["hotstart C int8 (host build)"][1].replace(",", ""))
    # at its peak the C holds two 8 x 16 x 16 int8 activations (the first convolutions' outputs)
    assert 2 * 8 * 16 * 16 <= c_arena < tflm_arena
    assert not list(cwd.iterdir())
