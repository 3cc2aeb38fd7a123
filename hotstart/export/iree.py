"""IREE ``.vmfb``: the model compiled ahead of time by IREE's MLIR compiler, run by IREE's small runtime.

    learner.export("digits.vmfb")                       # llvm-cpu, for this machine's CPU
    learner.export("digits.vmfb", target_cpu="generic") # any x86-64 (no AVX): slower, portable
    python -m hotstart export runs/hotstart --format iree --out digits.vmfb
    python -m hotstart predict digits.vmfb img.png      # iree-base-runtime (hotstart/runtimes/iree.py)

How: ``torch.export`` (dynamic batch, as the ONNX export) -> iree-turbine's importer (torch ->
MLIR) -> ``iree-compile`` with the ``llvm-cpu`` backend (``--iree-llvmcpu-target-cpu=host`` by
default: the exporting CPU's vector ISA, as the .pt2 export's ``-march=native``). The compiler runs
as its own process (iree-base-compiler's tools), so its diagnostics are captured: when it fails,
the `ExportError` is one paragraph that names the layer, its input shape, the model's input size
and what to try, never the compiler's pages of MLIR. To point at the layer, each node of the
exported graph carries its module path as its source location (the importer turns stack traces
into MLIR locations; the compiler prints the location of the op it fails on).

The task travels inside the module as a reflection attribute of its ``main`` function,
``hotstart_metadata`` (hotstart/runtimes/iree.py reads it): one JSON object of the contract's keys
with ``format`` = ``hotstart.iree/1`` and ``target_cpu``. Like the other exports it checks itself
(export/parity.py): the compiled module runs in IREE beside torch on a check batch.

Needs ``pip install 'hotstart[iree]'`` (iree-turbine, iree-base-compiler, iree-base-runtime).
"""
from __future__ import annotations

import json
import re
from pathlib import Path

from ..atomic import atomic_write_bytes
from ..errors import UsageError
from ..runtimes.iree import FORMAT, METADATA_ATTRIBUTE, IreeRuntime
from .metadata import task_metadata
from .onnx import INPUT_NAME, OUTPUT_NAME, eval_copy, example_batch
from .parity import check_against_torch
from .report import ExportError, ExportReport
from .trace_errors import export_failure, module_path, quiet_trace

LAYER_FILE = "layer "  # the source "file" of each node's location: "layer backbone.layer4.0.conv1 (...)"


def export_iree(learner, path, *, tolerance: float = 1e-4, target_cpu: str = "host",
                extra_args: tuple = ()) -> ExportReport:
    """Compile `learner`'s model to a ``.vmfb`` for the llvm-cpu backend; check it; write `path`.

    `target_cpu`: ``host`` (the exporting CPU: a file may not run on an older CPU), ``generic``
    (any CPU of this architecture), or an LLVM CPU name of this architecture (``x86-64-v3``,
    ``znver4``...): the export runs the file on this machine to check it, so it compiles for this
    architecture only. `extra_args`: more iree-compile flags."""
    task = learner.task
    if task is None:
        raise UsageError("export needs the learner's task (build the learner with tasklearner or load_learner)")
    path = Path(path)
    model = eval_copy(learner)
    example = example_batch(task, 2)
    program = export_program(model, example)
    label_layers(program)
    meta = task_metadata(task, input_name=INPUT_NAME, output_name=OUTPUT_NAME)
    meta.update(format=FORMAT, target_cpu=target_cpu)
    mlir = to_mlir(program, meta)
    data = compile_vmfb(mlir, target_cpu, tuple(example.shape[1:]), extra_args)
    diff = check_against_torch(IreeRuntime.load(data), model, example_batch(task, 3, seed=1), tolerance=tolerance,
                               what="IREE (.vmfb)", path=path)
    atomic_write_bytes(path, data)
    return ExportReport(path, "iree", len(data), diff, {"target": f"llvm-cpu, target cpu {target_cpu}",
                                                        "runs in": "IREE (iree-base-runtime, local-task driver)"})


def export_program(model, example):
    """``torch.export`` with a dynamic batch, decomposed as iree-turbine decomposes (its
    `current_aot_decompositions`), so that the importer sees what its own export path gives it."""
    import torch

    try:
        from iree.turbine.aot.decompositions import current_aot_decompositions
    except ImportError as e:
        raise UsageError(f"format='iree' needs iree-turbine: pip install 'hotstart[iree]' ({e})") from e
    batch = torch.export.Dim("batch", min=1, max=65536)
    try:
        with torch.no_grad(), quiet_trace():
            program = torch.export.export(model, (example,), dynamic_shapes=({0: batch},), strict=False)
    except Exception as e:  # torch.export raises many kinds; name the layer
        raise export_failure("torch.export", e, model, example) from e
    decompositions = current_aot_decompositions()
    return program.run_decompositions(decompositions) if decompositions else program


def label_layers(program) -> None:
    """Give each node of `program` (ours: just exported) its layer as its stack trace, so that the
    MLIR location of every op, and of every compiler error, names the layer: ``layer
    backbone.layer4.0.conv1 (Conv2d, input Nx256x2x2)`` (N: the dynamic batch)."""
    for node in program.graph.nodes:
        stack = node.meta.get("nn_module_stack")
        if not stack:
            continue
        path, kind = list(stack.values())[-1]
        kind = kind if isinstance(kind, str) else getattr(kind, "__name__", str(kind))
        first = node.args[0] if node.args else None
        value = first.meta.get("val") if hasattr(first, "meta") else None
        shape = "x".join(str(d) if isinstance(d, int) else "N" for d in value.shape) if hasattr(value, "shape") else ""
        name = f"{module_path(path)} ({kind.rsplit('.', 1)[-1]}{', input ' + shape if shape else ''})"
        node.meta["stack_trace"] = f'  File "{LAYER_FILE}{name}", line 1, in forward\n'


def to_mlir(program, meta: dict[str, str]) -> bytes:
    """`program` imported by iree-turbine as MLIR bytecode, with `meta` as ``main``'s reflection."""
    import io

    from iree.compiler import ir
    from iree.turbine import aot

    exported = aot.export(program, function_name="main")
    module = exported.mlir_module
    with module.context:
        for op in module.regions[0].blocks[0].operations:
            if "sym_name" in op.attributes and ir.StringAttr(op.attributes["sym_name"]).value == "main":
                op.attributes["iree.reflection"] = ir.DictAttr.get(
                    {METADATA_ATTRIBUTE: ir.StringAttr.get(json.dumps(meta, sort_keys=True))})
                break
        else:
            raise ExportError("iree-turbine's module has no 'main' function to attach the metadata to")
    out = io.BytesIO()
    module.write_bytecode(out)
    return out.getvalue()


def compile_vmfb(mlir: bytes, target_cpu: str, input_shape: tuple, extra_args: tuple = ()) -> bytes:
    """iree-compile `mlir` for llvm-cpu; a failure becomes one paragraph (`explain_compile_error`)."""
    from iree.compiler.tools import CompilerToolError, compile_str

    try:
        return bytes(compile_str(mlir, target_backends=["llvm-cpu"], input_type="auto",
                                 extra_args=[f"--iree-llvmcpu-target-cpu={target_cpu}", *extra_args]))
    except CompilerToolError as e:
        raise ExportError(explain_compile_error(str(e), input_shape)) from None


def explain_compile_error(diagnostics: str, input_shape: tuple) -> str:
    """One paragraph from iree-compile's diagnostics: the first error, the layer it is in (from
    `label_layers`' locations), the input size, and what to try."""
    from iree.compiler.version import VERSION

    errors = [line for line in diagnostics.splitlines() if "error:" in line]
    first = errors[0] if errors else next((line for line in diagnostics.splitlines() if line.strip()), "")
    # a location prints as `layer NAME:1:0: error: ...`, or quoted inside callsite(...) / fused[...]
    pattern = rf'{LAYER_FILE}([^"\n]+?\))"?:1:\d+'
    layer = re.search(pattern, first) or re.search(pattern, diagnostics)
    message = first.split("error:", 1)[1].strip() if "error:" in first else first.strip()
    message = message if len(message) <= 240 else message[:240] + "..."
    size = " x ".join(str(d) for d in input_shape[1:]) if len(input_shape) == 3 else "x".join(map(str, input_shape))
    channels = f" with {input_shape[0]} channel(s)" if len(input_shape) == 3 else ""
    where = f"layer {layer.group(1)}" if layer else "a layer it did not name"
    return (f"IREE's compiler (iree-base-compiler {VERSION}, llvm-cpu) failed on {where}, for the input size "
            f"{size}{channels}: {message}. What to try: a larger input size (timm's resnet10t, whose last stage "
            "gets 2 x 2 inputs at 32 x 32, fails there and compiles at 64 x 64), another backbone, or "
            "format='onnx', 'tflite' or 'pte' for this model; IREE_SAVE_TEMPS=DIR keeps the compiler's files for a "
            "bug report.")
