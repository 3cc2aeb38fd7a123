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

torchao's passes draw from torch's global RNG: ``prepare_pt2e`` and ``convert_pt2e`` (the
quantizers trace their conv-bn patterns on ``torch.randn`` examples), and every ``train()`` /
``eval()`` of a captured graph (it re-traces the batchnorm and dropout patterns). The draws do not
shape the model, but they would move the caller's RNG, which hotstart leaves as it found it
(learner/rng.py): they run in `contained_globals` (`_contained`), as the imports of ExecuTorch,
litert-torch and torchao run in `import_contained` (hotstart/contained_import.py), which put back
the RNGs, the root logger and the warnings filters these libraries change.
"""
from __future__ import annotations

import functools
import types

from ..contained_import import contained_globals, import_contained
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
        xnnpack = import_contained("executorch.backends.xnnpack.quantizer.xnnpack_quantizer")
        config = xnnpack.get_symmetric_quantization_config(is_per_channel=True, is_qat=qat)
        return xnnpack.XNNPACKQuantizer().set_global(config)
    if target == "onnx":
        x86 = import_contained("torchao.quantization.pt2e.quantizer.x86_inductor_quantizer")
        return x86.X86InductorQuantizer().set_global(x86.get_default_x86_inductor_quantization_config(is_qat=qat))
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
        litert = import_contained("litert_torch.quantize.pt2e_quantizer")
        return litert.PT2EQuantizer().set_global(litert.get_symmetric_quantization_config(is_per_channel=True))
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
    pt2e = import_contained("torchao.quantization.pt2e.quantize_pt2e")

    quantizer = make_quantizer(target, qat)
    graph = capture(model.train() if qat else model.eval(), example)
    insert = pt2e.prepare_qat_pt2e if qat else pt2e.prepare_pt2e
    prepared = _contained(insert)(graph, quantizer)
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
    convert_pt2e = _contained(import_contained("torchao.quantization.pt2e.quantize_pt2e").convert_pt2e)

    prepared.eval()
    quantized = _train_eval(convert_pt2e(prepared, fold_quantize=FOLD_QUANTIZE[target]))
    quantized.eval()  # torchao's eval() returns None, unlike a module's
    quantized.training = False  # and leaves the flag as it was (torch.onnx.export warns on it)
    return quantized


def _train_eval(graph):
    """`graph` (an exported GraphModule) made to switch train / eval as an eager module does
    (torchao's `allow_exported_model_train_eval`, which changes it in place), each switch run
    contained (`_contained`: the module docstring says why). Bound methods, as torchao's: a deep
    copy of the graph (export/qat.py) switches the copy, not this graph."""
    import_contained("torchao.quantization.pt2e").allow_exported_model_train_eval(graph)
    graph.train = types.MethodType(_contained(graph.train.__func__), graph)
    graph.eval = types.MethodType(_contained(graph.eval.__func__), graph)
    return graph


def _contained(func):
    """`func`, run in `contained_globals`: what it draws from the global RNGs (or changes in logging
    and warnings) is undone when it returns."""
    @functools.wraps(func)
    def contained(*args, **kwargs):
        with contained_globals():
            return func(*args, **kwargs)
    return contained
