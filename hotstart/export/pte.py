"""ExecuTorch ``.pte``: a model for phones, drones and small Linux boards, run by ExecuTorch's
C++ runtime (a few hundred KB) with the XNNPACK delegate for the CPU kernels.

    learner.export("digits.pte")                                   # fp32, batch 1
    learner.export("digits-int8.pte", quantize="int8")             # PT2E int8, calibrated
    learner.export("digits.pte", batch_size=8)                     # 8 images per call
    learner.quantize("pte", qat_epochs=1).export("digits-qat.pte")  # int8 from QAT (qat.py)
    python -m hotstart export runs/hotstart --format pte --out digits.pte [--batch-size 8]
    python -m hotstart predict digits.pte img.png

How: ``torch.export`` -> ``to_edge_transform_and_lower`` with the ``XnnpackPartitioner`` (every op
of hotstart's CNNs and timm's resnets is delegated) -> ``to_executorch``. int8 is torchao's PT2E
flow with executorch's ``XNNPACKQuantizer`` (export/pt2e.py), calibrated on training samples as
the ONNX int8 export is.

**The batch size is static**: ExecuTorch plans its memory ahead of time, so a ``.pte`` takes
exactly `batch_size` inputs per call (default 1, the usual on-device case). The runtime
(hotstart/runtimes/pte.py, `PteRuntime`) pads a shorter batch and splits a longer one.

The task travels inside the file as a constant method, ``hotstart_metadata``, that returns one
JSON string: the ONNX export's keys (see onnx.py) with ``format`` = ``hotstart.pte/1`` and
``batch_size``. From C++: ``module.execute("hotstart_metadata")`` gives the string.
"""
from __future__ import annotations

import json
from pathlib import Path

from ..atomic import atomic_write_bytes
from ..contained_import import contained_globals, import_contained
from ..contract.schema import format_name
from ..errors import UsageError
from ..runtimes.native_output import quiet_native_output
from ..runtimes.pte import METADATA_METHOD, PteRuntime
from .metadata import task_metadata
from .onnx import INPUT_NAME, OUTPUT_NAME, eval_copy, example_batch
from .parity import check_against_torch
from .report import ExportReport
from .trace_errors import export_failure, quiet_trace

FORMAT = format_name("pte")


def pte_metadata(task, batch_size: int, quantization: str | None = None) -> dict[str, str]:
    """The flat metadata of a `.pte` (strings, as in the ONNX file)."""
    meta = task_metadata(task, input_name=INPUT_NAME, output_name=OUTPUT_NAME)
    meta.update(format=FORMAT, batch_size=str(int(batch_size)))
    if quantization:
        meta["quantization"] = quantization
    return meta


def lower_to_pte(model, example, meta: dict[str, str]) -> bytes:
    """`model` (eager or a quantized GraphModule) traced at `example`'s shape, lowered to XNNPACK.

    ExecuTorch's import and its lowering (``to_edge_transform_and_lower``) configure the root
    logger and the warnings filters, and the lowering draws from torch's global RNG: both run
    contained (hotstart/contained_import.py), so the caller's logging, warnings and RNG come out
    as they went in."""
    import torch

    partitioner = import_contained("executorch.backends.xnnpack.partition.xnnpack_partitioner")
    to_edge_transform_and_lower = import_contained("executorch.exir").to_edge_transform_and_lower

    program = None
    try:
        with torch.no_grad(), quiet_trace():
            program = torch.export.export(model, (example,), strict=False)
        with quiet_native_output(), contained_globals():  # ExecuTorch's cpuinfo notices; its side effects
            edge = to_edge_transform_and_lower(program, partitioner=[partitioner.XnnpackPartitioner()],
                                               constant_methods={METADATA_METHOD: json.dumps(meta)})
            return edge.to_executorch().buffer
    except Exception as e:  # torch.export / executorch raise many kinds
        raise export_failure(".pte export", e, model, example, program) from e


def write_pte(model, task, path, *, batch_size: int = 1, quantization: str | None = None,
              tolerance: float | None = 1e-4) -> ExportReport:
    """Lower `model` for `task` at a static `batch_size`, check it against `model`, write `path`.

    `tolerance` bounds the largest |.pte - model| on a check batch (None: only report it; int8
    models differ from their torch reference by rounding steps in XNNPACK's fused kernels)."""
    if int(batch_size) < 1:
        raise UsageError(f"batch_size must be at least 1, got {batch_size!r}")
    path = Path(path)
    meta = pte_metadata(task, batch_size, quantization)
    data = lower_to_pte(model, example_batch(task, int(batch_size)), meta)
    check = example_batch(task, int(batch_size), seed=1)
    diff = check_against_torch(PteRuntime.load(data), model, check, tolerance=tolerance, what="ExecuTorch (.pte)",
                               path=path)
    atomic_write_bytes(path, data)
    fmt = "pte-int8" if quantization else "pte"
    return ExportReport(path, fmt, len(data), diff, {"batch size (static)": int(batch_size)})


def export_pte(learner, path, *, batch_size: int = 1, tolerance: float = 1e-4) -> ExportReport:
    """`learner.export(path, format="pte")` in fp32 (int8: export/__init__.py sends
    ``quantize="int8"`` to qat.py's post-training calibration, which writes through `write_pte`)."""
    task = learner.task
    if task is None:
        raise UsageError("export needs the learner's task (build the learner with tasklearner or load_learner)")
    return write_pte(eval_copy(learner), task, path, batch_size=batch_size, tolerance=tolerance)
