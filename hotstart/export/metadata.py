"""What an exported model says about itself: the task's facts as flat string key -> value pairs.

The model contract (hotstart/contract/: every runtime, the torch-free predictor) and the web page
read these keys to preprocess an input and decode an output the way the task does, without
hotstart's training code. The keys are listed and described once, in hotstart/export/onnx.py's
docstring; the contract's schema.py reads and checks them; this module builds them.

Each task kind contributes one function, ``task -> {key: JSON-able value}``, in `KIND_METADATA`:
a new task kind (segmentation, keypoints) adds its entry here and its encode / decode entry in the
contract's `KINDS` table (hotstart/contract/kinds.py).

A task class of your own that subclasses an exportable kind exports as that kind (`exported_kind`)
when it changes training only (its loss, metrics, head or augmentation: Keras's override ladder),
because a runtime then reads and decodes exactly as the parent's would. One that overrides what a
runtime does again from the metadata (`RUNTIME_METHODS`) is refused, naming the methods: the
exported model would say "softmax" while your task computes something else.
"""
from __future__ import annotations

from typing import Any, Callable

from ..contract.schema import FORMAT
from ..errors import UsageError
from ..strict_json import dumps


def _image_input(task) -> dict[str, Any]:
    """Image inputs: resize to `size`, convert to `image_mode`, scale to [0, 1], make `channels`, normalize."""
    mean, std = task.stats
    block_channels = task.input_block.channels
    return {"size": list(task.size), "channels": task.channels,
            "image_mode": {1: "L", 3: "RGB"}.get(block_channels, "auto"),
            "mean": list(mean), "std": list(std), "resize": "bilinear-antialias"}


def _classification_single(task) -> dict[str, Any]:
    return {**_image_input(task), "classes": list(task.classes), "activation": "softmax"}


def _classification_multi(task) -> dict[str, Any]:
    return {**_image_input(task), "classes": list(task.classes), "activation": "sigmoid",
            "threshold": float(task.encodings[2].threshold)}


def _table_input(task) -> dict[str, Any]:
    """Table rows: the preprocessing's columns and training statistics (see encodings/tabular.py)."""
    prep = task.preprocessing.to_dict()
    return {"table": {k: prep[k] for k in ("categorical", "continuous", "vocab", "na_columns", "median", "mean", "std")}}


def _tabular_single(task) -> dict[str, Any]:
    return {**_table_input(task), "classes": list(task.classes), "activation": "softmax"}


def _tabular_regression(task) -> dict[str, Any]:
    prep = task.preprocessing
    return {**_table_input(task), "activation": "none", "outputs": task.target_block.n,
            "target_mean": list(prep.target_mean), "target_std": list(prep.target_std)}


def _series_input(task) -> dict[str, Any]:
    """Series: the preprocessing's length, standardisation and training statistics (encodings/timeseries.py)."""
    prep = task.preprocessing.to_dict()
    return {"series": {k: prep[k] for k in ("channels", "length", "normalize", "mean", "std", "mask")}}


def _series_single(task) -> dict[str, Any]:
    return {**_series_input(task), "classes": list(task.classes), "activation": "softmax"}


def _series_regression(task) -> dict[str, Any]:
    scaling = task.encodings[1]
    return {**_series_input(task), "activation": "none", "outputs": task.target_block.n,
            "target_mean": list(scaling.mean), "target_std": list(scaling.std)}


# task kind (the task JSON's "kind") -> its metadata
KIND_METADATA: dict[str, Callable[[Any], dict[str, Any]]] = {
    "ImageClassificationSingle": _classification_single,
    "ImageClassificationMulti": _classification_multi,
    "TabularClassificationSingle": _tabular_single,
    "TabularRegression": _tabular_regression,
    "TSClassificationSingle": _series_single,
    "TSRegression": _series_regression,
}


RUNTIME_METHODS = ("load_input", "encode_input", "activation", "decode_output", "decode_prediction")
"""The task methods that a runtime does again, torch-free, from an exported model's metadata (the contract's
encoder and decoder for its kind): a subclass that overrides one cannot export as its parent kind."""


def exported_kind(task) -> str:
    """The kind an exported `task` model declares: the task's own kind if it is exportable (a key of
    `KIND_METADATA`), else that of its nearest exportable base class, provided the task's class
    overrides none of `RUNTIME_METHODS` relative to it. `UsageError` otherwise, naming the task's
    kind, the exportable kinds and, for a subclass, the methods it overrides."""
    cls = type(task)
    own = task.to_dict()["kind"]
    if own in KIND_METADATA:
        return own
    base = next((b for b in cls.__mro__[1:] if vars(b).get("kind") in KIND_METADATA), None)
    if base is None:
        raise UsageError(f"exporting a {own} model is not supported: exportable task kinds are "
                         f"{sorted(KIND_METADATA)} and task classes of your own that subclass one of them")
    changed = [name for name in RUNTIME_METHODS if getattr(cls, name) is not getattr(base, name)]
    if changed:
        raise UsageError(f"exporting a {own} model is not supported: it subclasses {base.kind} but overrides "
                         f"{', '.join(changed)}, which an exported model's runtime does as {base.kind} does "
                         f"(from the model's metadata, without your class); export a {base.kind} model, or "
                         f"predict with learner.predict")
    _check_encodes_as(task, base)
    return base.kind


def _check_encodes_as(task, base: type) -> None:
    """Refuse `task` (a subclass of exportable `base`) if its encodings or encoded blocks differ from
    those of a `base` task with the same blocks and configuration: a runtime prepares inputs from the
    metadata as `base` does, so a subclass that adds or swaps an encoding in its constructor would
    be fed other inputs than it was trained on."""
    from ..strict_json import json_form
    from ..tasks.config import added_parameters

    own = task.get_config()
    config = json_form({k: v for k, v in own.items() if k not in added_parameters(type(task))}, "",
                       task.json_owner())
    try:
        parent = base.from_config(task.blocks, config)
    except Exception as e:  # noqa: BLE001 - any failure means: not exportable as `base`
        raise UsageError(f"exporting a {task.kind} model as {base.kind}: a {base.kind} with its blocks and "
                         f"configuration cannot be built ({type(e).__name__}: {e})") from e
    ours = [e.to_dict() for e in task.encodings]
    theirs = [e.to_dict() for e in parent.encodings]
    if ours != theirs or task.encoded_blocks() != parent.encoded_blocks():
        kinds = lambda encodings: [e["kind"] for e in encodings]  # noqa: E731
        raise UsageError(f"exporting a {task.kind} model is not supported: its encodings {kinds(ours)} differ from "
                         f"those of a {base.kind} with the same configuration {kinds(theirs)}, and an exported "
                         f"model's runtime prepares inputs as {base.kind} does; predict with learner.predict")


def task_metadata(task, *, input_name: str = "input", output_name: str = "logits") -> dict[str, str]:
    """The flat ``metadata_props`` of an exported `task` model: every value a string (JSON or plain)."""
    from .. import __version__

    kind = exported_kind(task)
    values = {"format": FORMAT, "kind": kind, "hotstart_version": __version__,
              "input_name": input_name, "output_name": output_name, **KIND_METADATA[kind](task), "task": task.to_dict()}
    return {k: v if isinstance(v, str) else dumps(v, f"export metadata key {k!r}") for k, v in values.items()}


def page_fields(task) -> dict[str, Any]:
    """The same facts as `task_metadata`, as JSON values (not strings): for the web page's task.json."""
    kind = exported_kind(task)
    return {"kind": kind, **KIND_METADATA[kind](task)}
