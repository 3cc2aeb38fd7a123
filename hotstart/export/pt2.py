""".pt2 export: torch.export, then AOTInductor: a compiled shared library in a package.

    learner.export("digits.pt2")                  # minutes on a 2-core CPU: C++ is compiled
    python -m hotstart export runs/hotstart --format pt2 --out digits.pt2

Load it from Python with ``torch._inductor.aoti_load_package("digits.pt2")`` or from C++ with
libtorch's ``torch::inductor::AOTIModelPackageLoader``; no hotstart, timm or Python model code is
needed. The task travels inside the package as AOTInductor metadata
(``inductor_configs={"aot_inductor.metadata": ...}``), with the same keys as the ONNX export (see
onnx.py): ``loader.get_metadata()`` returns them in both languages; in Python,
``hotstart.runtimes.open_file("digits.pt2")`` opens it behind the runtime interface. The batch
dimension is dynamic (traced with 2). Like the ONNX export, it checks itself (export/parity.py):
the loaded package and the eager model run the same batch, and the export fails above `tolerance`. The package is compiled and
checked under a temporary name beside `path`, which it replaces only once it passed (a failed
export leaves a previous file at `path` as it was).
"""
from __future__ import annotations

from pathlib import Path

from ..atomic import atomic_path
from ..compile_cache.quiet import quiet_torch_notices
from ..contract.schema import format_name
from ..errors import UsageError
from ..runtimes.native_output import quiet_native_output
from ..runtimes.pt2 import Pt2Runtime
from .metadata import task_metadata
from .onnx import INPUT_NAME, OUTPUT_NAME, eval_copy, example_batch
from .parity import check_against_torch
from .report import ExportReport
from .trace_errors import export_failure, quiet_trace


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
    meta["format"] = format_name("pt2")
    model = eval_copy(learner)
    x = example_batch(task, 2)
    batch = torch.export.Dim("batch", min=1, max=65536)
    try:
        with torch.no_grad(), quiet_trace():
            program = torch.export.export(model, (x,), dynamic_shapes=({0: batch},), strict=False)
    except Exception as e:
        raise export_failure("torch.export", e, model, x) from e
    import platform

    base = PORTABLE_X86 if portable and platform.machine() in ("x86_64", "AMD64") else {}
    configs = {**base, **(inductor_configs or {}), "aot_inductor.metadata": meta}
    check = example_batch(task, 3, seed=1)
    # `path` is replaced only by a package that passed the check. quiet: on a CPU machine with a CUDA
    # toolkit, the C++ build logs torch's "No CUDA runtime is found"
    with atomic_path(path, suffix=".pt2") as tmp:
        with quiet_torch_notices(), quiet_native_output():
            torch._inductor.aoti_compile_and_package(program, package_path=str(tmp), inductor_configs=configs)
        diff = check_against_torch(Pt2Runtime.load(tmp), model, check, tolerance=tolerance,
                                   what="the AOTInductor package", path=path)
    return ExportReport(path, "pt2", path.stat().st_size, diff)
