"""The defaults that make a fit fast where that is safe (issue 34): the fit's first line, the
``compile="auto"`` rule (decided when a fit starts), the channels_last rule, and explicit settings
used exactly as given. Precision: tests/test_precision_auto.py; bf16 through torch.autocast:
tests/test_learner_mixed_precision.py; the decoded images: tests/test_decoded_cache.py; a real
warm compile chosen by ``"auto"``: tests/test_warmup.py."""
from __future__ import annotations

import pytest
import torch
from conftest import state_equal

from hotstart.compile_cache import compile_decision, compile_pays, config_key, record


# --- the fit's first line -----------------------------------------------------------------------

def test_the_first_line_says_what_the_defaults_chose_once_per_learner(make_learner, capsys):
    """Before the first epoch table: precision, layout and compile, each with its reason. A second
    fit with the same choices does not repeat it; progress=False prints nothing."""
    learner = make_learner(progress=True, precision="32-true")
    learner.fit(1, 1e-3)
    out = capsys.readouterr().out.splitlines()
    assert out[0] == ("precision 32-true (as asked) | layout contiguous (8x8 images: channels_last pays from "
                      "96x96; channels_last=True to force) | compile eager (compile='auto': this configuration "
                      "is not warm (python -m hotstart.warmup warms the defaults)) | ema off "
                      "(ImageClassificationSingle's default averages fits of 100 steps or more, this one has 5; "
                      "ema=True to average it)")
    assert out[1].split() == ["epoch", "train_loss", "valid_loss", "accuracy", "time"]
    learner.fit(1, 1e-3)
    assert capsys.readouterr().out.splitlines()[0].split()[0] == "epoch"  # the same choices: not said again
    make_learner(progress=False, precision="32-true").fit(1, 1e-3)
    assert capsys.readouterr().out == ""


def test_explicit_settings_are_used_as_given_and_said_so(make_learner):
    learner = make_learner(precision="32-true", compile=False, channels_last=True, cache=False)
    assert learner.backend.precision == "32-true" and learner.compiled is None and learner.auto_compile is None
    assert learner.channels_last
    assert {k: (c.value, c.why) for k, c in learner.choices.items()} == {
        "precision": ("32-true", "as asked"), "layout": ("channels_last", "as asked"),
        "compile": ("eager", "as asked")}  # digits in memory, not files: no cache to speak of
    with pytest.raises(ValueError, match="compile must be True, False or 'auto'"):
        make_learner(compile="sometimes")
    with pytest.raises(ValueError, match="cache='disk' is not known"):
        make_learner(cache="disk")


# --- compile="auto" -----------------------------------------------------------------------------

@pytest.mark.parametrize("batches, step_s, speedup, load_s, expected", [
    (50, 0.6, 1.12, 3.0, True),     # resnet10t at 128x128, batch 32, 1.12x: 50 steps gain 3.2 s
    (40, 0.6, 1.12, 3.0, False),    # 2.6 s: less than loading
    (5000, 0.03, 1.12, 3.0, True),  # the digits at 32x32: thousands of cheap steps
    (500, 0.03, 1.12, 3.0, False),
    (10, 1.0, 1.0, 0.0, False),     # no speed-up: nothing to gain
])
def test_compile_pays_when_the_saved_step_time_exceeds_the_load(batches, step_s, speedup, load_s, expected):
    assert compile_pays(batches, step_s, speedup, load_s) is expected


def test_compile_decision_short_eager_long_compiled_cold_eager(tmp_path):
    """The rule with injected numbers (no timing): a warm configuration with the warmup's eager and
    compiled step times compiles for a long fit and not for a short one; a cold one, one without
    both step times (an older warmup's entry), and a custom model never do; CUDA compiles whenever
    warm."""
    key = config_key("resnet10t", 3, (128, 128), "cpu", "32-true")
    decide = lambda batches, **kw: compile_decision(key, device_type="cpu", batches=batches, batch_size=32,  # noqa: E731
                                                    cache_root=tmp_path, **kw)
    assert decide(10_000) == (False, "this configuration is not warm (python -m hotstart.warmup warms the defaults)")
    no_times = (False, "warm, but the warmup recorded no eager and compiled step times to measure the speed-up "
                       "(run python -m hotstart.warmup again)")
    record(key, workload="w", seconds=30.0, device="cpu", root=tmp_path)  # an older warmup: no step time
    assert decide(10_000) == no_times
    # a warmup before the speed-up was measured recorded its compiled step as step_s_per_sample alone
    record(key, workload="w", seconds=30.0, device="cpu", root=tmp_path, step_s_per_sample=0.015)
    assert decide(10**9) == no_times
    record(key, workload="w", seconds=30.0, device="cpu", root=tmp_path, step_s_per_sample=0.0168,
           compiled_step_s_per_sample=0.015)
    # 1.12x; eager step 32 * 0.0168 = 0.5376 s, saving 0.0576 s a step: 53 steps pass the 3 s, 52 do not
    assert decide(53) == (True, "warm, compiled steps measured 1.12x eager's speed here; 53 steps save ~3 s, "
                                "more than the ~3 s to load the warm graphs")
    assert decide(52)[0] is False
    assert decide(50) == (False, "compiled steps measured 1.12x eager's speed here, but 50 steps would save "
                                 "~2.9 s, less than the ~3 s to load the warm graphs")
    assert decide(50, load_s={"cpu": 1.0})[0] is True
    assert decide(1)[1].endswith("but 1 step would save ~0.1 s, less than the ~3 s to load the warm graphs")
    record(key, workload="w", seconds=30.0, device="cpu", root=tmp_path, step_s_per_sample=0.0168,
           compiled_step_s_per_sample=0.0112)  # measured 1.5x: the same 50 steps now save 9 s
    assert decide(50)[0] is True and decide(17)[0] is True and decide(16)[0] is False  # 0.179 s a step
    assert compile_decision(key, device_type="cuda", batches=1, batch_size=1, cache_root=tmp_path)[0] is True
    assert compile_decision(key, device_type="mps", batches=10**6, batch_size=64, cache_root=tmp_path)[0] is False
    assert compile_decision(None, device_type="cpu", batches=10**6, batch_size=64, cache_root=tmp_path) == \
        (False, "no compile-cache key names this model (the warmup compiles image backbones)")


@pytest.mark.parametrize("eager, compiled, said", [
    (0.14, 0.2, "0.70x"),   # compiled slower than eager on this machine (as measured under load on an AVX2 CPU)
    (0.2, 0.2, "1.00x"),    # no faster: nothing to gain, however long
])
def test_a_measured_speedup_of_one_or_less_keeps_even_a_very_long_fit_eager(tmp_path, eager, compiled, said):
    key = config_key(None, 3, (128, 128), "cpu", "32-true", channels_last=True)
    record(key, workload="w", seconds=30.0, device="cpu", root=tmp_path, step_s_per_sample=eager,
           compiled_step_s_per_sample=compiled)
    assert compile_decision(key, device_type="cpu", batches=10**7, batch_size=64, cache_root=tmp_path) == \
        (False, f"compiled steps measured {said} eager's speed here: eager")


def test_a_cpu_speedup_within_the_warmups_noise_keeps_a_long_fit_eager(tmp_path):
    """On CPU a reading under MIN_SPEEDUP (1.10x) is noise: the same configuration read 1.09x and
    0.99x an hour apart, and compiled steps measured 0.88-0.92x eager's in alternating processes."""
    key = config_key(None, 3, (128, 128), "cpu", "bf16-mixed", channels_last=True)
    record(key, workload="w", seconds=30.0, device="cpu", root=tmp_path, step_s_per_sample=0.01664,
           compiled_step_s_per_sample=0.01524)  # 1.09x, as the warmup read it at 08:45 on 2026-12-07
    assert compile_decision(key, device_type="cpu", batches=10**7, batch_size=64, cache_root=tmp_path) == \
        (False, "compiled steps measured 1.09x eager's speed here, within the warmup's timing noise (below 1.10x): eager")
    key = config_key(None, 3, (128, 128), "cuda", "bf16-mixed", channels_last=True)
    record(key, workload="w", seconds=30.0, device="cuda", root=tmp_path, step_s_per_sample=0.01664,
           compiled_step_s_per_sample=0.01524)
    assert compile_decision(key, device_type="cuda", batches=10, batch_size=64, cache_root=tmp_path)[0] is True


def test_a_learner_decides_when_its_fit_starts_from_its_own_key(make_learner, tmp_path, monkeypatch):
    """``compile="auto"`` is decided per fit, from the learner's configuration key (the task's
    channels and size, the precision and layout it got): cold here, so the fit stays eager and
    says so; the same key, warm with a step time, would compile a long fit."""
    monkeypatch.setenv("HOTSTART_CACHE_DIR", str(tmp_path))
    learner = make_learner(precision="32-true")
    assert learner.auto_compile.key == config_key(None, 1, (8, 8), "cpu", "32-true")
    learner.fit(1, 1e-3)
    assert learner.compiled is None and learner.choices["compile"].value == "eager"
    record(learner.auto_compile.key, workload="w", seconds=1.0, device="cpu", step_s_per_sample=0.0112,
           compiled_step_s_per_sample=0.01)
    n_iter = len(learner.train_loader)  # 5 batches of 32
    assert learner.auto_compile.decide(n_iter, 32)[0] is False  # one epoch: 5 * 0.358 s * (1 - 1/1.12) = 0.19 s saved
    assert learner.auto_compile.decide(n_iter * 200, 32)[0] is True
    # a model the user built has no key: never compiled by "auto"
    custom = make_learner(model=torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(64, 10)))
    assert custom.auto_compile.key is None


# --- memory layout -------------------------------------------------------------------------------

def _conv():
    return torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.Flatten())


@pytest.mark.parametrize("requested, model, size, expected", [
    (None, "conv", (128, 128), (True, "128x128 images to a convolutional model; channels_last=False for contiguous")),
    (None, "conv", (224, 160), (True, "224x160 images to a convolutional model; channels_last=False for contiguous")),
    (None, "conv", (64, 64), (False, "64x64 images: channels_last pays from 96x96; channels_last=True to force")),
    (None, "conv", (128, 80), (False, "128x80 images: channels_last pays from 96x96; channels_last=True to force")),
    (None, "conv", (96, 128), (True, "96x128 images to a convolutional model; channels_last=False for contiguous")),
    (None, "mlp", (128, 128), (False, None)),
    (None, "conv", None, (False, None)),
    (None, "conv", 96, (False, None)),  # a series length, not an image
    (True, "conv", (32, 32), (True, "as asked")),
    (False, "conv", (256, 256), (False, "as asked")),
])
def test_the_channels_last_rule(requested, model, size, expected):
    from hotstart.learner.memory_format import choose_channels_last

    net = _conv() if model == "conv" else torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(12, 2))
    assert choose_channels_last(requested, net, size) == expected


def test_channels_last_batches_reach_the_model_and_the_weights_stay_contiguous(make_learner, tmp_path):
    """Only the batches change layout: the first convolution sees channels_last inputs, the
    predictions equal the contiguous learner's (same weights), and the saved weights are plain."""
    plain, fast = make_learner(precision="32-true"), make_learner(precision="32-true", channels_last=True)
    seen = []
    conv = next(m for m in fast.task_model().modules() if isinstance(m, torch.nn.Conv2d))
    conv.register_forward_hook(lambda m, args, out: seen.append(args[0].is_contiguous(memory_format=torch.channels_last)))
    probs_plain, probs_fast = plain.get_preds()[0], fast.get_preds()[0]
    assert seen and all(seen)
    torch.testing.assert_close(probs_fast, probs_plain, rtol=1e-5, atol=1e-6)
    fast.fit(1, 1e-3)
    assert all(p.is_contiguous() for p in fast.task_model().parameters())
    fast.save(tmp_path / "m")
    from safetensors.torch import load_file

    saved = load_file(tmp_path / "m" / "weights.safetensors")
    assert all(t.dtype == torch.float32 for t in saved.values() if t.is_floating_point())
    assert state_equal(saved, fast.task_model().state_dict())


def test_channels_last_is_the_default_at_128_pixels(random_rgb):
    from hotstart import Image, ImageClassificationSingle, Label, tasklearner

    task = ImageClassificationSingle((Image(), Label(["a", "b"])), size=(128, 128))
    learner = tasklearner(task, (random_rgb(4, (128, 128)), ["a", "b"] * 2), batch_size=2, seed=0, progress=False,
                          precision="32-true")
    assert learner.channels_last and learner.choices["layout"].value == "channels_last"
    assert learner.auto_compile.key.endswith("|channels_last")  # its warm graphs are the channels_last ones


def test_a_small_image_split_trains_in_batches_of_32_and_the_fit_says_so(random_rgb):
    """Below 4,096 training images an image task's default batch is 32 (twice the steps an epoch of
    64, for about the same time an image on the CPU: tasks/image_base.py has the measurements);
    a batch given stays as given, and a larger split keeps the learner's 64."""
    from hotstart import Image, ImageClassificationSingle, Label, tasklearner
    from hotstart.tasks.image_base import SMALL_SET, SMALL_SET_BATCH

    task = ImageClassificationSingle((Image(), Label(["a", "b"])), size=(16, 16))
    assert task.default_batch_size(SMALL_SET - 1) == SMALL_SET_BATCH == 32
    assert task.default_batch_size(SMALL_SET) is None  # tasklearner's 64
    data = (random_rgb(80, (16, 16)), ["a", "b"] * 40)
    learner = tasklearner(task, data, valid_pct=0.2, seed=0, progress=False)
    assert learner.train_loader.batch_size == 32 and len(learner.train_loader) == 64 // 32
    assert learner.choices["batch"].value == "32" and "64 training samples" in learner.choices["batch"].why
    given = tasklearner(task, data, valid_pct=0.2, seed=0, progress=False, batch_size=16)
    assert given.train_loader.batch_size == 16 and "batch" not in given.choices


def test_single_label_image_classification_warms_up_a_tenth_to_2e3_and_the_fit_says_so(make_learner, capsys):
    """``fit_one_cycle(n)`` with no rate: the task's peak 2e-3 reached after 10% of the steps
    (tasks/classification.py has the measurements), said on the fit's first line; a rate or
    warm-up given is used as given and not said, and a later plain `fit` does not repeat it."""
    from hotstart import ImageClassificationSingle

    assert (ImageClassificationSingle.default_lr, ImageClassificationSingle.default_pct_start) == (2e-3, 0.1)
    learner = make_learner(progress=True, precision="32-true")
    learner.fit_one_cycle(4)
    lrs = learner.recorder.lrs
    assert len(lrs) == 4 * 5 and max(lrs) == pytest.approx(2e-3) and lrs[0] == pytest.approx(2e-3 / 25)
    assert int(torch.tensor(lrs).argmax()) == 1  # the peak after 10% of 20 steps (OneCycleLR counts from 0)
    first = capsys.readouterr().out.splitlines()[0]
    assert ("| schedule peak lr 0.002, warm-up 10% of the steps (ImageClassificationSingle's defaults; lr_max= "
            "and pct_start= to change) |") in first, first
    assert "schedule" not in learner.choices  # said for that fit only
    learner.fit(1, 1e-3)
    assert "schedule" not in capsys.readouterr().out

    given = make_learner(precision="32-true")
    given.fit_one_cycle(4, 1e-3, pct_start=0.5)
    assert max(given.recorder.lrs) == pytest.approx(1e-3) and int(torch.tensor(given.recorder.lrs).argmax()) == 9
    half = make_learner(progress=True, precision="32-true")
    half.fit_one_cycle(1, 1e-3)  # only the rate given: the warm-up is still the task's, and said
    assert "schedule warm-up 10% of the steps (ImageClassificationSingle's default; pct_start= to change)" in \
        capsys.readouterr().out


def test_single_label_image_classification_validates_on_and_keeps_an_average_of_the_weights(make_learner, capsys):
    """``ema=None``: the task's average of the weights (decay 0.999 with timm's warm-up;
    tasks/classification.py has the measurements) in a fit of 100 steps or more, said on the fit's
    first line: each epoch validates on the average and the fitted model holds it. A shorter fit
    is not averaged, and says so. ``ema=`` a decay, True or False, or an `EMA` of one's own, is
    used as given, for every fit; nonsense is refused, naming the argument."""
    from hotstart import ImageClassificationSingle
    from hotstart.errors import UsageError
    from hotstart.learner import EMA

    assert ImageClassificationSingle.default_ema == 0.999
    learner = make_learner(progress=True, precision="32-true", batch_size=4)  # 40 steps an epoch
    ema = learner.cb(EMA)
    assert (ema.decay, ema.warmup, ema.use_ema, ema.min_steps) == (0.999, True, True, 100)
    learner.fit_one_cycle(3)
    first = capsys.readouterr().out.splitlines()[0]
    assert ("ema 0.999 (ImageClassificationSingle's default: validated on and kept, an average of the weights "
            "with timm's warm-up of the decay; ema=False to turn off)") in first, first
    assert ema.updates == 3 * 40
    assert state_equal(learner.task_model().state_dict(), ema.module.state_dict())  # the fitted model is the average
    assert learner.validate()["accuracy"] == pytest.approx(learner.history[-1]["accuracy"])  # as the epoch validated
    # the average differs from the trained weights: training went on, unaveraged, beside it
    plain = make_learner(precision="32-true", batch_size=4, ema=False)
    assert plain.cb(EMA) is None
    plain.fit_one_cycle(3)
    assert "ema" not in plain.choices
    assert not state_equal(plain.task_model().state_dict(), learner.task_model().state_dict())

    short = make_learner(progress=True, precision="32-true")  # 5 steps an epoch: 10 in all
    before = {k: v.clone() for k, v in short.task_model().state_dict().items()}
    short.fit_one_cycle(2)
    assert ("ema off (ImageClassificationSingle's default averages fits of 100 steps or more, this one has 10; "
            "ema=True to average it)") in capsys.readouterr().out
    assert short.cb(EMA).updates == 0 and not state_equal(before, short.task_model().state_dict())
    reference = make_learner(precision="32-true", ema=False)
    reference.fit_one_cycle(2)  # the short fit trained and ended exactly as without an average
    assert state_equal(short.task_model().state_dict(), reference.task_model().state_dict())

    asked = make_learner(ema=0.9, progress=True)
    asked.fit_one_cycle(1)  # 5 steps: asked for, so averaged
    assert asked.cb(EMA).decay == 0.9 and asked.cb(EMA).updates == 5
    assert "ema 0.9 (as asked: validated on and kept" in capsys.readouterr().out
    assert make_learner(ema=True).cb(EMA).decay == 0.999
    own = EMA(decay=0.5)
    mine = make_learner(callbacks=[own])
    assert mine.cb(EMA) is own and sum(isinstance(c, EMA) for c in mine.cbs) == 1
    mine.fit_one_cycle(1)
    assert own.updates == 5 and "ema" not in mine.choices  # the user's own average: nothing to say
    for bad, said in ((1.5, "ema must be a decay in"), ("yes", "ema must be a decay in"), (-0.1, "ema must be")):
        with pytest.raises(UsageError, match=said):
            make_learner(ema=bad)
    with pytest.raises(UsageError, match="ema=0.9 and an EMA among callbacks"):
        make_learner(ema=0.9, callbacks=[EMA()])


def test_other_tasks_keep_their_weights_unaveraged(digits_small):
    """Only single-label image classification was measured to gain from the average: the other
    tasks' learners have no `EMA` unless asked."""
    from hotstart import ImageClassificationMulti, tasklearner
    from hotstart.blocks import Image, LabelMulti
    from hotstart.learner import EMA

    data, _ = digits_small
    targets = [[str(int(y))] for y in data[1]]
    task = ImageClassificationMulti((Image(channels=1), LabelMulti([str(i) for i in range(10)])), size=(8, 8))
    learner = tasklearner(task, (data[0], targets), seed=0, progress=False)
    assert learner.cb(EMA) is None
    assert tasklearner(task, (data[0], targets), seed=0, progress=False, ema=0.99).cb(EMA).decay == 0.99


def test_a_second_average_for_one_fit_is_refused_before_training(make_learner):
    """``fit(callbacks=[EMA()])`` on a learner that already averages: refused, naming the way out,
    with the weights untouched."""
    from hotstart.errors import UsageError
    from hotstart.learner import EMA

    learner = make_learner(ema=True)
    before = {k: v.clone() for k, v in learner.task_model().state_dict().items()}
    with pytest.raises(UsageError, match=r"two EMA callbacks .*tasklearner\(ema=False\)"):
        learner.fit_one_cycle(1, callbacks=[EMA()])
    assert state_equal(before, learner.task_model().state_dict())
