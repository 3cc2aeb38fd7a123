"""The integer program the C export emits: int8 tensors and the ops between them.

graph.py builds it from a QDQ ONNX file; memory.py places its tensors in one arena; emit.py writes
one C call per op. Tensors have no batch dimension (the C runs one image) and are stored
contiguous in ONNX's order (C x H x W), so flatten and reshape cost nothing: a view.

Every activation is int8 with a scale and a zero point: real = scale * (q - zero_point).
onnxruntime's uint8 activations map onto int8 exactly (qmath.uint8_to_int8_zero_point).
"""
from __future__ import annotations

import dataclasses
import math

import numpy as np


@dataclasses.dataclass(eq=False)
class Tensor:
    """An int8 activation. A view (`base` set) shares its base's memory under another shape."""

    name: str
    shape: tuple
    scale: float
    zero_point: int  # int8
    base: "Tensor | None" = None
    onnx_name: str = ""  # the QuantizeLinear output it stands for (tracing, tests)

    @property
    def numel(self) -> int:
        return int(math.prod(self.shape))

    @property
    def root(self) -> "Tensor":
        return self if self.base is None else self.base.root


@dataclasses.dataclass(eq=False)
class Op:
    """One call in the C: reads `inputs`, writes `output`; `layer` names it in comments and errors."""

    layer: str

    @property
    def inputs(self) -> list[Tensor]:
        raise NotImplementedError

    output: Tensor = dataclasses.field(init=False, default=None)


@dataclasses.dataclass(eq=False)
class InputTable(Op):
    """The H x W x C uint8 image -> C x H x W int8, through one 256-entry table per channel.

    emit.py fills the tables with onnxruntime's QuantizeLinear of the graph's type `qdtype`."""

    qdtype: object = np.uint8  # the graph's activation type (onnxruntime's uint8, or int8)

    @property
    def inputs(self):
        return []


@dataclasses.dataclass(eq=False)
class Conv(Op):
    x: Tensor = None
    weight: np.ndarray = None  # out x in/groups x kh x kw, int8
    bias: np.ndarray = None  # out, int32 (at scale s_x * s_w)
    mult: np.ndarray = None  # out, int32
    shift: np.ndarray = None  # out, int8
    stride: tuple = (1, 1)
    pads: tuple = (0, 0, 0, 0)  # top, left, bottom, right
    groups: int = 1
    act_min: int = -128
    act_max: int = 127

    @property
    def inputs(self):
        return [self.x]


@dataclasses.dataclass(eq=False)
class Linear(Op):
    x: Tensor = None
    weight: np.ndarray = None  # out x in, int8
    bias: np.ndarray = None
    mult: np.ndarray = None
    shift: np.ndarray = None
    act_min: int = -128
    act_max: int = 127

    @property
    def inputs(self):
        return [self.x]


@dataclasses.dataclass(eq=False)
class Pool(Op):
    """Max or average pooling over a window.

    Max: `mult`/`shift` rescale to the output's quantization, or None where input and output share
    it (the max of the int8 codes is then the answer). Average: onnxruntime's float32 arithmetic,
    emulated in integers (templates/kernels/avg_f32.c): `deq` is its dequantization table, `ym`/`ye`
    the output scale as a float32 mantissa and exponent.
    """

    kind: str = "max"  # or "avg"
    x: Tensor = None
    kernel: tuple = (1, 1)
    stride: tuple = (1, 1)
    pads: tuple = (0, 0, 0, 0)
    count_include_pad: bool = False
    mult: int | None = None
    shift: int | None = None
    deq: np.ndarray = None
    e0: int = 0
    ym: int = 0
    ye: int = 0
    act_min: int = -128
    act_max: int = 127

    @property
    def inputs(self):
        return [self.x]


@dataclasses.dataclass(eq=False)
class GlobalAvgPool(Op):
    x: Tensor = None
    mult: int = 0
    shift: int = 0
    act_min: int = -128
    act_max: int = 127

    @property
    def inputs(self):
        return [self.x]


@dataclasses.dataclass(eq=False)
class Add(Op):
    """Elementwise a + b at the output's scale: two multipliers, one shift (qmath.add_multipliers)."""

    a: Tensor = None
    b: Tensor = None
    mult_a: int = 0
    mult_b: int = 0
    shift: int = 0
    act_min: int = -128
    act_max: int = 127

    @property
    def inputs(self):
        return [self.a, self.b]


@dataclasses.dataclass(eq=False)
class Requantize(Op):
    """Elementwise rescale (and clamp): a standalone ReLU, or a tensor re-quantized to new params."""

    x: Tensor = None
    mult: int = 0
    shift: int = 0
    act_min: int = -128
    act_max: int = 127

    @property
    def inputs(self):
        return [self.x]


@dataclasses.dataclass
class Program:
    """What graph.py reads: the ops in execution order, the input and output tensors."""

    ops: list
    input: Tensor
    output: Tensor
    input_shape: tuple  # C, H, W

    def tensors(self) -> list[Tensor]:
        seen, out = set(), []
        for op in self.ops:
            for t in [*op.inputs, op.output]:
                if id(t) not in seen:
                    seen.add(id(t))
                    out.append(t)
        return out
