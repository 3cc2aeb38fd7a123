""".pt2 export: torch.export, then AOTInductor: a compiled shared library in a package.

    learner.export("digits.pt2")                  # minutes on a 2-core CPU: C++ is compiled
    python -m hotstart export runs/hotstart --format pt2 --out digits.pt2

Load it from Python with ``torch._inductor.aoti_load_package("digits.pt2")`` or from C++ with
libtorch's ``torch::inductor::AOTIModelPackageLoader``; no hotstart, timm or Python model code is
needed. The task travels inside the package as AOTInductor metadata
(``inductor_configs={"aot_inductor.metadata": ...}``), with the same keys as the ONNX export (see
onnx.py): ``loader.get_metadata()`` returns them in both languages. The batch dimension is
dynamic (traced with 2). Like the ONNX export, it checks itself: the loaded package and the eager
model run the same batch, and the export fails above `tolerance`. The package is compiled and
checked under a temporary name beside `path`, which it replaces only once it passed (a failed
export leaves a previous file at `path` as it was).
"""
from __future__ import annotations

from pathlib import Path

from ..atomic import atomic_path
from ..compile_cache.quiet import quiet_torch_notices
from ..errors import SavedModelError, UsageError
from .metadata import task_metadata
from .onnx import ExportError, ExportReport, INPUT_NAME, OUTPUT_NAME, failing_layer, eval_copy, example_batch


# x86-64-v3 (Haswell, 2013, and later: AVX2 + FMA) with 256-bit vectors: what `portable=True` builds
PORTABLE_X86 = {"cpp.march": "x86-64-v3", "cpp.simdlen": 256}


def export_pt2(learner, path, *, tolerance: float = 1e-4, inductor_configs: dict | None = None,
               portable: bool = False) -> ExportReport:
    """`portable=True` (x86-64 only): compile for x86-64-v3 with AVX2 vectors instead of the
    exporting CPU. By default Inductor compiles with ``-march=native`` and the widest vector ISA
    the host has (recorded in the package as ``AOTI_CPU_ISA``, e.g. ``AVX512 AVX512_VNNI
    AMX_TILE``), so a package may not load or may crash with an illegal instruction on an older
    CPU."""
    import torch

    task = learner.task
    if task is None:
        raise UsageError("export needs the learner's task (build the learner with tasklearner or load_learner)")
    path = Path(path)
    meta = task_metadata(task, input_name=INPUT_NAME, output_name=OUTPUT_NAME)
    meta["format"] = "hotstart.pt2/1"
    model = eval_copy(learner)
    x = example_batch(task, 2)
    batch = torch.export.Dim("batch", min=1, max=65536)
    try:
        with torch.no_grad():
            program = torch.export.export(model, (x,), dynamic_shapes=({0: batch},), strict=False)
    except Exception as e:
        raise ExportError(f"torch.export failed{failing_layer(model, x)}: {type(e).__name__}: "
                          f"{str(e).strip().splitlines()[0] if str(e).strip() else ''}\nWhat to try: a backbone "
                          "without that layer (the default SmallCNN and timm's resnets export)") from e
    import platform

    base = PORTABLE_X86 if portable and platform.machine() in ("x86_64", "AMD64") else {}
    configs = {**base, **(inductor_configs or {}), "aot_inductor.metadata": meta}
    check = example_batch(task, 3, seed=1)
    # `path` is replaced only by a package that passed the check. quiet: on a CPU machine with a CUDA
    # toolkit, the C++ build logs torch's "No CUDA runtime is found"
    with atomic_path(path, suffix=".pt2") as tmp:
        with quiet_torch_notices():
            torch._inductor.aoti_compile_and_package(program, package_path=str(tmp), inductor_configs=configs)
            loaded = torch._inductor.aoti_load_package(str(tmp))
        with torch.no_grad():
            got, want = loaded(check), model(check)
        got = got[0] if isinstance(got, (list, tuple)) else got
        diff = float((got - want).abs().max())
        if not diff <= tolerance:
            raise ExportError(f"the compiled package and eager torch differ by up to {diff:.3g} (> {tolerance:g}); "
                              f"nothing was written to {path}")
    return ExportReport(path, "pt2", path.stat().st_size, diff)


def load_pt2(path):
    """(callable model, metadata dict with JSON values decoded) of a .pt2 written by `export_pt2`."""
    import torch

    from ..predictor import check_metadata, decode_metadata

    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such .pt2 package")
    model = torch._inductor.aoti_load_package(str(path))
    props = dict(model.get_metadata())
    if props.get("format") != "hotstart.pt2/1":
        raise SavedModelError(f"{path}: not a .pt2 written by hotstart's export (format {props.get('format')!r})")
    meta = decode_metadata(props, str(path))  # the predictor's decoding and checks: one implementation
    check_metadata(meta, str(path))
    return model, meta
