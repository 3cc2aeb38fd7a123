"""``python -m hotstart train [PATH] ...``: train a model on a folder, a table or built-in data.

    python -m hotstart train                          # the built-in digits, small CNN, 32x32
    python -m hotstart train photos/ --backbone resnet18 --size 128 128 --epochs 5 --out runs/photos
    python -m hotstart train table.csv --path-col file --label-col tags --label-sep " "
    python -m hotstart train table.csv --task tabular --target price    # a table's own columns
    python -m hotstart train --task segmentation     # digits-segmentation; or PATH with images/ masks/ --classes
    python -m hotstart train --task keypoints        # discs; or a CSV with --path-col --point-cols x0,y0
    python -m hotstart train --task timeseries       # GunPoint; or a .ts file / built-in set (cli/train_timeseries.py)
    python -m hotstart train --devices 2 --checkpoint-dir runs/ckpt   # 2 processes (DDP), checkpoints
    python -m hotstart train --devices 2 --resume runs/ckpt           # continue after a kill

PATH is a folder of class folders (optionally split into train/ and valid/) or a CSV table.
The run writes to --out: the model (weights.safetensors + task.json), history.csv and loss.png.
An --out that holds an earlier run is refused unless --overwrite (or --resume): see
`preflight.check_out` for why refusing, not numbering the runs.

Stopping: Ctrl-C, SIGTERM (``timeout``, docker, SLURM) and SIGUSR1 (SLURM's ``--signal``) stop
at the end of a batch (several processes: of the epoch; cli/stop_signals.py) and write what is finished (the model as of the last whole epoch, its history and loss plot; the
checkpoints of --checkpoint-dir are complete, and --resume continues from the newest) and exit
with 128 + the signal's number (130, 143, 138). An error in a later epoch (a damaged image) also
writes the finished epochs first, then prints its one line and exits with 1.

Fail fast: paths, CSV columns and --out are checked before torch is imported (cli/preflight.py).
A fit with very few optimizer steps, or validation at chance while the training loss falls, ends
with a hint of what to change (learner/callbacks/training_hint.py).

Output: on a terminal, progress bars and the epoch table; to a file or a pipe, the epoch table
only (bars there are a stream of ``\r`` updates). ``--no-progress``: never bars; ``--quiet``:
neither bars nor table, only the final summary.
"""
from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path

from .stop_signals import exit_status, signal_name, stop_on_signals

_COMPILE = {"auto": "auto", "on": True, "off": False}


def add_parser(sub) -> argparse.ArgumentParser:
    t = sub.add_parser("train", help="train an image classifier and save it",
                       description="Train on PATH (a folder of class folders or a CSV), or on the built-in digits.")
    t.add_argument("path", nargs="?", default=None, help="folder of class folders, or a CSV table; default: digits")
    t.add_argument("--backbone", default=None, help="timm model name (e.g. resnet18); default: a small CNN")
    t.add_argument("--pretrained", action="store_true", help="start from the backbone's pretrained weights")
    t.add_argument("--epochs", type=_positive_int, default=5)
    t.add_argument("--size", type=_positive_int, nargs=2, metavar=("H", "W"), default=None,
                   help="input size; default 32 32 for digits, 128 128 otherwise")
    t.add_argument("--batch-size", type=_positive_int, default=64)
    t.add_argument("--lr", type=float, default=None, help="maximum learning rate of the one-cycle schedule")
    t.add_argument("--valid-pct", type=float, default=0.2)
    t.add_argument("--seed", type=int, default=0)
    t.add_argument("--no-flip", action="store_true", help="no horizontal flips (always off for digits)")
    t.add_argument("--workers", type=int, default=0, help="DataLoader worker processes")
    t.add_argument("--path-col", default="path", help="CSV: column with image paths")
    t.add_argument("--label-col", default="label", help="CSV: column with labels")
    t.add_argument("--label-sep", default=None, help="CSV: separator of multiple labels per row")
    t.add_argument("--allow-outside", action="store_true",
                   help="CSV: allow absolute paths and paths outside the table's folder")
    t.add_argument("--task", choices=["image", "classification", "tabular", "segmentation", "keypoints", "timeseries"], default=None,
                   help="image / classification (default): a label per image; tabular: predict a CSV column from the "
                        "others (see --target); segmentation: a class per pixel (PATH holds images/ and masks/, "
                        "with --classes; default data: digits-segmentation); keypoints: points (PATH is a CSV with "
                        "--point-cols; default data: discs); timeseries: a class or a number per series (PATH is a .ts "
                        "file or a built-in set's name; default: GunPoint; --backbone inceptiontime or resnet1d)")
    t.add_argument("--classes", default=None, help="segmentation: comma-separated class names, mask value order")
    t.add_argument("--point-cols", default=None, help="keypoints CSV: comma-separated x0,y0,x1,y1,... columns")
    t.add_argument("--target", default=None,
                   help="tabular: the column to predict (implies --task tabular); without PATH, the built-in penguins")
    t.add_argument("--out", default="runs/hotstart",
                   help="output folder (default: runs/hotstart); one that holds an earlier run is refused, so "
                        "that no model is replaced silently and commands naming the folder keep meaning it: "
                        "pass another folder, or --overwrite")
    t.add_argument("--overwrite", action="store_true", help="replace the earlier run in --out")
    t.add_argument("--compile", choices=list(_COMPILE), default="auto",
                   help="torch.compile the backbone: auto (default) compiles only where it pays and the "
                        "compile cache is warm (python -m hotstart.warmup), i.e. on CUDA, never on CPU; "
                        "on / off force it")
    t.add_argument("--no-progress", action="store_true",
                   help="no progress bars (the epoch table is still printed); bars are off anyway "
                        "when the output is not a terminal")
    t.add_argument("--quiet", "-q", action="store_true",
                   help="no progress bars, no epoch table, no task description: only the final summary")
    t.add_argument("--devices", type=_positive_int, default=None,
                   help="processes (one per GPU, or CPU processes) for data parallel training; under torchrun or "
                        "SLURM the launcher's count is used")
    t.add_argument("--strategy", default=None, help="Lightning Fabric strategy (default: ddp with --devices > 1)")
    t.add_argument("--accumulate", type=_positive_int, default=1, help="batches per optimizer step")
    t.add_argument("--checkpoint-dir", default=None, help="write a checkpoint here at the end of every epoch")
    t.add_argument("--checkpoint-every", type=_positive_int, default=None,
                   help="also write a checkpoint every N optimizer steps")
    t.add_argument("--resume", default=None, metavar="DIR",
                   help="continue from the last complete checkpoint in DIR (and keep checkpointing there)")
    return t


def _first_process() -> bool:
    """Before the learner exists: is this the first process (rank 0, or the only one)?"""
    import os

    return all(os.environ.get(k, "0") == "0" for k in ("RANK", "LOCAL_RANK", "SLURM_PROCID"))


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {value}")
    return value


def load_data(args):
    from .. import datasets
    from ..errors import UsageError

    task = getattr(args, "task", None)
    if task in ("segmentation", "keypoints"):
        return _load_spatial_data(args, task)
    if args.path is None:
        data, blocks = datasets.load("digits")
        return data, blocks, "digits"
    path = Path(args.path)
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such file or folder")
    if path.is_dir():
        data, blocks = datasets.ImageFolders(path)
    elif path.suffix.lower() in (".csv", ".tsv"):
        data, blocks = datasets.ImageTable(path, args.path_col, args.label_col, label_sep=args.label_sep,
                                           allow_outside=getattr(args, "allow_outside", False))
    else:
        raise UsageError(f"{path}: expected a folder of class folders or a .csv table")
    return data, blocks, str(path)


def _load_spatial_data(args, task: str):
    """Segmentation: PATH/images + PATH/masks (paired by stem) and --classes; keypoints: a CSV
    with --path-col and --point-cols. Without PATH: digits-segmentation or discs."""
    from .. import datasets
    from ..errors import UsageError

    if args.path is None:
        name = "digits-segmentation" if task == "segmentation" else "discs"
        data, blocks = datasets.load(name)
        return data, blocks, name
    path = Path(args.path)
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such file or folder")
    if task == "segmentation":
        if not args.classes:
            raise UsageError("--task segmentation with a PATH needs --classes name0,name1,... (mask value order)")
        data, blocks = datasets.SegmentationFolders(path / "images", path / "masks", args.classes.split(","))
    else:
        if not args.point_cols:
            raise UsageError("--task keypoints with a PATH needs --point-cols x0,y0,...")
        data, blocks = datasets.KeypointTable(path, args.path_col, args.point_cols.split(","))
    return data, blocks, str(path)


def _make_task(args, blocks, builtin: bool):
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


def run(args) -> int:
    from .preflight import check_train

    check_train(args)  # paths, CSV columns, --out: before torch is imported
    tabular = getattr(args, "task", None) == "tabular" or (getattr(args, "task", None) is None
                                                           and getattr(args, "target", None))
    if tabular:
        from .train_tabular import DEFAULT_LR, build_tabular_learner

        learner, default_lr = build_tabular_learner(args), DEFAULT_LR
    elif getattr(args, "task", None) == "timeseries":  # series: hotstart/cli/train_timeseries.py
        from .train_timeseries import DEFAULT_LR, build_timeseries_learner

        learner, default_lr = build_timeseries_learner(args), DEFAULT_LR
    else:
        check_arguments(args)  # a misspelled backbone or no network for --pretrained: before any data
        learner, default_lr = build_learner(args), (3e-3 if args.backbone is None else 1e-3)
    lr = args.lr if args.lr is not None else default_lr
    out = Path(args.out)
    finished = _last_epoch_weights()
    resume = getattr(args, "resume", None)
    checkpoint_dir = getattr(args, "checkpoint_dir", None) or resume
    try:
        with stop_on_signals() as stop:  # Ctrl-C, SIGTERM, SIGUSR1: stop at the end of a batch
            callbacks = [finished, _stop_at_batch_end(stop), _hint(args, learner, tabular)]
            learner.fit_one_cycle(args.epochs, lr, callbacks=callbacks,
                                  accumulate=getattr(args, "accumulate", 1), checkpoint_dir=checkpoint_dir,
                                  checkpoint_every=getattr(args, "checkpoint_every", None), resume=resume)
    except KeyboardInterrupt as stop:
        write_finished(learner, finished, out, f"interrupted ({signal_name(stop)})", checkpoint_dir)
        return exit_status(stop)
    except Exception:
        write_finished(learner, finished, out, "stopped by an error", checkpoint_dir)
        raise  # the CLI prints its one line (a user error) or its traceback (a bug)
    written = write_outputs(learner, out)
    if not learner.backend.is_global_zero:
        return 0
    final = learner.history[-1]
    summary = ", ".join(f"{k} {v:.4f}" for k, v in final.items() if k not in ("epoch", "time"))
    print(f"done: {summary}\nwrote {', '.join(map(str, written))}")
    return 0


def write_finished(learner, finished, out: Path, why: str, checkpoint_dir) -> None:
    """After an interrupt or an error: write the model as of the last whole epoch (with its
    history and loss plot) and say what was written, in one line on stderr (first process only)."""
    loud = learner.backend.is_global_zero
    if finished.state is None or finished.n_epochs == 0:
        if loud:
            print(f"{why} before the first epoch finished: nothing written", file=sys.stderr)
        return
    finished.restore(learner)  # the weights (and loss curve) that go with the history
    written = write_outputs(learner, out)
    if not loud:
        return
    note = ""
    if checkpoint_dir is not None:
        from ..learner.checkpoint import checkpoints

        found = checkpoints(checkpoint_dir)
        if found:
            note = f"; checkpoint {found[-1]} (continue with --resume {checkpoint_dir})"
    print(f"{why}: wrote the {len(learner.history)} finished epoch(s) to {', '.join(map(str, written))}{note}",
          file=sys.stderr)


def _hint(args, learner, tabular: bool):
    """The end-of-fit hint, its advice in this command's options."""
    from ..learner.callbacks.training_hint import TrainingHint

    task = learner.task
    classes = task.classes
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

    data, blocks, name = load_data(args)
    task = _make_task(args, blocks, builtin=args.path is None)
    if not args.quiet and _first_process():
        what = f"{len(task.classes)} classes" if task.classes is not None else f"{task.n} point(s)"
        print(f"data: {name}, {len(data[0])} samples, {what}; task:")
        task.describe()
    from .progress import progress_callbacks

    callbacks = progress_callbacks(args)
    return tasklearner(task, data, backbone=args.backbone, pretrained=args.pretrained,
                       batch_size=args.batch_size, valid_pct=args.valid_pct, seed=args.seed,
                       num_workers=args.workers, compile=_COMPILE[args.compile], callbacks=callbacks,
                       progress=not (args.quiet or args.no_progress),
                       devices=getattr(args, "devices", None), strategy=getattr(args, "strategy", None))


def _last_epoch_weights():
    """A callback that keeps a CPU copy of the weights at the end of each whole epoch, so that
    Ctrl-C can save the model that the history describes (not one from the middle of a step).
    Defined here, not at import time: building the parser must not import torch."""
    from ..learner.callbacks.base import Callback

    class LastEpochWeights(Callback):
        order = 45  # after the recorder (-10) has written the row, before Progress (50) prints it

        def __init__(self):
            self.state, self.n_epochs, self.n_losses = None, 0, 0

        def after_epoch(self):
            from ..learner.state_copy import copy_state

            self.state = copy_state(self.learner.task_model().state_dict(), self.state, device="cpu")
            self.n_epochs, self.n_losses = len(self.learner.history), len(self.learner.recorder.losses)

        def restore(self, learner) -> None:
            """Weights, history rows and loss curve as they were at the end of the last whole epoch."""
            rec = learner.recorder
            learner.task_model().load_state_dict(self.state)
            del rec.history[self.n_epochs:], rec.losses[self.n_losses:], rec.lrs[self.n_losses:]

    return LastEpochWeights()


def _stop_at_batch_end(request):
    """A callback that raises the signal `request` holds (stop_signals.py): at the end of a batch in
    one process; with several, at the start of the next epoch, where all of them agree (an
    all-reduce of the request) so that none is left waiting in a collective the others never join."""
    from ..learner.callbacks.base import Callback
    from .stop_signals import Stopped

    class StopAtBatchEnd(Callback):
        order = 100  # after every other callback has seen the batch

        def after_batch(self):
            if self.learner.backend.world_size == 1:
                request.check()

        def before_epoch(self):
            backend = self.learner.backend
            if backend.world_size > 1:
                signum = int(backend.all_reduce_max(float(request.signum or 0)))
                if signum:
                    raise Stopped(signum)

    return StopAtBatchEnd()


def write_outputs(learner, out: Path) -> list[Path]:
    """The model, history.csv and loss.png in `out` (each written atomically); their paths.
    With several processes, all call this: the first writes, the others wait in `save`."""
    learner.save(out / "model")
    if not learner.backend.is_global_zero:
        return [out / "model"]
    write_history(learner.history, out / "history.csv")
    fig = learner.plot_loss()
    _save_figure(fig, out / "loss.png")
    return [out / "model", out / "history.csv", out / "loss.png"]


def _save_figure(fig, path: Path) -> None:
    import io

    from ..atomic import atomic_write_bytes

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100)
    atomic_write_bytes(path, buf.getvalue())


def write_history(history, path: Path) -> None:
    import io

    from ..atomic import atomic_write_bytes

    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=list(history[0]))
    writer.writeheader()
    writer.writerows(history)
    atomic_write_bytes(path, buf.getvalue().encode())
