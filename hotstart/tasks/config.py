"""A task's configuration: the constructor arguments that rebuild it, checked against the constructor.

A task is rebuilt from its configuration (``task.get_config()``, Keras' ``get_config``) whenever
something of it changes (``setup`` learning a table's statistics, ``set_size``, ``with_stats``)
and when a saved model is loaded (``task.json`` holds the configuration). An argument of a
subclass's constructor that the configuration does not hold would be lost at each of those, and
the model would train or predict with its default without a word. So:

- `check_declared`: every parameter that a subclass's ``__init__`` adds to those of the hotstart
  task it derives from must be a key of its ``get_config()``; if not, a `UsageTypeError` says
  which and how to declare it (``{**super().get_config(), "gamma": self.gamma}``);
- `build`: ``cls(*args, **config)``, with a `UsageTypeError` naming the class and the keys its
  constructor does not take instead of a bare ``TypeError`` from inside it.
"""
from __future__ import annotations

import functools
import inspect
from typing import Any

from ..errors import UsageTypeError
from ..kinds import is_hotstart_class

RESERVED = ("kind", "blocks")
"""Keys of a task's JSON that are not configuration: a ``get_config()`` may not return them."""


def check_declared(task_cls: type, config: dict[str, Any]) -> None:
    """Refuse a configuration of `task_cls` that misses a constructor parameter the class adds
    (see the module docstring), or that holds a reserved key (`RESERVED`). A class that writes and
    reads its own JSON (`manages_own_json`) is not checked: its ``to_dict`` may carry what its
    ``get_config`` does not."""
    name = task_cls.__qualname__
    reserved = [k for k in RESERVED if k in config]
    if reserved:
        raise UsageTypeError(f"{name}.get_config() returns {reserved}: these keys are the task's kind and blocks, "
                             f"which its JSON holds already; name the parameter otherwise")
    missing = [] if manages_own_json(task_cls) else [p for p in added_parameters(task_cls) if p not in config]
    if missing:
        example = ", ".join(f'"{p}": self.{p}' for p in missing)
        raise UsageTypeError(
            f"{name}.__init__ takes {missing}, which {name}.get_config() does not return: "
            f"{'it' if len(missing) == 1 else 'they'} would be lost whenever the task is rebuilt (tasklearner's "
            f"setup, set_size, with_stats) or saved and loaded, and the task would silently use the default. "
            f"Declare {'it' if len(missing) == 1 else 'them'} in {name}: "
            f"def get_config(self): return {{**super().get_config(), {example}}}")


@functools.lru_cache(maxsize=None)
def manages_own_json(task_cls: type) -> bool:
    """Whether a class of the user's, below hotstart's task it derives from, defines ``to_dict`` or
    ``_from_params``: the way a subclass carried its own parameters before ``get_config`` (the
    ``Kinded`` docstring's override points), which still works."""
    for cls in task_cls.__mro__:
        if is_hotstart_class(cls):
            return False
        if "to_dict" in vars(cls) or "_from_params" in vars(cls):
            return True
    return False


@functools.lru_cache(maxsize=None)
def added_parameters(task_cls: type) -> tuple[str, ...]:
    """The parameters of `task_cls`'s constructor beyond those of the nearest class of hotstart's in
    its MRO that defines one (hotstart's own tasks keep theirs in their configuration their own
    way: a series task's ``normalize`` lives in its preprocessing). ``self``, ``blocks``,
    ``*args`` and ``**kwargs`` are not counted."""
    base = next(c for c in task_cls.__mro__ if is_hotstart_class(c) and "__init__" in vars(c))
    return tuple(p for p in _parameters(task_cls) if p not in _parameters(base))


def _parameters(cls: type) -> tuple[str, ...]:
    try:
        signature = inspect.signature(cls.__init__)
    except (TypeError, ValueError):  # a constructor without a signature (C code): nothing to check
        return ()
    plain = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    names = [p.name for p in signature.parameters.values() if p.kind in plain]
    return tuple(n for n in names[1:] if n != "blocks")  # names[0] is self


def require_keys(cls: type, config: dict[str, Any], keys: tuple[str, ...]) -> None:
    """Refuse a configuration of `cls` that lacks one of `keys`: those its JSON always holds, so a
    ``task.json`` without one is damaged, not a task of the constructor's defaults (an image model
    trained at 8x8 loaded at the default 128x128 would predict garbage without a word)."""
    missing = [k for k in keys if k not in config]
    if missing:
        raise UsageTypeError(f"{cls.__qualname__}'s configuration lacks {missing} (it has {sorted(config)})")


def build(cls: type, args: list, config: dict[str, Any]):
    """``cls(*args, **config)``: the task a configuration describes. A constructor that does not take
    the configuration's keys is a `UsageTypeError` naming the class and the keys (a subclass whose
    constructor differs from its base's overrides ``from_config``)."""
    try:
        inspect.signature(cls).bind(*args, **config)
    except TypeError as e:
        raise UsageTypeError(
            f"{cls.__qualname__} cannot be rebuilt from its configuration {sorted(config)}: {e}. A task whose "
            f"constructor takes other arguments than its base's overrides get_config() and from_config() "
            f"(see SupervisedTask.get_config)") from None
    except ValueError:  # no signature to check: let the call say what is wrong
        pass
    return cls(*args, **config)
