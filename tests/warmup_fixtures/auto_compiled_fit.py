"""``compile="auto"`` in a fresh process on a warm cache: a short fit stays eager, a longer one
compiles and finds every graph in the cache. Prints JSON: each fit's compile choice, and torch's
compile-cache counters.

Run as a subprocess by tests/test_warmup.py on a copy of the compiled warmup's cache. The copy's
manifest entry gets step times of 1.0 s a sample eager and 0.8 s compiled (`record`: a 1.25x
speed-up), so that the decision does not depend on this machine's speed: at batch 6 with 12
training images (2 batches an epoch) an eager step is estimated at 6 * 1.0 s, saving 1.2 s a step,
and the gain passes the ~3 s of loading after 3 batches (compile_cache/policy.py): 1 epoch stays
eager, 3 epochs compile.
    python auto_compiled_fit.py CACHE_DIR
"""
import json
import os
import sys

cache = sys.argv[1]
os.environ["HOTSTART_CACHE_DIR"] = cache

import numpy as np  # noqa: E402
import torch  # noqa: E402
from PIL import Image as PILImage  # noqa: E402

from hotstart import Image, ImageClassificationSingle, Label, tasklearner  # noqa: E402
from hotstart.compile_cache import read_manifest, record  # noqa: E402
from tests.warmup_fixtures.userpkg_warm import COMPILED_SIZE  # noqa: E402

torch.set_num_threads(1)
rng = np.random.default_rng(1)
classes = ["p", "q", "r", "s"]
images = [PILImage.fromarray(rng.integers(0, 256, COMPILED_SIZE, dtype=np.uint8)) for _ in range(21)]
labels = [classes[i % len(classes)] for i in range(21)]
task = ImageClassificationSingle((Image(channels=1), Label(classes)), size=COMPILED_SIZE, augment={"flip": 0.0})
learner = tasklearner(task, (images[:12], labels[:12]), validdata=(images[12:], labels[12:]), batch_size=6, seed=0,
                      progress=False)  # compile="auto": the default
key = learner.auto_compile.key
entry = read_manifest()["entries"][key]  # the warmup warmed exactly what a default fit asks for
record(key, workload=entry["workload"], seconds=entry["seconds"], device="cpu", step_s_per_sample=1.0,
       compiled_step_s_per_sample=0.8)

said = []
learner.fit(1, 1e-3)
said.append([learner.choices["compile"].value, learner.choices["compile"].why])
learner.fit(3, 1e-3)
said.append([learner.choices["compile"].value, learner.choices["compile"].why])

from torch._dynamo.utils import counters  # noqa: E402

print(json.dumps({"said": said, "compiled": learner.compiled is not None,
                  "aot_autograd": dict(counters["aot_autograd"]), "inductor": dict(counters["inductor"]),
                  "valid_loss": learner.history[-1].get("valid_loss")}))
