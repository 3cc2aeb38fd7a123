"""Threads and cores: `usable_cores` (how many this process may run on) and
`one_intra_op_thread` (a block of many tiny tensor ops with one intra-op thread).

Encoding a sample (resize, the rotation's affine grid) or decoding an image runs many tiny tensor
ops; spread over torch's threads they only wait on each other. Measured on 2 shared, busy cores:
8 digits batches took 15-31 s with 2 threads and 1.0-1.7 s with 1 (DataLoader's worker processes
use 1 thread for the same reason). The setting is put back on exit: no global change remains.
"""
from __future__ import annotations

import contextlib
import os


def usable_cores() -> int:
    """The CPU cores this process may run on (its affinity mask where the OS has one)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # macOS, Windows
        return os.cpu_count() or 1


@contextlib.contextmanager
def one_intra_op_thread():
    import torch

    saved = torch.get_num_threads()
    if saved == 1:
        yield
        return
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(saved)
