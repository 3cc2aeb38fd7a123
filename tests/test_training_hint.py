"""`TrainingHint` (learner/callbacks/training_hint.py): a fit that learned too little says so, and
its advice depends on what the fit already had (a folder of shapes, as a new user tried it)."""
import numpy as np
import pytest

from hotstart.learner.callbacks.training_hint import AT_CHANCE, FEW_STEPS, TrainingHint, fit_hint
from shapes_folder import make_shapes

FALLING = [2.0, 1.8, 1.5, 1.2, 1.0, 0.9, 0.8, 0.7, 0.6, 0.5]


def test_few_steps_or_chance_accuracy_get_a_reason_of_their_kind():
    few = fit_hint(6, 3, 0.34, 3, FALLING)
    assert few.kind == FEW_STEPS and "only 6 optimizer step(s) in 3 epoch(s)" in few.reason
    assert fit_hint(6, 3, 0.97, 3, FALLING) is None            # few steps, but it learned anyway
    assert fit_hint(6, 3, None, None, FALLING).kind == FEW_STEPS  # a regression: no accuracy to judge by
    at_chance = fit_hint(500, 3, 0.36, 3, FALLING)
    assert at_chance.kind == AT_CHANCE
    assert at_chance.reason.startswith("the validation accuracy (0.360) stayed at chance (1/3 = 0.333) after 500 "
                                       "optimizer steps in 3 epoch(s), while the training loss fell")
    assert "unlikely to change" in at_chance.reason
    flat = fit_hint(500, 3, 0.36, 3, FALLING[::-1])            # enough steps, at chance, and no learning at all
    assert flat.kind == AT_CHANCE and "the training loss did not fall" in flat.reason
    assert fit_hint(500, 3, 0.80, 3, FALLING) is None
    both = fit_hint(6, 3, 0.30, 3, FALLING)
    assert both.kind == FEW_STEPS and "only 6" in both.reason and "at chance" in both.reason


@pytest.fixture(scope="module")
def shapes(tmp_path_factory):
    return make_shapes(tmp_path_factory.mktemp("shapes") / "photos")


def test_following_the_hint_does_not_lead_back_to_it(shapes, tmp_path, capsys):
    """`hotstart train photos/` at the old defaults (SmallCNN, batch 64; small images here, for
    time) made 5 steps: "more --epochs, a smaller --batch-size". Following it (batch 8, 10 epochs:
    90 steps) ended at chance with the same advice. Now a fit with enough steps is never told to
    take more of them. (A small folder now gets its own recipe, cli/small_folder.py; naming the
    backbone keeps the old one, and ``--batch-size 64`` the old batch, which is what this test
    needs: the image task's default batch is now 32 for a split this small.)"""
    from hotstart.cli import main

    common = [str(shapes), "--size", "16", "16", "--backbone", "SmallCNN", "--no-progress", "--quiet"]
    assert main(["train", *common, "--batch-size", "64", "--out", str(tmp_path / "first")]) == 0
    first = [line for line in capsys.readouterr().err.splitlines() if line.startswith("hint: ")]
    assert len(first) == 1 and "only 5 optimizer step(s) in 5 epoch(s)" in first[0], first
    assert "more --epochs (now 5), a smaller --batch-size (now 64)" in first[0]

    assert main(["train", *common, "--batch-size", "8", "--epochs", "10", "--out", str(tmp_path / "second")]) == 0
    second = [line for line in capsys.readouterr().err.splitlines() if line.startswith("hint: ")]
    history = (tmp_path / "second" / "history.csv").read_text().splitlines()
    accuracy = float(history[-1].split(",")[history[0].split(",").index("accuracy")])
    if accuracy > 1 / 3 + 0.1:  # it learned: no hint at all
        assert second == []
    else:  # at chance again (as the user saw): advice the run has not followed yet
        assert len(second) == 1 and "after 90 optimizer steps in 10 epoch(s)" in second[0], second
        assert "--epochs" not in second[0] and "--batch-size" not in second[0]
        assert "check the labels" in second[0] and "another --lr" in second[0] and "--pretrained" in second[0]


def test_the_callback_hints_after_a_short_fit_and_not_after_an_interrupted_one(capsys):
    from hotstart import Image, ImageClassificationSingle, Label, tasklearner

    rng = np.random.default_rng(0)
    task = ImageClassificationSingle((Image(channels=1), Label(["a", "b", "c"])), size=(8, 8), augment=False)
    samples = [task.mock_sample(rng) for _ in range(24)]
    learner = tasklearner(task, ([s[0] for s in samples], [s[1] for s in samples]), batch_size=8, seed=0,
                          progress=False)
    hint = TrainingHint(3, advice="try X")
    learner.fit_one_cycle(1, 1e-3, callbacks=[hint])
    assert hint.message is not None and hint.message.startswith("hint: this fit made only")
    assert hint.message.endswith("To learn more: try X.") and hint.message in capsys.readouterr().err

    from hotstart.learner.callbacks import Callback

    class Interrupt(Callback):  # stops the fit as Ctrl-C does
        def after_batch(self):
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        learner.fit_one_cycle(1, 1e-3, callbacks=[hint, Interrupt()])
    assert hint.message is None and "hint:" not in capsys.readouterr().err
