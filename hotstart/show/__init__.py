"""Views: draw or tabulate samples and a model's outputs. They read; they never train or run a model.

    images.py    matplotlib figures for image tasks: a batch, results (truth beside prediction), and
                 the drawing of one sample (image, mask overlay, points) that interpret/ reuses
    tables.py    `ResultsTable` for table tasks: text, HTML in a notebook, ``.to_pandas()``
    series.py    drawing one series (a line per channel), for the image views of series tasks
    loss.py      the loss curves
    summary.py   a model's layers: output shapes (on meta tensors) and parameter counts

`show_batch` and `show_results` choose the table or the image view from the task's input block
(`input_view`): a `TableRow` is tabulated, an `Image` or a `TimeSeries` drawn; any other input
block (one of your own) is a `UsageError` naming it, not a matplotlib error from drawing
something that is not an image.
The learner's ``show_batch`` / ``show_results`` / ``plot_loss`` / ``summary`` gather the samples and
outputs (hotstart/learner/views.py) and call these; this package imports nothing from the learner,
so a view can be used on outputs from anywhere (an exported model, another loop).
"""
from __future__ import annotations


SHOWN_INPUTS = ("Image", "TimeSeries", "TableRow")
"""The input blocks the views can show: images and series drawn, table rows tabulated."""


def input_view(task, what: str) -> str:
    """How `what` (``"show_batch"``, ``"show_results"``) shows the task's inputs: ``"table"`` for a
    `TableRow`, ``"figure"`` for an `Image` or a `TimeSeries`; for any other input block a
    `UsageError` naming the block and the task."""
    from ..blocks import Image, TableRow
    from ..blocks.timeseries import TimeSeries
    from ..errors import UsageError

    block = task.input_block
    if isinstance(block, TableRow):
        return "table"
    if isinstance(block, (Image, TimeSeries)):
        return "figure"
    raise UsageError(f"{what}: cannot show {type(task).__name__}'s input block {type(block).__name__}: the views "
                     f"draw {' and '.join(SHOWN_INPUTS[:2])} inputs and tabulate {SHOWN_INPUTS[2]} inputs. Look "
                     f"at the samples directly (learner.train_loader.dataset[i] is an encoded (input, target); "
                     f"task.decode_input / decode_target decode it)")


def show_batch(task, samples, **kwargs):
    """Encoded ``(input, target)`` samples as the model sees them: a `ResultsTable` for a table task,
    else a matplotlib Figure (``ncols=``, ``figsize=``)."""
    from .tables import batch_table

    if input_view(task, "show_batch") == "table":
        return batch_table(task, samples)
    from .images import batch_figure

    return batch_figure(task, samples, **kwargs)


def show_results(task, inputs, targets, outputs, *, raw_inputs=None, **kwargs):
    """Samples with the model's outputs for them: a `ResultsTable` of the raw rows (`raw_inputs`,
    indexable like the inputs) for a table task, else a Figure of prediction beside truth."""
    from .tables import results_table

    if input_view(task, "show_results") == "table":
        return results_table(task, raw_inputs, targets, outputs)
    from .images import results_figure

    return results_figure(task, inputs, targets, outputs, **kwargs)


__all__ = ["show_batch", "show_results", "input_view", "SHOWN_INPUTS"]
