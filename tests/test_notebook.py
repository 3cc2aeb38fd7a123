"""The notebooks run top to bottom without an error, and are stored executed: with their outputs
(plots, tables, numbers, for a reader where they are hosted), minus what changes from run to run
(notebooks/store_outputs.py makes them so)."""
import importlib.util
from pathlib import Path

import nbformat
import pytest

NOTEBOOK = Path(__file__).resolve().parents[1] / "notebooks" / "quickstart.ipynb"
MAX_STORED_BYTES = 400_000  # figures are PNGs: keep each notebook small


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
def test_quickstart_notebook_runs(tmp_path, monkeypatch):
    from nbclient import NotebookClient

    monkeypatch.setenv("MPLBACKEND", "Agg")
    monkeypatch.setenv("OMP_NUM_THREADS", "1")  # tiny model; a shared machine's cores go further
    nb = nbformat.read(NOTEBOOK, as_version=4)
    NotebookClient(nb, kernel_name="python3", timeout=600, resources={"metadata": {"path": str(tmp_path)}}).execute()

    errors = [out for cell in nb.cells for out in cell.get("outputs", []) if out.get("output_type") == "error"]
    assert not errors
    text = _outputs_text(nb)
    assert "accuracy" in text
    assert "the loaded model predicts" in text
    assert not list(tmp_path.iterdir())  # the notebook saves into a temporary folder, not the cwd


TABULAR = NOTEBOOK.parent / "tabular.ipynb"


def test_tabular_notebook_is_stored_executed():
    _assert_stored_executed(TABULAR)


@pytest.mark.slow
def test_tabular_notebook_runs(tmp_path, monkeypatch):
    """Penguin species (accuracy >= 0.95) and body mass (R2 >= 0.75, RMSE within 10% of least
    squares): the notebook asserts both itself; here we check it ran and said so."""
    from nbclient import NotebookClient

    monkeypatch.setenv("MPLBACKEND", "Agg")
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    nb = nbformat.read(TABULAR, as_version=4)
    NotebookClient(nb, kernel_name="python3", timeout=600, resources={"metadata": {"path": str(tmp_path)}}).execute()

    errors = [out for cell in nb.cells for out in cell.get("outputs", []) if out.get("output_type") == "error"]
    assert not errors
    text = _outputs_text(nb)
    assert "species: validation accuracy" in text and "least squares: RMSE" in text
    assert "the loaded model predicts" in text and "<table>" in text  # show_results as an HTML table
    assert not list(tmp_path.iterdir())


DEPLOY_NOTEBOOK = NOTEBOOK.parent / "deploy.ipynb"


def test_deploy_notebook_is_stored_executed():
    _assert_stored_executed(DEPLOY_NOTEBOOK)


@pytest.mark.slow
def test_deploy_notebook_runs(tmp_path, monkeypatch):
    from nbclient import NotebookClient

    monkeypatch.setenv("MPLBACKEND", "Agg")
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    nb = nbformat.read(DEPLOY_NOTEBOOK, as_version=4)
    NotebookClient(nb, kernel_name="python3", timeout=600, resources={"metadata": {"path": str(tmp_path)}}).execute()

    errors = [out for cell in nb.cells for out in cell.get("outputs", []) if out.get("output_type") == "error"]
    assert not errors
    text = _outputs_text(nb)
    assert "caught: the model outputs (7,) per sample" in text
    assert "Total params:" in text
    assert "largest difference from torch" in text
    assert "labels equal learner.predict on 359/359 validation images" in text
    assert "valid accuracy int8" in text and "size ratio" in text
    assert "img1.png: " in text and "img2.png: " in text
    assert not list(tmp_path.iterdir())


VISION_NOTEBOOKS = {"segmentation.ipynb": ["pixel accuracy", "mean IoU", "with TTA"],
                    "keypoints.ipynb": ["mean distance", "predicted (64x64)", "with TTA"]}


@pytest.mark.parametrize("name", sorted(VISION_NOTEBOOKS))
def test_vision_notebook_is_stored_executed(name):
    _assert_stored_executed(NOTEBOOK.parent / name)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(VISION_NOTEBOOKS))
def test_vision_notebook_runs(name, tmp_path, monkeypatch):
    """show_batch, training, show_results, interpretation, predict and TTA, top to bottom."""
    from nbclient import NotebookClient

    monkeypatch.setenv("MPLBACKEND", "Agg")
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    nb = nbformat.read(NOTEBOOK.parent / name, as_version=4)
    NotebookClient(nb, kernel_name="python3", timeout=600, resources={"metadata": {"path": str(tmp_path)}}).execute()
    errors = [out for cell in nb.cells for out in cell.get("outputs", []) if out.get("output_type") == "error"]
    assert not errors
    text = _outputs_text(nb)
    for expected in VISION_NOTEBOOKS[name]:
        assert expected in text
    assert not list(tmp_path.iterdir())


TIMESERIES = NOTEBOOK.parent / "timeseries.ipynb"


def test_timeseries_notebook_is_stored_executed():
    _assert_stored_executed(TIMESERIES)


@pytest.mark.slow
def test_timeseries_notebook_runs(tmp_path, monkeypatch):
    """ItalyPowerDemand with InceptionTime: test accuracy, views, save / load, ONNX and the predictor."""
    from nbclient import NotebookClient

    monkeypatch.setenv("MPLBACKEND", "Agg")
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    nb = nbformat.read(TIMESERIES, as_version=4)
    NotebookClient(nb, kernel_name="python3", timeout=600, resources={"metadata": {"path": str(tmp_path)}}).execute()
    errors = [out for cell in nb.cells for out in cell.get("outputs", []) if out.get("output_type") == "error"]
    assert not errors
    text = _outputs_text(nb)
    accuracy = float(text.split("test accuracy ")[1].split()[0])
    assert accuracy >= 0.85  # chance: 0.5 (1,029 test series)
    assert "agrees with learner.predict on 200 test series: True" in text
    assert not list(tmp_path.iterdir())  # the notebook saves into a temporary folder, not the cwd
