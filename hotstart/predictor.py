"""Predict with an exported hotstart model using numpy, pillow and onnxruntime only.

This file stands alone: it imports nothing from hotstart and no torch, torchvision, timm or
Lightning, so an app can copy it next to a model (``python -m hotstart export ... --bundle DIR``
does that) and run with ``pip install onnxruntime numpy pillow``.

    from predictor import Predictor
    p = Predictor.load("digits.onnx")
    label, probs = p.predict("img.png")              # a path, a PIL image or a numpy array
    results = p.predict_many(paths, batch_size=32)   # [(label, probs), ...]
    p.evaluate(images, labels)                       # {"accuracy": ..., "n": ...}
    python predictor.py digits.onnx img1.png img2.png [--top-k 3] [--json]

Everything the model needs to know about its inputs and outputs is in the .onnx file's metadata
(the keys are described in hotstart/export/onnx.py). Preprocessing reproduces hotstart's inference
encoding step by step, because a model is only as good as the inputs it is given:

1. the image is read and converted by the functions that hotstart's ``Image.to_pil`` itself uses
   (they live here, and blocks/image.py imports them): EXIF rotation; alpha flattened onto white;
   palettes expanded; 16-bit scaled to 8 by a fixed range; floats read as [0, 1]; then L or RGB;
2. it is resized to the task's size with torchvision's antialiased bilinear filter on uint8,
   reimplemented here (`resize_uint8`): the same fixed-point weights and the same two passes, so
   the resized pixels are bit-identical to hotstart's on x86 CPUs (torch's AVX2 uint8 kernel,
   which Pillow-SIMD's algorithm defines). PIL's own ``resize`` uses other fixed-point precision
   and differs by one grey level on most images;
3. pixels / 255, gray repeated to RGB (or RGB to luminance), then (x - mean) / std in float32.

Each task kind's preprocessing and decoding is one entry of the `KINDS` table at the bottom.
"""
from __future__ import annotations

import functools
import json
import os
import sys
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

__all__ = ["Predictor", "resize_uint8", "resized_pixels", "load_image", "read_image_file", "ImageInputError", "MetadataError", "KINDS",
           "read_metadata", "decode_metadata", "check_metadata",
           "array_to_pil", "to_l_or_rgb", "pixel_values_problem", "array_image_problem", "pil_image_problem"]

FORMAT = "hotstart.onnx/1"


class Predictor:
    """An exported hotstart model (.onnx) with the task's preprocessing and decoding."""

    def __init__(self, session, meta: dict[str, Any], source: str = "<model>"):
        self.session = session
        self.meta = meta
        self.source = source
        check_metadata(meta, source)
        self.kind = meta["kind"]
        self._kind = KINDS[self.kind]
        if session is not None:
            check_against_model(meta, session, source)
        self.input_name = meta.get("input_name") or session.get_inputs()[0].name

    @classmethod
    def load(cls, path, *, providers: Sequence[str] | None = None, threads: int | None = None) -> "Predictor":
        """Open `path` (.onnx written by hotstart's export) with onnxruntime; read the task from its metadata."""
        import onnxruntime as ort

        path = os.fspath(path)
        if not os.path.isfile(path):
            raise FileNotFoundError(f"{path}: no such model file")
        opts = ort.SessionOptions()
        if threads is not None:
            opts.intra_op_num_threads = int(threads)
        try:
            session = ort.InferenceSession(path, opts, providers=list(providers or ["CPUExecutionProvider"]))
        except Exception as e:  # onnxruntime raises its own exception types
            raise MetadataError(f"{path}: onnxruntime cannot load it: {e}") from e
        return cls(session, read_metadata(session.get_modelmeta().custom_metadata_map, path), path)

    @property
    def classes(self) -> list:
        return self.meta["classes"]

    # --- the three steps -----------------------------------------------------------------
    def preprocess(self, x) -> np.ndarray:
        """One raw input (path, PIL image, array) -> the model's encoded input (float32)."""
        return self._kind.encode(x, self.meta)

    def run(self, batch: np.ndarray) -> np.ndarray:
        """Encoded inputs (N x ...) -> raw model outputs (logits)."""
        return self.session.run(None, {self.input_name: np.ascontiguousarray(batch, dtype=np.float32)})[0]

    def decode(self, output: np.ndarray) -> tuple[Any, np.ndarray]:
        """One sample's logits -> (label(s), probabilities)."""
        return self._kind.decode(output, self.meta)

    # --- the API ---------------------------------------------------------------------------
    def predict(self, x) -> tuple[Any, np.ndarray]:
        """(label, probabilities over `classes`) for one image: a path, a PIL image or an array."""
        return self.decode(self.run(self.preprocess(x)[None])[0])

    def predict_many(self, inputs: Sequence, batch_size: int = 32) -> list[tuple[Any, np.ndarray]]:
        """`predict` over many inputs, `batch_size` at a time (an unreadable file raises, naming it)."""
        if int(batch_size) < 1:
            raise ValueError(f"batch_size must be at least 1, got {batch_size!r}")
        results = []
        for start in range(0, len(inputs), batch_size):
            batch = np.stack([self.preprocess(x) for x in inputs[start:start + batch_size]])
            results += [self.decode(out) for out in self.run(batch)]
        return results

    def evaluate(self, inputs: Sequence, targets: Sequence, batch_size: int = 32) -> dict[str, float]:
        """Predict a labelled set: {"accuracy": ..., "n": ...}, computed as hotstart's metric is."""
        if len(inputs) != len(targets):
            raise ValueError(f"evaluate: {len(inputs)} inputs but {len(targets)} targets")
        preds = self.predict_many(inputs, batch_size)
        return {"accuracy": self._kind.accuracy(preds, list(targets), self.meta), "n": len(preds)}

    def __repr__(self):
        outputs = f"classes={len(self.classes)}" if "classes" in self.meta else f"outputs={self.meta.get('outputs')}"
        return f"Predictor({self.source!r}, kind={self.kind}, {outputs})"


# This file's errors are plain ValueErrors, not hotstart.errors.HotstartError, by design: it imports
# nothing from hotstart (an app copies it alone). hotstart's callers wrap them (cli/predict.py ->
# SavedModelError; datasets.ImageLoadError derives from ImageInputError).
class MetadataError(ValueError):
    """An .onnx file's hotstart metadata is damaged, or does not match the model it describes;
    the message names the file and the key. Decoding with wrong metadata would give wrong labels
    without a word, so every key is checked when the model is loaded."""


# keys whose value is a plain string; every other key of the contract (hotstart/export/onnx.py) is JSON
PLAIN_KEYS = frozenset({"format", "kind", "hotstart_version", "input_name", "output_name", "image_mode",
                        "resize", "activation", "quantization"})
JSON_KEYS = frozenset({"classes", "size", "channels", "mean", "std", "threshold", "task", "table", "outputs",
                       "target_mean", "target_std"})


def read_metadata(props: dict[str, str], where: str = "<model>") -> dict[str, Any]:
    """The .onnx model's metadata_props -> a dict with JSON values decoded (see `decode_metadata`)."""
    if props.get("format") != FORMAT:
        raise MetadataError(f"{where}: not a hotstart export (metadata format {props.get('format')!r}, "
                            f"expected {FORMAT!r}); export it with `python -m hotstart export`")
    return decode_metadata(props, where)


def decode_metadata(props: dict[str, str], where: str = "<model>") -> dict[str, Any]:
    """Flat string metadata (ONNX or .pt2) -> a dict with the JSON keys decoded. A JSON key that does
    not parse is a `MetadataError` naming it: kept as text, ``classes`` would be indexed one
    character at a time. NaN and Infinity are not JSON and are refused too."""
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
            meta[k] = v  # a key added after this predictor was written: kept as text
    return meta


def check_metadata(meta: dict[str, Any], where: str = "<model>") -> None:
    """Every key the task kind reads, checked for type, size and range (`MetadataError` naming it)."""
    kind = meta.get("kind")
    if kind not in KINDS:
        raise MetadataError(f"{where}: metadata key 'kind': this predictor does not know task kind "
                            f"{kind!r} (known: {sorted(KINDS)}); update predictor.py")
    checker = _Checker(meta, where)
    checker.need("task", lambda v: isinstance(v, dict), "a JSON object (the task's description)", optional=True)
    KINDS[kind].check(checker)


def _refuse_constant(name: str):
    raise ValueError(f"{name} is not JSON")


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and bool(np.isfinite(v))


def _numbers(n: int | None, positive: bool = False):
    def ok(v):
        return (isinstance(v, list) and (n is None or len(v) == n) and len(v) > 0
                and all(_is_number(x) and (not positive or x > 0) for x in v))
    return ok


class _Checker:
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


def check_image_metadata(c: _Checker) -> None:
    c.need("size", lambda v: isinstance(v, list) and len(v) == 2 and all(_is_int(s) and s >= 1 for s in v),
           "[height, width] with positive integers")
    channels = c.need("channels", lambda v: v in (1, 3) and _is_int(v), "1 or 3")
    c.need("image_mode", lambda v: v in ("L", "RGB", "auto"), '"L", "RGB" or "auto"', optional=True)
    c.need("resize", lambda v: v == "bilinear-antialias", '"bilinear-antialias"', optional=True)
    c.need("mean", _numbers(channels), f"a list of {channels} finite numbers (one per channel)")
    c.need("std", _numbers(channels, positive=True), f"a list of {channels} positive finite numbers")


def check_classes(c: _Checker, activation: str) -> None:
    def ok(v):
        return (isinstance(v, list) and len(v) >= 1 and all(isinstance(x, (str, int, float)) for x in v)
                and len({json.dumps(x) for x in v}) == len(v))
    c.need("classes", ok, "a non-empty JSON list of distinct labels (text or numbers)")
    c.need("activation", lambda v: v == activation, repr(activation), optional=True)


def check_table_metadata(c: _Checker) -> None:
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
        if not all(isinstance(s, dict) and all(_is_number(s.get(col)) for col in conts) for s in stats):
            return False
        return set(na) <= set(conts) and all(stats[2][col] > 0 for col in conts)
    c.need("table", ok, "{categorical, continuous, na_columns: lists of column names; vocab: a list per "
                        "categorical column; median, mean, std: a finite number per continuous column, std > 0}")


def table_width(meta: dict) -> int:
    t = meta["table"]
    return len(t["categorical"]) + len(t["na_columns"]) + len(t["continuous"])


def _check_single_image(c):
    check_image_metadata(c)
    check_classes(c, "softmax")


def _check_multi_image(c):
    check_image_metadata(c)
    check_classes(c, "sigmoid")
    c.need("threshold", lambda v: _is_number(v) and 0 <= v <= 1, "a number in [0, 1]", optional=True)


def _check_single_table(c):
    check_table_metadata(c)
    check_classes(c, "softmax")


def _check_regression(c):
    check_table_metadata(c)
    n = c.need("outputs", lambda v: _is_int(v) and v >= 1, "a positive integer")
    c.need("target_mean", _numbers(n), f"a list of {n} finite numbers")
    c.need("target_std", _numbers(n, positive=True), f"a list of {n} positive finite numbers")
    c.need("activation", lambda v: v == "none", "'none'", optional=True)


def check_against_model(meta: dict, session, where: str) -> None:
    """The metadata against the graph: input name and shape, and the output width (class count)."""
    c = _Checker(meta, where)
    inputs = session.get_inputs()
    names = [i.name for i in inputs]
    name = meta.get("input_name") or names[0]
    if name not in names:
        c.fail("input_name", f"is {name!r}, but the model's inputs are {names}")
    shape = next(i.shape for i in inputs if i.name == name)
    fixed = [d if _is_int(d) else None for d in shape[1:]]  # the batch dimension is dynamic
    if "table" in meta:
        if fixed and fixed[-1] is not None and fixed[-1] != table_width(meta):
            c.fail("table", f"describes {table_width(meta)} input values per row, but the model takes {fixed[-1]}")
    elif len(fixed) == 3:
        if fixed[0] is not None and fixed[0] != meta["channels"]:
            c.fail("channels", f"is {meta['channels']}, but the model takes {fixed[0]} channels")
        if None not in fixed[1:] and fixed[1:] != list(meta["size"]):
            c.fail("size", f"is {meta['size']}, but the model takes {fixed[1:]} (height, width)")
    out = session.get_outputs()[0].shape
    width = out[-1] if len(out) >= 2 and _is_int(out[-1]) else None
    if width is None:
        return
    if "classes" in meta and len(meta["classes"]) != width:
        c.fail("classes", f"lists {len(meta['classes'])} classes, but the model outputs {width} values per sample")
    if "outputs" in meta and meta["outputs"] != width:
        c.fail("outputs", f"is {meta['outputs']}, but the model outputs {width} values per row")


# --- images: reading and converting; hotstart's Image block imports these (one implementation) -----
# The pixel value rules, one per dtype / mode (the table is in hotstart/blocks/image.py's docstring):
# uint8 as is; bool 0/255; uint16 and PIL "I;16*" / "I" by the fixed 16-bit range round(v*255/65535)
# ("I" outside 0..65535 refused); floats and PIL "F" must lie in [0, 1], round(v*255); other
# integer dtypes must be 8-bit values 0..255. Never a range measured on the image, never a clip.
#
# hotstart's blocks/image.py imports the functions below rather than keeping a copy: a deployed
# model must see the pixels it was trained on (a copy here once drifted: `v >> 8` for 16-bit, "F"
# divided by 255, mode "I" <= 255 taken as 8-bit, out-of-range values clipped).

CONVERTIBLE_MODES = frozenset({"1", "L", "LA", "P", "PA", "RGB", "RGBA", "RGBX", "CMYK", "YCbCr", "LAB", "HSV",
                               "I", "I;16", "I;16B", "I;16L", "I;16N", "F"})


class ImageInputError(ValueError):
    """An image input that cannot be read (corrupt, not an image, a decompression bomb) or whose
    pixel values break the rules above; the message names the file when there is one.
    hotstart's `datasets.ImageLoadError` derives from it: the predictor and ``learner.predict``
    refuse the same files with the same kind of error."""


def pixel_values_problem(arr: np.ndarray, what: str, int_range: tuple[int, int] | None = None) -> str | None:
    """The value rules above: None, or why `arr`'s values break them (`int_range`: PIL "I" images)."""
    kind = arr.dtype.kind
    if kind == "b" or arr.dtype in (np.uint8, np.uint16):
        return None
    if kind not in "iuf":
        return f"{what} has dtype {arr.dtype}; images need unsigned/signed integers, bool or floats"
    if arr.size == 0:
        return None
    if kind == "f":
        if not np.isfinite(arr).all():
            return f"{what} has NaN or infinite values"
        lo, hi = float(arr.min()), float(arr.max())
        if lo < 0.0 or hi > 1.0:
            return (f"{what} of dtype {arr.dtype} has values in [{lo:g}, {hi:g}]; float images must lie in "
                    f"[0, 1] (for 0..255 data pass uint8, e.g. arr.astype(numpy.uint8))")
        return None
    allowed = int_range or (0, 255)
    lo, hi = int(arr.min()), int(arr.max())
    if lo < allowed[0] or hi > allowed[1]:
        bits = "16-bit" if allowed[1] == 65535 else "8-bit"
        hint = "" if int_range else " (for 16-bit data pass uint16)"
        return (f"{what} of dtype {arr.dtype} has values in {lo}..{hi}; it is read as {bits} data, "
                f"which must lie in {allowed[0]}..{allowed[1]}{hint}")
    return None


def array_image_problem(arr: np.ndarray) -> str | None:
    """None, or why a numpy array is not an image (shape H x W or H x W x C, C in 1, 3, 4; values)."""
    if not (arr.ndim == 2 or (arr.ndim == 3 and arr.shape[-1] in (1, 3, 4))):
        return f"array of shape {arr.shape} is not H x W or H x W x C (C in 1, 3, 4)"
    if arr.shape[0] < 1 or arr.shape[1] < 1:
        return f"array image has an empty size {arr.shape}"
    return pixel_values_problem(arr, "array")


def pil_image_problem(img) -> str | None:
    """None, or why a PIL image cannot be converted to L or RGB (empty, unknown mode, "I" / "F" values)."""
    if img.width < 1 or img.height < 1:
        return f"image has an empty size {img.size}"
    if img.mode not in CONVERTIBLE_MODES:
        return f"image mode {img.mode!r} cannot be converted to L or RGB"
    if img.mode in ("I", "F"):
        return pixel_values_problem(np.asarray(img), f"mode {img.mode!r} image",
                                    int_range=(0, 65535) if img.mode == "I" else None)
    return None


def sixteen_to_eight(arr: np.ndarray) -> np.ndarray:
    """16-bit values (0..65535) to 8-bit by the fixed range: round(v * 255 / 65535)."""
    return ((arr.astype(np.uint32) * 255 + 32767) // 65535).astype(np.uint8)


def array_to_pil(arr: np.ndarray):
    """An array that `array_image_problem` accepts -> a PIL image (L, RGB or RGBA), by the value rules."""
    from PIL import Image

    if arr.ndim == 3 and arr.shape[-1] == 1:
        arr = arr[..., 0]
    if arr.dtype.kind == "b":
        arr = arr.astype(np.uint8) * 255
    elif arr.dtype.kind == "f":  # checked to be in [0, 1]
        arr = np.floor(arr.astype(np.float64) * 255.0 + 0.5).astype(np.uint8)
    elif arr.dtype == np.uint16:
        arr = sixteen_to_eight(arr)
    elif arr.dtype != np.uint8:  # other integers: checked to be 8-bit values
        arr = arr.astype(np.uint8)
    mode = {2: "L"}.get(arr.ndim) or {3: "RGB", 4: "RGBA"}[arr.shape[-1]]
    return Image.fromarray(np.ascontiguousarray(arr), mode=mode)


def to_l_or_rgb(img):
    """A PIL image that `pil_image_problem` accepts -> mode L or RGB: alpha flattened onto white,
    palettes expanded, "I;16*" / "I" scaled by the fixed 16-bit range, "F" read as [0, 1]."""
    from PIL import Image

    mode = img.mode
    if mode in ("L", "RGB"):
        return img
    if mode in ("I;16", "I;16B", "I;16L", "I;16N", "I"):
        return Image.fromarray(sixteen_to_eight(np.asarray(img).astype(np.int64)), mode="L")
    if mode == "F":
        return array_to_pil(np.asarray(img))
    if mode == "1":
        return img.convert("L")
    if mode in ("P", "PA"):
        img, mode = img.convert("RGBA"), "RGBA"
    if mode in ("RGBA", "LA"):
        base = "RGB" if mode == "RGBA" else "L"
        bg = Image.new(base, img.size, (255, 255, 255) if base == "RGB" else 255)
        bg.paste(img.convert(base), mask=img.getchannel("A"))
        return bg
    return img.convert("RGB")


def upright(img):
    """The image as displayed: its EXIF orientation applied (phones store rotation as a tag)."""
    from PIL import ImageOps

    return ImageOps.exif_transpose(img) if img.getexif() else img


def decompression_bomb_problem(width: int, height: int) -> str | None:
    """None, or why an image of this declared size is refused: more pixels than
    ``PIL.Image.MAX_IMAGE_PIXELS`` (read now, so a caller's setting counts). PIL itself only warns
    between that limit and twice it; this check, made before decoding, refuses all of them."""
    from PIL import Image

    limit = Image.MAX_IMAGE_PIXELS
    if limit and width * height > limit:
        return (f"decompression bomb: {width}x{height} = {width * height} pixels is more than "
                f"PIL.Image.MAX_IMAGE_PIXELS = {limit}")
    return None


def read_image_file(path):
    """The image file at `path`, decoded now (not lazily) and upright, in its own mode.

    A missing or unreadable file raises the usual OSError (it names the path); contents that are
    not a readable image, or a decompression bomb, raise `ImageInputError` naming the path.
    """
    import warnings

    from PIL import Image

    path = os.fspath(path)
    with open(path, "rb") as f:
        try:
            with warnings.catch_warnings():  # the explicit size check below is what guarantees it
                warnings.simplefilter("error", Image.DecompressionBombWarning)
                img = Image.open(f)
                problem = decompression_bomb_problem(img.width, img.height)
                if problem:
                    raise ImageInputError(f"{path}: cannot load image ({problem})")
                img.load()  # the pixels are in memory now: the image no longer reads `f`
                # no copy to detach it: a copy cost 0.1 ms of the folder workload's ~1.5 ms an image
                return upright(img)
        except MemoryError:
            raise
        except ImageInputError:
            raise
        except Exception as e:  # PIL raises a zoo: OSError, SyntaxError, ValueError, struct.error...
            raise ImageInputError(f"{path}: cannot load image ({_describe_read_error(e)})") from e


def _describe_read_error(e: Exception) -> str:
    from PIL import Image

    if isinstance(e, (Image.DecompressionBombError, Image.DecompressionBombWarning)):
        return f"decompression bomb: {e}"
    if isinstance(e, Image.UnidentifiedImageError):
        return "not an image file PIL can identify (corrupt, or not an image)"
    return f"{type(e).__name__}: {e}"


def load_image(x):
    """A path, a PIL image or a numpy array (H x W, H x W x C) -> PIL image in mode L or RGB.

    Bad values raise `ImageInputError` naming the file (or "array" / "image")."""
    from PIL import Image

    where = None
    if isinstance(x, (str, os.PathLike)):
        where = os.fspath(x)
        x = read_image_file(x)
    if isinstance(x, np.ndarray):
        problem = array_image_problem(x)
        if problem:
            raise ImageInputError(problem)
        x = array_to_pil(x)
    elif not isinstance(x, Image.Image):
        raise TypeError(f"expected an image path, a PIL image or a numpy array, got {type(x).__name__}")
    problem = pil_image_problem(x)
    if problem:
        raise ImageInputError(f"{where}: {problem}" if where else problem)
    return to_l_or_rgb(x if where is not None else upright(x))  # read_image_file made a file upright


# --- resizing: torchvision's antialiased bilinear on uint8, exactly ------------------------------
@functools.lru_cache(maxsize=64)  # the same few (input, output) sizes come back
def _aa_weights(in_size: int, out_size: int) -> tuple[np.ndarray, np.ndarray, int]:
    """Triangle-filter weights of each output pixel as int16 fixed point: (first index, weights, bits).

    The float weights are Pillow's (support widened by the scale when shrinking); the fixed-point
    precision is the largest that keeps the biggest weight within int16, as torch's uint8 kernel does.
    """
    scale = in_size / out_size
    support = scale if scale >= 1.0 else 1.0
    invscale = 1.0 / scale if scale >= 1.0 else 1.0
    width = int(np.ceil(support)) * 2 + 1
    starts = np.zeros(out_size, dtype=np.int64)
    weights = np.zeros((out_size, width), dtype=np.float64)
    for i in range(out_size):
        center = scale * (i + 0.5)
        lo = max(int(center - support + 0.5), 0)
        hi = min(int(center + support + 0.5), in_size)
        j = np.arange(lo, hi)
        w = np.clip(1.0 - np.abs((j - center + 0.5) * invscale), 0.0, None)
        total = w.sum()
        starts[i] = lo
        weights[i, :hi - lo] = w / total if total != 0 else w
    bits = 0
    while bits < 22 and int(0.5 + weights.max() * (1 << (bits + 1))) < (1 << 15):
        bits += 1
    scaled = weights * (1 << bits)
    fixed = np.where(scaled < 0, np.trunc(scaled - 0.5), np.trunc(scaled + 0.5)).astype(np.int64)
    return starts, fixed, bits


def _resize_axis(x: np.ndarray, out_size: int, axis: int) -> np.ndarray:
    """One pass along `axis` of an int64 H x W x C image, rounded and clipped to 0..255."""
    in_size = x.shape[axis]
    starts, fixed, bits = _aa_weights(in_size, out_size)
    x = np.moveaxis(x, axis, 0)
    acc = np.full((out_size, *x.shape[1:]), 1 << (bits - 1), dtype=np.int64)
    for k in range(fixed.shape[1]):  # banded: a few taps per output pixel, whatever the input size
        idx = np.minimum(starts + k, in_size - 1)
        w = fixed[:, k].reshape(-1, *([1] * (x.ndim - 1)))
        acc += x[idx] * w
    return np.moveaxis(np.clip(acc >> bits, 0, 255), 0, axis)


def resize_uint8(arr: np.ndarray, size: Sequence[int]) -> np.ndarray:
    """H x W x C uint8 -> size (H', W') with antialiased bilinear, as torchvision does on uint8 tensors."""
    h, w = int(size[0]), int(size[1])
    x = arr.astype(np.int64)
    if x.shape[1] != w:  # horizontal pass first, as Pillow(-SIMD) and torch
        x = _resize_axis(x, w, 1)
    if x.shape[0] != h:
        x = _resize_axis(x, h, 0)
    return x.astype(np.uint8)


def resized_pixels(x, meta: dict) -> np.ndarray:
    """A raw image -> H x W x C uint8 at the model's size and mode: the encoding before normalization
    (and what the C export's ``hotstart_predict`` takes, see hotstart/export/c/)."""
    img = load_image(x)
    mode = meta.get("image_mode", "auto")
    if mode in ("L", "RGB") and img.mode != mode:
        img = img.convert(mode)
    arr = np.asarray(img, dtype=np.uint8)
    arr = arr[..., None] if arr.ndim == 2 else arr
    return resize_uint8(arr, meta["size"])


def encode_image(x, meta: dict) -> np.ndarray:
    """A raw image -> C x H x W float32, normalized: hotstart's inference encoding of an Image."""
    arr = resized_pixels(x, meta)
    x = np.moveaxis(arr, -1, 0).astype(np.float32) / np.float32(255.0)
    channels = int(meta["channels"])
    if x.shape[0] != channels:
        if channels == 3:  # gray -> RGB
            x = np.repeat(x, 3, axis=0)
        else:  # RGB -> luminance (ITU-R 601-2), in float as hotstart does
            x = (x * np.array([0.299, 0.587, 0.114], dtype=np.float32).reshape(3, 1, 1)).sum(0, keepdims=True)
    mean = np.asarray(meta["mean"], dtype=np.float32).reshape(-1, 1, 1)
    std = np.asarray(meta["std"], dtype=np.float32).reshape(-1, 1, 1)
    return (x - mean) / std


# --- table rows: hotstart's TabularPreprocessing, in numpy --------------------------------------
def _is_missing(v) -> bool:
    if v is None:
        return True
    if isinstance(v, (float, np.floating)):
        return bool(np.isnan(v))
    return type(v).__name__ in ("NAType", "NaTType")


def _category_key(v):
    """The text a category is known by (as hotstart's category_key): 2007, 2007.0 and "2007" agree."""
    import numbers

    if _is_missing(v):
        return None
    if isinstance(v, (bool, np.bool_)):
        return str(bool(v))
    if isinstance(v, numbers.Integral):
        return str(int(v))
    if isinstance(v, numbers.Real):
        f = float(v)
        return str(int(f)) if f.is_integer() else repr(f)
    if isinstance(v, str):
        return v
    raise TypeError(f"a category must be text, a number, a bool or missing, got {type(v).__name__} {v!r}")


def encode_row(row, meta: dict) -> np.ndarray:
    """A dict (or pandas Series / one-row DataFrame) -> float32 [category indices, indicators, normalized
    continuous]: unseen or missing categories -> 0; missing numbers -> the training median, indicator 2."""
    if hasattr(row, "columns") and hasattr(row, "iloc"):
        if len(row) != 1:
            raise ValueError(f"expected one row, got a DataFrame with {len(row)} rows")
        row = {c: row[c].iloc[0] for c in row.columns}
    elif hasattr(row, "to_dict") and hasattr(row, "iloc"):
        row = row.to_dict()
    if not (hasattr(row, "keys") and hasattr(row, "__getitem__")) or isinstance(row, (str, bytes)):
        raise ValueError(f"this model predicts table rows: give it a dict of column -> value (or a pandas Series / "
                         f"one-row DataFrame), not {type(row).__name__} {row!r:.60}")
    t = meta["table"]
    cats, conts, na_cols = t["categorical"], t["continuous"], t["na_columns"]
    absent = [c for c in cats + conts if c not in row]
    if absent:
        raise ValueError(f"row has no column(s) {absent}")
    out = []
    for c in cats:
        vocab = t["vocab"][c]
        try:
            key = _category_key(row[c])
        except TypeError as e:
            raise ValueError(f"column {c!r}: {e}") from None
        out.append(float(vocab.index(key)) if key in vocab[1:] else 0.0)
    raw = []
    for c in conts:
        v = row[c]
        if not _is_missing(v) and (isinstance(v, (str, bytes)) or not np.isfinite(float(v))):
            raise ValueError(f"column {c!r} is continuous: expected a finite number or a missing value, got {v!r}")
        raw.append(np.nan if _is_missing(v) else float(v))
    raw = np.asarray(raw, dtype=np.float64)
    missing = np.isnan(raw)
    out += [2.0 if missing[conts.index(c)] else 1.0 for c in na_cols]
    fill = np.asarray([t["median"][c] for c in conts], dtype=np.float64)
    mean = np.asarray([t["mean"][c] for c in conts], dtype=np.float64)
    std = np.asarray([t["std"][c] for c in conts], dtype=np.float64)
    return np.concatenate([np.asarray(out, dtype=np.float32),
                           ((np.where(missing, fill, raw) - mean) / std).astype(np.float32)])


# --- series: hotstart's SeriesPreprocessing (encodings/timeseries.py), in numpy -------------------
# Kept apart from the image and table code above: the series kinds use only this section and the
# outputs below. Mirrors `encode_series` step for step (the parity test holds the two together).
SERIES_EPS = 1e-8


def encode_series(x, meta: dict) -> np.ndarray:
    """An array (channels, length), or 1-D for one channel; NaN = missing -> float32 (channels [+1], length):
    standardised (training channel statistics, or each series' own), missing -> 0, padded / cropped, mask."""
    t = meta["series"]
    a = np.asarray(x, dtype=np.float64)
    a = a[None, :] if a.ndim == 1 else a
    if a.ndim != 2 or a.shape[0] != t["channels"] or a.shape[1] == 0:
        raise ValueError(f"this model predicts series of {t['channels']} channel(s): give it an array "
                         f"(channels, length), not shape {a.shape}")
    if np.isinf(a).any():
        raise ValueError("the series holds an infinity (missing values are NaN)")
    observed = ~np.isnan(a)
    if t["normalize"] == "channel":
        a = (a - np.asarray(t["mean"])[:, None]) / np.asarray(t["std"])[:, None]
    elif t["normalize"] == "series":
        count = np.maximum(observed.sum(axis=1), 1)
        mean = np.where(observed, a, 0.0).sum(axis=1) / count
        std = np.sqrt((np.where(observed, a - mean[:, None], 0.0) ** 2).sum(axis=1) / count)
        a = (a - mean[:, None]) / (std[:, None] + SERIES_EPS)
    a = np.where(observed, a, 0.0)
    length, mask = int(t["length"]), bool(t["mask"])
    out = np.zeros((a.shape[0] + int(mask), length), dtype=np.float32)
    n = min(length, a.shape[1])
    out[: a.shape[0], :n] = a[:, :n]
    if mask:
        out[-1, :n] = observed[:, :n].all(axis=0)
    return out


def check_series_metadata(c: "_Checker") -> None:
    def ok(t):
        if not isinstance(t, dict) or not (_is_int(t.get("channels")) and t["channels"] >= 1):
            return False
        if not (_is_int(t.get("length")) and t["length"] >= 1) or not isinstance(t.get("mask"), bool):
            return False
        if t.get("normalize") == "channel":
            return _numbers(t["channels"])(t.get("mean")) and _numbers(t["channels"], positive=True)(t.get("std"))
        return t.get("normalize") in ("series", None)
    c.need("series", ok, "{channels, length: positive integers; mask: true or false; normalize: 'channel' (with "
                         "mean and std, a finite number per channel, std > 0), 'series' or null}")


def check_series_single(c: "_Checker") -> None:
    check_series_metadata(c)
    check_classes(c, "softmax")


def check_series_regression(c: "_Checker") -> None:
    check_series_metadata(c)
    n = c.need("outputs", lambda v: _is_int(v) and v >= 1, "a positive integer")
    c.need("target_mean", _numbers(n), f"a list of {n} finite numbers")
    c.need("target_std", _numbers(n, positive=True), f"a list of {n} positive finite numbers")
# --- end of series ---------------------------------------------------------------------------------


# --- outputs -------------------------------------------------------------------------------
def softmax(z: np.ndarray) -> np.ndarray:
    z = z.astype(np.float32)
    e = np.exp(z - z.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def sigmoid(z: np.ndarray) -> np.ndarray:
    return (1.0 / (1.0 + np.exp(-z.astype(np.float32)))).astype(np.float32)


def decode_single(logits: np.ndarray, meta: dict):
    probs = softmax(logits)
    return meta["classes"][int(probs.argmax())], probs


def decode_multi(logits: np.ndarray, meta: dict):
    probs = sigmoid(logits)
    t = float(meta.get("threshold", 0.5))
    return [c for c, p in zip(meta["classes"], probs.tolist()) if p >= t], probs


def accuracy_single(preds, targets, meta) -> float:
    return float(np.mean([label == t for (label, _), t in zip(preds, targets)])) if preds else float("nan")


def accuracy_multi(preds, targets, meta) -> float:
    """Fraction of (sample, class) entries right, as hotstart's MultilabelAccuracy."""
    if not preds:
        return float("nan")
    right = sum(sum((c in set(label)) == (c in set(t)) for c in meta["classes"]) for (label, _), t in zip(preds, targets))
    return right / (len(preds) * len(meta["classes"]))


def decode_regression(output: np.ndarray, meta: dict):
    """One row's outputs -> (values in the target's units, the same values)."""
    values = (output.astype(np.float64) * np.asarray(meta["target_std"]) + np.asarray(meta["target_mean"]))
    values = values.astype(np.float32)
    return values, values


def no_accuracy(preds, targets, meta) -> float:
    raise ValueError("evaluate() computes accuracy, which a regression model has none of: compare "
                     "predict_many's values with the targets (RMSE, R2) instead")


@dataclass(frozen=True)
class Kind:
    """How one task kind's inputs are encoded and its outputs decoded."""

    encode: Callable[[Any, dict], np.ndarray]  # raw input -> one encoded input (no batch dim)
    decode: Callable[[np.ndarray, dict], tuple]  # one output -> (label(s), probabilities)
    accuracy: Callable[[list, list, dict], float]  # predictions, targets -> accuracy
    check: Callable[[_Checker], None]  # every metadata key the kind reads: type, size, range


# task kind (metadata "kind") -> its encode / decode: add a row for a new task kind
KINDS: dict[str, Kind] = {
    "ImageClassificationSingle": Kind(encode_image, decode_single, accuracy_single, _check_single_image),
    "ImageClassificationMulti": Kind(encode_image, decode_multi, accuracy_multi, _check_multi_image),
    "TabularClassificationSingle": Kind(encode_row, decode_single, accuracy_single, _check_single_table),
    "TabularRegression": Kind(encode_row, decode_regression, no_accuracy, _check_regression),
    "TSClassificationSingle": Kind(encode_series, decode_single, accuracy_single, check_series_single),
    "TSRegression": Kind(encode_series, decode_regression, no_accuracy, check_series_regression),
}


# --- command line (so that a bundle runs on its own) ---------------------------------------------
def format_prediction(name: str, label, probs: np.ndarray, classes: list, top_k: int) -> str:
    order = np.argsort(-probs, kind="stable")[:top_k]
    tops = ", ".join(f"{classes[i]} {probs[i]:.3f}" for i in order)
    return f"{name}: {label} ({tops})"


def main(argv=None) -> int:
    import argparse

    ap = argparse.ArgumentParser(description="Predict images with an exported hotstart model (.onnx).")
    ap.add_argument("model")
    ap.add_argument("images", nargs="+")
    ap.add_argument("--top-k", type=int, default=3)
    ap.add_argument("--json", action="store_true", help="one JSON object per image")
    args = ap.parse_args(argv)
    try:
        predictor = Predictor.load(args.model)
    except (FileNotFoundError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return predict_paths(predictor, args.images, args.top_k, args.json)


def predict_paths(predictor: Predictor, paths: Sequence[str], top_k: int = 3, as_json: bool = False,
                  out=None) -> int:
    """Print each image's prediction; an unreadable image gets an error line and exit status 1."""
    out = out or sys.stdout
    status = 0
    for path in paths:
        try:
            label, probs = predictor.predict(path)
            if not np.isfinite(probs).all():  # NaN in the output: no label to give, and not JSON
                raise ValueError(f"{path}: the model's outputs are not finite numbers (NaN or infinite)")
        except (OSError, ValueError, TypeError) as e:
            print(f"error: {e}", file=sys.stderr)
            status = 1
            continue
        if as_json:
            order = np.argsort(-probs, kind="stable")[:top_k]
            print(json.dumps({"image": path, "label": label,
                              "top": [[predictor.classes[i], float(probs[i])] for i in order]}), file=out)
        else:
            print(format_prediction(path, label, probs, predictor.classes, top_k), file=out)
        out.flush()
    return status


if __name__ == "__main__":
    sys.exit(main())
