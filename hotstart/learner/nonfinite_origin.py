"""Where a NaN or an infinity began: the first module, in forward order, whose output became
non-finite, or, in backward order, whose output's gradient did.

    origin = locate_nonfinite(model, xb, yb, loss_func, epoch=3, batch=17)
    print(origin)   # "forward output of backbone.2 (Conv2d) at epoch 3, batch 17, samples [4, 9]"

The non-finite guard (callbacks/nan_guard.py, through nan_rollback.py) calls this once, when it has found a non-finite
loss or gradient, on the batch that failed: the batch is run again with a forward hook on every
module and a gradient hook on every module output. The normal path pays nothing, since no hook
exists until then. ``fit(..., detect_anomaly=True)`` keeps the same hooks on every batch instead
(callbacks/detect_anomaly.py), for debugging.

Forward hooks fire when a module finishes, so a layer fires before the block that contains it:
the first module reported is the innermost one whose own computation made the value non-finite.
Gradient hooks fire in backward order, from the loss towards the input. Sample indices are the
positions in the batch (rows of the module's output that hold a non-finite value).

Re-running leaves everything as it was: the buffers (BatchNorm's running statistics) are
restored, gradients are computed with ``torch.autograd.grad`` (nothing is written to ``.grad``),
and the torch RNG is forked (dropout draws do not move the caller's stream).
"""
from __future__ import annotations

import dataclasses

import torch


@dataclasses.dataclass
class NonFiniteOrigin:
    module: str  # qualified name in the model ("" for the model itself), e.g. "backbone.2"
    module_type: str  # its class name, e.g. "Conv2d"
    where: str  # "forward output", "gradient of the output", or "loss"
    epoch: int | None
    batch: int | None  # batch index in the epoch
    samples: list[int]  # positions in the batch whose values are not finite
    value: str  # "nan", "inf" or "nan and inf"

    def __str__(self):
        name = f"{self.module} ({self.module_type})" if self.module else f"the model ({self.module_type})"
        what = "the loss" if self.where == "loss" else f"{self.where} of {name}"
        at = ", ".join(x for x in (f"epoch {self.epoch}" if self.epoch is not None else "",
                                   f"batch {self.batch}" if self.batch is not None else "") if x)
        return f"{what} became {self.value} first, at {at}, samples {self.samples}"

    def as_dict(self) -> dict:
        return dataclasses.asdict(self)


class NonFiniteHooks:
    """Forward and gradient hooks on every module of `model`, recording the first non-finite
    output (forward order) and gradient (backward order). A context manager: removed on exit."""

    def __init__(self, model: torch.nn.Module):
        self.model = model
        self.first_forward: tuple | None = None  # (name, module, tensor)
        self.first_backward: tuple | None = None
        self._handles = []

    def __enter__(self):
        for name, module in self.model.named_modules():
            self._handles.append(module.register_forward_hook(self._forward_hook(name)))
        return self

    def __exit__(self, *exc):
        for h in self._handles:
            h.remove()
        self._handles = []

    def reset(self):
        self.first_forward = self.first_backward = None

    def _forward_hook(self, name):
        def hook(module, args, output):
            for t in _tensors(output):
                if self.first_forward is None and not bool(torch.isfinite(t).all()):
                    self.first_forward = (name, module, t.detach())
                if t.requires_grad:
                    t.register_hook(self._grad_hook(name, module))
        return hook

    def _grad_hook(self, name, module):
        def hook(grad):
            if self.first_backward is None and not bool(torch.isfinite(grad).all()):
                self.first_backward = (name, module, grad.detach())
        return hook

    def origin(self, epoch=None, batch=None, loss=None) -> NonFiniteOrigin | None:
        """The first non-finite output, else the loss if it is not finite, else the first gradient."""
        if self.first_forward is not None:
            return _origin(*self.first_forward, "forward output", epoch, batch)
        if loss is not None and not bool(torch.isfinite(loss).all()):
            return NonFiniteOrigin("", "loss", "loss", epoch, batch, [], _value(loss))
        if self.first_backward is not None:
            return _origin(*self.first_backward, "gradient of the output", epoch, batch)
        return None


def locate_nonfinite(model, xb, yb, loss_func, *, epoch: int | None = None, batch: int | None = None,
                     autocast=None) -> NonFiniteOrigin | None:
    """Run one batch again with hooks and say where it first became non-finite (None: it did not).

    `model` keeps its mode (train / eval), its buffers and its gradients; `autocast` is the
    learner's autocast context factory (mixed precision runs as in training)."""
    import contextlib

    saved = [(b, b.detach().clone()) for b in model.buffers()]
    params = [p for p in model.parameters() if p.requires_grad]
    devices = [xb.device] if torch.is_tensor(xb) and xb.device.type == "cuda" else []
    try:
        with torch.random.fork_rng(devices=devices), NonFiniteHooks(model) as hooks:
            with torch.enable_grad(), (autocast or contextlib.nullcontext)():
                loss = loss_func(model(xb), yb)
            found = hooks.origin(epoch, batch, loss)
            if found is None and params and loss.requires_grad:
                torch.autograd.grad(loss, params, allow_unused=True)
                found = hooks.origin(epoch, batch, loss)
            return found
    finally:
        with torch.no_grad():
            for buf, value in saved:
                buf.copy_(value)


def _tensors(output):
    if torch.is_tensor(output):
        return [output] if output.is_floating_point() else []
    if isinstance(output, (tuple, list)):
        return [t for o in output for t in _tensors(o)]
    if isinstance(output, dict):
        return [t for o in output.values() for t in _tensors(o)]
    return []


def _value(t) -> str:
    nan, inf = bool(torch.isnan(t).any()), bool(torch.isinf(t).any())
    return "nan and inf" if nan and inf else "nan" if nan else "inf"


def _origin(name, module, t, where, epoch, batch) -> NonFiniteOrigin:
    bad = ~torch.isfinite(t)
    rows = bad.reshape(bad.shape[0], -1).any(1) if bad.ndim > 1 else bad
    samples = rows.nonzero().flatten().tolist() if bad.ndim > 1 else []
    return NonFiniteOrigin(name, type(module).__name__, where, epoch, batch, samples, _value(t))
