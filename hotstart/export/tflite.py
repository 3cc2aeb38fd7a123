"""LiteRT (TF Lite) ``.tflite``: phones, drones, small Linux boards, and microcontrollers (TF Lite Micro).

    learner.export("digits.tflite")                                  # fp32
    learner.export("digits-int8.tflite", quantize="int8")            # int8, calibrated on training images
    learner.quantize("tflite", qat_epochs=1).export("digits-qat.tflite")   # int8 from QAT (qat.py)
    python -m hotstart export runs/hotstart --format tflite [--quantize int8] --out digits.tflite
    python -m hotstart predict digits.tflite img.png                 # LiteRT (ai-edge-litert)

How: ``litert_torch.convert`` (Google's PyTorch -> LiteRT converter: torch.export, then StableHLO and
the TF Lite converter's passes; no TensorFlow). The model is wrapped by
``litert_torch.to_channel_last_io`` first, so the file takes channels-last input and its graph
has no transposes. int8 is torchao's PT2E flow with litert-torch's ``PT2EQuantizer`` (symmetric
int8, per-channel weights; export/pt2e.py), calibrated on `calibrate` training samples as the
ONNX int8 export is; the file then has int8 input and output, which TF Lite Micro runs as is.

What the file takes and holds (layout, int8 scales, the task) is in hotstart/runtimes/tflite_file.py;
hotstart/runtimes/ runs it (LiteRT by default, or TF Lite Micro) behind the runtime interface.
Like the other exports, it checks itself (export/parity.py): the written bytes run in LiteRT beside
torch on a check batch, and an fp32 file that differs by more than `tolerance` is not written.

Needs ``pip install 'hotstart[tflite]'`` (litert-torch, ai-edge-litert, tflite-micro). Importing
litert-torch takes ~7 s (it brings jax and transformers), so it happens inside the export only.
"""
from __future__ import annotations

import contextlib
import os
from pathlib import Path

from ..atomic import atomic_write_bytes
from ..contained_import import contained_globals, import_contained
from ..errors import UsageError
from ..runtimes import tflite_file
from ..runtimes.litert import LiteRtRuntime
from ..runtimes.native_output import ALL, quiet_native_output
from .metadata import task_metadata
from .onnx import INPUT_NAME, OUTPUT_NAME, eval_copy, example_batch
from .parity import check_against_torch
from .report import ExportReport
from .trace_errors import DEFAULT_HINT, export_failure, quiet_trace


def export_tflite(learner, path, *, tolerance: float = 1e-4) -> ExportReport:
    """`learner.export(path, format="tflite")` in fp32 (int8: export/__init__.py sends
    ``quantize="int8"`` to qat.py's post-training calibration, which writes through `write_tflite`)."""
    task = learner.task
    if task is None:
        raise UsageError("export needs the learner's task (build the learner with tasklearner or load_learner)")
    return write_tflite(eval_copy(learner), task, path, tolerance=tolerance)


def write_tflite(model, task, path, *, quantization: str | None = None, tolerance: float | None = 1e-4) -> ExportReport:
    """Convert `model` (eager, or an int8 GraphModule from qat.py when `quantization` says how it was
    quantized) for `task`, check it in LiteRT against `model`, write `path`.

    `tolerance` bounds the largest |LiteRT - model| on a check batch; int8 files are only reported
    (LiteRT's int8 kernels round a step apart from torch's reference here and there)."""
    path = Path(path)
    example = example_batch(task, 1)
    layout = "NHWC" if example.dim() == 4 else "encoded"
    data = convert(model, example, layout, int8=quantization is not None)
    from ai_edge_litert.interpreter import Interpreter

    with quiet_native_output():  # LiteRT's "INFO: Created TensorFlow Lite XNNPACK delegate"
        interpreter = Interpreter(model_content=data)
    meta = task_metadata(task, input_name=INPUT_NAME, output_name=OUTPUT_NAME)
    meta.update(format=tflite_file.FORMAT, **tflite_file.io_metadata(layout, interpreter.get_input_details()[0],
                                                                     interpreter.get_output_details()[0]))
    if quantization:
        meta["quantization"] = quantization
    data = tflite_file.embed_metadata(data, meta)
    diff = check_against_torch(LiteRtRuntime.load(data), model, example_batch(task, 3, seed=1), tolerance=tolerance,
                               what="LiteRT (.tflite)", path=path)
    atomic_write_bytes(path, data)
    extra = {"input": _describe_input(meta), "runs in": "LiteRT (ai-edge-litert)" + (
        ", TF Lite Micro" if quantization else "")}
    return ExportReport(path, "tflite-int8" if quantization else "tflite", len(data), diff, extra)


def convert(model, example, layout: str, *, int8: bool) -> bytes:
    """The .tflite flatbuffer of `model` traced at `example`'s shape (batch 1), channels last for
    images. The converter's console output is kept off the terminal; when it fails, the error names
    the layer (trace_errors.py) and quotes the converter's first error line.

    litert-torch's import and conversion draw from the global RNGs, add warnings filters and
    configure the root logger: they run contained (hotstart/contained_import.py), so the caller's
    logging, warnings and RNGs come out as they went in."""
    import torch

    from .pt2e import make_quantizer

    # the import's notices kept off the terminal too
    with _litert_progress_off(), quiet_native_output(ALL) as printed, contained_globals():
        try:
            litert_torch = import_contained("litert_torch")
            QuantConfig = import_contained("litert_torch.quantize.quant_config").QuantConfig
        except ImportError as e:
            raise UsageError(f"format='tflite' needs litert-torch: pip install 'hotstart[tflite]' ({e})") from e
        wrapped, sample = model, example
        if layout == "NHWC":
            wrapped = litert_torch.to_channel_last_io(model, args=[0])
            sample = example.permute(0, 2, 3, 1).contiguous()
        wrapped.eval()  # an int8 GraphModule switches through torchao's train/eval (export/pt2e.py)
        config = QuantConfig(pt2e_quantizer=make_quantizer("tflite", qat=False)) if int8 else None
        try:
            with torch.no_grad(), quiet_trace():
                return bytes(litert_torch.convert(wrapped, (sample,), quant_config=config).model_content())
        except Exception as e:  # torch.export and the converter raise many kinds
            error = e
    native = [line.strip() for line in printed.text.splitlines() if "error" in line.lower()][:1]
    hint = DEFAULT_HINT + ", or format='onnx'" + (f". The converter printed: {native[0][:300]}" if native else "")
    raise export_failure(".tflite conversion", error, model, example, hint=hint) from error


def _describe_input(meta: dict) -> str:
    shape = "N x H x W x C (channels last)" if meta["layout"] == "NHWC" else "the encoded input"
    if meta["input_dtype"] == "int8":
        return (f"{shape}, int8 (scale {float(meta['input_scale']):.6g}, zero point {meta['input_zero_point']}: "
                "hotstart's runtimes quantize it)")
    return f"{shape}, float32"


@contextlib.contextmanager
def _litert_progress_off():
    """litert-torch prints a progress tree unless LITERT_TORCH_SHOW_PROGRESS is "n" (read at each
    step); set for the conversion only, then restored."""
    key = "LITERT_TORCH_SHOW_PROGRESS"
    before = os.environ.get(key)
    os.environ[key] = "n"
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = before
