"""Issue 9, items 6 and 7 and the sample index in errors: split folders, a held-out test split,
targets checked without decoding inputs, errors naming a sample by its index in the dataset."""
import numpy as np
import pytest
from PIL import Image as PILImage

from hotstart import ImageClassificationSingle, tasklearner
from hotstart.blocks import BlockValueError, Image, Label
from hotstart.datasets import (Data, DatasetError, ImageFolders, Subset, source_index, split_random,
                               split_train_valid)


def _img(path, value=0):
    path.parent.mkdir(parents=True, exist_ok=True)
    PILImage.new("L", (6, 6), value).save(path)


def _layout(root, spec):
    """spec: {"train/a": 3, ...} -> that many images per folder."""
    for folder, n in spec.items():
        for k in range(n):
            _img(root / folder / f"{k}.png", value=10 * k)
    return root


def _used_indices(loader):
    ds = loader.dataset
    return {source_index(ds.inputs, i) for i in range(len(ds))}


def _task(label):
    return ImageClassificationSingle((Image(), label), size=(8, 8), augment={"flip": 0.0})


# --- item 6: split folders ------------------------------------------------------------------

def test_train_and_test_without_valid(tmp_path):
    """Before: classes "test" and "train". Now: splits, and the classes are the class folders."""
    root = _layout(tmp_path, {"train/cat": 6, "train/dog": 6, "test/cat": 2, "test/dog": 2})
    data, (_, label) = ImageFolders(root)
    assert label.classes == ["cat", "dog"]
    assert data.splits == {"train": list(range(12)), "test": [12, 13, 14, 15]}
    test = data.split("test")
    assert list(test.targets) == ["cat", "cat", "dog", "dog"]
    assert all(str(test.inputs.container.container[i]).find("/test/") > 0 for i in test.inputs.indices)


def test_tasklearner_never_trains_or_validates_on_test(tmp_path):
    root = _layout(tmp_path, {"train/cat": 6, "train/dog": 6, "test/cat": 2, "test/dog": 2})
    data, (_, label) = ImageFolders(root)
    learner = tasklearner(_task(label), data, batch_size=4, seed=0, progress=False, valid_pct=0.25)
    train, valid = _used_indices(learner.train_loader), _used_indices(learner.valid_loader)
    assert train | valid == set(range(12)) and not train & valid  # valid cut from train only
    assert len(valid) == 3
    assert not (train | valid) & set(data.splits["test"])


def test_valid_split_names_are_recognised(tmp_path):
    for name in ("valid", "validation", "val", "Val"):
        root = _layout(tmp_path / name, {"Train/a": 2, "Train/b": 2, f"{name}/a": 1, f"{name}/b": 1})
        data, (_, label) = ImageFolders(root)
        assert label.classes == ["a", "b"]
        assert data.splits == {"train": [0, 1, 2, 3], "valid": [4, 5]}


def test_train_valid_test_with_tasklearner(tmp_path):
    root = _layout(tmp_path, {"train/a": 3, "train/b": 3, "valid/a": 1, "valid/b": 1, "test/a": 1, "test/b": 1})
    data, (_, label) = ImageFolders(root)
    assert data.splits == {"train": list(range(6)), "valid": [6, 7], "test": [8, 9]}
    learner = tasklearner(_task(label), data, batch_size=2, seed=0, progress=False)
    assert _used_indices(learner.train_loader) == set(range(6))
    assert _used_indices(learner.valid_loader) == {6, 7}


@pytest.mark.parametrize("spec, found", [
    ({"train/a": 1, "test/a": 1, "cat/x": 1}, r"split folders \['test', 'train'\] and other folders \['cat'\]"),
    ({"train/a": 1, "valid/a": 1, "val/a": 1}, r"several folders for one split \{'valid': \['val', 'valid'\]\}"),
    ({"test/a": 1, "valid/a": 1}, r"no training split: found split folders \['test', 'valid'\]"),
])
def test_ambiguous_layouts_say_what_was_found(tmp_path, spec, found):
    with pytest.raises(DatasetError, match=found):
        ImageFolders(_layout(tmp_path, spec))


def test_test_class_unknown_to_training_is_an_error(tmp_path):
    root = _layout(tmp_path, {"train/a": 1, "train/b": 1, "test/c": 1})
    with pytest.raises(DatasetError, match=r"test split .* \['c'\]"):
        ImageFolders(root)


def test_classes_named_like_splits_with_train_none(tmp_path):
    root = _layout(tmp_path, {"train/a": 1, "test/a": 1})
    data, (_, label) = ImageFolders(root, train=None)
    assert label.classes == ["test", "train"] and data.splits == {}


def test_split_train_valid_rules():
    data = Data(list(range(10)), ["a", "b"] * 5, {"test": [8, 9]})
    train, valid = split_train_valid(data, 0.25, seed=1)
    assert sorted(list(train.inputs) + list(valid.inputs)) == list(range(8))
    tr, va = split_random(8, 0.25, 1)
    assert list(train.inputs) == tr and list(valid.inputs) == va
    other = Data(list(range(4)), ["a"] * 4)
    train, valid = split_train_valid(data, validdata=other)
    assert list(train.inputs) == list(range(8)) and valid is other
    plain = Data(list(range(4)), ["a"] * 4)
    assert split_train_valid(plain, validdata=other)[0] is plain  # no splits: all of it, as before


# --- item 7: targets are checked without reading inputs --------------------------------------

class _CountingDataset:
    """A map-style dataset (x, y) that counts how often a sample is read."""

    def __init__(self, n, bad_target_at=None):
        self.n, self.reads, self.bad = n, 0, bad_target_at
        rng = np.random.default_rng(0)
        self.images = [PILImage.fromarray(rng.integers(0, 256, (8, 8), dtype=np.uint8)) for _ in range(n)]

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        self.reads += 1
        return self.images[i], ("zebra" if i == self.bad else "ab"[i % 2])


def test_building_a_learner_reads_no_sample_of_a_map_style_dataset():
    """Before: every sample was read (images decoded) to check its target."""
    ds = _CountingDataset(40)
    tasklearner(_task(Label(["a", "b"])), ds, batch_size=8, seed=0, progress=False)
    assert ds.reads == 0


def test_bad_target_of_a_map_style_dataset_names_its_index():
    ds = _CountingDataset(40, bad_target_at=13)
    learner = tasklearner(_task(Label(["a", "b"])), ds, batch_size=8, seed=0, progress=False)
    loader = learner.train_loader if 13 in _used_indices(learner.train_loader) else learner.valid_loader
    pos = next(p for p in range(len(loader.dataset)) if source_index(loader.dataset.inputs, p) == 13)
    with pytest.raises(BlockValueError, match=r"sample 13: label 'zebra'"):
        loader.dataset[pos]


def test_targets_of_plain_containers_are_still_checked_upfront():
    data = Data([np.zeros((8, 8), np.uint8)] * 4, ["a", "b", "a", "zebra"])
    with pytest.raises(BlockValueError, match="target of sample 3"):
        tasklearner(_task(Label(["a", "b"])), data, batch_size=2, seed=0, progress=False)


# --- item 23: errors name the sample by its index in the dataset, not in its split -----------

def test_errors_name_the_index_in_the_dataset_not_the_split():
    from hotstart.learner.data import TaskDataset

    inputs = [np.zeros((8, 8), np.uint8)] * 10
    inputs[7] = np.full((8, 8), 300, np.int64)  # breaks the value rules
    data = Data(inputs, ["a", "b"] * 5)
    subset = data.subset([5, 6, 7]).subset([1, 2])  # a split of a split: position 1 is sample 7
    ds = TaskDataset(_task(Label(["a", "b"])), subset, "validation")
    assert isinstance(ds.inputs, Subset)
    with pytest.raises(BlockValueError, match=r"^sample 7: "):
        ds[1]


def test_split_indices_are_checked():
    with pytest.raises(ValueError, match=r"split 'test' holds index 4, outside 0\.\.3"):
        Data(list(range(4)), ["a"] * 4, {"train": [0, 1], "test": [4]})
    overlapping = Data(list(range(6)), ["a"] * 6, {"train": [0, 1, 2, 3], "test": [3, 4]})
    with pytest.raises(ValueError, match=r"'train' and 'test' share 1 sample\(s\), e.g. index 3"):
        split_train_valid(overlapping)
