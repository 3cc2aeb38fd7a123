"""``python -m hotstart.warmup --list``: each workload's input as its task describes it."""
from __future__ import annotations

import pytest

from hotstart.warmup import Workload
from hotstart.warmup.__main__ import main


def _listed(capsys, *args) -> dict:
    assert main(["--list", *args]) == 0
    lines = capsys.readouterr().out.splitlines()
    return {line.split()[0]: line for line in lines if line.strip()}


def test_list_shows_the_table_columns_and_the_series_channels_and_length(tmp_path, capsys):
    """The tabular workload was listed as ``size=1x1`` and the time-series one as ``1x96``: placeholders
    of the image size field, not the input."""
    listed = _listed(capsys, "--cache-dir", str(tmp_path))
    table, series = listed["tabular-mlp-cpu"], listed["timeseries-inceptiontime-cpu"]
    assert "input=table row: 3 categorical (a, b, c) + 4 continuous (x, y, z, w) columns" in table
    assert "input=series: 3 channels x 96 steps" in series
    assert "1x1" not in table and "1x96" not in series and "size=" not in table + series
    assert "input=image 3ch 128x128" in listed["single-resnet18-128-cpu"]
    assert "input=image 1ch 32x32" in listed["digits-smallcnn-32-cpu"]
    assert not list(tmp_path.iterdir())  # listing writes nothing


def test_list_survives_a_task_that_cannot_be_built(tmp_path, capsys, monkeypatch):
    monkeypatch.syspath_prepend(str(__import__("pathlib").Path(__file__).parent.parent))
    listed = _listed(capsys, "--cache-dir", str(tmp_path), "--no-builtin", "--module", "tests.warmup_fixtures.userpkg_warm")
    assert "input=image 1ch 16x16" in listed["user_tiny"]
    assert "input=? (its task() raised RuntimeError: this workload is broken on purpose)" in listed["user_broken"]


def test_a_workload_without_an_image_size_is_eager():
    """`size=None` (a table, a series) is not a compile-cache key: a compiled one is refused, naming it."""
    assert Workload("t", lambda: None, size=None, compile=False).size is None
    with pytest.raises(ValueError, match="workload 'c': compile=True needs size"):
        Workload("c", lambda: None, size=None, compile=True)
