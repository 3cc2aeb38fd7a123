"""A static web page that runs an exported model in the visitor's browser (onnxruntime-web, WASM).

    python -m hotstart export runs/hotstart/model --format web --out digits-web
    python -m http.server -d digits-web 8000          # then open http://127.0.0.1:8000

The folder holds ``index.html``, ``app.js`` (our one script: no framework, no build step),
``model.onnx``, ``task.json`` (classes, size, channels, mean, std, activation) and the manifest of
these files (hotstart-export.json, see manifest.py). The page loads
onnxruntime-web pinned to `ORT_WEB_VERSION`:

- by default from the public CDN, with a Subresource Integrity hash, so a tampered file is refused;
- with ``vendor=`` (a folder from ``npm install onnxruntime-web@<ORT_WEB_VERSION>``) its files are
  copied into the folder, and the page works offline and from any static host. Each is checked
  against its pinned sha384 (`ORT_RUNTIME_SHA384`) first: the copy gets no integrity check in the
  browser (it is served by the same host as the page), so a file that is not the published one is
  refused here, before anything is written.

The page needs no cross-origin isolation headers: it uses one WASM thread when the page is not
cross-origin isolated (GitHub Pages and ``python -m http.server`` send no COOP/COEP headers).
Its JavaScript preprocessing mirrors the torch-free predictor (see ``preprocess`` in app.js);
the browser test holds the two together.

The folder is written next to the target and swapped in as a unit (hotstart/atomic_folder.py),
with a manifest of its files (hotstart/export/manifest.py): an existing folder is replaced only if
it holds nothing but an earlier web export's own files, whatever its options were (a page without
``--vendor`` replaces a vendored one, runtime files included), never a folder with files of yours.
"""
from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from ..errors import HotstartError
from .manifest import foreign_files, foreign_files_message, write_export_folder
from ..strict_json import dumps

FORMAT = "hotstart.web/1"
ORT_WEB_VERSION = "1.30.0"
# The entry point and the files it fetches at run time (WASM only: no WebGPU / WebGL code).
ORT_ENTRY = "ort.wasm.min.js"
ORT_RUNTIME_FILES = (ORT_ENTRY, "ort-wasm-simd-threaded.mjs", "ort-wasm-simd-threaded.wasm")
# sha384 of dist/ort.wasm.min.js in the npm package onnxruntime-web@1.30.0 (as the CDN serves it)
ORT_ENTRY_SRI = "sha384-Bw6URI+Gvoadw0do7/QrSHUC9D1vCYYK5OSqChFyhyV5mzPL4oe2rOAFljAnS8Sq"
# sha384 (SRI form) of each file `vendor=` copies, from the npm package onnxruntime-web@1.30.0 (npm
# checked the package's sha512 on install; its ort.wasm.min.js equals ORT_ENTRY_SRI, the CDN's)
ORT_RUNTIME_SHA384 = {
    ORT_ENTRY: ORT_ENTRY_SRI,
    "ort-wasm-simd-threaded.mjs": "sha384-XcXA/MtAf0WpB8e023xQH9CM7RIjiugakT7x99DIwpFf7k56BIFFcAPerIF7FDad",
    "ort-wasm-simd-threaded.wasm": "sha384-vjBJ1z7qrhkTyYsNqKeF6c7N+nOJSU94czEo+tvZcu8G75JparGq9kB+kTnEUNVM",
}
CDN_BASE = f"https://cdn.jsdelivr.net/npm/onnxruntime-web@{ORT_WEB_VERSION}/dist/"

PAGE_KEYS = ("kind", "classes", "size", "channels", "image_mode", "mean", "std", "activation")


class WebExportError(HotstartError, ValueError):
    """The web folder cannot be written as asked (bad vendor folder, a folder that isn't ours)."""


@dataclass(frozen=True)
class WebExport:
    """What `export_web` wrote: the folder, how the runtime is loaded, and the sizes."""

    folder: Path
    mode: str  # "vendored" or "cdn"
    model_bytes: int
    folder_bytes: int

    def __str__(self):
        how = ("onnxruntime-web copied into the folder (works offline)" if self.mode == "vendored"
               else f"onnxruntime-web {ORT_WEB_VERSION} from {CDN_BASE} (with an integrity hash)")
        return (f"wrote {self.folder} ({self.folder_bytes / 1e6:.1f} MB, model {self.model_bytes / 1e6:.1f} MB); "
                f"runtime: {how}")


def export_web(onnx_file, page_task: dict, out_dir, *, vendor=None, title: str | None = None) -> WebExport:
    """Write the web folder for the ONNX model `onnx_file`, described by `page_task`.

    `page_task` holds at least `PAGE_KEYS` (the ONNX export's metadata has them). `vendor` is an
    ``onnxruntime-web`` package folder (or its ``dist/``) of version `ORT_WEB_VERSION`, or None for
    the CDN.
    """
    from .. import __version__

    onnx_file, out_dir = Path(onnx_file), Path(out_dir)
    missing = [k for k in PAGE_KEYS if k not in page_task]
    if missing:
        raise WebExportError(f"the task description lacks {missing}; it needs {list(PAGE_KEYS)}")
    if page_task["kind"] not in ("ImageClassificationSingle", "ImageClassificationMulti"):
        raise WebExportError(f"the web page shows image classifiers; {page_task['kind']} is not one "
                             f"(export it with --format onnx and use the predictor)")
    if not onnx_file.is_file():
        raise FileNotFoundError(f"{onnx_file}: no such ONNX file")
    runtime = vendored_runtime(vendor) if vendor is not None else None
    refuse_foreign_folder(out_dir)

    page = {k: page_task[k] for k in PAGE_KEYS}
    page.update(format=FORMAT, hotstart=__version__, onnxruntime_web=ORT_WEB_VERSION)
    template = resources.files("hotstart.export") / "web_page"
    files = {"task.json": dumps(page, f"{out_dir}/task.json", indent=2).encode(), "model.onnx": onnx_file.read_bytes(),
             "app.js": (template / "app.js").read_bytes()}
    if runtime is not None:
        files.update(runtime)
        script = f'<script src="{ORT_ENTRY}"></script>'
        wasm_paths, mode = "", "vendored"
    else:
        script = (f'<script src="{CDN_BASE}{ORT_ENTRY}" integrity="{ORT_ENTRY_SRI}" '
                  f'crossorigin="anonymous"></script>')
        wasm_paths, mode = CDN_BASE, "cdn"
    html = (template / "index.html").read_text(encoding="utf-8")
    head_meta = f'<meta name="hotstart-wasm-paths" content="{wasm_paths}">\n'
    html = (html.replace("</head>", head_meta + "</head>", 1)
            .replace("__TITLE__", _escape(title or f"{_describe(page)} in your browser"))
            .replace("__VERSION__", _escape(__version__))
            .replace("__ORT_VERSION__", ORT_WEB_VERSION)
            .replace("__ORT_MODE__", "vendored" if mode == "vendored" else "CDN")
            .replace("__ORT_SCRIPT__", script))
    files["index.html"] = html.encode()
    try:
        write_export_folder(out_dir, files, "web", legacy=legacy_web_files)
    except FileExistsError as e:  # a file of yours appeared since refuse_foreign_folder looked
        raise WebExportError(f"--out {out_dir}: {e} (nothing was changed)") from None
    size = sum(f.stat().st_size for f in out_dir.iterdir() if f.is_file())
    return WebExport(out_dir, mode, (out_dir / "model.onnx").stat().st_size, size)


def export_learner_web(learner, out_dir, *, vendor=None, title: str | None = None, **onnx_kwargs) -> WebExport:
    """`learner` -> ONNX (checked against torch, see onnx.py) -> the web folder `out_dir`."""
    from .metadata import page_fields
    from .onnx import export_onnx

    out_dir = Path(out_dir)
    refuse_foreign_folder(out_dir)  # before minutes of exporting
    if vendor is not None:
        vendored_runtime(vendor)  # a wrong or altered runtime fails before the export too
    with tempfile.TemporaryDirectory(prefix="hotstart-web-") as tmp:
        onnx_file = Path(tmp) / "model.onnx"
        export_onnx(learner, onnx_file, **onnx_kwargs)
        return export_web(onnx_file, page_fields(learner.task), out_dir, vendor=vendor, title=title)


def vendor_dist(vendor) -> Path:
    """The ``dist/`` folder of an onnxruntime-web package of the pinned version, checked."""
    root = Path(vendor).expanduser()
    if not root.is_dir():
        raise WebExportError(f"--vendor {root}: not a folder (run `npm install onnxruntime-web@{ORT_WEB_VERSION}` "
                             f"and pass node_modules/onnxruntime-web)")
    pkg_root = root.parent if root.name == "dist" else root
    dist = root if root.name == "dist" else root / "dist"
    package_json = pkg_root / "package.json"
    try:
        meta = json.loads(package_json.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise WebExportError(f"--vendor {root}: cannot read {package_json} ({e}); pass the folder that "
                             f"`npm install onnxruntime-web@{ORT_WEB_VERSION}` made (node_modules/onnxruntime-web)") from None
    if meta.get("name") != "onnxruntime-web" or meta.get("version") != ORT_WEB_VERSION:
        raise WebExportError(f"--vendor {root}: found {meta.get('name')}@{meta.get('version')}, the page is pinned to "
                             f"onnxruntime-web@{ORT_WEB_VERSION} (npm install onnxruntime-web@{ORT_WEB_VERSION})")
    absent = [n for n in ORT_RUNTIME_FILES if not (dist / n).is_file()]
    if absent:
        raise WebExportError(f"--vendor {root}: {dist} lacks {absent}")
    return dist


def vendored_runtime(vendor) -> dict[str, bytes]:
    """{name: bytes} of the runtime files `vendor=` copies (`ORT_RUNTIME_FILES`), each checked
    against its pinned sha384 (`ORT_RUNTIME_SHA384`): a mismatch is a `WebExportError` naming the
    file and both digests. The bytes checked are the bytes written, so a file changed after a
    check is never copied."""
    import base64
    import hashlib

    dist = vendor_dist(vendor)
    runtime = {}
    for name in ORT_RUNTIME_FILES:
        data = (dist / name).read_bytes()
        actual = "sha384-" + base64.b64encode(hashlib.sha384(data).digest()).decode()
        expected = ORT_RUNTIME_SHA384[name]
        if actual != expected:
            raise WebExportError(f"--vendor {vendor}: {dist / name} has sha384 {actual}, but onnxruntime-web@"
                                 f"{ORT_WEB_VERSION}'s is {expected}: it is not the published file (another "
                                 f"build, or altered); reinstall it with npm install onnxruntime-web@"
                                 f"{ORT_WEB_VERSION} (nothing was written)")
        runtime[name] = data
    return runtime


def refuse_foreign_folder(out_dir: Path) -> None:
    """An existing, non-empty `out_dir` is replaced only if it holds nothing but an earlier web
    export's own files (its manifest says which, see manifest.py); else the error names the others."""
    if out_dir.exists() and not out_dir.is_dir():
        raise WebExportError(f"--out {out_dir}: exists and is not a folder")
    foreign = foreign_files(out_dir, "web", legacy=legacy_web_files)
    if foreign:
        raise WebExportError(foreign_files_message("--out", out_dir, foreign, "a web export") + "; choose a new folder "
                             "or move them out (nothing was changed)")


def legacy_web_files(folder: Path) -> frozenset[str]:
    """The names a web export from before the manifest wrote in `folder`, if it is one (its
    task.json says so), else none: such a folder is replaced as an earlier export."""
    try:
        page = json.loads((folder / "task.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return frozenset()
    if not isinstance(page, dict) or page.get("format") != FORMAT:
        return frozenset()
    return frozenset({"index.html", "app.js", "model.onnx", "task.json", *ORT_RUNTIME_FILES})


def _describe(page: dict) -> str:
    n = len(page["classes"])
    return f"An image classifier ({n} classes)"


def _escape(text: str) -> str:
    import html

    return html.escape(str(text), quote=True)
