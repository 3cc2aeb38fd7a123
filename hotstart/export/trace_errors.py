"""An export that fails, explained in one paragraph: the layer, what in it failed, what to try.

torch.export, the ONNX exporter and ExecuTorch fail with messages written for their own
developers: a data-dependent branch prints the partial graph to stderr and raises
``GuardOnDataDependentSymNode`` with ANSI colour codes; an op ExecuTorch cannot run is named as
``aten.median.dim``, not as the layer of the user's model it came from. `export_failure` turns any
of them into an `ExportError` that names the layer by its module path and type (``backbone.2
(Median)``):

- a tracing failure: each submodule is traced alone, from the top down, with the inputs it got
  in a forward pass, and the deepest one that fails on its own is the layer;
- a lowering failure (the graph was captured, a backend refused an op): the op named in the error
  is looked up in the captured graph, whose nodes record the module they came from
  (``node.meta["nn_module_stack"]``).

`quiet_trace` keeps what the tracers print while they fail (the partial graphs, the symbolic-shape
warnings) off the terminal; on success it lets it through.
"""
from __future__ import annotations

import contextlib
import io
import logging
import re
import sys

from .report import ExportError

__all__ = ["export_failure", "failing_layer", "module_path", "quiet_trace", "DEFAULT_HINT"]

ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
ATEN_OP = re.compile(r"\baten\.([A-Za-z0-9_]+)\.([A-Za-z0-9_]+)")
DEFAULT_HINT = "a backbone without that layer (the default SmallCNN and timm's resnets export)"
_TRACE_LOGGERS = ("torch.fx.experimental.symbolic_shapes", "torch.export", "torch._export")


class _Hold(logging.Filter):
    def __init__(self):
        super().__init__()
        self.records: list[logging.LogRecord] = []

    def filter(self, record):
        self.records.append(record)
        return False


@contextlib.contextmanager
def quiet_trace():
    """Hold what torch's tracers print to ``sys.stderr`` and log while the block runs; let it
    through if the block succeeds, drop it if it raises (the raised error says what failed)."""
    held, buffer = _Hold(), io.StringIO()
    loggers = [logging.getLogger(name) for name in _TRACE_LOGGERS]
    for logger in loggers:
        logger.addFilter(held)
    ok = False
    try:
        with contextlib.redirect_stderr(buffer):
            yield
        ok = True
    finally:
        for logger in loggers:
            logger.removeFilter(held)
        if ok:
            sys.stderr.write(buffer.getvalue())
            for record in held.records:
                logging.getLogger(record.name).handle(record)


def plain_message(error: BaseException) -> str:
    """The first non-empty line of `error`'s message, without terminal colour codes."""
    lines = [line.strip() for line in ANSI.sub("", str(error)).splitlines() if line.strip()]
    return lines[0] if lines else ""


def failing_layer(model, x) -> tuple[str, str, BaseException] | None:
    """(module path, type name, its error) of the deepest submodule of `model` that torch.export
    cannot trace on its own with the input it gets in a forward pass on `x`; None when each
    traces alone."""
    import torch

    if not isinstance(model, torch.nn.Module):
        return None
    inputs: dict = {}
    names = {m: name for name, m in model.named_modules()}
    hooks = [m.register_forward_pre_hook(lambda m, args: inputs.setdefault(names[m], args))
             for m in names if m is not model]
    try:
        with torch.no_grad(), quiet_trace():
            model(x)
    except Exception:
        pass  # the forward may fail itself; the inputs recorded so far still serve
    finally:
        for h in hooks:
            h.remove()
    found = None
    parent = model
    while True:
        culprit = None
        for name, child in parent.named_children():
            path = names[child]
            if path not in inputs:
                continue
            try:
                with torch.no_grad(), quiet_trace():
                    torch.export.export(child, inputs[path], strict=False)
            except Exception as e:
                culprit = child
                found = (path, type(child).__name__, e)
                break
        if culprit is None:
            return found
        parent = culprit


def module_path(path: str) -> str:
    """A module path as torch.export records it (``nn_module_stack``), in the form a user writes it:
    ``L['self'].layer1[0]`` -> ``layer1.0`` (strict export's form; non-strict already gives ``layer1.0``)."""
    path = re.sub(r"^L\['self'\]\.?", "", str(path))
    return re.sub(r"\[(\d+)\]", r".\1", path).replace("._modules['", ".").replace("']", "")


def layer_of_op(program, error: BaseException) -> tuple[str, str | None, str | None] | None:
    """(op, module path, type name) of the first node of the captured `program` (an
    ExportedProgram) running the aten op that `error` names; None when it names none."""
    found = ATEN_OP.search(ANSI.sub("", str(error)))
    if found is None:
        return None
    op = f"aten.{found.group(1)}.{found.group(2)}"
    if program is None:
        return op, None, None
    for node in program.graph_module.graph.nodes:
        if node.op == "call_function" and str(node.target) == op:
            stack = node.meta.get("nn_module_stack") or {}
            if stack:
                path, cls = list(stack.values())[-1]
                name = cls.__name__ if isinstance(cls, type) else str(cls).rsplit(".", 1)[-1]
                return op, module_path(path), name
    return op, None, None


def export_failure(what: str, error: BaseException, model, x, program=None, hint: str = DEFAULT_HINT) -> ExportError:
    """An `ExportError`, one paragraph, for `error` raised while exporting `model` (traced at `x`;
    `program`: the captured ExportedProgram when capture succeeded and a later step failed)."""
    detail = plain_message(error)
    kind = type(error).__name__
    if program is not None:
        op = layer_of_op(program, error)
        if op is not None:
            name, path, cls = op
            where = f" in layer {path} ({cls})" if path else ""
            return ExportError(f"{what} failed{where}: it uses the op {name}, which the target runtime cannot run "
                               f"({kind}: {detail}). What to try: {hint}")
    layer = failing_layer(model, x)
    if layer is not None:  # the layer's own error says more than the whole model's
        error, detail, kind = layer[2], plain_message(layer[2]), type(layer[2]).__name__
    where = f" in layer {layer[0]} ({layer[1]}; {kind})" if layer else ""
    if "data-dependent" in str(error) or "DataDependent" in kind:
        why = ("its forward branches on the values of a tensor (data-dependent control flow), which a traced "
               "graph cannot hold; compute both branches and select with torch.where, or use torch.cond")
        return ExportError(f"{what} failed{where}: {why} ({kind}: {detail}). What to try: {hint}")
    return ExportError(f"{what} failed{where}: {kind}: {detail}. What to try: {hint}")
