"""A QDQ ONNX graph (onnxruntime's quantize_static, as hotstart/export/quantize.py writes it) -> ops.Program.

In a QDQ graph every quantized tensor appears as ``QuantizeLinear -> DequantizeLinear`` and every
op computes in float between them: ``DQ(x), DQ(w), DQ(bias) -> Conv -> [Relu] -> Q(y)``. The
reader walks the nodes in order (ONNX keeps them topologically sorted) and fuses each float op
with the Q that follows it into one integer op (``ops.Conv`` writing int8 at Q's scale), the way
onnxruntime's own QDQ transformer turns the pattern into QLinearConv. Between the op and its Q
it looks through what costs nothing in C: a ReLU or Clip (folded into the output clamp, exact
since quantization is monotone) and reshapes (a view). onnxruntime leaves a few ops unquantized
(ReduceMean, the global pool, is ``DQ -> ReduceMean -> Reshape -> Q``); they fuse the same way.

Anything else is refused with an `ExportError` that names the layer (the torch module, from the
exporter's ``pkg.torch.onnx.name_scopes`` metadata) and the ONNX op.
"""
from __future__ import annotations

import dataclasses
import json
import math

import numpy as np

from ..report import ExportError
from . import ops as O
from . import qmath

SUPPORTED = ("Conv", "Gemm", "MatMul", "Add", "MaxPool", "AveragePool", "GlobalAveragePool",
             "GlobalMaxPool", "ReduceMean", "Relu", "Clip", "Reshape", "Flatten", "Squeeze",
             "Unsqueeze", "Identity", "Dropout")
VIEWS = ("Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity", "Dropout")


def layer_name(node) -> str:
    """The torch module a node came from (``backbone.layer1.0.conv1``), else the node's name."""
    for p in node.metadata_props:
        if p.key == "pkg.torch.onnx.name_scopes":
            try:
                scopes = [s for s in json.loads(p.value.replace("'", '"')) if s]
            except ValueError:
                break
            if len(scopes) >= 2:
                return scopes[-2]  # the last entry is the aten op inside that module
            if scopes:
                return scopes[-1]
    return node.name or node.op_type


def describe(node) -> str:
    return f"layer {layer_name(node)!r} (ONNX node {node.name!r}, op {node.op_type})"


@dataclasses.dataclass
class _Weight:
    values: np.ndarray  # the integer (or, for a float bias, real) values
    scale: np.ndarray | None  # None: a float initializer, not quantized
    zero_point: np.ndarray | None


@dataclasses.dataclass
class _Pending:
    """A float op's result waiting for its QuantizeLinear: `build(out_tensor)` makes the integer op."""

    node: object
    build: object
    shape: tuple
    act_lo: float = -math.inf  # real-valued clamp from a fused Relu / Clip
    act_hi: float = math.inf


def _attrs(node) -> dict:
    from onnx import helper

    return {a.name: helper.get_attribute_value(a) for a in node.attribute}


class _Reader:
    def __init__(self, model):
        from onnx import numpy_helper

        self.model = model
        self.init = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
        self.consumers: dict[str, list] = {}
        for node in model.graph.node:
            for name in node.input:
                self.consumers.setdefault(name, []).append(node)
        self.weights: dict[str, _Weight] = {}
        self.quant: dict[str, O.Tensor] = {}  # float or Q-output name -> the int8 tensor it holds
        self.pending: dict[str, _Pending] = {}
        self.ops: list = []
        self.input_tensor = None

    # --- helpers -------------------------------------------------------------------------------
    def const(self, name, node, what):
        if name not in self.init:
            raise ExportError(f"{describe(node)}: its {what} ({name!r}) must be a constant of the graph")
        return self.init[name]

    def qparams(self, node):
        scale = self.const(node.input[1], node, "scale")
        zp = self.const(node.input[2], node, "zero point") if len(node.input) > 2 and node.input[2] else \
            np.zeros_like(scale, dtype=np.uint8)
        return scale, zp

    def activation(self, name, node) -> O.Tensor:
        if name in self.quant:
            return self.quant[name]
        if name in self.pending:
            raise ExportError(f"{describe(node)} reads {name!r}, a float result that is not quantized "
                              f"(no QuantizeLinear after {describe(self.pending[name].node)}); the C "
                              f"export runs int8 tensors only")
        if name in self.weights or name in self.init:
            raise ExportError(f"{describe(node)}: a constant input {name!r} where an activation was expected")
        raise ExportError(f"{describe(node)} reads {name!r}, which is not quantized: the C export needs every "
                          f"activation in int8 (export with quantize='int8')")

    def weight(self, name, node, what) -> _Weight:
        if name in self.weights:
            return self.weights[name]
        if name in self.init and self.init[name].dtype.kind == "f":
            if what == "bias":
                return _Weight(self.init[name].astype(np.float64), None, None)
            raise ExportError(f"{describe(node)} has fp32 {what}s ({name!r}): the model is not quantized "
                              f"(export with quantize='int8')")
        raise ExportError(f"{describe(node)}: its {what} ({name!r}) must be a constant (DequantizeLinear of "
                          f"an int8 initializer)")

    def int_bias(self, node, bias_name, n_out, real_scale) -> np.ndarray:
        """The bias as int32 at scale s_x * s_w: onnxruntime's int32 bias as is, or a float bias quantized."""
        if not bias_name:
            return np.zeros(n_out, dtype=np.int32)
        b = self.weight(bias_name, node, "bias")
        if b.scale is not None and np.allclose(np.broadcast_to(b.scale, (n_out,)), real_scale, rtol=1e-6) \
                and b.values.dtype == np.int32:
            return b.values.reshape(n_out).astype(np.int32)
        real = b.values.astype(np.float64) if b.scale is None else \
            (b.values.astype(np.float64) - b.zero_point) * b.scale
        return np.round(real.reshape(n_out) / real_scale).astype(np.int32)

    def check_weight(self, w: _Weight, node, axis_len):
        if w.scale is None:
            raise ExportError(f"{describe(node)} has fp32 weights: the model is not quantized")
        if w.values.dtype != np.int8:
            raise ExportError(f"{describe(node)}: weights of type {w.values.dtype} (int8 expected)")
        if np.any(np.asarray(w.zero_point) != 0):
            raise ExportError(f"{describe(node)}: weights with a non-zero zero point (symmetric int8 expected)")
        return np.broadcast_to(np.asarray(w.scale, dtype=np.float64).ravel(), (axis_len,))

    def clamp(self, pending: _Pending, out: O.Tensor) -> tuple[int, int]:
        """The int8 range of the output after a fused Relu / Clip (quantized with onnxruntime's rounding)."""
        lo, hi = -128, 127
        if pending.act_lo > -math.inf:
            lo = max(lo, int(np.clip(np.round(pending.act_lo / out.scale) + out.zero_point, -128, 127)))
        if pending.act_hi < math.inf:
            hi = min(hi, int(np.clip(np.round(pending.act_hi / out.scale) + out.zero_point, -128, 127)))
        return lo, hi

    # --- the walk ------------------------------------------------------------------------------
    def run(self) -> O.Program:
        graph = self.model.graph
        if not any(n.op_type == "QuantizeLinear" for n in graph.node):
            raise ExportError("the model is fp32 (it has no QuantizeLinear node): the C export runs int8 only; "
                              "export with quantize='int8' (learner.export(..., format='c') does this itself)")
        if len(graph.input) != 1 or len(graph.output) != 1:
            raise ExportError(f"the C export needs one input and one output, the graph has {len(graph.input)} "
                              f"and {len(graph.output)}")
        dims = [d.dim_value for d in graph.input[0].type.tensor_type.shape.dim]
        if len(dims) != 4 or not all(dims[1:]):
            raise ExportError(f"the C export needs an image input N x C x H x W with fixed C, H, W; got {dims}")
        self.input_name, self.input_shape = graph.input[0].name, tuple(int(d) for d in dims[1:])
        for node in graph.node:
            self.visit(node)
        out = graph.output[0].name
        if out not in self.quant:
            raise ExportError(f"the graph output {out!r} is not quantized (no QuantizeLinear before it): the C "
                              f"export returns int8 logits")
        if self.input_tensor is None:
            raise ExportError("the graph input is not quantized (no QuantizeLinear on it)")
        output = self.quant[out]
        return O.Program(self.ops, self.input_tensor, output, self.input_shape)

    def visit(self, node):
        op = node.op_type
        if node.domain not in ("", "ai.onnx"):
            raise ExportError(f"{describe(node)}: ops of domain {node.domain!r} are not supported by the C export")
        if op == "DequantizeLinear":
            return self.dequantize(node)
        if op == "QuantizeLinear":
            return self.quantize(node)
        if op not in SUPPORTED:
            raise ExportError(f"{describe(node)} is not supported by the C export; it runs "
                              f"{', '.join(SUPPORTED)} (with QuantizeLinear / DequantizeLinear around them)")
        getattr(self, "op_" + op.lower())(node)

    def dequantize(self, node):
        x, out = node.input[0], node.output[0]
        scale, zp = self.qparams(node)
        if x in self.init:  # a weight or bias
            self.weights[out] = _Weight(self.init[x], scale, zp)
            return
        t = self.activation(x, node)
        if scale.size != 1 or float(scale) != t.scale or _int8_zero_point(zp) != t.zero_point:
            raise ExportError(f"{describe(node)}: its scale / zero point differ from its QuantizeLinear's")
        self.quant[out] = t

    def quantize(self, node):
        x, out = node.input[0], node.output[0]
        scale, zp = self.qparams(node)
        if scale.size != 1:
            raise ExportError(f"{describe(node)}: per-channel activation quantization is not supported")
        if zp.dtype not in (np.uint8, np.int8):
            raise ExportError(f"{describe(node)}: activations of type {zp.dtype} (uint8 or int8 expected)")
        z = _int8_zero_point(zp)
        if x == self.input_name:
            t = O.Tensor("input", self.input_shape, float(scale), z, onnx_name=out)
            op = O.InputTable(layer="input", qdtype=zp.dtype)
            op.output = t
            self.ops.append(op)
            self.input_tensor = t
            self.quant[out] = t
            return
        if x in self.pending:
            p = self.pending.pop(x)
            t = O.Tensor(_c_name(layer_name(p.node), len(self.ops)), p.shape, float(scale), z, onnx_name=out)
            op = p.build(t, *self.clamp(p, t))
            op.output = t
            self.ops.append(op)
            self.quant[out] = t
            return
        src = self.activation(x, node)  # DQ -> Q: the same tensor, or re-quantized
        if math.isclose(src.scale, float(scale), rel_tol=1e-7) and src.zero_point == z:
            self.quant[out] = src
            return
        t = O.Tensor(_c_name(layer_name(node), len(self.ops)), src.shape, float(scale), z, onnx_name=out)
        m, s = qmath.quantize_multiplier(src.scale / t.scale)
        op = O.Requantize(layer=layer_name(node), x=src, mult=m, shift=s)
        op.output = t
        self.ops.append(op)
        self.quant[out] = t

    def defer(self, node, build, shape):
        if len([o for o in node.output if o]) != 1:
            raise ExportError(f"{describe(node)}: only its first output is supported")
        self.pending[node.output[0]] = _Pending(node, build, tuple(shape))

    # --- ops -------------------------------------------------------------------------------------
    def op_conv(self, node):
        a = _attrs(node)
        x = self.activation(node.input[0], node)
        w = self.weight(node.input[1], node, "weight")
        if a.get("auto_pad", b"NOTSET") not in (b"NOTSET", "NOTSET"):
            raise ExportError(f"{describe(node)}: auto_pad={a['auto_pad']!r} is not supported (explicit pads are)")
        if any(d != 1 for d in a.get("dilations", [1, 1])):
            raise ExportError(f"{describe(node)}: dilation {a['dilations']} is not supported (1 only)")
        if w.values.ndim != 4 or len(x.shape) != 3:
            raise ExportError(f"{describe(node)}: only 2-D convolutions are supported")
        groups = int(a.get("group", 1))
        oc, icg, kh, kw = w.values.shape
        if icg * groups != x.shape[0]:
            raise ExportError(f"{describe(node)}: weight shape {w.values.shape} does not fit input {x.shape}")
        sh, sw = a.get("strides", [1, 1])
        pt, pl, pb, pr = a.get("pads", [0, 0, 0, 0])
        oh = (x.shape[1] + pt + pb - kh) // sh + 1
        ow = (x.shape[2] + pl + pr - kw) // sw + 1
        ws = self.check_weight(w, node, oc)
        bias = self.int_bias(node, node.input[2] if len(node.input) > 2 else "", oc, x.scale * ws)

        def build(y, lo, hi):
            mult, shift = qmath.quantize_multipliers(x.scale * ws / y.scale)
            return O.Conv(layer=layer_name(node), x=x, weight=w.values, bias=bias, mult=mult, shift=shift,
                          stride=(sh, sw), pads=(pt, pl, pb, pr), groups=groups, act_min=lo, act_max=hi)

        self.defer(node, build, (oc, oh, ow))

    def op_gemm(self, node):
        a = _attrs(node)
        if a.get("alpha", 1.0) != 1.0 or a.get("beta", 1.0) != 1.0 or a.get("transA", 0):
            raise ExportError(f"{describe(node)}: only alpha=1, beta=1, transA=0 is supported")
        self._linear(node, transposed=bool(a.get("transB", 0)), bias=node.input[2] if len(node.input) > 2 else "")

    def op_matmul(self, node):
        self._linear(node, transposed=False, bias="")

    def _linear(self, node, transposed, bias):
        x = self.activation(node.input[0], node)
        w = self.weight(node.input[1], node, "weight")
        if w.values.ndim != 2:
            raise ExportError(f"{describe(node)}: a 2-D weight is expected, got shape {w.values.shape}")
        values = w.values if transposed else w.values.T  # -> out x in
        n_out, n_in = values.shape
        if len(x.shape) != 1 or x.shape[0] != n_in:
            raise ExportError(f"{describe(node)}: input of shape {x.shape} for a weight of {n_out} x {n_in}")
        ws = self.check_weight(dataclasses.replace(w, values=values), node, n_out)
        b = self.int_bias(node, bias, n_out, x.scale * ws)

        def build(y, lo, hi):
            mult, shift = qmath.quantize_multipliers(x.scale * ws / y.scale)
            return O.Linear(layer=layer_name(node), x=x, weight=np.ascontiguousarray(values), bias=b,
                            mult=mult, shift=shift, act_min=lo, act_max=hi)

        self.defer(node, build, (n_out,))

    def op_add(self, node):
        xa, xb = (self.activation(n, node) for n in node.input)
        if xa.shape != xb.shape:
            raise ExportError(f"{describe(node)}: adds shapes {xa.shape} and {xb.shape}; broadcasting is "
                              f"not supported")

        def build(y, lo, hi):
            ma, mb, s = qmath.add_multipliers(xa.scale, xb.scale, y.scale)
            return O.Add(layer=layer_name(node), a=xa, b=xb, mult_a=ma, mult_b=mb, shift=s, act_min=lo, act_max=hi)

        self.defer(node, build, xa.shape)

    def _pool(self, node, kind, a=None):
        a = _attrs(node) if a is None else a
        x = self.activation(node.input[0], node)
        if a.get("auto_pad", b"NOTSET") not in (b"NOTSET", "NOTSET") or any(d != 1 for d in a.get("dilations", [1, 1])):
            raise ExportError(f"{describe(node)}: auto_pad and dilation are not supported")
        if kind == "max" and len(node.output) > 1 and node.output[1]:
            raise ExportError(f"{describe(node)}: MaxPool's indices output is not supported")
        kh, kw = a["kernel_shape"]
        sh, sw = a.get("strides", [1, 1])
        pt, pl, pb, pr = a.get("pads", [0, 0, 0, 0])
        ceil = bool(a.get("ceil_mode", 0))
        oh, ow = (_pool_out(x.shape[1], kh, sh, pt, pb, ceil), _pool_out(x.shape[2], kw, sw, pl, pr, ceil))
        include_pad = bool(a.get("count_include_pad", 0))
        if kind == "avg" and (oh, ow) == (1, 1) and kh >= x.shape[1] and kw >= x.shape[2] and not any((pt, pl)) \
                and not include_pad:
            # one window over the whole input: onnxruntime runs it as a global average (integer sum,
            # then one rescale), and so does the C (measured: its float window path differs there)
            return self._global_avg(node, keep=True)

        def build(y, lo, hi):
            common = dict(layer=layer_name(node), kind=kind, x=x, kernel=(kh, kw), stride=(sh, sw),
                          pads=(pt, pl, pb, pr), count_include_pad=include_pad, act_min=lo, act_max=hi)
            if kind == "avg":
                deq, e0 = qmath.float32_dequant_table(x.scale, x.zero_point)
                ym, ye = qmath.float32_parts(y.scale)
                return O.Pool(**common, deq=deq, e0=e0, ym=ym, ye=ye)
            same = math.isclose(x.scale, y.scale, rel_tol=1e-7) and x.zero_point == y.zero_point
            m, s = (None, None) if same else qmath.quantize_multiplier(x.scale / y.scale)
            return O.Pool(**common, mult=m, shift=s)

        self.defer(node, build, (x.shape[0], oh, ow))

    def op_maxpool(self, node):
        self._pool(node, "max")

    def op_averagepool(self, node):
        self._pool(node, "avg")

    def op_globalmaxpool(self, node):
        x = self.activation(node.input[0], node)
        self._pool(node, "max", {"kernel_shape": list(x.shape[1:])})

    def op_globalaveragepool(self, node):
        self._global_avg(node, keep=True)

    def op_reducemean(self, node):
        a = _attrs(node)
        axes = a.get("axes")
        if axes is None and len(node.input) > 1 and node.input[1]:
            axes = self.const(node.input[1], node, "axes").tolist()
        if axes is None or sorted(int(d) % 4 for d in axes) != [2, 3]:
            raise ExportError(f"{describe(node)}: only a mean over the spatial axes (2, 3) is supported, got {axes}")
        self._global_avg(node, keep=bool(a.get("keepdims", 1)))

    def _global_avg(self, node, keep):
        x = self.activation(node.input[0], node)
        if len(x.shape) != 3:
            raise ExportError(f"{describe(node)}: a C x H x W input is expected, got {x.shape}")
        n = x.shape[1] * x.shape[2]

        def build(y, lo, hi):
            m, s = qmath.quantize_multiplier(x.scale / (y.scale * n))
            return O.GlobalAvgPool(layer=layer_name(node), x=x, mult=m, shift=s, act_min=lo, act_max=hi)

        self.defer(node, build, (x.shape[0], 1, 1) if keep else (x.shape[0],))

    def _clamp(self, node, lo, hi):
        src = node.input[0]
        if src in self.pending:
            p = self.pending.pop(src)
            p.act_lo, p.act_hi = max(p.act_lo, lo), min(p.act_hi, hi)
            self.pending[node.output[0]] = p
            return
        x = self.activation(src, node)  # DQ -> Relu -> Q: an elementwise requantize with a clamp

        def build(y, a, b):
            m, s = qmath.quantize_multiplier(x.scale / y.scale)
            return O.Requantize(layer=layer_name(node), x=x, mult=m, shift=s, act_min=a, act_max=b)

        self.defer(node, build, x.shape)
        self.pending[node.output[0]].act_lo, self.pending[node.output[0]].act_hi = lo, hi

    def op_relu(self, node):
        self._clamp(node, 0.0, math.inf)

    def op_clip(self, node):
        a = _attrs(node)
        lo, hi = a.get("min", -math.inf), a.get("max", math.inf)
        if len(node.input) > 1 and node.input[1]:
            lo = float(self.const(node.input[1], node, "min"))
        if len(node.input) > 2 and node.input[2]:
            hi = float(self.const(node.input[2], node, "max"))
        self._clamp(node, lo, hi)

    def _view(self, node, shape_fn):
        src = node.input[0]
        if src in self.pending:
            p = self.pending.pop(src)
            p.shape = shape_fn(p.shape)
            self.pending[node.output[0]] = p
            return
        x = self.activation(src, node)
        self.quant[node.output[0]] = O.Tensor(x.name + "_view", shape_fn(x.shape), x.scale, x.zero_point, base=x)

    def _batched(self, node, shape, fn):
        """Apply a numpy shape function to (1, *shape); the batch dimension must stay first and 1."""
        try:
            out = fn(np.empty((1, *shape), dtype=np.int8)).shape
        except ValueError as e:
            raise ExportError(f"{describe(node)}: cannot reshape {shape}: {e}") from None
        if not out or out[0] != 1:
            raise ExportError(f"{describe(node)}: it moves the batch dimension ({shape} -> {out})")
        return tuple(int(d) for d in out[1:])

    def op_reshape(self, node):
        target = self.const(node.input[1], node, "shape").astype(np.int64).tolist()

        def shape_fn(shape):
            full = (1, *shape)
            t = [full[i] if (d == 0 and i < len(full)) else d for i, d in enumerate(target)]
            if t and t[0] != -1 and t[0] != 1:
                raise ExportError(f"{describe(node)}: reshapes the batch dimension to {t[0]}")
            t = [1] + [int(d) for d in t[1:]]
            return self._batched(node, shape, lambda a: a.reshape(t))

        self._view(node, shape_fn)

    def op_flatten(self, node):
        axis = int(_attrs(node).get("axis", 1))
        if axis not in (0, 1):
            raise ExportError(f"{describe(node)}: Flatten(axis={axis}) is not supported (axis=1 is)")
        self._view(node, lambda shape: (int(math.prod(shape)),))

    def op_squeeze(self, node):
        axes = _attrs(node).get("axes")
        if axes is None and len(node.input) > 1 and node.input[1]:
            axes = self.const(node.input[1], node, "axes").tolist()

        def shape_fn(shape):
            ax = tuple(axes) if axes is not None else tuple(i + 1 for i, d in enumerate(shape) if d == 1)
            return self._batched(node, shape, lambda a: np.squeeze(a, axis=ax))

        self._view(node, shape_fn)

    def op_unsqueeze(self, node):
        axes = _attrs(node).get("axes")
        if axes is None:
            axes = self.const(node.input[1], node, "axes").tolist()
        self._view(node, lambda shape: self._batched(node, shape, lambda a: np.expand_dims(a, tuple(axes))))

    def op_identity(self, node):
        self._view(node, lambda shape: shape)

    op_dropout = op_identity


def _pool_out(size, k, s, p0, p1, ceil) -> int:
    """Output length of a pooling window, as ONNX and torch count it (ceil_mode: the last window
    must start inside the input or its left padding)."""
    span = size + p0 + p1 - k
    n = (-(-span // s) if ceil else span // s) + 1
    if ceil and (n - 1) * s >= size + p0:
        n -= 1
    return n


def _int8_zero_point(zp) -> int:
    return qmath.uint8_to_int8_zero_point(int(zp)) if zp.dtype == np.uint8 else int(zp)


def _c_name(layer: str, index: int) -> str:
    safe = "".join(ch if ch.isalnum() else "_" for ch in layer).strip("_") or "t"
    return f"t{index}_{safe}"[:60]


def read_program(model) -> O.Program:
    """An `onnx.ModelProto` (int8 QDQ) -> the integer `ops.Program`; `ExportError` if it cannot be run in C."""
    return _Reader(model).run()
