"""A workload that misbehaves the way a careless user package or library does: it seeds torch,
numpy and `random` globally, flips torch flags and sets an environment variable. The warmup's
side-effect guard must put each back and say so."""
import os
import random

import numpy as np
import torch

from hotstart import Image, ImageClassificationSingle, Label
from hotstart.warmup import Registry

LEAKED_ENV = "HOTSTART_TEST_LEAKED_BY_WORKLOAD"

registry = Registry()


@registry.workload(size=(8, 8), batch_size=2, steps=1, compile=False, description="seeds and sets globals")
def seeds_globally():
    torch.manual_seed(1234)
    np.random.seed(1234)
    random.seed(1234)
    torch.backends.cudnn.benchmark = not torch.backends.cudnn.benchmark
    torch.set_num_threads(torch.get_num_threads() + 1)
    os.environ[LEAKED_ENV] = "1"
    return ImageClassificationSingle((Image(channels=1), Label(["a", "b"])), size=(8, 8), augment={"flip": 0.0})
