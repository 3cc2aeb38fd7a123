"""One deploy contender's per-image latency (batch 1) and throughput (batch 32), end to end:
raw 8x8 digit images in, labels out (preprocessing included, as in a deployment).

    python benchmarks/scripts/deploy_latency.py torch runs/deploy/run/model 30
    python benchmarks/scripts/deploy_latency.py onnx digits.onnx 30      # imports no torch
    python benchmarks/scripts/deploy_latency.py pt2 digits.pt2 30

Prints a result record (scripts/_milestones.py): latency_ms (median over `iters` single images)
and ips_b32 (32 / the median time of a batch of 32).
"""
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _milestones import mark, result  # noqa: E402

DIGITS = Path(__file__).resolve().parents[2] / "hotstart" / "datasets" / "data" / "digits.npz"


def images(n):
    from PIL import Image

    with np.load(DIGITS, allow_pickle=False) as npz:
        return [Image.fromarray(a) for a in npz["images"][:n]]


def contender(kind, path):
    """(predict one image -> label, predict a list of 32 images -> labels)."""
    if kind == "onnx":
        from hotstart.predictor import Predictor

        threads = os.environ.get("HOTSTART_BENCH_THREADS")
        p = Predictor.load(path, threads=int(threads) if threads else None)
        return (lambda img: p.predict(img)[0]), (lambda imgs: [r[0] for r in p.predict_many(imgs, 32)])
    import torch

    if kind == "torch":
        from hotstart import load_learner
        from hotstart.cli.export import model_folder

        learner = load_learner(model_folder(path), progress=False)  # train's --out folder or the model folder
        model, task = learner.model.eval(), learner.task

        def many(imgs):
            with torch.no_grad():
                out = model(torch.stack([task.encode_input(i) for i in imgs]))
            return [task.classes[int(k)] for k in out.argmax(-1)]

        return (lambda img: learner.predict(img)[0]), many
    from hotstart.export.pt2 import load_pt2
    from hotstart.predictor import KINDS

    model, meta = load_pt2(path)
    kind_ = KINDS[meta["kind"]]

    def run(imgs):
        x = torch.from_numpy(np.stack([kind_.encode(i, meta) for i in imgs]))
        with torch.no_grad():
            out = model(x)
        out = out[0] if isinstance(out, (list, tuple)) else out
        return [meta["classes"][int(k)] for k in out.argmax(-1)]

    return (lambda img: run([img])[0]), run


def median_time(fn, arg, iters):
    for _ in range(3):
        fn(arg)
    times = []
    for _ in range(iters):
        t = time.perf_counter()
        fn(arg)
        times.append(time.perf_counter() - t)
    return float(np.median(times))


if __name__ == "__main__":
    kind, path, iters = sys.argv[1], sys.argv[2], int(sys.argv[3])
    one, many = contender(kind, path)
    mark("ready")
    imgs = images(64)
    b1 = median_time(one, imgs[0], iters)
    b32 = median_time(many, imgs[:32], max(3, iters // 4))
    result(latency_ms=b1 * 1e3, ips_b32=32 / b32, torch_loaded="torch" in sys.modules)
