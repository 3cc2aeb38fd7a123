"""Exports leave the process as they found it (tests/test_contained_import.py).

A fresh interpreter, so that ExecuTorch, litert-torch and torchao are imported here for the first
time, as in a user's script: their imports and calls configure logging (``logging.basicConfig``),
add warnings filters and draw from the global RNGs unless hotstart contains them
(hotstart/contained_import.py); torch's ONNX exporter sets ``TORCHINDUCTOR_CACHE_DIR`` (through
``torch._dynamo``). A tiny untrained SmallCNN (8x8 digits) is exported to .onnx, then .pte and
.tflite, fp32 and int8 (calibrated on 8 images); before each export the global RNGs are seeded
and the process's state recorded. One ``RESULT {json}`` line per export: what it changed.
"""
import logging
import os
import random
import sys
import warnings

import numpy as np
import sympy  # noqa: F401  torch.export's first use imports it, and sympy adds a warnings filter: torch's, not ours
import torch

from _result_line import emit_result  # this folder is sys.path[0] when run as a script
from hotstart import ImageClassificationSingle, datasets, tasklearner

folder = sys.argv[1]
data, blocks = datasets.load("digits")
learner = tasklearner(ImageClassificationSingle(blocks, size=(8, 8)), data.subset(list(range(64))), seed=0,
                      progress=False)


def state() -> dict:
    root = logging.getLogger()
    return {"torch RNG": torch.get_rng_state(), "numpy RNG": np.random.get_state(), "random RNG": random.getstate(),
            "root handlers": list(root.handlers), "root level": root.level,
            "logging.disable": logging.root.manager.disable, "warnings.filters": list(warnings.filters),
            "os.environ": dict(os.environ)}


def changed(before: dict, after: dict) -> list[str]:
    out = []
    if not torch.equal(before["torch RNG"], after["torch RNG"]):
        out.append("torch RNG")
    a, b = before["numpy RNG"], after["numpy RNG"]
    if a[0] != b[0] or not np.array_equal(a[1], b[1]) or a[2:] != b[2:]:
        out.append("numpy RNG")
    if before["random RNG"] != after["random RNG"]:
        out.append("random RNG")
    env_a, env_b = before["os.environ"], after["os.environ"]
    env = sorted(k for k in {*env_a, *env_b} if env_a.get(k) != env_b.get(k))
    if env:
        out.append(f"os.environ: {env}")
    for key in ("root level", "logging.disable"):
        if before[key] != after[key]:
            out.append(f"{key}: {before[key]!r} -> {after[key]!r}")
    for key in ("root handlers", "warnings.filters"):
        added = [repr(x)[:100] for x in after[key] if x not in before[key]][:5]  # a RESULT line is short
        removed = [repr(x)[:100] for x in before[key] if x not in after[key]][:5]
        if added or removed:
            out.append(f"{key}: added {added}, removed {removed}")
    return out


for name, options in [("digits.onnx", {}), ("digits.pte", {}), ("digits.tflite", {}),
                      ("digits-int8.pte", {"quantize": "int8", "calibrate": 8}),
                      ("digits-int8.tflite", {"quantize": "int8", "calibrate": 8})]:
    torch.manual_seed(0)
    np.random.seed(0)
    random.seed(0)
    before = state()
    learner.export(f"{folder}/{name}", **options)
    emit_result({"export": name, "changed": changed(before, state())})
