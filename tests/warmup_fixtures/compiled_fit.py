"""A compiled fit in a fresh process on a warm cache; prints torch's compile-cache counters as JSON.

Run as a subprocess by tests/test_warmup.py (a new process has no in-memory compiled graphs, so
every graph comes from the on-disk cache or is compiled again, and the counters say which).
    python compiled_fit.py CACHE_DIR BATCH_SIZE N_TRAIN N_VALID
"""
import json
import os
import sys

cache, batch_size, n_train, n_valid = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
os.environ["HOTSTART_CACHE_DIR"] = cache

import numpy as np  # noqa: E402
import torch  # noqa: E402
from PIL import Image as PILImage  # noqa: E402

from hotstart import Image, ImageClassificationSingle, Label, tasklearner  # noqa: E402
from tests.warmup_fixtures.userpkg_warm import COMPILED_SIZE  # noqa: E402

torch.set_num_threads(1)
rng = np.random.default_rng(1)
classes = ["p", "q", "r", "s"]  # not the warmup's classes: the head is not compiled
n = n_train + n_valid
images = [PILImage.fromarray(rng.integers(0, 256, COMPILED_SIZE, dtype=np.uint8)) for _ in range(n)]
labels = [classes[i % len(classes)] for i in range(n)]
task = ImageClassificationSingle((Image(channels=1), Label(classes)), size=COMPILED_SIZE, augment={"flip": 0.0})
learner = tasklearner(task, (images[:n_train], labels[:n_train]), validdata=(images[n_train:], labels[n_train:]),
                      batch_size=batch_size, compile=True, seed=0, progress=False)
assert learner.model.compiled_with is not None
learner.fit(1, 1e-3)

from torch._dynamo.utils import counters  # noqa: E402

print(json.dumps({"aot_autograd": dict(counters["aot_autograd"]), "inductor": dict(counters["inductor"]),
                  "valid_loss": learner.history[-1].get("valid_loss") if learner.history else None}))
