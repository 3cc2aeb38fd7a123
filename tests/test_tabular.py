"""Tables: TableRow, TabularPreprocessing (training-split statistics), TableData, the penguins table,
the tabular model, and the two tasks end to end (fit, predict, save / load, show_results, CLI, warmup)."""
import hashlib
import json
import math

import numpy as np
import pytest
import torch

from hotstart import datasets, load_learner, tasklearner
from hotstart.blocks import Block, BlockValueError, Continuous, Label, TableRow, TableTensor
from hotstart.blocks.table import category_key
from hotstart.datasets import DatasetError, TableData
from hotstart.datasets.penguins import PENGUINS_FILE, PENGUINS_SHA256
from hotstart.encodings import Encoding, TabularPreprocessing
from hotstart.models.tabular import TabularBackbone, emb_sz_rule
from hotstart.tasks import ImageClassificationSingle, SupervisedTask, TabularClassificationSingle, TabularRegression

ROW = TableRow(categorical=["color", "size"], continuous=["x", "y"])
ODD_ROW = {"island": "Atlantis", "sex": None, "year": 2031, "bill_length_mm": None, "bill_depth_mm": 18.0,
           "flipper_length_mm": 190, "body_mass_g": float("nan")}  # an unseen island and year, missing values


@pytest.fixture(scope="module")
def species():
    """Penguin species from the other columns, trained once for the module (a second or two)."""
    data, blocks = datasets.load("penguins", target="species")
    learner = tasklearner(TabularClassificationSingle(blocks), data, seed=0, progress=False)
    learner.fit_one_cycle(10, 1e-2)
    return learner, data


# --- blocks --------------------------------------------------------------------------------

def test_table_row_checks_and_names_the_column():
    assert ROW.check({"color": "red", "size": 3, "x": 1.5, "y": None})
    assert ROW.check({"color": None, "size": float("nan"), "x": float("nan"), "y": np.float32(2), "extra": [1]})
    with pytest.raises(BlockValueError, match=r"row 4: row has no column\(s\) \['y'\]"):
        ROW.validate({"color": "red", "size": 1, "x": 1.0}, where="row 4")
    with pytest.raises(BlockValueError, match="column 'x' is continuous.*'tall'"):
        ROW.validate({"color": "red", "size": 1, "x": "tall", "y": 1.0})
    with pytest.raises(BlockValueError, match="column 'y': inf is not a finite number"):
        ROW.validate({"color": "red", "size": 1, "x": 1.0, "y": float("inf")})
    with pytest.raises(BlockValueError, match="column 'color'"):
        ROW.validate({"color": ["red"], "size": 1, "x": 1.0, "y": 1.0})
    assert not ROW.check("color=red")
    with pytest.raises(ValueError, match="both categorical and continuous"):
        TableRow(categorical=["a"], continuous=["a"])
    assert category_key(2007) == category_key(2007.0) == category_key("2007") == "2007"
    assert category_key(True) == "True" and category_key(None) is None and category_key(float("nan")) is None


def test_table_row_mocks_hold_missing_values_and_unseen_categories_and_round_trip():
    rng = np.random.default_rng(0)
    rows = [ROW.mock(rng) for _ in range(400)]
    assert all(ROW.check(r) for r in rows)
    assert any(r["color"] is None for r in rows) and any(math.isnan(r["x"]) for r in rows)
    assert any("new" in (r["color"] or "") for r in rows)  # categories never seen before
    assert Block.from_dict(json.loads(json.dumps(ROW.to_dict()))) == ROW
    assert repr(ROW.mock(np.random.default_rng(5))) == repr(ROW.mock(np.random.default_rng(5)))  # NaN != NaN
    enc = TableTensor([3, 4], 2)
    assert enc.check(enc.mock(np.random.default_rng(0))) and enc.shape() == (4,)
    assert Block.from_dict(json.loads(json.dumps(enc.to_dict()))) == enc


# --- preprocessing ---------------------------------------------------------------------------

def _rows():
    return [{"color": "red", "size": 1, "x": 1.0, "y": 10.0},
            {"color": "blue", "size": 2, "x": None, "y": 20.0},
            {"color": None, "size": 1, "x": 3.0, "y": 30.0},
            {"color": "red", "size": 3.0, "x": 7.0, "y": 40.0}]


def test_preprocessing_statistics_match_numpy_and_round_trip_through_json():
    prep = TabularPreprocessing(ROW.categorical, ROW.continuous).fit(_rows())
    assert prep.vocab == {"color": ["#na#", "blue", "red"], "size": ["#na#", "1", "2", "3"]}
    assert prep.na_columns == ["x"]  # only columns with a hole in training get an indicator
    assert prep.median == {"x": 3.0, "y": 25.0}
    filled = np.array([1.0, 3.0, 3.0, 7.0])
    assert prep.mean["x"] == pytest.approx(filled.mean()) and prep.std["x"] == pytest.approx(filled.std() + 1e-7)
    assert prep.cardinalities() == [3, 4, 3]
    again = Encoding.from_dict(json.loads(json.dumps(prep.to_dict())))
    assert again == prep and again.fitted

    enc = prep.encode(ROW, {"color": "green", "size": 2.0, "x": float("nan"), "y": 20.0})
    assert enc.dtype == torch.float32 and enc.shape == (5,)
    assert enc[:3].tolist() == [0.0, 2.0, 2.0]  # unseen colour -> 0; size 2.0 is category "2"; x missing
    assert enc[3].item() == pytest.approx((3.0 - filled.mean()) / (filled.std() + 1e-7), rel=1e-6)  # the median
    torch.testing.assert_close(torch.from_numpy(prep.encode_rows(_rows())),
                               torch.stack([prep.encode(ROW, r) for r in _rows()]))
    decoded = prep.decode(TableTensor(prep.cardinalities(), 2), prep.encode(ROW, _rows()[1]))
    assert decoded["color"] == "blue" and decoded["size"] == "2" and decoded["x"] is None
    assert decoded["y"] == pytest.approx(20.0)


def test_preprocessing_needs_statistics_and_values_in_training():
    with pytest.raises(ValueError, match=r"no statistics yet.*task.setup"):
        TabularPreprocessing(["color"], ["x"]).encode(ROW, _rows()[0])
    rows = [{"color": "a", "x": None}, {"color": "b", "x": float("nan")}]
    with pytest.raises(ValueError, match="column 'x' has no values in the training split"):
        TabularPreprocessing(["color"], ["x"]).fit(rows)


def test_statistics_come_from_the_training_split_only():
    data, blocks = datasets.load("penguins", target="species")
    task = TabularClassificationSingle(blocks)
    assert task.needs_setup
    before = tasklearner(task, data, seed=3, progress=False)
    valid_rows = before.valid_loader.dataset.inputs
    train_rows = before.train_loader.dataset.inputs
    stats = before.task.preprocessing.to_dict()
    assert not before.task.needs_setup and stats["mean"] and stats["vocab"]["island"]

    def changed(rows_to_edit):
        rows = [dict(r) for r in data.inputs]
        for i in rows_to_edit.indices[:3]:
            rows[i].update(island="Atlantis", body_mass_g=1e6, sex="unknown")
        return tasklearner(task, (rows, data.targets), seed=3, progress=False).task.preprocessing.to_dict()

    assert changed(valid_rows) == stats            # validation rows changed: the same statistics
    assert changed(train_rows) != stats            # training rows changed: different ones
    assert "Atlantis" in changed(train_rows)["vocab"]["island"]


# --- data -------------------------------------------------------------------------------------

def test_penguins_ship_with_the_package():
    assert hashlib.sha256(PENGUINS_FILE.read_bytes()).hexdigest() == PENGUINS_SHA256
    data, (row, label) = datasets.load("penguins", target="species")
    assert len(data[0]) == 344 and label == Label(["Adelie", "Chinstrap", "Gentoo"])
    assert [data.targets.count(c) for c in label.classes] == [152, 68, 124]
    assert row == TableRow(categorical=["island", "sex", "year"],
                           continuous=["bill_length_mm", "bill_depth_mm", "flipper_length_mm", "body_mass_g"])
    assert sum(r["sex"] is None for r in data.inputs) == 11
    data, (row, target) = datasets.load("penguins", target="body_mass_g")
    assert len(data[0]) == 342 and target == Continuous(1) and "species" in row.categorical  # 2 rows lack the mass
    assert "penguins" in [e["name"] for e in datasets.catalog()]


def test_table_data_reads_csv_and_dataframes_alike(tmp_path):
    pd = pytest.importorskip("pandas")
    f = tmp_path / "t.csv"
    f.write_text("kind,n,price,note\na,1,2.5,x\nb,2,NA,\na,1,4.25,y\n")
    data, (row, target) = TableData(f, target="kind")
    assert row == TableRow(categorical=["n", "note"], continuous=["price"]) and target == Label(["a", "b"])
    assert data.inputs[1] == {"n": "2", "note": None, "price": data.inputs[1]["price"]}
    assert math.isnan(data.inputs[1]["price"])
    df = pd.DataFrame({"kind": ["a", "b", "a"], "n": [1, 2, 1], "price": [2.5, None, 4.25], "note": ["x", None, "y"]})
    data_df, blocks_df = TableData(df, target="kind")
    assert blocks_df == (row, target)
    assert [r["n"] for r in data_df.inputs] == [r["n"] for r in data.inputs] == ["1", "2", "1"]
    data, (row, target) = TableData(f, target="price", categorical=["kind"], continuous=[], dropna_target=True)
    assert target == Continuous(1) and len(data[0]) == 2 and row.categorical == ["kind"]
    np.testing.assert_array_equal(data.targets[1], np.array([4.25], dtype=np.float32))
    _, (_, target) = TableData(f, target="n", regression=True)
    assert target == Continuous(1)


def test_table_data_errors_name_the_column(tmp_path):
    f = tmp_path / "t.csv"
    f.write_text("a,b,c,empty\n1,x,NA,\n2,y,3,NA\n")
    with pytest.raises(DatasetError, match=r"no column\(s\) \['nope'\]"):
        TableData(f, target="a", categorical=["nope"])
    with pytest.raises(DatasetError, match="target column 'c' .* 1 missing value"):
        TableData(f, target="c")
    with pytest.raises(DatasetError, match="column 'empty' .* no values at all"):
        TableData(f, target="a")
    with pytest.raises(DatasetError, match="continuous column 'b' .* 'x'"):
        TableData(f, target="a", continuous=["b"], categorical=[])
    with pytest.raises(DatasetError, match="does not exist"):
        TableData(tmp_path / "missing.csv", target="a")


def test_a_dataframe_with_a_number_as_column_name_predicts_its_own_rows():
    """Before: TableData named column 1 "1", the row's key stayed 1, and predict said
    "row has no column(s) ['1']; it has ['1', 'a']". Keys are now read as text everywhere."""
    from hotstart.contract import InputValueError, TableEncoder
    from hotstart.errors import UsageError

    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"a": rng.normal(size=40), 1: rng.normal(size=40), "y": ["p", "q"] * 20})
    data, blocks = TableData(df, target="y")
    assert blocks[0] == TableRow([], ["a", "1"])
    learner = tasklearner(TabularClassificationSingle(blocks), data, seed=0, progress=False)
    rows = df.drop(columns="y")
    want = learner.predict({"a": rows["a"][0], "1": rows[1][0]})[1]
    for row in (rows.iloc[0], rows.iloc[[0]], {"a": rows["a"][0], 1: rows[1][0]}):
        torch.testing.assert_close(learner.predict(row)[1], want)
    with pytest.raises(UsageError) as e:
        learner.predict({"a": 0.5, 1: 0.1, "1": 0.2})
    assert str(e.value) == ("row has 2 keys that read as the same column name '1': 1 and '1' (column names are "
                            "read as text, as in training); rename one")
    with pytest.raises(BlockValueError, match=r"row has no column\(s\) \['x', 'y'\]; it has \[2, 'color', 'size'\] \(block"):
        ROW.validate({"color": "red", "size": 1, 2: 1.0})  # repr: an int key is not shown as text
    enc = TableEncoder({"categorical": ["2"], "continuous": ["1"], "na_columns": [], "vocab": {"2": ["#na#", "u"]},
                        "median": {"1": 0.0}, "mean": {"1": 1.0}, "std": {"1": 2.0}})
    np.testing.assert_array_equal(enc.encode({2: "u", 1: 5.0}), np.array([1.0, 2.0], dtype=np.float32))
    with pytest.raises(InputValueError, match=r"^row has 2 keys that read as the same column name '2': 2 and '2'"):
        enc.encode({2: "u", "2": "u", 1: 5.0})
    with pytest.raises(DatasetError) as e:
        TableData(pd.DataFrame({1: [1.0, 2.0], "1": [3.0, 4.0], "y": ["p", "q"]}), target="y")
    assert str(e.value) == ("TableData: the DataFrame has duplicate column names [1, '1'] (column names are read as "
                            "text, so 1 and '1' are one name); rename them")


# --- model and metrics ---------------------------------------------------------------------------

def test_embedding_sizes_follow_fastais_rule_and_the_model_rebuilds_from_json():
    assert [emb_sz_rule(n) for n in (2, 3, 4, 10, 100, 10_000, 10**7)] == [2, 3, 3, 6, 21, 278, 600]
    net = TabularBackbone([4, 3, 100], 5, layers=(20, 10), ps=0.2, emb_drop=0.1)
    assert [e.embedding_dim for e in net.embeds] == [3, 3, 21] and net.num_features == 10
    x = torch.cat([torch.tensor([[3.0, 0.0, 99.0], [1.0, 2.0, 0.0]]), torch.randn(2, 5)], 1)
    assert net(x).shape == (2, 10)
    cfg = json.loads(json.dumps(net.config))
    again = TabularBackbone.from_config(cfg)
    again.load_state_dict(net.state_dict())
    net.eval(), again.eval()
    torch.testing.assert_close(net(x), again(x), rtol=0, atol=0)
    with pytest.raises(ValueError, match="does not fit in torch.bfloat16"):
        TabularBackbone([300], 1)(torch.zeros(2, 2, dtype=torch.bfloat16))


@pytest.mark.parametrize("shape", [(37,), (37, 1), (37, 3)])
def test_regression_metrics_equal_torchmetrics(shape):
    import torchmetrics

    from hotstart.metrics import Denormalized, MeanSquaredError, R2Score

    def in_units(ours):  # torchmetrics' RMSE of the same transform: the reference
        return torchmetrics.wrappers.LambdaInputTransformer(torchmetrics.MeanSquaredError(squared=False),
                                                            transform_pred=ours.units, transform_target=ours.units)

    k = shape[1] if len(shape) == 2 else 1
    units = Denormalized(MeanSquaredError(squared=False), [4000.0] * k, [800.0] * k)
    pairs = {"mse": (MeanSquaredError(), torchmetrics.MeanSquaredError()),
             "rmse": (MeanSquaredError(squared=False), torchmetrics.MeanSquaredError(squared=False)),
             "rmse per output": (MeanSquaredError(squared=False, num_outputs=k),
                                 torchmetrics.MeanSquaredError(squared=False, num_outputs=k)),
             "r2": (R2Score(num_outputs=k), torchmetrics.R2Score()),
             "rmse in units": (units, in_units(units))}
    if k > 1:
        last = Denormalized(MeanSquaredError(squared=False), [4000.0] * k, [800.0] * k, output=k - 1)
        pairs["rmse of the last output"] = (last, in_units(last))
    g = torch.Generator().manual_seed(sum(shape))
    preds, target = torch.randn(shape, generator=g), torch.randn(shape, generator=g) * 2 + 1
    for lo, hi in [(0, 16), (16, 18), (18, 37)]:  # streaming: three batches, one of two rows
        for name, (ours, ref) in pairs.items():
            torch.testing.assert_close(ours(preds[lo:hi], target[lo:hi]), ref(preds[lo:hi], target[lo:hi]),
                                       rtol=0, atol=0, msg=name)
    for name, (ours, ref) in pairs.items():
        torch.testing.assert_close(ours.compute(), ref.compute(), rtol=0, atol=0, msg=name)
    assert float(pairs["rmse in units"][0].compute()) == pytest.approx(800 * float(pairs["rmse"][0].compute()), rel=1e-5)
    assert math.isnan(float(R2Score()(torch.ones(1), torch.zeros(1))))  # one row: NaN where torchmetrics raises


# --- end to end -----------------------------------------------------------------------------

def test_species_accuracy_predict_save_load(species, tmp_path):
    pd = pytest.importorskip("pandas")
    learner, data = species
    assert learner.history[-1]["accuracy"] >= 0.95
    assert learner.validate()["accuracy"] == pytest.approx(learner.history[-1]["accuracy"])
    label, probs = learner.predict(ODD_ROW)  # unseen categories and missing values predict fine
    assert label in ("Adelie", "Chinstrap", "Gentoo") and probs.shape == (3,) and torch.isfinite(probs).all()
    assert learner.predict(data.inputs[0])[0] == "Adelie"

    learner.save(tmp_path / "m")
    meta = json.loads((tmp_path / "m" / "task.json").read_text())
    assert meta["task"]["preprocessing"]["vocab"]["island"] == ["#na#", "Biscoe", "Dream", "Torgersen"]
    assert meta["model"]["backbone"]["kind"] == "TabularModel"
    loaded = load_learner(tmp_path / "m")
    assert loaded.task == learner.task
    for row in (ODD_ROW, data.inputs[0], data.inputs[200]):
        a, b = learner.predict(row), loaded.predict(row)
        assert a[0] == b[0] and torch.equal(a[1], b[1])
    one = pd.DataFrame([ODD_ROW])
    assert torch.equal(loaded.predict(one)[1], learner.predict(ODD_ROW)[1])
    assert torch.equal(loaded.predict(one.iloc[0])[1], learner.predict(ODD_ROW)[1])
    resumed = load_learner(tmp_path / "m", data, seed=99, progress=False)  # new split, to keep training:
    assert resumed.task == learner.task  # the saved statistics stay (the weights depend on them)
    with pytest.raises(ValueError, match="one row, got a DataFrame with 2 rows"):
        loaded.predict(pd.concat([one, one]))
    with pytest.raises(BlockValueError, match=r"no column\(s\) \['sex'\]"):
        loaded.predict({k: v for k, v in ODD_ROW.items() if k != "sex"})


def test_show_results_is_a_table_of_rows(species, tmp_path):
    from hotstart.errors import UsageError

    learner, _ = species
    learner.save(tmp_path / "m")
    with pytest.raises(UsageError, match="no validation data"):  # loaded for prediction only
        load_learner(tmp_path / "m", progress=False).show_results(4)
    table = learner.show_results(4)
    assert table.columns[-3:] == ["truth", "prediction", "probability"] and len(table) == 4
    assert table.columns[:3] == ["island", "sex", "year"]
    text = str(table)
    assert text.splitlines()[0].split()[-3:] == ["truth", "prediction", "probability"]
    assert "<table>" in table._repr_html_() and "Adelie" in text
    assert all(r["prediction"] in ("Adelie", "Chinstrap", "Gentoo") for r in table.rows)

    batch = learner.show_batch(3)  # the training rows decoded back from what the model sees
    first = learner.train_loader.dataset.inputs[0]
    assert batch.columns[-1] == "target" and len(batch) == 3
    assert batch.rows[0]["island"] == first["island"] and batch.rows[0]["year"] == first["year"]
    assert batch.rows[0]["bill_depth_mm"] == pytest.approx(first["bill_depth_mm"], rel=1e-5)


def _lstsq_baseline(learner):
    """Linear least squares on the same preprocessing (categories one-hot), validation RMSE and R²."""
    prep = learner.task.preprocessing
    cards = prep.cardinalities()

    def design(rows):
        enc = prep.encode_rows(list(rows))
        onehots = [np.eye(c)[enc[:, j].astype(int)] for j, c in enumerate(cards)]
        return np.concatenate([np.ones((len(enc), 1)), *onehots, enc[:, len(cards):]], 1)

    tr, va = learner.train_loader.dataset, learner.valid_loader.dataset
    ytr, yva = (np.array([t[0] for t in ds.targets]) for ds in (tr, va))
    w, *_ = np.linalg.lstsq(design(tr.inputs), ytr, rcond=None)
    err = design(va.inputs) @ w - yva
    return float(np.sqrt(np.mean(err ** 2))), float(1 - np.sum(err ** 2) / np.sum((yva - yva.mean()) ** 2))


def test_body_mass_regression_against_a_linear_baseline(tmp_path):
    data, blocks = datasets.load("penguins", target="body_mass_g")
    learner = tasklearner(TabularRegression(blocks), data, seed=0, progress=False)
    lrs = learner.lr_find(num_it=30)
    assert 1e-5 < lrs.suggestion < 1
    learner.fit_one_cycle(30, 1e-2)
    final = learner.history[-1]
    base_rmse, base_r2 = _lstsq_baseline(learner)
    print(f"body mass: rmse {final['rmse']:.1f} g, r2 {final['r2']:.3f}; least squares: rmse {base_rmse:.1f} g, "
          f"r2 {base_r2:.3f}")
    assert final["r2"] >= 0.75
    assert final["rmse"] <= 1.10 * base_rmse
    values, tensor = learner.predict(data.inputs[0])
    assert values.shape == (1,) and 2500 < values[0] < 6500 and torch.equal(tensor, torch.from_numpy(values))
    # the metrics are in grams: the same numbers from the predictions, by hand
    preds = np.array([learner.predict(r)[0][0] for r in learner.valid_loader.dataset.inputs])
    truth = np.array([t[0] for t in learner.valid_loader.dataset.targets])
    assert final["rmse"] == pytest.approx(np.sqrt(np.mean((preds - truth) ** 2)), rel=1e-4)
    learner.save(tmp_path / "m")
    loaded = load_learner(tmp_path / "m")
    np.testing.assert_array_equal(loaded.predict(ODD_ROW | {"species": "Gentoo"})[0],
                                  learner.predict(ODD_ROW | {"species": "Gentoo"})[0])


def test_several_regression_targets_get_an_rmse_each():
    data, (row, target) = datasets.load("penguins", target=["body_mass_g", "flipper_length_mm"])
    assert target == Continuous(2) and "flipper_length_mm" not in row.continuous
    task = TabularRegression((row, target)).setup(data)
    assert list(task.metrics()) == ["rmse_0", "rmse_1", "r2"]
    masses = np.array([t[0] for t in data.targets])
    assert task.preprocessing.target_mean[0] == pytest.approx(masses.mean())
    rmse_1 = task.metrics()["rmse_1"]
    rmse_1.update(torch.zeros(4, 2), torch.ones(4, 2))  # one std off, in millimetres
    assert float(rmse_1.compute()) == pytest.approx(task.preprocessing.target_std[1], rel=1e-6)


def test_tasks_round_trip_and_describe_before_setup():
    task = TabularRegression((ROW, Continuous(1)))
    assert task.needs_setup and SupervisedTask.from_dict(json.loads(json.dumps(task.to_dict()))) == task
    text = task.describe(file=open("/dev/null", "w"))
    assert "TableTensor(cardinalities=" in text and "not set up yet" in text
    with pytest.raises(TypeError, match=r"needs blocks=\(TableRow"):
        TabularClassificationSingle((ROW, Continuous(1)))
    with pytest.raises(ValueError, match="no statistics yet, so its model cannot be built"):
        tasklearner(task, None, progress=False)
    rng = np.random.default_rng(0)
    samples = [task.mock_sample(rng) for _ in range(40)]
    learner = tasklearner(task, ([s[0] for s in samples], [s[1] for s in samples]), seed=0, progress=False,
                          layers=(8,), ps=0.0, batch_size=16)
    assert learner.model_config["backbone"]["layers"] == [8]
    with pytest.raises(ValueError, match="has no backbone"):
        tasklearner(task, ([s[0] for s in samples], [s[1] for s in samples]), backbone="resnet18", progress=False)
    with pytest.raises(ValueError, match=r"\['layers'\] apply to TabularModel models only"):
        tasklearner(ImageClassificationSingle((datasets.load("digits")[1])), None, layers=(8,), progress=False)


def test_cli_trains_a_table_and_the_warmup_has_a_table_workload(tmp_path, capsys):
    from hotstart import warmup
    from hotstart.cli import main

    csv = tmp_path / "t.csv"
    csv.write_text(PENGUINS_FILE.read_text())
    code = main(["train", str(csv), "--task", "tabular", "--target", "sex", "--epochs", "2",
                 "--out", str(tmp_path / "run"), "--no-progress"])
    assert code == 0
    out = capsys.readouterr().out
    assert "333 rows with a target" in out and "accuracy" in out  # 11 penguins have no recorded sex
    saved = json.loads((tmp_path / "run" / "model" / "task.json").read_text())
    assert saved["task"]["kind"] == "TabularClassificationSingle"
    assert (tmp_path / "run" / "history.csv").is_file()

    assert (tmp_path / "run" / "loss.png").read_bytes().startswith(b"\x89PNG")
    assert main(["train", str(csv), "--task", "tabular", "--target", "sex", "--backbone", "resnet18",
                 "--out", str(tmp_path / "run2")]) == 1  # an image-only option is refused, not ignored
    assert "--backbone apply to image tasks only" in capsys.readouterr().err
    assert main(["train", str(csv), "--task", "tabular", "--target", "sex", "--epochs", "2", "--accumulate", "2",
                 "--checkpoint-dir", str(tmp_path / "ckpt"), "--out", str(tmp_path / "run3"), "--no-progress"]) == 0
    assert sorted(p.name for p in (tmp_path / "ckpt").iterdir() if p.name != ".lock") == ["ckpt-000-000000004-1", "ckpt-000-000000008-1"]
    state = json.loads((tmp_path / "ckpt" / "ckpt-000-000000008-1" / "state.json").read_text())
    assert (state["fit"]["accumulate"], state["fit"]["opt_step"]) == (2, 4)  # 4 batches an epoch, one step every 2

    report = warmup.run(only=["tabular-mlp-cpu"], cache_dir=tmp_path / "cache", progress=False)
    assert [r.status for r in report.results] == ["ok"], report.table()


def test_export_to_onnx_and_the_torch_free_predictor(species, tmp_path):
    """The exported species model and hotstart/predictor.py (numpy preprocessing from the metadata)
    agree with learner.predict; the regression decoding agrees with the task's, on the same metadata."""
    pytest.importorskip("onnxruntime")
    from hotstart.export.metadata import task_metadata
    from hotstart.contract import KINDS, read_metadata
    from hotstart.predictor import Predictor

    learner, data = species
    report = learner.export(tmp_path / "species.onnx")
    assert report.max_abs_diff < 1e-4
    predictor = Predictor.load(tmp_path / "species.onnx")
    encoded = np.stack([predictor.preprocess(r) for r in data.inputs])
    np.testing.assert_array_equal(encoded, learner.task.preprocessing.encode_rows(list(data.inputs)))
    for row in (ODD_ROW, *data.inputs[::43]):
        (label, probs), (want, want_probs) = predictor.predict(row), learner.predict(row)
        assert label == want
        np.testing.assert_allclose(probs, want_probs.numpy(), atol=1e-5)

    mass, blocks = datasets.load("penguins", target="body_mass_g")
    task = TabularRegression(blocks).setup(mass)
    meta = read_metadata(task_metadata(task))
    out = np.array([0.25], dtype=np.float32)
    got, _ = KINDS["TabularRegression"].decode(out, meta)
    np.testing.assert_allclose(got, task.decode_output(torch.from_numpy(out))[0], rtol=1e-6)
    encode = KINDS["TabularRegression"].encoder(meta)
    np.testing.assert_array_equal(np.stack([encode(r) for r in mass.inputs[:20]]),
                                  task.preprocessing.encode_rows(list(mass.inputs[:20])))
