"""torch.compile for the learner: the backbone only, never the head.

The head's shape depends on the number of classes; the backbone's does not, so compiling the
backbone alone lets a compile cache warmed on 10 classes serve a run on 37. The compile cache
(hotstart.compile_cache) is filled by the warmup.

``compile=True`` compiles when the learner is built; ``False`` never. ``"auto"`` (the default)
is decided when each fit starts, once its number of batches is known (`AutoCompile`, with the
rule in compile_cache/policy.py): compile when the configuration is warm and the fit is long
enough to win back the loading of the warm graphs. Once compiled, a learner stays compiled.
"""
from __future__ import annotations

from ..errors import UsageError

COMPILE_CHOICES = (True, False, "auto")


def check_compile(compile) -> None:
    """Refuse a `compile=` that is not True, False or "auto" (None means "auto": `tasklearner`)."""
    if not any(compile is c or (isinstance(c, str) and compile == c) for c in COMPILE_CHOICES):
        raise UsageError(f"compile must be True, False or 'auto', got {compile!r}")


class AutoCompile:
    """``compile="auto"`` for one learner: its configuration's compile-cache key (None: a custom
    model, which no warmup can have warmed) and its device type; `decide` at each fit's start."""

    def __init__(self, key: str | None, device_type: str):
        from ..compile_cache import compile_decision  # a broken install fails here, not silently later

        self.key, self.device_type = key, device_type
        self._decide = compile_decision

    def decide(self, batches: int, batch_size: int) -> tuple[bool, str]:
        """(compile?, why) for a fit of `batches` training batches of `batch_size`."""
        return self._decide(self.key, device_type=self.device_type, batches=int(batches), batch_size=int(batch_size))


def compile_key(task, backbone, size, device_type: str, precision: str, channels_last: bool) -> str | None:
    """The compile-cache key of a model `tasklearner` builds from `backbone` (a timm name, or None
    for the small CNN) with `task`'s head, or None where no key names the model: a backbone given
    as a module, inputs that are not images, or a task whose model is another kind (a U-Net's
    encoder would share the classifier's key: workloads.py)."""
    from ..compile_cache import config_key

    image = isinstance(size, (tuple, list)) and len(size) == 2
    if not image or task.model_kind is not None or not isinstance(backbone, (str, type(None))):
        return None
    in_chans = getattr(task.encoded_blocks()[0], "channels", 3)
    return config_key(backbone, in_chans, size, device_type, precision, channels_last)


def compile_now(model):
    """Compile `model`'s backbone in place (into hotstart's compile cache); the `CompiledBackbone`
    to give the Learner (``Learner(compiled=)``)."""
    from ..compile_cache import compile_backbone

    return compile_backbone(model)
