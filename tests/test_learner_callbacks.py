"""Callbacks: event order, cancelling, the NaN guard, interrupts, early stopping, checkpoints, clipping."""
import math

import pytest
import torch
from conftest import snapshot, state_equal

import hotstart
from hotstart.learner import (Callback, CancelBatch, CancelEpoch, CancelFit, EarlyStopping, GradientClip,
                              NonFiniteLossError, SaveBestModel)
from hotstart.learner.callbacks.base import EVENTS
from hotstart.errors import UsageError
from hotstart.learner.callbacks.nan_guard import NonFiniteGuard


class EventLog(Callback):
    def __init__(self, order=0, name="log", log=None):
        self.order, self.name = order, name
        self.log = [] if log is None else log


for _event in EVENTS:
    setattr(EventLog, _event, lambda self, _e=_event: self.log.append(_e))


def test_event_order_of_one_epoch(make_learner):
    # 160 training digits in batches of 32 -> 5 steps; 40 validation digits -> 2 batches
    learner = make_learner()
    log = EventLog()
    learner.fit(1, callbacks=[log])
    train_batch = ["before_batch", "after_pred", "after_loss", "after_backward", "after_step", "after_batch"]
    valid_batch = ["before_batch", "after_pred", "after_loss", "after_batch"]
    expected = (["before_fit", "before_epoch", "before_train"] + train_batch * 5 + ["after_train", "before_validate"]
                + valid_batch * 2 + ["after_validate", "after_epoch", "after_fit"])
    assert log.log == expected
    assert log not in learner.cbs  # fit(callbacks=...) adds them for that fit only


def test_callback_order_is_respected(make_learner):
    calls = []

    class Named(Callback):
        def __init__(self, name, order):
            self.name, self.order = name, order

        def after_epoch(self):
            calls.append((self.name, len(self.learner.history)))

    learner = make_learner(callbacks=[Named("late", 100), Named("early", -100), Named("middle", 0)])
    learner.fit(1)
    # the recorder (order -10) writes the epoch's row between "early" and "middle"
    assert calls == [("early", 0), ("middle", 1), ("late", 1)]
    orders = [cb.order for cb in learner.cbs]
    assert orders == sorted(orders)


def test_cancel_batch_skips_the_step(make_learner):
    class SkipAll(Callback):
        steps = 0

        def after_loss(self):
            if self.learner.training:
                raise CancelBatch()

        def after_step(self):
            self.steps += 1

    learner = make_learner()
    # task_model(): the network itself (learner.model may be wrapped once a fit sets up: bf16-mixed
    # on a CPU with bf16 units, Fabric, DDP)
    params = {k: v.detach().clone() for k, v in learner.task_model().named_parameters()}
    skip = SkipAll()
    learner.fit(1, 1e-2, callbacks=[skip])
    assert skip.steps == 0
    assert all(torch.equal(params[k], v) for k, v in learner.task_model().named_parameters())
    assert len(learner.history) == 1 and math.isfinite(learner.history[0]["train_loss"])


def test_cancel_epoch_and_cancel_fit(make_learner):
    class CancelSecondEpoch(Callback):
        def before_train(self):
            if self.learner.epoch == 1:
                raise CancelEpoch()

    class StopAfterOne(Callback):
        ran_after_fit = False

        def after_epoch(self):
            raise CancelFit()

        def after_fit(self):
            self.ran_after_fit = True

    learner = make_learner()
    log = EventLog()
    learner.fit(3, callbacks=[CancelSecondEpoch(), log])
    assert len(learner.history) == 3 and log.log.count("after_epoch") == 3
    assert log.log.count("after_train") == 2 and log.log.count("after_validate") == 2  # epoch 1 was cancelled
    row = learner.history[1]  # the cancelled epoch: a row of NaNs, not the previous epoch's numbers
    assert row["epoch"] == 1 and all(math.isnan(row[k]) for k in ("train_loss", "valid_loss", "accuracy"))

    learner = make_learner()
    stop = StopAfterOne()
    learner.fit(5, callbacks=[stop])
    assert len(learner.history) == 1 and stop.ran_after_fit


class BadBatch(Callback):
    """Makes the inputs of training batch `at` NaN; remembers the state after each good step and
    at the end of each epoch."""

    def __init__(self, epoch, at):
        self.epoch, self.at, self.good, self.epoch_end = epoch, at, None, None

    def before_batch(self):
        if self.learner.training and self.learner.epoch == self.epoch and self.learner.iter == self.at:
            self.learner.xb = self.learner.xb * float("nan")

    def after_step(self):
        self.good = snapshot(self.learner.model)

    def after_epoch(self):
        self.epoch_end = snapshot(self.learner.model)


def _check_every(learner, k):
    learner.cb(NonFiniteGuard).check_every = k
    return learner


def test_nan_loss_stops_with_last_good_weights(make_learner):
    """Checking every batch (check_every=1): the model from before the bad batch, optimizer kept."""
    learner = _check_every(make_learner(), 1)
    bad = BadBatch(epoch=1, at=2)
    log = EventLog()
    with pytest.raises(NonFiniteLossError, match=r"epoch 1, training batch 2") as info:
        learner.fit(3, callbacks=[bad, log])
    assert "loss is nan" in str(info.value) and "from before this batch" in str(info.value)
    # parameters and BatchNorm running stats are those from before the bad batch
    assert state_equal(learner.model.state_dict(), bad.good)
    assert log.log[-1] == "after_fit"
    assert len(learner.history) == 2 and learner.history[-1]["stopped"] == "non-finite" and learner.opt is not None
    # the learner is usable afterwards: it predicts finite numbers and trains again
    assert all(math.isfinite(v) for v in learner.validate().values())
    learner.fit(1)
    assert len(learner.history) == 3 and math.isfinite(learner.history[-1]["train_loss"])


def test_nan_loss_found_at_the_next_check_goes_back_to_that_check(make_learner):
    """By default the guard checks every few steps (no sync per batch): a NaN loss at epoch 1,
    batch 2 is found at the epoch's last step; the error still names batch 2, and the model is
    the one of the last check that passed (the end of epoch 0), with a new optimizer."""
    learner = make_learner(ema=False)  # `bad.epoch_end` is the trained weights, not an average
    assert learner.cb(NonFiniteGuard).check_every > 5  # 5 batches an epoch: one check per epoch
    bad = BadBatch(epoch=1, at=2)
    with pytest.raises(NonFiniteLossError, match=r"loss is nan at epoch 1, training batch 2") as info:
        learner.fit(3, callbacks=[bad])
    assert "put back to its state at the end of epoch 0" in str(info.value)
    assert state_equal(learner.model.state_dict(), bad.epoch_end)
    assert len(learner.history) == 2 and learner.history[-1]["stopped"] == "non-finite" and learner.opt is None
    learner.fit(1)
    assert len(learner.history) == 3 and math.isfinite(learner.history[-1]["train_loss"])


class NanGrad(Callback):
    order = -30  # before the guard looks

    def after_backward(self):
        if self.learner.iter == 3:
            next(self.learner.model.parameters()).grad.fill_(float("inf"))

    def after_step(self):
        self.good = snapshot(self.learner.model)


def test_nan_gradients_stop_before_the_step(make_learner):
    learner = _check_every(make_learner(), 1)
    cb = NanGrad()
    with pytest.raises(NonFiniteLossError, match=r"gradients are not finite at epoch 0, training batch 3"):
        learner.fit(1, callbacks=[cb])
    assert state_equal(learner.model.state_dict(), cb.good)
    learner.fit(1)  # stale non-finite gradients do not leak into the next fit
    assert math.isfinite(learner.history[-1]["train_loss"])


def test_nan_gradients_between_checks_show_as_the_next_loss(make_learner):
    """Gradients are checked only at check steps; an infinite one in between makes the weights,
    and so the next batch's loss, NaN: the first check finds that, and no check passed before it
    in this fit, so the model is the one from the start of the fit."""
    learner = make_learner()
    start = snapshot(learner.model)
    with pytest.raises(NonFiniteLossError, match=r"loss is nan at epoch 0, training batch 4.*start of this fit"):
        learner.fit(1, callbacks=[NanGrad()])
    assert state_equal(learner.model.state_dict(), start)
    learner.fit(1)
    assert math.isfinite(learner.history[-1]["train_loss"])


def test_keyboard_interrupt_keeps_history(make_learner):
    class Interrupt(Callback):
        def after_batch(self):
            if self.learner.epoch == 1 and self.learner.iter == 1:
                raise KeyboardInterrupt

    learner = make_learner(progress=True)
    log = EventLog()
    with pytest.raises(KeyboardInterrupt):
        learner.fit(3, callbacks=[Interrupt(), log])
    assert log.log[-1] == "after_fit" and log.log.count("after_epoch") == 1
    assert len(learner.history) == 1 and learner.history[0]["epoch"] == 0


def test_progress_prints_a_table(make_learner, capsys):
    make_learner(progress=True).fit(2)
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("precision ")  # the fit's first line: what the defaults chose (choices.py)
    assert out[1].split() == ["epoch", "train_loss", "valid_loss", "accuracy", "time"]
    assert [line.split()[0] for line in out[2:]] == ["0", "1"]


def test_early_stopping(make_learner, tmp_path):
    stop = EarlyStopping(monitor="valid_loss", patience=1, min_delta=1e9)  # nothing can improve by 1e9
    learner = make_learner(callbacks=[stop])
    learner.fit(5)
    assert len(learner.history) == 2 and stop.stopped_epoch == 1

    with pytest.raises(ValueError, match="mode"):
        EarlyStopping(mode="sideways")
    with pytest.raises(ValueError, match="mode"):
        SaveBestModel(tmp_path / "x", mode="up")
    learner = make_learner(callbacks=[EarlyStopping(monitor="no_such_metric")])
    with pytest.raises(UsageError, match="'no_such_metric' is not a loss or one of the learner's metrics"):
        learner.fit(1)
    assert learner.history == []  # refused before the first step


def test_early_stopping_on_a_metric_that_cannot_improve(make_learner):
    class Constant(Callback):
        order = -7  # after the recorder has written the row, before early stopping reads it

        def after_epoch(self):
            self.learner.history[-1]["score"] = 0.5

    stop = EarlyStopping(monitor="score", patience=2)
    learner = make_learner(callbacks=[Constant(), stop])
    with pytest.raises(UsageError, match=r"EarlyStopping: 'score' is not a loss or one of the learner's metrics "
                                         r"\['accuracy'\], so which way is better is unknown; pass mode="):
        learner.fit(6)
    assert learner.history == []  # before the first step, not after an epoch
    stop = EarlyStopping(monitor="score", patience=2, mode="max")
    learner = make_learner(callbacks=[Constant(), stop])
    learner.fit(6)
    assert len(learner.history) == 3 and stop.stopped_epoch == 2


def test_the_direction_of_a_metric_comes_from_the_metric(make_learner, tmp_path):
    """EarlyStopping and SaveBestModel took every metric but a loss as higher-is-better: a fit whose
    rmse or mean_distance improved stopped, and load_best kept the worst epoch. The direction is
    the metric's `higher_is_better` (torchmetrics' attribute; hotstart's metrics declare it)."""
    from hotstart import metrics as M

    assert M.MulticlassAccuracy(3).higher_is_better and M.R2Score().higher_is_better
    assert M.MeanSquaredError().higher_is_better is False and M.MeanDistance((8, 8)).higher_is_better is False
    assert M.Denormalized(M.MeanSquaredError(squared=False), [0.0], [1.0]).higher_is_better is False

    class Falling(Callback):
        """A metric that improves every epoch (lower is better), as an RMSE does while it learns."""
        order = -7

        def after_epoch(self):
            self.learner.history[-1]["rmse"] = 10.0 - self.learner.epoch

    class Stub:  # torchmetrics' protocol; the value is Falling's
        def __init__(self, higher_is_better=None):
            self.higher_is_better = higher_is_better

        def update(self, p, t): pass
        def compute(self): return torch.tensor(0.0)
        def reset(self): pass
        def to(self, device): return self

    stop = EarlyStopping(monitor="rmse", patience=1)
    best = SaveBestModel(tmp_path / "best", monitor="rmse")
    learner = make_learner(callbacks=[Falling(), stop, best], metrics={"rmse": Stub(higher_is_better=False)})
    learner.fit(4)
    assert stop.mode == best.mode == "min" and stop.stopped_epoch is None and len(learner.history) == 4
    assert best.best == 7.0 and best.best_epoch == 3

    learner = make_learner(callbacks=[SaveBestModel(tmp_path / "b2", monitor="odd")], metrics={"odd": Stub()})
    with pytest.raises(UsageError, match="SaveBestModel: the metric 'odd' does not say whether higher is better"):
        learner.fit(1)
    assert learner.history == []


def test_save_best_model(make_learner, tmp_path, digits_small):
    best = SaveBestModel(tmp_path / "best", monitor="valid_loss", load_best=True)
    learner = make_learner(callbacks=[best])
    learner.fit_one_cycle(2, 3e-3)
    assert best.best_epoch in (0, 1)
    assert best.best == min(row["valid_loss"] for row in learner.history)
    files = sorted(p.name for p in (tmp_path / "best").rglob("*"))
    assert files == ["task.json", "weights.safetensors"]  # no leftover *.tmp files
    assert not list(tmp_path.rglob("*.tmp"))

    loaded = hotstart.load_learner(tmp_path / "best")
    # load_best=True: the learner ends with the best epoch's weights
    assert state_equal(loaded.task_model().state_dict(), learner.task_model().state_dict())
    data, _ = digits_small
    assert torch.equal(loaded.predict(data[0][0])[1], learner.predict(data[0][0])[1])


def test_gradient_clip(make_learner):
    class Norms(Callback):
        def __init__(self, order):
            self.order, self.norms = order, []

        def after_backward(self):
            grads = [p.grad for p in self.learner.model.parameters() if p.grad is not None]
            self.norms.append(float(torch.linalg.vector_norm(torch.stack([g.norm() for g in grads]))))

    before, after = Norms(order=5), Norms(order=20)  # GradientClip has order 10
    learner = make_learner(callbacks=[before, GradientClip(max_norm=0.05), after])
    learner.fit(1, 1e-3)
    assert max(before.norms) > 0.05  # clipping had something to do
    assert len(after.norms) == 5
    assert all(n <= 0.05 * (1 + 1e-4) for n in after.norms)
    for b, a in zip(before.norms, after.norms):
        assert a == pytest.approx(min(b, 0.05), rel=1e-3)


class RecordingLogger:
    """A sink with Lightning's logger methods, to observe what LogTo sends (the writing itself is
    Lightning's; the CSV test below checks a real logger end to end)."""

    def __init__(self):
        self.metrics, self.hparams, self.status, self.saves = [], [], [], 0

    def log_metrics(self, metrics, step=None):
        self.metrics.append((step, dict(metrics)))

    def log_hyperparams(self, params):
        self.hparams.append(dict(params))

    def save(self):
        self.saves += 1

    def finalize(self, status):
        self.status.append(status)


def test_log_to_sends_steps_epochs_and_status(make_learner):
    from hotstart.learner import LogTo

    sink = RecordingLogger()
    learner = make_learner(callbacks=[LogTo(sink, every=2)])
    learner.fit_one_cycle(2)
    n_iter = learner.n_iter
    steps = [(s, m) for s, m in sink.metrics if "train_loss_step" in m]
    assert [s for s, _ in steps] == list(range(1, 2 * n_iter, 2))  # every 2nd training batch
    assert all(set(m) == {"train_loss_step", "lr"} and m["lr"] > 0 for _, m in steps)
    epochs = [(s, m) for s, m in sink.metrics if "valid_loss" in m]
    assert [s for s, _ in epochs] == [n_iter, 2 * n_iter]
    assert [m["epoch"] for _, m in epochs] == [0, 1]
    assert epochs[-1][1]["accuracy"] == learner.history[-1]["accuracy"]
    assert sink.hparams[0]["n_epoch"] == 2 and sink.saves == 2 and sink.status == ["success"]

    learner.fit(1)  # a second fit continues the step axis
    assert sink.metrics[-1][0] == 3 * n_iter and sink.status == ["success", "success"]

    bad = BadBatch(epoch=0, at=1)
    with pytest.raises(NonFiniteLossError):
        learner.fit(1, callbacks=[bad])
    assert sink.status[-1] == "failed"


def test_log_to_csv_writes_lightning_csv(make_learner, tmp_path):
    import csv

    from hotstart.learner import LogTo

    learner = make_learner()
    learner.fit_one_cycle(2, callbacks=[LogTo("csv", root_dir=tmp_path, every=1)])
    files = list(tmp_path.glob("hotstart/version_*/metrics.csv"))
    assert len(files) == 1, list(tmp_path.rglob("*"))
    rows = list(csv.DictReader(files[0].open()))
    epoch_rows = [r for r in rows if r.get("valid_loss")]
    assert len(epoch_rows) == 2
    assert float(epoch_rows[-1]["accuracy"]) == pytest.approx(learner.history[-1]["accuracy"])
    assert sum(1 for r in rows if r.get("train_loss_step")) == 2 * learner.n_iter
    with pytest.raises(ValueError, match="unknown logger 'wandb'"):
        LogTo("wandb")
    from hotstart.learner.callbacks.loggers import _tensorboard_installed

    if not _tensorboard_installed():  # said when the callback is made, not minutes into a fit
        with pytest.raises(ModuleNotFoundError, match="pip install tensorboard"):
            LogTo("tensorboard")
