"""cache="resized" (hotstart/datasets/resized_cache.py): a copy of an image folder at the task's
size, built once, reused, rebuilt when a file or the size changes, equal to a resize of the originals."""
import os
import pickle

import numpy as np
import pytest
import torch
import torchvision.transforms.v2.functional as F
from PIL import Image

from hotstart import ImageClassificationSingle, datasets, tasklearner
from hotstart.datasets.images import load_image
from hotstart.datasets.resized_cache import cache_root, resized_copy, resized_size
from hotstart.errors import UsageError


@pytest.fixture
def folder(tmp_path, monkeypatch):
    """Two classes of 40x30 RGB PNGs (random pixels), one 12x12 image too small to copy;
    the datasets cache (and so the copies) under tmp_path."""
    monkeypatch.setenv("HOTSTART_DATA_DIR", str(tmp_path / "cache"))
    rng = np.random.default_rng(0)
    root = tmp_path / "images"
    for cls in ("a", "b"):
        (root / cls).mkdir(parents=True)
        for i in range(3):
            Image.fromarray(rng.integers(0, 256, (30, 40, 3), dtype=np.uint8)).save(root / cls / f"{i}.png")
    Image.fromarray(rng.integers(0, 256, (12, 12, 3), dtype=np.uint8)).save(root / "b" / "small.png")
    return root


def _files(root):
    return sorted(str(p) for p in root.rglob("*.png"))


def _expected(path, size):
    """A resize of the original as the copy promises: aspect kept, covering `size`, torchvision's antialias."""
    image = F.pil_to_tensor(load_image(path))
    new = resized_size(tuple(image.shape[-2:]), size)
    return image if new is None else F.resize(image, list(new), antialias=True)


def test_the_copy_equals_a_resize_of_the_originals_and_small_files_are_read_as_they_are(folder):
    files = _files(folder)
    copies = resized_copy(files, (16, 16))
    for original, copy in zip(files, copies):
        got = F.pil_to_tensor(load_image(copy))
        if original.endswith("small.png"):
            assert copy == original  # 12x12 is no larger than 16x16: not copied
        else:
            assert copy != original and got.shape == (3, 16, 21)  # 30x40 -> covers 16x16, aspect kept
        assert torch.equal(got, _expected(original, (16, 16)))


def test_built_once_then_reused(folder):
    files = _files(folder)
    first = resized_copy(files, (16, 16))
    stamps = {p: os.stat(p).st_mtime_ns for p in first if p not in files}
    assert len(stamps) == len(files) - 1
    again = resized_copy(files, (16, 16))
    assert again == first and {p: os.stat(p).st_mtime_ns for p in stamps} == stamps  # nothing rewritten
    assert len([d for d in cache_root().iterdir() if not d.name.startswith(".")]) == 1  # one copy, no leftovers
    assert not [d for d in cache_root().iterdir() if d.name.startswith(".")]


def test_a_changed_file_or_size_makes_a_new_copy_and_removes_the_stale_one(folder):
    files = _files(folder)
    first = list(resized_copy(files, (16, 16)))  # a plain list: the copy is no longer in use
    changed = files[0]
    Image.fromarray(np.full((30, 40, 3), 200, dtype=np.uint8)).save(changed)
    st = os.stat(changed)
    os.utime(changed, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))  # a new mtime even on a coarse clock
    second = list(resized_copy(files, (16, 16)))
    assert os.path.dirname(second[0]) != os.path.dirname(first[0])
    assert not os.path.exists(first[0])  # the stale copy is gone
    assert torch.equal(F.pil_to_tensor(load_image(second[0])), _expected(changed, (16, 16)))
    assert int(F.pil_to_tensor(load_image(second[0])).float().mean().round()) == 200

    third = resized_copy(files, (20, 20))  # another size
    assert os.path.dirname(third[0]) != os.path.dirname(second[0]) and not os.path.exists(second[0])
    assert F.pil_to_tensor(load_image(third[1])).shape == (3, 20, 27)
    assert torch.equal(F.pil_to_tensor(load_image(third[1])), _expected(files[1], (20, 20)))


def _same_size_png(path, value):
    """An uncompressed 30x40 PNG: its byte size depends only on its shape, not on its pixels."""
    Image.fromarray(np.full((30, 40, 3), value, dtype=np.uint8)).save(path, compress_level=0)


@pytest.mark.parametrize("how", ["in place, as cp -p", "by rename, as rsync -t and tar x"])
def test_a_file_replaced_by_one_of_the_same_size_and_mtime_is_not_served_from_its_old_copy(folder, how):
    target = folder / "a" / "0.png"
    _same_size_png(target, 10)
    files = _files(folder)
    old = resized_copy(files, (16, 16))
    assert int(F.pil_to_tensor(load_image(old[0])).float().mean().round()) == 10
    st = os.stat(target)
    if how.startswith("in place"):
        _same_size_png(target, 250)
    else:
        _same_size_png(folder / "a" / ".0.tmp.png", 250)
        os.rename(folder / "a" / ".0.tmp.png", target)
    os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))  # the old mtime, put back
    assert (os.stat(target).st_size, os.stat(target).st_mtime_ns) == (st.st_size, st.st_mtime_ns)
    new = resized_copy(files, (16, 16))
    assert int(F.pil_to_tensor(load_image(new[0])).float().mean().round()) == 250


def test_a_file_changed_while_its_copy_is_made_is_copied_again(folder, monkeypatch):
    from hotstart.datasets import resized_cache

    target = str(folder / "a" / "0.png")
    reads = []

    def load_then_replace(path):
        image = load_image(path)
        if path == target and not reads:  # replaced right after it was read, once
            reads.append(path)
            _same_size_png(target, 250)
        return image

    monkeypatch.setattr(resized_cache, "load_image", load_then_replace)
    copies = resized_copy(_files(folder), (16, 16))
    assert reads == [target]
    assert int(F.pil_to_tensor(load_image(copies[0])).float().mean().round()) == 250


def test_a_copy_in_use_is_not_pruned_by_a_run_at_another_size(folder):
    """A second run at another size removed the copy that a running fit read (FileNotFoundError):
    a copy is kept while any process holds the paths it got, and pruned by a later run once none does."""
    files = _files(folder)
    in_use = resized_copy(files, (16, 16))
    other = resized_copy(files, (20, 20))  # prunes older copies of the folder: not this one
    assert all(os.path.exists(p) for p in in_use) and all(os.path.exists(p) for p in other)
    held = pickle.loads(pickle.dumps(in_use))  # to a spawned worker: a plain list, no lock travels
    assert type(held) is list and held == in_use
    del in_use
    resized_copy(files, (24, 24))  # the 16x16 copy is no longer used: pruned; the 20x20 one is
    assert not any(os.path.exists(p) for p in held if p not in files)
    assert all(os.path.exists(p) for p in other)


def test_tasklearner_trains_from_the_copy_and_refuses_in_memory_images(folder):
    data, blocks = datasets.ImageFolders(folder)
    task = ImageClassificationSingle(blocks, size=(16, 16))
    learner = tasklearner(task, data, seed=0, progress=False, batch_size=4, cache="resized")
    copies = {str(p) for p in cache_root().rglob("*.png")}
    assert len(copies) == 6  # every file but the small one
    read = _inputs_paths(learner)  # the samples are read from the copies (the small file: itself)
    assert len(read) == 7 and all(p in copies or p == str(folder / "b" / "small.png") for p in read)
    learner.fit(1)
    assert len(learner.history) == 1 and np.isfinite(learner.history[-1]["train_loss"])

    rng = np.random.default_rng(0)
    images = [Image.fromarray(rng.integers(0, 256, (30, 40, 3), dtype=np.uint8)) for _ in range(4)]
    with pytest.raises(UsageError, match="must hold image files"):
        tasklearner(task, (images, ["a", "b"] * 2), seed=0, progress=False, cache="resized")
    with pytest.raises(UsageError, match="cache='thumbnails' is not known"):
        tasklearner(task, data, seed=0, progress=False, cache="thumbnails")


def _inputs_paths(learner):
    """The file paths the learner's training and validation samples are read from."""
    paths = []
    for loader in (learner.train_loader, learner.valid_loader):
        inputs = loader.dataset.inputs
        for i in range(len(inputs)):
            paths.append(_source_path(inputs, i))
    return paths


def _source_path(inputs, i):
    while not hasattr(inputs, "f"):  # a split: Subset(container, indices)
        i, inputs = inputs.indices[i], inputs.container
    return os.fspath(inputs.container[i])


def test_a_cache_that_cannot_be_written_names_its_folder_and_variable(folder, tmp_path, monkeypatch):
    """A full disk gave a bare OSError without a path: now the folder, the reason and HOTSTART_DATA_DIR.
    (Root writes into read-only folders: a file where the cache's folder should be fails for anyone;
    a full disk is simulated at the copy's first write. A real read-only folder and a real full
    disk: tests/test_datasets_download.py.)"""
    import errno

    from hotstart.cache_writes import CacheWriteError
    from hotstart.datasets import resized_cache

    files = _files(folder)
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder")
    monkeypatch.setenv("HOTSTART_DATA_DIR", str(blocked / "cache"))
    with pytest.raises(CacheWriteError) as e:
        resized_copy(files, (16, 16))
    assert str(e.value).startswith(f'cannot write the cache="resized" copy in {blocked / "cache" / "resized"}: ')
    assert f"set HOTSTART_DATA_DIR to another folder (now HOTSTART_DATA_DIR={blocked / 'cache'})" in str(e.value)

    monkeypatch.setenv("HOTSTART_DATA_DIR", str(tmp_path / "cache2"))

    def disk_full(path, image, mode):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(resized_cache, "_write_fsynced", disk_full)
    with pytest.raises(CacheWriteError, match=r"cannot write the cache=\"resized\" copy in .*cache2/resized: the disk "
                                              r"is full .*HOTSTART_DATA_DIR="):
        resized_copy(files, (16, 16))
    assert [p.name for p in (tmp_path / "cache2" / "resized").iterdir()] == []  # no half-made copy left
