"""What `hotstart train` chooses from a folder's pictures (hotstart/cli/small_folder.py), and that
those choices learn the shapes folder (issue 34: ``hotstart train FOLDER --epochs 10`` to >= 0.9)."""
import json
import sys

import numpy as np
import pytest
from PIL import Image

import prestart
from shapes_folder import make_shapes

from hotstart.cli.small_folder import (SMALL_BATCH, SMALL_FOLDER, STEPS_AN_EPOCH, colour_predicts_class,
                                       evenly_spaced, folder_choices, picture_side)


def _pictures(colours, size=(20, 20)):
    return [Image.new("RGB", size, tuple(int(v) for v in c)) for c in colours]


def test_evenly_spaced_spans_the_folder():
    assert evenly_spaced(5, 10) == [0, 1, 2, 3, 4]
    assert evenly_spaced(90, 4) == [0, 30, 59, 89]
    assert evenly_spaced(1, 16) == [0]


def test_picture_side_follows_the_pictures_within_16_and_128():
    assert picture_side(_pictures([(0, 0, 0)] * 5, size=(48, 48))) == 48
    assert picture_side(_pictures([(0, 0, 0)] * 3, size=(500, 375))) == 128
    assert picture_side(_pictures([(0, 0, 0)] * 3, size=(12, 30))) == 16
    assert picture_side(_pictures([(0, 0, 0)] * 3, size=(61, 70))) == 56  # a multiple of 8, rounded down
    # the median of pictures spread over the whole folder, not the first few
    mixed = _pictures([(0, 0, 0)] * 10, size=(20, 20)) + _pictures([(0, 0, 0)] * 30, size=(100, 100))
    assert picture_side(mixed) == 96


def test_colour_tells_the_class_only_where_it_does(tmp_path):
    rng = np.random.default_rng(0)
    red = _pictures(rng.normal([200, 30, 30], 20, (30, 3)).clip(0, 255))
    blue = _pictures(rng.normal([30, 30, 200], 20, (30, 3)).clip(0, 255))
    predicts, accuracy, chance = colour_predicts_class(red + blue, ["red"] * 30 + ["blue"] * 30)
    assert predicts and accuracy == 1.0 and chance == 0.5
    # the shapes folder: each picture's colours drawn at random, whatever its class
    from hotstart import datasets

    data, _ = datasets.ImageFolders(make_shapes(tmp_path / "photos"))
    predicts, accuracy, chance = colour_predicts_class(data[0], data[1])
    assert not predicts and chance == pytest.approx(1 / 3) and accuracy < 0.5
    assert not colour_predicts_class(red[:1], ["red"])[0]  # one picture: nothing to tell (no error)


def test_a_small_folder_gets_the_small_folder_recipe_and_what_was_given_stays():
    rng = np.random.default_rng(1)
    pictures = _pictures(rng.integers(0, 256, (40, 3)), size=(48, 48))
    targets = ["a", "b"] * 20
    given = dict(size_given=None, backbone_given=False, flip=True, rgb=True)
    chosen = folder_choices(pictures, targets, n_train=32, **given)
    assert chosen.size == (48, 48) and chosen.backbone == "smallcnn_maxpool"
    assert chosen.epoch_repeats == -(-STEPS_AN_EPOCH * SMALL_BATCH // 32)
    assert chosen.augment["rot90"] > 0 and chosen.augment["flip"] == 0.5 and chosen.augment["scale"] == (1.0, 1.0)
    assert chosen.augment["channel_shuffle"] > 0 and chosen.augment["invert"] > 0  # random colours
    assert any("colours shuffled" in r for r in chosen.reasons)
    # what the command line gave is used as given
    kept = folder_choices(pictures, targets, n_train=32, **{**given, "size_given": (48, 48),
                                                            "flip": False})
    assert kept.size is None
    assert kept.augment["flip"] == 0.0 and kept.augment["rot90"] == 0.0  # --no-flip: orientation matters
    assert any("no flips or quarter turns (--no-flip)" in r for r in kept.reasons)
    # quarter turns need a square input: a --size that is not square keeps the flips only
    oblong = folder_choices(pictures, targets, n_train=32, **{**given, "size_given": (48, 64)})
    assert oblong.augment["rot90"] == 0.0 and oblong.augment["flip"] == 0.5
    # pretrained weights keep the usual input size
    assert folder_choices(pictures, targets, n_train=32, **{**given, "backbone_given": True},
                          pretrained=True).size is None
    assert folder_choices(pictures, targets, n_train=32, **{**given, "backbone_given": True}).backbone is None
    # grayscale pictures: no colour to augment away
    assert "channel_shuffle" not in folder_choices(pictures, targets, n_train=32, **{**given, "rgb": False}).augment
    # a large folder: only the size follows its pictures
    big = folder_choices(pictures, targets, n_train=SMALL_FOLDER + 1, **given)
    assert big.size == (48, 48) and big.backbone is None and big.augment is None and big.epoch_repeats == 1


@prestart.job("cli:shapes-folder")
def _shapes_cli(folder):
    photos = make_shapes(folder / "photos")  # 30 JPEGs a class at 48x48, seed 0
    # one torch thread, as measured (small_folder.py's table), leaving the other core to the tests
    return prestart.Job([sys.executable, "-m", "hotstart", "train", str(photos), "--epochs", "10",
                         "--out", str(folder / "run"), "--no-progress", "--no-server"],
                        env={"OMP_NUM_THREADS": "1"}, timeout=600)


@pytest.mark.prestart("cli:shapes-folder")
def test_the_cli_defaults_learn_a_small_folder_of_shapes():
    run = prestart.result("cli:shapes-folder")
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert "backbone smallcnn_maxpool" in run.stdout and "colours shuffled and inverted" in run.stdout
    assert "size 48x48" in run.stdout
    history = (run.folder / "run" / "history.csv").read_text().splitlines()
    header, last = history[0].split(","), history[-1].split(",")
    assert len(history) == 11  # 10 epochs
    accuracy = float(last[header.index("accuracy")])
    assert accuracy >= 0.9, json.dumps({"history": history, "stdout": run.stdout[-2000:]})


def test_the_training_count_is_the_learners(tmp_path):
    """The printed passes and pictures an epoch come from the split the learner will make: a folder
    with a test split held out, and 20% of the rest (rounded as `split_random` rounds) validating."""
    from hotstart.cli.train_args import add_parser
    from hotstart.cli.train_build import build_learner

    import argparse

    root = tmp_path / "folder"
    make_shapes(root / "train", n_per_class=23)  # 69 pictures: 20% is 13.8, 14 validate, 55 train
    make_shapes(root / "test", n_per_class=2, seed=1)
    parser = argparse.ArgumentParser()
    add_parser(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["train", str(root), "--quiet", "--no-server"])
    learner = build_learner(args)
    n_train = len(learner.train_loader.dataset.inputs)
    assert n_train == 55
    assert len(learner.train_loader.dataset) == n_train * -(-STEPS_AN_EPOCH * SMALL_BATCH // n_train)
