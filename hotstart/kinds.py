"""Kind names: how blocks, encodings and tasks name their class in JSON, and find it again.

A saved model's ``task.json`` says ``{"kind": "Image", ...}``; loading it must find the class
without unpickling and without importing anything the file names. Each base class (`Block`,
`Encoding`, `SupervisedTask`) keeps a `KindRegistry` that its subclasses join as they are defined
(``__init_subclass__``), so a new block, encoding or task of hotstart's, or of a user's, is
registered by existing, with no list to update.

Names:
- hotstart's own classes are written by their short name (``"Image"``,
  ``"ImageClassificationSingle"``): the files that earlier versions wrote keep loading, and two
  of hotstart's own classes may not share a short name (checked when the second is defined);
- any other class is written as ``module.qualname`` (``"mypkg.blocks.Image"``), so a user's
  ``class Image(Block)`` never replaces hotstart's ``Image`` when a model is loaded.

Reading accepts a short name of hotstart's, a full ``module.qualname``, and (for files written
before full names) the bare name of a user's class when exactly one registered class has it.
Anything else is an `UnknownKindError` that says what is known; an ambiguous bare name lists the
candidates. A module named in a file is never imported: define (import) your classes before
loading.

`freeze` gives the hashable form of JSON-like parameters for ``__hash__``: values that compare
equal (``1 == 1.0``, dicts in any key order) freeze to equal, hashable values.
"""
from __future__ import annotations

from typing import Any

from .errors import UnknownKindError

__all__ = ["KindRegistry", "freeze", "full_name", "is_hotstart_class"]


def full_name(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def is_hotstart_class(cls: type) -> bool:
    return cls.__module__.split(".")[0] == "hotstart"


class KindRegistry:
    """Classes of one family (``what``: "block", "encoding", "task") by the names JSON uses."""

    def __init__(self, what: str):
        self.what = what
        self._by_full: dict[str, type] = {}
        self._own_short: dict[str, type] = {}

    def register(self, cls: type) -> str:
        """Add `cls`; return the kind name its JSON carries."""
        full = full_name(cls)
        self._by_full[full] = cls  # a class defined again (a notebook cell run twice) replaces itself
        if not is_hotstart_class(cls):
            return full
        short = cls.__qualname__
        other = self._own_short.get(short)
        if other is not None and full_name(other) != full:
            raise TypeError(f"two of hotstart's {self.what} classes are named {short!r} "
                            f"({full_name(other)} and {full}): a saved kind {short!r} would be ambiguous")
        self._own_short[short] = cls
        return short

    def resolve(self, name: Any) -> type:
        """The class a JSON kind name stands for (see the module docstring for the rules)."""
        if not isinstance(name, str):
            raise UnknownKindError(f"a {self.what}'s kind must be a string, got {name!r}")
        cls = self._own_short.get(name) or self._by_full.get(name)
        if cls is not None:
            return cls
        bare = [c for c in self._by_full.values() if not is_hotstart_class(c) and c.__qualname__ == name]
        if len(bare) == 1:
            return bare[0]
        if len(bare) > 1:
            raise UnknownKindError(
                f"{self.what} kind {name!r} is ambiguous: it could be any of "
                f"{sorted(full_name(c) for c in bare)}; write the full name (module.qualname)")
        own = sorted(k for k in self._own_short if not k.startswith("_"))
        others = sorted(k for k, c in self._by_full.items() if not is_hotstart_class(c))
        raise UnknownKindError(
            f"unknown {self.what} kind {name!r}. hotstart's own: {own}; others defined in this process: {others}. "
            f"A {self.what} class of your own must be imported before the model is loaded")

    def names(self) -> list[str]:
        """Every kind name that `resolve` accepts exactly (hotstart's short names, then full names)."""
        return sorted(self._own_short) + sorted(self._by_full)


def freeze(value: Any) -> Any:
    """A hashable stand-in for a JSON-like value, equal for values that compare equal."""
    if isinstance(value, dict):
        return frozenset((k, freeze(v)) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return tuple(freeze(v) for v in value)
    if isinstance(value, (set, frozenset)):
        return frozenset(freeze(v) for v in value)
    try:
        hash(value)
    except TypeError:
        return repr(value)
    return value
