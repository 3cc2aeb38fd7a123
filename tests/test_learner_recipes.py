"""fastai's training recipes, each against its reference: label smoothing (torch's loss), MixUp /
CutMix (timm's Mixup batches), EMA (timm's ModelEmaV3 weights), discriminative learning rates
(fastai's even_mults spread, computed here)."""
import numpy as np
import pytest
import torch
import torch.nn.functional as F

from hotstart import ImageClassificationSingle, SupervisedTask
from hotstart.errors import UsageError
from hotstart.learner import EMA, Callback, CutMix, Learner, MixUp


@pytest.fixture
def smooth_task(digits_small):
    return ImageClassificationSingle(digits_small[1], size=(8, 8), augment={"flip": 0.0}, label_smoothing=0.1)


# --- label smoothing -------------------------------------------------------------------------

def test_label_smoothing_is_torchs_loss_and_is_saved_with_the_task(smooth_task, small_task):
    g = torch.Generator().manual_seed(0)
    logits, y = torch.randn(12, 10, generator=g), torch.randint(0, 10, (12,), generator=g)
    got = smooth_task.loss_fn()(logits, y)
    assert torch.equal(got, F.cross_entropy(logits, y, label_smoothing=0.1))
    assert not torch.equal(got, small_task.loss_fn()(logits, y))
    d = smooth_task.to_dict()
    assert d["label_smoothing"] == 0.1 and "label_smoothing" not in small_task.to_dict()
    again = SupervisedTask.from_dict(d)
    assert again == smooth_task and again.label_smoothing == 0.1
    assert smooth_task.with_stats((0.5,), (0.2,)).label_smoothing == 0.1
    with pytest.raises(UsageError, match="label_smoothing"):
        ImageClassificationSingle(smooth_task.blocks, label_smoothing=1.5)


# --- MixUp / CutMix ------------------------------------------------------------------------

@pytest.mark.parametrize("options", [dict(mixup_alpha=0.8), dict(mixup_alpha=0.0, cutmix_alpha=1.0),
                                     dict(mixup_alpha=0.8, cutmix_alpha=1.0, switch_prob=0.5, mode="elem")])
def test_mix_batch_equals_timms_mixup_and_leaves_numpys_global_rng_alone(options):
    from timm.data import Mixup

    from hotstart.learner.callbacks.mixup import mix_batch

    g = torch.Generator().manual_seed(1)
    x, y = torch.randn(8, 1, 8, 8, generator=g), torch.randint(0, 10, (8,), generator=g)
    mixup = Mixup(**options, label_smoothing=0.1, num_classes=10)
    saved = np.random.get_state()
    try:
        for seed in (3, 4, 5):
            before = np.random.get_state()
            got_x, got_y = mix_batch(mixup, x, y, seed)
            after = np.random.get_state()
            assert all(np.array_equal(a, b) for a, b in zip(before, after))  # numpy's global RNG untouched
            np.random.seed(seed)  # the reference: timm on numpy's global RNG, seeded the same
            ref_x, ref_y = mixup(x.clone(), y)
            assert torch.equal(got_x, ref_x) and torch.equal(got_y, ref_y)
    finally:
        np.random.set_state(saved)
    # an odd batch: timm on the batch plus a copy of its second image (dropped), so no image is its own
    # partner; before, the last image (all of a batch of one) was left unmixed without a word
    saved = np.random.get_state()
    try:
        odd_x, odd_y = mix_batch(mixup, x[:7], y[:7], 3)
        np.random.seed(3)
        ref_x, ref_y = mixup(torch.cat([x[:7], x[1:2]]).clone(), torch.cat([y[:7], y[1:2]]))
    finally:
        np.random.set_state(saved)
    assert torch.equal(odd_x, ref_x[:7]) and torch.equal(odd_y, ref_y[:7])
    if options.get("mode") != "elem":  # elem draws a lambda per image: some may be 1 (unmixed)
        assert all(not torch.equal(odd_x[i], x[i]) for i in range(7))
    assert torch.allclose(odd_y.sum(1), torch.ones(7))
    one_x, one_y = mix_batch(mixup, x[:1], y[:1], 3)  # nothing to mix with: as it is
    assert torch.equal(one_x, x[:1]) and one_y.argmax(1).tolist() == y[:1].tolist()


class BatchLog(Callback):
    order = 50  # after MixUp

    def before_fit(self):
        self.train, self.valid = [], []

    def before_batch(self):
        ln = self.learner
        (self.train if ln.training else self.valid).append((ln.epoch, ln.iter, ln.xb.clone(), ln.yb.clone()))


def test_mixup_callback_mixes_training_batches_from_the_learners_seed(make_learner, smooth_task):
    from timm.data import Mixup

    from hotstart.learner.callbacks.mixup import _STREAM
    from hotstart.learner.rng import derive_seed

    raw, mixed = BatchLog(), BatchLog()
    make_learner(task=smooth_task, callbacks=[raw]).fit(2, 1e-9)  # the same loaders, unmixed
    learner = make_learner(task=smooth_task, callbacks=[CutMix(prob=0.7), mixed])
    np_state, torch_state = np.random.get_state()[1].copy(), torch.get_rng_state()
    learner.fit(2, 1e-3)
    assert np.array_equal(np.random.get_state()[1], np_state) and torch.equal(torch.get_rng_state(), torch_state)
    ref = Mixup(mixup_alpha=0.0, cutmix_alpha=1.0, prob=0.7, label_smoothing=0.1, num_classes=10)
    n_mixed, n_epoch_matters = 0, 0
    saved = np.random.get_state()
    try:
        for (epoch, i, x, y), (_, _, mx, my) in zip(raw.train, mixed.train):
            np.random.seed(derive_seed(learner.fit_seed, epoch, i, _STREAM))
            rx, ry = ref(x.clone(), y)
            assert torch.equal(mx, rx) and torch.equal(my, ry)
            n_mixed += not torch.equal(mx, x)
            if epoch == 1:  # the same batch position one epoch earlier draws otherwise: the seed holds the epoch
                np.random.seed(derive_seed(learner.fit_seed, 0, i, _STREAM))
                n_epoch_matters += not torch.equal(ref(x.clone(), y)[1], my)
    finally:
        np.random.set_state(saved)
    assert len(mixed.train) == 10 and n_mixed >= 1 and n_epoch_matters >= 3
    # validation is never mixed: the same images and class indices
    assert all(torch.equal(a[2], b[2]) and torch.equal(a[3], b[3]) for a, b in zip(raw.valid, mixed.valid))
    assert mixed.valid[0][3].dtype == torch.long
    assert type(learner.loss_func).__name__ == "CrossEntropyLoss"  # the soft-target loss was for training only
    assert np.isfinite(learner.history[-1]["train_loss"])


def test_mixup_needs_a_single_label_classification_task(make_learner):
    ln = make_learner()
    bare = Learner(ln.model, ln.train_loader, ln.valid_loader, ln.loss_func, task=None, callbacks=[MixUp()],
                   progress=False, seed=0)
    with pytest.raises(UsageError, match="ImageClassificationSingle"):
        bare.fit(1)
    with pytest.raises(UsageError, match="alpha"):
        MixUp(mixup_alpha=0.0)
    with pytest.raises(UsageError, match="batch_size=1 there is none"):
        make_learner(batch_size=1, callbacks=[MixUp()]).fit(1)


# --- EMA ---------------------------------------------------------------------------------------

class ReferenceEMA(Callback):
    """timm's ModelEmaV3, updated as timm's train script does, after every optimizer step."""
    order = 30  # after EMA

    def before_fit(self):
        from timm.utils import ModelEmaV3

        self.ema, self.n = ModelEmaV3(self.learner.task_model(), decay=0.9), 0

    def after_step(self):
        self.ema.update(self.learner.task_model(), step=self.n)
        self.n += 1


def test_ema_weights_equal_timms_model_ema_v3(make_learner):
    ema, ref = EMA(decay=0.9, use_ema=False), ReferenceEMA()
    learner = make_learner(callbacks=[ema, ref])
    learner.fit(2, 1e-2)
    assert ema.updates == ref.n == 10
    got, want = ema.module.state_dict(), ref.ema.module.state_dict()
    assert got.keys() == want.keys() and all(torch.equal(got[k], want[k]) for k in got)
    trained = learner.task_model().state_dict()  # use_ema=False: the model keeps its trained weights
    assert any(not torch.equal(trained[k], got[k]) for k in got if got[k].is_floating_point())


def test_ema_validates_and_ends_with_the_averaged_weights(make_learner):
    ema = EMA(decay=0.9)
    learner = make_learner(callbacks=[ema])
    learner.fit(2, 1e-2)
    final, avg = learner.task_model().state_dict(), ema.module.state_dict()
    assert all(torch.equal(final[k], avg[k]) for k in avg)
    # the last epoch's validation ran on the averaged weights, which the model now holds
    assert learner.validate()["loss"] == pytest.approx(learner.history[-1]["valid_loss"], rel=1e-6)


# --- discriminative learning rates -------------------------------------------------------------

def fastai_even_mults(start, stop, n):  # fastai.torch_core.even_mults, verbatim
    mult = stop / start
    step = mult ** (1 / (n - 1))
    return [start * (step ** i) for i in range(n)]


def test_group_lrs_follow_fastais_rule():
    from hotstart.learner.optim import group_lrs

    assert group_lrs(slice(1e-5, 1e-3), 5) == fastai_even_mults(1e-5, 1e-3, 5)
    assert group_lrs((1e-5, 1e-3), 4) == fastai_even_mults(1e-5, 1e-3, 4)
    assert group_lrs(slice(1e-3), 3) == [1e-4, 1e-4, 1e-3]  # fastai: lr / 10 for all but the last group
    assert group_lrs([1e-4, 2e-4, 3e-4], 3) == [1e-4, 2e-4, 3e-4]
    assert group_lrs(3e-3, 2) == [3e-3, 3e-3]
    with pytest.raises(UsageError, match="3 rates"):
        group_lrs([1e-4, 2e-4, 3e-4], 5)


class GroupLRs(Callback):
    order = 100

    def before_fit(self):
        self.lrs = []

    def after_step(self):
        self.lrs.append([g["lr"] for g in self.learner.opt.param_groups])


def test_one_cycle_scales_each_layer_group(make_learner):
    from hotstart.learner.schedule import one_cycle_at
    from hotstart.models.layer_groups import layer_groups

    rec = GroupLRs()
    learner = make_learner(callbacks=[rec])
    n = len(layer_groups(learner.task_model()))
    assert n >= 3  # the small CNN's stages, then the head
    learner.fit_one_cycle(1, slice(1e-4, 1e-2), pct_start=0.25)  # one_cycle_at's default
    peaks = fastai_even_mults(1e-4, 1e-2, n)
    total = len(rec.lrs)
    for step, lrs in enumerate(rec.lrs):
        assert lrs == [one_cycle_at(step, total, p)[0] for p in peaks]


# --- progressive resizing ---------------------------------------------------------------------

def test_set_size_trains_on_at_the_new_size_as_a_learner_built_for_it(make_learner, smooth_task, digits_small):
    data = digits_small[0].subset(list(range(60)))
    learner = make_learner(task=smooth_task, data=data, batch_size=16, callbacks=[EMA(decay=0.9)])
    learner.fit(1, 1e-3)
    opt = learner.opt
    learner.set_size((16, 16))
    log = BatchLog()
    learner.fit(1, 1e-3, callbacks=[log])
    assert learner.opt is opt and learner.task.size == (16, 16) and learner.task.label_smoothing == 0.1
    assert all(x.shape[-2:] == (16, 16) for _, _, x, _ in log.train + log.valid)
    keep = lambda out, xb, yb: (xb, yb)  # noqa: E731
    fresh = make_learner(task=SupervisedTask.from_dict({**smooth_task.to_dict(), "size": [16, 16]}), data=data,
                         batch_size=16)
    got, want = learner.run_eval(keep=keep), fresh.run_eval(keep=keep)
    assert all(torch.equal(a, b) for a, b in zip(got, want))  # the same validation images at 16x16
    with pytest.raises(UsageError, match="size"):
        Learner(learner.model, None, None, learner.loss_func, task=None, progress=False).set_size(32)


def test_sizes_the_model_cannot_take_are_refused_as_tasklearner_refuses_them(make_learner, small_task, digits_small):
    """set_size and fit_one_cycle(sizes=) took sizes that tasklearner refuses for the same model;
    sizes= is checked when the fit starts, before a batch is trained."""
    from hotstart import tasklearner
    from hotstart.tasks.checks import ModelTaskMismatch

    def by_8():  # downsamples by 8: takes 8x8, not 4x4
        conv = lambda cin, cout: torch.nn.Conv2d(cin, cout, 3, stride=2, padding=1)  # noqa: E731
        return torch.nn.Sequential(conv(1, 4), torch.nn.ReLU(), conv(4, 4), torch.nn.ReLU(), conv(4, 4),
                                   torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(4, 10))

    data = digits_small[0].subset(list(range(40)))
    at_4 = SupervisedTask.from_dict({**small_task.to_dict(), "size": [4, 4]})
    with pytest.raises(ModelTaskMismatch) as refused:
        tasklearner(at_4, data, model=by_8(), progress=False, seed=0)
    learner = make_learner(data=data, model=by_8(), batch_size=16)
    with pytest.raises(ModelTaskMismatch) as by_set_size:
        learner.set_size((4, 4))
    assert str(by_set_size.value) == f"set_size((4, 4)): {refused.value}" and "4x4 is too small" in str(refused.value)
    assert learner.task == small_task and learner.task.size == (8, 8)  # nothing changed
    before = {k: v.clone() for k, v in learner.task_model().state_dict().items()}
    with pytest.raises(ModelTaskMismatch) as by_sizes:
        learner.fit_one_cycle(2, 1e-2, sizes=[(8, 8), 4])
    assert str(by_sizes.value) == f"sizes=[(8, 8), (4, 4)]: {refused.value}"
    assert learner.task.size == (8, 8) and learner.history == []
    assert all(torch.equal(v, before[k]) for k, v in learner.task_model().state_dict().items())  # nothing trained


def test_fit_one_cycle_with_sizes_is_one_cycle_across_the_sizes_and_resumes_at_the_right_size(make_learner,
                                                                                                digits_small, tmp_path):
    from hotstart.learner.checkpoint import checkpoints
    from hotstart.learner.schedule import one_cycle_at

    class Crash(Exception):
        pass

    class CrashAt(Callback):
        def after_batch(self):
            if (self.learner.epoch, self.learner.iter) == (2, 1):
                raise Crash

    data = digits_small[0].subset(list(range(60)))  # 48 training digits: 3 batches of 16 an epoch
    sizes = [(8, 8), 12]  # 3 epochs: 0 and 1 at 8x8, 2 at 12x12
    log = BatchLog()
    ref = make_learner(data=data, batch_size=16, callbacks=[log])
    ref.fit_one_cycle(3, 1e-2, pct_start=0.25, sizes=sizes)
    seen = {(epoch, tuple(x.shape[-2:])) for epoch, _, x, _ in log.train + log.valid}
    assert seen == {(0, (8, 8)), (1, (8, 8)), (2, (12, 12))} and ref.task.size == (12, 12)
    assert ref.recorder.lrs == [one_cycle_at(step, 9, 1e-2)[0] for step in range(9)]  # one cycle over both sizes

    crashed = make_learner(data=data, batch_size=16, callbacks=[CrashAt()])
    with pytest.raises(Crash):
        crashed.fit_one_cycle(3, 1e-2, pct_start=0.25, sizes=sizes, checkpoint_dir=tmp_path, checkpoint_every=1)
    assert checkpoints(tmp_path)[-1].name == "ckpt-000-000000007-0"  # in epoch 2, at 12x12
    resumed_log = BatchLog()
    resumed = make_learner(data=data, batch_size=16, callbacks=[resumed_log])  # built at 8x8
    resumed.fit_one_cycle(3, 1e-2, pct_start=0.25, sizes=sizes, checkpoint_dir=tmp_path, resume=tmp_path)
    assert {tuple(x.shape[-2:]) for _, _, x, _ in resumed_log.train + resumed_log.valid} == {(12, 12)}
    assert resumed.task.size == (12, 12)
    want = ref.task_model().state_dict()
    assert all(torch.equal(v, want[k]) for k, v in resumed.task_model().state_dict().items())
    no_time = lambda history: [{k: v for k, v in row.items() if k != "time"} for row in history]  # noqa: E731
    assert no_time(resumed.history) == no_time(ref.history)
    with pytest.raises(UsageError, match="ProgressiveResize"):  # the checkpoint's fit had sizes=
        make_learner(data=data, batch_size=16).fit_one_cycle(3, 1e-2, resume=tmp_path)
    with pytest.raises(UsageError, match="sizes="):
        ref.fit_one_cycle(1, 1e-2, sizes=sizes)


def test_save_best_model_saves_the_averaged_weights_it_judged(make_learner, tmp_path):
    from hotstart import load_learner
    from hotstart.learner import SaveBestModel

    learner = make_learner(callbacks=[EMA(decay=0.9), SaveBestModel(tmp_path / "best", load_best=True)])
    learner.fit(2, 1e-2)
    best = learner.cb(SaveBestModel)
    saved = load_learner(tmp_path / "best")
    loss = saved.validate(learner.valid_loader)["loss"]
    assert loss == pytest.approx(best.best, rel=1e-6)  # the saved weights are those that validated best
    assert loss == pytest.approx(learner.validate()["loss"], rel=1e-6)  # and the model holds them


@pytest.mark.parametrize("listed", ["ema last", "a canceller before the ema"])
def test_load_best_survives_a_stop_at_an_epochs_end_with_ema(make_learner, tmp_path, listed):
    """EarlyStopping and EMA shared order 60: listed first, EarlyStopping raised CancelFit before
    EMA swapped the trained weights back, and EMA's after_fit then swapped them over the best epoch
    that SaveBestModel(load_best=True) had just loaded. EarlyStopping is order 65 now, and EMA keeps
    a loaded best whatever stopped the fit (here also a callback of order 58 that cancels)."""
    from hotstart.learner import CancelFit, EarlyStopping, SaveBestModel
    from hotstart.learner.serialization import load_weights

    class StopAfterTwo(Callback):
        order = 58  # between SaveBestModel (55) and EMA (60): EMA's average is still swapped in

        def after_epoch(self):
            if self.learner.epoch == 1:
                raise CancelFit("enough")

    best = SaveBestModel(tmp_path / "best", load_best=True)
    stop = EarlyStopping(patience=1, min_delta=100.0) if listed == "ema last" else StopAfterTwo()
    ema = EMA(decay=0.9)
    learner = make_learner(precision="32-true", callbacks=[best, stop, ema])
    learner.fit_one_cycle(4, 3e-3)
    assert len(learner.history) == 2 and best.best_epoch == 0
    average = ema.ema.module.state_dict()
    kept_apart = any(not torch.equal(v, average[k]) for k, v in learner.task_model().state_dict().items())
    # EarlyStopping after EMA: the average of both epochs survives the stop, apart from the loaded best
    # (epoch 0's); a canceller before EMA leaves none to keep, and the average goes on from the best
    assert kept_apart == (listed == "ema last")
    after = {k: v.clone() for k, v in learner.task_model().state_dict().items()}
    assert learner.validate()["loss"] == pytest.approx(best.best, rel=1e-6)
    load_weights(learner, tmp_path / "best")
    assert all(torch.equal(after[k], v) for k, v in learner.task_model().state_dict().items())
