"""int8 models from quantization-aware training (QAT) or post-training calibration, through PT2E.

    learner.fit_one_cycle(1, 3e-3)                          # train in fp32 first
    q = learner.quantize("pte", qat_epochs=1)               # QAT: 1 epoch with fake quantizers
    q.validate()                                            # {"loss": ..., "accuracy": ...} of the int8 model
    q.export("digits-qat.pte")                              # ExecuTorch, XNNPACK int8
    learner.quantize("onnx", qat_epochs=1).export("digits-qat.onnx")  # QDQ ONNX, any ONNX runtime
    learner.quantize("pte", qat_epochs=0)                   # post-training: calibration only
    learner.quantize("tflite", qat_epochs=1).export("digits-qat.tflite")  # LiteRT / TF Lite Micro int8
    q.retarget("tflite").export("digits-qat.tflite")       # the same QAT model, for LiteRT: no second QAT

Why a step after training, not ``fit_one_cycle(..., qat=True)``: QAT is a short fine-tuning of a
model that already works in fp32 (the recipe of PyTorch's and torchao's QAT guides; fake
quantizers from the first step slow early training, and their ranges chase weights that still
move a lot). As a separate step the fp32 learner stays as it was, so fp32, post-training int8
(``learner.export(..., quantize="int8")``) and QAT int8 are compared from one trained model, and
the loop knows nothing about quantization.

How: the task model is captured with ``torch.export`` and prepared with the target's quantizer
(export/pt2e.py); a second `Learner` around the prepared graph trains it for `qat_epochs` with
hotstart's own loop, callbacks and one-cycle schedule (same data, loss, metrics, seed); then
``convert_pt2e`` turns the fake quantizers into int8 quantize / dequantize ops. With
``qat_epochs=0`` the observers are calibrated on `calibrate` training samples instead (what
``export(..., format="pte", quantize="int8")`` runs).
"""
from __future__ import annotations

from typing import Sequence

from ..errors import UsageError
from .onnx import example_batch


class QuantizedModel:
    """An int8 model for one target ("pte", "onnx" or "tflite"): validate it, export it, or
    `retarget` it to another target of the same int8 scheme."""

    def __init__(self, learner, prepared, target: str, qat: bool, how: str, history: list | None = None):
        import copy

        from . import pt2e

        self.learner, self.prepared, self.target, self.qat, self.how = learner, prepared, target, qat, how
        self.model = pt2e.convert(copy.deepcopy(prepared), target)  # `prepared` stays for `retarget`
        self.history = history or []  # the QAT epochs' history (empty after calibration)

    def retarget(self, target: str) -> "QuantizedModel":
        """This int8 model for `target`, converted again from the same trained (or calibrated)
        model, without training again: allowed where both targets quantize alike (QAT for "pte"
        and for "tflite" both use XNNPACK's scheme; export/pt2e.py)."""
        from . import pt2e

        if target not in pt2e.TARGETS:
            raise UsageError(f"retarget: target must be one of {pt2e.TARGETS}, got {target!r}")
        mine, theirs = pt2e.scheme(self.target, self.qat), pt2e.scheme(target, self.qat)
        if mine != theirs:
            raise UsageError(f"retarget: this model was quantized with {mine} scheme for {self.target!r}; {target!r} "
                             f"{'QAT' if self.qat else 'post-training int8'} uses {theirs}: quantize again with "
                             f"learner.quantize({target!r}, ...)")
        return QuantizedModel(self.learner, self.prepared, target, self.qat, self.how, self.history)

    def validate(self) -> dict:
        """Loss and metrics of the int8 model (the converted torch graph) on the learner's validation set."""
        src = self.learner
        evaluator = _learner_class(src)(self.model, None, src.valid_loader, src.loss_func, metrics=src.task.metrics,
                            task=src.task, seed=src.seed, progress=False)
        return evaluator.validate()

    def export(self, path, *, batch_size: int = 1, opset: int | None = None):
        """Write the int8 model: a ``.pte`` (target "pte", static `batch_size`), a QDQ ``.onnx``
        (target "onnx", dynamic batch) or a ``.tflite`` (target "tflite", one input per call), with
        the task's metadata; returns the ExportReport, whose
        difference is measured against this int8 torch model."""
        from pathlib import Path

        suffix = Path(path).suffix.lower()
        if suffix != f".{self.target}":
            raise UsageError(f"this model was quantized for {self.target!r}: write a .{self.target} file, "
                             f"not {Path(path).name!r} (quantize again with target={suffix.lstrip('.')!r})")
        if self.target == "pte":
            from .pte import write_pte

            return write_pte(self.model, self.learner.task, path, batch_size=batch_size, quantization=self.how,
                             tolerance=None)
        if self.target == "tflite":
            from .tflite import write_tflite

            return write_tflite(self.model, self.learner.task, path, quantization=self.how, tolerance=None)
        from .onnx import write_onnx

        return write_onnx(self.model, self.learner.task, path, tolerance=None, opset=opset,
                          extra_metadata={"quantization": self.how}, format="onnx-int8")

    def __repr__(self):
        return f"QuantizedModel(target={self.target!r}, {self.how})"


def quantize_learner(learner, target: str = "pte", *, qat_epochs: int = 1, lr_max: float = 1e-4,
                     calibrate: int = 256, callbacks: Sequence = (), **fit_kwargs) -> QuantizedModel:
    """`learner.quantize(...)`: QAT for `qat_epochs` epochs (one-cycle up to `lr_max`, other
    `fit_one_cycle` keywords pass through), or post-training calibration when `qat_epochs` is 0.
    The learner itself is left unchanged."""
    import copy

    from . import pt2e

    if target not in pt2e.TARGETS:
        raise UsageError(f"quantize: target must be one of {pt2e.TARGETS}, got {target!r}")
    if int(qat_epochs) < 0:
        raise UsageError(f"quantize: qat_epochs must be 0 (post-training) or more, got {qat_epochs!r}")
    task = learner.task
    if task is None:
        raise UsageError("quantize needs the learner's task (build the learner with tasklearner or load_learner)")
    model = copy.deepcopy(learner.task_model()).cpu()
    if getattr(model, "compiled_with", None) is not None:
        model.compiled_with = None  # PT2E captures plain eager code
    example = example_batch(task, 2)
    history = None
    if int(qat_epochs) == 0:
        from .quantize import calibration_samples

        samples = calibration_samples(learner, calibrate)
        prepared = pt2e.prepare(model, example, target, qat=False)
        pt2e.calibrate(prepared, _batches(task, samples))
        how = (f"int8 PT2E post-training ({pt2e.scheme(target, False)} scheme), calibrated on {len(samples)} "
               "training samples")
    else:
        prepared = pt2e.prepare(model, example, target, qat=True)
        history = _train(learner, prepared, int(qat_epochs), lr_max, callbacks, fit_kwargs)
        how = (f"int8 PT2E quantization-aware training ({pt2e.scheme(target, True)} scheme), {int(qat_epochs)} "
               f"epoch(s) at lr_max={lr_max:g}")
    return QuantizedModel(learner, prepared, target, int(qat_epochs) > 0, how, history)


def _train(learner, prepared, epochs: int, lr_max: float, callbacks, fit_kwargs) -> list:
    """Fit the prepared graph with hotstart's loop: the learner's data, loss, metrics and seed."""
    if learner.train_loader is None:
        raise UsageError("quantization-aware training needs training data: build the learner with data")
    qat = _learner_class(learner)(prepared, learner.train_loader, learner.valid_loader, learner.loss_func,
                  optimizer=learner.optimizer, metrics=learner.task.metrics, task=learner.task,
                  seed=learner.seed, progress=False, wd=learner.wd)
    return qat.fit_one_cycle(epochs, lr_max, callbacks=callbacks, **fit_kwargs).history


def _learner_class(learner):
    """The learner's own class, for the learner around the prepared graph: a subclass's
    `compute_loss` / `train_step` then apply to QAT too. Taken from the instance because export/
    must not import learner/ (``Learner.export`` imports export/: that would be a cycle)."""
    return type(learner)


def _batches(task, samples, batch_size: int = 32):
    """Calibration inputs encoded as for validation (no augmentation), `batch_size` at a time."""
    import torch

    for start in range(0, len(samples), batch_size):
        yield torch.stack([task.encode_input(x, "validation") for x in samples[start:start + batch_size]])
