"""``hotstart export --bundle DIR``: the model as ONNX with the torch-free predictor, one folder unit.

DIR holds ``model.onnx``, ``predictor.py`` (hotstart/predictor.py), ``hotstart_contract/`` (the model
contract package, which predictor.py imports) and ``README.md``, plus the manifest of those files
(hotstart/export/manifest.py). The folder is replaced as a unit (`write_export_folder`), so a
re-export leaves the earlier bundle or the new one, never a mix; a folder holding anything else is
refused before the export runs (`refuse_foreign_bundle`), nothing changed. Python's ``__pycache__``
inside hotstart_contract/ (running the predictor writes it) is derived from the bundle's own files
and goes with them. Torch-free to import: the command line checks --bundle before loading the model.
"""
from __future__ import annotations

import json
from pathlib import Path

from ..errors import UsageError
from ..export.manifest import foreign_files, foreign_files_message, write_export_folder

CONTRACT_FOLDER = "hotstart_contract"  # the bundle's copy of hotstart/contract/ (predictor.py imports it)
BUNDLE = "bundle"  # the export kind in a bundle's manifest (hotstart/export/manifest.py)

BUNDLE_README = """# {name}: a hotstart model that runs without torch

Files: `model.onnx` (the model; its task, classes and preprocessing are in its metadata),
`predictor.py` and `hotstart_contract/` (hotstart's model contract: how an input is encoded and an
output decoded), which need numpy + pillow + onnxruntime, nothing else.

    pip install onnxruntime numpy pillow
    python predictor.py model.onnx {files} --top-k 3

or from Python:

    from predictor import Predictor
    p = Predictor.load("model.onnx")
    {call}

Task: {kind}; input: {inputs}; output: {outputs}.
Exported by hotstart {version}.
"""

# what a bundle's predictor takes, by the kind of task: (command-line inputs, a Python call, the input)
BUNDLE_USAGE = {
    "table": ("rows.csv", 'label, probabilities = p.predict({"column": value, ...})   # one row',
              "a table row: categorical {categorical}, continuous {continuous}"),
    "series": ("series.npy", "label, probabilities = p.predict(series)   # a numpy array (channels, steps)",
               "a series (a .npy file of one, (steps,) or (channels, steps), or of several)"),
    "image": ("image1.png image2.png", 'label, probabilities = p.predict("image1.png")',
              "an image, {size} ({channels} channel(s))"),
}


def bundle_files(learner, folder: Path, **kwargs) -> tuple[dict[str, bytes], object]:
    """The bundle's files ({path in the bundle: bytes}) and the ONNX export's report: model.onnx,
    predictor.py (hotstart/predictor.py), hotstart_contract/*.py (the model contract package, which
    uses relative imports only), README.md. Nothing is written in `folder` (the ONNX file is
    exported into a temporary folder, then read)."""
    import dataclasses
    import tempfile
    from importlib.util import find_spec

    from .. import __version__

    readme = bundle_readme(learner.task, folder.name, __version__)  # before the export: a failure costs nothing
    with tempfile.TemporaryDirectory(prefix="hotstart-bundle-") as tmp:
        report = learner.export(Path(tmp) / "model.onnx", "onnx", **kwargs)
        model = (Path(tmp) / "model.onnx").read_bytes()
    contract = Path(find_spec("hotstart.contract").origin).parent
    files = {"model.onnx": model,
             "predictor.py": Path(find_spec("hotstart.predictor").origin).read_bytes(),
             **{f"{CONTRACT_FOLDER}/{p.name}": p.read_bytes() for p in sorted(contract.glob("*.py"))},
             "README.md": readme.encode()}
    if dataclasses.is_dataclass(report):
        report = dataclasses.replace(report, path=folder / "model.onnx")
    return files, report


def write_bundle(learner, folder, **kwargs) -> Path:
    """DIR/model.onnx + DIR/predictor.py + DIR/hotstart_contract/ + DIR/README.md (`bundle_files`),
    and the manifest of those files: the folder is replaced as a unit (hotstart/export/manifest.py),
    so a re-export replaces the earlier bundle whole or, if the folder holds a file of yours,
    changes nothing. ``__pycache__`` that running the predictor left in hotstart_contract/ is
    derived from the bundle's own files and goes with it."""
    folder = Path(folder)
    files, report = bundle_files(learner, folder, **kwargs)
    try:
        write_export_folder(folder, files, BUNDLE, legacy=legacy_bundle_files)
    except FileExistsError as e:  # a file of yours appeared since check_destinations looked
        raise UsageError(f"{e} (nothing was changed)") from None
    print(f"{report}\nwrote bundle {folder}: model.onnx, predictor.py, {CONTRACT_FOLDER}/, README.md")
    return folder


def refuse_foreign_bundle(folder) -> None:
    """Refuse an existing --bundle folder holding anything but an earlier bundle's own files
    (checked before the export runs; nothing is changed): the bundle replaces the folder whole."""
    foreign = foreign_files(folder, BUNDLE, legacy=legacy_bundle_files)
    if foreign:
        raise UsageError(foreign_files_message("--bundle", folder, foreign, "a bundle export") +
                         "; move them out or choose another --bundle (nothing was changed)")


def legacy_bundle_files(folder: Path) -> frozenset[str]:
    """The names a bundle from before the manifest wrote in `folder`, if it is one (its
    hotstart_contract/ holds nothing but ``.py`` files and ``__pycache__/*.pyc``), else none."""
    contract = folder / CONTRACT_FOLDER
    try:
        entries = list(contract.iterdir())
        pycache = list((contract / "__pycache__").iterdir()) if (contract / "__pycache__").is_dir() else []
    except OSError:
        return frozenset()
    plain = all((p.name.endswith(".py") and p.is_file() and not p.is_symlink()) or
                (p.name == "__pycache__" and p.is_dir() and not p.is_symlink()) for p in entries)
    if not plain or not all(p.name.endswith(".pyc") and p.is_file() and not p.is_symlink() for p in pycache):
        return frozenset()
    return frozenset({"model.onnx", "predictor.py", "README.md", f"{CONTRACT_FOLDER}/"})


def bundle_readme(task, name: str, version: str) -> str:
    """The bundle's README.md for `task`: how to run its predictor on the inputs this kind of task
    takes (images, CSV rows, series), and what it outputs."""
    from ..contract.kinds import SERIES_KINDS, TABLE_KINDS

    kind = type(task).__name__
    family = "table" if kind in TABLE_KINDS else "series" if kind in SERIES_KINDS else "image"
    files, call, inputs = BUNDLE_USAGE[family]
    if family == "table":
        row = task.blocks[0]
        inputs = inputs.format(categorical=list(row.categorical), continuous=list(row.continuous))
    elif family == "image":
        inputs = inputs.format(size=tuple(task.size), channels=task.channels)
    classes = task.classes  # None for a regression (tasks/base.py)
    if classes is None:  # predict gives (the values in the target's units, the same values)
        call = call.replace("label, probabilities", "values, _")
    outputs = ("a value for each regression target" if classes is None else
               f"{len(classes)} classes: " + json.dumps(classes[:20]) + (" ..." if len(classes) > 20 else ""))
    return BUNDLE_README.format(name=name, files=files, call=call, kind=kind,
                                inputs=inputs, outputs=outputs, version=version)
