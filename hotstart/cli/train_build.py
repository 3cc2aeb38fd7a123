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


def make_task(args, blocks, builtin: bool, chosen=None):
    """The task the arguments describe; `chosen` (small_folder.FolderChoices): the size and
    augmentation the pictures chose where the command line gave none."""
    from ..blocks import LabelMulti
    from ..tasks import ImageClassificationMulti, ImageClassificationSingle, ImageKeypointRegression, ImageSegmentation

    kind = getattr(args, "task", None) or "classification"
    size = tuple(args.size) if args.size else ((32, 32) if builtin else (128, 128))
    augment = {"flip": 0.0} if ((builtin and kind != "keypoints") or args.no_flip) else True
    if chosen is not None:
        size = chosen.size or size
        augment = chosen.augment or augment
    if kind == "segmentation":
        return ImageSegmentation(blocks, size=size, augment=augment)
    if kind == "keypoints":
        return ImageKeypointRegression(blocks, size=size, augment=augment)
    task_cls = ImageClassificationMulti if isinstance(blocks[1], LabelMulti) else ImageClassificationSingle
    return task_cls(blocks, size=size, augment=augment)


def choose_from_pictures(args, data, blocks):
    """`small_folder.folder_choices` for a user's single-label pictures (a folder or a CSV of
    image paths), None for built-in data and the other tasks."""
    from ..blocks import Label
    from ..datasets.containers import HELD_OUT_SPLITS, Subset, split_random
    from .small_folder import folder_choices

    if args.path is None or (getattr(args, "task", None) or "classification") not in ("image", "classification") \
            or not isinstance(blocks[1], Label):
        return None
    splits = getattr(data, "splits", {}) or {}
    held = {i for name in HELD_OUT_SPLITS for i in splits.get(name, ())}  # never trained on: not looked at
    keep = [i for i in range(len(data[0])) if i not in held]
    pictures = Subset(data[0], keep)
    targets = [data[1][i] for i in keep]
    # the training pictures as datasets.split_train_valid will cut them: the "train" split, else
    # those in no named split; less a random valid_pct of them unless there is a "valid" split
    named = {i for idx in splits.values() for i in idx}
    pool = len(splits["train"]) if "train" in splits else len(data[0]) - len(named)
    if pool < 2 and "valid" not in splits:
        return None  # too few to split: the learner says so, in its own words
    n_train = pool if "valid" in splits else len(split_random(pool, args.valid_pct)[0])
    return folder_choices(pictures, targets, n_train=n_train, size_given=tuple(args.size) if args.size else None,
                          backbone_given=args.backbone is not None,
                          flip=not args.no_flip, rgb=pictures[0].mode != "L", pretrained=bool(args.pretrained))


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
    chosen = choose_from_pictures(args, data, blocks)
    task = make_task(args, blocks, builtin=args.path is None, chosen=chosen)
    if not args.quiet and first_process():
        what = f"{len(task.classes)} classes" if task.classes is not None else f"{task.n} point(s)"
        print(f"data: {name}, {len(data[0])} samples, {what}; task:")
        task.describe()
        for reason in (chosen.reasons if chosen else []):
            print(f"from the pictures: {reason}")
    return tasklearner(task, data, backbone=(chosen and chosen.backbone) or args.backbone, pretrained=args.pretrained,
                       batch_size=args.batch_size,  # None: the task's default for the training split
                       valid_pct=args.valid_pct, seed=args.seed,
                       num_workers=args.workers, compile=COMPILE[args.compile], callbacks=progress_callbacks(args),
                       progress=not (args.quiet or args.no_progress), epoch_repeats=chosen.epoch_repeats if chosen else 1,
                       devices=getattr(args, "devices", None), strategy=getattr(args, "strategy", None))


def training_hint(args, learner, tabular: bool):
    """The end-of-fit hint (learner/callbacks/training_hint.py), its advice in this command's options."""
    from ..learner.callbacks.training_hint import TrainingHint
    from .train_args import batch_size_or_default

    classes = learner.task.classes
    batch = learner.train_loader.batch_size if learner.train_loader is not None else batch_size_or_default(args)
    advice = [f"more --epochs (now {args.epochs})", f"a smaller --batch-size (now {batch})"]
    if not tabular and getattr(args, "backbone", None) is not None:
        advice.append("the default backbone (leave out --backbone: for a small folder, its own recipe)")
        if not getattr(args, "pretrained", False):
            advice.append("--pretrained weights")
    # enough steps, still at chance: what the run has not tried yet, not more of the same
    chance = ["check the labels (does each class's folder or column hold its own examples?)",
              f"another --lr (now {args.lr if args.lr is not None else 'the default'}; a tenth or ten times it)"]
    if not tabular and not getattr(args, "pretrained", False):
        chance.append("--pretrained weights of a timm --backbone (e.g. --backbone resnet18 --pretrained)")
    chance.append("more examples")
    return TrainingHint(len(classes) if classes else None, advice=", ".join(advice), chance_advice=", ".join(chance))
