"""`compile_backbone`: compile a TaskModel's backbone into hotstart's compile cache.

Only the backbone is compiled, never the head: the head's shape depends on the number of
classes, the backbone's does not, so a cache warmed with 10 classes serves a run with 37.

The batch dimension is dynamic (TaskModel.forward marks it), but a dynamic dimension is only as
general as the guards that compilation puts on it, and those guards are stored with each cached
graph: a graph whose guards say ``s0 == 16`` serves batch 16 and nothing else. On CPU, Inductor
decides per reduction whether to accumulate in chunks by asking "is N*H*W > 4096?" of the
*example* batch size and guards on the answer, so a resnet18 training graph warmed at batch 16
and 128x128 (where 16 * 16*16 == 4096 exactly) was guarded to batch == 16, and batch 32 or 64
compiled again. Under ``backed_size_oblivious`` such questions are answered without the example
size and without a guard, so one cached graph serves every batch size. One guard remains on CPU:
aten picks oneDNN convolutions for batches of 16 and more (``input.size(0) >= 16`` in its backend
choice), so a CPU graph serves either batches >= 16 or batches 2..15; the warmup trains at 16 and
validates at 16 and 8, so it fills the training graph for >= 16 and the inference graph for both.
Batch 1 (marked static) gets its own graph.

The price: those CPU sums over more than 4096 elements are accumulated in one pass rather than in
chunks (a float32 rounding difference, well within what training tolerates).
"""
from __future__ import annotations

import contextlib

from .cache import cache_dir, inductor_cache
from .manifest import mark_cache


class CompiledBackbone:
    """How a TaskModel's backbone was compiled: into the cache at `root` (never saved).

    `compile_backbone` returns it; the learner keeps it (``Learner(compiled=...)``) and runs
    fits, validation and prediction in its `context()`."""

    def __init__(self, root):
        self.root = root

    def context(self):
        """The context every call of the compiled model runs in (`compile_context` at this cache)."""
        return compile_context(self.root)


@contextlib.contextmanager
def compile_context(root):
    """What every compiled call runs in: Inductor pointed at the cache, and size-oblivious reasoning
    for the batch dimension (torch's config patch: put back on exit, so nothing global changes)."""
    import torch.fx.experimental._config as shape_config

    with inductor_cache(root), shape_config.patch(backed_size_oblivious=True):
        yield


def compile_backbone(model, *, cache_root=None) -> CompiledBackbone:
    """Compile ``model.backbone`` (a TaskModel's) in place (``nn.Module.compile``: state_dict keys
    unchanged); returns the `CompiledBackbone`, which the model also keeps in its declared
    ``compiled_with`` field (its forward marks the batch dimension dynamic then).

    The learner runs fits, validation and prediction inside the returned object's `context()`,
    so compilation (forward graphs, and backward graphs compiled lazily at the first backward)
    reads and writes hotstart's cache with the same settings in the warmup and in a user's run,
    and leaves ``os.environ`` and torch's config as they were.
    """
    root = cache_dir(cache_root)
    mark_cache(root)  # so that ``warmup --clear`` knows the folder for hotstart's
    with inductor_cache(root):  # importing torch._dynamo already reads (and sets) the cache dir
        model.backbone.compile()
    model.compiled_with = compiled = CompiledBackbone(root)  # TaskModel's field; not in state_dict
    return compiled
