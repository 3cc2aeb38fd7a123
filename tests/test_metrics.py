"""hotstart.metrics agree with the torchmetrics classes they stand in for, batch by batch and overall."""
import math
import sys

import pytest
import torch
import torchmetrics.classification as tmc

import prestart
from hotstart.errors import UsageError
from hotstart.metrics import (Denormalized, MeanIoU, MeanSquaredError, MulticlassAccuracy, MultilabelAccuracy,
                              MultilabelF1Score, PixelAccuracy, R2Score, read_on_host)


def _close(ours, theirs):
    assert ours.dtype == torch.float32
    torch.testing.assert_close(ours, theirs.float(), rtol=0, atol=0)  # the same float32 operations


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("kind", ["logits", "probabilities", "indices"])
def test_multiclass_accuracy_matches_torchmetrics(seed, kind):
    g = torch.Generator().manual_seed(seed)
    classes = 2 + seed
    ours, theirs = MulticlassAccuracy(classes), tmc.MulticlassAccuracy(num_classes=classes, average="micro")
    for batch in (7, 1, 16):
        scores = torch.randn(batch, classes, generator=g) * 3
        preds = {"logits": scores, "probabilities": scores.softmax(1), "indices": scores.argmax(1)}[kind]
        target = torch.randint(0, classes, (batch,), generator=g)
        _close(ours(preds, target), theirs(preds, target))  # the batch's value
    _close(ours.compute(), theirs.compute())  # all batches
    ours.reset(), theirs.reset()
    ours.update(preds, target), theirs.update(preds, target)
    _close(ours.compute(), theirs.compute())


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("kind", ["logits", "probabilities", "binary"])
def test_multilabel_accuracy_and_f1_match_torchmetrics(seed, kind):
    g = torch.Generator().manual_seed(seed)
    labels = 2 + seed
    pairs = [(MultilabelAccuracy(labels), tmc.MultilabelAccuracy(num_labels=labels, average="micro")),
             (MultilabelF1Score(labels), tmc.MultilabelF1Score(num_labels=labels, average="macro")),
             (MultilabelF1Score(labels, threshold=0.3), tmc.MultilabelF1Score(num_labels=labels, threshold=0.3))]
    for batch in (5, 1, 12):
        scores = torch.randn(batch, labels, generator=g) * 2
        preds = {"logits": scores, "probabilities": scores.sigmoid(), "binary": (scores > 0).long()}[kind]
        # sparse targets, so that some labels have no positives at all (F1's zero-division case)
        target = (torch.rand(batch, labels, generator=g) > 0.7).long()
        for ours, theirs in pairs:
            _close(ours(preds, target), theirs(preds, target))
    for ours, theirs in pairs:
        _close(ours.compute(), theirs.compute())


def test_edge_cases_match_torchmetrics():
    # a label never predicted nor present: torchmetrics counts its F1 as 0 in the macro mean
    preds, target = torch.tensor([[0.9, 0.1], [0.8, 0.2]]), torch.tensor([[1, 0], [1, 0]])
    _close(MultilabelF1Score(2)(preds, target), tmc.MultilabelF1Score(num_labels=2)(preds, target))
    # nothing seen yet: 0, as torchmetrics (which also warns)
    assert float(MulticlassAccuracy(3).compute()) == 0.0
    # the worked example: 6 of 8 entries right; per-label F1 1, 1, 0, 0
    logits = torch.tensor([[5.0, -5.0, 5.0, -5.0], [5.0, 5.0, -5.0, -5.0]])
    target = torch.tensor([[1, 0, 0, 0], [1, 1, 0, 1]])
    assert float(MultilabelAccuracy(4)(logits, target)) == pytest.approx(0.75)
    assert float(MultilabelF1Score(4)(logits, target)) == pytest.approx(0.5)


def test_bad_inputs_name_the_problem():
    with pytest.raises(ValueError, match="expected num_classes=3"):
        MulticlassAccuracy(3).update(torch.zeros(2, 4), torch.zeros(2, dtype=torch.long))
    # targets outside the classes: flagged on the device by update (no host sync per batch) and
    # raised by compute, by read_on_host (the validation phase's one read) and at once by a call
    m = MulticlassAccuracy(3)
    m.update(torch.zeros(2, 3), torch.tensor([0, 3]))
    m.update(torch.zeros(2, 3), torch.tensor([0, 1]))  # a good batch after it does not clear the flag
    with pytest.raises(ValueError, match=r"outside 0\.\.2"):
        m.compute()
    with pytest.raises(UsageError, match=r"MulticlassAccuracy: target holds class indices outside 0\.\.2"):
        read_on_host({"accuracy": m})
    with pytest.raises(ValueError, match=r"outside 0\.\.2"):
        MulticlassAccuracy(3)(torch.zeros(2, 3), torch.tensor([-1, 0]))
    m.reset()
    m.update(torch.zeros(2, 3), torch.tensor([0, 1]))
    assert float(m.compute()) == 0.5
    for cls in (PixelAccuracy, MeanIoU):
        m = cls(2)
        m.update(torch.zeros(1, 2, 2, 2), torch.tensor([[[0, 1], [2, 0]]]))
        with pytest.raises(UsageError, match=rf"{cls.__name__}: target .* outside 0\.\.1"):
            m.compute()
    with pytest.raises(ValueError, match=r"preds \(2,\) and target \(3,\)"):
        MulticlassAccuracy(3).update(torch.tensor([0, 1]), torch.tensor([0, 1, 2]))
    with pytest.raises(ValueError, match=r"must both be \(N, 4\)"):
        MultilabelAccuracy(4).update(torch.zeros(2, 3), torch.zeros(2, 3))
    with pytest.raises(ValueError, match="num_classes must be >= 2"):
        MulticlassAccuracy(1)


def test_read_on_host_gives_each_compute_with_one_host_read(monkeypatch):
    """The validation phase's one read: the same floats as ``float(m.compute())``, one transfer."""
    g = torch.Generator().manual_seed(0)
    logits, labels = torch.randn(40, 3, generator=g), torch.randint(0, 3, (40,), generator=g)
    y, y_hat = torch.randn(40, generator=g), torch.randn(40, generator=g)
    metrics = {"accuracy": MulticlassAccuracy(3), "rmse": Denormalized(MeanSquaredError(squared=False), [2.0], [3.0]),
               "r2": R2Score(), "r2_one_row": R2Score(), "iou": MeanIoU(3), "user": tmc.MulticlassAccuracy(3, average="micro")}
    for name, m in metrics.items():
        if name in ("accuracy", "user"):
            m.update(logits, labels)
        elif name == "iou":
            m.update(logits.reshape(10, 2, 2, 3).permute(0, 3, 1, 2), labels.reshape(10, 2, 2))
        else:
            m.update(*((y_hat[:1], y[:1]) if name == "r2_one_row" else (y_hat, y)))
    expected = {name: float(m.compute()) for name, m in metrics.items()}
    loss_sum = torch.tensor(12.5, dtype=torch.float64)
    reads = []
    for name in ("tolist", "item", "__float__", "__bool__"):
        method = getattr(torch.Tensor, name)
        monkeypatch.setattr(torch.Tensor, name, lambda self, *a, _m=method, _n=name: reads.append(_n) or _m(self, *a))
    values, sums = read_on_host({k: v for k, v in metrics.items() if k != "user"}, loss_sum)
    monkeypatch.undo()
    assert reads == ["tolist"]
    assert math.isnan(values.pop("r2_one_row")) and math.isnan(expected["r2_one_row"])  # < 2 rows, no sync
    assert sums == [12.5] and values == {k: v for k, v in expected.items() if k not in ("user", "r2_one_row")}
    assert read_on_host(metrics)[0]["user"] == expected["user"] == expected["accuracy"]


def test_to_moves_the_counts():
    m = MulticlassAccuracy(3).to("meta")
    assert m.correct.device.type == "meta" and m.total.device.type == "meta"
    m = MulticlassAccuracy(3)
    m.update(torch.tensor([0, 1]), torch.tensor([0, 2]))
    assert m.to(torch.device("cpu")) is m and float(m.compute()) == 0.5


# Run in a new process: the first validation of a fit, with nothing imported before it.
FRESH_PROCESS_FIT = """
import sys
import numpy as np
from PIL import Image as PILImage
from hotstart import Image, Label, ImageClassificationSingle, tasklearner
rng = np.random.default_rng(0)
images = [PILImage.fromarray(a) for a in rng.integers(0, 256, (24, 8, 8, 3), dtype=np.uint8)]
labels = [str(i % 3) for i in range(24)]
task = ImageClassificationSingle((Image(), Label(["0", "1", "2"])), size=8)
learner = tasklearner(task, (images, labels), batch_size=8, seed=0, progress=False)
learner.fit_one_cycle(1)
assert 0.0 <= learner.history[-1]["accuracy"] <= 1.0, learner.history
assert 0.0 <= learner.validate()["accuracy"] <= 1.0
print(sorted(m for m in sys.modules if m.split(".")[0] in ("torchmetrics", "matplotlib", "scipy", "lightning_fabric")))
"""


@prestart.job("metrics:fresh-process-fit")
def _fit_in_a_fresh_process(folder):
    """A tiny fit and validation in a new process (nothing imported yet), in the background from
    the start (tests/prestart.py); it prints which of the heavy optional packages got imported."""
    return prestart.Job([sys.executable, "-c", FRESH_PROCESS_FIT], timeout=300)


@pytest.mark.prestart("metrics:fresh-process-fit")
def test_a_single_process_fit_never_imports_torchmetrics():
    """The point of hotstart.metrics: the first validation does not pay torchmetrics' import."""
    out = prestart.result("metrics:fresh-process-fit")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "[]"

