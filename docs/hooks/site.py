"""The MkDocs hook that generates, at every build, the pages made from the code and the repository.

- ``notebooks/NAME.ipynb``: the notebooks in notebooks/, as stored (executed, with their outputs, by
  notebooks/store_outputs.py); mkdocs-jupyter renders them with ``execute: false``.
- ``reference/*.md``: a page per public module (api_pages.py), the command line's ``--help``
  (cli_pages.py) and the metadata schema of an exported model (metadata_schema.py).
- ``benchmarks.md``: benchmarks/README.md, included as it is.

Nothing generated is written into the checkout: the files are virtual (`File.generated`). The build
documents the hotstart it imports, so it checks that this is the checkout's own.
"""
from __future__ import annotations

import re
from pathlib import Path

import api_pages
import cli_pages
import metadata_schema
from mkdocs.plugins import event_priority
from mkdocs.structure.files import File

_state: dict = {}


def _root(config) -> Path:
    return Path(config.config_file_path).resolve().parent


def _check_import(root: Path) -> None:
    import hotstart

    imported = Path(hotstart.__file__).resolve().parent.parent
    if imported != root:
        raise RuntimeError(f"the docs build imports hotstart from {imported}, not from this checkout ({root}): "
                           f"`pip install -e .` here, or run with PYTHONPATH={root}")


def on_config(config):
    root = _root(config)
    _check_import(root)
    _state.update(root=root, cli=cli_pages.start(str(root)))  # the --help processes run while we import
    pages = api_pages.module_pages("hotstart")
    _state.update(pages=pages, home=api_pages.homes(pages))
    # the Reference section: the overview (hotstart itself) first, then a page per public module
    for item in config.nav:
        if isinstance(item, dict) and "Reference" in item:
            modules = [{p.module: p.src_uri} for p in pages[1:]]
            item["Reference"][1:1] = [{"Modules": modules}]
    return config


def _benchmarks_page(root: Path) -> str:
    text = (root / "benchmarks" / "README.md").read_text(encoding="utf-8")
    # a relative link there points into benchmarks/, which the site does not hold: name the file instead
    text = re.sub(r"\[([^\]]+)\]\((?!https?://|#)([^)]+)\)", r"\1 (`benchmarks/\2`)", text)
    note = ("!!! note \"Where this page comes from\"\n"
            "    This page is `benchmarks/README.md`, included when the site is built. The scripts are in\n"
            "    `benchmarks/`, and the raw results of every round in `benchmarks/results/`.\n\n")
    first, _, rest = text.partition("\n")
    return f"{first}\n\n{note}{rest}" if first.startswith("# ") else note + text


@event_priority(100)  # before mkdocs-jupyter's on_files, which must see the notebooks
def on_files(files, config):
    root, pages, home = _state["root"], _state["pages"], _state["home"]
    for notebook in sorted((root / "notebooks").glob("*.ipynb")):
        # a real file with the repository as its source folder (mkdocs-jupyter wraps the File and
        # reads it from src_dir, so File.generated's virtual files do not work with it)
        files.append(File(f"notebooks/{notebook.name}", src_dir=str(root), dest_dir=config.site_dir,
                          use_directory_urls=config.use_directory_urls))
    for page in pages:
        files.append(File.generated(config, page.src_uri, content=api_pages.render(page, pages, home)))
    files.append(File.generated(config, "reference/cli.md", content=cli_pages.render(_state["cli"])))
    files.append(File.generated(config, "reference/metadata.md", content=metadata_schema.render()))
    files.append(File.generated(config, "benchmarks.md", content=_benchmarks_page(root)))
    return files
