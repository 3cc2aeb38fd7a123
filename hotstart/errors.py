"""hotstart's own error types: "the data, a file or a setting is wrong", told apart from bugs.

Every error that hotstart raises on purpose, because something it was handed is wrong, derives
from `HotstartError`. The command line prints those as one line (the message names the file,
the sample or the argument); anything else (a TypeError or KeyError from our own code) is a bug
and keeps its traceback.

Each concrete type also derives from the built-in exception that callers caught before it
existed (mostly `ValueError`), so ``except ValueError`` keeps working.

    HotstartError
    ├── SavedModelError      (ValueError)   a saved model folder cannot be read, or must not be written
    ├── UnknownKindError     (ValueError)   JSON names a block / encoding / task kind nobody registered
    ├── UsageError           (ValueError)   an argument or path that hotstart cannot work with
    │   └── UsageTypeError   (+ TypeError)  an argument of a type hotstart does not take
    ├── SampleError          (ValueError)   a sample could not be encoded (names the sample)
    ├── blocks.BlockValueError (ValueError) a value does not fit its block
    ├── datasets.DatasetError  (ValueError) a dataset is empty, malformed or inconsistent
    ├── datasets.ImageLoadError (ValueError) a file is not a readable image (also contract.ImageInputError)
    ├── write_errors.WriteError (OSError)   a file or folder cannot be written (full disk, read-only...);
    │                                        names the destination, keeps the errno
    ├── strict_json.NotJSONError (ValueError) NaN / infinity about to be written as JSON, or a
    │                                         parameter JSON cannot hold (a numpy scalar)
    └── learner.NonFiniteLossError (FloatingPointError)  training diverged

This module imports nothing: every layer of hotstart may use it.
"""
from __future__ import annotations

__all__ = ["HotstartError", "SampleError", "SavedModelError", "UnknownKindError", "UsageError", "UsageTypeError"]


class HotstartError(Exception):
    """Base of the errors hotstart raises about its inputs (never about its own bugs)."""


class SavedModelError(HotstartError, ValueError):
    """A saved model (``weights.safetensors`` + ``task.json``) is damaged, does not match itself,
    or cannot be saved (e.g. its weights are not finite). The message names the file."""


class UnknownKindError(HotstartError, ValueError):
    """A JSON description names a kind (block, encoding, task) that is unknown or ambiguous."""


class UsageError(HotstartError, ValueError):
    """An argument or a path that hotstart cannot work with; the message says which and why."""


class UsageTypeError(UsageError, TypeError):
    """An argument of a type hotstart does not take (``blocks=`` that are not blocks, ``data=`` that
    is not a dataset). A `TypeError` too, as it was before it existed: ``except TypeError`` keeps working."""


class SampleError(HotstartError, ValueError):
    """A sample could not be encoded; the message names the sample, the cause is chained."""
