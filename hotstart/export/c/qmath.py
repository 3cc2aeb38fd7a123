"""Fixed-point requantization: a real scale as an int32 multiplier and a right shift.

An integer op accumulates ``sum((x - x_zero) * w) + bias`` in int32; the real result is that
times ``s_x * s_w``, and its int8 code at the output scale is ``acc * (s_x * s_w / s_y) + y_zero``.
CMSIS-NN and TensorFlow Lite Micro store the factor ``M = s_x * s_w / s_y`` as a Q31 multiplier
and a shift. We do the same, with one rounding (CMSIS-NN's ``CMSIS_NN_USE_SINGLE_ROUNDING``,
TFLite's ``TFLITE_SINGLE_ROUNDING``) rather than the older two (a rounding doubling high
multiply, then a rounding divide by a power of two):

    y = round_half_to_even(acc * mult / 2^shift)     64-bit product, one rounding (kernels/common.c)

Half to even, not CMSIS-NN's half up, because onnxruntime (the reference the tests hold the C to)
rounds half to even: its CPU kernels compute the same factor in float32, so the two agree except
where the exact product lies within about 1e-6 of a half. Average pooling is the exception that
needed more (onnxruntime averages in float32; see kernels/avg_f32.c and `float32_dequant_table`).
"""
from __future__ import annotations

import math

import numpy as np

MAX_SHIFT = 62  # the product acc * mult fits in 62 bits plus sign: |acc| < 2^31, mult < 2^31


def quantize_multiplier(real: float) -> tuple[int, int]:
    """``real`` (> 0) as ``(mult, shift)`` with ``real ~= mult * 2^-shift`` and 2^30 <= mult < 2^31.

    Scales too small for a shift of 62 lose low bits of the multiplier (they round to tiny
    integers, which is what they are); a scale of 2^31 or more is refused (no real model has one).
    """
    real = float(real)
    if not (real > 0.0 and math.isfinite(real)):
        raise ValueError(f"a requantization scale must be positive and finite, got {real!r}")
    frac, exp = math.frexp(real)  # real = frac * 2^exp, 0.5 <= frac < 1
    mult = int(round(frac * (1 << 31)))
    if mult == 1 << 31:
        mult //= 2
        exp += 1
    shift = 31 - exp
    if shift < 1:
        raise ValueError(f"requantization scale {real!r} is too large for a Q31 multiplier")
    if shift > MAX_SHIFT:
        mult = int(round(mult / 2 ** (shift - MAX_SHIFT)))
        shift = MAX_SHIFT
    return mult, shift


def quantize_multipliers(reals) -> tuple[np.ndarray, np.ndarray]:
    """Per-channel form of `quantize_multiplier`: (int32 multipliers, int8 shifts)."""
    pairs = [quantize_multiplier(r) for r in np.asarray(reals, dtype=np.float64).ravel()]
    return (np.array([m for m, _ in pairs], dtype=np.int64).astype(np.int32),
            np.array([s for _, s in pairs], dtype=np.int8))


def add_multipliers(scale_a: float, scale_b: float, scale_y: float) -> tuple[int, int, int]:
    """A residual add ``y = a * s_a / s_y + b * s_b / s_y`` as two multipliers sharing one shift.

    Both products are summed in 64 bits and rounded once, so the add rounds no more often than a
    convolution does. The shift is the largest that keeps both multipliers below 2^31.
    """
    ra, rb = float(scale_a) / float(scale_y), float(scale_b) / float(scale_y)
    big = max(ra, rb)
    _, exp = math.frexp(big)
    shift = min(31 - exp, MAX_SHIFT - 8)  # |a - a_zero| < 2^9: the sum stays well inside 64 bits
    if shift < 1:
        raise ValueError(f"residual add rescales by {big!r}: too large for a Q31 multiplier")
    ma, mb = int(round(ra * 2 ** shift)), int(round(rb * 2 ** shift))
    if max(ma, mb) >= 1 << 31:
        shift -= 1
        ma, mb = int(round(ra * 2 ** shift)), int(round(rb * 2 ** shift))
    return ma, mb, shift


def uint8_to_int8_zero_point(zero_point: int) -> int:
    """onnxruntime's activations are uint8; ours are int8: ``q_u8 - z_u8 == (q_u8 - 128) - (z_u8 - 128)``."""
    return int(zero_point) - 128


def input_tables(mean, std, scale: float, zero_point: int, dtype) -> np.ndarray:
    """For each channel, the int8 code of every pixel value 0..255 (channels x 256 int8).

    The image encoding (x / 255 - mean) / std in float32, by the model contract's own
    `normalize_pixels` (what every runtime computes), then onnxruntime's own QuantizeLinear (run on
    a one-node graph, so its rounding is used, not a copy of it). A table makes the C's
    preprocessing a lookup: exact, and free of floats.
    """
    import onnxruntime as ort
    from onnx import TensorProto, helper

    from ...contract.image_input import normalize_pixels

    channels = len(mean)
    pixels = np.broadcast_to(np.arange(256, dtype=np.uint8), (channels, 1, 256))  # C x H=1 x W=256
    values = np.ascontiguousarray(normalize_pixels(pixels, channels, mean, std).reshape(channels, 256))
    elem = TensorProto.UINT8 if np.dtype(dtype) == np.uint8 else TensorProto.INT8
    graph = helper.make_graph(
        [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"])], "input_table",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(values.shape))],
        [helper.make_tensor_value_info("q", elem, list(values.shape))],
        [helper.make_tensor("s", TensorProto.FLOAT, [], [float(scale)]),
         helper.make_tensor("z", elem, [], [int(zero_point)])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    q = session.run(None, {"x": values})[0].astype(np.int32)
    if elem == TensorProto.UINT8:
        q = q - 128
    return q.astype(np.int8)


def float32_parts(value) -> tuple[int, int]:
    """A float32 as (mantissa, exponent): value == mantissa * 2^exponent, mantissa < 2^24."""
    f = float(np.float32(value))
    m, e = math.frexp(f)
    return int(m * (1 << 24)), e - 24


def float32_dequant_table(scale: float, zero_point: int) -> tuple[np.ndarray, int]:
    """``float32(v - zero_point) * float32(scale)`` for every int8 v, as onnxruntime dequantizes,
    exactly: (int64 values d, e0) with value(v) == d[v + 128] * 2^e0 (for the C's hs_avg_f32)."""
    vals = (np.arange(-128, 128, dtype=np.float32) - np.float32(zero_point)) * np.float32(scale)
    parts = [math.frexp(float(v)) for v in vals if v != 0]
    e0 = min(e for _, e in parts) - 24
    table = np.array([int(math.ldexp(float(v), -e0)) for v in vals], dtype=np.int64)
    assert all(math.ldexp(int(t), e0) == float(v) for t, v in zip(table, vals))  # exact by construction
    return table, e0
