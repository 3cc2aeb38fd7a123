"""The table side of ``python -m hotstart train``: ``--task tabular --target COLUMN``.

    python -m hotstart train table.csv --task tabular --target price --epochs 20
    python -m hotstart train --task tabular --target species      # the built-in penguins table

Input columns are inferred as `datasets.TableData` does (text and few integers categorical,
other numbers continuous), unless ``--continuous a,b`` / ``--categorical c`` name them; a numeric
target with many values is a regression, anything else classes. Rows whose target is missing
are left out. A column of numbers read as categories because of a few text cells is a warning
that names the file, the line, the column, the first such cell and the flag that changes it. `train.run` trains and writes the model, history.csv
and loss.png to --out, as for images.
"""
from __future__ import annotations

import sys
import warnings
from pathlib import Path


DEFAULT_LR = 1e-2


def read_table(args):
    """(data, blocks) of the CSV PATH, with --continuous / --categorical; the warning about numbers
    read as categories is said in this command's terms (its flag, not TableData's argument)."""
    from .. import datasets
    from ..datasets.table_data import NumbersReadAsCategories

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        data, blocks = datasets.TableData(Path(args.path), target=args.target, dropna_target=True,
                                          continuous=getattr(args, "continuous", None),
                                          categorical=getattr(args, "categorical", None))
    for w in caught:
        found = w.message
        if not isinstance(found, NumbersReadAsCategories):
            warnings.warn_explicit(found, w.category, w.filename, w.lineno)
        elif found.is_target:
            print(f"warning: {found.found}. Fix or empty those cells (rows with an empty --target are left "
                  f"out): then --target {found.column} is a regression on numbers", file=sys.stderr)
        else:
            print(f"warning: {found.found}. Fix or empty those cells, or pass --continuous {found.column} (then "
                  f"they are an error naming the cell)", file=sys.stderr)
    return data, blocks


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
        if getattr(args, "continuous", None) or getattr(args, "categorical", None):
            raise UsageError("--continuous / --categorical name columns of a CSV PATH; the built-in penguins "
                             "table has its own")
        data, blocks = datasets.load("penguins", target=args.target)
        name = "penguins"
    else:  # checked before torch was imported (preflight.check_train)
        data, blocks = read_table(args)
        name = str(args.path)
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
