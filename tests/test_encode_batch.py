"""A batch encoded at once (`task.encode_batch`, which the training loader uses) gives every sample
exactly what `encode_sample` gives it, and a bad sample in a batch is still named."""
import numpy as np
import pytest
import torch

from hotstart import Image, ImageClassificationSingle, Label
from hotstart.encodings.image_kernels import adjust_lighting, adjust_lighting_batch, rotate_nearest, rotate_nearest_batch


def _rngs(n, epoch=1):
    return [np.random.default_rng([0, epoch, k]) for k in range(n)]


@pytest.mark.parametrize("size, channels, augment", [
    ((64, 64), 3, True),
    ((30, 30), 1, {"flip": 0.0}),  # an odd number of pixels: no vector tail may round differently
    ((48, 48), 3, {"rot90": 0.75, "channel_shuffle": 0.5, "invert": 0.5}),
    ((32, 40), 3, {"max_rotate": 0.0, "max_lighting": 0.0}),
])
def test_a_batch_encodes_each_sample_as_encode_sample_does(size, channels, augment):
    task = ImageClassificationSingle((Image(channels=channels), Label(["a", "b"])), size=size, augment=augment)
    gen = torch.Generator().manual_seed(0)
    # pictures of two sizes and two dtypes in one batch: each group is stacked on its own
    images = [torch.randint(0, 256, (channels, 50 + k % 3, 60), dtype=torch.uint8, generator=gen) if k % 3
              else torch.rand(channels, 64, 64, generator=gen) for k in range(24)]
    samples = [(x, "ab"[k % 2]) for k, x in enumerate(images)]
    one = [task.encode_sample(s, "training", rng) for s, rng in zip(samples, _rngs(len(samples)))]
    batch = task.encode_batch(samples, "training", _rngs(len(samples)))
    assert len(batch) == len(one)
    for (x1, y1), (xb, yb) in zip(one, batch):
        assert torch.equal(x1, xb) and y1 == yb
    # validation: no augmentation, and the same again
    valid = task.encode_batch(samples, "validation")
    assert all(torch.equal(task.encode_sample(s, "validation")[0], v[0]) for s, v in zip(samples, valid))


def test_the_batch_kernels_give_each_image_what_it_gets_alone():
    gen = torch.Generator().manual_seed(1)
    images = torch.rand(5, 3, 17, 23, generator=gen) * 255
    angles, bright, contrast = [-9.0, 0.0, 3.5, 7.25, 10.0], [0.8, 1.0, 1.2, 0.9, 1.1], [1.1, 0.85, 1.0, 1.2, 0.9]
    rotated = rotate_nearest_batch(images, angles)
    lit = adjust_lighting_batch(rotated.clone(), bright, contrast, bound=255.0)
    for k in range(5):
        alone = rotate_nearest(images[k].clone(), angles[k])
        assert torch.equal(alone, rotated[k])
        assert torch.equal(adjust_lighting(alone, bright[k], contrast[k], bound=255.0), lit[k])


def test_a_bad_sample_in_a_batch_is_named_by_the_loader():
    from hotstart import tasklearner
    from hotstart.errors import HotstartError

    task = ImageClassificationSingle((Image(), Label(["a", "b"])), size=(16, 16))
    gen = torch.Generator().manual_seed(2)
    images = [torch.randint(0, 256, (3, 16, 16), dtype=torch.uint8, generator=gen) for _ in range(12)]
    images[5] = torch.full((3, 16, 16), 2.0)  # a float image outside [0, 1]
    learner = tasklearner(task, (images, ["a", "b"] * 6), validdata=(images[:2], ["a", "b"]), batch_size=12,
                          seed=0, progress=False, num_workers=0)
    with pytest.raises(HotstartError, match="sample 5"):
        next(iter(learner.train_loader))
