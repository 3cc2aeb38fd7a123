"""NonFiniteGuard: a diverged fit leaves a working model; fp16's GradScaler may skip steps.

Item 19: a learning rate far too high overflows BatchNorm's running statistics while the loss
and the weights are still finite. The guard must notice (buffers are checked at every training
batch) and leave a model that works, and `save` must refuse a model with non-finite state.
Item 14: under fp16 mixed precision an infinite gradient is the GradScaler's business (it skips
the step and lowers its scale); the guard stops only when the loss is not finite or the scaler
gives up. CPU has no fp16 GradScaler in Fabric's defaults, so the test gives Fabric's real
MixedPrecision("16-mixed") plugin a real ``torch.amp.GradScaler("cpu")``: fp16 autocast and
loss scaling run for real on the CPU.
"""
import math

import pytest
import torch
from conftest import snapshot, state_equal
from torch import nn

import hotstart
from hotstart.learner import Callback, NonFiniteLossError


def _finite(module) -> bool:
    return all(bool(torch.isfinite(t).all()) for t in module.state_dict().values() if t.is_floating_point())


def test_diverged_fit_is_put_back_to_the_last_validated_epoch(make_learner, digits_small, tmp_path):
    data, _ = digits_small
    learner = make_learner(batch_size=16, ema=False)  # the weights that validated are the trained ones
    # epoch 0 trains normally; then a learning rate far too high makes the fit diverge
    schedule = lambda step, total: (1e-2 if step < total / 3 else 1e4, None)  # noqa: E731
    with pytest.raises(NonFiniteLossError, match=r"diverged.*put back to its state at the end of epoch 0") as info:
        learner.fit(3, schedule=schedule)
    assert "epoch 1, training batch" in str(info.value)
    model = learner.task_model()
    assert _finite(model)
    # the model is the one that validated at the end of epoch 0: same loss and accuracy
    first = learner.history[0]
    result = learner.validate()
    assert result["loss"] == pytest.approx(first["valid_loss"], rel=1e-5)
    assert result["accuracy"] == pytest.approx(first["accuracy"])
    assert learner.opt is None  # Adam's moments of the diverged weights are not kept
    learner.save(tmp_path / "m")
    probs = hotstart.load_learner(tmp_path / "m").predict(data[0][0])[1]
    assert bool(torch.isfinite(probs).all()) and float(probs.sum()) == pytest.approx(1.0, abs=1e-5)


def test_diverged_in_the_first_epoch_is_put_back_to_the_start(make_learner):
    learner = make_learner()
    start = snapshot(learner.task_model())
    with pytest.raises(NonFiniteLossError, match="put back to its state at the start of this fit"):
        learner.fit(2, 1e4)
    assert state_equal(snapshot(learner.task_model()), start)


def test_a_diverged_fit_leaves_the_guards_state_not_the_average(make_learner):
    """With an average of the weights (`EMA`: single-label image classification's default in
    longer fits, asked for here in a short one), a fit that diverges between two checks ends
    with the state the guard put back, not with the average, which took in the diverging steps;
    the average starts again from that state, and the next fit trains and averages finite
    weights."""
    from hotstart.learner import EMA

    learner = make_learner(batch_size=16, ema=True)
    ema = learner.cb(EMA)
    schedule = lambda step, total: (1e-2 if step < total / 3 else 1e4, None)  # noqa: E731
    with pytest.raises(NonFiniteLossError, match=r"put back to its state") as info:
        learner.fit(3, schedule=schedule)
    assert _finite(learner.task_model()), str(info.value)
    assert ema.ema is None and ema.updates == 0
    put_back = snapshot(learner.task_model())
    learner.fit(1, 1e-3)
    assert ema.updates == len(learner.train_loader) and _finite(ema.module) and _finite(learner.task_model())
    assert not state_equal(snapshot(learner.task_model()), put_back)


# --- fp16 mixed precision with a real GradScaler ---------------------------------------------

def _fp16_learner(digits_small, small_task, init_scale):
    from lightning_fabric import Fabric
    from lightning_fabric.plugins.precision import MixedPrecision

    from hotstart.learner.backend import FabricBackend

    data, _ = digits_small
    model = nn.Sequential(nn.Flatten(), nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 10))  # fp16 on CPU is slow
    learner = hotstart.tasklearner(small_task, data, model=model, seed=0, progress=False, batch_size=16)
    scaler = torch.amp.GradScaler("cpu", init_scale=init_scale)
    backend = FabricBackend(accelerator="cpu")
    backend.fabric = Fabric(accelerator="cpu", plugins=[MixedPrecision("16-mixed", "cpu", scaler=scaler)])
    learner.backend = backend  # before the first fit, which sets the model up on it
    assert backend.grad_scaler is scaler
    return learner, scaler


class _Scales(Callback):
    def __init__(self, scaler):
        self.scaler, self.scales = scaler, []

    def after_step(self):
        self.scales.append(self.scaler.get_scale())


def test_fp16_scaler_skips_infinite_gradients_and_training_goes_on(digits_small, small_task):
    # 2**24 times the loss overflows fp16 in the backward pass: the first steps have infinite
    # gradients, which the scaler skips while halving its scale; then training proceeds
    learner, scaler = _fp16_learner(digits_small, small_task, init_scale=2.0 ** 24)
    scales = _Scales(scaler)
    learner.fit(3, 1e-2, callbacks=[scales])
    skipped = sum(b < a for a, b in zip([2.0 ** 24] + scales.scales, scales.scales))
    assert skipped >= 3 and scales.scales[-1] < 2.0 ** 24
    assert len(learner.history) == 3 and _finite(learner.task_model())
    assert learner.history[-1]["accuracy"] > 0.6  # 10 classes: it learned


def test_fp16_stops_when_the_scaler_gives_up(digits_small, small_task):
    learner, scaler = _fp16_learner(digits_small, small_task, init_scale=1.0)
    start = snapshot(learner.task_model())
    ce = learner.loss_func
    # a finite loss whose gradient is NaN (0 * the infinite slope of sqrt at 0): no scale helps
    learner.loss_func = lambda pred, y: ce(pred, y) + 0 * torch.sqrt(pred - pred).sum()
    with pytest.raises(NonFiniteLossError, match="GradScaler gave up") as info:
        learner.fit(3, 1e-2)
    assert "training batch" in str(info.value)
    assert scaler.get_scale() < 2.0 ** -14
    assert state_equal(snapshot(learner.task_model()), start)  # every step was skipped


def test_fp16_non_finite_loss_still_stops(digits_small, small_task):
    learner, _ = _fp16_learner(digits_small, small_task, init_scale=2.0 ** 16)
    learner.loss_func = lambda pred, y: pred.sum() * math.inf
    with pytest.raises(NonFiniteLossError, match="loss is"):
        learner.fit(1, 1e-2)
