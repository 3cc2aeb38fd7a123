"""`SideEffectGuard`: the warmup leaves the process as it found it.

On entry it records the global RNG states (torch CPU and CUDA, numpy, `random`), torch's global
flags and ``os.environ``; on exit it puts every one of them back and reports, in `changed`, what
had been changed by the code inside (the warmup's own tests require that list to be empty
before restoring, too).
"""
from __future__ import annotations

import os
import random

import numpy as np
import torch

from ..contained_import import restore_environ


def torch_flags() -> dict:
    """torch's process-wide settings that a library could change behind a user's back."""
    flags = {
        "default_dtype": torch.get_default_dtype(),
        "grad_enabled": torch.is_grad_enabled(),
        "deterministic_algorithms": torch.are_deterministic_algorithms_enabled(),
        "deterministic_warn_only": torch.is_deterministic_algorithms_warn_only_enabled(),
        "num_threads": torch.get_num_threads(),
        "num_interop_threads": torch.get_num_interop_threads(),
        "float32_matmul_precision": torch.get_float32_matmul_precision(),
        "cudnn_enabled": torch.backends.cudnn.enabled,
        "cudnn_benchmark": torch.backends.cudnn.benchmark,
        "cudnn_deterministic": torch.backends.cudnn.deterministic,
        "cudnn_allow_tf32": torch.backends.cudnn.allow_tf32,
        "cuda_matmul_allow_tf32": torch.backends.cuda.matmul.allow_tf32,
        "anomaly_enabled": torch.is_anomaly_enabled(),
    }
    return flags


# flag -> how to put it back (num_interop_threads cannot be changed once torch has run work)
_FLAG_SETTERS = {
    "default_dtype": torch.set_default_dtype,
    "grad_enabled": torch.set_grad_enabled,
    "num_threads": torch.set_num_threads,
    "float32_matmul_precision": torch.set_float32_matmul_precision,
    "cudnn_enabled": lambda v: setattr(torch.backends.cudnn, "enabled", v),
    "cudnn_benchmark": lambda v: setattr(torch.backends.cudnn, "benchmark", v),
    "cudnn_deterministic": lambda v: setattr(torch.backends.cudnn, "deterministic", v),
    "cudnn_allow_tf32": lambda v: setattr(torch.backends.cudnn, "allow_tf32", v),
    "cuda_matmul_allow_tf32": lambda v: setattr(torch.backends.cuda.matmul, "allow_tf32", v),
    "anomaly_enabled": torch.autograd.set_detect_anomaly,
}


def rng_states() -> dict:
    states = {"torch": torch.get_rng_state(), "numpy": np.random.get_state(), "random": random.getstate()}
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        states["cuda"] = torch.cuda.get_rng_state_all()
    return states


def _same_rng(a: dict, b: dict) -> list[str]:
    diff = []
    if not torch.equal(a["torch"], b["torch"]):
        diff.append("torch RNG")
    na, nb = a["numpy"], b["numpy"]
    if na[0] != nb[0] or not np.array_equal(na[1], nb[1]) or na[2:] != nb[2:]:
        diff.append("numpy RNG")
    if a["random"] != b["random"]:
        diff.append("random RNG")
    if "cuda" in a and "cuda" in b and not all(torch.equal(x, y) for x, y in zip(a["cuda"], b["cuda"])):
        diff.append("CUDA RNG")
    return diff


class SideEffectGuard:
    def __init__(self):
        self.changed: list[str] = []

    def __enter__(self):
        self._rng = rng_states()
        self._flags = torch_flags()
        self._env = dict(os.environ)
        return self

    def __exit__(self, *exc):
        self.changed = self._diff()
        self._restore()
        return False

    def _diff(self) -> list[str]:
        changed = _same_rng(self._rng, rng_states())
        now = torch_flags()
        changed += [f"torch flag {k}: {v!r} -> {now[k]!r}" for k, v in self._flags.items() if now[k] != v]
        env = dict(os.environ)
        changed += [f"os.environ[{k!r}]" for k in sorted(set(env) | set(self._env)) if env.get(k) != self._env.get(k)]
        return changed

    def _restore(self):
        torch.set_rng_state(self._rng["torch"])
        np.random.set_state(self._rng["numpy"])
        random.setstate(self._rng["random"])
        if "cuda" in self._rng:
            torch.cuda.set_rng_state_all(self._rng["cuda"])
        now = torch_flags()
        changed = {k for k, v in self._flags.items() if now[k] != v}
        for k in changed & set(_FLAG_SETTERS):  # set only what was changed: a no-op otherwise
            _FLAG_SETTERS[k](self._flags[k])
        if changed & {"deterministic_algorithms", "deterministic_warn_only"}:
            torch.use_deterministic_algorithms(self._flags["deterministic_algorithms"],
                                               warn_only=self._flags["deterministic_warn_only"])
        restore_environ(self._env)
