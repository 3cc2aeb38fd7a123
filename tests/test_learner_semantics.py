"""fastai semantics users rely on (issue 9, items 8-13 and 16): the optimizer kept across fits,
lr_find through the learner's own step, freezing a model without a backbone/head split,
prediction-only learners, one-class labels, and the RNG fork of the device in use only."""
import contextlib

import pytest
import torch
import torch.nn as nn
from conftest import snapshot

from hotstart import Image, ImageClassificationSingle, Label
from hotstart.learner import Callback
from hotstart.learner.lr_find import valley


class OptStates(Callback):
    """Adam's state of every parameter at the start and end of each fit."""

    def __init__(self):
        self.starts, self.ends, self.opts = [], [], []

    def _copy(self):
        st = self.learner.opt.state
        return {id(p): {k: v.clone() for k, v in st[p].items()} for p in self.learner.model.parameters() if p in st}

    def before_fit(self):
        self.starts.append(self._copy())
        self.opts.append(self.learner.opt)

    def after_fit(self):
        self.ends.append(self._copy())


def test_fine_tune_keeps_adams_moments_between_phases(make_learner):
    learner = make_learner()
    rec = OptStates()
    learner.add_cb(rec)
    learner.fine_tune(1, freeze_epochs=1)
    assert rec.opts[0] is rec.opts[1]  # one optimizer for both phases
    frozen_end, unfrozen_start = rec.ends[0], rec.starts[1]
    head = [id(p) for p in learner.task_model().head.parameters()]
    assert head and all(i in frozen_end for i in head)
    for i in head:  # exp_avg / exp_avg_sq / step carried over, not started from zero
        assert torch.equal(unfrozen_start[i]["exp_avg"], frozen_end[i]["exp_avg"])
        assert torch.count_nonzero(unfrozen_start[i]["exp_avg"]) > 0
        assert torch.equal(unfrozen_start[i]["exp_avg_sq"], frozen_end[i]["exp_avg_sq"])
    # frozen convolutions had no gradient: no state in the frozen phase, state after unfreezing
    convs = [id(m.weight) for m in learner.task_model().backbone.modules() if isinstance(m, nn.Conv2d)]
    assert convs and not any(i in frozen_end for i in convs) and all(i in rec.ends[1] for i in convs)


def test_two_fits_continue_and_reset_opt_rebuilds(make_learner):
    learner = make_learner()  # 160 training digits, batch 32: 5 steps per epoch
    learner.fit_one_cycle(1, 1e-3)
    opt = learner.opt
    head_w = learner.task_model().head.weight
    learner.fit_one_cycle(1, 1e-3)
    assert learner.opt is opt and float(opt.state[head_w]["step"]) == 10
    learner.fit(1, 1e-3, reset_opt=True)
    assert learner.opt is not opt and float(learner.opt.state[head_w]["step"]) == 5


def test_lr_find_runs_through_the_learners_step_and_callbacks(make_learner):
    learner = make_learner()
    calls = {"train_step": 0, "compute_loss": 0}
    step = learner.train_step
    loss = learner.compute_loss

    def train_step():
        calls["train_step"] += 1
        step()

    def compute_loss(pred, yb):
        calls["compute_loss"] += 1
        return loss(pred, yb)

    learner.train_step, learner.compute_loss = train_step, compute_loss

    class Counter(Callback):
        def before_fit(self):
            self.events = []

        def after_backward(self):
            self.events.append("after_backward")

        def after_step(self):
            self.events.append("after_step")

    counter = Counter()
    learner.add_cb(counter)
    before = snapshot(learner.model)
    result = learner.lr_find(start_lr=1e-5, end_lr=1e-1, num_it=8)
    assert len(result.lrs) == 8
    assert calls == {"train_step": 8, "compute_loss": 8}
    assert counter.events == ["after_backward", "after_step"] * 8
    assert all(torch.equal(v, before[k]) for k, v in learner.model.state_dict().items())
    assert learner.history == [] and learner.recorder.losses == [] and learner.opt is None


def test_valley_is_two_thirds_down_the_longest_decrease():
    """The documented rule (learner/lr_find.py): the longest decreasing subsequence, 2/3 of the way."""
    lrs = [float(i) for i in range(20)]
    losses = [5.0, 5.0, 5.0] + [4.0 - 0.25 * i for i in range(13)] + [9.0, 9.5, 10.0, 10.5]
    lo, end = 2, 15  # 5.0 at index 2, then 4.0 .. 1.0 down to index 15
    assert valley(lrs, losses) == lrs[lo + int((end - lo) * 2 / 3)]


def _flat_model(task, hidden=True):
    c = task.channels
    if hidden:
        return nn.Sequential(nn.Flatten(), nn.Linear(c * 64, 32), nn.ReLU(), nn.Linear(32, 10))
    return nn.Sequential(nn.Flatten(), nn.Linear(c * 64, 10))


def test_fine_tune_with_a_plain_model_trains_the_last_layer_first(make_learner, small_task):
    learner = make_learner(model=_flat_model(small_task))
    model = learner.task_model()

    class Snap(Callback):
        states = []

        def after_fit(self):
            self.states.append(snapshot(self.learner.model))

    learner.add_cb(Snap())
    before = snapshot(model)
    learner.fine_tune(1, freeze_epochs=1)
    frozen, final = Snap.states
    assert torch.equal(frozen["1.weight"], before["1.weight"])  # all but the last layer frozen
    assert not torch.equal(frozen["3.weight"], before["3.weight"])
    assert not torch.equal(final["1.weight"], frozen["1.weight"])  # then everything
    assert all(p.requires_grad for p in model.parameters())


def test_freeze_a_single_layer_model_is_a_clear_error(make_learner, small_task):
    learner = make_learner(model=_flat_model(small_task, hidden=False))
    with pytest.raises(ValueError, match="cannot freeze Sequential"):
        learner.freeze()
    with pytest.raises(ValueError, match="cannot freeze"):
        learner.fine_tune(1)
    learner.unfreeze()  # nothing to split, nothing to refuse


def test_prediction_only_learner_gives_clear_errors(make_learner, tmp_path):
    from hotstart import load_learner

    make_learner().save(tmp_path / "m")
    loaded = load_learner(tmp_path / "m")
    with pytest.raises(ValueError, match="no validation data"):
        loaded.get_preds()
    with pytest.raises(ValueError, match="no validation data"):
        loaded.show_results()


def test_get_preds_sets_the_epoch_of_the_loader_it_reads(make_learner):
    learner = make_learner()
    learner.fit(2)
    train = learner.train_loader
    assert train.dataset.epoch == 1
    p1, t1 = learner.get_preds(train)
    assert train.dataset.epoch == 0
    p2, t2 = learner.get_preds(train)  # the shuffle is reseeded too: the same order, the same result
    assert torch.equal(t1, t2) and torch.equal(p1, p2) and len(t1) == len(train.dataset)


def test_one_class_label_is_refused_when_the_task_is_built():
    with pytest.raises(ValueError, match="at least 2 classes"):
        ImageClassificationSingle((Image(), Label(["cat"])), size=(8, 8))


class _ForkSpy:
    def __init__(self):
        self.devices = []

    @contextlib.contextmanager
    def __call__(self, devices=None, enabled=True, **kwargs):
        self.devices.append(list(devices))
        state = torch.get_rng_state()
        try:
            yield
        finally:
            torch.set_rng_state(state)


class _FakeGenerator:
    def __init__(self):
        self.seeds = []

    def manual_seed(self, s):
        self.seeds.append(s)


def test_seeded_rng_forks_only_the_device_in_use(make_learner, monkeypatch):
    from hotstart.learner.rng import seeded_torch_rng

    learner = make_learner(optimizer="sgd")  # fused Adam asks the CUDA driver about itself
    spy, gens = _ForkSpy(), [_FakeGenerator() for _ in range(4)]
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 4)
    monkeypatch.setattr(torch.cuda, "default_generators", gens, raising=False)
    monkeypatch.setattr(torch.random, "fork_rng", spy)
    learner.fit(1)
    learner.validate()
    learner.get_preds()
    assert spy.devices and all(d == [] for d in spy.devices)  # a CPU run forks no CUDA device
    with seeded_torch_rng(7, torch.device("cuda", 2)):
        pass
    assert spy.devices[-1] == [2] and gens[2].seeds == [7] and not any(g.seeds for i, g in enumerate(gens) if i != 2)
