"""The ``.ts`` reader and writer, on every shipped file and on damaged ones."""
from __future__ import annotations

import math
import re

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

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


UNI = "@problemName tiny\n@univariate true\n@equalLength true\n@classLabel true a b\n@data\n"


@pytest.mark.parametrize("header, line, words", [
    ("@univariate true\n@dimensions 3\n@classLabel true a\n@data\n", "1 (and line 2)",
     "@univariate true with @dimensions 3"),
    ("@univariate false\n@dimensions 1\n@classLabel true a\n@data\n", "1 (and line 2)",
     "@univariate false with @dimensions 1"),
    ("@dimensions 2\n@classLabel true a\n@dimensions 3\n@data\n", "3", "@dimensions is given twice"),
    ("@equalLength false\n@seriesLength 4\n@data\n", "1 (and line 2)", "@equalLength false with @seriesLength 4"),
    ("@classLabel true a\n@targetLabel true\n@data\n", "1 (and line 2)", "both @classLabel true and @targetLabel"),
    ("@problemName x\n@classLabels true a b\n@data\n1,2:a\n", "2", "did you mean @classlabel?"),
])
def test_a_header_that_contradicts_itself_is_refused_at_its_lines(tmp_path, header, line, words):
    p = tmp_path / "bad.ts"
    p.write_text(header + "1,2:a\n")
    with pytest.raises(TSFormatError) as e:
        read_ts(p)
    assert str(e.value).startswith(f"{p}:{line}:") and words in str(e.value), str(e.value)


@pytest.mark.parametrize("body, line, words", [
    ("1,2:a\n1,2,3:b\n", 8, "length 3, but the one on"),  # @equalLength true, no @seriesLength
    ("1,?:a\n", 7, "missing ('?'), but the header says @missing false on line 4"),
])
def test_data_that_contradicts_the_header_names_both_lines(tmp_path, body, line, words):
    p = tmp_path / "bad.ts"
    p.write_text("@problemName x\n@univariate true\n@equalLength true\n@missing false\n@classLabel true a b\n@data\n"
                 + body)
    with pytest.raises(TSFormatError) as e:
        read_ts(p)
    assert f"{p}:{line}:" in str(e.value) and words in str(e.value), str(e.value)


def test_nan_in_every_spelling_is_missing_and_infinity_is_refused(tmp_path):
    p = tmp_path / "nan.ts"
    p.write_text(UNI.replace("@equalLength true", "@equalLength false") + "1,?,NaN,nan,NAN,-nan,+NaN:a\n")
    np.testing.assert_array_equal(read_ts(p).series[0], [[1] + [np.nan] * 6])
    p.write_text(UNI + "1,-inf:a\n")
    with pytest.raises(TSFormatError, match=r":6: channel 0, value 1: '-inf' is not a finite number"):
        read_ts(p)


def test_a_byte_order_mark_is_read_past(tmp_path):
    p = tmp_path / "bom.ts"
    p.write_bytes(b"\xef\xbb\xbf" + (UNI + "1,2:a\n3,4:b\n").encode())
    f = read_ts(p)
    assert f.problem_name == "tiny" and f.labels == ["a", "b"] and f.series[1].tolist() == [[3.0, 4.0]]


def test_a_class_label_line_read_wrongly_is_named_where_it_is(tmp_path):
    p = tmp_path / "labels.ts"
    p.write_text("@problemName x\n@classLabel\ttrue a b\n@data\n1,2:b\n")  # a tab: was one unknown key
    assert read_ts(p).labels == ["b"] and read_ts(p).class_labels == ["a", "b"]
    p.write_text("@problemName x\n@classLabel true a,b\n@data\n1,2:a\n")  # commas: one class "a,b"
    with pytest.raises(TSFormatError) as e:
        read_ts(p)
    assert str(e.value).startswith(f"{p}:4: label 'a' is not among the classes that the header lists on line 2")
    p.write_text("@problemName x\n@data\n1,2:a\n")  # no @classLabel at all
    with pytest.raises(TSFormatError, match=":3: .*the header has no @classLabel true or @targetLabel true line"):
        read_ts(p)


@pytest.mark.parametrize("target", ["NaN", "?", "inf"])
def test_a_regression_target_that_is_missing_or_not_finite_names_its_line(tmp_path, target):
    p = tmp_path / "reg.ts"
    p.write_text(f"@problemName r\n@classLabel false\n@targetLabel true\n@data\n1,2:0.5\n3,4:{target}\n")
    with pytest.raises(TSFormatError) as e:
        read_ts(p)
    assert str(e.value).startswith(f"{p}:6: the regression target {target!r} is not")


def test_write_ts_refuses_what_read_ts_could_not_read_back(tmp_path):
    from hotstart.datasets import DatasetError

    one = [np.zeros((1, 3))]
    for kwargs, words in [(dict(labels=["a b"]), "labels[0] = 'a b'"), (dict(labels=["a:b"]), "labels[0] = 'a:b'"),
                          (dict(labels=[""]), "labels[0] = ''"),
                          (dict(labels=["a"], class_labels=["a", "b c"]), "class_labels[1] = 'b c'"),
                          (dict(labels=["z"], class_labels=["a"]), "['z'] are not among"),
                          (dict(labels=["a", "b"]), "1 series but 2 labels"),
                          (dict(targets=[math.nan]), "targets[0] = nan"),
                          (dict(problem_name="two\nlines"), "problem_name=")]:
        with pytest.raises(DatasetError, match=re.escape(words)):
            write_ts(tmp_path / "x.ts", one, **kwargs)
    with pytest.raises(DatasetError, match="series 1 holds an infinite value"):
        write_ts(tmp_path / "x.ts", [np.zeros((1, 2)), np.array([[1.0, np.inf]])], labels=["a", "b"])
    assert not (tmp_path / "x.ts").exists()


_LABEL = st.text(st.characters(codec="utf-8", exclude_characters="\x00"), min_size=0, max_size=6)


@given(labels=st.lists(_LABEL, min_size=1, max_size=4),
       values=st.lists(st.floats(allow_infinity=False, width=64), min_size=1, max_size=4))
def test_write_ts_round_trips_every_label_it_accepts(tmp_path_factory, labels, values):
    """Whatever write_ts writes, read_ts reads back the same: it refuses exactly the labels the
    format cannot hold (empty, whitespace, ':') and writes every other one."""
    from hotstart.datasets import DatasetError

    path = tmp_path_factory.mktemp("rt") / "rt.ts"
    series = [np.array([values]) for _ in labels]
    writable = all(l and not any(c.isspace() or c == ":" for c in l) for l in labels)
    try:
        write_ts(path, series, labels=labels)
    except DatasetError as e:
        assert not writable, e
        return
    assert writable
    back = read_ts(path)
    assert back.labels == labels and sorted(set(labels)) == back.class_labels
    assert all(np.array_equal(a, b, equal_nan=True) for a, b in zip(back.series, series))
