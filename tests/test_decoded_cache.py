"""cache="memory" (hotstart/datasets/decoded_cache.py): a folder's images decoded once into memory.
The samples are those decoding every epoch gives (files no larger than the task's size) or those of
cache="resized" (larger files), augmentation included; the memory budget holds whatever the
images' sizes; a file changed after it was read is not read again; a file that cannot be read is
reported when its sample is encoded, as without the cache; workers read the parent's images."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from PIL import Image

from hotstart import ImageClassificationSingle, datasets, tasklearner
from hotstart.datasets.decoded_cache import DecodedImages, MemoryBudget, memory_budget, memory_caches
from hotstart.errors import UsageError
from hotstart.learner.data import TaskDataset, make_loader


def _folder(root, size, n=6, ext="jpg", seed=0):
    """`n` RGB images a class, classes "a" and "b", of `size` (W, H): smooth gradients with noise
    (JPEG-like content, so decoding is not trivial)."""
    rng = np.random.default_rng(seed)
    for cls in ("a", "b"):
        (root / cls).mkdir(parents=True, exist_ok=True)
        for i in range(n):
            w, h = size
            base = np.linspace(0, 200, w)[None, :, None] + rng.uniform(0, 55, (h, w, 3))
            Image.fromarray(base.astype(np.uint8)).save(root / cls / f"{i}.{ext}")
    return root


def _data(root, size=(16, 16)):
    data, blocks = datasets.ImageFolders(root)
    return data, ImageClassificationSingle(blocks, size=size)  # default augmentation: crop, flip, rotate, light


def _datasets(task, data, context, decoded):
    return TaskDataset(task, data, context, seed=3), TaskDataset(task, data, context, seed=3, decoded=decoded)


def _same_samples(plain, cached, epochs=(0, 1)):
    for epoch in epochs:
        plain.set_epoch(epoch)
        cached.set_epoch(epoch)
        for i in range(len(plain)):
            (xa, ya), (xb, yb) = plain[i], cached[i]
            assert torch.equal(xa, xb) and torch.equal(ya, yb), f"sample {i}, epoch {epoch}"


def test_samples_and_augmentations_are_those_of_decoding_every_epoch(tmp_path):
    """JPEGs of the task's size: training samples (augmented) and validation samples equal,
    bit for bit, those decoded from the files; after the first epoch every image is in memory."""
    data, task = _data(_folder(tmp_path / "f", (16, 16)))
    for context in ("training", "validation"):
        decoded = DecodedImages(data.inputs, task.blocks[0], task.size, MemoryBudget(1 << 20))
        plain, cached = _datasets(task, data, context, decoded)
        _same_samples(plain, cached)
        assert decoded.count == len(data.inputs) and decoded.stored_bytes == len(data.inputs) * 3 * 16 * 16


def test_larger_files_give_the_samples_of_the_resized_copy(tmp_path, monkeypatch):
    """Files larger than the task's size are kept at the size of cache="resized"'s copy: the
    samples equal that cache's, augmentation included, and an image takes that much memory."""
    monkeypatch.setenv("HOTSTART_DATA_DIR", str(tmp_path / "cache"))
    from hotstart.datasets.resized_cache import cache_data

    data, task = _data(_folder(tmp_path / "f", (40, 30), ext="png"))
    decoded = DecodedImages(data.inputs, task.blocks[0], task.size, MemoryBudget(1 << 20))
    resized, cached = _datasets(task, cache_data(data, "resized", task.size), "training", decoded)
    _same_samples(resized, cached)
    assert decoded.stored[0].shape == (3, 16, 21)  # 30x40 covering 16x16, aspect kept


def test_a_gray_task_keeps_one_channel(tmp_path):
    """The block's conversion (RGB files, a 1-channel Image block) is applied before storing."""
    from hotstart import Image as ImageBlock, Label

    data, _ = datasets.ImageFolders(_folder(tmp_path / "f", (16, 16)))
    task = ImageClassificationSingle((ImageBlock(channels=1), Label(["a", "b"])), size=(16, 16))
    decoded = DecodedImages(data.inputs, task.blocks[0], task.size, MemoryBudget(1 << 20))
    _same_samples(*_datasets(task, data, "training", decoded))
    assert decoded.stored[0].shape == (1, 16, 16)


def test_the_budget_is_respected_and_the_rest_is_decoded_each_time(tmp_path):
    data, task = _data(_folder(tmp_path / "f", (16, 16)))
    one = 3 * 16 * 16
    decoded = DecodedImages(data.inputs, task.blocks[0], task.size, MemoryBudget(3 * one + one // 2))
    plain, cached = _datasets(task, data, "training", decoded)
    _same_samples(plain, cached)
    assert decoded.count == 3 and decoded.stored_bytes == 3 * one <= decoded.budget.limit


def test_auto_keeps_a_folder_that_fits_and_says_why_not_otherwise(tmp_path):
    data, task = _data(_folder(tmp_path / "f", (16, 16)))
    train, valid = data.subset(range(0, 12, 2)), data.subset(range(1, 12, 2))  # a split: Subset views
    caches, (what, why) = memory_caches(None, [train.inputs, valid.inputs], task.blocks[0], task.size, budget=10**6)
    assert what == "memory" and all(isinstance(c, DecodedImages) for c in caches)
    assert caches[0].budget is caches[1].budget  # one budget for both
    assert why == "12 images decoded once, ~0.0 MB of the 1.0 MB budget; cache=False to decode every epoch"
    caches, (what, why) = memory_caches("auto", [train.inputs, valid.inputs], task.blocks[0], task.size, budget=5000)
    assert caches == [None, None] and what == "off" and "over the 0.0 MB budget" in why
    caches, (what, _) = memory_caches("memory", [train.inputs, valid.inputs], task.blocks[0], task.size, budget=5000)
    assert what == "memory" and caches[0].budget.limit == 5000  # asked for: as many as fit
    assert memory_caches(False, [train.inputs], task.blocks[0], task.size)[1][0] == "off"
    assert memory_caches("resized", [train.inputs], task.blocks[0], task.size) == ([None], None)


def test_inputs_that_are_not_files_get_no_cache(digits_small, small_task):
    data, _ = digits_small
    assert memory_caches(None, [data.inputs], small_task.blocks[0], small_task.size) == ([None], None)
    with pytest.raises(UsageError, match='cache="memory" needs image files'):
        memory_caches("memory", [data.inputs], small_task.blocks[0], small_task.size)


def test_the_budget_is_a_gib_at_most_and_an_eighth_of_the_memory():
    assert memory_budget(64 << 30) == 1 << 30
    assert memory_budget(4 << 30) == 512 << 20
    assert 0 < memory_budget() <= 1 << 30


def test_a_file_changed_after_it_was_read_is_read_again(tmp_path):
    """A kept image whose file changed (or went) is read from the file again, as without the
    cache: new contents are trained on, a removed file is reported naming it."""
    root = _folder(tmp_path / "f", (16, 16))
    data, task = _data(root)
    decoded = DecodedImages(data.inputs, task.blocks[0], task.size, MemoryBudget(1 << 20))
    decoded.fill()
    before, kept = decoded[0].clone(), decoded.stored[0]
    assert decoded[0] is kept  # unchanged: from memory
    Image.new("RGB", (16, 16), (255, 0, 0)).save(data.inputs.container[0])
    assert not torch.equal(decoded[0], before)
    assert torch.equal(decoded[0], decoded.pixels(data.inputs[0]))  # the new contents
    import os

    os.remove(data.inputs.container[1])
    with pytest.raises(FileNotFoundError, match="1.jpg"):
        decoded[1]


def test_an_unreadable_file_is_reported_when_its_sample_is_read(tmp_path):
    root = _folder(tmp_path / "f", (16, 16))
    (root / "a" / "0.jpg").write_bytes(b"not a jpeg")
    data, task = _data(root)
    decoded = DecodedImages(data.inputs, task.blocks[0], task.size, MemoryBudget(1 << 20))
    decoded.fill()
    assert decoded.stored[0] is None and decoded.count == len(data.inputs) - 1
    with pytest.raises(datasets.ImageLoadError, match="0.jpg"):
        TaskDataset(task, data, "training", decoded=decoded)[0]


def test_loader_workers_read_the_images_the_parent_decoded(tmp_path):
    data, task = _data(_folder(tmp_path / "f", (16, 16)))
    decoded = DecodedImages(data.inputs, task.blocks[0], task.size, MemoryBudget(1 << 20))
    plain, cached = _datasets(task, data, "training", decoded)
    batches = []
    for ds, workers in ((plain, 0), (cached, 1)):
        loader = make_loader(ds, batch_size=4, train=True, num_workers=workers, seed=1)
        from hotstart.learner.data import set_epoch

        set_epoch(loader, 1, seed=1)  # fills the cache in this process, before the worker starts
        batches.append(list(loader))
    assert decoded.count == len(data.inputs)
    for (xa, ya), (xb, yb) in zip(*batches):
        assert torch.equal(xa, xb) and torch.equal(ya, yb)


def test_tasklearner_keeps_a_small_folder_in_memory_by_default(tmp_path):
    data, task = _data(_folder(tmp_path / "f", (16, 16)))
    learner = tasklearner(task, data, batch_size=4, seed=0, progress=False, precision="32-true")
    assert learner.choices["images"].value == "memory"
    assert learner.train_loader.dataset.decoded is not None and learner.valid_loader.dataset.decoded is not None
    off = tasklearner(task, data, batch_size=4, seed=0, progress=False, precision="32-true", cache=False)
    assert off.train_loader.dataset.decoded is None and off.choices["images"].value == "off"
    learner.fit(1, 1e-3)
    off.fit(1, 1e-3)
    assert learner.history[0]["train_loss"] == off.history[0]["train_loss"]  # the same samples, the same fit
    assert learner.train_loader.dataset.decoded.count + learner.valid_loader.dataset.decoded.count == 12


def test_a_target_on_the_image_grid_keeps_images_at_their_own_size(tmp_path):
    """Keypoints and masks are transformed with their image: the cache keeps larger files whole
    (its samples are those decoded every epoch), and cache="resized", which would shrink the image
    alone, is refused."""
    from hotstart import ImageKeypointRegression, Image as ImageBlock, Keypoints

    data, task = _data(_folder(tmp_path / "f", (40, 30), ext="png"))
    decoded = DecodedImages(data.inputs, task.blocks[0], task.size, MemoryBudget(1 << 20), shrink=False)
    _same_samples(*_datasets(task, data, "training", decoded))
    assert decoded.stored[0].shape == (3, 30, 40)
    points = ImageKeypointRegression((ImageBlock(), Keypoints(1)), size=(16, 16))
    assert points.targets_on_input_grid and not task.targets_on_input_grid
    with pytest.raises(UsageError, match='cache="resized" reduces the images alone'):
        tasklearner(points, (list(data.inputs), [np.zeros((1, 2))] * len(data.inputs)), cache="resized")
