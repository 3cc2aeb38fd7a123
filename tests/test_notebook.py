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
NOTEBOOK_NAMES = ["quickstart", "tabular", "deploy", "segmentation", "keypoints", "timeseries"]


def _register(name):
    # each notebook runs in its own kernel in a fresh folder, in the background from the end of
    # collection on (tests/prestart.py): the tests below wait for it and check what it printed
    prestart.job(f"notebook:{name}")(lambda folder: prestart.Job([sys.executable, RUN_NOTEBOOK,
                                                                  NOTEBOOK.parent / f"{name}.ipynb"], timeout=1200))


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
    assert clean_text(f"wrote {tempfile.gettempdir()}/hotstart-deploy-x1y2/digits.onnx (0.15 MB)") == \
        "wrote <tmp>/digits.onnx (0.15 MB)"
    assert clean_text("took 3.5 s; 10 classes, 3 steps") == "took … s; 10 classes, 3 steps"
    assert clean_text("  latency batch 1 fp32 / int8 (ms): 0.422 / 0.158\n  size ratio: 3.86") == \
        "  latency batch 1 fp32 / int8 (ms): …\n  size ratio: 3.86"


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
