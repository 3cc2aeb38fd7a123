"""The metadata schema: what a saved model says about itself, read and checked key by key.

Every exported file (``.onnx`` metadata_props, the ``.pt2`` package's metadata, the ``.pte``
program's ``hotstart_metadata`` method, the ``.tflite`` flatbuffer's ``hotstart`` metadata entry,
the ``.vmfb`` module's ``hotstart_metadata`` attribute) carries the same flat string key -> value
pairs, and a model folder's task gives the same pairs (hotstart/export/metadata.py writes them; the
keys are described in hotstart/export/onnx.py). Values are plain strings for `PLAIN_KEYS` and JSON
for the rest.

A file whose input or output is not the encoded float32 batch says how it differs, in the keys
`check_file_io` reads (every kind): ``layout`` (``NHWC``: channels last), ``input_dtype`` /
``output_dtype`` (``int8``, with ``input_scale`` / ``input_zero_point`` and ``output_scale`` /
``output_zero_point``), ``batch_size`` (the inputs it takes per call) and ``target_cpu`` (the CPU
it was compiled for). The runtime that opens the file applies them (hotstart/runtimes/).

The schema is versioned: ``format`` is ``hotstart.<container>/<version>`` (``hotstart.onnx/1``).
A file of a newer version than `SCHEMA_VERSION` is refused with a message that says so, rather
than read with rules that may no longer hold. Keys are added, never changed, within a version.

Each key a task kind reads is checked for type, size and range when the model is opened (the
checks per input and output kind are here; contract/kinds.py says which kind reads which), and
against the model's own input and output shapes where the runtime knows them. A failure is a
`MetadataError` that names the file and the key.
"""
from __future__ import annotations

import json
import math
import re
from typing import Any, Callable, Sequence

from .errors import MetadataError

SCHEMA_VERSION = 1
"""The metadata schema's version, in every exported file's ``format`` key: a file of a newer
version is refused with a message that says so, rather than read with rules that may not hold."""

FORMAT = f"hotstart.onnx/{SCHEMA_VERSION}"  # the ONNX export's; `format_name` gives the others'
"""The ``format`` value of an exported ONNX file, ``hotstart.onnx/1`` (`format_name` gives the
other containers')."""

# keys whose value is a plain string; every other key of the contract is JSON
PLAIN_KEYS = frozenset({"format", "kind", "hotstart_version", "input_name", "output_name", "image_mode",
                        "resize", "activation", "quantization", "layout", "input_dtype", "output_dtype",
                        "target_cpu"})
JSON_KEYS = frozenset({"classes", "size", "channels", "mean", "std", "threshold", "task", "table", "outputs",
                       "target_mean", "target_std", "batch_size", "input_scale", "input_zero_point", "output_scale",
                       "output_zero_point"})
# the suffix of each container's files, where it is not the container's name
SUFFIXES = {"iree": "vmfb"}

# One encoded input may hold at most this many values (4 GiB of float32): a file that declares a
# larger input (a damaged or hostile size) is refused before anything is allocated for it.
MAX_INPUT_VALUES = 2 ** 30


def format_name(container: str) -> str:
    """``hotstart.<container>/<SCHEMA_VERSION>``: the ``format`` value a file of `container` carries."""
    return f"hotstart.{container}/{SCHEMA_VERSION}"


def check_format(props: dict, container: str, where: str) -> None:
    """The ``format`` key names `container` ("onnx", "pt2", "pte", "tflite", "iree") at a version this
    code reads."""
    value = props.get("format")
    expected = format_name(container)
    found = re.fullmatch(r"hotstart\.(\w+)/(\d+)", value) if isinstance(value, str) else None
    if found is None or found.group(1) != container:
        raise MetadataError(f"{where}: not a .{SUFFIXES.get(container, container)} written by hotstart's export "
                            f"(metadata format {value!r}, "
                            f"expected {expected!r}); export it with `python -m hotstart export`")
    if int(found.group(2)) > SCHEMA_VERSION:
        raise MetadataError(f"{where}: metadata format {value!r} is of a newer hotstart than this one (which reads "
                            f"version {SCHEMA_VERSION}); update hotstart, or the bundle's predictor")


def props_from_json(text, where: str, what: str) -> dict[str, str]:
    """A file's metadata stored as one JSON object (a .pte's method, a .vmfb's attribute, a .tflite's
    metadata buffer) -> the flat string props every container gives (`read_metadata` decodes them);
    `what` names where it was stored, for the message."""
    try:
        props = json.loads(text)
    except (ValueError, TypeError) as e:
        raise MetadataError(f"{where}: its {what} is not JSON ({e})") from None
    if not isinstance(props, dict):
        raise MetadataError(f"{where}: its {what} is not a JSON object")
    return {k: v if isinstance(v, str) else json.dumps(v) for k, v in props.items()}


def read_metadata(props: dict[str, str], where: str = "<model>", container: str = "onnx") -> dict[str, Any]:
    """A file's flat metadata -> a dict with the JSON keys decoded, once its format is checked."""
    check_format(props, container, where)
    return decode_metadata(props, where)


def decode_metadata(props: dict[str, str], where: str = "<model>") -> dict[str, Any]:
    """Flat string metadata -> a dict with the JSON keys decoded. A JSON key that does not parse is
    a `MetadataError` naming it: kept as text, ``classes`` would be indexed one character at a
    time. NaN and Infinity are not JSON and are refused too."""
    meta: dict[str, Any] = {}
    for k, v in props.items():
        if k in PLAIN_KEYS:
            meta[k] = v
            continue
        try:
            meta[k] = json.loads(v, parse_constant=_refuse_constant)
        except (json.JSONDecodeError, ValueError, TypeError) as e:
            if k in JSON_KEYS:
                raise MetadataError(f"{where}: metadata key {k!r} is not valid JSON ({e}): {v!r:.100}") from None
            meta[k] = v  # a key added after this code was written: kept as text
    return meta


def _refuse_constant(name: str):
    raise ValueError(f"{name} is not JSON")


# --- value predicates ---------------------------------------------------------------------------
def is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def is_number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def numbers(n: int | None, positive: bool = False) -> Callable[[Any], bool]:
    """A predicate: a non-empty list of `n` finite numbers (all > 0 with `positive`)."""
    def ok(v):
        return (isinstance(v, list) and (n is None or len(v) == n) and len(v) > 0
                and all(is_number(x) and (not positive or x > 0) for x in v))
    return ok


class Checker:
    """Checks one metadata dict key by key; each failure names the file and the key."""

    def __init__(self, meta: dict, where: str):
        self.meta, self.where = meta, where

    def fail(self, key: str, problem: str):
        raise MetadataError(f"{self.where}: metadata key {key!r} {problem}")

    def need(self, key: str, ok: Callable[[Any], bool], what: str, optional: bool = False):
        if key not in self.meta:
            if optional:
                return None
            self.fail(key, f"is missing (expected {what}); was the file exported by this hotstart version?")
        value = self.meta[key]
        if not ok(value):
            self.fail(key, f"must be {what}, got {value!r:.100}")
        return value


# --- the checks of each input and output kind ---------------------------------------------------
def check_image_input(c: Checker) -> None:
    size = c.need("size", lambda v: isinstance(v, list) and len(v) == 2 and all(is_int(s) and s >= 1 for s in v),
                  "[height, width] with positive integers")
    channels = c.need("channels", lambda v: v in (1, 3) and is_int(v), "1 or 3")
    if channels * size[0] * size[1] > MAX_INPUT_VALUES:
        c.fail("size", f"is {size}: {channels} x {size[0]} x {size[1]} input values per image is more than the "
                       f"{MAX_INPUT_VALUES} this reads (a damaged file?)")
    c.need("image_mode", lambda v: v in ("L", "RGB", "auto"), '"L", "RGB" or "auto"', optional=True)
    c.need("resize", lambda v: v == "bilinear-antialias", '"bilinear-antialias"', optional=True)
    c.need("mean", numbers(channels), f"a list of {channels} finite numbers (one per channel)")
    c.need("std", numbers(channels, positive=True), f"a list of {channels} positive finite numbers")


def check_classes(c: Checker, activation: str) -> None:
    def ok(v):
        return (isinstance(v, list) and len(v) >= 1 and all(isinstance(x, (str, int, float)) for x in v)
                and len({json.dumps(x) for x in v}) == len(v))
    c.need("classes", ok, "a non-empty JSON list of distinct labels (text or numbers)")
    c.need("activation", lambda v: v == activation, repr(activation), optional=True)


def check_regression_outputs(c: Checker) -> None:
    n = c.need("outputs", lambda v: is_int(v) and v >= 1, "a positive integer")
    c.need("target_mean", numbers(n), f"a list of {n} finite numbers")
    c.need("target_std", numbers(n, positive=True), f"a list of {n} positive finite numbers")
    c.need("activation", lambda v: v == "none", "'none'", optional=True)


def check_table_input(c: Checker) -> None:
    def ok(t):
        if not isinstance(t, dict):
            return False
        cats, conts, na = t.get("categorical"), t.get("continuous"), t.get("na_columns")
        if not all(isinstance(x, list) and all(isinstance(s, str) for s in x) for x in (cats, conts, na)):
            return False
        vocab = t.get("vocab")
        if not (isinstance(vocab, dict) and all(isinstance(vocab.get(col), list) and vocab[col] for col in cats)):
            return False
        stats = [t.get(k) for k in ("median", "mean", "std")]
        if not all(isinstance(s, dict) and all(is_number(s.get(col)) for col in conts) for s in stats):
            return False
        return set(na) <= set(conts) and all(stats[2][col] > 0 for col in conts)
    c.need("table", ok, "{categorical, continuous, na_columns: lists of column names; vocab: a list per "
                        "categorical column; median, mean, std: a finite number per continuous column, std > 0}")


def check_series_input(c: Checker) -> None:
    def ok(t):
        if not isinstance(t, dict) or not (is_int(t.get("channels")) and t["channels"] >= 1):
            return False
        if not (is_int(t.get("length")) and t["length"] >= 1) or not isinstance(t.get("mask"), bool):
            return False
        if (t["channels"] + 1) * t["length"] > MAX_INPUT_VALUES:
            return False
        if t.get("normalize") == "channel":
            return numbers(t["channels"])(t.get("mean")) and numbers(t["channels"], positive=True)(t.get("std"))
        return t.get("normalize") in ("series", None)
    c.need("series", ok, "{channels, length: positive integers (channels x length at most "
                         f"{MAX_INPUT_VALUES}); mask: true or false; normalize: 'channel' (with mean and std, a "
                         "finite number per channel, std > 0), 'series' or null}")


def check_file_io(c: Checker) -> None:
    """The keys of a file whose input or output is not the encoded float32 batch (all optional; a
    runtime applies them): its layout, int8 input and output with their quantization, the batch it
    takes per call, and the CPU it was compiled for."""
    layout = c.need("layout", lambda v: v in ("NHWC", "encoded"),
                    '"NHWC" (an image input, channels last) or "encoded" (the encoded input as it is)', optional=True)
    if layout == "NHWC" and "size" not in c.meta:
        c.fail("layout", "is 'NHWC', which is for image inputs, but the metadata describes no image (no 'size')")
    c.need("batch_size", lambda v: is_int(v) and v >= 1,
           "a positive integer (the inputs the file takes per call; absent: any number)", optional=True)
    c.need("target_cpu", lambda v: isinstance(v, str) and v.strip() != "",
           "the CPU name the file was compiled for (``host``, ``generic`` or an LLVM CPU name)", optional=True)
    for side in ("input", "output"):
        dtype = c.need(f"{side}_dtype", lambda v: v in ("float32", "int8"), '"float32" or "int8" (absent: float32)',
                       optional=True)
        int8 = dtype == "int8"
        c.need(f"{side}_scale", lambda v: is_number(v) and v > 0,
               f"a positive finite number: the int8 {side}'s step (required when {side}_dtype is int8)",
               optional=not int8)
        c.need(f"{side}_zero_point", lambda v: is_int(v) and -128 <= v <= 127,
               f"an integer in [-128, 127]: the int8 {side}'s zero (required when {side}_dtype is int8)",
               optional=not int8)


def table_width(meta: dict) -> int:
    """The encoded row's width: category indices, missing-value indicators, continuous values."""
    t = meta["table"]
    return len(t["categorical"]) + len(t["na_columns"]) + len(t["continuous"])


def input_shape(meta: dict) -> tuple[int, ...]:
    """The shape of one encoded input (no batch dimension), from the metadata alone."""
    if "table" in meta:
        return (table_width(meta),)
    if "series" in meta:
        s = meta["series"]
        return (s["channels"] + int(s["mask"]), s["length"])
    return (meta["channels"], *meta["size"])


# --- the metadata against the model ---------------------------------------------------------------
def check_against_model(meta: dict, input_names: Sequence[str], in_shape: Sequence, out_shape: Sequence,
                        where: str) -> None:
    """The metadata against what the runtime reads from the model: its input names, the chosen
    input's shape and the output's shape (dimensions that are not integers are dynamic)."""
    c = Checker(meta, where)
    name = meta.get("input_name") or input_names[0]
    if name not in input_names:
        c.fail("input_name", f"is {name!r}, but the model's inputs are {list(input_names)}")
    fixed = [d if is_int(d) else None for d in list(in_shape)[1:]]  # the batch dimension is dynamic
    declared = [d for d in fixed if d is not None]
    if declared and math.prod(declared) > MAX_INPUT_VALUES:
        raise MetadataError(f"{where}: the model declares an input of shape {list(in_shape)}: more than the "
                            f"{MAX_INPUT_VALUES} values per sample this reads (a damaged file?)")
    want = list(input_shape(meta))
    if "table" in meta:
        if fixed and fixed[-1] is not None and fixed[-1] != want[0]:
            c.fail("table", f"describes {want[0]} input values per row, but the model takes {fixed[-1]}")
    elif "series" in meta:
        if len(fixed) == 2 and None not in fixed and fixed != want:
            c.fail("series", f"describes inputs of {want} (channels, length), but the model takes {fixed}")
    elif len(fixed) == 3:
        if fixed[0] is not None and fixed[0] != meta["channels"]:
            c.fail("channels", f"is {meta['channels']}, but the model takes {fixed[0]} channels")
        if None not in fixed[1:] and fixed[1:] != list(meta["size"]):
            c.fail("size", f"is {meta['size']}, but the model takes {fixed[1:]} (height, width)")
    out = list(out_shape)
    width = out[-1] if len(out) >= 2 and is_int(out[-1]) else None
    if width is None:
        return
    if "classes" in meta and len(meta["classes"]) != width:
        c.fail("classes", f"lists {len(meta['classes'])} classes, but the model outputs {width} values per sample")
    if "outputs" in meta and meta["outputs"] != width:
        c.fail("outputs", f"is {meta['outputs']}, but the model outputs {width} values per row")
