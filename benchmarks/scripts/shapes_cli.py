"""``hotstart train FOLDER --epochs 10`` on shapes folders, as a user runs it: the last epochs'
validation accuracy for each (folder seed, run seed) pair (issue 34, item 4; the table in
hotstart/cli/small_folder.py).

    PYTHONPATH=.:tests OMP_NUM_THREADS=1 python benchmarks/scripts/shapes_cli.py --runs 0:0 0:1 1:0
    PYTHONPATH=.:tests OMP_NUM_THREADS=1 python benchmarks/scripts/shapes_cli.py --runs 0:0 --widths 16 32 64 --steps 150

Each run draws a folder with ``tests/shapes_folder.make_shapes(seed=F)`` (30 JPEGs a class at 48
px) and calls ``hotstart.cli.main(["train", folder, "--epochs", "10", "--seed", S, ...])`` in this
process, with the small-folder recipe as it is, or with `--widths` (the smallcnn_maxpool widths)
and `--steps` (`small_folder.STEPS_AN_EPOCH`) replaced for the comparison. Prints a JSON line a
run: its seconds, and each epoch's validation accuracy and training loss. Runs one at a time; two
copies of the script side by side, one torch thread each, are how the table was measured.
"""
import argparse
import contextlib
import io
import json
import shutil
import tempfile
import time
from pathlib import Path


def run(folder_seed: int, seed: int, extra: list) -> dict:
    from shapes_folder import make_shapes

    from hotstart.cli import main

    root = Path(tempfile.mkdtemp(prefix="shapes-cli-"))
    try:
        photos = make_shapes(root / "photos", seed=folder_seed)
        start = time.perf_counter()
        with contextlib.redirect_stdout(io.StringIO()):
            code = main(["train", str(photos), "--epochs", "10", "--out", str(root / "run"), "--no-progress",
                         "--no-server", "--seed", str(seed), *extra])
        seconds = time.perf_counter() - start
        rows = [line.split(",") for line in (root / "run" / "history.csv").read_text().splitlines()]
        header, rows = rows[0], rows[1:]
        return {"folder_seed": folder_seed, "seed": seed, "exit": code, "seconds": round(seconds, 1),
                "accuracy": [round(float(r[header.index("accuracy")]), 3) for r in rows],
                "train_loss": [round(float(r[header.index("train_loss")]), 3) for r in rows]}
    finally:
        shutil.rmtree(root, ignore_errors=True)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", nargs="+", default=["0:0"], help="FOLDER_SEED:SEED pairs")
    ap.add_argument("--widths", type=int, nargs="+", default=None, help="replace smallcnn_maxpool's widths")
    ap.add_argument("--steps", type=int, default=None, help="replace small_folder.STEPS_AN_EPOCH")
    ap.add_argument("--lr", type=float, default=None, help="--lr for the CLI")
    args = ap.parse_args(argv)
    import hotstart.cli.small_folder as small_folder
    import hotstart.models.small_cnn_maxpool as maxpool

    if args.widths:
        maxpool.MAXPOOL_WIDTHS = tuple(args.widths)
    if args.steps:
        small_folder.STEPS_AN_EPOCH = args.steps
    extra = ["--lr", str(args.lr)] if args.lr is not None else []
    for pair in args.runs:
        folder_seed, seed = (int(v) for v in pair.split(":"))
        print(json.dumps({**run(folder_seed, seed, extra), "widths": list(maxpool.MAXPOOL_WIDTHS),
                          "steps_an_epoch": small_folder.STEPS_AN_EPOCH, "extra": extra}), flush=True)


if __name__ == "__main__":
    main()
