"""Model kind ``"module"``: the user's own ``nn.Module``, as the backbone (``tasklearner(backbone=)``,
plus the task's head) or as the whole model (``tasklearner(model=)``).

Its class is code, not JSON, so a saved model of this kind is rebuilt only from the module the
user passes again: ``load_learner(path, model=...)``. task.json says which of the two it was, so
that the loader (and its errors) can say what to pass:

- a backbone: ``{"backbone": {"kind": "module", "class": ...}, "num_features": n}``, as every
  backbone + head kind; `load_learner` takes the backbone again (and adds the task's head) or the
  whole model (``learner.model``);
- a whole model: ``{"kind": "module", "class": ...}`` (whole models put their kind at the top,
  models/registry.py). Saves before this format wrote ``{"backbone": {"kind": "module", ...}}``
  without ``num_features``; `is_whole_module` reads them as whole models too.
"""
from __future__ import annotations


def build_model(task, *, backbone, pretrained: bool = False):
    from .builder import with_head

    return with_head(task, backbone, module_config(backbone))


def module_config(model) -> dict:
    """The backbone config saved for a module hotstart cannot rebuild: its class name, for errors."""
    return {"kind": "module", "class": type(model).__qualname__}


def whole_module_config(model) -> dict:
    """The model config saved for a whole model of the user's (``tasklearner(model=)``)."""
    return module_config(model)


def is_whole_module(config: dict) -> bool:
    """Whether a model config of kind ``"module"`` records a whole model (not a backbone + head):
    no ``num_features``, which every backbone + head config has."""
    return "num_features" not in config


def module_class(config: dict) -> str | None:
    """The class name a ``"module"`` config records (for errors)."""
    if "class" in config:  # a whole model's config
        return config["class"]
    return (config.get("backbone") or {}).get("class")


def what_to_pass(config: dict) -> str:
    """What `load_learner`'s ``model=`` must be for a config of kind ``"module"``, in words."""
    cls = module_class(config) or "your module"
    if is_whole_module(config):
        return (f"task.json records a whole model of your class {cls} (tasklearner(model=...)): pass "
                f"load_learner(path, model={cls}(...)), built as for training; the saved weights are loaded into it")
    return (f"task.json records your backbone of class {cls} (tasklearner(backbone=...)) plus the task's head: "
            f"pass load_learner(path, model={cls}(...)), the backbone built as for training (hotstart adds the "
            f"head), or the whole model (learner.task_model())")


def model_from_config(config: dict, task):
    from ..errors import UsageError

    raise UsageError(f"cannot rebuild a model of kind 'module' ({module_class(config)}): its class is your code; "
                     f"{what_to_pass(config)}")


def with_given_module(config: dict, task, given):
    """The model to load a saved ``"module"`` config's weights into, from the user's ``model=``:
    a backbone gets the task's head (as `tasklearner(backbone=)` gave it); a whole model (or a
    `TaskModel`, the whole of a backbone + head) is used as it is."""
    from .builder import rebuild_with_head
    from .task_model import TaskModel

    if is_whole_module(config) or isinstance(given, TaskModel):
        return given
    return rebuild_with_head(task, config, given)
