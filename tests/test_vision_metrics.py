"""pixel_accuracy and mean_iou equal torchmetrics' classes, streamed batch by batch; mean_distance
equals a direct computation. Across processes: tests/test_learner_ddp.py."""
import numpy as np
import pytest
import torch

from hotstart.metrics import MeanDistance, MeanIoU, PixelAccuracy


def _batches(seed, n_batches=4, classes=5, hw=(7, 9)):
    g = torch.Generator().manual_seed(seed)
    for _ in range(n_batches):
        logits = torch.randn(3, classes, *hw, generator=g)
        target = torch.randint(0, classes, (3, *hw), generator=g)
        yield logits, target


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("ours,theirs", [
    (lambda c: PixelAccuracy(c), lambda c: __import__("torchmetrics").classification.MulticlassAccuracy(c, average="micro")),
    (lambda c: MeanIoU(c), lambda c: __import__("torchmetrics").classification.MulticlassJaccardIndex(c, average="macro")),
])
def test_dense_metrics_equal_torchmetrics(seed, ours, theirs):
    classes = 2 + seed  # 2..6 classes
    a, b = ours(classes), theirs(classes)
    for logits, target in _batches(seed, classes=classes):
        if seed == 3:  # a class that never occurs in targets nor predictions: left out of the mean
            target = target.clamp(max=classes - 2)
            logits[:, classes - 1] = -1e9
        batch_ours, batch_theirs = a(logits.softmax(1), target), b(logits.softmax(1), target)
        assert batch_ours.item() == pytest.approx(batch_theirs.item(), abs=1e-6)
    assert a.compute().item() == pytest.approx(b.compute().item(), abs=1e-6)


def test_mean_iou_per_class_on_a_known_case():
    target = torch.tensor([[[0, 0, 1, 1], [2, 2, 2, 2]]])
    pred = torch.tensor([[[0, 1, 1, 1], [2, 2, 2, 0]]])
    m = MeanIoU(4)
    m.update(pred, target)
    # class 0: tp 1, fp 1, fn 1 -> 1/3; class 1: tp 2, fp 1 -> 2/3; class 2: tp 3, fn 1 -> 3/4; class 3 absent
    np.testing.assert_allclose(m.per_class().numpy(), [1 / 3, 2 / 3, 3 / 4, 0], rtol=1e-6)
    assert m.compute().item() == pytest.approx((1 / 3 + 2 / 3 + 3 / 4) / 3, rel=1e-6)
    m.update(pred, target + 3)  # flagged on the device, raised when the value is read
    with pytest.raises(ValueError, match="outside"):
        m.compute()


def test_mean_distance_in_pixels():
    m = MeanDistance((10, 20))  # H=10, W=20: one unit of scale is 10 px across, 5 px down
    preds = torch.tensor([[0.0, 0.0, 0.5, 0.0], [0.1, 0.2, 0.0, 0.0]])
    target = torch.tensor([[0.0, 0.0, 0.5, 0.4], [0.1, 0.2, 0.3, 0.4]])
    batch = m(preds, target)
    # distances: 0, 2 px (0.4 * 5), 0, sqrt(3^2 + 2^2)
    assert batch.item() == pytest.approx((2 + np.sqrt(13)) / 4, rel=1e-6)
    m.update(preds[:1], target[:1])
    assert m.compute().item() == pytest.approx((2 + np.sqrt(13) + 2) / 6, rel=1e-6)
    with pytest.raises(ValueError, match="2 \\* points"):
        m.update(preds[:, :3], target[:, :3])
