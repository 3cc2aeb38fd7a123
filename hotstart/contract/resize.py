"""The resize: torchvision's antialiased bilinear filter on uint8, reimplemented in numpy.

``resize_uint8`` uses the same fixed-point weights and the same two passes (horizontal first) as
torch's uint8 kernel (whose algorithm Pillow-SIMD defines), so the resized pixels are bit-identical
to training's on x86 CPUs (torch's AVX2 kernel; tests/test_deploy.py holds this). PIL's own
``resize`` uses another fixed-point precision and differs by one grey level on most images.

Training resizes with torchvision itself (hotstart/encodings/projective.py): it is 15 times faster
than this numpy version on a 160 x 160 image (0.55 against 8.2 ms, one thread), which a training
loop cannot pay for every validation image. The two are one algorithm held together by that test.
"""
from __future__ import annotations

import functools
from typing import Sequence

import numpy as np

__all__ = ["resize_uint8"]


@functools.lru_cache(maxsize=64)  # the same few (input, output) sizes come back
def _aa_weights(in_size: int, out_size: int) -> tuple[np.ndarray, np.ndarray, int]:
    """Triangle-filter weights of each output pixel as int16 fixed point: (first index, weights, bits).

    The float weights are Pillow's (support widened by the scale when shrinking); the fixed-point
    precision is the largest that keeps the biggest weight within int16, as torch's uint8 kernel does.
    """
    scale = in_size / out_size
    support = scale if scale >= 1.0 else 1.0
    invscale = 1.0 / scale if scale >= 1.0 else 1.0
    width = int(np.ceil(support)) * 2 + 1
    starts = np.zeros(out_size, dtype=np.int64)
    weights = np.zeros((out_size, width), dtype=np.float64)
    for i in range(out_size):
        center = scale * (i + 0.5)
        lo = max(int(center - support + 0.5), 0)
        hi = min(int(center + support + 0.5), in_size)
        j = np.arange(lo, hi)
        w = np.clip(1.0 - np.abs((j - center + 0.5) * invscale), 0.0, None)
        total = w.sum()
        starts[i] = lo
        weights[i, :hi - lo] = w / total if total != 0 else w
    bits = 0
    while bits < 22 and int(0.5 + weights.max() * (1 << (bits + 1))) < (1 << 15):
        bits += 1
    scaled = weights * (1 << bits)
    fixed = np.where(scaled < 0, np.trunc(scaled - 0.5), np.trunc(scaled + 0.5)).astype(np.int64)
    return starts, fixed, bits


def _resize_axis(x: np.ndarray, out_size: int, axis: int) -> np.ndarray:
    """One pass along `axis` of an int64 H x W x C image, rounded and clipped to 0..255."""
    in_size = x.shape[axis]
    starts, fixed, bits = _aa_weights(in_size, out_size)
    x = np.moveaxis(x, axis, 0)
    acc = np.full((out_size, *x.shape[1:]), 1 << (bits - 1), dtype=np.int64)
    for k in range(fixed.shape[1]):  # banded: a few taps per output pixel, whatever the input size
        idx = np.minimum(starts + k, in_size - 1)
        w = fixed[:, k].reshape(-1, *([1] * (x.ndim - 1)))
        acc += x[idx] * w
    return np.moveaxis(np.clip(acc >> bits, 0, 255), 0, axis)


def resize_uint8(arr: np.ndarray, size: Sequence[int]) -> np.ndarray:
    """H x W x C uint8 -> size (H', W') with antialiased bilinear, as torchvision does on uint8 tensors."""
    h, w = int(size[0]), int(size[1])
    x = arr.astype(np.int64)
    if x.shape[1] != w:  # horizontal pass first, as Pillow(-SIMD) and torch
        x = _resize_axis(x, w, 1)
    if x.shape[0] != h:
        x = _resize_axis(x, h, 0)
    return x.astype(np.uint8)
