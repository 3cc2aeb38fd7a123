"""`TrainingHint` (learner/callbacks/training_hint.py): a fit too short to learn says so."""
import numpy as np
import pytest

from hotstart.learner.callbacks.training_hint import TrainingHint, fit_hint

FALLING = [2.0, 1.8, 1.5, 1.2, 1.0, 0.9, 0.8, 0.7, 0.6, 0.5]


def test_few_steps_or_chance_accuracy_with_a_falling_loss_get_a_reason():
    assert "only 6 optimizer step(s) in 3 epoch(s)" in fit_hint(6, 3, 0.34, 3, FALLING)
    assert fit_hint(6, 3, 0.97, 3, FALLING) is None            # few steps, but it learned anyway
    assert "only 6" in fit_hint(6, 3, None, None, FALLING)    # a regression: no accuracy to judge by
    at_chance = fit_hint(500, 3, 0.36, 3, FALLING)
    assert at_chance.startswith("the validation accuracy (0.360) stayed at chance (1/3 = 0.333)")
    assert fit_hint(500, 3, 0.36, 3, FALLING[::-1]) is None   # the loss did not fall: another problem
    assert fit_hint(500, 3, 0.80, 3, FALLING) is None
    both = fit_hint(6, 3, 0.30, 3, FALLING)
    assert "only 6" in both and "at chance" in both


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
