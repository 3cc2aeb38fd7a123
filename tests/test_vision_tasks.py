"""ImageSegmentation and ImageKeypointRegression: encoding, joint transforms (as properties),
models, training that learns, predict at the given image's size, save / load, mocks, metrics."""
import json

import numpy as np
import pytest
import torch

from hotstart import Image, ImageKeypointRegression, ImageSegmentation, Keypoints, Mask, datasets, tasklearner
from hotstart.encodings import Context, KeypointScaling, ProjectiveTransforms


@pytest.fixture(scope="module")
def seg_data():
    data, blocks = datasets.load("digits-segmentation", size=16)
    return data.subset(list(range(400))), blocks


@pytest.fixture(scope="module")
def disc_data():
    return datasets.load("discs", n=400, size=16)


# --- joint transforms, as properties over 200 random draws ---------------------------------------

def test_dot_and_its_keypoint_move_together():
    """A one-pixel dot and its keypoint, through the training augmentation: the dot's brightest
    pixel stays within 1 pixel of the transformed point (flip, crop, rotation all drawn once)."""
    proj = ProjectiveTransforms((32, 32), augment={"max_lighting": 0.0})
    blocks = [Image(channels=1), Keypoints(1)]
    rng = np.random.default_rng(0)
    checked = 0
    for draw in range(200):
        img = np.zeros((40, 40), np.uint8)
        x, y = (int(v) for v in rng.integers(10, 30, size=2))  # inside what any crop keeps of 40x40
        img[y, x] = 255
        out_img, out_pts = proj.encode_sample(blocks, [img, np.array([[x, y]], np.float32)], Context.TRAINING, rng)
        px, py = out_pts[0].tolist()
        if not (0 <= px <= 31 and 0 <= py <= 31):
            continue  # the crop cut the dot out: nothing to compare
        bright = out_img[0].float()
        assert bright.max() > 0, f"draw {draw}: the dot vanished though its point {px, py} is inside"
        j, i = divmod(int(bright.argmax()), 32)
        assert abs(i - px) <= 1.0 and abs(j - py) <= 1.0, f"draw {draw}: dot at {(i, j)}, point at {(px, py)}"
        checked += 1
    assert checked >= 150


def test_mask_equal_to_thresholded_image_stays_equal():
    """An image and the mask of its bright pixels (a random ellipse), through 200 training
    augmentations: the mask and the transformed image thresholded again agree (IoU >= 0.95)."""
    proj = ProjectiveTransforms((48, 48), augment={"max_lighting": 0.0})
    blocks = [Image(channels=1), Mask(["dark", "bright"])]
    rng = np.random.default_rng(0)
    yy, xx = np.mgrid[0:64, 0:64]
    ious = []
    for draw in range(200):
        cx, cy = rng.uniform(22, 42, size=2)
        rx, ry = rng.uniform(10, 18, size=2)
        mask = (((xx - cx) / rx) ** 2 + ((yy - cy) / ry) ** 2 <= 1).astype(np.uint8)
        gray = np.where(mask == 1, 230, 20).astype(np.uint8)  # the mask is the image thresholded
        out_img, out_mask = proj.encode_sample(blocks, [gray, mask], Context.TRAINING, rng)
        a, b = out_img[0] >= 125, out_mask == 1
        iou = int((a & b).sum()) / int((a | b).sum())
        assert iou >= 0.95, f"draw {draw}: IoU {iou:.3f}"
        ious.append(iou)
    assert np.mean(ious) >= 0.97


# --- keypoint scaling ---------------------------------------------------------------------------

def test_keypoint_scaling_round_trip_and_edges():
    enc = KeypointScaling((16, 32))
    pts = np.array([[-0.5, -0.5], [31.5, 15.5], [40.0, -3.0]], np.float32)  # edges, and a point outside
    scaled = enc.encode(Keypoints(3), pts, Context.TRAINING)
    assert torch.allclose(scaled[:4], torch.tensor([-1.0, -1.0, 1.0, 1.0]))
    assert scaled[4] > 1 and scaled[5] < -1  # outside the image: kept, outside [-1, 1]
    np.testing.assert_allclose(enc.decode(None, scaled), pts, atol=1e-5)


def test_keypoint_task_encodes_targets_in_unit_square(disc_data):
    data, blocks = disc_data
    task = ImageKeypointRegression(blocks, size=(16, 16), augment=False)
    x, y = task.encode_sample((data[0][0], data[1][0]), "validation")
    assert x.shape == (1, 16, 16) and y.shape == (2,) and y.abs().max() <= 1
    np.testing.assert_allclose(task.decode_target(y), data[1][0], atol=1e-4)


# --- tasks: describe, mocks, JSON --------------------------------------------------------------

@pytest.mark.parametrize("make", [
    lambda: ImageSegmentation((Image(), Mask(["bg", "a", "b"])), size=(16, 16)),
    lambda: ImageKeypointRegression((Image(channels=1), Keypoints(2)), size=(16, 24)),
])
def test_task_describe_mocks_and_json(make):
    from hotstart.tasks import SupervisedTask

    task = make()
    text = task.describe(file=open("/dev/null", "w"))
    assert "encoded (training)" in text
    rng = np.random.default_rng(0)
    for _ in range(5):
        x, y = task.encode_sample(task.mock_sample(rng), "training", rng)
        assert x.shape[-2:] == task.size
        assert task.encoded_blocks()[1].check(y) or y.shape == task.size
    again = SupervisedTask.from_dict(json.loads(json.dumps(task.to_dict())))
    assert again == task


def test_wrong_blocks_are_refused():
    with pytest.raises(TypeError, match="Mask"):
        ImageSegmentation((Image(), Keypoints(1)))
    with pytest.raises(TypeError, match="Keypoints"):
        ImageKeypointRegression((Image(), Mask([0, 1])))


# --- models -------------------------------------------------------------------------------------

@pytest.mark.parametrize("backbone", [None, "resnet10t"])
def test_unet_output_has_input_size(backbone):
    task = ImageSegmentation((Image(channels=3), Mask(["bg", "a", "b"])), size=(24, 20))
    learner = tasklearner(task, None, backbone=backbone, seed=0, progress=False)
    out = learner.model(torch.zeros(2, 3, 24, 20))
    assert out.shape == (2, 3, 24, 20)
    assert learner.model_config["kind"] == "unet"


# --- training that learns, predict, save and load ---------------------------------------------

def test_segmentation_learns_predicts_and_round_trips(seg_data, tmp_path):
    from hotstart import load_learner

    data, blocks = seg_data
    task = ImageSegmentation(blocks, size=(16, 16), augment=False)
    learner = tasklearner(task, data, seed=0, batch_size=16, progress=False)
    before = learner.validate()
    learner.fit_one_cycle(8, 1e-2)
    after = learner.validate()
    assert set(after) == {"loss", "pixel_accuracy", "mean_iou"}
    assert set(learner.history[-1]) >= {"pixel_accuracy", "mean_iou"}
    # 320 training digits at 16x16, 160 steps (measured 0.84-0.90 / 0.43-0.63): well past "all
    # background" (pixel accuracy 0.69, mean IoU 0.06); the full run at 32x32 reaches the issue's
    # 0.95 / 0.6 (benchmarks/scripts/vision_tasks.py)
    assert after["pixel_accuracy"] >= 0.80 and after["mean_iou"] >= 0.35, after
    assert after["loss"] < before["loss"] - 1.0

    image = data[0][3].resize((40, 28))  # predict returns the mask at the size given
    mask, probs = learner.predict(image)
    assert mask.shape == (28, 40) and probs.shape == (11, 28, 40)
    assert torch.allclose(probs.sum(0), torch.ones(28, 40), atol=1e-5)
    assert (mask == probs.argmax(0).numpy()).all()

    learner.save(tmp_path / "seg")
    meta = json.loads((tmp_path / "seg" / "task.json").read_text())
    assert meta["model"]["kind"] == "unet"
    loaded = load_learner(tmp_path / "seg")
    mask2, probs2 = loaded.predict(image)
    assert (mask2 == mask).all() and torch.allclose(probs2, probs, atol=1e-6)


def test_keypoints_learn_predict_and_round_trip(disc_data, tmp_path):
    from hotstart import load_learner

    data, blocks = disc_data
    task = ImageKeypointRegression(blocks, size=(16, 16))
    learner = tasklearner(task, data, seed=0, batch_size=32, progress=False)
    before = learner.validate()["mean_distance"]
    learner.fit_one_cycle(6, 1e-2)
    after = learner.validate()
    assert set(after) == {"loss", "mean_distance"}
    # 320 training images at 16x16, 6 epochs: a guess at the centre is ~3.5 px off on average.
    # Seeds 0-7 end at 0.44-1.18 px after 6 epochs; after 4 they spread over 0.58-3.48 (measured),
    # so 4 epochs made the threshold a draw of the seed.
    assert after["mean_distance"] < 2.0 and after["mean_distance"] < before / 2, (before, after)

    big = data[0][5].resize((48, 32))  # 3x wider, 2x taller: the points come back in its pixels
    points, _ = learner.predict(big)
    small, _ = learner.predict(data[0][5])
    assert points.shape == (1, 2)
    np.testing.assert_allclose(points, (small + 0.5) * np.array([3.0, 2.0]) - 0.5, atol=2.0)
    assert np.linalg.norm(small - data[1][5]) < 3.0

    learner.save(tmp_path / "kp")
    loaded = load_learner(tmp_path / "kp")
    np.testing.assert_allclose(loaded.predict(big)[0], points, atol=1e-5)


def test_segmentation_fine_tune_lr_find_on_timm(seg_data):
    data, blocks = seg_data
    task = ImageSegmentation(blocks, size=(16, 16), augment=False)
    learner = tasklearner(task, data.subset(list(range(64))), backbone="resnet10t", seed=0, batch_size=16,
                          progress=False)
    result = learner.lr_find(num_it=5)
    assert np.isfinite(result.suggestion)
    learner.fine_tune(1, freeze_epochs=1)
    assert len(learner.history) == 2 and np.isfinite(learner.history[-1]["mean_iou"])


def test_test_loader_and_get_preds_items(disc_data):
    data, blocks = disc_data
    task = ImageKeypointRegression(blocks, size=(16, 16))
    learner = tasklearner(task, data.subset(list(range(40))), seed=0, batch_size=8, progress=False)
    items = [data[0][i] for i in range(10)]
    loader = learner.test_loader(items, batch_size=4)
    assert [b.shape[0] for b in loader] == [4, 4, 2]
    preds, targets = learner.get_preds(items=items)
    assert targets is None and preds.shape == (10, 2)
    for i in (0, 7):
        np.testing.assert_allclose(learner.predict(items[i])[1], preds[i], atol=1e-5)
    with pytest.raises(ValueError, match="item 1"):
        learner.get_preds(items=[items[0], 3.5])
    with pytest.raises(FileNotFoundError, match="item 1: .*not an image"):  # a str is a path, as for predict
        learner.get_preds(items=[items[0], "not an image"])


def test_builtin_warmup_workloads_for_the_new_tasks(tmp_path):
    from hotstart import warmup

    report = warmup.run(only=["segmentation-smallcnn-32-cpu", "keypoints-smallcnn-32-cpu"], cache_dir=tmp_path,
                        progress=False)
    assert [r.name for r in report.results] == ["segmentation-smallcnn-32-cpu", "keypoints-smallcnn-32-cpu"]
    assert all(r.status == "ok" for r in report.results), report.table()
    assert not report.side_effects
