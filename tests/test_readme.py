"""The Python examples of the README and of the guide's pages (docs/guide/) run as written."""
import json
import os
import re
import sys
from pathlib import Path

import pytest

import prestart
from readme_blocks import ROOT, executed_pages, matches_stated, python_blocks, stated_outputs

README = ROOT / "README.md"
LAYOUT = ROOT / "docs" / "layout.md"  # the README's "Layout" points here
PAGES = executed_pages()
BLOCKS = [(page.relative_to(ROOT).as_posix(), index) for page in PAGES for index in range(len(python_blocks(page)))]


@prestart.job("readme")
def _run_the_blocks(folder):
    """Every block of every page in order, in one fresh process, in the background from the start:
    the blocks train on digits for a minute in all (tests/readme_blocks.py)."""
    threads = os.environ.get("HOTSTART_TEST_THREADS", "1")  # as conftest.py sets them in this process
    return prestart.Job([sys.executable, Path(__file__).parent / "readme_blocks.py", *PAGES],
                        env={"OMP_NUM_THREADS": threads}, timeout=900)


def test_stated_outputs_match_with_dots_for_any_text():
    """The "# ->" convention: the stated text must be a whole printed line, "..." standing for any text."""
    source = "print(a)  # -> {'loss': ..., 'accuracy': ...}\nprint(b)   #->  0 ... same as torch: True\nx = 1  # no"
    assert stated_outputs(source) == ["{'loss': ..., 'accuracy': ...}", "0 ... same as torch: True"]
    assert matches_stated("0 ... same as torch: True", "wrote x\n0 0.89 same as torch: True\n")
    assert not matches_stated("0 ... same as torch: True", "0 0.89 same as torch: False")
    assert not matches_stated("('Gentoo', ...)", "('Adelie', tensor([0.9]))")


def test_readme_has_examples():
    """The README shows code for each kind of data it trains on, and the guide has its own pages."""
    readme = [source for source in python_blocks(README)]
    assert len(readme) >= 3
    for name in ("ImageClassificationSingle", "TabularClassificationSingle", "TSClassificationSingle"):
        assert any(name in source and "fit_one_cycle" in source for source in readme), name
    assert len(PAGES) > 1 and all(python_blocks(page) for page in PAGES[1:] if page.name != "index.md")


@pytest.mark.parametrize("page, index", BLOCKS, ids=[f"{page}-{index}" for page, index in BLOCKS])
@pytest.mark.prestart("readme")
def test_readme_example_runs(page, index):
    run = prestart.result("readme")
    ran = {(r["file"], r["index"]): r for r in map(json.loads, run.stdout.splitlines())}
    assert (page, index) in ran, f"the block runner stopped before {page} block {index}: {run.stderr[-3000:]}"
    assert ran[page, index]["error"] is None, ran[page, index]["error"]
    assert ran[page, index]["printed"]  # each example prints something
    source = python_blocks(ROOT / page)[index]
    for stated in stated_outputs(source):  # and what the page says it prints ("# -> ..."), it prints
        assert matches_stated(stated, ran[page, index]["printed"]), \
            f"{page} block {index} says it prints {stated!r}; it printed:\n{ran[page, index]['printed']}"
    assert not list(run.folder.iterdir())  # and writes nothing into the folder it runs in


def test_layout_table_names_every_subpackage_and_only_paths_that_exist():
    """The "Layout" table (docs/layout.md, where the README's "Layout" points): each of hotstart's
    subpackages and top-level modules has a row, and each path it names exists."""
    root = ROOT
    assert "docs/layout.md" in README.read_text().split("## Layout", 1)[1].split("\n## ", 1)[0]
    section = LAYOUT.read_text().split("## The repository", 1)[1].split("\n## ", 1)[0]
    first_cells = re.findall(r"^\| (.+?) \|", section, flags=re.M)
    named = [p for cell in first_cells for p in re.findall(r"`([^`]+)`", cell)]
    paths, folder = [], None
    for p in named:  # "`hotstart/kinds.py`, `errors.py`": a bare name is beside the one before it
        path = Path(p) if "/" in p else folder / p
        folder = path.parent if path.suffix else path
        paths.append(path)
    missing = [str(p) for p in paths if not (root / p).exists()]
    assert not missing, f"docs/layout.md names paths that do not exist: {missing}"
    subpackages = {p.parent.name for p in (root / "hotstart").glob("*/__init__.py")}
    listed = {p.parts[1] for p in paths if p.parts[0] == "hotstart" and len(p.parts) > 1}
    assert subpackages <= listed, f"docs/layout.md has no row for {sorted(subpackages - listed)}"
    modules = {p.name for p in (root / "hotstart").glob("*.py")} - {"__init__.py", "__main__.py"}
    named_modules = {p.name for p in paths if p.parent == Path("hotstart") and p.suffix == ".py"}
    assert modules <= named_modules, f"docs/layout.md names no row for {sorted(modules - named_modules)}"
