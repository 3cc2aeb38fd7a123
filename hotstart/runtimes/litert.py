"""`LiteRtRuntime`: a hotstart ``.tflite`` (hotstart/export/tflite.py) in LiteRT, the runtime interface's
default for ``.tflite``.

    model = open_file("digits-int8.tflite")      # or LiteRtRuntime.load(path, threads=1)
    label, probs = model.predict("img.png")

LiteRT is TF Lite's new name: ``ai_edge_litert.interpreter.Interpreter`` (XNNPACK on the CPU), the
runtime of Android, iOS and Linux boards. No torch. The file's input contract (channels last, int8
input and output) is applied by `TfliteRuntime` (tflite_file.py), not by the caller.
"""
from __future__ import annotations

import numpy as np

from ..contract.model import cannot_load
from .native_output import quiet_native_output
from .tflite_file import TfliteRuntime

__all__ = ["LiteRtRuntime"]


class LiteRtRuntime(TfliteRuntime):
    """A loaded LiteRT interpreter and the file's metadata."""

    def __init__(self, interpreter, meta: dict, source: str):
        self.interpreter = interpreter
        self.input, self.output = interpreter.get_input_details()[0], interpreter.get_output_details()[0]
        super().__init__(meta, source, self.input, self.output)

    @classmethod
    def load(cls, source, *, threads: int | None = None) -> "LiteRtRuntime":
        """`source`: a .tflite path or its bytes; `threads`: LiteRT's CPU threads (None: its default)."""
        from ai_edge_litert.interpreter import Interpreter

        where, data, meta = cls.read(source)
        try:
            with quiet_native_output():  # "INFO: Created TensorFlow Lite XNNPACK delegate for CPU."
                interpreter = Interpreter(model_content=data, num_threads=threads)
                interpreter.allocate_tensors()
        except (ValueError, RuntimeError) as e:
            raise cannot_load(where, "LiteRT", e) from e
        return cls(interpreter, meta, where)

    def invoke(self, x: np.ndarray) -> np.ndarray:
        self.interpreter.set_tensor(self.input["index"], x)
        self.interpreter.invoke()
        return self.interpreter.get_tensor(self.output["index"])
