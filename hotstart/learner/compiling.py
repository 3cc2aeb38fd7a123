"""torch.compile for the learner: the backbone only, never the head.

The head's shape depends on the number of classes; the backbone's does not, so compiling the
backbone alone lets a compile cache warmed on 10 classes serve a run on 37. The compile cache
(hotstart.compile_cache) is filled by the warmup; ``compile="auto"`` compiles only when it is warm.
"""
from __future__ import annotations

from ..errors import UsageError


def maybe_compile(model, compile, **workload):
    """Compile `model`'s backbone in place when `compile` says so (``"auto"``: when the cache is
    warm for `workload`); returns the `CompiledBackbone` to give the Learner (``Learner(compiled=)``),
    or None when nothing was compiled."""
    if compile is False or compile is None:
        return None
    from ..compile_cache import compile_backbone, should_compile

    if compile == "auto":
        if not should_compile(**workload):
            return None
    elif compile is not True:
        raise UsageError(f"compile must be True, False or 'auto', got {compile!r}")
    return compile_backbone(model)
