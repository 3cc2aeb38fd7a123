"""Drawing a series: one line per channel (standardised units, as the model sees it), for the views.

`show_batch` and `show_results` (show/images.py) draw a series task's samples with this, titled with
the label (``target / prediction`` in results) as for images.
"""
from __future__ import annotations

import numpy as np


def is_series_task(task) -> bool:
    from ..blocks.timeseries import TimeSeries

    return isinstance(task.input_block, TimeSeries)


def draw_series(ax, series, max_channels: int = 6):
    """Each channel of a (channels, length) array as a line over time (the first `max_channels`)."""
    a = np.asarray(series)
    a = a[None, :] if a.ndim == 1 else a
    for c in range(min(len(a), max_channels)):
        ax.plot(np.arange(a.shape[1]), a[c], linewidth=1.0)
    ax.set_xticks([])
    ax.set_yticks([])
