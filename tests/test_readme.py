"""The README's Python examples run as written."""
import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parent.parent / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)


def test_readme_has_examples():
    assert len(BLOCKS) >= 3


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_readme_example_runs(index, capsys):
    exec(compile(BLOCKS[index], f"README.md[python block {index}]", "exec"), {"__name__": "readme"})
    assert capsys.readouterr().out  # each example prints something


def test_layout_table_names_every_subpackage_and_only_paths_that_exist():
    """The "Layout" table: each of hotstart's subpackages and top-level modules has a row, and
    each path it names exists."""
    root = README.parent
    section = README.read_text().split("## Layout", 1)[1].split("\n## ", 1)[0]
    first_cells = re.findall(r"^\| (.+?) \|", section, flags=re.M)
    named = [p for cell in first_cells for p in re.findall(r"`([^`]+)`", cell)]
    paths, folder = [], None
    for p in named:  # "`hotstart/kinds.py`, `errors.py`": a bare name is beside the one before it
        path = Path(p) if "/" in p else folder / p
        folder = path.parent if path.suffix else path
        paths.append(path)
    missing = [str(p) for p in paths if not (root / p).exists()]
    assert not missing, f"README's Layout names paths that do not exist: {missing}"
    subpackages = {p.parent.name for p in (root / "hotstart").glob("*/__init__.py")}
    listed = {p.parts[1] for p in paths if p.parts[0] == "hotstart" and len(p.parts) > 1}
    assert subpackages <= listed, f"README's Layout has no row for {sorted(subpackages - listed)}"
    modules = {p.name for p in (root / "hotstart").glob("*.py")} - {"__init__.py", "__main__.py"}
    named_modules = {p.name for p in paths if p.parent == Path("hotstart") and p.suffix == ".py"}
    assert modules <= named_modules, f"README's Layout names no row for {sorted(modules - named_modules)}"
