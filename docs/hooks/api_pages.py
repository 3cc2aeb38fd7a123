"""The API reference, generated at build time from the `__all__` lists of hotstart's public modules.

What is public is what the code says: ``hotstart.__all__`` (the lazily exported names) and the
``__all__`` of every package below it and of each top-level module that declares one. Each of
those modules gets a page: its docstring, a table of its names, and the full documentation
(mkdocstrings) of the objects it is the home of. An object exported by several modules (``Learner``
by ``hotstart`` and ``hotstart.learner``) is documented once, on the page of the exporting module
that contains it most closely (``hotstart.learner``), and linked from the others' tables, so
every public name has a row, and every row a link to the object's documentation.

The modules are imported, not parsed: ``__all__`` is often built in code, and lazily exported
names (PEP 562) exist only at run time. Where an object is documented comes from the object
itself (``__module__`` and ``__qualname__``), which mkdocstrings (griffe) then reads statically.
"""
from __future__ import annotations

import importlib
import inspect
import types
from dataclasses import dataclass
from pathlib import Path

import md_table

PAGE_FOLDER = "reference"


@dataclass(frozen=True)
class Name:
    """One public name of one module, and where its object is documented."""

    module: str      # the exporting module, "hotstart.learner"
    name: str        # "Learner"
    target: str      # the object's documented path: "hotstart.learner.loop.Learner", or a module's name
    is_module: bool
    summary: str     # the first line of its docstring ("" for plain values)


@dataclass(frozen=True)
class ModulePage:
    module: str
    names: tuple[Name, ...]
    src_uri: str     # the page's path in the site's sources: the package's own page is the index


def public_module_names(package: types.ModuleType) -> list[str]:
    """The package, every package below it, and its direct modules: from the file tree (no import).
    A name with a part starting with ``_`` is private and left out."""
    root = Path(package.__file__).parent
    found = [package.__name__]
    for init in sorted(root.rglob("__init__.py")):
        parts = init.parent.relative_to(root).parts
        if parts and not any(p.startswith("_") for p in parts):
            found.append(".".join((package.__name__, *parts)))
    for module in sorted(root.glob("*.py")):
        if not module.stem.startswith("_"):
            found.append(f"{package.__name__}.{module.stem}")
    return found


def _target(module: str, name: str, obj) -> tuple[str, bool]:
    if isinstance(obj, types.ModuleType):
        return obj.__name__, True
    defined_in, qualname = getattr(obj, "__module__", None), getattr(obj, "__qualname__", None)
    if isinstance(defined_in, str) and isinstance(qualname, str) and (inspect.isclass(obj) or callable(obj)):
        return f"{defined_in}.{qualname}", False
    return f"{module}.{name}", False  # a value (a constant, a table): griffe follows the module's import


def _summary(obj) -> str:
    if not (inspect.isclass(obj) or inspect.isroutine(obj) or isinstance(obj, types.ModuleType)):
        return ""  # a constant's getdoc() would be its type's docstring
    doc = inspect.getdoc(obj) or ""
    if inspect.isclass(obj) and doc.startswith(f"{obj.__name__}("):
        return ""  # a dataclass without a docstring: the signature dataclasses wrote in its place
    paragraph = doc.strip().split("\n\n")[0]
    return " ".join(paragraph.split())


def module_pages(package_name: str = "hotstart") -> list[ModulePage]:
    """A page per public module that declares ``__all__``, the package itself first."""
    package = importlib.import_module(package_name)
    pages = []
    for module_name in public_module_names(package):
        module = importlib.import_module(module_name)
        exported = getattr(module, "__all__", None)
        if exported is None:
            continue  # a module without __all__ (the CLI, the server) is documented by its pages
        names = []
        for name in exported:
            try:
                obj = getattr(module, name)
            except AttributeError as e:
                raise RuntimeError(f"{module_name}.__all__ lists {name!r}, which the module does not have") from e
            target, is_module = _target(module_name, name, obj)
            names.append(Name(module_name, name, target, is_module, _summary(obj)))
        src_uri = f"{PAGE_FOLDER}/index.md" if module is package else f"{PAGE_FOLDER}/{module_name}.md"
        pages.append(ModulePage(module_name, tuple(names), src_uri))
    return pages


def homes(pages: list[ModulePage]) -> dict[str, str]:
    """Documented path -> the module whose page documents it: among the modules exporting it, the
    longest one that contains it (``hotstart.learner`` for ``hotstart.learner.loop.Learner``), else
    the first exporter."""
    exporters: dict[str, list[str]] = {}
    for page in pages:
        for n in page.names:
            if not n.is_module:
                exporters.setdefault(n.target, []).append(page.module)
    home = {}
    for target, modules in exporters.items():
        containing = [m for m in modules if target.startswith(m + ".")]
        home[target] = max(containing, key=len) if containing else modules[0]
    return home


def _link(n: Name, pages_by_module: dict[str, ModulePage]) -> str:
    if n.is_module and n.target in pages_by_module:
        return f"[`{n.name}`]({Path(pages_by_module[n.target].src_uri).name})"
    return f"[`{n.name}`][{n.target}]"


def render(page: ModulePage, pages: list[ModulePage], home: dict[str, str]) -> str:
    """The Markdown of one module's page: docstring, table of names, then what it is the home of."""
    by_module = {p.module: p for p in pages}
    lines = [f"# `{page.module}`", "",
             f"::: {page.module}", "    options:", "      members: false", "      show_root_heading: false",
             "      show_root_toc_entry: false", "",
             "| name | what it is |", "|---|---|"]
    for n in page.names:
        lines.append(f"| {_link(n, by_module)} | {md_table.cell(n.summary)} |")
    lines.append("")
    for n in page.names:
        if n.is_module and n.target in by_module:
            continue  # a module with a page of its own: the table links to it
        if n.is_module or home.get(n.target) == page.module:
            lines += [f"::: {n.target}", ""]
            if n.is_module:
                lines += ["    options:", "      members: false", ""]
    if page.module == pages[0].module:
        lines += ["## Modules", "", "| module | page |", "|---|---|"]
        lines += [f"| `{p.module}` | [{p.module}]({Path(p.src_uri).name}) |" for p in pages[1:]]
        lines.append("")
    return "\n".join(lines)
