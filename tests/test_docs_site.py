"""The documentation site builds in strict mode, documents every public name, and renders in Chromium.

The build (``mkdocs build --strict``, as docs/README.md says) runs once, as a prestart job
(tests/prestart.py), in the background from the end of collection; every test here reads the site
it wrote. Strict mode fails the build on any warning: a broken link or anchor, a reference
mkdocstrings cannot resolve, a page left out of the navigation.

The browser test serves the built site on 127.0.0.1 and drives Debian's Chromium through playwright.
It saves two screenshots (the home page, and the API page of `Learner`) in $HOTSTART_DOCS_SHOTS, by
default ``<tmp>/hotstart-docs-shots``. Without mkdocs (``pip install -e '.[docs]'``), Chromium or
playwright the tests are skipped, saying what to install; under CI=true they fail instead.
"""
from __future__ import annotations

import html.parser
import importlib
import inspect
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from urllib.parse import unquote, urljoin, urlparse

import numpy as np
import pytest

import headless_chromium
import prestart

ROOT = Path(__file__).resolve().parents[1]
IN_CI = os.environ.get("CI", "").lower() == "true"


def _need(missing: list[str]) -> None:
    """Skip (fail under CI=true, which must install everything) when something is missing."""
    if missing:
        message = "the docs site test needs " + "; ".join(missing)
        if IN_CI:
            pytest.fail(message + " (CI=true: .ci/run installs them)")
        pytest.skip(message)


def _docs_missing() -> list[str]:
    try:
        import mkdocs  # noqa: F401
        import mkdocstrings  # noqa: F401
    except ImportError:
        return ["the docs extra (pip install -e '.[docs]')"]
    return []


@prestart.job("docs:build")
def _build(folder):
    """``mkdocs build --strict`` of this checkout into `folder`/site."""
    return prestart.Job([sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file", ROOT / "mkdocs.yml",
                         "--site-dir", folder / "site"],
                        # Material's end-of-life notice is a print to stderr, not a warning: keep the log clean
                        env={"NO_MKDOCS_2_WARNING": "1"}, timeout=600)


PRESTART = pytest.mark.prestart(*([] if _docs_missing() else ["docs:build"]))


@pytest.fixture(scope="module")
def site() -> Path:
    _need(_docs_missing())
    run = prestart.result("docs:build")
    assert run.returncode == 0, f"mkdocs build --strict failed:\n{run.stderr[-5000:]}"
    warnings = [line for line in run.stderr.splitlines() if line.startswith(("WARNING", "ERROR"))]
    assert not warnings, warnings
    assert "Documentation built in" in run.stderr
    print(f"docs build: {run.seconds:.1f} s")
    return run.folder / "site"


class _Page(html.parser.HTMLParser):
    """A built page's element ids, and the rows of its tables as (cells' text, first cell's link):
    all of them in `rows`, and table by table in `tables`."""

    def __init__(self, text: str):
        super().__init__()
        self.ids: set[str] = set()
        self.rows: list[tuple[list[str], str | None]] = []
        self.tables: list[list[tuple[list[str], str | None]]] = []
        self._row = self._cell = self._href = None
        self.feed(text)

    def names_table(self) -> list[tuple[list[str], str | None]]:
        """The rows of a module page's table of names (header: name, what it is); not those of
        the tables that docstrings render (parameters, attributes), whose first cells are names too."""
        found = [rows for rows in self.tables if rows and rows[0][0] == ["name", "what it is"]]
        assert len(found) == 1, f"{len(found)} tables of names on the page"
        return found[0][1:]

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if "id" in attrs:
            self.ids.add(attrs["id"])
        if tag == "table":
            self.tables.append([])
        if tag == "tr":
            self._row, self._href = [], None
        elif tag in ("td", "th") and self._row is not None:
            self._cell = []
        elif tag == "a" and self._cell is not None and not self._row and self._href is None:
            self._href = attrs.get("href")

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self._row.append(" ".join("".join(self._cell).split()))
            self._cell = None
        elif tag == "tr" and self._row is not None:
            self.rows.append((self._row, self._href))
            if self.tables:
                self.tables[-1].append((self._row, self._href))
            self._row = None


def _page(site: Path, url_path: str) -> _Page:
    file = site / url_path / "index.html" if not url_path.endswith(".html") else site / url_path
    assert file.is_file(), f"the site has no page {url_path}"
    return _Page(file.read_text(encoding="utf-8"))


def _public_modules() -> list:
    """hotstart, every package below it and its top-level modules, imported, that declare ``__all__``
    (found here independently of the site's generator, docs/hooks/api_pages.py)."""
    import hotstart

    root = Path(hotstart.__file__).parent
    names = ["hotstart"]
    names += [".".join(("hotstart", *p.parent.relative_to(root).parts)) for p in sorted(root.rglob("__init__.py"))
              if p.parent != root and not any(part.startswith("_") for part in p.parent.relative_to(root).parts)]
    names += [f"hotstart.{p.stem}" for p in sorted(root.glob("*.py")) if not p.stem.startswith("_")]
    modules = [importlib.import_module(n) for n in names]
    return [m for m in modules if hasattr(m, "__all__")]


@PRESTART
def test_every_public_name_links_to_its_documentation(site):
    """Each public module has a page with a row per name of its ``__all__``, and the row's link
    leads to a page and an anchor that exist: the object's rendered documentation."""
    pages: dict[str, _Page] = {}
    for module in _public_modules():
        url_path = "reference" if module.__name__ == "hotstart" else f"reference/{module.__name__}"
        page = _page(site, url_path)
        links = {cells[0]: href for cells, href in page.names_table() if cells}
        for name in module.__all__:
            assert name in links, f"{module.__name__}.{name} has no row on {url_path}/"
            href = links[name]
            assert href, f"{module.__name__}.{name}: its row links nowhere"
            target = urlparse(urljoin(f"http://site/{url_path}/", href))
            target_path = unquote(target.path).strip("/")
            if target_path not in pages:
                pages[target_path] = _page(site, target_path)
            if target.fragment:
                assert unquote(target.fragment) in pages[target_path].ids, \
                    f"{module.__name__}.{name} links to {href}, which {target_path}/ lacks"
            else:  # a module: its own page
                assert isinstance(getattr(module, name), type(sys)), (module.__name__, name, href)


@PRESTART
def test_tutorials_show_the_stored_outputs(site):
    """Each notebook has a page, with its stored outputs (never executed by the build): the text
    of its first output and, where it stored figures, its images."""
    notebooks = sorted((ROOT / "notebooks").glob("*.ipynb"))
    assert notebooks
    for path in notebooks:
        text = (site / "notebooks" / path.stem / "index.html").read_text(encoding="utf-8")
        outputs = [o for c in json.loads(path.read_text(encoding="utf-8"))["cells"] for o in c.get("outputs", [])]
        streams = ["".join(o["text"]).strip() for o in outputs if o.get("output_type") == "stream"]
        assert streams, f"{path.name} is stored without printed outputs"
        first_line = streams[0].splitlines()[0]
        assert html.escape(first_line, quote=False) in text, (path.name, first_line)
        figures = sum("image/png" in o.get("data", {}) for o in outputs)
        assert text.count("data:image/png;base64,") >= figures, path.name


@PRESTART
def test_command_line_page_is_each_commands_help(site):
    """The page holds every command's ``--help`` as the command prints it (at the build's width)."""
    from hotstart.cli import COMMANDS

    text = (site / "reference" / "cli" / "index.html").read_text(encoding="utf-8")
    for name in COMMANDS:
        assert f"usage: python -m hotstart {name}" in text, name
    assert "usage: python -m hotstart.warmup" in text
    env = {**os.environ, "COLUMNS": "100", "HOTSTART_SERVER": "0",
           "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    printed = subprocess.run([sys.executable, "-m", "hotstart", "train", "--help"], capture_output=True, text=True,
                             env=env, check=True).stdout
    page = _Page(text)
    blocks = [" ".join(t.split()) for t in _code_blocks(text)]
    assert " ".join(printed.split()) in "\n".join(blocks), "the train --help on the page is not what it prints"
    assert "hotstart-train" in page.ids


def _code_blocks(text: str) -> list[str]:
    """The text of each <pre> block of a page."""
    class Pre(html.parser.HTMLParser):
        def __init__(self):
            super().__init__()
            self.blocks, self._depth = [], 0

        def handle_starttag(self, tag, attrs):
            if tag == "pre":
                self._depth += 1
                self.blocks.append("")

        def handle_endtag(self, tag):
            if tag == "pre":
                self._depth -= 1

        def handle_data(self, data):
            if self._depth:
                self.blocks[-1] += data

    parser = Pre()
    parser.feed(text)
    return parser.blocks


@PRESTART
def test_metadata_page_says_what_the_loader_enforces(site, digits):
    """For an exported digits classifier's metadata: each key the page marks required for its kind
    is refused when missing (the error names it), and each optional one is not."""
    from hotstart import ImageClassificationSingle
    from hotstart.export.metadata import task_metadata
    from hotstart.contract import KINDS, MetadataError, check_metadata, decode_metadata

    data, blocks = digits
    meta = decode_metadata(task_metadata(ImageClassificationSingle(blocks, size=(8, 8))))
    kind = meta["kind"]
    page = _page(site, "reference/metadata")
    header = next(cells for cells, _ in page.rows if cells and cells[0] == "key" and len(cells) == len(KINDS) + 1)
    assert header[1:] == list(KINDS), "the page's kinds are not contract.KINDS"
    column = header.index(kind)
    marks = {cells[0]: cells[column] for cells, _ in page.rows
             if len(cells) == len(header) and cells[0] != "key"}
    required = [key for key, mark in marks.items() if mark == "required"]
    optional = [key for key, mark in marks.items() if mark == "optional"]
    assert {"classes", "size", "channels", "mean", "std"} <= set(required), marks
    for key in required:
        with pytest.raises(MetadataError, match=repr(key)):
            check_metadata({k: v for k, v in meta.items() if k != key})
    for key in optional:
        check_metadata({k: v for k, v in meta.items() if k != key})
    assert set(required) <= set(meta), "the page requires a key the export does not write"
    start = next(i for i, (cells, _) in enumerate(page.rows) if cells == ["key", "value", "must be"])
    file_keys = {cells[0] for cells, _ in page.rows[start + 1:] if len(cells) == 3}
    assert {"layout", "batch_size", "target_cpu", "input_dtype", "input_scale", "input_zero_point", "output_dtype",
            "output_scale", "output_zero_point"} <= file_keys, file_keys
    for key in file_keys:  # each is checked: a value no runtime could apply is refused, naming the key
        with pytest.raises(MetadataError, match=repr(key)):
            check_metadata({**meta, key: {"not": "a valid value"}})


def _shots_dir() -> Path:
    folder = Path(os.environ.get("HOTSTART_DOCS_SHOTS") or Path(tempfile.gettempdir()) / "hotstart-docs-shots")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _assert_not_blank(png: Path) -> None:
    from PIL import Image as PILImage

    px = np.asarray(PILImage.open(png).convert("RGB"), dtype=np.float32)
    assert px.shape[0] >= 600 and px.std() > 10, f"{png} is blank"
    assert len(np.unique(px.reshape(-1, 3), axis=0)) > 50, f"{png} shows almost nothing"


@PRESTART
def test_site_renders_in_chromium(site):
    """The home page and the API page of `Learner`, in headless Chromium: the theme's styles are
    applied, the class is named with every parameter of its signature, and the screenshots show it."""
    _need(headless_chromium.missing())
    from playwright.sync_api import sync_playwright

    from hotstart import Learner

    shots = _shots_dir()
    base = headless_chromium.served(str(site))
    with sync_playwright() as p:
        browser = headless_chromium.launch(p)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            errors = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(base)
            assert page.inner_text("article h1").strip().rstrip("¶") == "hotstart"  # less its permalink
            header = page.eval_on_selector("header.md-header", "e => getComputedStyle(e).backgroundColor")
            assert header not in ("rgba(0, 0, 0, 0)", "transparent"), f"the theme's CSS is not applied: {header}"
            body_font = page.eval_on_selector("body", "e => getComputedStyle(e).fontFamily")
            assert "Times" not in body_font, body_font
            page.screenshot(path=str(shots / "home.png"))

            # the reader's way to a class: the module's table, then the link
            page.goto(base + "reference/hotstart.learner/")
            names = page.locator("article table").filter(has=page.locator("th", has_text=re.compile(r"^what it is$")))
            names.locator("a").filter(has_text=re.compile(r"^Learner$")).click()  # not a parameter table's link
            anchor = unquote(urlparse(page.url).fragment)
            heading = page.locator(f"[id='{anchor}']")
            assert heading.is_visible() and "Learner" in heading.inner_text()
            signature = heading.locator("xpath=following-sibling::div[contains(@class, 'doc-signature')][1]").inner_text()
            assert signature.startswith("Learner("), signature
            parameters = list(inspect.signature(Learner).parameters)
            # the names that open each parameter (after "(" or ","), one per line when black formats it
            shown = re.findall(r"[(,]\s*([A-Za-z_]\w*)\s*(?=[:=,)])", " ".join(signature.split()))
            assert parameters and shown == parameters, (parameters, signature)
            box = heading.bounding_box()
            assert box is not None and 0 <= box["y"] < 900, box  # scrolled to it: on screen
            page.screenshot(path=str(shots / "api-learner.png"))
            assert not errors, errors
        finally:
            browser.close()
    for name in ("home.png", "api-learner.png"):
        _assert_not_blank(shots / name)
    print(f"screenshots: {shots / 'home.png'}, {shots / 'api-learner.png'}")
