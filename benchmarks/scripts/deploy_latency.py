"""One deploy contender's per-image latency (batch 1) and throughput (batch 32), end to end:
raw 8x8 digit images in, labels out (preprocessing included, as in a deployment).

    python benchmarks/scripts/deploy_latency.py torch runs/deploy/run/model 30
    python benchmarks/scripts/deploy_latency.py onnx digits.onnx 30      # imports no torch
    python benchmarks/scripts/deploy_latency.py pt2 digits.pt2 30
    python benchmarks/scripts/deploy_latency.py pte digits.pte 30
    python benchmarks/scripts/deploy_latency.py tflite digits.tflite 30    # or vmfb digits.vmfb; no torch

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
    """(predict one image -> label, predict a list of 32 images -> labels), through the one runtime
    interface (hotstart/deploy.py): the model contract encodes and decodes, the runtime runs."""
    from hotstart.cli.preflight import model_folder
    from hotstart.deploy import open_model

    threads = os.environ.get("HOTSTART_BENCH_THREADS")
    # "torch": a model folder (or train's --out folder); a file: the runtime of its suffix (onnx, tflite,
    # vmfb: no torch); onnxruntime and LiteRT take a thread count
    options = {"threads": int(threads)} if threads and kind in ("onnx", "tflite") else {}
    model = open_model(model_folder(path) if kind == "torch" else path, **options)
    return (lambda img: model.predict(img)[0]), (lambda imgs: [r[0] for r in model.predict_many(imgs, 32)])


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
