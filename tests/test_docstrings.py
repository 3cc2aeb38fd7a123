"""Every public name of hotstart has a docstring, and a place in the API reference; without building the site.

The API reference (docs/hooks/api_pages.py) is generated from the ``__all__`` of hotstart's public
modules, and mkdocstrings renders each object from its docstring: a name without one is a heading
with nothing under it. These tests enumerate the public names with the hook's own function
(`api_pages.module_pages`), so they check what the site shows, in about the time it takes to
import hotstart's modules (tests/test_docs_site.py checks the built site itself).

- Modules, classes and functions need a docstring of their own: not one inherited from a base
  class, not the signature ``dataclasses`` writes in place of a missing one.
- A constant (``FORMAT``, ``KINDS``, ...) needs an attribute docstring, a string right after its
  assignment: Python drops it, but griffe reads it from the source, and it is what the page shows.
- A docstring with a Google-style ``Args:`` section (mkdocs.yml: ``docstring_style: google``)
  names exactly the parameters of the signature, each with a type where the signature has no
  annotation: griffe warns otherwise, and the strict build fails on a warning.
"""
from __future__ import annotations

import ast
import dataclasses
import importlib
import importlib.util
import inspect
import re
import sys
import types
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "docs" / "hooks"))

import api_pages  # noqa: E402  (docs/hooks/api_pages.py: mkdocs loads it as a hook, from its folder)


@pytest.fixture(scope="module")
def pages():
    return api_pages.module_pages("hotstart")


def _objects(pages):
    """(exporting module, name, object) once per documented object, where it is documented."""
    home = api_pages.homes(pages)
    seen = set()
    for page in pages:
        module = importlib.import_module(page.module)
        for n in page.names:
            if n.target in seen or (not n.is_module and home[n.target] != page.module):
                continue
            seen.add(n.target)
            yield page.module, n.name, getattr(module, n.name)


def _own_docstring(obj) -> str:
    """The object's own docstring: a class's ``__doc__`` from its own ``__dict__`` (not inherited),
    less the ``Name(field, ...)`` that ``dataclasses`` writes when the class has none."""
    doc = obj.__dict__.get("__doc__") if inspect.isclass(obj) else getattr(obj, "__doc__", None)
    doc = (doc or "").strip()
    if inspect.isclass(obj) and dataclasses.is_dataclass(obj) and doc.startswith(f"{obj.__name__}("):
        return ""
    return doc


def _is_value(obj) -> bool:
    return not (inspect.isclass(obj) or inspect.isroutine(obj) or isinstance(obj, types.ModuleType)
                or callable(obj))


def _attribute_docstring(module_name: str, name: str, _depth: int = 0) -> str:
    """The string literal right after `name`'s assignment, in the module that assigns it: found
    through ``from .x import name`` as griffe follows it."""
    module = importlib.import_module(module_name)
    tree = ast.parse(Path(module.__file__).read_text(encoding="utf-8"))
    body = tree.body
    for i, node in enumerate(body):
        targets = (node.targets if isinstance(node, ast.Assign)
                   else [node.target] if isinstance(node, ast.AnnAssign) else [])
        if any(isinstance(t, ast.Name) and t.id == name for t in targets):
            after = body[i + 1] if i + 1 < len(body) else None
            if isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant) \
                    and isinstance(after.value.value, str):
                return after.value.value.strip()
            return ""
    for node in body:
        if isinstance(node, ast.ImportFrom) and any((a.asname or a.name) == name for a in node.names):
            package = module_name if module.__file__.endswith("__init__.py") else module_name.rpartition(".")[0]
            source = importlib.util.resolve_name("." * node.level + (node.module or ""), package) if node.level \
                else node.module
            original = next(a.name for a in node.names if (a.asname or a.name) == name)
            assert _depth < 10, f"{module_name}.{name}: an import chain too long to follow"
            return _attribute_docstring(source, original, _depth + 1)
    raise AssertionError(f"{module_name}.{name}: neither assigned nor imported at the module's top level")


def test_every_public_name_has_a_docstring(pages):
    """Each documented object says what it is: a docstring of its own (an attribute docstring for
    a constant). The reference's table shows its first paragraph, and its section the rest."""
    missing, checked = [], 0
    for module_name, name, obj in _objects(pages):
        checked += 1
        doc = _attribute_docstring(module_name, name) if _is_value(obj) else _own_docstring(obj)
        if not doc:
            missing.append(f"{module_name}.{name}")
    assert checked > 200, f"only {checked} public objects found: is the enumeration broken?"
    assert not missing, f"{len(missing)} public names have no docstring: {missing}"


def _args_section(doc: str) -> list[tuple[str, bool]] | None:
    """The parameters a Google-style ``Args:`` section names, each with whether it gives a type
    (``name (type): ...``); None without such a section."""
    lines = inspect.cleandoc(doc).splitlines()
    try:
        start = lines.index("Args:")
    except ValueError:
        return None
    entries = []
    for line in lines[start + 1:]:
        if line and not line.startswith(" "):
            break  # the section ends at the next line that is not indented
        m = re.match(r"^    (\*{0,2}\w+)(\s*\([^)]*\))?:", line)
        if m:
            entries.append((m.group(1), bool(m.group(2))))
    return entries


def _documented_callable(obj):
    """The function whose signature a docstring's Args describe: a class's ``__init__``."""
    return obj.__init__ if inspect.isclass(obj) else obj


def test_args_sections_name_the_signatures_parameters(pages):
    """An ``Args:`` section lists the signature's parameters, no more, no fewer, in its order;
    a parameter without an annotation has its type in the docstring (griffe warns otherwise)."""
    problems, sections = [], 0
    for module_name, name, obj in _objects(pages):
        if _is_value(obj) or isinstance(obj, types.ModuleType):
            continue
        entries = _args_section(_own_docstring(obj))
        if entries is None:
            continue
        sections += 1
        params = [p for p in inspect.signature(_documented_callable(obj)).parameters.values() if p.name != "self"]
        spelled = ["*" + p.name if p.kind is p.VAR_POSITIONAL else "**" + p.name if p.kind is p.VAR_KEYWORD
                   else p.name for p in params]
        if [e[0] for e in entries] != spelled:
            problems.append(f"{module_name}.{name}: Args {[e[0] for e in entries]} != signature {spelled}")
        for (entry, typed), p in zip(entries, params):
            if not typed and p.annotation is inspect.Parameter.empty:
                problems.append(f"{module_name}.{name}: {entry} has neither an annotation nor a type in Args")
    assert sections >= 10, f"only {sections} Args sections found: is the parser broken?"
    assert not problems, problems


def test_returns_sections_give_a_type(pages):
    """A ``Returns:`` section of a function without a return annotation gives the type in
    parentheses (``learner (Learner): the learner, ...``; griffe reads ``Learner: ...`` as a name
    without a type): griffe warns otherwise, and the strict build fails."""
    problems = []
    for module_name, name, obj in _objects(pages):
        if not inspect.isfunction(obj):
            continue
        lines = inspect.cleandoc(_own_docstring(obj)).splitlines()
        if "Returns:" not in lines or inspect.signature(obj).return_annotation is not inspect.Signature.empty:
            continue
        first = lines[lines.index("Returns:") + 1] if lines.index("Returns:") + 1 < len(lines) else ""
        if not re.match(r"^    (\w+)?\s*\(.+\):", first):  # griffe's "name (type): description"
            problems.append(f"{module_name}.{name}: Returns without a type: {first.strip()!r}")
    assert not problems, problems


@pytest.mark.parametrize("name", ["Learner", "tasklearner"])
def test_the_entry_points_document_every_parameter(pages, name):
    """`Learner` and `tasklearner`, the two names a reader starts from, list every parameter."""
    import hotstart

    obj = getattr(hotstart, name)
    entries = _args_section(_own_docstring(obj))
    assert entries is not None, f"{name}'s docstring has no Args section"
    params = [p for p in inspect.signature(_documented_callable(obj)).parameters if p != "self"]
    assert [e[0] for e in entries] == params


def test_every_public_name_is_placed_in_the_reference(pages):
    """Each module's page has a row per name of its ``__all__``, and each object is documented
    (``::: path``) on exactly one page; the path leads back to the object, as griffe finds it."""
    home = api_pages.homes(pages)
    rendered = {p.module: api_pages.render(p, pages, home) for p in pages}
    modules_with_pages = {p.module for p in pages}
    for page in pages:
        module = importlib.import_module(page.module)
        assert [n.name for n in page.names] == list(module.__all__), page.module
        text = rendered[page.module]
        for n in page.names:
            assert re.search(rf"^\| \[`{re.escape(n.name)}`\]", text, re.M), f"{page.module}.{n.name}: no row"
            if n.is_module and n.target in modules_with_pages:
                continue
            directive = f"::: {n.target}\n"
            homes_of = [m for m, t in rendered.items() if directive in t]
            assert homes_of, f"{page.module}.{n.name}: {n.target} is documented on no page"
            assert len(homes_of) == 1 or n.is_module, f"{n.target} is documented on {homes_of}"
            if not n.is_module and "<locals>" not in n.target:
                owner, _, attr = n.target.rpartition(".")
                found = None
                for i in range(owner.count(".") + 1, 0, -1):  # the longest importable prefix, then attributes
                    head = ".".join(owner.split(".")[:i])
                    try:
                        found = importlib.import_module(head)
                    except ImportError:
                        continue
                    for part in owner.split(".")[i:] + [attr]:
                        found = getattr(found, part)
                    break
                assert found is getattr(module, n.name), f"{page.module}.{n.name}: {n.target} is another object"
            assert "<locals>" not in n.target, f"{n.target}: a local object, which griffe cannot find"
