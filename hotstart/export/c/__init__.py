"""C for microcontrollers: ``learner.export("model.c", format="c")`` -> model.c + model.h.

    learner.export("model.c", format="c")                       # int8 quantization, then C
    learner.export("firmware", format="c", harness=True, ram_limit=16 * 1024)
    python -m hotstart export runs/hotstart --format c --out DIR [--harness] [--ram-limit N]

The C is C99 with no dynamic memory and no library beyond <stdint.h> and <string.h>: weights are
``const`` arrays (flash), activations live in one static arena whose size is fixed at export
("needs N bytes of RAM"), and the arithmetic is integer only: int8 weights and activations, int32
accumulators, fixed-point requantization (qmath.py). One entry point::

    int hotstart_predict(const uint8_t *image, int8_t *logits);   /* returns the class index */

**Input contract**: `image` is the H x W x C uint8 image already in the model's mode and size
(the model contract's `resized_pixels`, hotstart/contract/image_input.py); the normalization and input quantization run inside,
as a 256-entry table per channel that onnxruntime's own QuantizeLinear filled at export, so they
are exact. The resize stays with the caller: on a microcontroller the camera or its driver
delivers a fixed frame size, and an antialiased resize from any size would need floats and
buffers per source size that a fixed-size firmware does not have.

Pipeline: the learner -> int8 QDQ ONNX (hotstart/export/quantize.py, onnxruntime's
quantize_static) -> graph.py (ops.Program) -> memory.py (arena) -> emit.py (text) -> write.py.
Where a C compiler is found, the export compiles the host harness and compares it with
onnxruntime on the validation images (check.py), as the ONNX export checks onnxruntime
against torch.
"""
from __future__ import annotations

import tempfile
from pathlib import Path

from ..report import ExportError, ExportReport

__all__ = ["export_c", "onnx_to_c", "ExportError"]

TEST_IMAGES = 20  # validation images put in hotstart_test_images.h for the Cortex-M harness


def export_c(learner, path, *, harness: bool = False, ram_limit: int | None = None, calibrate: int = 256,
             check: bool = True, **kwargs) -> ExportReport:
    """Quantize `learner` to int8 (onnxruntime, QDQ), then write the C files; see the module docs.

    `path`: ``NAME.c`` (writes NAME.c and NAME.h side by side) or a folder (model.c, model.h).
    `harness`: also the host and Cortex-M harnesses (firmware.py), with 20 validation images.
    `ram_limit`: bytes the activation arena may take, else `ExportError`. `check`: compile and
    compare with onnxruntime on the validation set, where a C compiler and validation data are.
    """
    import onnx

    from ..quantize import export_int8
    from .check import check_on_validation, validation_pixels
    from .convert import hotstart_meta
    from .write import write_c

    with tempfile.TemporaryDirectory(prefix="hotstart-c-") as tmp:
        int8_path = Path(tmp) / "int8.onnx"
        int8_report = export_int8(learner, int8_path, calibrate=calibrate, measure=False, **kwargs)
        model_bytes = int8_path.read_bytes()
    model = onnx.load_from_string(model_bytes)
    images = None
    if harness and learner.valid_loader is not None:
        images = validation_pixels(learner, hotstart_meta(model), TEST_IMAGES)[0]
    report, cmodel = write_c(model, path, harness=harness, ram_limit=ram_limit, images=images)
    report.max_abs_diff = int8_report.max_abs_diff
    if check:
        report.extra.update(check_on_validation(learner, cmodel, model_bytes))
    return report


def onnx_to_c(model, path, *, harness: bool = False, ram_limit: int | None = None) -> ExportReport:
    """An int8 QDQ ONNX file that hotstart exported (a path or an ``onnx.ModelProto``) -> C files at `path`."""
    import onnx

    from .write import write_c

    if not isinstance(model, onnx.ModelProto):
        src = Path(model)
        if not src.is_file():
            raise FileNotFoundError(f"{src}: no such ONNX file")
        try:
            model = onnx.load(str(src))
        except Exception as e:  # onnx raises DecodeError and others
            raise ExportError(f"{src}: not a readable ONNX file ({e})") from None
    return write_c(model, path, harness=harness, ram_limit=ram_limit)[0]
