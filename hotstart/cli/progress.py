"""The progress callbacks that ``train`` gives its learner, for images and tables alike.

``--no-progress`` keeps one line per epoch (no bars); ``--quiet`` prints nothing; by default the
learner's own progress bars run, so no callback is added.
"""
from __future__ import annotations


def progress_callbacks(args) -> list:
    if args.quiet or not args.no_progress:
        return []
    from ..learner.callbacks.progress import Progress

    return [Progress(bars=False)]
