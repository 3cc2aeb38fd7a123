"""Checks of the numbers users pass (epochs, rates, batch sizes, seeds, sizes): one rule, one message.

Why a module of its own: Python quietly turns many wrong values into right-looking ones (the string
``"16"`` iterates into ``(1, 6)``, ``int(1.5)`` is 1, ``int("2")`` is 2) or lets them fail far from
where they were given (``fit_one_cycle(1, "3e-3")`` raised "'<=' not supported between instances
of 'float' and 'str'" from torch/optim/adam.py). Checked where the argument arrives, the error
names the argument and the value. Wrong types raise `UsageTypeError` (a TypeError), values out of
range `UsageError` (a ValueError). numpy's integers and floats, and 0-d arrays and tensors, are
taken; bools are not numbers here. Learning rates (a number, one per layer group, or a slice) are
checked beside the code that reads them (learner/optim.py's `check_lr`).

This module imports only the standard library and hotstart.errors: every layer may use it.
"""
from __future__ import annotations

import math
import numbers

from .errors import UsageError, UsageTypeError

__all__ = ["scalar", "is_int", "is_number", "check_int", "check_number", "check_size"]


def scalar(value):
    """A 0-d numpy array or torch tensor as the Python number it holds (torch's optimizers take a
    tensor rate, and numpy reductions return 0-d arrays); anything else as it is."""
    if getattr(value, "ndim", None) == 0 and callable(getattr(value, "item", None)):
        return value.item()
    return value


def is_int(value) -> bool:
    """An integer (Python's or numpy's, or a 0-d array or tensor holding one), not a bool."""
    value = scalar(value)
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def is_number(value) -> bool:
    """A real number (Python's or numpy's, or a 0-d array or tensor holding one), not a bool."""
    value = scalar(value)
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def check_int(name: str, value, *, minimum: int | None = None) -> int:
    """`value` as an int, refused (naming `name`) unless it is an integer of at least `minimum`."""
    if not is_int(value):
        raise UsageTypeError(f"{name} must be an integer, got {value!r} ({type(value).__name__})")
    if minimum is not None and scalar(value) < minimum:
        raise UsageError(f"{name} must be at least {minimum}, got {value!r}")
    return int(scalar(value))


def check_number(name: str, value, *, minimum: float | None = None, maximum: float | None = None) -> float:
    """`value` as a float, refused (naming `name`) unless it is a finite number within
    [`minimum`, `maximum`] (each bound included; None: no bound)."""
    if not is_number(value):
        raise UsageTypeError(f"{name} must be a number, got {value!r} ({type(value).__name__})")
    value = float(scalar(value))
    low = -math.inf if minimum is None else minimum
    high = math.inf if maximum is None else maximum
    if not (math.isfinite(value) and low <= value <= high):
        if minimum is not None and maximum is not None:
            where = f"between {minimum:g} and {maximum:g}"
        elif minimum is not None:
            where = f"at least {minimum:g}"
        elif maximum is not None:
            where = f"at most {maximum:g}"
        else:
            where = "finite"
        raise UsageError(f"{name} must be {where}, got {value!r}")
    return value


def check_size(name: str, value) -> tuple[int, int]:
    """An image size as ``(height, width)`` from an int (a square) or a pair of positive ints;
    anything else (the string ``"16"``, a float, a bool, three numbers) refused naming `name`."""
    size = (value, value) if is_int(value) else value
    if isinstance(size, (str, bytes)) or not hasattr(size, "__iter__"):
        raise UsageTypeError(f"{name} must be an int or (height, width) ints, got {value!r}")
    size = tuple(size)  # read once: an iterator is not read twice
    if not all(is_int(s) for s in size):
        raise UsageTypeError(f"{name} must be an int or (height, width) ints, got {value!r}")
    size = tuple(int(scalar(s)) for s in size)
    if len(size) != 2 or min(size) < 1:
        raise UsageError(f"{name} must be (height, width) with positive values, got {value!r}")
    return size
