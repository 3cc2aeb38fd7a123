"""A model's summary (``learner.summary()``): each layer's output shape and parameter count, as fastai's ``summary``.

Shapes come from one forward pass of a meta copy of the model (hotstart/tasks/checks.py): no
activation memory is allocated, so ``resnet50`` at 224x224 summarizes in well under a second and
a few MB. Rows are the model's top-level layers: the backbone's children (a ``Sequential`` opened
one level, as SmallCNN's ``features``) and the head.
"""
from __future__ import annotations

import io

from ..errors import UsageError


def _rows(model):
    import torch.nn as nn

    def expand(prefix, module):
        out = []
        for name, child in module.named_children():
            full = f"{prefix}{name}"
            if isinstance(child, nn.Sequential) and len(child) > 0:
                out += [(f"{full}.{n}", c) for n, c in child.named_children()]
            else:
                out.append((full, child))
        return out

    if hasattr(model, "backbone") and hasattr(model, "head"):
        return expand("backbone.", model.backbone) + [("head", model.head)]
    return expand("", model)


def _count(module) -> tuple[int, int]:
    params = list(module.parameters())
    return sum(p.numel() for p in params if p.requires_grad), sum(p.numel() for p in params if not p.requires_grad)


class SummaryText(str):
    """The summary's text, shown as itself where an object's repr is shown (a notebook cell ending
    in ``learner.summary()``): fastai's ``PrettyString``. Before, the summary was printed and then
    returned as a plain str, so a notebook showed it twice, the second time as one escaped line."""

    def __repr__(self) -> str:
        return str(self)


def summary(model, task, *, batch_size: int = 1, file=None) -> SummaryText:
    """`model`'s table for `task`'s input, as fastai's ``summary``: returned (a notebook shows it;
    a script prints it, ``print(learner.summary())``), and also written to `file` when one is
    given (``file=sys.stdout``); `batch_size` is the first dimension shown."""
    from ..tasks.checks import input_shape, run_on_meta

    shape = input_shape(task) if task is not None else None
    if shape is None:
        raise UsageError("summary needs a task with a fixed input shape (e.g. ImageClassificationSingle(size=...))")
    x_shape = (batch_size, *shape)
    _, recorded = run_on_meta(model, x_shape, record=True)
    out_shapes = {name: s for name, _, s in recorded}  # the last call of each module wins
    fmt = lambda s: " x ".join(str(d) for d in s) if s is not None else "-"  # noqa: E731
    rows = []
    for name, module in _rows(model):
        trainable, frozen = _count(module)
        state = "" if trainable + frozen == 0 else ("True" if frozen == 0 else "False" if trainable == 0 else "partly")
        rows.append((f"{name} ({type(module).__name__})", fmt(out_shapes.get(name)), f"{trainable + frozen:,}", state))
    trainable, frozen = _count(model)
    widths = [max(len(r[i]) for r in rows + [("Layer (type)", "Output shape", "Param #", "Trainable")])
              for i in range(4)]
    line = "=" * (sum(widths) + 6)
    buf = io.StringIO()
    p = lambda *a: print(*a, file=buf)  # noqa: E731
    enc_in, enc_target = task.encoded_blocks()
    p(f"{type(model).__name__} for {type(task).__name__} (input shape: {fmt(x_shape)})")
    p(line)
    p("  ".join(h.ljust(w) for h, w in zip(("Layer (type)", "Output shape", "Param #", "Trainable"), widths)).rstrip())
    p(line)
    for r in rows:
        p("  ".join(v.ljust(w) for v, w in zip(r, widths)).rstrip())
    p(line)
    p(f"Total params: {trainable + frozen:,}")
    p(f"Trainable params: {trainable:,}")
    p(f"Non-trainable params: {frozen:,}")
    p(f"Encoded input: {enc_in!r}")
    p(f"Encoded target: {enc_target!r}")
    text = SummaryText(buf.getvalue())
    if file is not None:
        print(text, end="", file=file)
    return text
