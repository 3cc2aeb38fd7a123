"""Encodings: contexts, explicit randomness, joint spatial transforms, preprocessing, label codes."""
import json
import random

import numpy as np
import pytest
import torch
import torchvision.transforms.v2.functional as F
from PIL import Image as PILImage

from hotstart.blocks import (ClassIndex, Continuous, Image, ImageTensor, Keypoints, Label, LabelMulti, Mask,
                             OneHotTensor)
from hotstart.encodings import (IMAGENET_MEAN, IMAGENET_STD, Context, Encoding, ImagePreprocessing, MultiHot,
                                OneHot, ProjectiveTransforms)
from hotstart.errors import UsageError

FLIP_ONLY = {"scale": (1, 1), "ratio": (1, 1), "max_rotate": 0, "max_lighting": 0, "flip": 1.0}
SEG = [Image(channels=1), Mask(["dark", "bright"])]


def _half_white(h=32, w=32):
    """Left half white, right half black, and the mask that marks the white half as class 1."""
    arr = np.zeros((h, w), np.uint8)
    arr[:, : w // 2] = 255
    return PILImage.fromarray(arr, "L"), (arr > 0).astype(np.int64)


def _random_image(rng, h=24, w=24, mode="RGB"):
    c = 3 if mode == "RGB" else 1
    arr = rng.integers(0, 256, size=(h, w, c), dtype=np.uint8)
    return PILImage.fromarray(arr if c == 3 else arr[..., 0], mode)


# --- contexts ---------------------------------------------------------------------------

def test_context_of():
    assert Context.of("training") is Context.TRAINING
    assert Context.of(Context.VALIDATION) is Context.VALIDATION
    assert Context.of("inference") is Context.INFERENCE
    with pytest.raises(ValueError, match="context must be one of .*'training'.*got 'train'"):
        Context.of("train")
    with pytest.raises(ValueError):
        ProjectiveTransforms((8, 8)).encode_sample([Image()], [PILImage.new("L", (8, 8))], "testing")


# --- ProjectiveTransforms: shapes, determinism, randomness ----------------------------------

def test_projective_output_shapes_and_dtypes():
    image, mask = _half_white(40, 30)
    kps = np.array([[1.0, 2.0], [10.0, 30.0], [5.5, 6.5]], np.float32)
    pt = ProjectiveTransforms((16, 20))
    blocks = [Image(channels=3), Mask(["a", "b"]), Keypoints(3)]
    for ctx, rng in (("training", np.random.default_rng(0)), ("validation", None), ("inference", None)):
        x, m, k = pt.encode_sample(blocks, [image, mask.astype(np.uint8), kps], ctx, rng)
        assert type(x) is torch.Tensor and x.shape == (3, 16, 20) and x.dtype == torch.uint8
        assert type(m) is torch.Tensor and m.shape == (16, 20) and m.dtype == torch.int64
        assert type(k) is torch.Tensor and k.shape == (3, 2) and k.dtype == torch.float32
        assert set(m.unique().tolist()) <= {0, 1}


def test_projective_encoded_blocks():
    pt = ProjectiveTransforms(24)
    assert pt.size == (24, 24)
    assert pt.encoded_block(Image(channels=1)) == Image(channels=1, size=(24, 24))
    assert pt.encoded_block(Image(size=(5, 5))) == Image(size=(24, 24))
    assert pt.encoded_block(Mask(["a"])) == Mask(["a"]) and pt.encoded_block(Keypoints(2)) == Keypoints(2)
    assert pt.encoded_block(Label(["a"])) is None and pt.encoded_block(Continuous(2)) is None


def test_projective_leaves_other_blocks_alone():
    pt = ProjectiveTransforms((8, 8))
    out = pt.encode_sample([Image(), Label(["a", "b"])], [PILImage.new("RGB", (10, 12)), "b"], "validation")
    assert out[1] == "b" and out[0].shape == (3, 8, 8)
    assert pt.encode_sample([Label(["a"])], ["a"], "training") == ["a"]  # nothing spatial: no rng needed


@pytest.mark.parametrize("ctx", ["validation", "inference"])
def test_validation_and_inference_are_a_plain_resize(ctx):
    rng = np.random.default_rng(3)
    for mode, size in (("RGB", (16, 16)), ("L", (10, 14))):
        im = _random_image(rng, 23, 31, mode)
        pt = ProjectiveTransforms(size)  # augment=True, but not outside training
        a = pt.encode(Image(), im, ctx)  # no rng needed
        b = pt.encode(Image(), im, ctx, np.random.default_rng(99))
        expected = F.resize(F.pil_to_tensor(im), list(size), antialias=True)
        assert torch.equal(a, expected) and torch.equal(b, expected)


def test_augment_false_resizes_in_training_without_rng():
    im = _random_image(np.random.default_rng(0), 20, 20)
    pt = ProjectiveTransforms((8, 8), augment=False)
    assert torch.equal(pt.encode(Image(), im, "training"), F.resize(F.pil_to_tensor(im), [8, 8], antialias=True))


def test_training_needs_an_rng():
    with pytest.raises(ValueError, match="rng"):
        ProjectiveTransforms((8, 8)).encode(Image(), PILImage.new("L", (8, 8)), "training")


def test_same_seed_same_augmentation_other_seeds_differ():
    image, mask = _half_white(32, 32)
    pt = ProjectiveTransforms((16, 16))
    blocks = SEG + [Keypoints(1)]
    kp = np.array([[4.0, 4.0]], np.float32)

    def run(seed):
        return pt.encode_sample(blocks, [image, mask, kp], Context.TRAINING, np.random.default_rng(seed))

    for seed in (0, 1, 2):
        a, b = run(seed), run(seed)
        assert all(torch.equal(x, y) for x, y in zip(a, b))
    outs = [run(s) for s in range(6)]
    distinct_images = {tuple(o[0].flatten().tolist()) for o in outs}
    distinct_kps = {tuple(o[2].flatten().tolist()) for o in outs}
    assert len(distinct_images) == 6 and len(distinct_kps) == 6
    # and an augmented output differs from the deterministic resize
    plain = pt.encode_sample(blocks, [image, mask, kp], Context.VALIDATION)
    assert all(not torch.equal(o[0], plain[0]) for o in outs)


def test_mismatched_image_and_mask_sizes():
    image, _ = _half_white(32, 32)
    with pytest.raises(ValueError, match=r"differ in size: \(32, 32\) vs \(30, 32\)"):
        ProjectiveTransforms((8, 8)).encode_sample(SEG, [image, np.zeros((30, 32), np.int64)], "validation")


def test_keypoints_need_a_canvas_and_valid_values():
    pt = ProjectiveTransforms((8, 8))
    with pytest.raises(ValueError, match="canvas"):
        pt.encode_sample([Keypoints(1)], [np.zeros((1, 2), np.float32)], "validation")
    with pytest.raises(ValueError, match=r"\(2, 2\)"):
        pt.encode_sample([Image(), Keypoints(2)], [PILImage.new("L", (8, 8)), np.zeros((3, 2))], "validation")
    with pytest.raises(ValueError, match="mask values span 5..5"):
        pt.encode_sample(SEG, [PILImage.new("L", (8, 8)), np.full((8, 8), 5)], "validation")


def test_bad_sizes_and_options():
    for size in ((0, 8), (8, -1), (8, 8, 8), (), 0):
        with pytest.raises(ValueError, match="size"):
            ProjectiveTransforms(size)
    with pytest.raises(ValueError, match="unknown augment option.*'rotate'"):
        ProjectiveTransforms((8, 8), augment={"rotate": 10})
    with pytest.raises(TypeError, match="augment"):
        ProjectiveTransforms((8, 8), augment="yes")


# --- ProjectiveTransforms: image, mask and keypoints move together ---------------------------

def test_flip_only_mirrors_exactly():
    image, mask = _half_white(32, 32)
    kps = np.array([[3.0, 5.0], [10.0, 20.0], [0.0, 31.0], [15.0, 0.0]], np.float32)
    pt = ProjectiveTransforms((32, 32), augment=FLIP_ONLY)
    x, m, k = pt.encode_sample(SEG + [Keypoints(4)], [image, mask, kps], "training", np.random.default_rng(0))
    # the image and the mask are mirrored pixel for pixel
    assert torch.equal(x[0], torch.from_numpy(np.array(image)).flip(-1))
    assert torch.equal(m, torch.from_numpy(mask).flip(-1))
    # torchvision 0.29 maps keypoints at pixel indices: x' = W - 1 - x, y unchanged
    W = 32
    expected = np.stack([W - 1 - kps[:, 0], kps[:, 1]], axis=1)
    np.testing.assert_array_equal(k.numpy(), expected)
    # a keypoint on pixel (x, y) is still on the pixel with the same value
    for (x0, y0), (x1, y1) in zip(kps, k.numpy()):
        assert int(x[0, int(y1), int(x1)]) == np.asarray(image)[int(y0), int(x0)]


def test_colour_options_shuffle_channels_and_invert_the_image_only():
    rng = np.random.default_rng(3)
    image = _random_image(rng, 16, 16)
    pixels = torch.from_numpy(np.array(image)).permute(2, 0, 1)
    still = {"scale": (1, 1), "ratio": (1, 1), "max_rotate": 0, "max_lighting": 0, "flip": 0.0}
    mask = np.zeros((16, 16), np.int64)
    seen_orders, inverted = set(), 0
    for seed in range(40):
        x, m = ProjectiveTransforms((16, 16), augment={**still, "channel_shuffle": 1.0, "invert": 0.5}).encode_sample(
            [Image(channels=3), Mask(["a", "b"])], [image, mask], "training", np.random.default_rng(seed))
        assert torch.equal(m, torch.from_numpy(mask))  # a mask is not coloured
        flipped = bool(torch.equal(255 - x, pixels[[int(c) for c in _order(x, pixels)]]))
        plain = x if not flipped else 255 - x
        order = _order(plain, pixels)
        assert torch.equal(plain, pixels[list(order)])  # the same pixels, channels reordered
        seen_orders.add(order)
        inverted += flipped
    assert len(seen_orders) == 6 and 10 < inverted < 30  # every order; about half inverted
    # off by default: the default augmentation draws nothing more, so its images are unchanged
    default = ProjectiveTransforms((16, 16)).encode_sample([Image(channels=3)], [image], "training",
                                                            np.random.default_rng(0))[0]
    off = ProjectiveTransforms((16, 16), augment={"channel_shuffle": 0.0, "invert": 0.0}).encode_sample(
        [Image(channels=3)], [image], "training", np.random.default_rng(0))[0]
    assert torch.equal(default, off)
    gray = ProjectiveTransforms((16, 16), augment={**still, "channel_shuffle": 1.0, "invert": 1.0}).encode_sample(
        [Image(channels=1)], [image.convert("L")], "training", np.random.default_rng(0))[0]
    assert torch.equal(gray, 255 - torch.from_numpy(np.array(image.convert("L")))[None])


def test_rot90_turns_image_mask_and_keypoints_together_exactly():
    rng = np.random.default_rng(5)
    image = _random_image(rng, 12, 12)
    pixels = torch.from_numpy(np.array(image)).permute(2, 0, 1)
    mask = rng.integers(0, 2, (12, 12))
    points = np.array([[2.0, 3.0], [9.0, 1.0]])  # pixel centres (x, y)
    still = {"scale": (1, 1), "ratio": (1, 1), "max_rotate": 0, "max_lighting": 0, "flip": 0.0}
    blocks = [Image(channels=3), Mask(["a", "b"]), Keypoints(2)]
    turns_seen = []
    for seed in range(30):
        x, m, k = ProjectiveTransforms((12, 12), augment={**still, "rot90": 0.75}).encode_sample(
            blocks, [image, mask, points], "training", np.random.default_rng(seed))
        turns = next(t for t in range(4) if torch.equal(x, pixels.rot90(t, (-2, -1))))  # an exact turn
        turns_seen.append(turns)
        assert torch.equal(m, torch.from_numpy(mask).rot90(turns, (-2, -1)))  # the mask turned with it
        for (x0, y0), (x1, y1) in zip(points, k.numpy()):  # each point still on its own pixel's value
            assert np.allclose([x1, y1], np.round([x1, y1]), atol=1e-4)
            assert torch.equal(x[:, int(round(y1)), int(round(x1))], pixels[:, int(y0), int(x0)])
    assert set(turns_seen) == {0, 1, 2, 3} and 3 <= turns_seen.count(0) <= 15  # about a quarter unturned
    # off by default, so the default augmentation's images are unchanged; a square size is needed
    assert torch.equal(ProjectiveTransforms((12, 12)).encode_sample([Image(channels=3)], [image], "training",
                                                                     np.random.default_rng(0))[0],
                       ProjectiveTransforms((12, 12), augment={"rot90": 0.0}).encode_sample(
                           [Image(channels=3)], [image], "training", np.random.default_rng(0))[0])
    with pytest.raises(UsageError, match="rot90.*square.*size=\\[12, 16\\]"):
        ProjectiveTransforms((12, 16), augment={"rot90": 0.5})


def _order(x, pixels) -> tuple:
    """The channel order that maps `pixels` to `x` (or to its inverse), matched channel by channel."""
    return tuple(next(j for j in range(3) if torch.equal(x[i], pixels[j]) or torch.equal(255 - x[i], pixels[j]))
                 for i in range(3))


@pytest.mark.parametrize("max_rotate", [0.0, 25.0])
def test_mask_stays_aligned_with_image_under_augmentation(max_rotate):
    image, mask = _half_white(48, 48)
    pt = ProjectiveTransforms((24, 24), augment={"max_rotate": max_rotate, "flip": 0.5, "scale": (0.5, 1.0)})
    flips = 0
    for seed in range(12):
        x, m = pt.encode_sample(SEG, [image, mask], "training", np.random.default_rng(seed))
        bright = x[0] > x[0].float().mean()  # lighting changes levels but keeps the order
        agreement = (bright == (m == 1)).float().mean().item()
        assert agreement > 0.9, (seed, agreement)
        assert 0 < int(m.sum()) < m.numel()
        flips += int(m[:, :4].float().mean() < m[:, -4:].float().mean())  # white half moved right
    assert 0 < flips < 12  # flip probability 0.5 over 12 seeds


def test_keypoints_follow_the_image_and_mask():
    # a black 64x64 canvas with small white squares; a keypoint at the centre of each
    arr = np.zeros((64, 64), np.uint8)
    centres = [(12, 12), (50, 14), (32, 32), (16, 48), (46, 46)]  # (x, y)
    for cx, cy in centres:
        arr[cy - 3: cy + 4, cx - 3: cx + 4] = 255
    image, mask = PILImage.fromarray(arr, "L"), (arr > 0).astype(np.int64)
    kps = np.array(centres, np.float32)
    pt = ProjectiveTransforms((32, 32), augment={"max_rotate": 20.0, "flip": 0.5, "scale": (0.6, 1.0)})
    checked = 0
    for seed in range(10):
        x, m, k = pt.encode_sample(SEG + [Keypoints(len(centres))], [image, mask, kps], "training",
                                   np.random.default_rng(seed))
        bright = (x[0] > x[0].float().mean()).numpy()
        for px, py in k.numpy():
            ix, iy = int(round(px)), int(round(py))
            if not (1 <= ix < 31 and 1 <= iy < 31):
                continue  # cropped away
            checked += 1
            window = (slice(iy - 1, iy + 2), slice(ix - 1, ix + 2))
            assert bright[window].any(), (seed, px, py)
            assert (m.numpy()[window] == 1).any(), (seed, px, py)
    assert checked >= 25


def test_keypoints_in_validation_scale_with_the_resize():
    image, _ = _half_white(20, 40)
    kps = np.array([[10.0, 4.0], [30.0, 18.0]], np.float32)
    _, k = ProjectiveTransforms((10, 10)).encode_sample([Image(), Keypoints(2)], [image, kps], "validation")
    # pixel (i, j) is centred at (i, j): a resize by r maps x to (x + 0.5) * r - 0.5
    np.testing.assert_allclose(k.numpy(), (kps + 0.5) * np.array([10 / 40, 10 / 20], np.float32) - 0.5, atol=1e-5)


# --- explicit randomness ------------------------------------------------------------------

def test_encodings_never_touch_global_rngs():
    torch_state, np_state, py_state = torch.get_rng_state(), np.random.get_state(), random.getstate()
    rng = np.random.default_rng(0)
    image, mask = _half_white(32, 32)
    pt = ProjectiveTransforms((16, 16))
    pre = ImagePreprocessing()
    for _ in range(20):
        x, m, k = pt.encode_sample(SEG + [Keypoints(2)], [image, mask, Keypoints(2).mock(rng)], "training", rng)
        pre.decode(ImageTensor(3, (16, 16)), pre.encode(Image(), x, "training", rng))
        OneHot().encode(Label(["a", "b"]), "a", "training", rng)
        MultiHot().encode(LabelMulti(["a", "b"]), ["b"], "training", rng)
    assert torch.equal(torch.get_rng_state(), torch_state)
    assert random.getstate() == py_state
    after = np.random.get_state()
    assert after[0] == np_state[0] and np.array_equal(after[1], np_state[1]) and after[2:] == np_state[2:]


# --- ImagePreprocessing -------------------------------------------------------------------

def test_preprocessing_normalizes_a_constant_image():
    pre = ImagePreprocessing()
    assert pre.mean == IMAGENET_MEAN and pre.std == IMAGENET_STD and pre.channels == 3
    x = pre.encode(Image(), PILImage.new("RGB", (5, 4), (51, 102, 255)), "validation")
    assert x.dtype == torch.float32 and x.shape == (3, 4, 5)
    for c, v in enumerate((51, 102, 255)):
        expected = (v / 255 - IMAGENET_MEAN[c]) / IMAGENET_STD[c]
        torch.testing.assert_close(x[c], torch.full((4, 5), expected), atol=1e-5, rtol=0)
    custom = ImagePreprocessing(mean=(0.5, 0.5, 0.5), std=(0.5, 0.5, 0.5))
    y = custom.encode(Image(), torch.full((3, 2, 2), 255, dtype=torch.uint8), "training")
    torch.testing.assert_close(y, torch.ones(3, 2, 2))


def test_preprocessing_adapts_channels():
    gray = PILImage.new("L", (3, 2), 102)
    x = ImagePreprocessing(channels=3).encode(Image(), gray, "inference")
    assert x.shape == (3, 2, 3)
    for c in range(3):
        torch.testing.assert_close(x[c], torch.full((2, 3), (0.4 - IMAGENET_MEAN[c]) / IMAGENET_STD[c]))
    rgb = torch.tensor([200, 100, 50], dtype=torch.uint8).view(3, 1, 1).expand(3, 2, 2)
    y = ImagePreprocessing(channels=1).encode(Image(), rgb, "inference")  # default gray stats 0.5, 0.25
    lum = (0.299 * 200 + 0.587 * 100 + 0.114 * 50) / 255
    assert y.shape == (1, 2, 2)
    torch.testing.assert_close(y, torch.full((1, 2, 2), (lum - 0.5) / 0.25))


def test_preprocessing_decode_round_trip():
    rng = np.random.default_rng(0)
    for channels, mode in ((3, "RGB"), (1, "L")):
        im = _random_image(rng, 7, 9, mode)
        pre = ImagePreprocessing(channels=channels)
        x = pre.encode(Image(channels=channels), im, "validation")
        back = pre.decode(pre.encoded_block(Image(channels=channels, size=(7, 9))), x)
        assert isinstance(back, PILImage.Image) and back.mode == mode and back.size == im.size
        diff = np.abs(np.asarray(back, np.int16) - np.asarray(im, np.int16))
        assert diff.max() <= 1


def test_preprocessing_encoded_block_and_bad_arguments():
    pre = ImagePreprocessing(channels=1)
    assert pre.encoded_block(Image(channels=3, size=(4, 6))) == ImageTensor(1, (4, 6))
    assert pre.encoded_block(Label(["a"])) is None
    for kw in ({"channels": 2}, {"mean": (0.5,), "channels": 3}, {"std": (0.0,), "channels": 1}):
        with pytest.raises(ValueError):
            ImagePreprocessing(**kw)


# --- label encodings ------------------------------------------------------------------------

def test_onehot_index_and_vector():
    label = Label(["cat", "dog", "bird"])
    enc = OneHot()
    assert enc.encoded_block(label) == ClassIndex(label.classes)
    y = enc.encode(label, "dog", "training")
    assert y.dtype == torch.int64 and y.ndim == 0 and int(y) == 1
    assert enc.decode(ClassIndex(label.classes), y) == "dog"
    assert enc.decode(OneHotTensor(label.classes), torch.tensor([0.1, -2.0, 3.0])) == "bird"
    vec = OneHot(as_index=False)
    assert vec.encoded_block(label) == OneHotTensor(label.classes)
    v = vec.encode(label, "bird", "validation")
    assert v.dtype == torch.float32 and v.tolist() == [0.0, 0.0, 1.0]
    assert vec.decode(OneHotTensor(label.classes), v) == "bird"
    assert enc.encoded_block(LabelMulti(["a"])) is None
    with pytest.raises(ValueError, match="'cow'"):
        enc.encode(label, "cow", "training")


def test_multihot():
    block = LabelMulti(["a", "b", "c"])
    enc = MultiHot(threshold=0.6)
    assert enc.encoded_block(block) == OneHotTensor(["a", "b", "c"]) and enc.encoded_block(Label(["a"])) is None
    y = enc.encode(block, ["c", "a"], "training")
    assert y.dtype == torch.float32 and y.tolist() == [1.0, 0.0, 1.0]
    assert enc.encode(block, [], "training").tolist() == [0.0, 0.0, 0.0]
    assert enc.decode(OneHotTensor(block.classes), torch.tensor([0.6, 0.59, 0.9])) == ["a", "c"]
    with pytest.raises(ValueError, match=r"\['z'\]"):
        enc.encode(block, ["a", "z"], "training")


# --- JSON ---------------------------------------------------------------------------------

@pytest.mark.parametrize("enc", [
    ProjectiveTransforms((16, 24)), ProjectiveTransforms(8, augment=False),
    ProjectiveTransforms((8, 8), augment=FLIP_ONLY), ImagePreprocessing(), ImagePreprocessing(channels=1),
    ImagePreprocessing(mean=(0.1, 0.2, 0.3), std=(1, 2, 3)), OneHot(), OneHot(as_index=False), MultiHot(0.3),
], ids=repr)
def test_encoding_json_round_trip(enc):
    d = json.loads(json.dumps(enc.to_dict()))
    restored = Encoding.from_dict(d)
    assert type(restored) is type(enc) and restored == enc and repr(restored) == repr(enc)


def test_projective_round_trip_augments_identically():
    pt = ProjectiveTransforms((12, 12), augment={"scale": (0.5, 0.9), "max_rotate": 30.0})
    restored = Encoding.from_dict(json.loads(json.dumps(pt.to_dict())))
    im = _random_image(np.random.default_rng(1), 20, 20)
    a = pt.encode(Image(), im, "training", np.random.default_rng(5))
    b = restored.encode(Image(), im, "training", np.random.default_rng(5))
    assert torch.equal(a, b)


def test_encoding_from_dict_unknown():
    with pytest.raises(ValueError, match="unknown encoding"):
        Encoding.from_dict({"kind": "Nope"})
