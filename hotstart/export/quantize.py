"""int8 ONNX: onnxruntime's static quantization of the fp32 export, calibrated on training images.

    learner.export("digits-int8.onnx", quantize="int8", calibrate=256)
    python -m hotstart export runs/hotstart --format onnx --quantize int8 --out digits-int8.onnx

Steps: the fp32 export (checked against torch, see onnx.py) -> ``quant_pre_process`` (shape
inference and graph optimization) -> ``quantize_static`` in QDQ format, per output channel, with a
`CalibrationDataReader` over `calibrate` training samples encoded as for validation (no
augmentation: calibration must see what inference sees).

Types, following onnxruntime's notes for x86 CPUs: activations uint8, weights int8 (U8S8, the
fast path of VPMADDUBSW / VNNI). Without VNNI, VPMADDUBSW can saturate on 8-bit weights, so
``reduce_range="auto"`` quantizes weights to 7 bits unless the exporting CPU has VNNI (read from
/proc/cpuinfo; elsewhere 7 bits, which is safe everywhere and costs little accuracy).

The report gives the int8 file's largest difference from the fp32 torch model (on training
images), the fp32 file's, and the size ratio. With ``measure=True`` (``--measure`` on the command
line) it also gives the validation accuracy of the fp32 and the int8 file (both with the torch-free
predictor, so it is what a deployment sees) and the CPU latency ratio (int8 / fp32) at batch 1 and
32: a full validation pass and a benchmark, so only when asked. The latency ratio is measured, not
promised: on CPUs without VNNI, or for tiny models dominated by QuantizeLinear/DequantizeLinear
overhead, int8 can be slower.
"""
from __future__ import annotations

import tempfile
import time
from pathlib import Path

import numpy as np

from ..atomic import atomic_write_bytes
from ..errors import UsageError
from ..predictor import Predictor
from .onnx import ExportReport, eval_copy, export_onnx, strip_symbolic_value_info
from .parity import max_difference


def cpu_has_vnni() -> bool | None:
    """True / False from /proc/cpuinfo's flags (Linux); None where it can't be told."""
    try:
        flags = Path("/proc/cpuinfo").read_text()
    except OSError:
        return None
    return "avx512_vnni" in flags or "avx_vnni" in flags


def calibration_samples(learner, n: int) -> list:
    """`n` training inputs (raw), chosen with the learner's seed; training data needed (also
    the calibration set of the PT2E int8 exports, export/qat.py).

    From the training split only: calibrating on validation images would tune the int8 ranges to
    the very images the int8 accuracy is then reported on, and flatter it (tests hold this)."""
    if int(n) < 1:
        raise UsageError(f"calibrate must be at least 1 sample, got {n!r}")
    loader = learner.train_loader
    if loader is None:
        raise UsageError("quantize='int8' needs training data to calibrate on: build the learner with data "
                         "(or pass --data to `hotstart export`)")
    inputs = loader.dataset.inputs
    if len(inputs) == 0:
        raise UsageError("quantize='int8': the training split is empty, so there is nothing to calibrate on")
    idx = np.random.default_rng(learner.seed).permutation(len(inputs))[:int(n)]
    return [inputs[int(i)] for i in sorted(idx)]


class CalibrationReader:
    """onnxruntime's CalibrationDataReader protocol: get_next() -> {input: batch} or None.

    Each sample is encoded as for validation (no augmentation: calibration must see what inference
    sees), once per pass. An empty sample list is refused here, with our own message, rather than
    by onnxruntime's quantizer deep inside its calibration."""

    def __init__(self, task, samples, input_name: str, batch_size: int = 32):
        if len(samples) == 0:
            raise UsageError("int8 calibration was given no samples: the quantizer would calibrate on nothing")
        self.task, self.samples, self.input_name, self.batch_size = task, samples, input_name, batch_size
        self.pos = 0

    def get_next(self):
        if self.pos >= len(self.samples):
            return None
        chunk = self.samples[self.pos:self.pos + self.batch_size]
        self.pos += len(chunk)
        batch = np.stack([self.task.encode_input(x, "validation").numpy() for x in chunk])
        return {self.input_name: batch.astype(np.float32)}

    def rewind(self):
        self.pos = 0


def export_int8(learner, path, *, calibrate: int = 256, reduce_range: bool | str = "auto",
                per_channel: bool = True, measure: bool = False, **kwargs) -> ExportReport:
    """fp32 export, then static int8 quantization; writes `path` and reports before / after
    (`measure`: also validation accuracy of both files and their latency, see the module docs)."""
    import onnx
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static
    from onnxruntime.quantization.shape_inference import quant_pre_process

    path = Path(path)
    samples = calibration_samples(learner, calibrate)
    vnni = cpu_has_vnni()
    if reduce_range == "auto":
        reduce_range = not vnni
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=path.parent, prefix=f".{path.name}.") as tmp:
        fp32, pre, q = Path(tmp) / "fp32.onnx", Path(tmp) / "pre.onnx", Path(tmp) / "int8.onnx"
        report = export_onnx(learner, fp32, **kwargs)
        quant_pre_process(str(fp32), str(pre))
        reader = type("Reader", (CalibrationReader, CalibrationDataReader), {})(learner.task, samples, "input")
        quantize_static(str(pre), str(q), reader, quant_format=QuantFormat.QDQ, per_channel=per_channel,
                        reduce_range=bool(reduce_range), activation_type=QuantType.QUInt8,
                        weight_type=QuantType.QInt8)
        model = onnx.load(str(q))
        meta = {p.key: p.value for p in onnx.load(str(fp32), load_external_data=False).metadata_props}
        meta["quantization"] = (f"int8 static QDQ, per_channel={per_channel}, activations uint8, weights int8, "
                                f"reduce_range={bool(reduce_range)}, calibrated on {len(samples)} training samples")
        del model.metadata_props[:]
        for k, v in meta.items():
            model.metadata_props.add(key=k, value=v)
        data = strip_symbolic_value_info(model).SerializeToString()  # quant_pre_process added them back
        # the int8 file's own difference from the fp32 torch model (not the fp32 file's), on training
        # images: random inputs lie outside the calibrated ranges and would overstate it
        int8_diff = max_difference(Predictor.load(data), eval_copy(learner), _encoded(learner.task, samples[:8]))
        fp32_bytes = fp32.read_bytes()
        extra = {"calibration samples": len(samples), "reduce_range": bool(reduce_range), "cpu has VNNI": vnni,
                 "size ratio (fp32 / int8)": round(len(fp32_bytes) / len(data), 2)}
        if measure:
            extra.update(compare(learner, fp32_bytes, data))
    atomic_write_bytes(path, data)
    extra["largest difference of the fp32 file from torch"] = f"{report.max_abs_diff:.2e}"
    return ExportReport(path, "onnx-int8", len(data), int8_diff, extra)


def compare(learner, fp32: bytes, int8: bytes, repeats: int = 20) -> dict:
    """Validation accuracy of both files (torch-free predictor) and CPU latency ratios at batch 1 and 32."""
    out: dict = {}
    preds = [Predictor.load(b) for b in (fp32, int8)]
    sessions = [p.session for p in preds]
    if learner.valid_loader is not None:
        ds = learner.valid_loader.dataset
        inputs = [ds.inputs[i] for i in range(len(ds))]
        targets = [ds.targets[i] for i in range(len(ds))]
        acc = [p.evaluate(inputs, targets)["accuracy"] for p in preds]
        out["valid accuracy fp32"], out["valid accuracy int8"] = round(acc[0], 4), round(acc[1], 4)
    shape = [int(d) for d in _input_shape(learner)]
    rng = np.random.default_rng(0)
    for batch in (1, 32):
        x = rng.standard_normal((batch, *shape)).astype(np.float32)
        times = [_median_time(s, x, repeats) for s in sessions]
        out[f"latency batch {batch} fp32 / int8 (ms)"] = f"{times[0] * 1e3:.3f} / {times[1] * 1e3:.3f}"
        out[f"latency ratio int8 / fp32, batch {batch}"] = round(times[1] / times[0], 2)
    return out


def _encoded(task, samples):
    import torch

    return torch.stack([task.encode_input(x, "validation") for x in samples])


def _input_shape(learner):
    block = learner.task.encoded_blocks()[0]
    if not hasattr(block, "size") and callable(getattr(block, "shape", None)):  # a series: (channels, length)
        return tuple(block.shape())
    return (block.channels, *block.size)


def _median_time(session, x, repeats: int) -> float:
    name = session.get_inputs()[0].name
    session.run(None, {name: x})  # warm-up
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        session.run(None, {name: x})
        times.append(time.perf_counter() - t)
    return float(np.median(times))
