"""Wrong arguments are refused where they are given, naming the argument (a new user's hour, wave 4).

Each case here once did something else: a string size iterated into another size, a string rate
failed inside torch's optimizer, a float epoch count was truncated, a list of metric names failed
at the first validation, Fabric's messages named its own arguments. hotstart.arguments holds the
checks of numbers; the others live beside what they check.
"""
import pytest
import torch

from hotstart import ImageClassificationSingle, tasklearner
from hotstart.arguments import check_int, check_number, check_size
from hotstart.errors import UsageError, UsageTypeError
from hotstart.learner.optim import check_lr


def test_the_number_checks_name_the_argument_and_keep_good_values():
    import numpy as np

    assert check_int("epochs", np.int64(3), minimum=1) == 3 and check_number("wd", np.float32(0.5)) == 0.5
    assert check_int("epochs", torch.tensor(2)) == 2 and check_number("wd", np.array(0.25)) == 0.25  # 0-d
    assert check_size("size", 16) == (16, 16) and check_size("size", [8, np.int32(12)]) == (8, 12)
    assert check_size("size", (n for n in (8, 8))) == (8, 8) and check_size("size", torch.tensor([4, 6])) == (4, 6)
    for value in (slice(1e-5, 1e-3), slice(1e-3), (1e-4, 1e-3), [1e-3], 0.0, torch.tensor(1e-3),
                  [torch.tensor(1e-4), np.float64(1e-3)]):
        assert check_lr("lr", value) is value
    with pytest.raises(UsageError, match=r"lr: a learning-rate slice needs a stop"):
        check_lr("lr", slice(1e-5, None))
    for bad in ("3", 1.5, True, None):
        with pytest.raises(UsageTypeError, match="epochs must be an integer"):
            check_int("epochs", bad)
    with pytest.raises(UsageError, match="epochs must be at least 1, got 0"):
        check_int("epochs", 0, minimum=1)
    with pytest.raises(UsageError, match=r"pct_start must be between 0 and 1, got 2.0"):
        check_number("pct_start", 2.0, minimum=0, maximum=1)
    with pytest.raises(UsageError, match="wd must be finite"):
        check_number("wd", float("nan"))
    for bad in ("16", 16.0, (16, 16, 3), (0, 8), True):
        with pytest.raises(UsageError, match="size must be"):
            check_size("size", bad)
    for bad in ("3e-3", slice("a", 1e-3), (), -1e-3, float("inf")):
        with pytest.raises(UsageError, match="lr must"):
            check_lr("lr", bad)


def test_a_string_size_is_refused_not_read_as_digits(digits_small):
    _, blocks = digits_small
    with pytest.raises(UsageTypeError, match=r"size must be an int or \(height, width\) ints, got '16'"):
        ImageClassificationSingle(blocks, size="16")
    assert ImageClassificationSingle(blocks, size=16).encoded_blocks()[0].size == (16, 16)


@pytest.mark.parametrize("kwargs, message", [
    ({"wd": "0.1"}, "wd must be a number"),
    ({"batch_size": "8"}, "batch_size must be an integer"),
    ({"batch_size": 0}, "batch_size must be at least 1"),
    ({"valid_pct": "0.2"}, "valid_pct must be a number"),
    ({"seed": "abc"}, "seed must be an integer"),
    ({"metrics": ["accuracy"]}, r"metrics must be a dict of name -> metric object"),
    ({"metrics": {"acc": "accuracy"}}, r"metrics\['acc'\] must be a metric object"),
    ({"metrics": [("acc", None)]}, r"metrics\['acc'\] must be a metric object"),
    ({"precision": "fp32"}, "precision must be one of .*; for 'fp32' say '32-true'"),
    ({"precision": "bf17"}, "precision must be one of"),
    ({"device": "tpux"}, "device='tpux' must be one of 'auto', 'gpu', 'cpu'"),
])
def test_tasklearner_refuses_a_wrong_argument_naming_it(make_learner, kwargs, message):
    with pytest.raises(UsageError, match=message):
        make_learner(**kwargs)


def test_metrics_as_name_metric_pairs_are_taken_as_a_dict_is(make_learner):
    from hotstart.metrics import MulticlassAccuracy

    learner = make_learner(metrics=[("acc", MulticlassAccuracy(10))])
    assert set(learner.validate()) == {"loss", "acc"}


def test_valid_pct_none_is_fine_where_it_is_not_used(make_learner, digits_small):
    data, _ = digits_small
    learner = make_learner(data=data.subset(range(100)), validdata=data.subset(range(100, 140)), valid_pct=None)
    assert len(learner.valid_loader.dataset) == 40


def test_a_device_this_machine_lacks_is_named_as_the_user_wrote_it(make_learner, monkeypatch):
    from hotstart.learner import ToGPU

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)  # the same on a machine with a GPU
    with pytest.raises(UsageError, match=r"device='cuda' asks for a CUDA GPU, and torch sees none"):
        make_learner(device="cuda")
    with pytest.raises(UsageError, match=r"ToGPU\('cuda'\) asks for a CUDA GPU"):
        make_learner(callbacks=[ToGPU()])


def test_tasklearner_refuses_what_is_not_a_task(digits_small):
    data, _ = digits_small
    with pytest.raises(UsageTypeError, match="task must be a task object such as ImageClassificationSingle"):
        tasklearner("ImageClassificationSingle", data)
    with pytest.raises(UsageTypeError, match=r"got the class ImageClassificationSingle: .*ImageClassificationSingle\(blocks\)"):
        tasklearner(ImageClassificationSingle, data)


def test_a_dict_of_splits_is_refused_as_data_naming_validdata(digits_small):
    """``{"train": data}`` was taken as a dataset of one sample ("cannot split 1 sample(s)")."""
    data, blocks = digits_small
    task = ImageClassificationSingle(blocks, size=(8, 8))
    with pytest.raises(UsageTypeError, match=r"got a dict with keys \['train'\]; for a validation split pass validdata="):
        tasklearner(task, {"train": data}, progress=False)


@pytest.mark.parametrize("call, message", [
    (lambda learner: learner.fit_one_cycle(1, "3e-3"), "lr_max must be a number"),
    (lambda learner: learner.fit(1, "3e-3"), "lr must be a number"),
    (lambda learner: learner.fit_one_cycle(1.5), "n_epoch must be an integer, got 1.5"),
    (lambda learner: learner.fit_one_cycle("2"), "n_epoch must be an integer, got '2'"),
    (lambda learner: learner.fit_one_cycle(1, lr=1e-3), r"takes its peak learning rate as lr_max .*got lr=0.001"),
    (lambda learner: learner.fit_one_cycle(1, 1e-3, pct_start=2.0), "pct_start must be between 0 and 1"),
    (lambda learner: learner.fit_one_cycle(1, 1e-3, pct_start=-0.5), "pct_start must be between 0 and 1"),
    (lambda learner: learner.fit(1, 1e-3, wd=-1), "wd must be at least 0"),
    (lambda learner: learner.fit(1, 1e-3, accumulate=1.0), "accumulate must be an integer"),
    (lambda learner: learner.fine_tune(1, base_lr="2e-3"), "base_lr must be a number"),
    (lambda learner: learner.fit_one_cycle(1, slice(1e-5, None)), "lr_max: a learning-rate slice needs a stop"),
])
def test_fit_refuses_a_wrong_argument_before_any_step(make_learner, call, message):
    learner = make_learner()
    before = {k: v.clone() for k, v in learner.model.state_dict().items()}
    with pytest.raises(UsageError, match=message):
        call(learner)
    assert all(torch.equal(v, before[k]) for k, v in learner.model.state_dict().items())
    assert learner.history == []


def test_tensor_rates_and_counts_train_as_numbers_do(make_learner):
    """torch's optimizers take a 0-d tensor rate; such rates (and counts) pass the checks and train
    as the numbers they hold (a float32 tensor's 1e-3 is 1.00000005e-3: close, not equal)."""
    a, b = make_learner(), make_learner()
    a.fit_one_cycle(1, 1e-3, wd=0.01)
    b.fit_one_cycle(torch.tensor(1), torch.tensor(1e-3), wd=torch.tensor(0.01))
    assert len(b.history) == 1 and b.history[-1]["train_loss"] == pytest.approx(a.history[-1]["train_loss"], rel=1e-3)


def test_a_bad_target_in_validdata_says_validdata(make_learner, digits_small):
    from hotstart.blocks import BlockValueError
    from hotstart.datasets import Data

    data, _ = digits_small
    bad = Data(list(data.inputs[:4]), [0, 1, "eleven", 3])
    with pytest.raises(BlockValueError, match="target of sample 2 of validdata"):
        make_learner(validdata=bad)
    with pytest.raises(BlockValueError, match=r"target of sample 2:"):
        make_learner(data=bad)


def test_validate_without_data_says_so(make_learner, tmp_path):
    from hotstart import load_learner

    make_learner().save(tmp_path / "model")
    learner = load_learner(tmp_path / "model")
    with pytest.raises(UsageError, match="this learner has no validation data"):
        learner.validate()


def test_containers_slice_into_lazy_views(digits_small):
    data, _ = digits_small
    head = data.inputs[:60]
    assert len(head) == 60 and len(data.targets[-5:]) == 5
    assert list(data.targets[10:20:3]) == [data.targets[i] for i in range(10, 20, 3)]
    assert list(data.targets[::-1])[:3] == [data.targets[199], data.targets[198], data.targets[197]]
    assert head[0].tobytes() == data.inputs[0].tobytes()  # read when asked, as the container's items are
    with pytest.raises(TypeError, match="an integer or a slice"):
        data.inputs["a"]


def test_lr_finds_sweep_neither_averages_nor_repeats_the_last_fits_average_choice(make_learner):
    """Every callback's before_fit knows the fit is lr_find's sweep (it used to be told only in
    the finder's own before_fit, which runs last): the average of the weights takes in none of the
    sweep's steps, up to rates that diverge, and the sweep's first line does not claim an average."""
    from hotstart.learner.callbacks import EMA

    learner = make_learner(ema=True)
    learner.lr_find(num_it=20)
    ema = learner.cb(EMA)
    assert ema.updates == 0 and ema.module is None
    learner.fit(1, 1e-3)
    assert learner.choices["ema"].value == "0.999" and ema.updates == 5
    learner.lr_find(num_it=20)
    assert ema.updates == 5 and "ema" not in learner.choices
