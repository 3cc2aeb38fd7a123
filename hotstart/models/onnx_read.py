"""ONNX read: an ``.onnx`` file back into a trainable ``nn.Module``, built on onnx2torch.

    backbone = from_onnx("resnet10t.onnx")                  # cut at the last pooling: (N, features)
    learner = tasklearner(task, data, backbone=backbone)    # hotstart adds the task's head
    model = from_onnx("digits.onnx", cut_at=None)           # the whole model: logits
    backbone = from_onnx("digits-int8.onnx", cut_at="node_mean")  # cut after a named node

onnx2torch (1.5.15) turns an ONNX graph into a ``torch.fx.GraphModule`` whose Conv / Gemm /
BatchNormalization nodes are real ``nn.Conv2d`` / ``nn.Linear`` / ``nn.BatchNorm2d`` modules, so
every weight is a parameter and fine-tunes. It cannot read the files torch's own exporter writes
as they are; each step below exists for one reason, found by running it:

1. **Dequantize QDQ graphs** (`dequantize_qdq`). int8 files (onnxruntime's ``quantize_static``,
   hotstart's int8 and QAT exports) store weights as int8 initializers behind ``DequantizeLinear``
   and put ``QuantizeLinear -> DequantizeLinear`` pairs on activations. onnx2torch has no
   converter for either, and a model to fine-tune needs float weights anyway: weight initializers
   become ``(q - zero_point) * scale`` in float32, and each activation pair becomes a ``Clip`` to
   the range the int8 type could represent. The Clip is not optional: onnxruntime's quantizer
   removes a ``Relu`` after a Conv when the uint8 range (zero point 0) already clamps at 0, so
   dropping the pair would drop the ReLU.
2. **Fold constants** (`fold_constants`, onnxscript's constant folder). Files exported with
   ``optimize=False`` compute shapes and even the zero bias of each Conv at run time
   (``Shape -> Expand -> CastLike``); the version converter fails on their ``Squeeze`` with
   computed axes, and onnx2torch makes a real ``nn.BatchNorm2d`` only from constant statistics.
   Only the folder runs, not onnxscript's optimizer, whose rewrite rules fold batch norms away.
3. **Put batch norm back** (`restore_batchnorm`). torch's exporter (its onnxscript optimizer,
   on by default) folds each BatchNorm of an eval-mode model into the convolution before it, and
   records the rule (``FuseBatchNormIntoConv``) in the Conv node's metadata. That computes the
   same in inference, but a model read back without normalization does not fine-tune like the
   original: a timm resnet10t (random init, 32x32) read back without this step reached 0.7632 on
   digits where the torch original reached 0.9889 in the same 3 epochs; with it, 0.9889
   (benchmarks/scripts/onnx_finetune.py). Each folded convolution gets a BatchNormalization
   after it that changes nothing in eval mode and normalizes with batch statistics in training
   mode, as the original did. Files that kept their BatchNormalization nodes (``optimize=False``,
   or exporters that do not fold) come back with ``nn.BatchNorm2d`` modules as they are.
4. **Convert to opset 17** (``onnx.version_converter``). torch 2.14 writes opset 18 to 21;
   onnx2torch's converters stop at 17 for the ops that changed at 18 (the Reduce* family takes
   ``axes`` as an input from 18 on, pooling gained attributes).
5. **Drop attributes opset 17 does not define** (`drop_newer_attributes`). The version converter
   leaves ``noop_with_empty_axes`` on ``ReduceMean`` (an opset-18 attribute), and torch writes
   ``allowzero=1`` on every ``Reshape``; onnx2torch rejects both. They are dropped only where that
   changes nothing: ``noop_with_empty_axes`` when the node has axes; ``allowzero`` unless the
   target shape is a constant holding a 0 (the one case where it matters: with it, 0 is an empty
   dimension, without it "copy the input's"; torch's shapes are never 0 in a trained model).
   Otherwise the read fails naming the node.
6. **Cut the head** (``onnx.utils.Extractor``) at a named node, or at the last pooling node
   (GlobalAveragePool, ReduceMean, AveragePool, ...), and flatten: a backbone for `tasklearner`
   returns (batch, features).
7. **Check every node has a converter** before converting, so that an unsupported op is an
   `UnsupportedOnnxOpError` naming the node and the op (onnx2torch fails with its registry key).
"""
from __future__ import annotations

import math
from pathlib import Path

import torch

from ..errors import HotstartError

TARGET_OPSET = 17
POOLING_OPS = ("GlobalAveragePool", "GlobalMaxPool", "ReduceMean", "AveragePool", "MaxPool")


class OnnxReadError(HotstartError, ValueError):
    """An ONNX file that cannot be read back as a torch module (the message names the file and node)."""


class UnsupportedOnnxOpError(OnnxReadError):
    """A node whose op onnx2torch has no converter for."""


def from_onnx(path, *, cut_at: str | None = "pool", batchnorm: str = "folded", seed: int = 0):
    """The model in the ONNX file `path` as a trainable ``nn.Module``.

    `cut_at`: ``"pool"`` (default) keeps the graph up to its last pooling node and flattens the
    result, for use as ``tasklearner(..., backbone=module)``; a node name keeps the graph up to
    that node's (first) output, flattened; None keeps the whole graph (its output as is). The
    module's ``num_features`` is its output width (None when `cut_at` is None).

    `batchnorm` (step 3 of the module docstring): ``"folded"`` (default) puts an
    ``nn.BatchNorm`` back after each convolution the exporter recorded folding one into;
    ``"every_conv"`` after every convolution not already followed by a BatchNormalization (for
    files whose exporter left no record, e.g. torch's TorchScript exporter); ``"none"`` reads the
    graph as it is. `seed` draws the weights of the convolutions whose folded weights are all zero
    (see `restore_batchnorm`)."""
    import onnx

    check_batchnorm_mode(batchnorm)
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such ONNX file")
    if path.stat().st_size == 0:  # protobuf reads it as an empty model, which later steps call "an old IR version"
        raise OnnxReadError(f"{path}: the file is empty (0 bytes), not an ONNX model")
    try:
        model = onnx.load(str(path))
    except Exception as e:  # protobuf's DecodeError and friends
        raise OnnxReadError(f"{path}: not a readable ONNX file ({type(e).__name__}: {e})") from e
    if not model.graph.node or model.ir_version < 1:
        raise OnnxReadError(f"{path}: not an ONNX model (IR version {model.ir_version}, {len(model.graph.node)} "
                            f"nodes): protobuf read it, but it holds no graph")
    _input_shape(model, path)  # a damaged or hostile declared size fails here, before anything is allocated
    model = dequantize_qdq(model)
    fold_constants(model)
    restore_batchnorm(model, path, batchnorm, seed)  # before to_opset: the version converter drops node metadata
    model = to_opset(model, TARGET_OPSET, path)
    drop_newer_attributes(model, path)
    pool = None
    if cut_at is not None:
        model, pool = cut(model, cut_at, path)
    check_converters(model, path)
    return _to_module(model, path, flatten=cut_at is not None, pool=pool)


# --- 1. QDQ -> float ------------------------------------------------------------------------
def dequantize_qdq(model):
    """`model` with int8 weight initializers turned into float32 ones and activation
    QuantizeLinear -> DequantizeLinear pairs removed (see the module docstring, step 1)."""
    import numpy as np
    from onnx import helper, numpy_helper

    graph = model.graph
    nodes = list(graph.node)  # positions, not id(): protobuf may hand out a new wrapper per access
    inits = {t.name: t for t in graph.initializer}
    producer = {o: i for i, n in enumerate(nodes) for o in n.output}
    drop: set[int] = set()
    clips = []  # (position, Clip node) standing for a removed activation pair
    new_inits = []
    for i, node in enumerate(nodes):
        if node.op_type != "DequantizeLinear":
            continue
        x = node.input[0]
        if x in inits:  # a stored int8 weight: compute its float value once
            q = numpy_helper.to_array(inits[x]).astype(np.float32)
            scale = numpy_helper.to_array(inits[node.input[1]]).astype(np.float32)
            zero = (numpy_helper.to_array(inits[node.input[2]]).astype(np.float32)
                    if len(node.input) > 2 and node.input[2] else np.zeros_like(scale))
            axis = next((a.i for a in node.attribute if a.name == "axis"), 1)
            if scale.ndim == 1 and q.ndim > 1:  # per channel along `axis`
                shape = [1] * q.ndim
                shape[axis] = -1
                scale, zero = scale.reshape(shape), zero.reshape(shape)
            new_inits.append(numpy_helper.from_array((q - zero) * scale, node.output[0]))
            drop.add(i)
        elif x in producer and nodes[producer[x]].op_type == "QuantizeLinear":  # an activation pair
            quant = nodes[producer[x]]
            lo, hi = _representable_range(quant, inits)
            clip_min, clip_max = f"{node.output[0]}_min", f"{node.output[0]}_max"
            new_inits += [numpy_helper.from_array(np.array(lo, np.float32), clip_min),
                          numpy_helper.from_array(np.array(hi, np.float32), clip_max)]
            clips.append((i, helper.make_node("Clip", [quant.input[0], clip_min, clip_max], [node.output[0]],
                                              name=f"{node.name or node.output[0]}_range")))
            drop.update((i, producer[x]))
    if not drop:
        return model
    clip_at = dict(clips)
    kept = [clip_at[i] if i in clip_at else n for i, n in enumerate(nodes) if i not in drop or i in clip_at]
    replace_nodes(graph, kept, new_inits)
    del graph.value_info[:]  # shapes and int8 types of removed values: inferred again below
    return model


def replace_nodes(graph, nodes, new_initializers) -> None:
    """Make `nodes` the graph's nodes (copied first: some of them may be the graph's own, which
    clearing would invalidate), add `new_initializers`, and drop every initializer that no node
    reads any more. The one rewrite step of `dequantize_qdq` and `restore_batchnorm`."""
    nodes = [type(n).FromString(n.SerializeToString()) for n in nodes]
    del graph.node[:]
    graph.node.extend(nodes)
    graph.initializer.extend(new_initializers)
    used = {i for n in graph.node for i in n.input}
    keep = [t for t in graph.initializer if t.name in used]
    del graph.initializer[:]
    graph.initializer.extend(keep)


def _representable_range(quant, inits) -> tuple[float, float]:
    """(low, high) in float of what QuantizeLinear `quant` can output (uint8 unless its zero point says int8)."""
    import numpy as np
    from onnx import numpy_helper

    scale = float(numpy_helper.to_array(inits[quant.input[1]]).ravel()[0])
    zp = inits.get(quant.input[2]) if len(quant.input) > 2 else None
    zero = numpy_helper.to_array(zp) if zp is not None else np.zeros(1, np.uint8)
    info = np.iinfo(zero.dtype)
    z = float(zero.ravel()[0])
    return (info.min - z) * scale, (info.max - z) * scale


# --- 2. constants folded ----------------------------------------------------------------------
def fold_constants(model) -> None:
    """Fold the graph's constant subgraphs into initializers, in place (step 2), with onnxscript's
    constant folder alone (not its optimizer, whose rewrite rules fold batch norms away)."""
    import onnxscript.optimizer

    onnxscript.optimizer.fold_constants(model)
    onnxscript.optimizer.remove_unused_nodes(model)


# --- 3. batch norm back after the convolutions it was folded into -----------------------------
BATCHNORM_MODES = ("folded", "every_conv", "none")
FOLDED_RULE = "FuseBatchNormIntoConv"  # onnxscript's rewrite rule, recorded in the fused Conv's metadata
RULE_KEY = "pkg.onnxscript.rewriter.rule_name"
BATCHNORM_EPS = 1e-5


def restore_batchnorm(model, path, mode: str = "folded", seed: int = 0) -> int:
    """Put a BatchNormalization node back after each convolution whose batch norm the exporter
    folded into it (`mode` "folded"), or after every convolution not followed by one
    ("every_conv"), in place; return how many (step 3 of the module docstring).

    Each restored batch norm leaves the eval-mode output as it was: scale 1, running mean 0,
    running variance ``1 - eps`` (so its divisor is 1), and the convolution's bias moves into the
    batch norm's bias (a bias before a batch norm only shifts the batch mean away again). In
    training mode it normalizes with the batch's statistics, as the original did: for a model
    exported before training (running statistics 0 and 1) the convolution's folded weight is the
    original's up to ``1/sqrt(1 + eps)``, so the read model trains as the original did.

    Output channels whose folded weight is all zero (timm zero-initialises the last batch norm
    scale of each residual block, and folding multiplies the weight by it) get fresh weights
    (He normal, fan out, as timm initialises convolutions; drawn from `seed`) and scale 0: the
    output stays the same, while a zero convolution before a batch norm could never train (its
    batch statistics are constant, so neither it nor the scale would get a gradient)."""
    import numpy as np
    from onnx import helper, numpy_helper

    check_batchnorm_mode(mode)
    if mode == "none":
        return 0
    graph = model.graph
    inits = {t.name: t for t in graph.initializer}
    consumers: dict[str, list] = {}
    for node in graph.node:
        for name in node.input:
            consumers.setdefault(name, []).append(node)
    generator = torch.Generator().manual_seed(seed)
    kept, new_inits, restored = [], [], 0
    for node in graph.node:
        kept.append(node)
        if node.op_type != "Conv" or node.input[1] not in inits or not _batchnorm_folded(node, consumers, mode):
            continue
        weight = numpy_helper.to_array(inits[node.input[1]]).astype(np.float32)
        channels = weight.shape[0]
        has_bias = len(node.input) > 2 and node.input[2]
        if has_bias and node.input[2] not in inits:
            continue  # a computed bias: nothing known to fold back
        bias = (numpy_helper.to_array(inits[node.input[2]]).astype(np.float32) if has_bias
                else np.zeros(channels, np.float32))
        scale = np.ones(channels, np.float32)
        dead = ~weight.reshape(channels, -1).any(axis=1)
        if dead.any():
            groups = next((a.i for a in node.attribute if a.name == "group"), 1)
            fan_out = channels * int(np.prod(weight.shape[2:])) / groups
            fresh = torch.randn(weight.shape, generator=generator).numpy() * np.sqrt(2.0 / fan_out)
            weight = np.where(dead.reshape(-1, *[1] * (weight.ndim - 1)), fresh, weight).astype(np.float32)
            scale[dead] = 0.0
        name = node.name or node.output[0]
        conv_out = f"{node.output[0]}_before_batchnorm"
        stats = {"scale": scale, "bias": bias, "mean": np.zeros(channels, np.float32),
                 "var": np.full(channels, 1.0 - BATCHNORM_EPS, np.float32)}
        names = {k: f"{name}_restored_batchnorm_{k}" for k in stats}
        new_inits += [numpy_helper.from_array(v, names[k]) for k, v in stats.items()]
        weight_name = f"{name}_restored_batchnorm_conv_weight"
        new_inits.append(numpy_helper.from_array(weight, weight_name))
        batchnorm = helper.make_node("BatchNormalization", [conv_out, *names.values()], [node.output[0]],
                                     name=name, epsilon=BATCHNORM_EPS, momentum=0.9)
        # the convolution hands its name and output to the batch norm, so `cut_at=` that name still
        # cuts after what the file computed there
        node.name, node.output[0] = f"{name}_conv", conv_out
        node.input[1] = weight_name
        del node.input[2:]
        kept.append(batchnorm)
        restored += 1
    if restored:
        replace_nodes(graph, kept, new_inits)
    return restored


def check_batchnorm_mode(mode: str) -> None:
    if mode not in BATCHNORM_MODES:
        raise OnnxReadError(f"batchnorm={mode!r}: expected one of {', '.join(map(repr, BATCHNORM_MODES))}")


def _batchnorm_folded(conv, consumers, mode: str) -> bool:
    """Whether `conv` lost a batch norm to the exporter: it says so in its metadata ("folded"),
    or nothing but a BatchNormalization reads its output ("every_conv" restores when not)."""
    if mode == "folded":
        return any(p.key == RULE_KEY and FOLDED_RULE in p.value for p in conv.metadata_props)
    readers = consumers.get(conv.output[0], [])
    return not (len(readers) == 1 and readers[0].op_type == "BatchNormalization")


# --- 4. opset 17 ----------------------------------------------------------------------------
def to_opset(model, opset: int, path):
    """`model` converted to `opset` when it is newer (step 4)."""
    from onnx import version_converter

    current = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), None)
    if current is None or current <= opset:
        return model
    try:
        return version_converter.convert_version(model, opset)
    except Exception as e:
        raise OnnxReadError(f"{path}: onnx's version converter cannot take opset {current} down to {opset}, which "
                            f"onnx2torch needs ({type(e).__name__}: {str(e).strip().splitlines()[0]})") from e


# --- 5. attributes opset 17 does not have ---------------------------------------------------
def drop_newer_attributes(model, path) -> None:
    """Remove ``noop_with_empty_axes`` (ReduceMean) and ``allowzero`` (Reshape) where that changes
    nothing, in place (step 5); a node where it would change the result is an error."""
    constants = _constants(model)
    for node in model.graph.node:
        if node.op_type == "ReduceMean":
            _drop(node, "noop_with_empty_axes", path, ok=lambda a: a.i == 0 or _has_axes(node))
        elif node.op_type == "Reshape":
            shape = constants.get(node.input[1])
            _drop(node, "allowzero", path, ok=lambda a: a.i == 0 or shape is None or 0 not in shape)


def _constants(model) -> dict:
    """Name -> list of ints of the graph's small integer constants (initializers, Constant nodes)."""
    from onnx import numpy_helper

    out = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer if t.data_type in (6, 7)}
    for n in model.graph.node:
        if n.op_type == "Constant" and n.attribute and n.attribute[0].name == "value":
            out[n.output[0]] = numpy_helper.to_array(n.attribute[0].t)
    return {k: [int(v) for v in a.ravel()] for k, a in out.items() if a.size <= 16}


def _has_axes(node) -> bool:
    return any(a.name == "axes" and len(a.ints) > 0 for a in node.attribute) or len(node.input) > 1


def _drop(node, name: str, path, ok) -> None:
    for i, attr in enumerate(node.attribute):
        if attr.name == name:
            if not ok(attr):
                raise OnnxReadError(f"{path}: node {node.name!r} ({node.op_type}) has {name}={attr.i}, which opset "
                                    f"{TARGET_OPSET} (onnx2torch) cannot express")
            del node.attribute[i]
            return


# --- 6. cutting the head --------------------------------------------------------------------
def cut(model, cut_at: str, path):
    """(`model` up to the last pooling node (``cut_at="pool"``) or the node named `cut_at`, the
    global pooling to append or None) (step 6). A global average / max pool (GlobalAveragePool,
    or ReduceMean over H and W) is cut *before* and appended as ``nn.AdaptiveAvgPool2d(1)`` /
    ``AdaptiveMaxPool2d(1)``, as timm's models end: hotstart's model checks (tasks/checks.py)
    then see the last feature map, not a 1x1 one."""
    import onnx

    nodes = list(model.graph.node)
    pool = None
    if cut_at == "pool":
        pools = [n for n in nodes if n.op_type in POOLING_OPS]
        if not pools:
            raise OnnxReadError(f"{path}: no pooling node ({', '.join(POOLING_OPS)}) to cut the head at; pass "
                                "cut_at='NODE_NAME' or cut_at=None (the whole model)")
        node = pools[-1]
        pool = _global_pool(node, _constants(model))
        output = node.input[0] if pool else node.output[0]
    else:
        node = next((n for n in nodes if n.name == cut_at), None)
        if node is None:
            names = [n.name for n in nodes]
            raise OnnxReadError(f"{path}: no node named {cut_at!r}; its nodes are {names[:12]}"
                                f"{' ...' if len(names) > 12 else ''}")
        output = node.output[0]
    inputs = [i.name for i in model.graph.input if i.name not in {t.name for t in model.graph.initializer}]
    model = onnx.shape_inference.infer_shapes(model)
    return onnx.utils.Extractor(model).extract_model(inputs, [output]), pool


def _global_pool(node, constants) -> str | None:
    """"avg" / "max" when `node` pools over all of H and W (N x C x H x W), else None."""
    if node.op_type in ("GlobalAveragePool", "GlobalMaxPool"):
        return "avg" if node.op_type == "GlobalAveragePool" else "max"
    if node.op_type == "ReduceMean":
        axes = next((list(a.ints) for a in node.attribute if a.name == "axes"), None)
        if axes is None and len(node.input) > 1:
            axes = constants.get(node.input[1])
        if axes is not None and sorted(a % 4 for a in axes) == [2, 3]:
            return "avg"
    return None


# --- 7. every op converts -------------------------------------------------------------------
def check_converters(model, path) -> None:
    """Raise `UnsupportedOnnxOpError` naming the first node onnx2torch has no converter for."""
    from onnx2torch.node_converters.registry import get_converter

    opsets = {o.domain: o.version for o in model.opset_import}
    for node in model.graph.node:
        version = opsets.get(node.domain, opsets.get("", TARGET_OPSET))
        try:
            get_converter(operation_type=node.op_type, version=version, domain=node.domain)
        except NotImplementedError:
            raise UnsupportedOnnxOpError(
                f"{path}: node {node.name!r} uses op {node.op_type!r} (domain {node.domain or 'ai.onnx'!r}, opset "
                f"{version}), which onnx2torch cannot convert; register a converter with "
                f"onnx2torch.node_converters.registry.add_converter({node.op_type!r}, {version})") from None


def _to_module(model, path, flatten: bool, pool: str | None = None):
    from onnx2torch import convert

    try:
        graph = convert(model)
    except Exception as e:
        raise OnnxReadError(f"{path}: onnx2torch could not convert it ({type(e).__name__}: "
                            f"{str(e).strip().splitlines()[0] if str(e).strip() else ''})") from e
    module = OnnxModule(graph, flatten=flatten, source=str(path), pool=pool)
    if flatten:
        shape = _input_shape(model, path)
        with torch.no_grad():
            module.num_features = int(module.eval()(torch.zeros(shape)).shape[1])
    return module.train()


def _input_shape(model, path) -> tuple:
    """A concrete input shape: the graph's, with 1 for the batch and 32 for unknown sizes. A shape
    of more values than the model contract reads (`MAX_INPUT_VALUES`) is an `OnnxReadError` naming
    the file and the shape: a probe of 40 GB would otherwise be allocated before failing."""
    from ..contract.schema import MAX_INPUT_VALUES

    inits = {t.name for t in model.graph.initializer}
    inp = next((i for i in model.graph.input if i.name not in inits), None)
    if inp is None:
        raise OnnxReadError(f"{path}: the graph has no input")
    dims = [d.dim_value if d.HasField("dim_value") else 0 for d in inp.type.tensor_type.shape.dim]
    shape = (1, *[d if d > 0 else 32 for d in dims[1:]])
    if math.prod(shape) > MAX_INPUT_VALUES:
        declared = [d.dim_value if d.HasField("dim_value") else (d.dim_param or "?")
                    for d in inp.type.tensor_type.shape.dim]
        raise OnnxReadError(f"{path}: input {inp.name!r} declares the shape {declared}: {math.prod(shape)} values "
                            f"per sample, more than the {MAX_INPUT_VALUES} read here (a damaged file?)")
    return shape


class OnnxModule(torch.nn.Module):
    """A graph read from ONNX (``self.graph``, an fx GraphModule of onnx2torch modules),
    flattened to (batch, features) when it was cut for use as a backbone."""

    def __init__(self, graph, flatten: bool, source: str, pool: str | None = None):
        super().__init__()
        self.graph = graph
        # the global pooling the graph was cut before (see `cut`), as timm's models end
        self.pool = {"avg": torch.nn.AdaptiveAvgPool2d(1), "max": torch.nn.AdaptiveMaxPool2d(1)}[pool] if pool else None
        self.flatten = flatten
        self.source = source
        self.num_features = None

    def forward(self, x):
        out = self.graph(x)
        if self.pool is not None:
            out = self.pool(out)
        return out.flatten(1) if self.flatten else out

    def extra_repr(self):
        return f"source={self.source!r}, flatten={self.flatten}"
