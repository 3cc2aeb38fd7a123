"""Datasets code draws only from generators it creates: the global RNGs stay exactly as they were.

Also: ``import hotstart.datasets`` must not import torch (it only knows blocks).
"""
import random
import subprocess
import sys

import numpy as np

from hotstart.blocks import Image, Label, LabelMulti
from hotstart.datasets import load, split_random


def _global_states():
    states = {"random": random.getstate(), "numpy": np.random.get_state()}
    if "torch" in sys.modules:
        states["torch"] = sys.modules["torch"].random.get_rng_state().clone()
    return states


def _same(a, b):
    if a.keys() != b.keys():
        return False
    ok = a["random"] == b["random"]
    ok &= all(np.array_equal(x, y) if isinstance(x, np.ndarray) else x == y
              for x, y in zip(a["numpy"], b["numpy"]))
    if "torch" in a:
        ok &= bool((a["torch"] == b["torch"]).all())
    return ok


def test_split_random_and_mocks_leave_global_rngs_alone():
    before = _global_states()
    train, valid = split_random(100, 0.2, seed=1)
    assert (train, valid) == split_random(100, 0.2, seed=1)  # deterministic per seed
    assert len(valid) == 20 and sorted(train + valid) == list(range(100))
    rng = np.random.default_rng(0)
    Image().mock(rng), Label(["a", "b"]).mock(rng), LabelMulti(["a", "b"]).mock(rng)
    data, _ = load("digits")
    data.inputs[3]
    assert _same(before, _global_states())


def test_import_does_not_load_torch():
    code = ("import sys, hotstart.datasets as d; d.load('digits'); "
            "bad = [m for m in ('torch', 'torchvision', 'timm', 'scipy', 'sklearn') if m in sys.modules]; "
            "print(bad); sys.exit(1 if bad else 0)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
