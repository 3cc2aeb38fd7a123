"""What a ``.tflite`` written by hotstart holds besides the model, its input contract, and what
its two runtimes share.

Torch-free (numpy, flatbuffers, ai-edge-litert's schema): the LiteRT and TF Lite Micro runtimes
(litert.py, tflm.py: `TfliteRuntime` subclasses) read files with it, the export
(hotstart/export/tflite.py) writes them with it.

**Metadata.** The task travels inside the file as one entry of the flatbuffer's ``metadata`` list,
named ``hotstart``, whose buffer is one JSON object of string values: the model contract's keys
(hotstart/contract/schema.py, which checks them) with ``format`` = ``hotstart.tflite/1``, plus the
input contract below. From C++ (LiteRT) ``interpreter->GetModel()->metadata()`` lists it; from
Python, `read_props`. Other tools keep reading the file as usual: TF Lite ignores metadata
entries it does not know.

**Input contract.** The file takes the task's encoded input (the same numbers as the ONNX file's
``input``: resized, scaled, normalized), one sample per call (``batch_size`` 1: what TF Lite Micro
plans its memory for), with two differences that the keys record and hotstart's runtimes apply:

====================  ==========================================================================
key                   value
====================  ==========================================================================
layout                ``NHWC`` (images: channels last, TF Lite's layout, so the graph has no
                      transposes), or ``encoded`` (tables, series: the encoded input as is)
input_dtype           ``float32`` or ``int8``
input_scale,          int8 only: the file's input is ``clip(round(x / scale) + zero_point,
input_zero_point      -128, 127)`` of the encoded input x (round half to even, as torch's quantizer)
output_dtype          ``float32`` or ``int8``
output_scale,         int8 only: logits = ``(output - zero_point) * scale``
output_zero_point
batch_size            1
quantization          int8 only: how it was quantized (post-training calibration or QAT)
====================  ==========================================================================

The scales are also the input and output tensors' own quantization parameters; the runtimes check
that the two agree when they open a file (`check_io`).
"""
from __future__ import annotations

import abc
import json
import struct

import numpy as np

from ..contract.errors import MetadataError
from ..contract.model import ContractModel, model_bytes
from ..contract.schema import format_name, props_from_json, read_metadata

__all__ = ["TfliteRuntime", "FORMAT", "read_props", "embed_metadata", "io_metadata", "check_io", "to_file_input",
           "from_file_output"]

FORMAT = format_name("tflite")
METADATA_NAME = "hotstart"
BUFFER_ALIGN = 16  # the TF Lite schema's ``force_align: 16`` for buffer data (kernels may load words)


def embed_metadata(model: bytes, props: dict[str, str]) -> bytes:
    """`model` (a .tflite flatbuffer) with `props` as its ``hotstart`` metadata entry (replaced if there)."""
    from ai_edge_litert import schema_py_generated as schema
    from ai_edge_litert.tools import flatbuffer_utils

    tree = flatbuffer_utils.read_model_from_bytearray(bytearray(model))
    data = np.frombuffer(json.dumps(props, sort_keys=True).encode(), dtype=np.uint8)
    tree.metadata = tree.metadata or []
    entry = next((m for m in tree.metadata if _name(m.name) == METADATA_NAME), None)
    if entry is None:
        tree.buffers.append(schema.BufferT())
        entry = schema.MetadataT(name=METADATA_NAME, buffer=len(tree.buffers) - 1)
        tree.metadata.append(entry)
    tree.buffers[entry.buffer] = schema.BufferT(data=data)
    tree.buffers = [AlignedBuffer(b) for b in tree.buffers]
    import flatbuffers

    builder = flatbuffers.Builder(len(model) + 4096)
    builder.Finish(tree.Pack(builder), file_identifier=b"TFL3")
    return bytes(builder.Output())


class AlignedBuffer:
    """A `BufferT` packed with its data aligned to 16 bytes, as TF Lite's own writer aligns it (the
    generated Python code aligns a byte vector to 1, which int32 and float kernels must not read)."""

    def __init__(self, buffer):
        self.buffer = buffer

    def Pack(self, builder):  # noqa: N802 - the flatbuffers object API's name
        from ai_edge_litert import schema_py_generated as schema

        b, data = self.buffer, self.buffer.data
        offset = None
        if data is not None:
            data = np.ascontiguousarray(data, dtype=np.uint8).reshape(-1)
            builder.StartVector(1, len(data), BUFFER_ALIGN)  # as CreateNumpyVector, aligned to 16
            builder.head -= len(data)
            builder.Bytes[builder.head:builder.head + len(data)] = data.tobytes()
            offset = builder.EndVector()
        schema.BufferStart(builder)
        if offset is not None:
            schema.BufferAddData(builder, offset)
        schema.BufferAddOffset(builder, b.offset)
        schema.BufferAddSize(builder, b.size)
        return schema.BufferEnd(builder)


def _name(value) -> str:
    return value.decode() if isinstance(value, bytes) else str(value or "")


def read_props(model: bytes, where: str = "<model>") -> dict[str, str]:
    """The ``hotstart`` metadata entry of a .tflite flatbuffer, as flat string props (their format
    and keys are checked by the contract: `TfliteRuntime`)."""
    from ai_edge_litert import schema_py_generated as schema

    if len(model) < 8 or model[4:8] != b"TFL3":
        raise MetadataError(f"{where}: not a .tflite file (no TFL3 identifier)")
    try:  # a cut-short or damaged file: its offsets point past the end (struct.error, IndexError)
        root = schema.Model.GetRootAs(model, 0)
        raw = None
        for i in range(root.MetadataLength()):
            entry = root.Metadata(i)
            if _name(entry.Name()) == METADATA_NAME:
                raw = root.Buffers(entry.Buffer()).DataAsNumpy()
                break
    except (struct.error, IndexError, ValueError, TypeError, AttributeError) as e:
        raise MetadataError(f"{where}: a damaged .tflite file ({len(model):,} bytes): its flatbuffer cannot be read "
                            f"({type(e).__name__}: {e}); export it again") from e
    if raw is not None:
        return props_from_json(bytes(raw).decode("utf-8", "replace"), where, f"{METADATA_NAME!r} metadata")
    raise MetadataError(f"{where}: not a .tflite written by hotstart's export (no {METADATA_NAME!r} metadata)")


def io_metadata(layout: str, input_detail: dict, output_detail: dict) -> dict[str, str]:
    """The contract keys for a converted file whose input and output tensors are described by
    LiteRT's ``get_input_details()[0]`` / ``get_output_details()[0]``."""
    props = {"layout": layout, "batch_size": "1"}
    for side, d in (("input", input_detail), ("output", output_detail)):
        dtype = np.dtype(d["dtype"])
        props[f"{side}_dtype"] = dtype.name
        if dtype == np.int8:
            scale, zero = d["quantization"]
            props[f"{side}_scale"], props[f"{side}_zero_point"] = repr(float(scale)), str(int(zero))
    return props


def check_io(meta: dict, input_detail: dict, output_detail: dict, where: str) -> None:
    """The file's input and output tensors are what the metadata says (shape, type, quantization)."""
    for side, d in (("input", input_detail), ("output", output_detail)):
        dtype = np.dtype(d["dtype"]).name
        if meta.get(f"{side}_dtype") != dtype:
            raise MetadataError(f"{where}: metadata key '{side}_dtype' is {meta.get(f'{side}_dtype')!r}, but "
                                f"the model's {side} is {dtype}")
        if dtype == "int8":
            scale, zero = _quantization(d)
            if not (np.isclose(scale, float(meta[f"{side}_scale"]), rtol=1e-6)
                    and zero == int(meta[f"{side}_zero_point"])):
                raise MetadataError(f"{where}: metadata keys '{side}_scale' / '{side}_zero_point' "
                                    f"({meta[f'{side}_scale']}, {meta[f'{side}_zero_point']}) differ from the "
                                    f"model's {side} quantization ({scale}, {zero})")
    shape = [int(v) for v in input_detail["shape"]]
    if meta.get("layout") == "NHWC" and "size" in meta:
        want = [1, *meta["size"], int(meta["channels"])]
        if shape != want:
            raise MetadataError(f"{where}: metadata says size {meta['size']} x {meta['channels']} channel(s) "
                                f"(NHWC {want}), but the model takes {shape}")


def _quantization(detail: dict) -> tuple[float, int]:
    """(scale, zero point) from LiteRT's or TF Lite Micro's tensor details (their keys differ)."""
    if "quantization" in detail:
        scale, zero = detail["quantization"]
        return float(scale), int(zero)
    q = detail["quantization_parameters"]
    return float(q["scales"][0]), int(q["zero_points"][0])


def to_file_input(x: np.ndarray, meta: dict) -> np.ndarray:
    """One encoded input (C x H x W, or as encoded), batched -> what the file's input tensor takes."""
    x = np.asarray(x, dtype=np.float32)[None]
    if meta.get("layout") == "NHWC":
        x = np.ascontiguousarray(np.moveaxis(x, 1, -1))
    if meta.get("input_dtype") == "int8":  # as torch's quantize_per_tensor: x * (1 / scale), half to even
        inv = np.float32(1.0 / float(meta["input_scale"]))
        x = np.clip(np.rint(x * inv) + int(meta["input_zero_point"]), -128, 127).astype(np.int8)
    return x


def from_file_output(out: np.ndarray, meta: dict) -> np.ndarray:
    """The file's output tensor (1 x ...) -> one sample's float32 outputs (logits)."""
    out = np.asarray(out)
    if meta.get("output_dtype") == "int8":
        out = (out.astype(np.float32) - np.float32(int(meta["output_zero_point"]))) * np.float32(
            float(meta["output_scale"]))
    return out.astype(np.float32)[0]


class TfliteRuntime(ContractModel):
    """What the LiteRT and TF Lite Micro runtimes share: the file's metadata (read and checked by
    the contract, then against the interpreter's tensors) and its input contract. A subclass opens
    its interpreter in `load` and runs one file input in `invoke`; `run` takes any number of
    encoded inputs, one call each (``batch_size`` 1: the file's own)."""

    def __init__(self, meta: dict, source: str, input_detail: dict, output_detail: dict):
        super().__init__(meta, source)
        check_io(self.meta, input_detail, output_detail, self.source)
        self.batch_size = int(meta.get("batch_size", 1))

    @staticmethod
    def read(source) -> tuple[str, bytes, dict]:
        """(a name for messages, the file's bytes, its metadata: format checked, values decoded) of
        `source`: a .tflite path or its bytes (the export checks a file before writing it)."""
        where, data = model_bytes(source, "a LiteRT model (.tflite)", "tflite")
        return where, data, read_metadata(read_props(data, where), where, container="tflite")

    @abc.abstractmethod
    def invoke(self, x: np.ndarray) -> np.ndarray:
        """One file input (as `to_file_input` makes it) -> the file's output tensor."""

    def run(self, batch: np.ndarray) -> np.ndarray:
        """Encoded inputs (N x ...) -> float32 outputs (N x ...), one sample per call."""
        batch = np.asarray(batch, dtype=np.float32)
        return np.stack([from_file_output(self.invoke(to_file_input(x, self.meta)), self.meta) for x in batch])
