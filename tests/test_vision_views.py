"""Views for every task (show_batch, show_results, interpretation plots) render to non-blank PNGs
with the panels asked for; the interpretation's numbers agree with get_preds; TTA and test loaders."""
import io

import numpy as np
import pytest
import torch

from hotstart import (ImageClassificationSingle, ImageKeypointRegression, ImageSegmentation, datasets,
                      tasklearner)
from hotstart.interpret import ClassificationInterpretation, SegmentationInterpretation


@pytest.fixture(scope="module")
def classifier():
    data, blocks = datasets.load("digits")
    task = ImageClassificationSingle(blocks, size=(8, 8), augment={"flip": 0.0})
    learner = tasklearner(task, data.subset(list(range(300))), seed=0, batch_size=32, progress=False)
    learner.fit_one_cycle(4, 1e-2)  # 0.78-0.87 in fp32 and bf16 (2 epochs: 0.52-0.67, TTA under 0.5 in bf16)
    return learner


@pytest.fixture(scope="module")
def segmenter():
    data, blocks = datasets.load("digits-segmentation", size=16)
    task = ImageSegmentation(blocks, size=(16, 16), augment={"flip": 0.0})
    learner = tasklearner(task, data.subset(list(range(120))), seed=0, batch_size=24, progress=False)
    learner.fit_one_cycle(1, 1e-2)
    return learner


@pytest.fixture(scope="module")
def keypointer():
    data, blocks = datasets.load("discs", n=120, size=16)
    task = ImageKeypointRegression(blocks, size=(16, 16))
    learner = tasklearner(task, data, seed=0, batch_size=24, progress=False)
    learner.fit_one_cycle(1, 1e-2)
    return learner


def check_png(fig, panels: int):
    """The figure renders to a PNG of its size, is not blank, and has `panels` image panels."""
    from PIL import Image as PILImage

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=50)
    img = PILImage.open(io.BytesIO(buf.getvalue())).convert("L")
    w, h = fig.get_size_inches() * 50
    assert abs(img.width - w) <= 2 and abs(img.height - h) <= 2
    arr = np.asarray(img, dtype=np.float64)
    assert arr.std() > 5 and (arr < 250).mean() > 0.02, "the figure is blank"
    shown = [ax for ax in fig.axes if ax.images or ax.patches or ax.collections]
    assert len(shown) == panels, f"{len(shown)} panels, expected {panels}"


@pytest.mark.parametrize("name", ["classifier", "segmenter", "keypointer"])
def test_show_batch_and_show_results_render(name, request):
    learner = request.getfixturevalue(name)
    check_png(learner.show_batch(n=5), 5)
    fig = learner.show_results(n=4)
    check_png(fig, 8 if name == "segmenter" else 4)  # segmentation: truth and prediction side by side


def test_show_batch_draws_masks_and_points(segmenter, keypointer):
    fig = segmenter.show_batch(n=2)
    assert all(len(ax.images) == 2 for ax in fig.axes)  # the image and the mask overlay
    fig = keypointer.show_results(n=3)
    assert all(len(ax.collections) == 2 for ax in fig.axes)  # true and predicted points
    assert all(ax.get_title().startswith("error") for ax in fig.axes)


def test_confusion_matrix_equals_counts_from_get_preds(classifier):
    interp = ClassificationInterpretation.from_learner(classifier)
    probs, targets = classifier.get_preds()
    preds = probs.argmax(1)
    expected = np.zeros((10, 10), np.int64)
    for t, p in zip(targets.tolist(), preds.tolist()):
        expected[t, p] += 1
    cm = interp.confusion_matrix()
    assert (cm == expected).all() and cm.sum() == len(classifier.valid_loader.dataset)
    assert np.trace(cm) / cm.sum() == pytest.approx(classifier.validate()["accuracy"], abs=1e-6)
    losses, idx = interp.top_losses(3)
    assert (losses[:-1] >= losses[1:]).all()
    ce = torch.nn.functional.nll_loss(probs.log(), targets, reduction="none")
    assert torch.allclose(losses, ce[idx], atol=1e-4)
    check_png(interp.plot_confusion_matrix(), 1)
    check_png(interp.plot_top_losses(6), 6)


def test_most_confused_on_a_constructed_case(classifier):
    classes = classifier.task.classes  # 0..9
    # actual -> predicted: 3 -> 8 three times, 5 -> 6 twice, 1 -> 7 once, and some right answers
    pairs = [(3, 8)] * 3 + [(5, 6)] * 2 + [(1, 7)] + [(c, c) for c in range(10)]
    targets = torch.tensor([a for a, _ in pairs])
    probs = torch.nn.functional.one_hot(torch.tensor([p for _, p in pairs]), 10).float()
    interp = ClassificationInterpretation(classifier, probs, targets, torch.zeros(len(pairs)))
    assert interp.most_confused() == [(classes[3], classes[8], 3), (classes[5], classes[6], 2),
                                      (classes[1], classes[7], 1)]
    assert interp.most_confused(min_val=2) == [(classes[3], classes[8], 3), (classes[5], classes[6], 2)]
    assert interp.confusion_matrix()[3, 8] == 3 and interp.confusion_matrix().sum() == len(pairs)


def test_segmentation_interpretation(segmenter):
    interp = SegmentationInterpretation.from_learner(segmenter)
    metrics = segmenter.validate()
    assert interp.mean_iou == pytest.approx(metrics["mean_iou"], abs=1e-6)
    ious = interp.per_class_iou()
    assert list(ious) == segmenter.task.classes
    seen = [v for v in ious.values() if not np.isnan(v)]
    assert np.mean(seen) == pytest.approx(interp.mean_iou, abs=1e-5)
    probs, targets = segmenter.get_preds()
    assert (interp.preds == probs.argmax(1)).all() and (interp.targets == targets).all()
    check_png(interp.plot_top_losses(3), 9)
    check_png(interp.plot_per_class_iou(), 1)


def test_tta_classification(classifier, capsys):
    result = classifier.tta(n=4)
    probs, targets = result
    plain, t2 = classifier.get_preds()
    assert probs.shape == plain.shape and (targets == t2).all()
    assert torch.allclose(probs.sum(1), torch.ones(len(probs)), atol=1e-5)
    assert result.without["accuracy"] == pytest.approx(classifier.validate()["accuracy"], abs=1e-6)
    assert 0.5 < result.with_tta["accuracy"] <= 1
    assert "with TTA" in capsys.readouterr().out
    again = classifier.tta(n=4, verbose=False)
    assert torch.equal(again.probs, probs)  # views come from the learner's seed
    only_plain = classifier.tta(n=2, beta=1.0, verbose=False)
    assert torch.allclose(only_plain.probs, plain, atol=1e-6)


@pytest.mark.parametrize("name,metric", [("segmenter", "pixel_accuracy"), ("keypointer", "mean_distance")])
def test_tta_spatial_undoes_its_views(name, metric, request):
    learner = request.getfixturevalue(name)
    result = learner.tta(n=4, verbose=False)
    assert result.probs.shape == learner.get_preds()[0].shape
    assert result.without[metric] == pytest.approx(learner.validate()[metric], abs=1e-5)
    x = torch.randn(2, 1, 16, 16)
    for apply, undo in learner.task.tta_views(4):
        if name == "segmenter":  # a view undone on a dense map puts every interior pixel back
            assert torch.equal(undo(apply(x))[..., 2:-2, 2:-2], x[..., 2:-2, 2:-2])


def test_keypoint_view_inverse_matches_the_encoding(keypointer):
    """Undoing a flip / shift on outputs is exactly what the encoding does to a flipped / shifted image."""
    from PIL import Image as PILImage

    task = keypointer.task
    img = PILImage.fromarray(np.zeros((16, 16), np.uint8))
    pts = np.array([[3.0, 5.0]], np.float32)
    _, y = task.encode_sample((img, pts), "validation")
    flipped = np.array([[15 - 3.0, 5.0]], np.float32)  # pixel centres: x -> W - 1 - x
    _, yf = task.encode_sample((img, flipped), "validation")
    views = dict(zip(["flip", "right", "down"], task.tta_views(3)))
    assert torch.allclose(views["flip"][1](yf[None])[0], y, atol=1e-6)
    _, ys = task.encode_sample((img, pts + np.array([1.0, 0.0], np.float32)), "validation")
    assert torch.allclose(views["right"][1](ys[None])[0], y, atol=1e-6)
