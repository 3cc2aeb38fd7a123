"""The ``.ts`` reader and writer, on every shipped file and on damaged ones."""
from __future__ import annotations

import math

import numpy as np
import pytest

from hotstart.datasets import TSFormatError, read_ts, write_ts
from hotstart.datasets.timeseries_builtin import SERIES_DIR, SERIES_SETS, file_sha256

SHIPPED = sorted(SERIES_DIR.glob("*.ts"))
HEADER = "@problemName tiny\n@univariate false\n@dimensions 2\n@equalLength false\n@classLabel true a b\n@data\n"


def test_every_built_in_file_is_shipped_with_its_pinned_sha256():
    assert len(SHIPPED) == 2 * len(SERIES_SETS) == 10
    for s in SERIES_SETS.values():
        assert file_sha256(SERIES_DIR / f"{s.name}_TRAIN.ts") == s.train_sha256
        assert file_sha256(SERIES_DIR / f"{s.name}_TEST.ts") == s.test_sha256


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.name)
def test_shipped_files_round_trip(path, tmp_path):
    f = read_ts(path)
    write_ts(tmp_path / "copy.ts", f.series, labels=f.labels, targets=f.targets, class_labels=f.class_labels,
             problem_name=f.problem_name)
    g = read_ts(tmp_path / "copy.ts")
    assert len(g.series) == len(f.series) and g.problem_name == f.problem_name
    assert all(np.array_equal(a, b, equal_nan=True) for a, b in zip(f.series, g.series))
    assert g.labels == f.labels and g.class_labels == f.class_labels
    if f.targets is not None:
        np.testing.assert_array_equal(g.targets, f.targets)


def test_archive_facts():
    gp = read_ts(SERIES_DIR / "GunPoint_TRAIN.ts")
    assert (len(gp.series), gp.channels, set(gp.lengths), gp.class_labels) == (50, 1, {150}, ["1", "2"])
    assert gp.series[0][0, 0] == -0.6478854 and gp.labels[0] == "2"  # the first value and label, as in the file
    jv = read_ts(SERIES_DIR / "JapaneseVowels_TEST.ts")
    assert (len(jv.series), jv.channels, min(jv.lengths), max(jv.lengths)) == (370, 12, 7, 29)
    covid = read_ts(SERIES_DIR / "Covid3Month_TRAIN.ts")
    assert covid.labels is None and covid.targets.shape == (140,) and covid.targets[2] == 0.0
    assert math.isclose(covid.targets[1], 0.07758620689655173)


def test_missing_values_unequal_lengths_and_multivariate(tmp_path):
    p = tmp_path / "m.ts"
    p.write_text("# a comment\n" + HEADER + "1,2,?:4,5,6:a\n\n7,NaN:8:b\n")
    f = read_ts(p)
    np.testing.assert_array_equal(f.series[0], [[1, 2, np.nan], [4, 5, 6]])
    np.testing.assert_array_equal(f.series[1], [[7, np.nan], [8, np.nan]])  # a shorter channel: NaN-padded
    assert f.labels == ["a", "b"] and f.lengths == [3, 2]
    write_ts(tmp_path / "w.ts", f.series, labels=f.labels, class_labels=f.class_labels)
    assert all(np.array_equal(a, b, equal_nan=True) for a, b in zip(read_ts(tmp_path / "w.ts").series, f.series))


@pytest.mark.parametrize("body, line, words", [
    ("1,2:3,4:a\n1,2:b\n", 8, "missing label"),
    ("1,2:3,4:a\n1,2:3,4:5,6:a\n", 8, "3 channel(s)"),
    ("1,2:3,4:a\n1,2:3,x4:b\n", 8, "'x4' is not a number"),
    ("1,2:3,4:c\n", 7, "label 'c' is not among"),
    ("1,2:3,4:\n", 7, "missing label"),
])
def test_damaged_files_name_the_line(tmp_path, body, line, words):
    p = tmp_path / "bad.ts"
    p.write_text(HEADER + body)
    with pytest.raises(TSFormatError) as e:
        read_ts(p)
    assert f"{p}:{line}:" in str(e.value) and words in str(e.value)


def test_damaged_headers(tmp_path):
    p = tmp_path / "bad.ts"
    for text, words in [("@problemName x\n1,2:a\n", "expected a header line"),
                        ("@problemName x\n@classLabel true a\n", "no @data"),
                        ("@dimensions two\n@data\n", "@dimensions must be a positive"),
                        ("@timeStamps true\n@data\n(0,1):a\n", "not supported"),
                        ("@classLabel false\n@targetLabel true\n@data\n1,2:high\n", "target 'high' is not a number")]:
        p.write_text(text)
        with pytest.raises(TSFormatError, match=words) as e:
            read_ts(p)
        assert str(p) in str(e.value)
