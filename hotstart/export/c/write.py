"""Writing the C files: ``NAME.c`` beside its header (each file atomic), or a folder swapped as a unit."""
from __future__ import annotations

import dataclasses
import os
from pathlib import Path

from ...atomic import atomic_write_bytes
from ...atomic_folder import write_folder
from ...errors import UsageError
from ..report import ExportReport
from .convert import CModel, convert


@dataclasses.dataclass
class CExportReport(ExportReport):
    """`ExportReport` worded for C: what was written, the RAM it needs, and the checks that ran."""

    def __str__(self):
        lines = [f"wrote {self.path} (C, {self.size_bytes / 1e6:.2f} MB of source)"]
        if self.max_abs_diff == self.max_abs_diff:  # not NaN: there was an int8 export to check
            lines[0] += f"; int8 ONNX vs torch on a check batch: {self.max_abs_diff:.2e}"
        lines += [f"  {k}: {v}" for k, v in self.extra.items()]
        return "\n".join(lines)


def folder_file_names() -> frozenset[str]:
    """Every file a C export into a folder may write (`write_c` with and without the harnesses):
    an existing folder holding any other file is refused by the swap (atomic_folder.py), and
    `refuse_foreign_files` says so before the export runs."""
    from .firmware import CORTEX_M_FILES

    return frozenset({"model.c", "model.h", "harness.c", "hotstart_test_images.h", *CORTEX_M_FILES})


def refuse_foreign_files(folder) -> None:
    """Refuse an existing `folder` that holds files no C export writes (a compiled harness, your
    own sources): replacing the folder as a unit would delete them. Checked before the export
    runs, which takes seconds; nothing is changed."""
    folder = Path(folder)
    if not folder.is_dir():
        return
    extra = sorted(set(os.listdir(folder)) - folder_file_names())
    if extra:
        shown = ", ".join(extra[:5]) + (", ..." if len(extra) > 5 else "")
        raise UsageError(f"--out {folder} holds files a C export does not write ({shown}): replacing the folder "
                              "would delete them; move them out (build the harness outside the folder, "
                              "e.g. cc -o harness digits-c/harness.c digits-c/model.c) or choose another "
                              "--out (nothing was changed)")


def write_files(path, files: dict[str, str]) -> Path:
    """`path` ``X.c``: each file next to it, header first (a reader of X.c finds its X.h); else the
    folder `path` holds exactly `files` (hotstart/atomic_folder.py). Returns the .c file's path."""
    path = Path(path)
    data = {k: v.encode("utf-8") for k, v in files.items()}
    if path.suffix == ".c":
        for name in sorted(data, key=lambda k: k != f"{path.stem}.h"):
            atomic_write_bytes(path.parent / name, data[name])
        return path
    write_folder(path, data)
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
