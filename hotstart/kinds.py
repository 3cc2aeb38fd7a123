"""Kind names: how blocks, encodings and tasks name their class in JSON, and find it again.

A saved model's ``task.json`` says ``{"kind": "Image", ...}``; loading it must find the class
without unpickling and without importing anything the file names. `Kinded` is the one base of
the three families (``class Block(Kinded, family="block")``, `Encoding`, `SupervisedTask`): the
family's root keeps a `KindRegistry` that its subclasses join as they are defined
(``__init_subclass__``), so a new block, encoding or task of hotstart's, or of a user's, is
registered by existing, with no list to update. `Kinded` also gives the JSON round trip
(``to_dict`` = kind + ``_params()``, ``from_dict``) and value semantics (equal when the type and
the JSON are equal; equal values hash equal).

"The JSON" is one form, `json_dict` (hotstart/strict_json.py's `json_form` of ``to_dict()``):
what ``task.json`` reads back, tuples as lists. Equality, the hash and a checkpoint's check of
its task all compare it, so a parameter given as a tuple equals the list read back from a file,
and a parameter JSON cannot hold (a ``numpy.float32``) is an error naming the class and the
parameter as soon as the JSON is asked for, not a bare ``TypeError`` at ``learner.save``.

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

`freeze` gives the hashable form of the JSON for ``__hash__``: values that compare equal
(``1 == 1.0``, dicts in any key order) freeze to equal, hashable values.
"""
from __future__ import annotations

from typing import Any, ClassVar

from .errors import UnknownKindError, UsageTypeError
from .strict_json import json_form

__all__ = ["Kinded", "KindRegistry", "freeze", "full_name", "is_hotstart_class"]


def full_name(cls: type) -> str:
    """``module.qualname`` of `cls` (``"mypkg.blocks.Image"``): the kind name a user's class is
    written under in JSON, so it never collides with a class of hotstart's of the same short name."""
    return f"{cls.__module__}.{cls.__qualname__}"


def is_hotstart_class(cls: type) -> bool:
    """Whether `cls` is defined in hotstart's own package (its module's top-level name is
    ``hotstart``): such a class is written by its short name (``"Image"``), which the files of
    earlier versions used, and must not share it with another of hotstart's classes."""
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


class Kinded:
    """A class described by JSON, ``{"kind": <name>, **params}``, found again by its kind name.

    A family's root passes ``family=``: ``class Block(Kinded, family="block")``. Every subclass of
    the root is registered in the root's `KindRegistry` when it is defined, and its ``kind`` is the
    name its JSON carries (see the module docstring). Subclasses override:

    - ``_params()``: the constructor arguments, JSON-compatible: str, int, float, bool, None, and
      lists (tuples are read back as lists), dicts of them (default: none);
    - ``_from_params(d)`` (classmethod): the instance `d` (the JSON without ``kind``) describes
      (default: ``cls(**d)``), when the constructor does not take the JSON as it is;
    - ``to_dict()``, when the JSON is more than the kind and ``_params()`` (a task's blocks and
      its ``get_config()``: tasks/base.py).
    """

    kind: ClassVar[str] = "Kinded"
    _kinds: ClassVar[KindRegistry]

    def __init_subclass__(cls, family: str | None = None, **kwargs):
        super().__init_subclass__(**kwargs)
        if family is not None:  # a family's root: the registry its subclasses join
            cls._kinds = KindRegistry(family)
            cls.kind = cls.__qualname__
        else:
            cls.kind = cls._kinds.register(cls)

    def _params(self) -> dict[str, Any]:
        """Constructor arguments, JSON-compatible."""
        return {}

    def to_dict(self) -> dict[str, Any]:
        """The JSON of this object: its kind and `_params()`, in `json_dict`'s form."""
        return json_form({"kind": self.kind, **self._params()}, "", self.json_owner())

    def json_dict(self) -> dict[str, Any]:
        """``to_dict()`` as JSON reads it back (tuples as lists): the one form that equality, the hash
        and a checkpoint's task check compare. A value JSON cannot hold is a `NotJSONError` naming
        this class and the parameter (hotstart/strict_json.py)."""
        return json_form(self.to_dict(), "", self.json_owner())

    def json_owner(self) -> str:
        """Who holds the parameters, in errors: ``"the encoding ToVectorNP"``."""
        return f"the {self._kinds.what} {type(self).__qualname__}"

    @classmethod
    def from_dict(cls, d: dict[str, Any]):
        """The instance a `to_dict` result describes, of whichever class of the family its kind names
        (`UnknownKindError` for an unknown kind)."""
        what = cls._kinds.what
        if not isinstance(d, dict):
            raise UsageTypeError(f"a{'n' if what[0] in 'aeiou' else ''} {what} is described by a dict (JSON object), got {d!r}")
        d = dict(d)
        return cls._kinds.resolve(d.pop("kind", None))._from_params(d)

    @classmethod
    def _from_params(cls, d: dict[str, Any]):
        return cls(**d)

    # --- value semantics: equal JSON, equal values (1 == 1.0, dicts in any key order) ------------
    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and self.json_dict() == other.json_dict()

    def __hash__(self) -> int:
        return hash((type(self), freeze(self.json_dict())))


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
