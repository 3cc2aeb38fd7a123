"""notebooks/quickstart.ipynb runs top to bottom without an error, and is committed without outputs."""
from pathlib import Path

import nbformat
import pytest

NOTEBOOK = Path(__file__).resolve().parents[1] / "notebooks" / "quickstart.ipynb"


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


def test_notebook_is_committed_clean():
    nb = nbformat.read(NOTEBOOK, as_version=4)
    nbformat.validate(nb)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code and all(not c.outputs and c.execution_count is None for c in code)
    assert sum(c.cell_type == "markdown" for c in nb.cells) >= 5


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


VISION_NOTEBOOKS = {"segmentation.ipynb": ["pixel accuracy", "mean IoU", "with TTA"],
                    "keypoints.ipynb": ["mean distance", "predicted (64x64)", "with TTA"]}


@pytest.mark.parametrize("name", sorted(VISION_NOTEBOOKS))
def test_vision_notebook_is_committed_clean(name):
    nb = nbformat.read(NOTEBOOK.parent / name, as_version=4)
    nbformat.validate(nb)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code and all(not c.outputs and c.execution_count is None for c in code)


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
