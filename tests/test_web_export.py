"""The web export's folder, without a browser: files, CDN integrity, vendoring checks (each copied
file against its pinned sha384), that a re-export replaces its own earlier folder whatever its
options, and that it never replaces a folder holding files it did not write. (tests/test_web_page.py
runs the page in Chromium.)"""
from __future__ import annotations

import base64
import hashlib
import json
import os

import pytest

from hotstart.export.manifest import MANIFEST
from hotstart.export.web import (CDN_BASE, FORMAT, ORT_ENTRY, ORT_ENTRY_SRI, ORT_RUNTIME_FILES, ORT_WEB_VERSION,
                                 WebExportError, export_web)

PAGE = {"kind": "ImageClassificationSingle", "classes": ["cat", "dog"], "size": [16, 16], "channels": 3,
        "image_mode": "RGB", "mean": [0.5, 0.5, 0.5], "std": [0.25, 0.25, 0.25], "activation": "softmax"}


@pytest.fixture
def onnx_file(tmp_path):
    f = tmp_path / "m.onnx"
    f.write_bytes(b"\x08\x07")  # the folder writer copies the file; the browser test runs a real one
    return f


def sri(data: bytes) -> str:
    return "sha384-" + base64.b64encode(hashlib.sha384(data).digest()).decode()


def fake_text(name: str) -> bytes:
    return f"// {name}".encode()


@pytest.fixture(autouse=True)
def pins_of_the_fake_runtime(monkeypatch):
    """The fake package's files stand in for the published ones: the pins become their digests."""
    monkeypatch.setattr("hotstart.export.web.ORT_RUNTIME_SHA384",
                        {name: sri(fake_text(name)) for name in ORT_RUNTIME_FILES})


def fake_ort_web(root, version=ORT_WEB_VERSION, files=ORT_RUNTIME_FILES):
    (root / "dist").mkdir(parents=True)
    (root / "package.json").write_text(json.dumps({"name": "onnxruntime-web", "version": version}))
    for name in files:
        (root / "dist" / name).write_bytes(fake_text(name))
    return root


def test_cdn_mode_pins_the_version_with_an_integrity_hash(tmp_path, onnx_file):
    out = export_web(onnx_file, PAGE, tmp_path / "site")
    assert out.mode == "cdn" and ORT_WEB_VERSION in str(out)
    html = (tmp_path / "site" / "index.html").read_text()
    assert f'src="{CDN_BASE}{ORT_ENTRY}" integrity="{ORT_ENTRY_SRI}" crossorigin="anonymous"' in html
    assert f'<meta name="hotstart-wasm-paths" content="{CDN_BASE}">' in html
    assert '<label class="drop" id="drop" for="files">' in html and 'name="viewport"' in html
    names = {p.name for p in (tmp_path / "site").iterdir()}
    assert names == {"index.html", "app.js", "model.onnx", "task.json", MANIFEST}
    task = json.loads((tmp_path / "site" / "task.json").read_text())
    assert task["format"] == FORMAT and task["classes"] == ["cat", "dog"] and task["onnxruntime_web"] == ORT_WEB_VERSION


def test_vendored_mode_copies_the_runtime(tmp_path, onnx_file):
    vendor = fake_ort_web(tmp_path / "node_modules" / "onnxruntime-web")
    for where in (vendor, vendor / "dist"):  # the package folder or its dist/
        out = export_web(onnx_file, PAGE, tmp_path / "site", vendor=where)
        assert out.mode == "vendored" and "offline" in str(out)
        html = (tmp_path / "site" / "index.html").read_text()
        assert f'<script src="{ORT_ENTRY}"></script>' in html and "integrity" not in html
        assert {n for n in ORT_RUNTIME_FILES} <= {p.name for p in (tmp_path / "site").iterdir()}


@pytest.mark.parametrize("problem", ["version", "files", "not-a-package"])
def test_a_wrong_vendor_folder_is_refused(tmp_path, onnx_file, problem):
    root = tmp_path / "ort"
    if problem == "version":
        fake_ort_web(root, version="1.17.0")
    elif problem == "files":
        fake_ort_web(root, files=ORT_RUNTIME_FILES[:1])
    else:
        root.mkdir()
    with pytest.raises(WebExportError, match="--vendor"):
        export_web(onnx_file, PAGE, tmp_path / "site", vendor=root)
    assert not (tmp_path / "site").exists()


def test_a_folder_it_did_not_write_is_never_replaced(tmp_path, onnx_file):
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "thesis.tex").write_text("years of work")
    with pytest.raises(WebExportError, match=r"not written by a web export.*\(thesis.tex\)"):
        export_web(onnx_file, PAGE, mine)
    assert (mine / "thesis.tex").read_text() == "years of work" and len(list(mine.iterdir())) == 1
    # an earlier export is replaced as a unit, and nothing is left beside it
    export_web(onnx_file, PAGE, tmp_path / "site")
    export_web(onnx_file, {**PAGE, "classes": ["a", "b"]}, tmp_path / "site")
    assert json.loads((tmp_path / "site" / "task.json").read_text())["classes"] == ["a", "b"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.onnx", "mine", "site"]


def test_only_image_classifiers_get_a_page(tmp_path, onnx_file):
    with pytest.raises(WebExportError, match="image classifiers"):
        export_web(onnx_file, {**PAGE, "kind": "TabularRegression"}, tmp_path / "site")
    with pytest.raises(WebExportError, match="lacks"):
        export_web(onnx_file, {"kind": "ImageClassificationSingle"}, tmp_path / "site")


def test_cli_vendor_goes_with_format_web(tmp_path, capsys):
    from hotstart.cli import main

    assert main(["export", str(tmp_path), "--out", str(tmp_path / "m.onnx"), "--vendor", "x"]) == 1
    assert "--vendor is for --format web" in capsys.readouterr().err


def test_a_cdn_export_over_a_vendored_one_replaces_it_whole(tmp_path, onnx_file):
    """The re-export without --vendor was refused: the runtime files of the earlier export were
    taken for files of yours. Now the earlier export goes as a unit, and none of its files stays."""
    vendor = fake_ort_web(tmp_path / "ort")
    site = tmp_path / "site"
    export_web(onnx_file, PAGE, site, vendor=vendor)
    out = export_web(onnx_file, PAGE, site)
    assert out.mode == "cdn"
    assert sorted(p.name for p in site.iterdir()) == sorted(["index.html", "app.js", "model.onnx", "task.json",
                                                             MANIFEST])
    assert set(json.loads((site / MANIFEST).read_text())["files"]) == {"index.html", "app.js", "model.onnx",
                                                                      "task.json"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.onnx", "ort", "site"]  # nothing left beside it
    export_web(onnx_file, PAGE, site, vendor=vendor)  # and back again
    assert set(ORT_RUNTIME_FILES) <= {p.name for p in site.iterdir()}


@pytest.mark.parametrize("change", ["a file of yours", "an edited page", "a folder of yours"])
def test_an_earlier_export_with_something_of_yours_in_it_is_refused_naming_it(tmp_path, onnx_file, change):
    site = tmp_path / "site"
    export_web(onnx_file, PAGE, site, vendor=fake_ort_web(tmp_path / "ort"))
    if change == "a file of yours":
        (site / "notes.txt").write_text("mine")
        name = "notes.txt"
    elif change == "an edited page":
        (site / "index.html").write_text("<h1>my own page</h1>")
        name = "index.html"
    else:
        (site / "photos").mkdir()
        name = "photos"
    before = {p.name: p.read_bytes() for p in site.iterdir() if p.is_file()}
    with pytest.raises(WebExportError, match=rf"--out {site} holds .*\({name}\).*nothing was changed"):
        export_web(onnx_file, PAGE, site)
    assert {p.name: p.read_bytes() for p in site.iterdir() if p.is_file()} == before


def test_a_web_folder_written_before_the_manifest_is_replaced_as_an_earlier_export(tmp_path, onnx_file):
    site = tmp_path / "site"
    export_web(onnx_file, PAGE, site, vendor=fake_ort_web(tmp_path / "ort"))
    (site / MANIFEST).unlink()  # as an older hotstart left it: its task.json says it is a web export
    export_web(onnx_file, PAGE, site)
    assert not set(ORT_RUNTIME_FILES) & {p.name for p in site.iterdir()}


@pytest.mark.parametrize("altered", ORT_RUNTIME_FILES)
def test_a_vendored_file_that_is_not_the_pinned_one_is_refused_before_anything_is_written(tmp_path, onnx_file,
                                                                                            altered):
    vendor = fake_ort_web(tmp_path / "ort")
    (vendor / "dist" / altered).write_bytes(b"// altered")
    with pytest.raises(WebExportError) as e:
        export_web(onnx_file, PAGE, tmp_path / "site", vendor=vendor)
    message = str(e.value)
    assert str(vendor / "dist" / altered) in message
    assert sri(fake_text(altered)) in message and sri(b"// altered") in message  # expected and actual
    assert not (tmp_path / "site").exists()
    export_web(onnx_file, PAGE, tmp_path / "site")  # an earlier export stays as it was
    before = {p.name: p.read_bytes() for p in (tmp_path / "site").iterdir()}
    with pytest.raises(WebExportError, match="sha384"):
        export_web(onnx_file, PAGE, tmp_path / "site", vendor=vendor)
    assert {p.name: p.read_bytes() for p in (tmp_path / "site").iterdir()} == before


def test_the_pins_are_the_published_runtime(monkeypatch):
    """The real pins against the package npm installed (npm checked its sha512); the entry file's pin
    is the CDN's integrity hash, so the two sources agree."""
    monkeypatch.undo()  # the real pins, not the fake package's
    from hotstart.export import web

    assert web.ORT_RUNTIME_SHA384[ORT_ENTRY] == ORT_ENTRY_SRI and set(web.ORT_RUNTIME_SHA384) == set(ORT_RUNTIME_FILES)
    package = os.environ.get("HOTSTART_ORT_WEB")
    if not package:
        from needs import missing

        missing("HOTSTART_ORT_WEB is not set: npm install onnxruntime-web@" + ORT_WEB_VERSION +
                " and point it at node_modules/onnxruntime-web")
    runtime = web.vendored_runtime(package)
    assert {name: sri(data) for name, data in runtime.items()} == web.ORT_RUNTIME_SHA384
