"""ONNX export: ``learner.export("model.onnx")`` -> one self-contained .onnx file that knows its task.

    learner.export("digits.onnx")                       # fp32, checked against torch
    learner.export("digits-int8.onnx", quantize="int8")  # see quantize.py
    python -m hotstart export runs/hotstart/model --format onnx --out digits.onnx

How: ``torch.onnx.export(..., dynamo=True)`` (torch.export + onnxscript), traced with a batch of 2
so that the batch dimension stays dynamic (a batch of 1 would be specialized into the graph).
The file holds its weights (no external data) for models under 2 GB, and no pickle. After
writing, the export runs onnxruntime and torch on the same batch (of another size than the
traced one) and fails if the largest difference exceeds `tolerance`.

Graph: one input ``input`` (float32, N x C x H x W: the task's encoded input, normalized) and one
output ``logits`` (float32, N x classes: before the activation).

Metadata (``ModelProto.metadata_props``; each value a string, JSON unless said otherwise). These
keys are the model contract's schema (hotstart/contract/schema.py reads and checks them; the web
page reads them too): add keys, never change one.

=================  ==============================================================================
key                value
=================  ==============================================================================
format             ``hotstart.onnx/1`` (plain string)
kind               the task kind, e.g. ``ImageClassificationSingle`` (plain string)
hotstart_version   hotstart's version that exported it (plain string)
input_name         the graph input's name, ``input`` (plain string)
output_name        the graph output's name, ``logits`` (plain string)
classes            list of class labels, in output order (JSON: ints stay ints)
size               [height, width] the image is resized to
channels           1 or 3: the model's input channels
image_mode         ``L``, ``RGB`` or ``auto``: the PIL mode an image is converted to before resizing
                   (``auto``: grayscale stays L, everything else becomes RGB; then gray is repeated
                   to 3 channels if ``channels`` is 3, or RGB reduced to luminance
                   0.299 R + 0.587 G + 0.114 B if ``channels`` is 1)
mean, std          per-channel normalization, applied as (x / 255 - mean) / std
resize             ``bilinear-antialias``: torchvision's resize(antialias=True) on uint8, which is
                   Pillow-SIMD's fixed-point two-pass filter (horizontal pass first)
activation         ``softmax`` (single label) or ``sigmoid`` (multi label): logits -> probabilities
threshold          multi label only: a class is predicted when its probability >= threshold
task               the full task JSON (``task.to_dict()``), as in a saved learner's task.json
table              tables only: {categorical, continuous, vocab, na_columns, median, mean, std},
                   the TabularPreprocessing statistics; the input is N x (categories + indicators +
                   continuous) float32, built as hotstart/encodings/tabular.py describes
outputs            regression only: how many numbers the model outputs per row
target_mean,       regression only: per output; a prediction in the target's units is
target_std         output * target_std + target_mean (``activation`` is ``none``)
=================  ==============================================================================

Each task kind's keys come from one function in hotstart/export/metadata.py (`KIND_METADATA`).
"""
from __future__ import annotations

import copy
from pathlib import Path

import numpy as np

from ..atomic import atomic_write_bytes
from ..errors import UsageError
from ..predictor import Predictor  # the onnxruntime runtime: it checks each file the export writes
from .metadata import task_metadata
from .parity import check_against_torch
from .report import ExportError, ExportReport

INPUT_NAME, OUTPUT_NAME = "input", "logits"
_TWO_GB = 2 * 1024 ** 3


def eval_copy(learner):
    """The learner's model (backbone + head), on the CPU, in eval mode, as a copy: exporting never
    changes the learner (its device, its train/eval mode, a compiled wrapper)."""
    model = copy.deepcopy(learner.task_model()).cpu().eval()
    if getattr(model, "compiled_with", None) is not None:
        model.compiled_with = None  # the export traces plain eager code
    return model


def example_batch(task, n: int, seed: int = 0):
    """`n` mock inputs encoded for inference, stacked: a deterministic batch that needs no data."""
    import torch

    rng = np.random.default_rng(seed)
    return torch.stack([task.encode_input(task.mock_sample(rng)[0]) for _ in range(n)])


def export_onnx(learner, path, *, tolerance: float = 1e-4, opset: int | None = None) -> ExportReport:
    """Write `learner`'s model to `path` as ONNX with the task in its metadata; check it; report."""
    task = learner.task
    if task is None:
        raise UsageError("export needs the learner's task (build the learner with tasklearner or load_learner)")
    return write_onnx(eval_copy(learner), task, path, tolerance=tolerance, opset=opset)


def write_onnx(model, task, path, *, tolerance: float | None = 1e-4, opset: int | None = None,
               extra_metadata: dict[str, str] | None = None, format: str = "onnx") -> ExportReport:
    """Export `model` (eager, or a quantized GraphModule from export/qat.py) for `task` to `path`,
    checked against `model` on a batch of another size than the traced one (`tolerance` None:
    report the difference only, as for int8 models whose rounding differs by a step)."""
    path = Path(path)
    meta = {**task_metadata(task, input_name=INPUT_NAME, output_name=OUTPUT_NAME), **(extra_metadata or {})}
    program = _torch_onnx_export(model, example_batch(task, 2), opset)
    program.model.metadata_props.update(meta)
    proto = strip_symbolic_value_info(program.model_proto)
    if proto.ByteSize() >= _TWO_GB:
        raise ExportError(f"the model is {proto.ByteSize() / 1e9:.1f} GB: ONNX files over 2 GB need external "
                          "data, which this export does not write (export format='pt2' instead)")
    data = proto.SerializeToString()
    check = example_batch(task, 3, seed=1)  # another batch size than the traced one: the batch is dynamic
    diff = check_against_torch(Predictor.load(data), model, check, tolerance=tolerance, what="onnxruntime", path=path,
                               hint=". An op may be exported inexactly: try opset=... or another backbone")
    atomic_write_bytes(path, data)
    return ExportReport(path, format, len(data), diff)


def strip_symbolic_value_info(proto):
    """`proto` without the intermediate shapes (``graph.value_info``) that name the symbolic
    ``batch`` dimension; returns `proto`.

    Why: torch's exporter (and onnxruntime's quant_pre_process) record every intermediate tensor's
    shape with the symbol ``batch``. tract, the Rust engine used on embedded Linux, then fails as
    soon as it is given a concrete input shape ("Impossible to unify Sym(batch) with Val(1)"),
    because it treats those annotations as facts to unify with its own. They are hints only:
    onnxruntime, OpenCV and tract infer the shapes again from the input. Graph inputs and outputs
    keep their shapes."""
    keep = [vi for vi in proto.graph.value_info
            if not any(d.dim_param for d in vi.type.tensor_type.shape.dim)]
    del proto.graph.value_info[:]
    proto.graph.value_info.extend(keep)
    return proto


def _torch_onnx_export(model, x, opset):
    import torch

    from .trace_errors import DEFAULT_HINT, export_failure, quiet_trace

    batch = torch.export.Dim("batch", min=1, max=65536)
    try:
        with torch.no_grad(), quiet_trace():
            program = torch.onnx.export(model, (x,), dynamo=True, input_names=[INPUT_NAME],
                                        output_names=[OUTPUT_NAME], dynamic_shapes=({0: batch},),
                                        opset_version=opset, external_data=False, verbose=False)
    except Exception as e:  # torch.export / onnxscript raise many kinds; name the layer for the user
        raise export_failure("ONNX export", e, model, x, hint=DEFAULT_HINT + ", format='pt2' (torch.export + "
                             "AOTInductor, no ONNX op coverage needed), or another opset=...") from e
    return program
