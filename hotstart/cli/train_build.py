"""`train`'s building: the task and the learner that the arguments describe (no training).

Images here; tables in train_tabular.py, series in train_timeseries.py. Also the checks that need
no data (`check_arguments`, run before the data is read) and the end-of-fit hint in the
command's own options (`training_hint`).
"""
from __future__ import annotations

import os

from .train_args import COMPILE
from .train_data import load_data


def first_process() -> bool:
    """Before the learner exists: is this the first process (rank 0, or the only one)?"""
    return all(os.environ.get(k, "0") == "0" for k in ("RANK", "LOCAL_RANK", "SLURM_PROCID"))


def make_task(args, blocks, builtin: bool):
    from ..blocks import LabelMulti
    from ..tasks import ImageClassificationMulti, ImageClassificationSingle, ImageKeypointRegression, ImageSegmentation

    kind = getattr(args, "task", None) or "classification"
    size = tuple(args.size) if args.size else ((32, 32) if builtin else (128, 128))
    augment = {"flip": 0.0} if ((builtin and kind != "keypoints") or args.no_flip) else True
    if kind == "segmentation":
        return ImageSegmentation(blocks, size=size, augment=augment)
    if kind == "keypoints":
        return ImageKeypointRegression(blocks, size=size, augment=augment)
    task_cls = ImageClassificationMulti if isinstance(blocks[1], LabelMulti) else ImageClassificationSingle
    return task_cls(blocks, size=size, augment=augment)


def check_arguments(args) -> None:
    """Checks that need no data: run first, so a typo fails in a second, not after loading the data."""
    from ..models.factory import check_backbone

    check_backbone(args.backbone, args.pretrained)
    if args.pretrained:
        from ..models.pretrained import locate_pretrained

        locate_pretrained(args.backbone)


def build_learner(args):
    """The data, the task and the learner that the arguments describe (no training)."""
    from ..learner import tasklearner
    from .progress import progress_callbacks

    data, blocks, name = load_data(args)
    task = make_task(args, blocks, builtin=args.path is None)
    if not args.quiet and first_process():
        what = f"{len(task.classes)} classes" if task.classes is not None else f"{task.n} point(s)"
        print(f"data: {name}, {len(data[0])} samples, {what}; task:")
        task.describe()
    return tasklearner(task, data, backbone=args.backbone, pretrained=args.pretrained,
                       batch_size=args.batch_size, valid_pct=args.valid_pct, seed=args.seed,
                       num_workers=args.workers, compile=COMPILE[args.compile], callbacks=progress_callbacks(args),
                       progress=not (args.quiet or args.no_progress),
                       devices=getattr(args, "devices", None), strategy=getattr(args, "strategy", None))


def training_hint(args, learner, tabular: bool):
    """The end-of-fit hint (learner/callbacks/training_hint.py), its advice in this command's options."""
    from ..learner.callbacks.training_hint import TrainingHint

    classes = learner.task.classes
    advice = [f"more --epochs (now {args.epochs})", f"a smaller --batch-size (now {args.batch_size})"]
    if not tabular and getattr(args, "backbone", None) is not None:
        advice.append("the default small CNN (leave out --backbone)")
        if not getattr(args, "pretrained", False):
            advice.append("--pretrained weights")
    # enough steps, still at chance: what the run has not tried yet, not more of the same
    chance = ["check the labels (does each class's folder or column hold its own examples?)",
              f"another --lr (now {args.lr if args.lr is not None else 'the default'}; a tenth or ten times it)"]
    if not tabular and not getattr(args, "pretrained", False):
        chance.append("--pretrained weights of a timm --backbone (e.g. --backbone resnet18 --pretrained)")
    chance.append("more examples")
    return TrainingHint(len(classes) if classes else None, advice=", ".join(advice), chance_advice=", ".join(chance))
