"""Task kinds: which encoder, decoder and metadata checks each kind of exported model uses.

Each task kind (the metadata's ``kind``) is one row of `KINDS`: how a raw input is encoded
(contract/image_input.py, table_input.py, series_input.py), how one output is decoded
(contract/outputs.py), how `evaluate` scores predictions, and which metadata keys it reads
(contract/schema.py). A new exportable task kind adds its row here, and its metadata builder in
hotstart/export/metadata.py.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from .errors import MetadataError
from .image_input import encode_image
from .outputs import accuracy_multi, accuracy_single, decode_multi, decode_regression, decode_single, no_accuracy
from .schema import (Checker, check_classes, check_file_io, check_image_input, check_regression_outputs,
                     check_series_input, check_table_input)
from .series_input import encode_series_input
from .table_input import TableEncoder

__all__ = ["Kind", "KINDS", "check_metadata", "TABLE_KINDS"]


def image_encoder(meta: dict) -> Callable[[Any], np.ndarray]:
    return lambda x: encode_image(x, meta)


def row_encoder(meta: dict) -> Callable[[Any], np.ndarray]:
    return TableEncoder(meta["table"]).encode  # its lookups built once, for every row


def series_encoder(meta: dict) -> Callable[[Any], np.ndarray]:
    return lambda x: encode_series_input(x, meta)


@dataclass(frozen=True)
class Kind:
    """How one task kind's inputs are encoded and its outputs decoded."""

    encoder: Callable[[dict], Callable[[Any], np.ndarray]]  # metadata -> (raw input -> one encoded input)
    decode: Callable[[np.ndarray, dict], tuple]  # one output -> (label(s) or values, probabilities or values)
    accuracy: Callable[[list, list, dict], float]  # predictions, targets -> accuracy
    check: Callable[[Checker], None]  # every metadata key the kind reads: type, size, range


def _checks(*steps):
    def check(c: Checker) -> None:
        for step in steps:
            step(c)
    return check


def _classes(activation: str):
    return lambda c: check_classes(c, activation)


def _threshold(c: Checker) -> None:
    c.need("threshold", lambda v: isinstance(v, (int, float)) and not isinstance(v, bool) and 0 <= v <= 1,
           "a number in [0, 1]", optional=True)


# task kind (metadata "kind") -> its encode / decode: add a row for a new task kind
KINDS: dict[str, Kind] = {
    "ImageClassificationSingle": Kind(image_encoder, decode_single, accuracy_single,
                                      _checks(check_image_input, _classes("softmax"))),
    "ImageClassificationMulti": Kind(image_encoder, decode_multi, accuracy_multi,
                                     _checks(check_image_input, _classes("sigmoid"), _threshold)),
    "TabularClassificationSingle": Kind(row_encoder, decode_single, accuracy_single,
                                        _checks(check_table_input, _classes("softmax"))),
    "TabularRegression": Kind(row_encoder, decode_regression, no_accuracy,
                              _checks(check_table_input, check_regression_outputs)),
    "TSClassificationSingle": Kind(series_encoder, decode_single, accuracy_single,
                                   _checks(check_series_input, _classes("softmax"))),
    "TSRegression": Kind(series_encoder, decode_regression, no_accuracy,
                         _checks(check_series_input, check_regression_outputs)),
}
"""Task kind (the metadata's ``kind``) -> its `Kind`: how its inputs are encoded, its outputs
decoded and scored, and which metadata keys it reads. An exported file of a kind not here is
refused when opened."""

TABLE_KINDS = ("TabularClassificationSingle", "TabularRegression")
"""The kinds whose inputs are table rows: ``hotstart predict`` reads their inputs as CSV rows
rather than as image or series files."""

SERIES_KINDS = ("TSClassificationSingle", "TSRegression")
"""The kinds whose inputs are series: ``hotstart predict`` reads their inputs as series files
(contract/series_files.py) rather than as images."""


def check_metadata(meta: dict[str, Any], where: str = "<model>") -> None:
    """Every key the task kind reads, and the file's own input and output keys (`check_file_io`),
    checked for type, size and range (`MetadataError` naming it)."""
    kind = meta.get("kind")
    if kind not in KINDS:
        raise MetadataError(f"{where}: metadata key 'kind': this predictor does not know task kind "
                            f"{kind!r} (known: {sorted(KINDS)}); update hotstart (or the bundle's predictor)")
    checker = Checker(meta, where)
    checker.need("task", lambda v: isinstance(v, dict), "a JSON object (the task's description)", optional=True)
    KINDS[kind].check(checker)
    check_file_io(checker)
