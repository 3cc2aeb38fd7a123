"""Running a C export beside onnxruntime: compile the host harness, feed both the same images.

The export checks itself with this where a C compiler is found (as the ONNX export checks
onnxruntime against torch), and the tests use it for the parity numbers.
"""
from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np

from ..report import ExportError
from . import firmware


def find_cc() -> str | None:
    return shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")


def compile_host(folder, name: str = "model", cc: str | None = None) -> Path:
    """Build ``folder/harness`` from harness.c + NAME.c with ``cc -std=c99 -Wall -Werror -O2``."""
    folder = Path(folder)
    cc = cc or find_cc()
    if cc is None:
        raise ExportError("no C compiler found (cc, gcc or clang) to build the harness")
    cmd = firmware.host_command(folder, name, cc)
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        raise ExportError(f"{' '.join(cmd)} failed:\n{done.stderr[-4000:]}")
    return folder / "harness"


def parse_lines(text: str, n_classes: int) -> tuple[np.ndarray, np.ndarray]:
    """Harness output ``label logit...`` per line -> (labels, int8 logits N x classes)."""
    rows = [line.split() for line in text.splitlines() if line.strip() and line.split()[0].lstrip("-").isdigit()]
    rows = [r for r in rows if len(r) == n_classes + 1]
    arr = np.array([[int(v) for v in r] for r in rows], dtype=np.int64).reshape(-1, n_classes + 1)
    return arr[:, 0], arr[:, 1:]


def run_host(binary, pixels: np.ndarray, n_classes: int) -> tuple[np.ndarray, np.ndarray]:
    """(labels, logits) of the harness on N x H x W x C uint8 images."""
    pixels = np.ascontiguousarray(pixels, dtype=np.uint8)
    with tempfile.NamedTemporaryFile(suffix=".raw") as f:
        f.write(pixels.tobytes())
        f.flush()
        done = subprocess.run([str(binary), f.name], capture_output=True, text=True, check=True)
    labels, logits = parse_lines(done.stdout, n_classes)
    if len(labels) != len(pixels):
        raise ExportError(f"the harness printed {len(labels)} results for {len(pixels)} images")
    return labels, logits


def onnxruntime_codes(model_bytes: bytes, pixels: np.ndarray, meta: dict, scale: float, zero_point: int) -> np.ndarray:
    """onnxruntime's int8 logits for the same images, as int8 codes (N x classes).

    The images are normalized as every runtime does (the contract's `normalize_pixels`);
    onnxruntime's output is its dequantized last QuantizeLinear, so ``round(out / scale) +
    zero_point`` recovers its int8 codes exactly.
    """
    import onnxruntime as ort

    from ...contract.image_input import normalize_pixels

    x = np.stack([normalize_pixels(np.moveaxis(p, -1, 0), p.shape[-1], meta["mean"], meta["std"])
                  for p in np.asarray(pixels, dtype=np.uint8)]) if len(pixels) else np.zeros((0,), np.float32)
    session = ort.InferenceSession(model_bytes, providers=["CPUExecutionProvider"])
    out = np.concatenate([session.run(None, {session.get_inputs()[0].name: x[i:i + 64]})[0]
                          for i in range(0, len(x), 64)])
    return np.round(out.astype(np.float64) / scale).astype(np.int64) + zero_point


def compare(cmodel, model_bytes: bytes, pixels: np.ndarray, folder) -> dict:
    """Compile the host harness in `folder` (which holds the C files) and compare it to onnxruntime."""
    name = next(k for k in cmodel.sources if k.endswith(".c"))[:-2]
    files = firmware.harness_files(name)
    Path(folder, "harness.c").write_text(files["harness.c"])
    binary = compile_host(folder, name)
    n = len(cmodel.meta["classes"])
    labels, logits = run_host(binary, pixels, n)
    out = cmodel.program.output
    ref = onnxruntime_codes(model_bytes, pixels, cmodel.meta, out.scale, out.zero_point)
    ref_labels = ref.argmax(1)
    return {"images": len(pixels), "labels_equal": int((labels == ref_labels).sum()),
            "max_step": int(np.abs(logits - ref).max()) if len(ref) else 0,
            "c_labels": labels, "c_logits": logits, "ort_logits": ref}
