"""``hotstart predict`` with a table model: a CSV of rows in, one prediction per row out, for an
.onnx export and a saved model folder alike; bad cells and missing columns named."""
import csv
import json

import numpy as np
import pytest
import torch

from hotstart import datasets, tasklearner
from hotstart.cli import main
from hotstart.contract.table_rows import read_rows
from hotstart.datasets.penguins import PENGUINS_FILE
from hotstart.tasks import TabularClassificationSingle, TabularRegression

N_ROWS = 40


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    """Species (classes) and body mass (regression) from the penguins table: saved and exported."""
    pytest.importorskip("onnxruntime")
    root = tmp_path_factory.mktemp("table-models")
    out = {}
    for target, task_cls in (("species", TabularClassificationSingle), ("body_mass_g", TabularRegression)):
        data, blocks = datasets.load("penguins", target=target)
        learner = tasklearner(task_cls(blocks), data, seed=0, progress=False)
        learner.fit_one_cycle(1, 1e-2)  # parity, not accuracy
        learner.save(root / target)
        learner.export(root / f"{target}.onnx")
        out[target] = learner, data, root
    return out


def _rows_csv(path, n=N_ROWS, edit=None):
    """The first `n` rows of the penguins CSV (all its columns, the target too), optionally edited."""
    with open(PENGUINS_FILE, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))[:n]
    if edit:
        edit(rows)
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    return path


def test_rows_split_as_training_splits_the_file(tmp_path):
    """A quoted cell holding a newline, and \u2028, \x85 or \x0c inside cells, are text, as training's
    reader (open(newline="")) reads them; str.splitlines broke those rows apart."""
    table = {"categorical": ["c"], "continuous": ["x"], "vocab": {"c": ["#na#", "two\nlines"]}}
    path = tmp_path / "odd.csv"
    path.write_text('c,x\n"two\nlines",1\nsep\u2028here,2\na\x85b,3\n', encoding="utf-8", newline="")
    rows = [(line, row) for line, row in read_rows(path, table)]
    assert rows == [(3, {"x": 1.0, "c": "two\nlines"}), (4, {"x": 2.0, "c": "sep\u2028here"}),
                    (5, {"x": 3.0, "c": "a\x85b"})]


def test_csv_rows_encode_as_training_read_them(models, tmp_path):
    learner, data, _ = models["species"]
    prep = learner.task.preprocessing
    table = {k: prep.to_dict()[k] for k in ("categorical", "continuous", "vocab")}
    rows = [row for _, row in read_rows(_rows_csv(tmp_path / "rows.csv"), table)]
    assert len(rows) == N_ROWS  # (row 4 of the file has NA cells: missing values, not errors)
    np.testing.assert_array_equal(prep.encode_rows(rows), prep.encode_rows(list(data.inputs[:N_ROWS])))


@pytest.mark.parametrize("model", ["species.onnx", "species"])
def test_predict_prints_one_line_per_row_equal_to_learner_predict(models, tmp_path, capsys, model):
    learner, data, root = models["species"]
    assert main(["predict", str(root / model), str(_rows_csv(tmp_path / "rows.csv")), "--json"]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [o["line"] for o in lines] == list(range(2, N_ROWS + 2))  # the header is line 1
    for o, row in zip(lines, data.inputs[:N_ROWS]):
        label, probs = learner.predict(row)
        assert o["label"] == label
        top_class, top_p = o["top"][0]
        assert top_class == label and top_p == pytest.approx(float(probs.max()), abs=1e-5)


@pytest.mark.parametrize("model", ["body_mass_g.onnx", "body_mass_g"])
def test_a_regression_prints_its_values(models, tmp_path, capsys, model):
    learner, data, root = models["body_mass_g"]
    assert main(["predict", str(root / model), str(_rows_csv(tmp_path / "rows.csv", 5))]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 5 and out[0].startswith(f"{tmp_path / 'rows.csv'} line 2: ")
    got = [float(line.rsplit(": ", 1)[1]) for line in out]
    table = {k: learner.task.preprocessing.to_dict()[k] for k in ("categorical", "continuous", "vocab")}
    rows = [row for _, row in read_rows(tmp_path / "rows.csv", table)]  # row 4 (no body mass) is an input too
    want = [float(learner.predict(row)[0][0]) for row in rows]
    np.testing.assert_allclose(got, want, rtol=1e-4)


def test_bad_cells_and_missing_columns_are_named(models, tmp_path, capsys):
    _, _, root = models["species"]

    def damage(rows):
        rows[2]["bill_length_mm"] = "long"
        rows[5]["flipper_length_mm"] = "inf"

    path = _rows_csv(tmp_path / "bad.csv", 8, damage)
    assert main(["predict", str(root / "species.onnx"), str(path)]) == 1
    captured = capsys.readouterr()
    assert len(captured.out.splitlines()) == 6  # the other rows are still predicted
    errors = captured.err.splitlines()
    assert errors == [f"error: {path} line 4, column 'bill_length_mm': 'long' is not a finite number (the column is "
                      f"continuous; leave the cell empty for a missing value)",
                      f"error: {path} line 7, column 'flipper_length_mm': 'inf' is not a finite number (the column is "
                      f"continuous; leave the cell empty for a missing value)"]

    no_island = _rows_csv(tmp_path / "no_island.csv", 3, lambda rows: [r.pop("island") for r in rows])
    good = _rows_csv(tmp_path / "good.csv", 2)
    # a file without rows to give (a missing column, no file at all) is an error line; the next file is predicted
    assert main(["predict", str(root / "species"), str(no_island), str(tmp_path / "none.csv"), str(good),
                 "--json"]) == 1
    captured = capsys.readouterr()
    assert "lacks the model's input column(s) ['island']" in captured.err and "none.csv" in captured.err
    objects = [json.loads(line) for line in captured.out.splitlines()]
    assert [(o["file"].rsplit("/", 1)[1], o.get("line"), "error" in o) for o in objects] == [
        ("no_island.csv", None, True), ("none.csv", None, True), ("good.csv", 2, False), ("good.csv", 3, False)]
    image = tmp_path / "a.png"
    image.write_bytes(b"")
    assert main(["predict", str(root / "species.onnx"), str(image)]) == 1
    assert "predicts table rows: give it CSV files" in capsys.readouterr().err


def _strict_json(line):
    """json.loads that refuses NaN and Infinity (which Python's json would otherwise accept)."""
    def refuse(name):
        raise ValueError(f"{name} is not JSON")
    return json.loads(line, parse_constant=refuse)


@pytest.mark.parametrize("model", ["species.onnx", "species", "body_mass_g.onnx", "body_mass_g"])
def test_a_cell_that_overflows_float32_is_named_and_json_stays_json(models, tmp_path, capsys, model):
    """1e308 is a finite number, so the reader took it; normalized it overflowed float32, every
    probability came out NaN, the exit status was 0 and ``--json`` printed NaN, which is not JSON."""
    root = models["species"][2]

    def damage(rows):
        rows[1]["bill_length_mm"] = "1e308"
        rows[3]["flipper_length_mm"] = "-3e307"

    path = _rows_csv(tmp_path / "huge.csv", 6, damage)
    assert main(["predict", str(root / model), str(path), "--json"]) == 1
    captured = capsys.readouterr()
    lines = [_strict_json(line) for line in captured.out.splitlines()]
    assert [o["line"] for o in lines] == [2, 3, 4, 5, 6, 7]  # the other rows are still predicted
    assert [o["line"] for o in lines if "error" in o] == [3, 5]  # one object per row: the failed ones say why
    errors = captured.err.splitlines()
    assert len(errors) == 2, errors
    assert errors[0].startswith(f"error: {path} line 3: column 'bill_length_mm': 1e+308 is out of this model's range")
    assert errors[1].startswith(f"error: {path} line 5: column 'flipper_length_mm': -3e+307 is out of")
    assert all("float32" in e for e in errors)


@pytest.mark.parametrize("target", ["species", "body_mass_g"])
def test_a_table_model_bundle_predicts_csv_rows_as_hotstart_predict(models, tmp_path, target):
    """``export --bundle`` of a table model raised AttributeError ('TabularClassificationSingle' has
    no 'size') after writing model.onnx, predictor.py and the contract (no README), and the bundle's
    predictor took a CSV path for a row. Now the bundle is whole, its README says how to predict rows,
    and ``python predictor.py model.onnx rows.csv`` prints what ``hotstart predict`` prints."""
    import subprocess
    import sys

    _, _, root = models[target]
    bundle = tmp_path / "bundle"
    assert main(["export", str(root / target), "--bundle", str(bundle)]) == 0
    assert sorted(p.name for p in bundle.iterdir()) == ["README.md", "hotstart-export.json", "hotstart_contract", "model.onnx",
                                                        "predictor.py"]
    readme = (bundle / "README.md").read_text()
    assert "python predictor.py model.onnx rows.csv" in readme and "continuous ['bill_length_mm'" in readme
    call = "label, probabilities = p.predict(" if target == "species" else "values, _ = p.predict("
    assert call in readme
    rows = _rows_csv(tmp_path / "rows.csv", 6, lambda r: r[2].update(bill_length_mm="oops"))
    direct = subprocess.run([sys.executable, "-m", "hotstart", "predict", str(root / f"{target}.onnx"), str(rows),
                             "--no-server"], capture_output=True, text=True, timeout=120)
    bundled = subprocess.run([sys.executable, "predictor.py", "model.onnx", str(rows)], capture_output=True,
                             text=True, timeout=120, cwd=bundle)
    assert direct.returncode == bundled.returncode == 1, (direct.stderr, bundled.stderr)
    assert bundled.stdout == direct.stdout and len(bundled.stdout.splitlines()) == 5
    assert bundled.stderr == direct.stderr and f"{rows} line 4, column 'bill_length_mm'" in bundled.stderr


def test_predictor_takes_a_dataframe_as_rows_and_refuses_an_unknown_target(models):
    """`predict_many(df)` iterated the DataFrame's column names ("a table row must be a mapping ...,
    got str"); `evaluate` counted a target that is none of the classes ("Emperor") as a miss."""
    import pandas as pd

    from hotstart.predictor import Predictor

    learner, data, root = models["species"]
    p = Predictor.load(root / "species.onnx")
    df = pd.read_csv(PENGUINS_FILE).dropna().head(8)
    rows = df.drop(columns="species").to_dict("records")
    assert [label for label, _ in p.predict_many(df.drop(columns="species"))] == [p.predict(r)[0] for r in rows]
    targets = list(df["species"])
    assert p.evaluate(df, targets)["n"] == 8
    with pytest.raises(ValueError, match=r"target 'Emperor' \(position 1\) is not one of the model's classes"):
        p.evaluate(df.head(2), [targets[0], "Emperor"])
