"""Series: the TimeSeries block, SeriesPreprocessing, TimeSeriesData and the built-in sets, the two
tasks end to end (a real fit on GunPoint, predict, save / load, views, interpretation), and the ONNX
export with the torch-free predictor."""
from __future__ import annotations

import io
import json

import numpy as np
import pytest
import torch

from hotstart import datasets, load_learner, tasklearner
from hotstart.blocks import Block, BlockValueError, Continuous, Label, SeriesTensor, TimeSeries
from hotstart.datasets import DatasetError, TimeSeriesData
from hotstart.encodings import Context, Encoding, SeriesPreprocessing
from hotstart.encodings.timeseries import encode_series
from hotstart.errors import UsageError, UsageTypeError
from hotstart.models.inception_time import InceptionTime
from hotstart.tasks import SupervisedTask, TSClassificationSingle, TSRegression


@pytest.fixture(scope="module")
def gunpoint():
    """GunPoint, a small InceptionTime (8 filters per branch, 3 modules) trained once on all 50 series of
    the archive's training split (validation only watches 10 of them); the test split is never seen."""
    data, blocks = datasets.load("GunPoint")
    train = data.split("train")
    # the backbone is built here, so its initial weights come from torch's global generator: seeded
    # (and restored), or they depend on what the tests before this one drew from it
    with torch.random.fork_rng():
        torch.manual_seed(0)
        backbone = InceptionTime(1, nf=8, depth=3)
    learner = tasklearner(TSClassificationSingle(blocks), train, validdata=train.subset(range(10)),
                          backbone=backbone, batch_size=8, seed=0, progress=False)
    learner.fit_one_cycle(12, lr_max=1e-2)
    return learner, data


# --- block and encoding ------------------------------------------------------------------------

def test_block_checks_mocks_and_round_trips():
    fixed, var = TimeSeries(2, length=5), TimeSeries(3, max_length=10)
    assert fixed.check(np.zeros((2, 5))) and fixed.check([[1, 2, np.nan, 4, 5], [0, 0, 0, 0, 0]])
    assert TimeSeries(1, 4).check(np.arange(4.0))  # univariate: a 1-D array is accepted
    for bad, words in [(np.zeros((3, 5)), "expected 2 channel"), (np.zeros((2, 6)), "expected length 5"),
                       (np.full((2, 5), np.inf), "infinity"), (np.full((2, 5), np.nan), "every value"),
                       ("series", "must be an array")]:
        with pytest.raises(BlockValueError, match=words):
            fixed.validate(bad)
    with pytest.raises(BlockValueError, match="exceeds max_length 10"):
        var.validate(np.zeros((3, 11)))
    rng = np.random.default_rng(0)
    mocks = [var.mock(rng) for _ in range(30)]
    assert all(var.check(m) for m in mocks) and len({m.shape[1] for m in mocks}) > 3
    for b in (fixed, var, SeriesTensor(3, 7)):
        assert Block.from_dict(json.loads(json.dumps(b.to_dict()))) == b
    with pytest.raises(ValueError, match="not both"):
        TimeSeries(1, length=3, max_length=4)


def test_channel_statistics_come_from_the_training_split_only():
    rng = np.random.default_rng(1)
    train = [rng.normal([[5.0], [-2.0]], [[2.0], [0.5]], size=(2, 50)) for _ in range(40)]
    prep = SeriesPreprocessing(2, 50).fit(train)
    flat = np.concatenate(train, axis=1)
    np.testing.assert_allclose(prep.mean, flat.mean(1))
    np.testing.assert_allclose(prep.std, flat.std(1) + 1e-8)
    enc = np.stack([prep.encode_array(s) for s in train])
    np.testing.assert_allclose(enc.mean((0, 2)), 0, atol=1e-6)
    np.testing.assert_allclose(enc.std((0, 2)), 1, atol=1e-5)
    assert Encoding.from_dict(json.loads(json.dumps(prep.to_dict()))) == prep


def test_series_normalisation_padding_cropping_missing_values_and_mask():
    x = np.array([[1.0, 2.0, np.nan, 4.0]])
    prep = SeriesPreprocessing(1, normalize="series", mask=True).fit([np.zeros((1, 6)) + np.arange(6)])
    assert prep.length == 6 and prep.encoded_block(TimeSeries(1)) == SeriesTensor(2, 6)
    out = prep.encode_array(x)
    seen = np.array([1.0, 2.0, 4.0])
    np.testing.assert_allclose(out[0], [*(np.array([1, 2]) - seen.mean()) / seen.std(), 0, (4 - seen.mean()) / seen.std(),
                                        0, 0], rtol=1e-6)
    np.testing.assert_array_equal(out[1], [1, 1, 0, 1, 0, 0])  # observed steps; missing and padding are 0
    long = np.arange(10.0)[None]
    np.testing.assert_array_equal(SeriesPreprocessing(1, 4, normalize=None).fit([long]).encode_array(long), [[0, 1, 2, 3]])
    capped = SeriesPreprocessing(1, max_length=5, normalize=None).fit([long])
    assert capped.length == 5


def test_augmentations_only_in_training_and_only_from_the_generator():
    prep = SeriesPreprocessing(1, 30, shift=0.2, jitter=0.1, scale=0.2).fit([np.sin(np.arange(30.0))[None]])
    x = np.sin(np.arange(30.0))[None]
    a = prep.encode_array(x, Context.TRAINING, np.random.default_rng(3))
    b = prep.encode_array(x, Context.TRAINING, np.random.default_rng(3))
    c = prep.encode_array(x, Context.TRAINING, np.random.default_rng(4))
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    plain = prep.encode_array(x, Context.VALIDATION, np.random.default_rng(3))
    np.testing.assert_array_equal(plain, prep.encode_array(x))
    with pytest.raises(ValueError, match="needs an rng"):
        prep.encode_array(x, Context.TRAINING)
    with pytest.raises(ValueError, match="shift"):
        SeriesPreprocessing(1, shift=1.5)


# --- data ----------------------------------------------------------------------------------------

def test_built_in_sets_keep_the_archive_split():
    for name, n_train, n_test, block, classes in [
            ("GunPoint", 50, 150, TimeSeries(1, 150), ["1", "2"]),
            ("ItalyPowerDemand", 67, 1029, TimeSeries(1, 24), ["1", "2"]),
            ("BasicMotions", 40, 40, TimeSeries(6, 100), ["Standing", "Running", "Walking", "Badminton"]),
            ("JapaneseVowels", 270, 370, TimeSeries(12), [str(i) for i in range(1, 10)])]:
        data, (series, label) = datasets.load(name)
        assert (len(data.split("train")[0]), len(data.split("test")[0]), series) == (n_train, n_test, block)
        assert label == Label(classes)
    data, (series, target) = datasets.load("Covid3Month")
    assert target == Continuous(1) and data[1][0].shape == (1,) and len(data.split("test")[0]) == 61
    names = {e["name"] for e in datasets.catalog()}
    assert {"GunPoint", "ItalyPowerDemand", "BasicMotions", "JapaneseVowels", "Covid3Month"} <= names


def test_time_series_data_from_arrays_lists_and_dataframes():
    x = np.random.default_rng(0).standard_normal((6, 2, 9))
    data, (series, label) = TimeSeriesData(x, ["a", "b"] * 3)
    assert series == TimeSeries(2, 9) and label == Label(["a", "b"]) and data[0][1].shape == (2, 9)
    data, (series, target) = TimeSeriesData([np.zeros(4), np.ones(7)], [0.5, 1.5])
    assert series == TimeSeries(1) and target == Continuous(1)
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame(x[:, 0], columns=[f"t{i}" for i in range(9)]).assign(y=[1, 2] * 3)
    data, (series, label) = TimeSeriesData(df, target="y")
    assert series == TimeSeries(1, 9) and label == Label(["1", "2"])
    np.testing.assert_array_equal(data[0][3], x[3, :1])
    with pytest.raises(DatasetError, match="3 series but 2 targets"):
        TimeSeriesData(x[:3], ["a", "b"])
    with pytest.raises(DatasetError, match="regression target 1 of the arrays is inf, not a finite number"):
        TimeSeriesData(x[:3], [0.5, float("inf"), 1.5], regression=True)
    with pytest.raises(DatasetError, match="target= must name a column"):
        TimeSeriesData(df, target="nope")


def test_a_missing_target_is_refused_naming_its_series_or_row_or_dropped():
    """Before: str(v) made None a class 'None' and NaN a class 'nan'. Now as TableData: an error
    naming the first (the DataFrame's row and index too), or dropped with dropna_target=True."""
    x = np.random.default_rng(0).normal(size=(6, 20))
    for missing in (None, float("nan")):
        with pytest.raises(DatasetError) as e:
            TimeSeriesData(x, ["a", "b", missing, "a", "b", missing])
        assert str(e.value) == ("TimeSeriesData: targets= has 2 missing value(s), first in series 2; drop those "
                                "series (dropna_target=True) or fill them")
    with pytest.raises(DatasetError, match=r"^TimeSeriesData: test_targets= has 1 missing value\(s\), first in series 1;"):
        TimeSeriesData(x[:3], ["a", "b", "a"], test=x[3:], test_targets=["a", None, "b"])
    with pytest.raises(DatasetError, match=r"^TimeSeriesData: targets= has 1 missing value\(s\), first in series 0;"):
        TimeSeriesData(x[:3], [None, 0.5, 1.5], regression=True)
    data, (_, label) = TimeSeriesData(x, ["a", "b", None, "a", "b", float("nan")], dropna_target=True)
    assert label == Label(["a", "b"]) and data.targets == ["a", "b", "a", "b"]
    np.testing.assert_array_equal(data.inputs[2], x[3:4])  # series 2 was dropped: the third kept is series 3
    with pytest.raises(DatasetError, match=r"^TimeSeriesData: targets= has no values at all \(every target is missing\)$"):
        TimeSeriesData(x[:2], [None, None], dropna_target=True)
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame(x, index=range(10, 16)).assign(y=["a", "b", None, "a", "b", "a"])
    with pytest.raises(DatasetError) as e:
        TimeSeriesData(df, target="y")
    assert str(e.value) == ("TimeSeriesData: target column 'y' of the DataFrame has 1 missing value(s), first in "
                            "row 2 (index 12); drop those rows (dropna_target=True) or fill them")
    data, (_, label) = TimeSeriesData(df, target="y", dropna_target=True)
    assert label == Label(["a", "b"]) and data.targets == ["a", "b", "a", "b", "a"]


def test_one_class_is_refused_when_the_data_and_when_the_task_is_built():
    """Before: accepted by TimeSeriesData and tasklearner, then fit_one_cycle failed in torchmetrics
    ("num_classes must be >= 2"). A regression target of one value is still a regression."""
    x = np.random.default_rng(0).normal(size=(6, 20))
    with pytest.raises(DatasetError) as e:
        TimeSeriesData(x, ["a"] * 6)
    assert str(e.value) == ("TimeSeriesData: targets= holds one value only ('a', in all 6 series): a classifier "
                            "needs two classes or more; pass series of other classes too, classes=[...] naming them "
                            "all, or regression=True for numbers")
    _, (_, label) = TimeSeriesData(x, ["a"] * 6, classes=["a", "b"])  # a one-class evaluation subset
    assert label == Label(["a", "b"])
    with pytest.raises(DatasetError, match=r"^TimeSeriesData: targets= and test_targets= hold one value only "
                                           r"\('a', in all 6 series\)"):
        TimeSeriesData(x[:3], ["a"] * 3, test=x[3:], test_targets=["a"] * 3)
    with pytest.raises(DatasetError, match=r"^TimeSeriesData: targets= holds one value only \('a', in all 5 series\)"):
        TimeSeriesData(x, ["a", "a", None, "a", "a", "a"], dropna_target=True)
    _, (_, target) = TimeSeriesData(x, [0.5] * 6)
    assert target == Continuous(1)
    with pytest.raises(UsageError, match=r"^TSClassificationSingle needs at least 2 classes, got 1: \['a'\]"):
        TSClassificationSingle((TimeSeries(1, 20), Label(["a"])))


def test_a_cell_that_is_not_a_number_is_named_by_its_series_and_step():
    """Before: numpy's own errors ("could not convert string to float: 'oops'", "setting an array
    element with a sequence"), naming no series."""
    rng = np.random.default_rng(0)
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame(rng.normal(size=(6, 5)), index=range(10, 16)).astype(object).assign(y=["a", "b"] * 3)
    df.loc[12, 3] = "oops"
    with pytest.raises(DatasetError) as e:
        TimeSeriesData(df, target="y")
    assert str(e.value) == "TimeSeriesData: the DataFrame holds 'oops' in row 2 (index 12), column 3, which is not a number"
    df.loc[12, 3] = "1.5"  # text that reads as a number is one, as numpy reads it
    assert TimeSeriesData(df, target="y")[0].inputs[2][0, 3] == 1.5
    with pytest.raises(DatasetError) as e:
        TimeSeriesData(np.array([["1", "2"], ["3", "a"]]), ["a", "b"])
    assert str(e.value) == "TimeSeriesData: the array holds 'a' in series 1, step 1, which is not a number"
    with pytest.raises(DatasetError, match=r"^TimeSeriesData: the array holds 'x' in series 0, channel 1, step 2, "):
        TimeSeriesData(np.array([[["1", "2", "3"], ["4", "5", "x"]]] * 2), ["a", "b"])
    with pytest.raises(DatasetError) as e:
        TimeSeriesData([np.zeros(4), [1.0, 2.0, "x"]], ["a", "b"])
    assert str(e.value) == "TimeSeriesData: the list of series holds 'x' in series 1, step 2, which is not a number"
    hint = ("pass series of different lengths as a plain list of arrays, [a0, a1, ...], each (length,) or "
            "(channels, length)")
    ragged = np.empty(2, dtype=object)
    ragged[0], ragged[1] = np.zeros(5), np.zeros(7)
    with pytest.raises(DatasetError) as e:
        TimeSeriesData(ragged, ["a", "b"])
    assert str(e.value) == f"TimeSeriesData: got a numpy object array of 2 series: {hint}"
    with pytest.raises(DatasetError) as e:
        TimeSeriesData(ragged[:, None], ["a", "b"])
    assert str(e.value) == (f"TimeSeriesData: the array holds an array of shape (5,) in series 0, step 0, where a "
                            f"number belongs: {hint}")
    data, (series, _) = TimeSeriesData(list(ragged), ["a", "b"])  # the plain list the hint asks for
    assert series == TimeSeries(1) and [s.shape for s in data.inputs] == [(1, 5), (1, 7)]
    with pytest.raises(DatasetError, match=r"^TimeSeriesData: series 1 cannot be read as an array of numbers \(.*\); "
                                           r"a series is \(length,\) or \(channels, length\), with channels of one length$"):
        TimeSeriesData([np.zeros((2, 3)), [[1.0, 2.0], [3.0]]], ["a", "b"])


# --- tasks ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("task_type", [TSClassificationSingle, TSRegression])
def test_tasklearner_learns_series_statistics_from_its_training_split_only(task_type):
    """The learner-level tests pass validdata= (the training split is all the data), so statistics
    computed on all the data passed them: here validation is a strict part of `data`, the series
    differ by part (scale, offset, length), and the statistics must be the training split's."""
    rng = np.random.default_rng(3)
    series = [rng.normal(i, 1 + i / 4, size=(2, 10 + i % 7)) for i in range(24)]
    targets = ["a", "b"] * 12 if task_type is TSClassificationSingle else [float(i) + 0.5 for i in range(24)]
    data, blocks = TimeSeriesData(series, targets)
    learner = tasklearner(task_type(blocks), data, valid_pct=0.25, seed=0, progress=False)
    train = (learner.train_loader.dataset.inputs, learner.train_loader.dataset.targets)
    n_valid = len(learner.valid_loader.dataset.inputs)
    assert 0 < n_valid and len(train[0]) + n_valid == len(series)
    want = task_type(blocks).setup(train)
    assert learner.task.preprocessing == want.preprocessing
    assert learner.task.encodings[1] == want.encodings[1]
    everything = task_type(blocks).setup(data)
    assert learner.task.preprocessing != everything.preprocessing  # the test can tell the two apart
    if task_type is TSRegression:
        assert learner.task.target_statistics() != everything.target_statistics()

def test_tasks_set_up_on_training_data_and_round_trip_through_json():
    data, blocks = datasets.load("JapaneseVowels")
    task = TSClassificationSingle(blocks, mask=True)
    assert task.needs_setup
    ready = task.setup(data.split("train"))
    assert not ready.needs_setup and ready.preprocessing.length == 26  # the longest training series
    assert ready.encoded_blocks()[0] == SeriesTensor(13, 26)
    again = SupervisedTask.from_dict(json.loads(json.dumps(ready.to_dict())))
    assert again == ready
    x = ready.encode_input(data[0][300])  # a test series: padded (or cropped) to the training length
    assert x.shape == (13, 26) and x.dtype == torch.float32
    covid, blocks = datasets.load("Covid3Month")
    reg = TSRegression(blocks).setup(covid.split("train"))
    y = np.stack([t for t in covid.split("train")[1]])
    np.testing.assert_allclose(reg.encodings[1].mean, y.mean(0))
    assert SupervisedTask.from_dict(json.loads(json.dumps(reg.to_dict()))) == reg
    assert "not set up yet" in TSRegression(blocks).describe(file=io.StringIO())
    with pytest.raises(UsageTypeError, match=r"TSRegression needs blocks=\(TimeSeries\(channels, length=\.\.\.\), "
                                             r"Continuous\(n\)\)"):
        TSRegression((blocks[0], Label(["a", "b"])))
    with pytest.raises(UsageError, match="TSRegression.setup: the training split has no series"):
        TSRegression(blocks).setup(([], []))
    with pytest.raises(UsageError, match="TSRegression.metrics: the task is not set up"):
        TSRegression(blocks).metrics()


def test_gunpoint_trains_well_above_chance_on_the_held_out_test_split(gunpoint):
    learner, data = gunpoint
    from hotstart.learner.data import TaskDataset, make_loader

    test = data.split("test")
    scores = learner.validate(make_loader(TaskDataset(learner.task, test, "validation", 0), batch_size=64, train=False))
    assert scores["accuracy"] >= 0.8  # chance is 0.5 (76 / 74 test series); seeds 0, 1 gave 0.90, 0.92


def test_predict_save_load_views_and_interpretation(gunpoint, tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    learner, data = gunpoint
    series = data[0][60]
    label, probs = learner.predict(series)
    assert label in ("1", "2") and probs.shape == (2,)
    assert learner.predict(series[0])[0] == label  # a univariate series as a 1-D array
    fig = learner.show_batch(4)
    assert len(fig.axes) == 4 and fig.axes[0].lines
    fig = learner.show_results(4)
    assert len(fig.axes) == 4 and "/" in fig.axes[0].get_title()
    from hotstart.interpret import ClassificationInterpretation

    interp = ClassificationInterpretation.from_learner(learner)
    assert interp.confusion_matrix().sum() == len(learner.valid_loader.dataset)


@pytest.mark.parametrize("backbone", ["inceptiontime", "resnet1d"])
def test_named_backbones_save_and_load_without_pickle(backbone, tmp_path):
    data, blocks = datasets.load("BasicMotions")
    learner = tasklearner(TSClassificationSingle(blocks), data, backbone=backbone, batch_size=8, seed=0,
                          progress=False)
    learner.save(tmp_path / "m")
    loaded = load_learner(tmp_path / "m", progress=False)
    x = data[0][45]
    np.testing.assert_allclose(loaded.predict(x)[1], learner.predict(x)[1], atol=1e-6)
    assert loaded.task == learner.task


def test_export_parity_with_the_torch_free_predictor_on_all_of_gunpoint_test(gunpoint, tmp_path):
    pytest.importorskip("onnxruntime")
    from hotstart.predictor import Predictor

    learner, data = gunpoint
    report = learner.export(tmp_path / "gp.onnx")
    assert report.max_abs_diff < 1e-4
    predictor = Predictor.load(tmp_path / "gp.onnx")
    test = data.split("test")
    series = [test[0][i] for i in range(len(test[0]))]
    prep = learner.task.preprocessing
    np.testing.assert_array_equal(np.stack([predictor.preprocess(s) for s in series]),
                                  np.stack([prep.encode_array(s) for s in series]))
    got = [label for label, _ in predictor.predict_many(series, batch_size=50)]
    want = [learner.predict(s)[0] for s in series]
    assert got == want and len(got) == 150
    # int8 (onnxruntime static quantization, calibrated on the training series) holds the accuracy
    learner.export(tmp_path / "gp-int8.onnx", quantize="int8", calibrate=50)
    labels = [test[1][i] for i in range(150)]
    fp32 = predictor.evaluate(series, labels)["accuracy"]
    int8 = Predictor.load(tmp_path / "gp-int8.onnx").evaluate(series, labels)["accuracy"]
    assert int8 >= fp32 - 0.03, (fp32, int8)


def test_cli_trains_a_ts_file_and_the_warmup_has_a_series_workload(tmp_path, capsys):
    """``train --task timeseries FILE_TRAIN.ts``: FILE_TEST.ts beside it is held out; a regression file too."""
    from hotstart import warmup
    from hotstart.cli import main
    from hotstart.datasets.timeseries_builtin import series_files

    for f in series_files("ItalyPowerDemand"):
        (tmp_path / f.name).write_bytes(f.read_bytes())
    code = main(["train", str(tmp_path / "ItalyPowerDemand_TRAIN.ts"), "--task", "timeseries", "--backbone",
                 "resnet1d", "--epochs", "1", "--batch-size", "16", "--out", str(tmp_path / "run"), "--no-progress"])
    assert code == 0
    out = capsys.readouterr().out
    assert "1096 series" in out and "'train': 67, 'test': 1029" in out and "accuracy" in out
    saved = json.loads((tmp_path / "run" / "model" / "task.json").read_text())
    assert saved["task"]["kind"] == "TSClassificationSingle" and saved["model"]["backbone"]["kind"] == "resnet1d"
    assert main(["train", "--task", "timeseries", "--backbone", "resnet18", "--out", str(tmp_path / "r2")]) == 1
    assert "--backbone must be one of" in capsys.readouterr().err

    report = warmup.run(only=["timeseries-inceptiontime-cpu"], cache_dir=tmp_path / "cache", progress=False)
    assert [r.status for r in report.results] == ["ok"], report.table()


def test_predictor_encodes_and_decodes_a_series_regression_as_the_task_does():
    """No model needed: the metadata of a set-up TSRegression task, read by the predictor's numpy code."""
    from hotstart.export.metadata import task_metadata
    from hotstart.contract import KINDS, check_metadata, read_metadata

    covid, blocks = datasets.load("Covid3Month")
    for normalize in ("channel", "series"):
        task = TSRegression(blocks, normalize=normalize, mask=True).setup(covid.split("train"))
        meta = read_metadata(task_metadata(task))
        check_metadata(meta, "covid")
        kind = KINDS["TSRegression"]
        series = [covid[0][i] for i in range(140, 150)]
        np.testing.assert_array_equal(np.stack([kind.encoder(meta)(s) for s in series]),
                                      np.stack([task.preprocessing.encode_array(s) for s in series]))
        out = np.array([0.3], dtype=np.float32)
        np.testing.assert_allclose(kind.decode(out, meta)[0], task.decode_output(torch.from_numpy(out))[0], rtol=1e-6)


def test_a_series_value_that_overflows_float32_is_named_by_channel_and_step():
    """A finite value so large that, standardised, it overflows float32 became inf and every output
    NaN; an infinity was refused without saying where. Now both name the channel and the step, for
    the predictor and for training's encoding alike (one function)."""
    from hotstart.contract import InputValueError, KINDS, read_metadata
    from hotstart.errors import SampleError
    from hotstart.export.metadata import task_metadata

    covid, blocks = datasets.load("Covid3Month")
    for normalize in ("channel", "series", None):
        task = TSRegression(blocks, normalize=normalize).setup(covid.split("train"))
        encode = KINDS["TSRegression"].encoder(read_metadata(task_metadata(task)))
        series = np.array(covid[0][140], dtype=np.float64).reshape(1, -1)
        huge = series.copy()
        huge[0, 7] = 1e308 if normalize != "series" else 1e200  # series: the spread itself overflows
        with pytest.raises(InputValueError, match=r"channel 0(, step 7)?: .*(float32|overflows)"):
            encode(huge)
        with pytest.raises(SampleError, match=r"channel 0(, step 7)?: "):
            task.preprocessing.encode_array(huge)
        infinite = series.copy()
        infinite[0, 3] = -np.inf
        with pytest.raises(InputValueError, match=r"channel 0, step 3: -inf is not a finite number"):
            encode(infinite)
        assert np.isfinite(encode(series)).all()


def test_predict_reads_series_files_and_a_bundle_predicts_them_too(gunpoint, tmp_path):
    """``hotstart predict`` on a series model read each file name as the series itself ("could not
    convert string to float: 's0.npy'"), and ``export --bundle`` failed half-way (the README assumed
    an image model). Now: .npy files of one series or of several, and the archive's .ts files, one
    line per series, equal to learner.predict; a file of Python objects is refused, never unpickled;
    the bundle's predictor.py reads the same .npy files."""
    pytest.importorskip("onnxruntime")
    import json
    import subprocess
    import sys

    from hotstart.cli.bundle import write_bundle
    from hotstart.datasets.ts_format import write_ts

    learner, data = gunpoint
    test = data.split("test")
    series = [np.asarray(test[0][i], dtype=np.float64) for i in range(6)]
    want = [learner.predict(s)[0] for s in series]
    learner.export(tmp_path / "gp.onnx")
    np.save(tmp_path / "many.npy", np.stack(series[:3]))           # (3, 1, 150)
    np.save(tmp_path / "flat.npy", np.stack([s[0] for s in series[:2]]))  # (2, 150): aeon's univariate layout
    np.save(tmp_path / "one.npy", series[3][0])                   # (150,)
    write_ts(tmp_path / "two.ts", series[4:6], labels=["1", "2"])
    np.save(tmp_path / "objects.npy", np.array([series[0][0], "x"], dtype=object), allow_pickle=True)
    (tmp_path / "rows.csv").write_text("a,b\n1,2\n")
    inputs = [str(tmp_path / n) for n in ("many.npy", "flat.npy", "one.npy", "two.ts", "objects.npy", "rows.csv")]
    bundle = tmp_path / "bundle"
    write_bundle(learner, bundle)  # `hotstart export --bundle`'s writer (this backbone is an instance: no folder)
    readme = (bundle / "README.md").read_text()
    assert "python predictor.py model.onnx series.npy" in readme and "TSClassificationSingle" in readme
    for model in (tmp_path / "gp.onnx", bundle / "model.onnx"):
        proc = subprocess.run([sys.executable, "-m", "hotstart", "predict", str(model), *inputs, "--json",
                               "--no-server"], capture_output=True, text=True, timeout=300)
        assert proc.returncode == 1, proc.stderr
        objects = [json.loads(line) for line in proc.stdout.splitlines()]
        assert [(o["series"].rsplit("/", 1)[1], o.get("index")) for o in objects] == [
            ("many.npy", 0), ("many.npy", 1), ("many.npy", 2), ("flat.npy", 0), ("flat.npy", 1), ("one.npy", 0),
            ("two.ts", 0), ("two.ts", 1), ("objects.npy", None), ("rows.csv", None)]
        assert [o.get("label") for o in objects[:8]] == [*want[:3], *want[:2], want[3], *want[4:6]]
        assert "not a .npy file of numbers" in objects[8]["error"] and "allow_pickle" in objects[8]["error"]
        assert "a series model reads .npy, .ts files" in objects[9]["error"]
    proc = subprocess.run([sys.executable, "predictor.py", "model.onnx", inputs[0], inputs[2], "--top-k", "1"],
                          capture_output=True, text=True, timeout=120, cwd=bundle)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[0].startswith(f"{inputs[0]}[0]: {want[0]} ({want[0]} ")
    assert proc.stdout.splitlines()[3].startswith(f"{inputs[2]}: {want[3]} ")


def test_series_files_that_hold_no_usable_series_are_named(tmp_path):
    """A (steps, 1) column for a one-channel model read as `steps` series of one step; a file of no
    series printed nothing and exited 0; an empty file and an .npz under a .npy name raised
    tracebacks that stopped the other files. Each is now an error naming the file."""
    from hotstart.contract.errors import InputValueError
    from hotstart.contract.series_files import read_npy_series, series_items

    np.save(tmp_path / "col.npy", np.arange(30.0)[:, None])
    np.save(tmp_path / "none.npy", np.zeros((0, 30)))
    (tmp_path / "empty.npy").write_bytes(b"")
    with open(tmp_path / "z.npy", "wb") as f:
        np.savez(f, a=np.arange(3.0))
    np.save(tmp_path / "ok.npy", np.arange(30.0))
    names = ["col.npy", "none.npy", "empty.npy", "z.npy", "ok.npy"]
    items = list(series_items([tmp_path / n for n in names], channels=1))
    assert [type(x).__name__ for _, _, x in items] == ["InputValueError"] * 4 + ["ndarray"]
    messages = [str(x) for _, _, x in items[:4]]
    assert "a column" in messages[0] and "holds no series" in messages[1]
    assert "not a .npy file of numbers" in messages[2] and "an .npz archive" in messages[3]
    assert all(m.startswith(str(tmp_path / n)) for m, n in zip(messages, names))
    assert read_npy_series(tmp_path / "col.npy", channels=3)[0].shape == (30, 1)  # 30 channels of one step: the model says no later
    with pytest.raises(InputValueError):
        read_npy_series(tmp_path / "none.npy", channels=1)
