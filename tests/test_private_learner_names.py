"""No module outside hotstart/learner/loop.py uses a private learner name (``learner._x``).

Every module of the package is read with `ast`; an attribute access ``NAME._x`` (or
``self.learner._x``) where NAME is how hotstart's code calls a learner (``learner``, ``learn``,
``ln``) is a private name reached from another module, a sign that a public, documented name is
missing. Dunders (``__class__``) are not private. The same check as
/work/shared/tools/private_reaches.py, kept here so that it cannot come back.
"""
from __future__ import annotations

import ast
from pathlib import Path

import hotstart

ROOT = Path(hotstart.__file__).parent
LEARNER_NAMES = {"learner", "learn", "ln"}


def private_learner_names(source: str, filename: str = "<source>") -> list[tuple[int, str]]:
    """(line, ".name") of each private attribute read or written through a learner in `source`."""
    hits = []
    for node in ast.walk(ast.parse(source, filename)):
        if not isinstance(node, ast.Attribute) or not node.attr.startswith("_") or node.attr.startswith("__"):
            continue
        v = node.value
        name = v.id if isinstance(v, ast.Name) else v.attr if isinstance(v, ast.Attribute) else None
        if name in LEARNER_NAMES:
            hits.append((node.lineno, "." + node.attr))
    return sorted(hits)


def test_the_check_finds_private_learner_names():
    source = ("learner._setup()\nself.learner._valid_dl\nln._skip_batches = 0\nlearner.setup()\n"
              "learner.__class__\nother._private\n")
    assert private_learner_names(source) == [(1, "._setup"), (2, "._valid_dl"), (3, "._skip_batches")]


def test_no_module_outside_the_loop_uses_a_private_learner_name():
    found = []
    for path in sorted(ROOT.rglob("*.py")):
        if path == ROOT / "learner" / "loop.py":
            continue
        found += [f"{path.relative_to(ROOT.parent)}:{line}: {name}"
                  for line, name in private_learner_names(path.read_text(), str(path))]
    assert not found, "private learner names used outside learner/loop.py:\n" + "\n".join(found)


def private_parameters(source: str, filename: str = "<source>") -> list[tuple[int, str, str]]:
    """(line, function, parameter) of each ``_x`` parameter of a public function in `source`."""
    hits = []
    for node in ast.walk(ast.parse(source, filename)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and not node.name.startswith("_"):
            a = node.args
            hits += [(node.lineno, node.name, p.arg) for p in (*a.posonlyargs, *a.args, *a.kwonlyargs)
                     if p.arg.startswith("_")]
    return hits


def test_no_public_function_takes_a_private_parameter():
    """A private keyword in a public signature (``tasklearner(_model_config=)`` was one) is a
    hidden second API: a public function's parameters are all public."""
    assert private_parameters("def tasklearner(task, *, _model_config=None): pass") == \
        [(1, "tasklearner", "_model_config")]
    found = [(str(path.relative_to(ROOT)), *hit) for path in sorted(ROOT.rglob("*.py"))
             for hit in private_parameters(path.read_text(encoding="utf-8"), str(path))]
    assert not found, found
