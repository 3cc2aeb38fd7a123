"""The exported web page in a real headless Chromium: the page's labels equal the Python predictor's.

Needs Debian's Chromium (``apt-get install chromium``), the Python package ``playwright`` (driving
that Chromium; playwright's own browser download is not used) and onnxruntime-web from npm
(``npm install onnxruntime-web@<ORT_WEB_VERSION>``; point ``HOTSTART_ORT_WEB`` at its
``node_modules/onnxruntime-web``). `.ci/run` installs all three; elsewhere the test is skipped
with a message that says what is missing (under ``CI=true`` it fails instead: tests/needs.py).

Run as a script, it writes the README's screenshot with the same code path:

    python tests/test_web_page.py docs/web-page.png
"""
from __future__ import annotations

import functools
import os
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

import headless_chromium
import prestart
from needs import missing


def _ort_web() -> Path | None:
    env = os.environ.get("HOTSTART_ORT_WEB")
    return Path(env) if env and Path(env, "package.json").is_file() else None


def _missing() -> list[str]:
    absent = headless_chromium.missing()
    if _ort_web() is None:
        from hotstart.export.web import ORT_WEB_VERSION

        absent.append(f"onnxruntime-web (npm install onnxruntime-web@{ORT_WEB_VERSION} and set "
                      f"HOTSTART_ORT_WEB to its node_modules/onnxruntime-web)")
    return absent


def run_page(folder: Path, batches: list[list[Path]], screenshot: Path | None = None) -> list[list[dict]]:
    """Open the exported page, feed each batch of files through its file input, read the results.

    Returns, per batch, the result cards it added (file, label, prob, error) in input order.
    """
    from playwright.sync_api import sync_playwright

    url = headless_chromium.served(str(folder))
    out = []
    with sync_playwright() as p:
        browser = headless_chromium.launch(p)
        try:
            page = browser.new_page(viewport={"width": 420, "height": 900})  # a phone-width screen
            errors = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(url + "index.html")
            page.wait_for_selector("body[data-state]", timeout=60_000)
            state = page.get_attribute("body", "data-state")
            assert state == "ready", f"page state {state!r}: {page.inner_text('#status')} {errors}"
            done = 0
            for files in batches:
                page.set_input_files("#files", [str(f) for f in files])
                done += len(files)
                page.wait_for_function(f"Number(document.body.dataset.done || 0) >= {done}", timeout=120_000)
                cards = page.eval_on_selector_all(
                    "#results li.result",
                    "els => els.map(e => ({file: e.dataset.file, label: e.dataset.label ?? null, "
                    "prob: e.dataset.prob ? Number(e.dataset.prob) : null, error: e.dataset.error === '1', "
                    "text: e.textContent}))")
                out.append(list(reversed(cards))[done - len(files):done])  # newest first on the page
            assert not errors, errors
            if screenshot is not None:
                page.screenshot(path=str(screenshot), full_page=False)
        finally:
            browser.close()
    return out


PNG_NAME = "digit-{:02d}.png"  # the validation images export_digits_page saves, 20 of them


def export_digits_page(tmp: Path, *, vendor: Path | None) -> tuple[Path, Path, list[Path]]:
    """Train a small digits model, export ONNX and the web folder, save 20 validation images as PNG.

    Returns (web folder, onnx file, png files).
    """
    from hotstart import ImageClassificationSingle, datasets, tasklearner

    data, blocks = datasets.load("digits")
    task = ImageClassificationSingle(blocks, size=(16, 16), augment={"flip": 0.0})
    learner = tasklearner(task, data, seed=0, batch_size=64, progress=False)
    learner.fit_one_cycle(1, lr_max=3e-3)  # the test compares page and predictor, not accuracy
    web = tmp / "web"
    learner.export(web, format="web", vendor=vendor)
    pngs = []
    valid = learner.valid_loader.dataset  # the validation split's raw images (PIL, 8x8 gray)
    for i in range(20):
        f = tmp / PNG_NAME.format(i)
        valid.inputs[i].save(f)
        pngs.append(f)
    return web, web / "model.onnx", pngs


EXPORT_IN_A_PROCESS = ("import sys; from pathlib import Path; sys.path.insert(0, sys.argv[1]); "
                       "from test_web_page import _ort_web, export_digits_page; "
                       "export_digits_page(Path.cwd(), vendor=_ort_web())")


@prestart.job("web:export")
def _export_the_page(folder):
    """`export_digits_page` into `folder`, in a process of its own, in the background from the start
    (tests/prestart.py): the training and the export take most of this module's time."""
    threads = os.environ.get("HOTSTART_TEST_THREADS", "1")  # as conftest.py sets them in this process
    return prestart.Job([sys.executable, "-c", EXPORT_IN_A_PROCESS, Path(__file__).parent],
                        env={"OMP_NUM_THREADS": threads}, timeout=900)


@functools.lru_cache(maxsize=None)
def _missing_once() -> tuple:
    return tuple(_missing())


PRESTART = pytest.mark.prestart(*([] if _missing_once() else ["web:export"]))


@pytest.fixture(scope="module")
def web_export():
    absent = _missing_once()
    if absent:
        missing("the browser test needs " + "; ".join(absent))
    run = prestart.result("web:export")
    assert run.returncode == 0, run.stderr[-3000:]
    tmp = run.folder
    pngs = [tmp / PNG_NAME.format(i) for i in range(20)]
    assert all(f.is_file() for f in pngs)
    return tmp, tmp / "web", tmp / "web" / "model.onnx", pngs


@PRESTART
def test_page_labels_equal_the_python_predictor(web_export):
    from hotstart.predictor import Predictor

    tmp, web, onnx_file, pngs = web_export
    bad = tmp / "not-an-image.png"
    bad.write_text("this is a text file, not a PNG")
    extra = tmp / "after-the-error.png"
    shutil.copyfile(pngs[0], extra)
    shot = tmp / "page.png"
    first, second = run_page(web, [pngs, [bad, extra]], screenshot=shot)

    predictor = Predictor.load(onnx_file)
    assert len(first) == 20
    for card, png in zip(first, pngs):
        label, probs = predictor.predict(png)
        assert card["file"] == png.name and not card["error"], card
        assert card["label"] == str(label), (png.name, card, label)
        assert abs(card["prob"] - float(np.max(probs))) < 1e-3, (png.name, card["prob"], float(np.max(probs)))

    # a file that is not an image shows an error on the page, and the next image still works
    assert second[0]["file"] == bad.name and second[0]["error"] and "could not be read" in second[0]["text"]
    assert second[1]["file"] == extra.name and not second[1]["error"] and second[1]["label"] == first[0]["label"]

    from PIL import Image as PILImage

    shot_px = np.asarray(PILImage.open(shot).convert("RGB"), dtype=np.float32)
    assert shot_px.shape[0] >= 400 and shot_px.std() > 10, "the screenshot is blank"
    assert len(np.unique(shot_px.reshape(-1, 3), axis=0)) > 50, "the screenshot shows almost nothing"


@PRESTART
def test_web_folder_contents_and_size(web_export):
    import json

    from hotstart.export.web import FORMAT, ORT_RUNTIME_FILES

    _, web, _, _ = web_export
    names = {p.name for p in web.iterdir()}
    assert {"index.html", "app.js", "model.onnx", "task.json", *ORT_RUNTIME_FILES} <= names
    task = json.loads((web / "task.json").read_text())
    assert task["format"] == FORMAT and task["channels"] == 1 and task["size"] == [16, 16]
    assert len(task["classes"]) == 10 and task["activation"] == "softmax"
    without_runtime = sum((web / n).stat().st_size for n in names - set(ORT_RUNTIME_FILES))
    assert without_runtime < 10e6


@PRESTART
def test_a_model_that_fails_to_load_says_so_on_the_page(web_export, tmp_path):
    from playwright.sync_api import sync_playwright

    _, web, _, _ = web_export
    broken = tmp_path / "broken"
    shutil.copytree(web, broken)
    (broken / "model.onnx").write_bytes(b"not an onnx model")
    with sync_playwright() as p:
        browser = headless_chromium.launch(p)
        try:
            page = browser.new_page()
            page.goto(headless_chromium.served(str(broken)) + "index.html")
            page.wait_for_selector("body[data-state]", timeout=60_000)
            assert page.get_attribute("body", "data-state") == "error"
            assert "failed to load" in page.inner_text("#status")
            assert page.is_disabled("#files")
        finally:
            browser.close()


if __name__ == "__main__":  # the README's screenshot, made by the test's own code path
    import tempfile

    out = Path(sys.argv[1] if len(sys.argv) > 1 else "docs/web-page.png")
    absent = _missing()
    if absent:
        sys.exit("needs " + "; ".join(absent))
    with tempfile.TemporaryDirectory() as d:
        web, _, pngs = export_digits_page(Path(d), vendor=_ort_web())
        run_page(web, [pngs[:3]], screenshot=out)
    print(f"wrote {out}")
