"""fp32 against ``precision="auto"`` through hotstart itself: the built-in digits, same seeds, same
epochs; validation accuracy and the fit's wall time of each. What learner/precision.py's choice
costs or gains a user, measured on the path a user takes (tasklearner -> Fabric's bf16-mixed
plugin), not on a bare model.

    PYTHONPATH=. python benchmarks/scripts/precision_digits.py --seeds 3 --epochs 3

resnet10t at 32x32 (1 channel), batch 64, fit_one_cycle(epochs, 3e-3), 20% validation split from
the seed; the two settings alternate per seed. Prints one JSON line.
"""
import argparse
import json
import statistics
import time


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--size", type=int, default=32)
    ap.add_argument("--backbone", default="resnet10t")
    ap.add_argument("--bs", type=int, default=64)
    args = ap.parse_args(argv)

    from hotstart import ImageClassificationSingle, datasets, tasklearner
    from hotstart.learner.precision import auto_precision, cpu_flags

    data, blocks = datasets.load("digits")
    task = ImageClassificationSingle(blocks, size=(args.size, args.size), augment={"flip": 0.0})
    out = {"auto_means": auto_precision("cpu"), "flags": sorted(f for f in cpu_flags() if "bf16" in f or f.startswith("amx")),
           "args": vars(args), "accuracy": {"fp32": [], "auto": []}, "fit_s": {"fp32": [], "auto": []}}
    for seed in range(args.seeds):
        for name, precision in (("fp32", None), ("auto", "auto")) if seed % 2 == 0 else (("auto", "auto"), ("fp32", None)):
            learner = tasklearner(task, data, backbone=args.backbone, batch_size=args.bs, seed=seed, progress=False,
                                  precision=precision)
            t0 = time.perf_counter()
            learner.fit_one_cycle(args.epochs, 3e-3)
            out["fit_s"][name].append(round(time.perf_counter() - t0, 2))
            out["accuracy"][name].append(round(float(learner.history[-1]["accuracy"]), 4))
    out["mean_accuracy"] = {k: round(statistics.mean(v), 4) for k, v in out["accuracy"].items()}
    out["median_fit_s"] = {k: statistics.median(v) for k, v in out["fit_s"].items()}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
