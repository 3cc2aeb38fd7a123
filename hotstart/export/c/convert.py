"""An int8 QDQ ONNX model -> the C files (text), with the arena planned and the RAM limit checked.

    files = convert(onnx.load("digits-int8.onnx"), name="model", ram_limit=16384)
    files.sources  # {"model.c": ..., "model.h": ...}

The task (classes, input size, normalization) comes from the ONNX file's hotstart metadata
(hotstart/export/onnx.py), so any int8 file that hotstart exported converts without the learner.
"""
from __future__ import annotations

import dataclasses
import re

import numpy as np

from ..report import ExportError
from . import emit, graph, memory
from . import ops as O


@dataclasses.dataclass
class CModel:
    program: O.Program
    plan: memory.Plan
    meta: dict
    sources: dict  # file name -> text

    @property
    def weight_bytes(self) -> int:
        """Bytes of const data (weights, biases, multipliers, tables): what goes to flash, besides code."""
        total = 0
        for op in self.program.ops:
            for name in ("weight", "bias", "mult", "shift", "deq"):
                v = getattr(op, name, None)
                if isinstance(v, np.ndarray):
                    total += v.nbytes
        return total

    def summary(self) -> dict:
        biggest = max(self.plan.peak_tensors, key=lambda t: t.numel)
        return {"needs RAM (activation arena)": f"{self.plan.size} bytes",
                "const data (flash, besides code)": f"{self.weight_bytes} bytes",
                "ops": len(self.program.ops),
                "peak at": f"op {self.plan.peak_step} ({self.program.ops[self.plan.peak_step].layer}); "
                           f"largest tensor there {biggest.name} {' x '.join(map(str, biggest.shape))}"}


def hotstart_meta(model) -> dict:
    from ...contract.schema import read_metadata

    try:
        meta = read_metadata({p.key: p.value for p in model.metadata_props})
    except ValueError as e:
        raise ExportError(f"the C export needs a model exported by hotstart: {e}") from None
    if meta.get("kind") not in ("ImageClassificationSingle", "ImageClassificationMulti"):
        raise ExportError(f"the C export is for image classification models; this one is {meta.get('kind')!r}")
    return meta


def convert(model, name: str = "model", ram_limit: int | None = None) -> CModel:
    """`model`: an onnx.ModelProto (int8 QDQ, hotstart's metadata). `name`: the files' stem."""
    if not re.fullmatch(r"[A-Za-z0-9_.-]+", name):
        raise ExportError(f"the C files' name must be letters, digits, '_', '-' or '.', got {name!r}")
    meta = hotstart_meta(model)
    program = graph.read_program(model)
    if tuple(meta["size"]) != tuple(program.input_shape[1:]):
        raise ExportError(f"the metadata's size {meta['size']} differs from the graph's input {program.input_shape}")
    plan = memory.plan(program)
    check_ram(plan, program, ram_limit)
    guard = "HOTSTART_" + re.sub(r"\W", "_", name).upper() + "_H"
    header = f"{name}.h"
    sources = {f"{name}.c": emit.source_text(program, plan, meta, header),
               header: emit.header_text(program, plan, meta, guard)}
    return CModel(program, plan, meta, sources)


def check_ram(plan: memory.Plan, program: O.Program, ram_limit: int | None) -> None:
    if ram_limit is None:
        return
    if int(ram_limit) < 1:
        raise ExportError(f"ram_limit must be a positive number of bytes, got {ram_limit!r}")
    if plan.size > int(ram_limit):
        alive = ", ".join(f"{t.name} ({' x '.join(map(str, t.shape))}, {t.numel} B)"
                          for t in sorted(plan.peak_tensors, key=lambda t: -t.numel))
        raise ExportError(f"the model needs {plan.size} bytes of RAM for its activations, more than the limit "
                          f"of {int(ram_limit)} bytes; at its peak (op {plan.peak_step}, "
                          f"{program.ops[plan.peak_step].layer}) these are alive: {alive}. Use a smaller "
                          f"input size or a narrower backbone (e.g. SmallCNN with smaller widths)")
