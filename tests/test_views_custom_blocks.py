"""Views and interpretation on a task of your own: clear errors naming what cannot be shown or
computed (the input block; a loss that ignores ``reduction``), not matplotlib's or torch's."""
import pytest
import torch.nn as nn

from hotstart import tasklearner
from hotstart.errors import UsageError, UsageTypeError
from hotstart.interpret import ClassificationInterpretation
from vector_blocks import Vector, VectorClassification, digit_vectors  # tests/ is on sys.path


class Body(nn.Module):
    num_features = 16

    def __init__(self):
        super().__init__()
        self.l1 = nn.Linear(64, 16)

    def forward(self, x):
        return self.l1(x).relu()


class ReducesAnyway(nn.CrossEntropyLoss):
    """Has ``reduction`` but always returns the mean."""

    def forward(self, out, y):
        return nn.functional.cross_entropy(out, y)


@pytest.fixture(scope="module")
def learner():
    (xs, ys), label = digit_vectors(120)
    learner = tasklearner(VectorClassification((Vector(64), label)), (xs, ys), backbone=Body(), seed=0,
                          progress=False)
    learner.fit(1, 1e-2)
    return learner


def test_show_batch_and_show_results_name_the_block_they_cannot_show(learner):
    for view in ("show_batch", "show_results"):
        with pytest.raises(UsageError, match=rf"{view}: cannot show VectorClassification's input block Vector: "
                                             r"the views draw Image and TimeSeries"):
            getattr(learner, view)()


def test_interpretation_names_a_loss_that_ignores_reduction(learner):
    interp = ClassificationInterpretation.from_learner(learner)  # CrossEntropyLoss: one loss per sample
    assert interp.losses.shape == (len(learner.valid_loader.dataset),)
    with pytest.raises(UsageError, match="plot_top_losses: cannot show VectorClassification's input block Vector"):
        interp.plot_top_losses(2)
    kept = learner.loss_func
    learner.loss_func = ReducesAnyway()
    try:
        with pytest.raises(UsageTypeError, match=r"ReducesAnyway: with reduction='none' it returned shape \(\) "
                                                 r"for a batch of \d+, so its forward ignores `reduction`"):
            ClassificationInterpretation.from_learner(learner)
    finally:
        learner.loss_func = kept
