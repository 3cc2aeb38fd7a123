"""Model kind ``"module"``: the user's own ``nn.Module`` as the backbone, plus the task's head.

Its class is code, not JSON, so a saved model of this kind is rebuilt only from the model the
user passes again (``load_learner(path, model=...)``).
"""
from __future__ import annotations


def build_model(task, *, backbone, pretrained: bool = False):
    from .builder import with_head

    return with_head(task, backbone, module_config(backbone))


def module_config(model) -> dict:
    """The backbone config saved for a module hotstart cannot rebuild: its class name, for errors."""
    return {"kind": "module", "class": type(model).__qualname__}


def model_from_config(config: dict, task):
    from ..errors import UsageError

    cls = (config.get("backbone") or {}).get("class")
    raise UsageError(f"cannot rebuild a backbone of kind 'module' ({cls}): its class is your code; "
                     f"pass model=... to load_learner")
