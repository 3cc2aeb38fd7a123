"""A resnet10t read back from ONNX fine-tunes like the torch original (issue: ONNX read).

    PYTHONPATH=. python benchmarks/scripts/onnx_finetune.py --epochs 3 --size 32     # ~4 CPU-min per fit

One timm resnet10t (random init, seed 0, 1 input channel, no classifier) is exported to ONNX by
torch and read back with hotstart.models.from_onnx. Both serve as the backbone of the same
tasklearner on digits (same seed, so the same head, data order and schedule) and train the
same epochs; the script prints both validation accuracies and the largest difference of their
outputs before training.

Measured (2026-12-01, full resnet10t, timm's default init, all digits, 3 epochs at 32x32, lr 3e-3,
batch 64, load ~9-13): outputs within 1.6e-7 before training; validation accuracy torch 0.9889,
from_onnx (batch norms put back, the default) 0.9889, from_onnx(batchnorm="none") 0.7632. torch's
exporter folds each BatchNorm into its convolution; without them put back the model trains without
batch normalization. Also: --channels 16 32 64 128 --lr 1e-2 --batch-size 32 (load ~7): torch 0.9861,
from_onnx 0.9805, none 0.8858.
"""
import argparse
import copy
import json
import sys
import tempfile
import time
from pathlib import Path

import torch


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--size", type=int, default=32)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--n", type=int, default=None, help="use the first N digits only (default: all 1797)")
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--valid-pct", type=float, default=0.2)
    ap.add_argument("--channels", type=int, nargs=4, default=None,
                    help="stage widths (resnet10t's are 64 128 256 512; the test uses a narrow one)")
    ap.add_argument("--no-zero-init-last", action="store_true",
                    help="timm's zero_init_last=False: no all-zero folded convolutions (none redrawn by from_onnx)")
    ap.add_argument("--batchnorm", nargs="+", default=["folded", "none"],
                    help="from_onnx(batchnorm=...) modes to train besides the torch original")
    args = ap.parse_args(argv)
    import timm

    from hotstart import ImageClassificationSingle, datasets, tasklearner
    from hotstart.models import from_onnx

    with torch.random.fork_rng():
        torch.manual_seed(0)
        width = {"channels": tuple(args.channels), "stem_width": args.channels[0] // 2} if args.channels else {}
        original = timm.create_model("resnet10t", pretrained=False, num_classes=0, in_chans=1, **width,
                                     zero_init_last=not args.no_zero_init_last).eval()
    x = torch.randn(2, 1, args.size, args.size)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "resnet10t.onnx"
        batch = torch.export.Dim("batch", min=1, max=1024)
        with torch.no_grad():
            torch.onnx.export(original, (x,), path, dynamo=True, input_names=["input"], dynamic_shapes=({0: batch},),
                              external_data=False, verbose=False)
        reads = {f"from_onnx[{mode}]": from_onnx(path, batchnorm=mode) for mode in args.batchnorm}
    with torch.no_grad():
        before = max(float((read.eval()(x) - original(x)).abs().max()) for read in reads.values())
    data, blocks = datasets.load("digits")
    if args.n:
        data = data.subset(list(range(args.n)))
    out = {"max_abs_diff_before": before}
    for name, backbone in (("torch", copy.deepcopy(original)), *reads.items()):
        task = ImageClassificationSingle(blocks, size=(args.size, args.size), augment={"flip": 0.0})
        learner = tasklearner(task, data, backbone=backbone, seed=0, progress=False,
                              batch_size=args.batch_size, valid_pct=args.valid_pct)
        start = time.perf_counter()
        learner.fit_one_cycle(args.epochs, args.lr)
        out[name] = learner.validate()["accuracy"]
        print(name, out[name], f"{time.perf_counter() - start:.1f} s", flush=True)
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
