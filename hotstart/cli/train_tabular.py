"""The table side of ``python -m hotstart train``: ``--task tabular --target COLUMN``.

    python -m hotstart train table.csv --task tabular --target price --epochs 20
    python -m hotstart train --task tabular --target species      # the built-in penguins table

Input columns are inferred as `datasets.TableData` does (text and few integers categorical,
other numbers continuous); a numeric target with many values is a regression, anything else
classes. Rows whose target is missing are left out. Writes the model, history.csv and loss.png to --out, as for images.
"""
from __future__ import annotations

from pathlib import Path

DEFAULT_LR = 1e-2


def run_tabular(args) -> int:
    from .. import datasets
    from ..blocks import Continuous
    from ..learner import tasklearner
    from ..tasks import TabularClassificationSingle, TabularRegression
    from ..errors import UsageError
    from .train import write_history

    if not args.target:
        raise UsageError("--task tabular needs --target COLUMN (the column to predict)")
    if args.path is None:
        data, blocks = datasets.load("penguins", target=args.target)
        name = "penguins"
    else:
        path = Path(args.path)
        if not path.is_file():
            raise FileNotFoundError(f"{path}: no such file (--task tabular takes a CSV table)")
        data, blocks = datasets.TableData(path, target=args.target, dropna_target=True)
        name = str(path)
    regression = isinstance(blocks[1], Continuous)
    task = (TabularRegression if regression else TabularClassificationSingle)(blocks)
    row = blocks[0]
    kind = "regression" if regression else f"{len(blocks[1].classes)} classes"
    print(f"data: {name}, {len(data[0])} rows with a target; target {args.target!r} ({kind}); "
          f"categorical {row.categorical}; continuous {row.continuous}")
    learner = tasklearner(task, data, batch_size=args.batch_size, valid_pct=args.valid_pct, seed=args.seed,
                          num_workers=args.workers, progress=not args.no_progress)
    learner.fit_one_cycle(args.epochs, args.lr if args.lr is not None else DEFAULT_LR)
    out = Path(args.out)
    learner.save(out / "model")
    write_history(learner.history, out / "history.csv")
    learner.plot_loss().savefig(out / "loss.png", dpi=100)
    final = learner.history[-1]
    summary = ", ".join(f"{k} {v:.4f}" for k, v in final.items() if k not in ("epoch", "time"))
    print(f"done: {summary}\nwrote {out / 'model'}, {out / 'history.csv'}, {out / 'loss.png'}")
    return 0
