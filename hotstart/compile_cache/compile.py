"""`compile_backbone`: compile a TaskModel's backbone into hotstart's compile cache.

Only the backbone is compiled, never the head: the head's shape depends on the number of
classes, the backbone's does not, so a cache warmed with 10 classes serves a run with 37.
"""
from __future__ import annotations

from .cache import cache_dir, inductor_cache


class CompiledBackbone:
    """Marker of how a TaskModel's backbone was compiled (kept on the model, never saved)."""

    def __init__(self, root):
        self.root = root


def compile_backbone(model, *, cache_root=None):
    """Compile ``model.backbone`` in place (``nn.Module.compile``: state_dict keys unchanged).

    The learner runs fits, validation and prediction inside ``model.compile_context()``, so
    compilation (forward graphs, and backward graphs compiled lazily at the first backward)
    reads and writes hotstart's cache and leaves ``os.environ`` as it was.
    """
    root = cache_dir(cache_root)
    with inductor_cache(root):  # importing torch._dynamo already reads (and sets) the cache dir
        model.backbone.compile()
    model.compile_context = lambda: inductor_cache(root)  # instance attribute; not in state_dict
    model.compiled_with = CompiledBackbone(root)
    return model
