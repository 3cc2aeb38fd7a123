"""ops.Program + memory.Plan -> the text of model.c and model.h.

model.c holds: the kernels the program uses (templates/kernels/*.c, copied in so that the file
compiles alone), every weight as a ``static const`` array (flash on a microcontroller), one
``static int8_t`` arena, and `hotstart_predict`, one kernel call per op. Only kernels that are
called are copied: ``-Wall -Werror`` rejects unused static functions.
"""
from __future__ import annotations

import json
from importlib import resources

import numpy as np

from . import ops as O
from . import qmath

KERNEL_ORDER = ("common", "input", "conv2d", "linear", "maxpool", "avg_f32", "avgpool", "global_avgpool", "add",
                "requantize")
_KERNEL_OF = {O.InputTable: ("input",), O.Conv: ("conv2d",), O.Linear: ("linear",),
              O.GlobalAvgPool: ("global_avgpool",), O.Add: ("add",), O.Requantize: ("requantize",)}


def kernels_of(op) -> tuple:
    if isinstance(op, O.Pool):
        return ("maxpool",) if op.kind == "max" else ("avg_f32", "avgpool")
    return _KERNEL_OF[type(op)]


def template(name: str) -> str:
    """A file of templates/ (package data) as text."""
    return resources.files(__package__).joinpath("templates", name).read_text(encoding="utf-8")


def c_string(s: str) -> str:
    """A C string literal; non-ASCII text as octal escapes of its UTF-8 bytes."""
    out = []
    for b in str(s).encode("utf-8"):
        ch = chr(b)
        out.append("\\" + ch if ch in '"\\' else ch if 32 <= b < 127 and ch != "?" else f"\\{b:03o}")
    return '"' + "".join(out) + '"'


def c_array(ctype: str, name: str, values, per_line: int = 24) -> str:
    flat = np.asarray(values).ravel().tolist()
    rows = [", ".join(str(int(v)) for v in flat[i:i + per_line]) for i in range(0, len(flat), per_line)]
    return f"static const {ctype} {name}[{max(len(flat), 1)}] = {{\n    " + ",\n    ".join(rows or ["0"]) + "\n};\n"


class _Emitter:
    def __init__(self, program: O.Program, plan, meta: dict):
        self.program, self.plan, self.meta = program, plan, meta
        self.data: list[str] = []
        self.calls: list[str] = []

    def at(self, t: O.Tensor) -> str:
        return f"hs_arena + {self.plan.offset(t)}"

    def emit_op(self, i: int, op) -> None:
        shape = " x ".join(str(d) for d in op.output.shape)
        self.calls.append(f"    /* {i}: {type(op).__name__} {op.layer} -> {shape} */")
        getattr(self, "op_" + type(op).__name__.lower())(f"l{i}", op)
        self.calls.append(f"    HOTSTART_TRACE({i}, {self.at(op.output)}, {op.output.numel});")

    def op_inputtable(self, n, op):
        scale, z = op.output.scale, op.output.zero_point
        ort_zero = z + 128 if np.dtype(op.qdtype) == np.uint8 else z
        tables = qmath.input_tables(self.meta["mean"], self.meta["std"], scale, ort_zero, op.qdtype)
        c, h, w = self.program.input_shape
        if tables.shape[0] != c:
            tables = np.broadcast_to(tables, (c, 256))
        self.data.append(f"/* input: (pixel / 255 - mean) / std quantized at scale {scale!r}, zero point {z} */\n"
                         + c_array("int8_t", f"{n}_table", tables))
        self.calls.append(f"    hs_input(image, {n}_table, {self.at(op.output)}, {c}, {h * w});")

    def _weights(self, n, op):
        self.data.append(f"/* {op.layer} */\n" + c_array("int8_t", f"{n}_w", op.weight)
                         + c_array("int32_t", f"{n}_b", op.bias) + c_array("int32_t", f"{n}_m", op.mult)
                         + c_array("int8_t", f"{n}_s", op.shift))

    def op_conv(self, n, op):
        self._weights(n, op)
        (ic, ih, iw), (oc, oh, ow) = op.x.shape, op.output.shape
        kh, kw = op.weight.shape[2:]
        pt, pl = op.pads[:2]
        self.data.append(f"static const hs_conv_t {n}_p = {{{ic}, {ih}, {iw}, {oc}, {oh}, {ow}, {kh}, {kw}, "
                         f"{op.stride[0]}, {op.stride[1]}, {pt}, {pl}, {op.groups}, {op.x.zero_point}, "
                         f"{op.output.zero_point}, {op.act_min}, {op.act_max}}};\n")
        self.calls.append(f"    hs_conv2d(&{n}_p, {self.at(op.x)}, {n}_w, {n}_b, {n}_m, {n}_s, {self.at(op.output)});")

    def op_linear(self, n, op):
        self._weights(n, op)
        self.data.append(f"static const hs_linear_t {n}_p = {{{op.weight.shape[1]}, {op.weight.shape[0]}, "
                         f"{op.x.zero_point}, {op.output.zero_point}, {op.act_min}, {op.act_max}}};\n")
        self.calls.append(f"    hs_linear(&{n}_p, {self.at(op.x)}, {n}_w, {n}_b, {n}_m, {n}_s, {self.at(op.output)});")

    def op_pool(self, n, op):
        (c, ih, iw), (_, oh, ow) = op.x.shape, op.output.shape
        pt, pl, pb, pr = op.pads
        kh, kw = op.kernel
        sh, sw = op.stride
        if op.kind == "max":
            requant = op.mult is not None
            self.data.append(f"static const hs_maxpool_t {n}_p = {{{c}, {ih}, {iw}, {oh}, {ow}, {kh}, {kw}, {sh}, "
                             f"{sw}, {pt}, {pl}, {int(requant)}, {op.x.zero_point}, {op.output.zero_point}, "
                             f"{op.act_min}, {op.act_max}}};\n")
            self.calls.append(f"    hs_maxpool(&{n}_p, {self.at(op.x)}, {op.mult if requant else 0}, "
                              f"{op.shift if requant else 1}, {self.at(op.output)});")
            return
        self.data.append(f"/* {op.layer}: float32(v - {op.x.zero_point}) * {op.x.scale!r} as integers times 2^{op.e0} */\n"
                         + c_array("int64_t", f"{n}_deq", op.deq))
        self.data.append(f"static const hs_avgpool_t {n}_p = {{{c}, {ih}, {iw}, {oh}, {ow}, {kh}, {kw}, {sh}, {sw}, "
                         f"{pt}, {pl}, {pb}, {pr}, {int(op.count_include_pad)}, {op.e0}, {op.ye}, {op.ym}u, "
                         f"{op.output.zero_point}, {op.act_min}, {op.act_max}}};\n")
        self.calls.append(f"    hs_avgpool(&{n}_p, {self.at(op.x)}, {n}_deq, {self.at(op.output)});")

    def op_globalavgpool(self, n, op):
        c, h, w = op.x.shape
        self.calls.append(f"    hs_global_avgpool({self.at(op.x)}, {c}, {h * w}, {op.x.zero_point}, "
                          f"{op.output.zero_point}, {op.mult}, {op.shift}, {op.act_min}, {op.act_max}, "
                          f"{self.at(op.output)});")

    def op_add(self, n, op):
        self.calls.append(f"    hs_add({self.at(op.a)}, {self.at(op.b)}, {op.output.numel}, {op.a.zero_point}, "
                          f"{op.b.zero_point}, {op.mult_a}, {op.mult_b}, {op.shift}, {op.output.zero_point}, "
                          f"{op.act_min}, {op.act_max}, {self.at(op.output)});")

    def op_requantize(self, n, op):
        self.calls.append(f"    hs_requantize({self.at(op.x)}, {op.output.numel}, {op.x.zero_point}, {op.mult}, "
                          f"{op.shift}, {op.output.zero_point}, {op.act_min}, {op.act_max}, {self.at(op.output)});")


def header_text(program: O.Program, plan, meta: dict, guard: str) -> str:
    c, h, w = program.input_shape
    classes = meta["classes"]
    out = program.output
    return f"""/* Generated by hotstart {meta.get('hotstart_version', '')} (hotstart export --format c): {meta.get('kind', '')}.
 *
 * int hotstart_predict(const uint8_t *image, int8_t *logits);
 *   image:  HOTSTART_INPUT_HEIGHT x HOTSTART_INPUT_WIDTH x HOTSTART_INPUT_CHANNELS uint8 pixels, row by
 *           row, channels interleaved (what PIL's np.asarray(img) gives): the image already converted
 *           to the model's mode ({meta.get('image_mode', 'auto')}) and resized to its input size, as
 *           hotstart's runtimes do before normalizing. The normalization ((v / 255 - mean) / std)
 *           and the input quantization happen inside, through a table: exact.
 *   logits: HOTSTART_NUM_CLASSES int8 codes; the real logit is
 *           HOTSTART_OUTPUT_SCALE * (logits[i] - HOTSTART_OUTPUT_ZERO_POINT).
 *   returns the index of the largest logit (the predicted class; the first one on ties).
 * Not reentrant: the activations live in one static arena of HOTSTART_ARENA_BYTES bytes.
 */
#ifndef {guard}
#define {guard}

#include <stdint.h>

#define HOTSTART_INPUT_HEIGHT {h}
#define HOTSTART_INPUT_WIDTH {w}
#define HOTSTART_INPUT_CHANNELS {c}
#define HOTSTART_INPUT_BYTES ({h * w * c})
#define HOTSTART_NUM_CLASSES {len(classes)}
#define HOTSTART_ARENA_BYTES {plan.size}
#define HOTSTART_OUTPUT_SCALE {out.scale!r}f
#define HOTSTART_OUTPUT_ZERO_POINT ({out.zero_point})

extern const char *const hotstart_class_names[HOTSTART_NUM_CLASSES];

int hotstart_predict(const uint8_t *image, int8_t *logits);

#endif
"""


def source_text(program: O.Program, plan, meta: dict, header_name: str) -> str:
    e = _Emitter(program, plan, meta)
    for i, op in enumerate(program.ops):
        e.emit_op(i, op)
    used = {"common"}.union(*(kernels_of(op) for op in program.ops))
    kernels = "\n".join(template(f"kernels/{k}.c") for k in KERNEL_ORDER if k in used)
    names = ",\n    ".join(c_string(json.dumps(c) if not isinstance(c, str) else c) for c in meta["classes"])
    return f"""/* Generated by hotstart {meta.get('hotstart_version', '')}: see {header_name} for the contract.
 * C99; integer arithmetic only (int8 weights and activations, int32 accumulators, fixed-point
 * requantization); no dynamic memory; weights const (flash), activations in one static arena. */
#include <stdint.h>
#include <string.h>

#include "{header_name}"

/* Define HOTSTART_TRACE(op, data, n) to see each op's int8 output (the harness can print it). */
#ifndef HOTSTART_TRACE
#define HOTSTART_TRACE(op, data, n) ((void)0)
#endif

/* ---- kernels ---- */
{kernels}
/* ---- model ---- */
const char *const hotstart_class_names[HOTSTART_NUM_CLASSES] = {{
    {names}
}};

{"".join(e.data)}
/* the arena, word-aligned through its int32_t type (memory.py places tensors at multiples of 4) */
static int32_t hs_arena_words[(HOTSTART_ARENA_BYTES + 3) / 4];
#define hs_arena ((int8_t *)hs_arena_words)

int hotstart_predict(const uint8_t *image, int8_t *logits)
{{
{chr(10).join(e.calls)}
    memcpy(logits, {e.at(program.output)}, HOTSTART_NUM_CLASSES);
    return hs_argmax(logits, HOTSTART_NUM_CLASSES);
}}
"""
