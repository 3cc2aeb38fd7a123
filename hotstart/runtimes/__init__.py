"""Runtimes: a model file, opened by the runtime that runs it, behind one interface.

    model = open_file("digits.pte")         # or .onnx, .pt2, .tflite, .vmfb (hotstart.deploy.open_model: folders too)
    micro = open_file("digits-int8.tflite", runtime="tflite-micro")   # another runtime of the suffix
    model.meta["classes"]                   # the checked metadata
    model.predict("img.png")                # raw input -> (label, probabilities)
    model.predict_many(images, 32)          # raw inputs -> decoded outputs
    model.run(batch)                        # encoded float32 inputs -> raw outputs (the parity step)

Every runtime is a `ContractModel` (hotstart/contract/model.py): the model contract encodes the
inputs and decodes the outputs, the runtime only runs the network, so a model answers the same
whichever runtime runs it. The export checks each file it writes by running it here
(hotstart/export/parity.py). registry.py lists the runtimes by suffix and says how to add one.
"""
from .eager import EagerRuntime
from .iree import IreeRuntime
from .litert import LiteRtRuntime
from .native_output import quiet_native_output
from .pt2 import Pt2Runtime
from .pte import PteRuntime
from .registry import RUNTIMES, open_file, runtime_names, suffixes
from .tflite_file import TfliteRuntime
from .tflm import TflmRuntime

__all__ = ["EagerRuntime", "Pt2Runtime", "PteRuntime", "LiteRtRuntime", "TflmRuntime", "TfliteRuntime", "IreeRuntime",
           "RUNTIMES", "open_file", "runtime_names", "suffixes", "quiet_native_output"]
