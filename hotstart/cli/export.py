"""``python -m hotstart export MODEL_DIR ...``: a saved learner to ONNX (fp32 or int8), .pt2, .pte, a web
page, C for microcontrollers, LiteRT's .tflite, IREE's .vmfb, or a torch-free bundle.

    python -m hotstart export runs/hotstart --format onnx --out digits.onnx
    python -m hotstart export runs/hotstart --format onnx --quantize int8 --out digits-int8.onnx [--measure]
    python -m hotstart export runs/hotstart --format pt2 --out digits.pt2        # minutes: compiles C++
    python -m hotstart export runs/hotstart --format pte --out digits.pte [--batch-size 1] [--quantize int8]
    python -m hotstart export runs/hotstart --bundle deploy/     # model.onnx, predictor.py, hotstart_contract/, README
    python -m hotstart export runs/hotstart --format web --out digits-web [--vendor node_modules/onnxruntime-web]
    python -m hotstart export runs/hotstart --format c --out digits-c [--harness] [--ram-limit 16384]
    python -m hotstart export digits-int8.onnx --format c --out digits-c     # an int8 file hotstart wrote
    python -m hotstart export runs/hotstart --format tflite [--quantize int8] --out digits.tflite  # LiteRT / TFLM
    python -m hotstart export runs/hotstart --format iree --out digits.vmfb    # IREE, for this CPU

MODEL_DIR is a folder written by ``learner.save`` (``train``'s ``--out`` folder works too: its
``model/`` subfolder is used). int8 calibrates on training images, so it needs the data the model
was trained on: ``--data`` (a folder or CSV, as for ``train``; default: the built-in digits), split
with ``--valid-pct`` and ``--seed`` as ``train`` did; ``--measure`` adds the validation accuracy of
the fp32 and int8 files and their latency to the report (a validation pass and a benchmark).
No destination may lie inside MODEL_DIR: the export would overwrite the model it is made from.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..arguments import check_int
from ..errors import UsageError
from ..export import FORMATS, SUFFIXES, check_options  # cheap: the export package imports torch only where it exports
from ..deploy import model_folder
from .bundle import refuse_foreign_bundle, write_bundle


def add_parser(sub) -> argparse.ArgumentParser:
    e = sub.add_parser("export", help="export a saved model to ONNX (fp32/int8), .pt2, .pte (ExecuTorch), a web "
                                      "page, C for microcontrollers, .tflite, .vmfb (IREE), or a torch-free bundle",
                       description="Export MODEL_DIR (a folder written by learner.save) to run outside hotstart: "
                                   "onnx (fp32 or int8), pt2 (AOTInductor), pte (ExecuTorch, fp32 or int8), web (a "
                                   "static page), c (int8 C for microcontrollers), tflite (LiteRT / TF Lite Micro, fp32 "
                                   "or int8), iree (an IREE .vmfb), or --bundle (ONNX + the torch-free predictor).")
    e.add_argument("model_dir", help="folder written by learner.save (or train's --out folder)")
    e.add_argument("--format", choices=FORMATS, default=None,
                   help=f"{', '.join(FORMATS)}; default: from --out's suffix ({', '.join(SUFFIXES)}), else "
                        "onnx; web: a static page folder; c: int8 C for microcontrollers, a folder or NAME.c; "
                        "tflite: LiteRT / TF Lite Micro; iree: an IREE .vmfb for this CPU")
    e.add_argument("--out", default=None, help="output file (.onnx, .pt2, .pte, .tflite, .vmfb or NAME.c), or folder "
                                               "(web, c); not inside MODEL_DIR")
    e.add_argument("--batch-size", type=int, default=None,
                   help="pte: the static batch size the file takes per call (default 1)")
    e.add_argument("--vendor", default=None, metavar="ORT_WEB_DIR",
                   help="web: copy onnxruntime-web from this npm package folder (works offline), each file checked "
                        "against its pinned sha384; default: CDN")
    e.add_argument("--quantize", choices=("int8",), default=None,
                   help="int8 static quantization (onnx, pte or tflite)")
    e.add_argument("--calibrate", type=int, default=256, help="training samples to calibrate int8 on")
    e.add_argument("--measure", action="store_true",
                   help="onnx int8: also report the validation accuracy of the fp32 and int8 files and their latency")
    e.add_argument("--bundle", default=None, metavar="DIR",
                   help="write DIR/model.onnx, DIR/predictor.py, DIR/hotstart_contract/ and DIR/README.md (runs "
                        "without torch)")
    e.add_argument("--data", default=None, help="int8: the training data (folder or CSV); default: digits")
    e.add_argument("--valid-pct", type=float, default=0.2, help="int8: validation split, as in train")
    e.add_argument("--seed", type=int, default=0, help="int8: split seed, as in train")
    e.add_argument("--harness", action="store_true", help="c: also write the host and Cortex-M harnesses")
    e.add_argument("--ram-limit", type=int, default=None, metavar="BYTES",
                   help="c: fail if the activation arena needs more RAM than this")
    return e


def run(args) -> int:
    if args.out is None and args.bundle is None:
        raise UsageError("export: pass --out FILE (and/or --bundle DIR)")
    suffix = Path(args.out).suffix.lower() if args.out else ""
    fmt = args.format or SUFFIXES.get(suffix, "onnx")
    if (args.harness or args.ram_limit is not None) and fmt != "c":
        raise UsageError("export: --harness and --ram-limit are for --format c")
    if args.batch_size is not None and fmt != "pte":
        raise UsageError(f"export: --batch-size is for --format pte (an ExecuTorch file takes a static batch); "
                         f"a {fmt} export takes any batch size")
    if fmt == "c" and str(args.model_dir).lower().endswith(".onnx"):
        return _onnx_to_c(args)
    if args.bundle is not None and fmt != "onnx":
        raise UsageError(f"export: --bundle holds an ONNX model; drop --format {fmt}")
    if args.vendor is not None and fmt != "web":
        raise UsageError("export: --vendor is for --format web")
    if args.measure and (fmt != "onnx" or args.quantize != "int8"):
        raise UsageError("export: --measure is for --format onnx --quantize int8")
    check_options(fmt, args.quantize, args.calibrate)  # before the model loads: a bad pair fails at once
    extra = {"vendor": args.vendor} if fmt == "web" else {}
    if fmt == "pte":
        extra = {"batch_size": check_int("--batch-size", 1 if args.batch_size is None else args.batch_size,
                                         minimum=1)}
    if fmt == "c":
        extra = {"harness": args.harness, "ram_limit": args.ram_limit}
    if args.measure:
        extra = {"measure": True}
    folder = model_folder(args.model_dir)  # before torch is imported: a wrong folder fails in a second
    check_destinations(args, fmt, folder)
    from ..learner import load_learner

    data = _data_for(args, folder) if args.quantize or fmt == "c" else None
    learner = load_learner(folder, data, valid_pct=args.valid_pct, seed=args.seed, progress=False)
    from ..export import ExportError
    from ..export.web import WebExportError

    try:
        if args.out is not None:
            print(learner.export(args.out, fmt, quantize=args.quantize, calibrate=args.calibrate, **extra))
        if args.bundle is not None:
            write_bundle(learner, args.bundle, quantize=args.quantize, calibrate=args.calibrate)
    except (ExportError, WebExportError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


def _onnx_to_c(args) -> int:
    """MODEL is an int8 .onnx file hotstart exported: convert it, no learner needed."""
    from ..export.c import ExportError, onnx_to_c

    if args.out is None:
        raise UsageError("export: pass --out DIR (or NAME.c) for --format c")
    check_destinations(args, "c", Path(args.model_dir))
    try:
        print(onnx_to_c(args.model_dir, args.out, harness=args.harness, ram_limit=args.ram_limit))
    except ExportError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


def check_suffix(out, suffix: str, fmt: str) -> None:
    """Refuse an --out whose suffix names another format than the one written (``--format onnx
    --out m.tflite``), or none that `hotstart predict` opens (``m.txt``): such a file is written,
    then refused by every reader. Web pages and C folders are folders (C also ``NAME.c``)."""
    if out is None:
        return
    if suffix in SUFFIXES and SUFFIXES[suffix] != fmt:
        raise UsageError(f"export: --out {out} names a {SUFFIXES[suffix]} file, but --format is {fmt}; "
                         f"drop --format, or give --out a {_suffix_of(fmt) or 'folder'} name")
    if fmt not in ("web", "c") and suffix != _suffix_of(fmt):
        raise UsageError(f"export: --out {out}: a {fmt} file ends in {_suffix_of(fmt)} (hotstart predict and "
                         f"deploy.open_model read files by their suffix)")


def _suffix_of(fmt: str) -> str | None:
    return next((s for s, f in SUFFIXES.items() if f == fmt and s != ".c"), None)


def check_destinations(args, fmt: str, source: Path) -> None:
    """Every path the export will write, checked before the model is loaded and exported (the
    export takes seconds to minutes; a bad --out used to fail only at its end), none of them
    inside `source`, the model folder (or file) being exported."""
    from ..export.destination import check_file_destination, check_folder_destination, check_outside_source

    if args.out is not None:
        folder_out = fmt == "web" or (fmt == "c" and not str(args.out).endswith(".c"))
        check_outside_source(args.out, source, "--out", replaces_folder=folder_out)
        if fmt == "c" and not str(args.out).endswith(".c"):
            from ..export.c.write import refuse_foreign_files

            check_folder_destination(args.out, "--out")
            refuse_foreign_files(args.out)
        elif fmt == "web":
            from ..export.web import refuse_foreign_folder, vendored_runtime

            check_folder_destination(args.out, "--out")
            refuse_foreign_folder(Path(args.out))
            if args.vendor is not None:
                vendored_runtime(args.vendor)  # the package, and each file against its pinned sha384
        else:
            check_file_destination(args.out, "--out")
        check_suffix(args.out, Path(args.out).suffix.lower(), fmt)  # after the checks that say more
    if args.bundle is not None:
        check_outside_source(args.bundle, source, "--bundle", replaces_folder=True)
        check_folder_destination(args.bundle, "--bundle")
        bundle = Path(args.bundle).resolve()
        if args.out is not None and (Path(args.out).resolve() == bundle or bundle in Path(args.out).resolve().parents):
            raise UsageError(f"--out {args.out} lies in --bundle {args.bundle}, which the bundle replaces as a whole "
                             f"(nothing was exported): write --out elsewhere")
        refuse_foreign_bundle(args.bundle)


def _data_for(args, folder: Path):
    from types import SimpleNamespace

    from ..learner.serialization import read_meta
    from .train import load_data

    data, blocks, name = load_data(SimpleNamespace(path=args.data, path_col="path", label_col="label",
                                                   label_sep=None))
    classes = read_meta(folder)["task"]["blocks"][1].get("classes")
    if classes is not None and list(blocks[1].classes) != list(classes):
        raise UsageError(f"export: the data ({name}) has classes {list(blocks[1].classes)[:10]}, the model "
                         f"{list(classes)[:10]}: pass the training data with --data")
    return data
