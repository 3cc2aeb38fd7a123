"""No import cycle between hotstart's subpackages, nor between the files of one, lazy imports included.

Every ``import`` / ``from ... import`` statement in every module is read with `ast` (those at
module level and those inside functions alike, since a lazy import is still a dependency), plus
``importlib.import_module("hotstart....")`` calls with a literal name. Each hotstart module
belongs to a unit: its subpackage (``hotstart.learner.loop`` -> ``learner``) or, for a top-level
module, the module itself (``hotstart.atomic`` -> ``atomic``). The root package
(``hotstart/__init__.py``, ``hotstart/__main__.py``) only dispatches and is no unit.

Inside a subpackage the same holds file by file (`file_graph`): ``loop.py -> serialization.py ->
tasklearner.py -> loop.py`` would be a circle of files even where the subpackages are in order.
"""
from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

import hotstart

ROOT = Path(hotstart.__file__).parent


def _module_name(path: Path, root: Path) -> tuple[str, str]:
    """(module name, the package its relative imports resolve against)."""
    parts = [root.name, *path.relative_to(root).with_suffix("").parts]
    if parts[-1] == "__init__":
        parts = parts[:-1]
        return ".".join(parts), ".".join(parts)
    return ".".join(parts), ".".join(parts[:-1])


def _from_module(node: ast.ImportFrom, package: str) -> str:
    """The absolute name of the module a ``from ... import`` reads, its relative dots resolved."""
    if not node.level:
        return node.module or ""
    base = package.split(".")
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _import_module_name(node: ast.AST) -> str | None:
    """The literal name in an ``importlib.import_module("...")`` call, else None."""
    if (isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", None)) == "import_module"
            and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
        return node.args[0].value
    return None


def _imported_names(tree: ast.AST, package: str) -> set[str]:
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            module = _from_module(node, package)
            names.add(module)
            names.update(f"{module}.{a.name}" for a in node.names)  # `from pkg import submodule`
        elif _import_module_name(node):
            names.add(_import_module_name(node))
    return names


def _unit(module: str, top: str) -> str | None:
    parts = module.split(".")
    if parts[0] != top or len(parts) < 2 or parts[1] == "__main__":
        return None
    return parts[1]


def unit_graph(root: Path) -> dict[str, set[str]]:
    """unit -> the other units it imports (anywhere in its code)."""
    edges: dict[str, set[str]] = {}
    paths = sorted(root.rglob("*.py"))
    modules = {_module_name(p, root)[0] for p in paths}
    for path in paths:
        module, package = _module_name(path, root)
        me = _unit(module, root.name)
        if me is None:
            continue
        edges.setdefault(me, set())
        for name in _imported_names(ast.parse(path.read_text(encoding="utf-8"), str(path)), package):
            if name not in modules and name.rsplit(".", 1)[0] not in modules:
                continue  # not one of ours
            if name.count(".") == 1 and name not in modules:
                continue  # `from hotstart import __version__`: a name of the root package, not a unit
            other = _unit(name, root.name)
            if other is not None and other != me:
                edges[me].add(other)
    return edges


def find_cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    cycles, state = [], {}

    def visit(u, stack):
        state[u] = "open"
        stack.append(u)
        for v in sorted(edges.get(u, ())):
            if state.get(v) == "open":
                cycles.append(stack[stack.index(v):] + [v])
            elif v not in state:
                visit(v, stack)
        stack.pop()
        state[u] = "done"

    for u in sorted(edges):
        if u not in state:
            visit(u, [])
    return cycles


@functools.cache
def hotstart_graph() -> dict[str, set[str]]:
    return unit_graph(ROOT)


def test_no_import_cycle_between_subpackages():
    edges = hotstart_graph()
    assert {"learner", "warmup", "compile_cache", "tasks", "blocks"} <= set(edges)
    cycles = find_cycles(edges)
    assert cycles == [], "import cycles between hotstart's subpackages: " + "; ".join(" -> ".join(c) for c in cycles)


def test_compile_cache_sits_below_learner_and_warmup():
    """learner -> compile_cache; warmup -> learner and compile_cache; never the other way."""
    edges = hotstart_graph()
    assert "compile_cache" in edges["learner"] and "compile_cache" in edges["warmup"]
    assert not edges["compile_cache"] & {"learner", "warmup", "tasks", "encodings", "blocks", "datasets"}
    assert "warmup" not in edges["learner"]


def test_the_walk_sees_lazy_and_relative_imports_and_finds_cycles(tmp_path):
    """The checker itself: a cycle made only of a lazy import inside a function, written as a
    relative import, is found (so the tests above can fail)."""
    pkg = tmp_path / "pkgx"
    for sub in ("a", "b", "c"):
        (pkg / sub).mkdir(parents=True)
        (pkg / sub / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "a" / "mod.py").write_text("from ..b import thing\n")
    (pkg / "b" / "mod.py").write_text("def f():\n    from ..a.mod import x\n    return x\n")
    (pkg / "c" / "mod.py").write_text("import importlib\nimportlib.import_module('pkgx.a')\n")
    edges = unit_graph(pkg)
    assert edges == {"a": {"b"}, "b": {"a"}, "c": {"a"}}
    assert find_cycles(edges) == [["a", "b", "a"]]
    (pkg / "b" / "mod.py").write_text("")
    assert find_cycles(unit_graph(pkg)) == []


# DESIGN.md, section 2: contract <- blocks <- encodings <- tasks <- learner <- {warmup, export, interpret,
# cli, serve}; datasets knows only blocks and the contract; the file runtimes sit below the export (which
# checks every file it writes by running it), and deploy.open_model (which also opens model folders, with
# the learner) above both. Each unit here may import none of the units listed against it.
ONLY = {  # unit -> the only units it may import
    "contract": set(),  # nothing of hotstart's at all: a bundle copies it alone
    "predictor": {"contract"},
}
NOT = {  # unit -> units it may not import
    "blocks": {"encodings", "tasks", "learner", "datasets", "export", "runtimes", "deploy", "cli", "serve", "warmup"},
    "encodings": {"tasks", "learner", "datasets", "export", "runtimes", "deploy", "cli", "serve", "warmup"},
    "tasks": {"learner", "export", "runtimes", "deploy", "cli", "serve", "warmup", "interpret"},
    "datasets": {"encodings", "tasks", "learner", "export", "runtimes", "deploy", "cli", "serve", "warmup", "models"},
    "runtimes": {"learner", "export", "deploy", "cli", "serve", "warmup", "tasks", "encodings", "datasets"},
    "export": {"learner", "deploy", "cli", "serve", "warmup"},
    "learner": {"warmup", "interpret", "cli", "serve", "deploy"},
}


@pytest.mark.parametrize("unit", sorted({*ONLY, *NOT}))
def test_the_layers_of_design_md_point_one_way(unit):
    edges = hotstart_graph()
    assert unit in edges, f"no unit {unit!r}: update ONLY / NOT with the code"
    if unit in ONLY:
        assert edges[unit] <= ONLY[unit], f"{unit} imports {sorted(edges[unit] - ONLY[unit])}"
    else:
        assert not edges[unit] & NOT[unit], f"{unit} imports {sorted(edges[unit] & NOT[unit])}"


def test_the_contract_and_the_predictor_import_with_torch_blocked():
    """The contract package (and predictor.py, runtimes' onnxruntime adapter) import and encode in a
    process where torch cannot be imported: the proof that nothing in them needs it."""
    import subprocess
    import sys
    import textwrap

    script = textwrap.dedent("""
        import sys
        class Blocker:
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] in ("torch", "torchvision", "timm", "lightning", "torchmetrics", "pandas"):
                    raise ImportError(f"blocked: {name}")
        sys.meta_path.insert(0, Blocker())
        import numpy as np
        import hotstart.contract as c
        import hotstart.predictor
        meta = {"kind": "TSClassificationSingle", "classes": ["a", "b"],
                "series": {"channels": 1, "length": 4, "normalize": "series", "mask": False}}
        c.check_metadata(meta, "meta")
        print(c.KINDS["TSClassificationSingle"].encoder(meta)(np.arange(3.0)).tolist())
        assert not any(m.split(".")[0] == "torch" for m in sys.modules)
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                          cwd=ROOT.parent)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[[-1.2247449159622192, 0.0, 1.2247449159622192, 0.0]]"  # float32(-1 / sqrt(2/3))


@pytest.mark.parametrize("top_level", ["atomic"])
def test_top_level_modules_are_units(top_level):
    edges = hotstart_graph()
    assert top_level in edges["compile_cache"]  # the manifest is written with hotstart.atomic


def _file_imports(tree: ast.AST, package: str, modules: set[str]) -> set[str]:
    """The hotstart modules a file imports. ``from pkg import sub`` names the module ``pkg.sub``
    when `sub` is one (not ``pkg`` itself: the package is only where Python looks it up);
    ``from pkg import name`` names ``pkg`` (its ``__init__``)."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            module = _from_module(node, package)
            subs = {f"{module}.{a.name}" for a in node.names} & modules
            found |= subs
            if len(subs) < len(node.names):
                found.add(module)
        elif _import_module_name(node):
            found.add(_import_module_name(node))
    return found & modules


def file_graph(root: Path) -> dict[str, set[str]]:
    """module -> the other hotstart modules it imports (anywhere in its code), package __init__s included."""
    paths = sorted(root.rglob("*.py"))
    modules = {_module_name(p, root)[0] for p in paths}
    edges = {}
    for path in paths:
        module, package = _module_name(path, root)
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        edges[module] = _file_imports(tree, package, modules) - {module}
    return edges


def test_no_import_cycle_between_files():
    """Not even inside one subpackage (two files that import each other are one file in two parts)."""
    edges = file_graph(ROOT)
    assert {"hotstart.learner.loop", "hotstart.learner.serialization", "hotstart.cli.train"} <= set(edges)
    cycles = find_cycles(edges)
    assert cycles == [], "import cycles between hotstart's files: " + "; ".join(" -> ".join(c) for c in cycles)


def test_the_file_walk_finds_a_cycle_inside_a_subpackage(tmp_path):
    """The checker itself: a lazy, relative circle of two files in one subpackage is found, and
    ``from . import sibling`` is an edge to the sibling, not to the package."""
    pkg = tmp_path / "pkgy"
    (pkg / "a").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "a" / "__init__.py").write_text("from .one import f\n")
    (pkg / "a" / "one.py").write_text("from . import two\n")
    (pkg / "a" / "two.py").write_text("def g():\n    from .one import f\n    return f\n")
    edges = file_graph(pkg)
    assert edges["pkgy.a.one"] == {"pkgy.a.two"} and edges["pkgy.a"] == {"pkgy.a.one"}
    assert find_cycles(edges) == [["pkgy.a.one", "pkgy.a.two", "pkgy.a.one"]]
    (pkg / "a" / "two.py").write_text("")
    assert find_cycles(file_graph(pkg)) == []
