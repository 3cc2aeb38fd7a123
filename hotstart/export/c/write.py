"""Writing the C files: ``NAME.c`` beside its header, or a folder swapped as a unit; either way as a unit.

``NAME.c`` and ``NAME.h`` sit in a folder of yours, so they cannot be swapped as a folder: they are
replaced together by a two-phase commit (hotstart/sibling_set.py, the set named ``NAME.c``): a
failure while writing them (a full disk) leaves the old pair; a kill leaves the old pair or, once the
next export to ``NAME.c`` (or `finish_interrupted`) has run, the new pair, never a mix; until then
the journal ``.NAME.c.commit`` beside them says the pair is mid-replace.

A folder gets a manifest of its files (hotstart/export/manifest.py), so that a later export
replaces it whole, with or without ``--harness`` (no harness file of the earlier one stays), and
refuses a folder holding files of yours (a compiled harness) before it runs.
"""
from __future__ import annotations

import dataclasses
from pathlib import Path

from ...atomic import atomic_write_bytes
from ...sibling_set import replace_together
from ...errors import UsageError
from ..manifest import foreign_files, foreign_files_message, write_export_folder
from ..report import ExportReport
from .convert import CModel, convert
from .emit import GENERATED


@dataclasses.dataclass
class CExportReport(ExportReport):
    """`ExportReport` worded for C: what was written, the RAM it needs, and the checks that ran."""

    def __str__(self):
        lines = [f"wrote {self.path} (C, {self.size_bytes / 1e6:.2f} MB of source)"]
        if self.max_abs_diff == self.max_abs_diff:  # not NaN: there was an int8 export to check
            lines[0] += f"; int8 ONNX vs torch on a check batch: {self.max_abs_diff:.2e}"
        lines += [f"  {k}: {v}" for k, v in self.extra.items()]
        return "\n".join(lines)


def legacy_c_files(folder: Path) -> frozenset[str]:
    """The names a C export from before the manifest may have written in `folder` (with and without
    the harnesses), if it is one (its model.h begins as emit.py writes it), else none."""
    from .firmware import CORTEX_M_FILES

    try:
        with open(folder / "model.h", "rb") as f:
            ours = f.read(len(GENERATED)) == GENERATED.encode()
    except OSError:
        ours = False
    return frozenset({"model.c", "model.h", "harness.c", "hotstart_test_images.h", *CORTEX_M_FILES}) if ours \
        else frozenset()


def refuse_foreign_files(folder, flag: str = "--out") -> None:
    """Refuse an existing `folder` that holds files other than an earlier C export's own (a
    compiled harness, your own sources, a file changed since): replacing the folder as a unit would
    delete them. Checked before the export runs, which takes seconds; nothing is changed."""
    foreign = foreign_files(folder, "c", legacy=legacy_c_files)
    if foreign:
        raise UsageError(foreign_files_message(flag, folder, foreign, "a C export") + "; move them out (build the "
                         "harness outside the folder, e.g. cc -o harness digits-c/harness.c digits-c/model.c) or "
                         f"choose another {flag} (nothing was changed)")


def write_files(path, files: dict[str, str]) -> Path:
    """`path` ``X.c``: the files next to it (X.c, X.h, harnesses), replaced together as the set
    ``X.c`` (hotstart/sibling_set.py); else the folder `path` holds exactly `files`
    (hotstart/atomic_folder.py). Returns the .c file's path."""
    path = Path(path)
    data = {k: v.encode("utf-8") for k, v in files.items()}
    if path.suffix == ".c":
        def stage(staging: Path) -> None:
            for name, content in data.items():
                atomic_write_bytes(staging / name, content)

        replace_together(path.parent, path.name, stage)
        return path
    try:
        write_export_folder(path, data, "c", legacy=legacy_c_files)
    except FileExistsError as e:  # a file of yours appeared since refuse_foreign_files looked
        raise UsageError(f"{e} (nothing was changed)") from None
    return path / next(k for k in files if k.endswith(".c") and k == "model.c")


def write_c(model, path, *, harness: bool = False, ram_limit: int | None = None,
            images=None) -> tuple[ExportReport, CModel]:
    """Convert an int8 ``onnx.ModelProto`` and write it (plus the harnesses if asked): (report, CModel)."""
    path = Path(path)
    name = path.stem if path.suffix == ".c" else "model"
    cmodel = convert(model, name, ram_limit)
    files = dict(cmodel.sources)
    if harness:
        from .firmware import harness_files

        files.update(harness_files(name, images))
    written = write_files(path, files)
    extra = {"files": ", ".join(sorted(files)), **cmodel.summary()}
    size = sum(len(t.encode()) for t in cmodel.sources.values())
    return CExportReport(written, "c", size, float("nan"), extra), cmodel
