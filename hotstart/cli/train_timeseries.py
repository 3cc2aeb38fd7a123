"""The series side of ``python -m hotstart train``: ``--task timeseries [FILE.ts | NAME]``.

    python -m hotstart train --task timeseries                                   # the built-in GunPoint
    python -m hotstart train --task timeseries ItalyPowerDemand --epochs 30      # another built-in set
    python -m hotstart train --task timeseries mine_TRAIN.ts --backbone resnet1d # your own .ts file

A ``.ts`` file with class labels is a classification, one with ``@targetLabel true`` a regression.
Beside ``NAME_TRAIN.ts``, a ``NAME_TEST.ts`` is read as the held-out test split, as the built-in
sets' archive split is: never trained or validated on. `train.run` trains and writes the model,
history.csv and loss.png to --out, as for images.
"""
from __future__ import annotations

from pathlib import Path


DEFAULT_LR = None  # fit_one_cycle's default: the series task's `default_lr` (hotstart/tasks/timeseries.py)
BACKBONES = ("inceptiontime", "resnet1d")


def build_timeseries_learner(args):
    """The series, the task and the learner that the arguments describe (no training)."""
    from .. import datasets
    from ..blocks import Continuous
    from ..datasets.timeseries_builtin import SERIES_SETS
    from ..errors import UsageError
    from ..learner import tasklearner
    from ..tasks import TSClassificationSingle, TSRegression
    from .progress import progress_callbacks

    backbone = getattr(args, "backbone", None)
    if backbone is not None and backbone not in BACKBONES:
        raise UsageError(f"--task timeseries: --backbone must be one of {list(BACKBONES)}, got {backbone!r}")
    image_only = [flag for flag, given in (("--pretrained", getattr(args, "pretrained", False)),
                                           ("--size", getattr(args, "size", None) is not None)) if given]
    if image_only:
        raise UsageError(f"{', '.join(image_only)} apply to image tasks only (leave them out with --task timeseries)")
    source = args.path or "GunPoint"
    if source in SERIES_SETS and not Path(source).exists():
        data, blocks = datasets.load(source)
        name = source
    else:
        path = Path(source)
        if not path.is_file():
            raise FileNotFoundError(f"{path}: no such file (--task timeseries takes a .ts file or a built-in set: "
                                    f"{sorted(SERIES_SETS)})")
        test = path.with_name(path.name.replace("_TRAIN", "_TEST")) if "_TRAIN" in path.name else None
        data, blocks = datasets.TimeSeriesData(path, test=test if test is not None and test.is_file() else None)
        name = str(path)
    regression = isinstance(blocks[1], Continuous)
    task = (TSRegression if regression else TSClassificationSingle)(blocks)
    if not args.quiet:
        kind = "regression" if regression else f"{len(blocks[1].classes)} classes"
        splits = {k: len(v) for k, v in data.splits.items()} or "none"
        print(f"data: {name}, {len(data[0])} series, {blocks[0]!r}, {kind}; splits {splits}")
    callbacks = progress_callbacks(args)
    return tasklearner(task, data, backbone=backbone, batch_size=args.batch_size, valid_pct=args.valid_pct,
                       seed=args.seed, num_workers=args.workers, callbacks=callbacks,
                       progress=not (args.quiet or args.no_progress))
