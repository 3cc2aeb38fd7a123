"""The learner's views (``show_batch``, ``show_results``, ``plot_loss``, ``summary``): gather what to
show from the learner (training samples, the first validation outputs, the recorder, the model)
and hand it to hotstart/show/, which draws or tabulates and knows nothing of the learner."""
from __future__ import annotations

from ..errors import UsageError


def show_batch(learner, n: int = 9, **kwargs):
    """`n` training samples as the model sees them (augmented), decoded back for display."""
    from ..show import show_batch as view

    if learner.task is None or learner.train_loader is None:
        raise UsageError("show_batch needs the learner's task and training data")
    ds = learner.train_loader.dataset
    return view(learner.task, [ds[i] for i in range(min(int(n), len(ds)))], **kwargs)


def show_results(learner, n: int = 9, **kwargs):
    """The first `n` validation samples, prediction beside the truth (see hotstart/show/)."""
    from ..show import show_results as view
    from .valid_outputs import first_valid_outputs

    if learner.task is None:
        raise UsageError("show_results needs the learner's task (build it with tasklearner or load_learner)")
    xs, ys, out = first_valid_outputs(learner, n)
    return view(learner.task, xs, ys, out, raw_inputs=getattr(learner.valid_loader.dataset, "inputs", None), **kwargs)


def plot_loss(learner, **kwargs):
    """Training loss per batch, and validation loss at the end of each epoch."""
    from ..show.loss import loss_figure

    return loss_figure(learner.recorder.losses, learner.recorder.history, **kwargs)


def summary(learner, **kwargs) -> str:
    """Each layer's output shape and parameter count for the learner's task input."""
    from ..show.summary import summary as view

    return view(learner.task_model(), learner.task, **kwargs)
