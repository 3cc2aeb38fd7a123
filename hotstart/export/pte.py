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
exactly `batch_size` inputs per call (default 1, the usual on-device case). `PteModel` pads a
shorter batch and splits a longer one.

The task travels inside the file as a constant method, ``hotstart_metadata``, that returns one
JSON string: the ONNX export's keys (see onnx.py) with ``format`` = ``hotstart.pte/1`` and
``batch_size``. From C++: ``module.execute("hotstart_metadata")`` gives the string.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from ..atomic import atomic_write_bytes
from ..errors import SavedModelError, UsageError
from .metadata import task_metadata
from .onnx import INPUT_NAME, OUTPUT_NAME, ExportError, ExportReport, failing_layer, eval_copy, example_batch

FORMAT = "hotstart.pte/1"
METADATA_METHOD = "hotstart_metadata"


def pte_metadata(task, batch_size: int, quantization: str | None = None) -> dict[str, str]:
    """The flat metadata of a `.pte` (strings, as in the ONNX file)."""
    meta = task_metadata(task, input_name=INPUT_NAME, output_name=OUTPUT_NAME)
    meta.update(format=FORMAT, batch_size=str(int(batch_size)))
    if quantization:
        meta["quantization"] = quantization
    return meta


def lower_to_pte(model, example, meta: dict[str, str]) -> bytes:
    """`model` (eager or a quantized GraphModule) traced at `example`'s shape, lowered to XNNPACK."""
    import torch
    from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
    from executorch.exir import to_edge_transform_and_lower

    try:
        with torch.no_grad():
            program = torch.export.export(model, (example,), strict=False)
        edge = to_edge_transform_and_lower(program, partitioner=[XnnpackPartitioner()],
                                           constant_methods={METADATA_METHOD: json.dumps(meta)})
        return edge.to_executorch().buffer
    except Exception as e:  # torch.export / executorch raise many kinds
        where = failing_layer(model, example) if isinstance(model, torch.nn.Module) else ""
        raise ExportError(f".pte export failed{where}: {type(e).__name__}: "
                          f"{str(e).strip().splitlines()[0] if str(e).strip() else ''}\nWhat to try: a backbone "
                          "without that layer (the default SmallCNN and timm's resnets export)") from e


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
    diff = _max_difference(data, model, check)
    if tolerance is not None and not diff <= tolerance:
        raise ExportError(f"the .pte and torch outputs differ by up to {diff:.3g} (> tolerance {tolerance:g}) on a "
                          "check batch; the file was not written")
    atomic_write_bytes(path, data)
    fmt = "pte-int8" if quantization else "pte"
    return ExportReport(path, fmt, len(data), diff, {"batch size (static)": int(batch_size)})


def _max_difference(data: bytes, model, x) -> float:
    import torch

    got = PteModel(data).run(x.numpy())
    with torch.no_grad():
        want = model(x).float().numpy()
    return float(np.abs(got - want).max())


def export_pte(learner, path, *, batch_size: int = 1, tolerance: float = 1e-4) -> ExportReport:
    """`learner.export(path, format="pte")` in fp32 (int8: export/__init__.py sends
    ``quantize="int8"`` to qat.py's post-training calibration, which writes through `write_pte`)."""
    task = learner.task
    if task is None:
        raise UsageError("export needs the learner's task (build the learner with tasklearner or load_learner)")
    return write_pte(eval_copy(learner), task, path, batch_size=batch_size, tolerance=tolerance)


class PteModel:
    """A `.pte` written by hotstart, run by ExecuTorch's Python runtime, with the task's
    preprocessing and decoding from predictor.py (as the ONNX predictor does)."""

    def __init__(self, source):
        from executorch.runtime import Runtime

        self.source = source if isinstance(source, (bytes, bytearray)) else Path(source)
        if isinstance(self.source, Path) and not self.source.is_file():
            raise FileNotFoundError(f"{self.source}: no such .pte file")
        try:
            program = Runtime.get().load_program(self.source if isinstance(self.source, bytes) else str(self.source))
            names = program.method_names
        except Exception as e:
            raise SavedModelError(f"{source if isinstance(source, (str, Path)) else '<bytes>'}: ExecuTorch cannot load "
                             f"it: {e}") from e
        if METADATA_METHOD not in names:
            raise SavedModelError(f"{self.source}: not a .pte written by hotstart's export (no {METADATA_METHOD} method)")
        from ..predictor import check_metadata, decode_metadata

        props = json.loads(program.load_method(METADATA_METHOD).execute([])[0])
        if props.get("format") != FORMAT:
            raise SavedModelError(f"{self.source}: not a .pte written by hotstart's export (format {props.get('format')!r})")
        self.meta = decode_metadata(props, str(self.source))  # the predictor's decoding and checks
        check_metadata(self.meta, str(self.source))
        self.batch_size = int(self.meta["batch_size"])
        self.method = program.load_method("forward")
        self.classes = self.meta.get("classes")

    def run(self, batch: np.ndarray) -> np.ndarray:
        """Encoded inputs (N x ...) -> logits (N x classes), `batch_size` at a time (padded)."""
        import torch

        batch = np.ascontiguousarray(batch, dtype=np.float32)
        outs = []
        for start in range(0, len(batch), self.batch_size):
            chunk = batch[start:start + self.batch_size]
            n = len(chunk)
            if n < self.batch_size:  # the file's batch size is static: pad with zeros
                chunk = np.concatenate([chunk, np.zeros((self.batch_size - n, *chunk.shape[1:]), np.float32)])
            out = self.method.execute([torch.from_numpy(chunk)])[0]
            outs.append(out.numpy()[:n])
        return np.concatenate(outs)

    def predict(self, image):
        """(label, probabilities) for one input, preprocessed as predictor.py does."""
        from ..predictor import KINDS

        kind = KINDS[self.meta["kind"]]
        return kind.decode(self.run(kind.encode(image, self.meta)[None])[0], self.meta)
