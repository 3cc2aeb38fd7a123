"""QAT int8 vs post-training int8 vs fp32 on digits at 16x16, over seeds (issue: quantization-aware training).

    PYTHONPATH=. python benchmarks/scripts/qat_digits.py --seeds 0 1 2 --out benchmarks/results/qat-digits.json

Per seed: the small CNN trained 1 epoch in fp32 (one-cycle, 3e-3), then
- fp32: its validation accuracy;
- PTQ ORT: onnxruntime's static int8 of its ONNX export (``export(quantize="int8")``), run by predictor.py;
- PTQ pte: PT2E post-training int8 (``quantize("pte", qat_epochs=0)``), run by ExecuTorch;
- QAT pte: 1 QAT epoch (``quantize("pte", qat_epochs=1)``, one-cycle to 1e-4), run by ExecuTorch;
- fp32 +1: the fp32 model after the same extra epoch without fake quantizers (QAT's fair reference:
  QAT trains one epoch more than the others).
Accuracies are on the 359 validation images, computed on the exported files.
"""
import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np


def accuracy(model, inputs, targets) -> float:
    return float(np.mean([model.predict(x)[0] == t for x, t in zip(inputs, targets)]))


def one_seed(seed: int, folder: Path) -> dict:
    from hotstart import ImageClassificationSingle, datasets, tasklearner
    from hotstart.runtimes import open_file

    data, blocks = datasets.load("digits")
    task = ImageClassificationSingle(blocks, size=(16, 16), augment={"flip": 0.0})
    learner = tasklearner(task, data, seed=seed, valid_pct=0.2, progress=False)
    learner.fit_one_cycle(1, 3e-3)
    ds = learner.valid_loader.dataset
    inputs, targets = [ds.inputs[i] for i in range(len(ds))], [ds.targets[i] for i in range(len(ds))]
    out = {"seed": seed, "fp32": learner.validate()["accuracy"]}
    learner.export(folder / "ptq.onnx", quantize="int8", measure=False)
    out["ptq_ort"] = accuracy(open_file(folder / "ptq.onnx"), inputs, targets)
    learner.quantize("pte", qat_epochs=0).export(folder / "ptq.pte")
    out["ptq_pte"] = accuracy(open_file(folder / "ptq.pte"), inputs, targets)
    t = time.perf_counter()
    learner.quantize("pte", qat_epochs=1).export(folder / "qat.pte")
    out["qat_seconds"] = round(time.perf_counter() - t, 1)
    out["qat_pte"] = accuracy(open_file(folder / "qat.pte"), inputs, targets)
    learner.fit_one_cycle(1, 1e-4)
    out["fp32_plus_1"] = learner.validate()["accuracy"]
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for seed in args.seeds:
            rows.append(one_seed(seed, Path(tmp)))
            print(json.dumps(rows[-1]), flush=True)
    keys = ["fp32", "ptq_ort", "ptq_pte", "qat_pte", "fp32_plus_1"]
    mean = {k: round(float(np.mean([r[k] for r in rows])), 4) for k in keys}
    print("mean", json.dumps(mean))
    if args.out:
        from hotstart.atomic import atomic_write_bytes

        atomic_write_bytes(Path(args.out), json.dumps({"rows": rows, "mean": mean}, indent=1).encode())
    return 0


if __name__ == "__main__":
    sys.exit(main())
