"""`check_model`: does this model fit this task? Answered on meta tensors, before any data is read.

A wrong channel count, a head with the wrong number of outputs or an input too small for the
backbone otherwise shows up as a shape error deep in a stack trace after the first batch was read
(or worse, trains silently on a 1x1 feature map). Here the model runs on tensors of the
``meta`` device: shapes propagate through every layer, no activation memory is allocated, no
weight is touched and nothing is read. The caller's model is not changed: a copy runs, whose
parameters are empty meta twins of the model's (`meta_copy`).

    task.check(model)             # tasklearner calls it; raises ModelTaskMismatch saying what to change
"""
from __future__ import annotations

from typing import Any

from ..errors import HotstartError

_ADAPTIVE_POOLS = ("AdaptiveAvgPool2d", "AdaptiveMaxPool2d", "AdaptiveAvgPool1d", "AdaptiveMaxPool1d")


class ModelTaskMismatch(HotstartError, ValueError):
    """The model cannot serve the task: the message says which and what to change."""


def input_shape(task) -> tuple[int, ...] | None:
    """The encoded input's shape without the batch (e.g. (C, H, W)), or None if not static."""
    block = task.encoded_blocks()[0]
    shape = getattr(block, "shape", None)
    shape = shape() if callable(shape) else None
    return None if shape is None or 0 in shape else tuple(int(s) for s in shape)


def expected_output_shape(task) -> tuple[int, ...] | None:
    """What the model must output per sample: the task's `output_shape()` if it has one, else one
    logit per class of the encoded target; None where the task does not say."""
    own = task.output_shape()  # declared on every task (tasks/base.py): None unless the task says
    if own is not None:
        return tuple(own)
    classes = getattr(task.encoded_blocks()[1], "classes", None)
    return None if classes is None else (len(classes),)


def meta_copy(model):
    """A copy of `model` whose parameters and buffers live on the meta device: same structure and
    shapes, no data copied (deepcopy's memo maps each tensor to an empty meta twin)."""
    import copy

    import torch

    memo: dict = {}
    for p in model.parameters():
        memo[id(p)] = torch.nn.Parameter(torch.empty_like(p, device="meta"), requires_grad=p.requires_grad)
    for b in model.buffers():
        memo[id(b)] = torch.empty_like(b, device="meta")
    return copy.deepcopy(model, memo)


class RunningLayer:
    """The named layer of a model that runs now: `watch` puts a forward pre-hook on every named
    submodule that records its name in `name`, so that an error raised in a forward pass can
    name the layer it came from (`forward_failure(..., layer=running.name)`)."""

    def __init__(self):
        self.name: str | None = None

    def watch(self, model) -> list:
        """Hook `model`'s named submodules; returns the hooks' handles (``handle.remove()``)."""
        return [m.register_forward_pre_hook(lambda m, a, name=name: setattr(self, "name", name))
                for name, m in model.named_modules() if name]


def run_on_meta(model, x_shape, *, record: bool = False, running: RunningLayer | None = None):
    """Run a meta copy of `model` (eval mode) on a meta tensor of `x_shape`:
    (output, [(module name, module, output shape)] when `record`). `model` itself is untouched.
    `running`, when given, holds the name of the layer that ran last (the failing one after an error).

    It runs inside `contained_globals` (``os.environ`` put back by `restore_environ`, the
    warnings filters, ...): BatchNorm on meta tensors imports ``torch._dynamo``, which sets
    ``TORCHINDUCTOR_CACHE_DIR`` and (through sympy) adds a warnings filter, and a check of the
    model must leave the application's process as it was."""
    from ..contained_import import contained_globals

    with contained_globals():
        return _run_on_meta(model, x_shape, record=record, running=running)


def _run_on_meta(model, x_shape, *, record: bool, running: RunningLayer | None):
    import torch

    model = meta_copy(model).eval()
    leaves: list[tuple[str, Any, tuple]] = []
    (running or RunningLayer()).watch(model)
    if record:
        for name, m in model.named_modules():
            if name:
                m.register_forward_hook(lambda m, a, out, name=name: leaves.append((name, m, tuple(out.shape)))
                                        if hasattr(out, "shape") else None)
    with torch.no_grad():
        out = model(torch.empty(x_shape, device="meta"))
    return out, leaves


def _first_conv_channels(model) -> tuple[str, int] | None:
    import torch.nn as nn

    for name, m in model.named_modules():
        if isinstance(m, (nn.Conv1d, nn.Conv2d, nn.Conv3d)):
            return name, m.in_channels
        if isinstance(m, nn.Linear):
            return None  # a model that starts with a linear layer: the forward pass tells
    return None


def _last_feature_map(leaves) -> tuple | None:
    """The shape of the last 4-d output of a leaf layer that is not an adaptive pool."""
    maps = [shape for name, m, shape in leaves
            if len(shape) == 4 and type(m).__name__ not in _ADAPTIVE_POOLS and len(list(m.children())) == 0]
    return maps[-1] if maps else None


def _reduction(model, x_shape) -> float | None:
    """How much the backbone shrinks H: measured on a large meta input, from its last feature map
    (before any adaptive pooling)."""
    big = (2, x_shape[1], 1024, 1024)
    try:
        _, leaves = run_on_meta(model, big, record=True)
    except Exception:
        return None
    last = _last_feature_map(leaves)
    return 1024 / min(last[2], last[3]) if last else None


def forward_failure(e: Exception, x_shape, what: str, *, layer: str | None = None) -> ModelTaskMismatch:
    """The error to raise when a model fails on an input of `x_shape` in `layer` (a `RunningLayer`'s
    name, when known): the layer, and what to change."""
    where = f" in layer {layer}" if layer else ""
    msg = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
    hint = ""
    if len(x_shape) == 4 and any(s in msg for s in ("too small", "can't be greater", "non-positive", "Kernel size")):
        hint = (f": the input {x_shape[2]}x{x_shape[3]} is too small for the backbone's downsampling; use a larger "
                f"size=... in the task or a backbone that downsamples less (e.g. the default small CNN)")
    return ModelTaskMismatch(f"the model fails on {what} {tuple(x_shape)}{where}: {msg}{hint}")


def check_model(task, model, *, batch_size: int = 2) -> dict:
    """Raise `ModelTaskMismatch` unless `model` takes the task's encoded input and returns one output
    of the expected shape per sample; return {"input": shape, "output": shape} when it does."""
    shape = input_shape(task)
    if shape is None:
        return {}
    x_shape = (batch_size, *shape)
    name = type(task).__name__
    conv = _first_conv_channels(model) if len(shape) == 3 else None
    if conv is not None and conv[1] != shape[0]:
        raise ModelTaskMismatch(
            f"the model's first convolution ({conv[0]}) takes {conv[1]} input channel(s), but {name} encodes "
            f"images with {shape[0]}: build the backbone with in_chans={shape[0]} (tasklearner does when you pass "
            f"backbone=), or set the Image block's channels to {conv[1]} (Image(channels={conv[1]}))")
    running = RunningLayer()
    try:
        out, leaves = run_on_meta(model, x_shape, record=len(shape) == 3, running=running)
    except Exception as e:
        if not meta_unsupported(e):
            raise forward_failure(e, x_shape, f"{name}'s encoded input", layer=running.name) from e
        # the model cannot be run on meta tensors (data-dependent code, an op without a meta kernel):
        # that says nothing about the shapes, so one real forward pass on a small zero batch decides
        out = run_for_real(model, x_shape, what=f"{name}'s encoded input")
        return {"input": tuple(x_shape), "output": _check_output(task, out)}
    last = _last_feature_map(leaves) if len(shape) == 3 else None
    # last feature maps of 2 pixels or more: the input is larger than the downsampling, no need to
    # measure it on a second, large input (half of the check's time, which tasklearner pays at start)
    if len(shape) == 3 and (last is None or min(last[2], last[3]) < 2):
        reduction = _reduction(model, x_shape)
        if reduction is not None and min(shape[1:]) < reduction:
            need = int(round(reduction))
            raise ModelTaskMismatch(
                f"the input {shape[1]}x{shape[2]} is too small for the backbone, which downsamples by {need}: its "
                f"last feature maps would be under 1 pixel (padding only). Use size=({need}, {need}) or more in the "
                f"task, or a backbone that downsamples less (e.g. the default small CNN)")
    return {"input": tuple(x_shape), "output": _check_output(task, out)}


def _check_output(task, out) -> tuple | None:
    """Raise `ModelTaskMismatch` unless the batched output `out` has the task's shape per sample;
    return that per-sample shape."""
    name = type(task).__name__
    got = tuple(out.shape[1:]) if hasattr(out, "shape") else None
    want = expected_output_shape(task)
    if want is not None and got != want:
        n = want[0] if len(want) == 1 else want
        raise ModelTaskMismatch(
            f"the model outputs {got} per sample, but {name} needs {want}" +
            (f" (one logit per class: {n} classes): give the head {n} outputs, e.g. nn.Linear(num_features, {n}), "
             f"or let tasklearner build it (backbone=... instead of model=...)" if len(want) == 1 else ""))
    return got


_META_MESSAGES = ("meta tensor", "meta device", "'meta' backend", "meta kernel", "fake impl", "no data",
                  "data-dependent", "data dependent")


def meta_unsupported(e: BaseException) -> bool:
    """Whether `e` comes from meta / fake-tensor execution itself (an op with no meta kernel, `.item()`,
    data-dependent control flow) rather than from the model's shapes: then the check cannot be
    answered statically and a real forward pass must decide."""
    if isinstance(e, NotImplementedError):
        return True
    kinds = {k.__name__ for k in type(e).__mro__}
    if kinds & {"DataDependentOutputException", "DynamicOutputShapeException", "GuardOnDataDependentSymNode",
                "UnsupportedOperatorException"}:
        return True
    msg = str(e).lower()
    return any(m in msg for m in _META_MESSAGES)


def run_for_real(model, x_shape, *, what: str):
    """One forward pass of `model` itself on a zero batch of `x_shape` (on the model's device and float
    dtype), in eval mode and without gradients; the model's train/eval state is restored and the hooks
    that name the running layer are removed. A failure is a `ModelTaskMismatch` naming that layer."""
    import torch

    params = list(model.parameters()) + list(model.buffers())
    device = params[0].device if params else torch.device("cpu")
    dtype = next((p.dtype for p in params if p.is_floating_point()), torch.float32)
    modes = {m: m.training for m in model.modules()}
    running = RunningLayer()
    handles = running.watch(model)
    try:
        model.eval()
        with torch.no_grad():
            return model(torch.zeros(x_shape, device=device, dtype=dtype))
    except Exception as e:
        raise forward_failure(e, x_shape, what, layer=running.name) from e
    finally:
        for h in handles:
            h.remove()
        for m, training in modes.items():
            m.training = training

