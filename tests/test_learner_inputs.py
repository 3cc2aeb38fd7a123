"""What the learner reads: a path (str or PathLike) given to `predict`, `get_preds(items=)` or
`test_loader` is read as an image, with errors naming the file; `validate` takes labelled raw
data; batches are encoded with one intra-op thread, and the setting is restored."""
import pytest
import torch

from hotstart import ImageClassificationSingle, datasets, tasklearner
from hotstart.datasets import ImageLoadError


@pytest.fixture(scope="module")
def digits_task():
    data, blocks = datasets.load("digits")
    return data, ImageClassificationSingle(blocks, size=(8, 8), augment={"flip": 0.0})


# --- predict takes a path ---------------------------------------------------------------------

def test_predict_takes_a_path_str_or_pathlike(digits_task, tmp_path):
    data, task = digits_task
    learner = tasklearner(task, data, seed=0, progress=False)
    path = tmp_path / "digit.png"
    data.inputs[5].save(path)

    label, probs = learner.predict(data.inputs[5])
    for given in (str(path), path):
        got_label, got_probs = learner.predict(given)
        assert got_label == label
        torch.testing.assert_close(got_probs, probs)
    assert probs.shape == (10,)


def test_get_preds_and_test_loader_take_the_paths_predict_takes(digits_task, tmp_path):
    """`get_preds(items=)` and `test_loader` read each item as `predict` does (`encode_raw_input`)."""
    data, task = digits_task
    learner = tasklearner(task, data.subset(list(range(100))), seed=0, progress=False)
    paths = []
    for i in range(3):
        paths.append(tmp_path / f"{i}.png")
        data.inputs[i].save(paths[i])
    want = torch.stack([learner.predict(p)[1] for p in paths])
    for items in ([str(p) for p in paths], paths, [data.inputs[0], str(paths[1]), paths[2]]):
        probs, none = learner.get_preds(items=items)
        assert none is None
        torch.testing.assert_close(probs, want)
    batch = next(iter(learner.test_loader([str(p) for p in paths])))
    assert batch.shape[0] == 3


def test_validate_takes_a_list_like_a_tuple(digits_task):
    data, task = digits_task
    learner = tasklearner(task, data.subset(list(range(100))), seed=0, progress=False)
    xs, ys = [data.inputs[i] for i in range(100, 130)], [data.targets[i] for i in range(100, 130)]
    assert learner.validate([xs, ys]) == learner.validate((xs, ys))


def test_predict_path_errors_name_the_file(digits_task, tmp_path):
    data, task = digits_task
    learner = tasklearner(task, data, seed=0, progress=False)
    missing = tmp_path / "no_such_photo.png"
    with pytest.raises(FileNotFoundError, match="no_such_photo.png"):
        learner.predict(missing)
    broken = tmp_path / "broken.png"
    broken.write_bytes(b"\x89PNG\r\n\x1a\n" + b"not really")
    with pytest.raises(ImageLoadError, match="broken.png"):
        learner.predict(str(broken))


# --- data loading speed: one intra-op thread per batch, restored afterwards ---------------------

def test_batches_are_encoded_with_one_thread_and_the_setting_is_restored(digits_task, monkeypatch):
    from hotstart.learner.data import TaskDataset

    data, task = digits_task
    ds = TaskDataset(task, data, "training", seed=3)
    seen = []
    real_encode_batch = type(task).encode_batch

    def spy(self, samples, *args, **kwargs):  # the batch is encoded at once (task.encode_batch)
        seen.append((torch.get_num_threads(), len(samples)))
        return real_encode_batch(self, samples, *args, **kwargs)

    monkeypatch.setattr(type(task), "encode_batch", spy)
    saved = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        batch = ds.__getitems__([4, 1, 7])
        assert torch.get_num_threads() == 2 and seen == [(1, 3)]
    finally:
        torch.set_num_threads(saved)
    for (x, y), i in zip(batch, [4, 1, 7]):  # the same samples as one at a time
        x1, y1 = ds[i]
        assert torch.equal(x, x1) and torch.equal(y, y1)
