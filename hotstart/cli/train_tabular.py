"""The table side of ``python -m hotstart train``: ``--task tabular --target COLUMN``.

    python -m hotstart train table.csv --task tabular --target price --epochs 20
    python -m hotstart train --task tabular --target species      # the built-in penguins table

Input columns are inferred as `datasets.TableData` does (text and few integers categorical,
other numbers continuous); a numeric target with many values is a regression, anything else
classes. Rows whose target is missing are left out. `train.run` trains and writes the model, history.csv
and loss.png to --out, as for images.
"""
from __future__ import annotations

from pathlib import Path

DEFAULT_LR = 1e-2


def build_tabular_learner(args):
    """The table, the task and the learner that the arguments describe (no training).

    `train.run` trains it and writes the outputs, as for images (Ctrl-C included)."""
    from .. import datasets
    from ..blocks import Continuous
    from ..learner import tasklearner
    from ..tasks import TabularClassificationSingle, TabularRegression
    from ..errors import UsageError
    from .progress import progress_callbacks

    if not args.target:
        raise UsageError("--task tabular needs --target COLUMN (the column to predict)")
    image_only = [flag for flag, given in (("--backbone", getattr(args, "backbone", None) is not None),
                                           ("--pretrained", getattr(args, "pretrained", False)),
                                           ("--size", getattr(args, "size", None) is not None)) if given]
    if image_only:  # silently training something else than asked would be worse than refusing
        raise UsageError(f"{', '.join(image_only)} apply to image tasks only; a table model is an MLP "
                         f"(leave {'them' if len(image_only) > 1 else 'it'} out with --task tabular)")
    if args.path is None:
        data, blocks = datasets.load("penguins", target=args.target)
        name = "penguins"
    else:
        path = Path(args.path)  # checked before torch was imported (preflight.check_train)
        data, blocks = datasets.TableData(path, target=args.target, dropna_target=True)
        name = str(path)
    regression = isinstance(blocks[1], Continuous)
    task = (TabularRegression if regression else TabularClassificationSingle)(blocks)
    row = blocks[0]
    kind = "regression" if regression else f"{len(blocks[1].classes)} classes"
    if not args.quiet:
        print(f"data: {name}, {len(data[0])} rows with a target; target {args.target!r} ({kind}); "
              f"categorical {row.categorical}; continuous {row.continuous}")
    callbacks = progress_callbacks(args)
    return tasklearner(task, data, batch_size=args.batch_size, valid_pct=args.valid_pct, seed=args.seed,
                       num_workers=args.workers, callbacks=callbacks, progress=not (args.quiet or args.no_progress),
                       devices=getattr(args, "devices", None), strategy=getattr(args, "strategy", None))
