"""Table values that used to go wrong without a word: huge numbers, text and `inf` cells, a bad
encoding, one class; and the errors that name the cell (the CSV line, or the DataFrame row).
"""
import json
import math
import re
import warnings

import numpy as np
import pytest

from hotstart import TabularClassificationSingle, TabularRegression
from hotstart.blocks import Continuous
from hotstart.datasets import DatasetError, TableData
from hotstart.errors import HotstartError
from hotstart.strict_json import NotJSONError, dumps


def _csv(tmp_path, text, name="t.csv", encoding="utf-8"):
    path = tmp_path / name
    path.write_bytes(text.encode(encoding))
    return path


def _rows(n=40, huge=None):
    rng = np.random.default_rng(0)
    x = rng.normal(10, 2, n)
    if huge is not None:
        x[3] = huge
    return "x,z,t\n" + "".join(f"{float(v)!r},{rng.normal():.3f},{'pq'[i % 2]}\n" for i, v in enumerate(x)), x


@pytest.mark.parametrize("huge", [3e38, -3.4e38, float(np.finfo(np.float32).max)])
def test_a_huge_value_keeps_the_statistics_finite_and_json_valid(tmp_path, huge):
    """Before: the std was inf, every encoded value 0, and `Infinity` in task.json and the ONNX metadata.
    (Values beyond float32's range are refused: the next test.)"""
    from hotstart.export.metadata import page_fields, task_metadata

    text, x = _rows(huge=huge)
    data, blocks = TableData(_csv(tmp_path, text), target="t", continuous=["x", "z"])
    task = TabularClassificationSingle(blocks).setup(data)
    stats = task.preprocessing.to_dict()
    assert np.isfinite([stats["mean"]["x"], stats["std"]["x"], stats["median"]["x"]]).all()
    assert stats["mean"]["x"] == pytest.approx(np.mean(x / huge) * huge, rel=1e-9)
    assert stats["std"]["x"] == pytest.approx(np.std(x / abs(huge)) * abs(huge), rel=1e-9)
    encoded = task.preprocessing.encode_rows(list(data.inputs))
    assert np.isfinite(encoded).all()
    assert len(set(encoded[:, 0].tolist())) == 2  # the huge row apart from the others, not all 0
    json.loads(dumps(task.to_dict(), "task"), parse_constant=pytest.fail)
    for value in task_metadata(task).values():
        if value.startswith(("{", "[")):
            json.loads(value, parse_constant=pytest.fail)
    json.loads(json.dumps(page_fields(task), allow_nan=False))


@pytest.mark.parametrize("huge", ["1e308", "-1.7e308", "3.5e38"])
def test_an_input_beyond_float32_is_refused_naming_its_file_line_and_column(tmp_path, huge):
    """Training is float32: a 1e308 cell became inf once encoded (in the validation split, whose
    statistics are the training split's) and the fit ended in "training diverged"."""
    pd = pytest.importorskip("pandas")
    text, _ = _rows()
    lines = text.splitlines()
    lines[6] = f"{huge},0.5,p"  # line 7 of the file: the header is line 1
    path = _csv(tmp_path, "\n".join(lines) + "\n")
    with pytest.raises(DatasetError) as e:
        TableData(path, target="t")
    assert re.search(rf"continuous column 'x' of .*t\.csv holds {re.escape(repr(float(huge)))} in line 7, beyond "
                     r"float32's range", str(e.value)), str(e.value)
    df = pd.read_csv(path)
    with pytest.raises(DatasetError, match=r"continuous column 'x' of the DataFrame holds .* in row 5, beyond float32"):
        TableData(df, target="t")


def test_missing_cells_are_read_in_any_case(tmp_path):
    """`NaN` and `nan` were missing, `NAN` made the column text (categorical, with a warning)."""
    text, _ = _rows(n=8)
    lines = text.splitlines()
    for i, cell in zip((1, 2, 3, 4, 5), ("NAN", "Nan", "-nan", "NULL", "n/a")):
        lines[i] = cell + lines[i][lines[i].index(","):]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        data, (row, _) = TableData(_csv(tmp_path, "\n".join(lines) + "\n"), target="t")
    assert "x" in row.continuous and [np.isnan(r["x"]) for r in data.inputs][:6] == [True] * 5 + [False]


def test_a_regression_target_beyond_float32_is_refused_naming_its_line(tmp_path):
    """Targets are float32: 1e308 would become inf (and its std inf) without a word."""
    rows = ["x,z,y"] + [f"{i},{i % 3},{1e308 if i == 5 else i * 1.5}" for i in range(30)]
    with pytest.raises(DatasetError, match=r"target column 'y' of .*t\.csv holds 1e\+308 in line 7, beyond float32"):
        TableData(_csv(tmp_path, "\n".join(rows) + "\n"), target="y", continuous=["x", "z"])
    rows = ["x,z,y"] + [f"{i},{i % 3},{3e38 if i == 5 else i * 1.5}" for i in range(30)]
    data, blocks = TableData(_csv(tmp_path, "\n".join(rows) + "\n"), target="y", continuous=["x", "z"])
    task = TabularRegression(blocks).setup(data)
    prep = task.preprocessing
    assert np.isfinite(prep.target_mean + prep.target_std).all()
    json.loads(dumps(task.to_dict(), "task"), parse_constant=pytest.fail)


def test_non_json_floats_are_refused_where_task_facts_are_written(tmp_path):
    """Saving a learner and exporting metadata with an infinite statistic: an error naming the key."""
    from hotstart.export.metadata import task_metadata

    bad = {"a": [1.0, {"b": float("inf")}]}
    with pytest.raises(NotJSONError, match=r"where: a\.1\.b is inf"):
        dumps(bad, "where")
    text, _ = _rows()
    data, blocks = TableData(_csv(tmp_path, text), target="t", continuous=["x", "z"])
    task = TabularClassificationSingle(blocks).setup(data)
    task.preprocessing.std["x"] = float("inf")  # a damaged statistic
    with pytest.raises(NotJSONError, match=r"metadata key 'table'.*std\.x is inf"):
        task_metadata(task)


def test_a_bad_cell_error_names_its_line_and_value(tmp_path):
    """Before: a CSV numeric column with one text cell was text throughout, so the error named
    row 0 and its (good) value '1.5'."""
    path = _csv(tmp_path, "x,y,t\n1.5,a,p\n2.5,b,q\n\nabc,c,p\n4,d,q\n")
    with pytest.raises(DatasetError, match=r"column 'x' of .*t\.csv holds 'abc' in line 5, which is not a finite"):
        TableData(path, target="t", continuous=["x"])
    path = _csv(tmp_path, "x,t\n1,1.0\n2,2.5\n3,oops\n", name="r.csv")
    with pytest.raises(DatasetError, match=r"target column 't' of .*r\.csv holds 'oops' in line 4"):
        TableData(path, target="t", continuous=["x"], regression=True)
    path = _csv(tmp_path, "x,t\n1,p\n2,\n", name="m.csv")
    with pytest.raises(DatasetError, match=r"missing value\(s\), first in line 3"):
        TableData(path, target="t")


def test_a_bad_cell_in_a_dataframe_names_its_row_and_index():
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame({"x": [1.0, 2.0, "abc", 4.0], "t": list("pqpq")}, index=[10, 11, 12, 13])
    with pytest.raises(DatasetError, match=r"holds 'abc' in row 2 \(index 12\)"):
        TableData(df, target="t", continuous=["x"])
    df = pd.DataFrame({"x": [1.0, float("inf"), 3.0], "t": list("pqp")})
    with pytest.raises(DatasetError, match=r"holds inf in row 1, which is not a finite number"):
        TableData(df, target="t", continuous=["x"])


@pytest.mark.parametrize("odd", ["abc", "inf", "-inf", "?"])
def test_numbers_read_as_categories_because_of_one_cell_warn_naming_the_column(tmp_path, odd):
    lines = ["x,t"] + [f"{i * 1.5},{'pq'[i % 2]}" for i in range(30)]
    lines[8] = f"{odd},p"
    path = _csv(tmp_path, "\n".join(lines) + "\n")
    with pytest.warns(UserWarning, match=rf"column 'x' of .*t\.csv is read as categorical.*first '{re.escape(odd)}' in line 9"):
        _, (row, _) = TableData(path, target="t")
    assert row.categorical == ["x"]
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame({"x": [i * 1.5 for i in range(30)], "t": ["pq"[i % 2] for i in range(30)]})
    df.loc[4, "x"] = float("inf")
    with pytest.warns(UserWarning, match=r"column 'x' of the DataFrame is read as categorical.*first inf in row 4"):
        TableData(df, target="t")


def test_a_numeric_target_read_as_classes_because_of_one_cell_warns(tmp_path):
    """Before: a regression target with one text cell became a classifier of 30 'classes' silently."""
    lines = ["x,y"] + [f"{i},{i * 1.5}" for i in range(30)]
    lines[12] = "11,unknown"
    with pytest.warns(UserWarning, match=r"column 'y' of .*t\.csv is read as categorical.*first 'unknown' in line 13"):
        _, (_, target) = TableData(_csv(tmp_path, "\n".join(lines) + "\n"), target="y")
    assert type(target).__name__ == "Label"
    with pytest.raises(DatasetError, match=r"target column 'y' .* holds 'unknown' in line 13"):
        TableData(_csv(tmp_path, "\n".join(lines) + "\n"), target="y", regression=True)


def test_numbers_stored_as_text_in_a_dataframe_are_read_as_the_csv_reads_them(tmp_path):
    """Before: ``df[c].astype(str)`` (or ``read_csv(dtype=str)``) made a column of 40 numbers 40
    categories, silently, where the same cells in a CSV file were a continuous column."""
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"a": rng.normal(size=40).round(3), "n": [i % 3 for i in range(40)],
                       "m": [float(i) for i in range(40)], "y": ["p", "q"] * 20})
    df.loc[5, "a"] = None
    df.to_csv(tmp_path / "t.csv", index=False)
    data_csv, blocks_csv = TableData(tmp_path / "t.csv", target="y")
    as_text = df.astype({"a": str, "n": str, "m": str}).astype(object)
    as_text.loc[5, "a"] = None
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        data_df, blocks_df = TableData(as_text, target="y")
    assert blocks_df == blocks_csv
    assert blocks_df[0].continuous == ["a", "m"] and blocks_df[0].categorical == ["n"]
    assert data_df.inputs[0] == data_csv.inputs[0] and math.isnan(data_df.inputs[5]["a"])
    assert [r["a"] for r in data_df.inputs[:3]] == [float(v) for v in df["a"][:3]]
    _, (_, target) = TableData(pd.DataFrame({"x": ["p", "q"] * 15, "t": [str(i * 1.5) for i in range(30)]}),
                               target="t")
    assert target == Continuous(1)  # a regression, as from the file
    # and its own rows, numbers as text, predict as the same numbers do (the contract reads them so)
    from hotstart import TabularClassificationSingle, tasklearner

    learner = tasklearner(TabularClassificationSingle(blocks_df), data_df, seed=0, progress=False)
    row = as_text.drop(columns="y").iloc[[0]]
    assert isinstance(row["a"].iloc[0], str)
    text_label, text_probs = learner.predict(row)
    label, probs = learner.predict(df.drop(columns="y").iloc[[0]])
    assert text_label == label and np.array_equal(text_probs, probs)


def test_text_columns_and_clean_numbers_do_not_warn(tmp_path):
    lines = ["x,w,t"] + [f"{i * 1.5},{'abc'[i % 3]},{'pq'[i % 2]}" for i in range(30)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _, (row, _) = TableData(_csv(tmp_path, "\n".join(lines) + "\n"), target="t")
    assert row.continuous == ["x"] and row.categorical == ["w"]


def test_a_csv_that_is_not_utf8_names_the_file_line_and_encodings(tmp_path):
    path = _csv(tmp_path, "x,t\n1,caf\u00e9\n2,the\n", encoding="latin-1")
    with pytest.raises(DatasetError, match=r"t\.csv is not UTF-8 text \(byte 0xe9 on line 2\).*encoding='cp1252'"):
        TableData(path, target="t")


def test_a_one_class_target_is_refused_naming_the_column_and_when_the_task_is_built(tmp_path):
    """Before: accepted, then a traceback from torchmetrics a whole epoch later."""
    from hotstart.blocks import Label, TableRow

    with pytest.raises(DatasetError, match=r"target column 't' of .*t\.csv holds one value only \('p', in all 3 rows\)"):
        TableData(_csv(tmp_path, "x,t\n1,p\n2,p\n3,p\n"), target="t")
    with pytest.raises(HotstartError, match=r"TabularClassificationSingle needs at least 2 classes, got 1: \['p'\]"):
        TabularClassificationSingle((TableRow(["x"], []), Label(["p"])))


@pytest.mark.parametrize("key,value", [("std", float("inf")), ("std", 0.0), ("mean", float("nan")),
                                       ("median", float("-inf"))])
def test_given_statistics_must_be_finite_naming_the_column(key, value):
    from hotstart.encodings import TabularPreprocessing
    from hotstart.errors import UsageError

    stats = {"median": {"x": 1.0}, "mean": {"x": 1.0}, "std": {"x": 1.0}}
    stats[key]["x"] = value
    with pytest.raises(UsageError, match=rf"the {key} of column 'x' is {value}"):
        TabularPreprocessing([], ["x"], vocab={}, na_columns=[], **stats)
    with pytest.raises(UsageError, match=r"target_std\[0\] is 0.0"):
        TabularPreprocessing([], ["x"], vocab={}, na_columns=[], median={"x": 1.0}, mean={"x": 1.0},
                             std={"x": 1.0}, target_mean=[0.0], target_std=[0.0])


def test_a_task_json_with_infinity_is_refused_at_load_naming_the_file():
    """Python's json reads `Infinity`; a statistic that is infinite encodes every value to 0."""
    from hotstart.errors import SavedModelError
    from hotstart.learner.serialization import FORMAT, parse_meta

    text = '{"format": "%s", "task": {"std": {"x": Infinity}}, "model": {}}' % FORMAT
    with pytest.raises(SavedModelError, match=r"run/task\.json is not valid JSON.*Infinity"):
        parse_meta(text.encode(), "run/task.json")
