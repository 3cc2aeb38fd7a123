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
The run writes to --out: the model (weights.safetensors + task.json), history.csv and loss.png,
replaced as one set (a kill leaves the old run's three or the new run's: hotstart/run_folder.py).
An --out that holds an earlier run is refused unless --overwrite (or --resume): see
`preflight.check_out` for why refusing, not numbering the runs.

Stopping: Ctrl-C, SIGTERM (``timeout``, docker, SLURM) and SIGUSR1 (SLURM's ``--signal``) stop
at the end of a batch (several processes: of the epoch; cli/stop_signals.py) and write what is finished (the model as of the last whole epoch, its history and loss plot; the
checkpoints of --checkpoint-dir are complete, and --resume continues from the newest) and exit
with 128 + the signal's number (130, 143, 138). An error in a later epoch (a damaged image) also
writes the finished epochs first, then prints its one line and exits with 1.

Fail fast: paths, CSV columns, --out and --resume are checked before torch is imported (cli/preflight.py).
A fit with very few optimizer steps, or validation at chance while the training loss falls, ends
with a hint of what to change (learner/callbacks/training_hint.py).

Output: on a terminal, progress bars and the epoch table; to a file or a pipe, the epoch table
only (bars there are a stream of ``\r`` updates). ``--no-progress``: never bars; ``--quiet``:
neither bars nor table, only the final summary.

This module is the command's story; its parts live beside it: train_args.py (the arguments),
train_data.py (the data), train_build.py (the task and learner; train_tabular.py and
train_timeseries.py for tables and series), stop_signals.py (the signals) and train_outputs.py
(what is written).
"""
from __future__ import annotations

from pathlib import Path

from .stop_signals import exit_status, signal_name, stop_at_batch_end, stop_on_signals
from .train_args import add_parser
from .train_build import build_learner, check_arguments, make_task, training_hint
from .train_data import load_data
from .train_outputs import last_epoch_weights, write_finished, write_outputs

__all__ = ["add_parser", "run", "load_data", "make_task", "build_learner"]


def run(args) -> int:
    from .preflight import check_train

    check_train(args)  # paths, CSV columns, --out, --resume: before torch is imported
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
        learner, default_lr = build_learner(args), (3e-3 if args.backbone is None else None)  # None: the task's default_lr
    lr = args.lr if args.lr is not None else default_lr
    out = Path(args.out)
    finished = last_epoch_weights()
    resume = getattr(args, "resume", None)
    checkpoint_dir = getattr(args, "checkpoint_dir", None) or resume
    try:
        with stop_on_signals() as stop:  # Ctrl-C, SIGTERM, SIGUSR1: stop at the end of a batch
            callbacks = [finished, stop_at_batch_end(stop), training_hint(args, learner, tabular)]
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
