"""Every metric of hotstart.metrics over one set of batches shared out among the processes: the
case that ``ddp_digits.py --metrics-dir DIR`` runs after its fit (tests/test_learner_ddp.py reads
``DIR/rank<r>.json``), and that the test runs again in its own process with a `PlainBackend`.

Batch b goes to process ``b % world_size`` (so the two processes see 3 and 2 of the 5 batches,
of unequal sizes); each process updates its metrics with its batches and reads the values with
`read_on_host` through its backend's ``sum_tensors``: the code the `Metrics` callback runs at the
end of every validation phase, in one process and in many. A second read has a target outside
the classes in the last batch only: every process must raise, not only the one that saw it.
"""
import json
import os

import torch

from hotstart.errors import UsageError
from hotstart.metrics import (Denormalized, MeanDistance, MeanIoU, MeanSquaredError, MulticlassAccuracy,
                              MultilabelAccuracy, MultilabelF1Score, PixelAccuracy, R2Score, read_on_host)

BATCH_SIZES = (7, 1, 12, 5, 9)
CLASSES, LABELS, OUTPUTS, HW = 4, 3, 2, (5, 6)


def metrics() -> dict:
    """name -> (a fresh metric, the kind of batches it reads)."""
    return {"accuracy": (MulticlassAccuracy(CLASSES), "classes"),
            "multilabel_accuracy": (MultilabelAccuracy(LABELS), "labels"),
            "f1": (MultilabelF1Score(LABELS), "labels"),
            "mse": (MeanSquaredError(), "values"),
            "rmse_per_output_1": (Denormalized(MeanSquaredError(squared=False), [4.0] * OUTPUTS, [3.0] * OUTPUTS,
                                               output=1), "values"),
            "r2": (R2Score(num_outputs=OUTPUTS), "values"),
            "pixel_accuracy": (PixelAccuracy(CLASSES), "pixels"),
            "mean_iou": (MeanIoU(CLASSES), "pixels"),
            "mean_distance": (MeanDistance(HW), "points")}


def batches(kind: str) -> list:
    """The 5 (preds, target) batches of `kind`, the same in every process (seeded)."""
    g = torch.Generator().manual_seed(len(kind))
    out = []
    for n in BATCH_SIZES:
        if kind == "classes":
            out.append((torch.randn(n, CLASSES, generator=g), torch.randint(0, CLASSES, (n,), generator=g)))
        elif kind == "labels":
            out.append((torch.randn(n, LABELS, generator=g), (torch.rand(n, LABELS, generator=g) > 0.6).long()))
        elif kind == "values":
            out.append((torch.randn(n, OUTPUTS, generator=g), torch.randn(n, OUTPUTS, generator=g) * 2 + 1))
        elif kind == "pixels":
            out.append((torch.randn(n, CLASSES, *HW, generator=g), torch.randint(0, CLASSES, (n, *HW), generator=g)))
        else:
            out.append((torch.rand(n, 6, generator=g) * 2 - 1, torch.rand(n, 6, generator=g) * 2 - 1))
    return out


def metrics_case(backend) -> dict:
    """This process's share of every metric, read over all processes: {"values", "n", "invalid_raised"}."""
    world, rank = backend.world_size, backend.global_rank
    built = {}
    for name, (metric, kind) in metrics().items():
        metric.to(backend.device)
        for b, (preds, target) in enumerate(batches(kind)):
            if b % world == rank:
                metric.update(preds.to(backend.device), target.to(backend.device))
        built[name] = metric
    mine = sum(n for b, n in enumerate(BATCH_SIZES) if b % world == rank)
    values, (n,) = read_on_host(built, torch.tensor(float(mine), dtype=torch.float64, device=backend.device),
                                sum_over_processes=backend.sum_tensors)

    bad = MulticlassAccuracy(CLASSES).to(backend.device)
    for b, (preds, target) in enumerate(batches("classes")):
        if b % world == rank:
            if b == len(BATCH_SIZES) - 1:
                target = target.clone()
                target[0] = CLASSES  # outside the classes, on the last batch's process only
            bad.update(preds.to(backend.device), target.to(backend.device))
    try:
        read_on_host({"accuracy": bad}, sum_over_processes=backend.sum_tensors)
        raised = False
    except UsageError:
        raised = True
    return {"rank": rank, "world_size": world, "values": values, "n": n, "invalid_raised": raised}


def write_metrics_case(backend, folder) -> None:
    os.makedirs(folder, exist_ok=True)
    result = metrics_case(backend)
    with open(os.path.join(folder, f"rank{backend.global_rank}.json"), "w") as f:
        json.dump(result, f)
