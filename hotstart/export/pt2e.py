"""int8 through torchao's PT2E flow: capture with torch.export, insert observers (post-training) or
fake quantizers (quantization-aware training), then convert to quantize / dequantize ops.

    prepared = prepare(model, example, target="pte", qat=False)   # XNNPACK's scheme
    calibrate(prepared, batches)                                     # post-training: observe ranges
    quantized = convert(prepared)                                    # a GraphModule with Q/DQ ops

The quantizer is chosen by where the model will run, because each runtime fuses a different
pattern into its int8 kernels:

=========  ===========================================  ==========================================
target     quantizer                                    runs in
=========  ===========================================  ==========================================
``pte``    executorch's ``XNNPACKQuantizer`` (symmetric  ExecuTorch's XNNPACK delegate (export/pte.py)
           int8, per-channel weights)
``onnx``   torchao's ``X86InductorQuantizer`` (uint8     onnxruntime, through ``torch.onnx.export``
           activations, int8 per-channel weights: the    (dynamo) as a QDQ graph (export/qat.py)
           U8S8 pattern onnxruntime's x86 kernels take)
``tflite`` litert-torch's ``PT2EQuantizer`` (symmetric   LiteRT and TF Lite Micro (export/tflite.py):
           int8 per-channel weights, int8 activations;  int8 kernels, int8 input and output
           QAT: XNNPACK's, the same scheme; see below)
=========  ===========================================  ==========================================

torchao's module-swap API (``quantize_`` with ``QATConfig``) covers linear and embedding layers
only, not convolutions, which is why this uses PT2E. The captured graph keeps a dynamic batch
dimension, so the learner's loop can train it on batches of any size (the last one is smaller).
"""
from __future__ import annotations

from ..errors import UsageError

TARGETS = ("pte", "onnx", "tflite")
# litert-torch reads the int8 weights as quantize ops on float constants: folding them into int8
# constants (torchao's default) fails in its converter ("operand #0 must be ... quantized values")
FOLD_QUANTIZE = {"pte": True, "onnx": True, "tflite": False}


def scheme(target: str, qat: bool) -> str:
    """The name of the int8 scheme `make_quantizer` gives `target`: two targets with one scheme take
    the same prepared (trained or calibrated) model (`QuantizedModel.retarget`, export/qat.py)."""
    if target == "pte" or (target == "tflite" and qat):
        return "XNNPACK's"
    return {"onnx": "X86 Inductor's", "tflite": "LiteRT's"}.get(target, target)


def make_quantizer(target: str, qat: bool):
    """The PT2E quantizer for `target` ("pte", "onnx" or "tflite"), configured for QAT or post-training."""
    if target == "pte":
        from executorch.backends.xnnpack.quantizer.xnnpack_quantizer import (
            XNNPACKQuantizer, get_symmetric_quantization_config)

        return XNNPACKQuantizer().set_global(get_symmetric_quantization_config(is_per_channel=True, is_qat=qat))
    if target == "onnx":
        from torchao.quantization.pt2e.quantizer.x86_inductor_quantizer import (
            X86InductorQuantizer, get_default_x86_inductor_quantization_config)

        return X86InductorQuantizer().set_global(get_default_x86_inductor_quantization_config(is_qat=qat))
    if target == "tflite" and qat:
        # litert-torch 0.10's own QAT annotation fails under torch 2.14 (its conv-bn pattern hands
        # torch.export a function, which torch.export now refuses). XNNPACK's int8 scheme is TF Lite's
        # (symmetric per-channel int8 weights, per-tensor int8 activations), and its QAT graph
        # converts to a fully int8 .tflite: it needs hotstart[edge] (executorch) besides [tflite].
        try:
            return make_quantizer("pte", qat=True)
        except ImportError as e:
            raise UsageError("quantization-aware training for target 'tflite' uses executorch's XNNPACKQuantizer: "
                             f"pip install 'hotstart[edge]' ({e})") from e
    if target == "tflite":
        from litert_torch.quantize.pt2e_quantizer import PT2EQuantizer, get_symmetric_quantization_config

        return PT2EQuantizer().set_global(get_symmetric_quantization_config(is_per_channel=True))
    raise UsageError(f"quantize: target must be one of {TARGETS}, got {target!r}")


def capture(model, example):
    """`model` as an exported GraphModule with a dynamic batch dimension, whose ``.train()`` and
    ``.eval()`` work (torchao's `allow_exported_model_train_eval`: dropout and BatchNorm switch
    the way they do in eager mode)."""
    import torch

    from .trace_errors import export_failure, quiet_trace

    batch = torch.export.Dim("batch", min=1, max=65536)
    try:
        with quiet_trace():
            graph = torch.export.export(model, (example,), dynamic_shapes=({0: batch},), strict=False).module()
    except Exception as e:  # torch.export raises many kinds; name the layer
        raise export_failure("capturing the model for int8 (torch.export)", e, model, example) from e
    return _train_eval(graph)


def prepare(model, example, target: str, qat: bool):
    """Capture `model` and insert fake quantizers (`qat`) or observers (post-training)."""
    from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e, prepare_qat_pt2e

    quantizer = make_quantizer(target, qat)
    graph = capture(model.train() if qat else model.eval(), example)
    prepared = prepare_qat_pt2e(graph, quantizer) if qat else prepare_pt2e(graph, quantizer)
    return _train_eval(prepared)


def calibrate(prepared, batches) -> None:
    """Run `batches` (encoded inputs) through the observers, in eval mode, without gradients."""
    import torch

    prepared.eval()
    with torch.no_grad():
        for x in batches:
            prepared(x)


def convert(prepared, target: str = "pte"):
    """The prepared (trained or calibrated) model with its fake quantizers turned into int8
    quantize / dequantize ops, in eval mode, in the form `target`'s exporter reads."""
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e

    prepared.eval()
    quantized = _train_eval(convert_pt2e(prepared, fold_quantize=FOLD_QUANTIZE[target]))
    quantized.eval()  # torchao's eval() returns None, unlike a module's
    quantized.training = False  # and leaves the flag as it was (torch.onnx.export warns on it)
    return quantized


def _train_eval(graph):
    """`graph` (an exported GraphModule) made to switch train / eval as an eager module does
    (torchao's `allow_exported_model_train_eval`, which changes it in place)."""
    from torchao.quantization.pt2e import allow_exported_model_train_eval

    allow_exported_model_train_eval(graph)
    return graph
