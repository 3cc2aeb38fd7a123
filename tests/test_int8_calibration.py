"""int8 calibration: what the quantizer is fed. Training samples only (none from validation, whose
accuracy the int8 report gives), encoded as for validation, every one once; an empty set is our
own error, not onnxruntime's.

Each image is filled with its own index in the dataset, so a calibration sample says where it
came from.
"""
import numpy as np
import pytest

from hotstart import Image, ImageClassificationSingle, Label, tasklearner
from hotstart.datasets.containers import source_index
from hotstart.errors import HotstartError
from hotstart.export.quantize import CalibrationReader, calibration_samples


@pytest.fixture(scope="module")
def learner():
    images = [np.full((8, 8), i, np.uint8) for i in range(60)]
    labels = ["abc"[i % 3] for i in range(60)]
    task = ImageClassificationSingle((Image(1), Label(list("abc"))), size=(8, 8), augment=False)
    return tasklearner(task, (images, labels), valid_pct=0.25, seed=3, progress=False)


def _split(loader):
    inputs = loader.dataset.inputs
    return {source_index(inputs, j) for j in range(len(inputs))}


def _origin(sample) -> int:
    return int(np.asarray(sample)[0, 0])


def test_calibration_samples_come_from_the_training_split_and_none_from_validation(learner):
    train, valid = _split(learner.train_loader), _split(learner.valid_loader)
    assert len(train) == 45 and len(valid) == 15 and not train & valid
    every = calibration_samples(learner, 1000)
    assert sorted(_origin(s) for s in every) == sorted(train)  # all training samples, once each
    some = [_origin(s) for s in calibration_samples(learner, 10)]
    assert len(set(some)) == 10 and set(some) <= train and not set(some) & valid
    assert some == [_origin(s) for s in calibration_samples(learner, 10)]  # chosen with the learner's seed


def test_the_reader_feeds_every_sample_once_encoded_as_for_validation(learner):
    samples = calibration_samples(learner, 40)
    reader = CalibrationReader(learner.task, samples, "input", batch_size=16)
    for _ in range(2):  # and again after rewind
        batches = []
        while (batch := reader.get_next()) is not None:
            batches.append(batch["input"])
        assert [len(b) for b in batches] == [16, 16, 8]
        want = np.stack([learner.task.encode_input(x, "validation").numpy() for x in samples])
        np.testing.assert_array_equal(np.concatenate(batches), want)
        reader.rewind()


def test_no_calibration_data_is_our_own_error(learner):
    with pytest.raises(HotstartError, match="no samples"):
        CalibrationReader(learner.task, [], "input")
    with pytest.raises(HotstartError, match="calibrate must be at least 1"):
        calibration_samples(learner, 0)
    predict_only = tasklearner(learner.task, None, progress=False)
    with pytest.raises(HotstartError, match="needs training data to calibrate on"):
        calibration_samples(predict_only, 8)
