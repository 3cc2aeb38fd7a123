"""Running a ``.tflite`` written by hotstart: LiteRT (`TFLiteModel`) or TF Lite Micro (`TflmModel`).

    from hotstart.export.tflite_run import TFLiteModel, TflmModel
    m = TFLiteModel("digits-int8.tflite")       # ai-edge-litert's Interpreter (XNNPACK on the CPU)
    label, probs = m.predict("img.png")         # the task's preprocessing and decoding (predictor.py)
    logits = m.run(encoded_batch)               # N x C x H x W float32 -> N x classes float32
    micro = TflmModel("digits-int8.tflite")     # TF Lite Micro's own kernels, on this machine's CPU
    micro.arena_bytes()                         # the tensor arena a microcontroller would need

Both take what every hotstart runtime takes, the encoded input (N x C x H x W float32, as
predictor.py's `preprocess` returns it), and apply the file's input contract themselves
(tflite_file.py: channels last, int8 input quantization, int8 output dequantization), so no user
code ever handles a scale or a zero point. A file takes one sample per call; `run` calls it once per
sample. Neither imports torch.
"""
from __future__ import annotations

import numpy as np

from ..errors import SavedModelError
from . import tflite_file
from .native_stderr import captured_native_stderr
from .runtime_model import RuntimeModel


class TFLiteAdapter(RuntimeModel):
    """What both runtimes share: the metadata and the input contract. A subclass opens its
    interpreter in `open` and runs one file input in `invoke`."""

    runtime = "tflite"

    def __init__(self, source):
        self.source, data = self.read_source(source, ".tflite")
        self.set_metadata(tflite_file.read_metadata(data, self.source))
        input_detail, output_detail = self.open(data)
        tflite_file.check_io(self.meta, input_detail, output_detail, self.source)

    def open(self, data: bytes) -> tuple[dict, dict]:
        """Load `data` in the runtime; return its (input, output) tensor details."""
        raise NotImplementedError

    def invoke(self, x: np.ndarray) -> np.ndarray:
        """One file input (as `tflite_file.to_file_input` makes it) -> the file's output tensor."""
        raise NotImplementedError

    def run(self, batch: np.ndarray) -> np.ndarray:
        """Encoded inputs (N x ...) -> float32 outputs (N x classes), one sample per call."""
        batch = np.asarray(batch, dtype=np.float32)
        return np.stack([tflite_file.from_file_output(self.invoke(tflite_file.to_file_input(x, self.meta)), self.meta)
                         for x in batch])


class TFLiteModel(TFLiteAdapter):
    """A hotstart ``.tflite`` in LiteRT (``ai_edge_litert.interpreter.Interpreter``)."""

    runtime = "litert"

    def __init__(self, source, *, threads: int | None = None):
        self.threads = threads
        super().__init__(source)

    def open(self, data):
        from ai_edge_litert.interpreter import Interpreter

        try:
            with captured_native_stderr():  # LiteRT's "INFO: Created TensorFlow Lite XNNPACK delegate"
                self.interpreter = Interpreter(model_content=data, num_threads=self.threads)
                self.interpreter.allocate_tensors()
        except (ValueError, RuntimeError) as e:
            raise SavedModelError(f"{self.source}: LiteRT cannot load it: {e}") from e
        self.input, self.output = self.interpreter.get_input_details()[0], self.interpreter.get_output_details()[0]
        return self.input, self.output

    def invoke(self, x):
        self.interpreter.set_tensor(self.input["index"], x)
        self.interpreter.invoke()
        return self.interpreter.get_tensor(self.output["index"])


class TflmModel(TFLiteAdapter):
    """A hotstart int8 ``.tflite`` in TF Lite Micro's Python interpreter (``tflite_micro.runtime``):
    the reference kernels a microcontroller running TFLM executes, compiled for this machine."""

    runtime = "tflite-micro"

    def __init__(self, source, *, arena_size: int | None = None):
        self.arena_size = arena_size  # None: tflite_micro's default, 10 x the file's size
        self.invoked = False  # TFLM records its arena use during the first inference
        super().__init__(source)

    def open(self, data):
        from tflite_micro import runtime

        try:
            self.interpreter = runtime.Interpreter.from_bytes(data, arena_size=self.arena_size)
        except (ValueError, RuntimeError) as e:
            raise SavedModelError(f"{self.source}: TF Lite Micro cannot load it: {e}") from e
        return self.interpreter.get_input_details(0), self.interpreter.get_output_details(0)

    def invoke(self, x):
        self.interpreter.set_input(x, 0)
        self.interpreter.invoke()
        self.invoked = True
        return self.interpreter.get_output(0)

    def arena_bytes(self) -> dict[str, int]:
        """TFLM's recording allocator's arena use after an inference: {"total", "head", "tail"}
        bytes. head: the planned activation buffers (what hotstart's C arena holds); tail: the
        interpreter's own persistent structures (tensor structs, kernel data, quantization data).
        TFLM prints them on the C stderr only, so the descriptor is captured around the call."""
        if not self.invoked:
            self.run(np.zeros((1, *self._encoded_shape()), np.float32))
        with captured_native_stderr() as printed:
            self.interpreter.print_allocations()
        text = printed.text
        out = {}
        for line in text.splitlines():
            for key in ("total", "head", "tail"):
                if f"Arena allocation {key} " in line:
                    out[key] = int(line.split(f"Arena allocation {key} ")[1].split()[0])
        if set(out) != {"total", "head", "tail"}:
            raise RuntimeError(f"TF Lite Micro did not report its arena: {text[:500]!r}")
        return out

    def _encoded_shape(self) -> tuple:
        if self.meta.get("layout") == "NHWC":
            return (int(self.meta["channels"]), *self.meta["size"])
        return tuple(int(v) for v in self.interpreter.get_input_details(0)["shape"][1:])

