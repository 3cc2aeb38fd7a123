"""notebooks/timeseries.ipynb runs top to bottom without an error, and is committed without outputs."""
from pathlib import Path

import nbformat
import pytest

NOTEBOOK = Path(__file__).resolve().parents[1] / "notebooks" / "timeseries.ipynb"


def test_timeseries_notebook_is_committed_clean():
    nb = nbformat.read(NOTEBOOK, as_version=4)
    nbformat.validate(nb)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code and all(not c.outputs and c.execution_count is None for c in code)
    assert sum(c.cell_type == "markdown" for c in nb.cells) >= 5


@pytest.mark.slow
def test_timeseries_notebook_runs(tmp_path, monkeypatch):
    from nbclient import NotebookClient

    monkeypatch.setenv("MPLBACKEND", "Agg")
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    nb = nbformat.read(NOTEBOOK, as_version=4)
    NotebookClient(nb, kernel_name="python3", timeout=600, resources={"metadata": {"path": str(tmp_path)}}).execute()
    errors = [out for cell in nb.cells for out in cell.get("outputs", []) if out.get("output_type") == "error"]
    assert not errors
    text = "\n".join(out.get("text", "") for cell in nb.cells for out in cell.get("outputs", []))
    accuracy = float(text.split("test accuracy ")[1].split()[0])
    assert accuracy >= 0.85  # chance: 0.5 (1,029 test series)
    assert "agrees with learner.predict on 200 test series: True" in text
    assert not list(tmp_path.iterdir())  # the notebook saves into a temporary folder, not the cwd
