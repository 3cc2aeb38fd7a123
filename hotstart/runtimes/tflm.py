"""`TflmRuntime`: a hotstart int8 ``.tflite`` in TF Lite Micro, the runtime of microcontrollers.

    model = open_file("digits-int8.tflite", runtime="tflite-micro")   # or TflmRuntime.load(path)
    label, probs = model.predict("img.png")
    model.arena_bytes()      # {"total", "head", "tail"}: the tensor arena a microcontroller needs

``tflite_micro.runtime.Interpreter`` runs TF Lite Micro's own reference kernels, compiled for this
machine: what a microcontroller running TFLM computes, and the arena it plans. No torch. The file's
input contract is applied by `TfliteRuntime` (tflite_file.py).
"""
from __future__ import annotations

import numpy as np

from ..contract.model import cannot_load
from ..contract.schema import input_shape
from .native_output import ALL, quiet_native_output
from .tflite_file import TfliteRuntime

__all__ = ["TflmRuntime"]


class TflmRuntime(TfliteRuntime):
    """A loaded TF Lite Micro interpreter and the file's metadata."""

    def __init__(self, interpreter, meta: dict, source: str):
        self.interpreter = interpreter
        self.invoked = False  # TFLM records its arena use during the first inference
        super().__init__(meta, source, interpreter.get_input_details(0), interpreter.get_output_details(0))

    @classmethod
    def load(cls, source, *, arena_size: int | None = None) -> "TflmRuntime":
        """`source`: a .tflite path or its bytes; `arena_size`: the tensor arena in bytes (None:
        tflite_micro's default, 10 x the file's size)."""
        from tflite_micro import runtime

        where, data, meta = cls.read(source)
        try:
            interpreter = runtime.Interpreter.from_bytes(data, arena_size=arena_size)
        except (ValueError, RuntimeError) as e:
            raise cannot_load(where, "TF Lite Micro", e) from e
        return cls(interpreter, meta, where)

    def invoke(self, x: np.ndarray) -> np.ndarray:
        self.interpreter.set_input(x, 0)
        self.interpreter.invoke()
        self.invoked = True
        return self.interpreter.get_output(0)

    def arena_bytes(self) -> dict[str, int]:
        """TFLM's recording allocator's arena use after an inference: {"total", "head", "tail"}
        bytes. head: the planned activation buffers (what hotstart's C arena holds); tail: the
        interpreter's own persistent structures (tensor structs, kernel data, quantization data).
        TFLM prints them on the C stderr only, so they are read from there."""
        if not self.invoked:
            self.run(np.zeros((1, *input_shape(self.meta)), np.float32))
        with quiet_native_output(ALL) as printed:
            self.interpreter.print_allocations()
        out = {}
        for line in printed.text.splitlines():
            for key in ("total", "head", "tail"):
                if f"Arena allocation {key} " in line:
                    out[key] = int(line.split(f"Arena allocation {key} ")[1].split()[0])
        if set(out) != {"total", "head", "tail"}:
            raise RuntimeError(f"TF Lite Micro did not report its arena: {printed.text[:500]!r}")
        return out
