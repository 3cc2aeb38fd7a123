"""Explicit randomness for the loop and model building.

Libraries we build on draw from torch's global RNG (timm's weight init, dropout, DataLoader
workers' base seed when no generator is given). So those steps run inside `seeded_torch_rng`,
which forks torch's CPU RNG state and that of the one CUDA device in use (if any), seeds the
fork, and restores the caller's state on exit. This is the only place in hotstart that seeds
torch's default generator, and only inside a fork: the caller's RNGs come out exactly as they
went in. Other CUDA devices are left alone: forking every visible device costs a state copy
per GPU on every fit, validate and predict, and (on a shared machine) initialises CUDA contexts
on devices the run never uses.
"""
from __future__ import annotations

import contextlib

import numpy as np
import torch


def fresh_seed() -> int:
    """A seed from the OS's entropy (never from a global RNG): used when no seed= is given."""
    return int(np.random.SeedSequence().generate_state(1)[0])


def derive_seed(*parts: int) -> int:
    """A 31-bit seed derived from several integers (e.g. learner seed, fit number, epoch)."""
    return int(np.random.SeedSequence([int(p) & 0xFFFFFFFF for p in parts]).generate_state(1)[0] & 0x7FFFFFFF)


def cuda_index(device) -> int | None:
    """The CUDA device index that `device` names (``cuda`` alone: the current device), else None."""
    if device is None:
        return None
    device = torch.device(device)
    if device.type != "cuda":
        return None
    return device.index if device.index is not None else torch.cuda.current_device()


@contextlib.contextmanager
def seeded_torch_rng(seed: int, device=None):
    """Fork torch's CPU RNG (and `device`'s, when it is a CUDA device), seed the fork, restore on exit."""
    index = cuda_index(device)
    devices = [] if index is None else [index]
    with torch.random.fork_rng(devices=devices, enabled=True):
        torch.random.default_generator.manual_seed(int(seed))
        for d in devices:
            torch.cuda.default_generators[d].manual_seed(int(seed))
        yield


def torch_generator(seed: int) -> torch.Generator:
    g = torch.Generator()
    g.manual_seed(int(seed))
    return g


@contextlib.contextmanager
def seeded_numpy_global_rng(seed: int):
    """Run code that draws from numpy's *global* RNG (``np.random.rand``, ``np.random.beta``: e.g.
    timm's ``Mixup``) from a private stream seeded with `seed`; the caller's global numpy state is
    saved on entry and put back on exit, so it comes out exactly as it went in."""
    saved = np.random.get_state()
    try:
        np.random.seed(int(seed) & 0xFFFFFFFF)
        yield
    finally:
        np.random.set_state(saved)
