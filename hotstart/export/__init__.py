"""A trained learner out of the framework: ONNX (fp32 or int8), .pt2 (torch.export + AOTInductor),
ExecuTorch .pte (fp32 or int8, see pte.py) and int8 from quantization-aware training (qat.py).

    learner.export("digits.onnx")                         # -> ExportReport (printable)
    learner.export("digits-int8.onnx", quantize="int8")    # + measure=True: accuracy and latency too
    learner.export("digits.pt2", format="pt2")
    learner.export("digits.pte", batch_size=1)            # ExecuTorch + XNNPACK; static batch size
    learner.export("digits-int8.pte", quantize="int8")
    learner.quantize("pte", qat_epochs=1).export("digits-qat.pte")
    learner.export("digits-web", format="web", vendor=None)  # a static page (see web.py)
    learner.export("digits.c", format="c")                # C for microcontrollers (see c/)
    learner.export("digits-int8.tflite", quantize="int8")  # LiteRT / TF Lite Micro (see tflite.py)
    learner.export("digits.vmfb")                         # IREE, compiled for this CPU (see iree.py)

Every destination is checked before the export's work starts (destination.py). Every exported
file is checked against eager torch by the runtime that runs it (parity.py, hotstart/runtimes/).
The exported files hold the task (classes, size, normalization...) in the model contract's
metadata (hotstart/contract/schema.py), so that hotstart/predictor.py (numpy + pillow +
onnxruntime), any runtime in hotstart/runtimes/ or a C++ program can use them without hotstart.
"""
from __future__ import annotations

from pathlib import Path

from ..errors import UsageError
from .report import ExportError, ExportReport

__all__ = ["export", "check_options", "refuse_options", "ExportError", "ExportReport"]

FORMATS = ("onnx", "pt2", "pte", "web", "c", "tflite", "iree")
# the suffix of each file format (web and c write folders)
SUFFIXES = {".onnx": "onnx", ".pt2": "pt2", ".pte": "pte", ".c": "c", ".tflite": "tflite", ".vmfb": "iree"}
# the formats that write int8 (``c`` always does), and why the others do not
INT8_FORMATS = ("onnx", "pte", "tflite", "c")
FP32_ONLY = {"web": "the web page runs the fp32 model", "iree": "the IREE export is fp32",
             "pt2": "AOTInductor compiles the fp32 model"}


def check_options(format: str, quantize: str | None = None, calibrate: int = 256) -> None:
    """Refuse a `format` / `quantize` / `calibrate` combination that cannot be exported, before any
    work: `export` runs it first, and ``hotstart export`` runs it before loading the model (which
    takes seconds), so a bad pair fails at once. Imports nothing heavy."""
    from ..arguments import check_int

    if format not in FORMATS:
        raise UsageError(f"export: format must be one of {FORMATS}, got {format!r}")
    if quantize not in (None, "int8"):
        raise UsageError(f"export: quantize must be None or 'int8', got {quantize!r}")
    if quantize is not None and format not in INT8_FORMATS:
        raise UsageError(f"export: quantize='int8' is for format={', '.join(map(repr, INT8_FORMATS))}; "
                         f"{FP32_ONLY[format]}")
    if quantize is not None or format == "c":  # these calibrate on training samples
        check_int("calibrate", calibrate, minimum=1)


def refuse_options(options: dict, taken: tuple, what: str) -> None:
    """Refuse the keywords in `options` that the export `what` does not take (`taken`), naming
    them: the int8 paths used to drop them silently (``batch_size=8`` for a .tflite, ``measure``
    for a .pte), where every fp32 path raised Python's TypeError."""
    unknown = sorted(set(options) - set(taken))
    if unknown:
        hint = "; measure= is for format='onnx', quantize='int8'" if "measure" in unknown else ""
        raise UsageError(f"export: {what} takes no {', '.join(map(repr, unknown))} (it takes "
                         f"{', '.join(map(repr, taken)) or 'no other option'}){hint}")


def export(learner, path, format: str | None = None, *, quantize: str | None = None, calibrate: int = 256,
           **kwargs) -> ExportReport:
    """Export `learner` to `path`; `format` defaults from the suffix (`SUFFIXES`).

    ONNX int8 (``quantize="int8"``) takes ``measure=True`` to also report the validation accuracy of
    the fp32 and int8 files and their latency (a validation pass and a benchmark: off by default).

    The process is left as it was (`contained_globals`): torch's exporters import ``torch._dynamo``,
    which sets ``TORCHINDUCTOR_CACHE_DIR`` in ``os.environ`` and adds warnings filters, and the
    edge toolchains configure logging and draw from the global RNGs."""
    from ..contained_import import contained_globals

    with contained_globals():
        return _export(learner, path, format, quantize=quantize, calibrate=calibrate, **kwargs)


def _export(learner, path, format: str | None = None, *, quantize: str | None = None, calibrate: int = 256,
                  **kwargs) -> ExportReport:
    """`export`'s work, without putting the process's globals back (`export` does that around it)."""
    path = Path(path)
    if format is None:
        format = SUFFIXES.get(path.suffix.lower())
        if format is None:
            raise UsageError(f"export: cannot tell the format from {path.name!r}; pass format= one of {FORMATS}")
    check_options(format, quantize, calibrate)
    from .destination import check_file_destination, check_folder_destination

    if format == "c":  # always int8: quantize=None or "int8"
        from .c import export_c

        if path.suffix == ".c":
            check_file_destination(path, "export path")
        else:
            from .c.write import refuse_foreign_files

            check_folder_destination(path, "export path")
            refuse_foreign_files(path, "export path")  # files of yours there: refused before quantizing
        return export_c(learner, path, calibrate=calibrate, **kwargs)
    if format == "web":
        from .web import export_learner_web

        check_folder_destination(path, "export path")

        return export_learner_web(learner, path, **kwargs)
    if format == "pte":
        check_file_destination(path, "export path")
        if quantize == "int8":  # PT2E post-training int8 (XNNPACKQuantizer), calibrated on training samples
            from .qat import quantize_learner

            refuse_options(kwargs, ("batch_size",), "format='pte', quantize='int8'")
            return quantize_learner(learner, "pte", qat_epochs=0, calibrate=calibrate).export(path, **kwargs)
        from .pte import export_pte

        return export_pte(learner, path, **kwargs)
    if format == "tflite":
        check_file_destination(path, "export path")
        if quantize == "int8":  # PT2E post-training int8 (litert-torch's quantizer), calibrated on training samples
            from .qat import quantize_learner

            refuse_options(kwargs, (), "format='tflite', quantize='int8'")
            return quantize_learner(learner, "tflite", qat_epochs=0, calibrate=calibrate).export(path)
        from .tflite import export_tflite

        return export_tflite(learner, path, **kwargs)
    if format == "iree":
        check_file_destination(path, "export path")
        from .iree import export_iree

        return export_iree(learner, path, **kwargs)
    if format == "pt2":
        from .pt2 import export_pt2

        check_file_destination(path, "export path")

        return export_pt2(learner, path, **kwargs)
    check_file_destination(path, "export path")
    if quantize == "int8":
        from .quantize import export_int8

        return export_int8(learner, path, calibrate=calibrate, **kwargs)
    from .onnx import export_onnx

    return export_onnx(learner, path, **kwargs)
