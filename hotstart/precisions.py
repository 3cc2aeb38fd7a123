"""Precision names: Lightning Fabric's, one spelling each.

Fabric takes ``32``, ``"32"`` and ``"32-true"`` for the same thing (and ``"bf16"`` for
``"bf16-mixed"``, ...). hotstart compares precisions (which backend runs one, which compile-cache
entry serves one, what a fit's first line says), so every name is turned into the one Fabric
resolves it to before it is compared. A module of its own because the learner and the compile
cache both need it, and the compile cache imports nothing of the learner.
"""
from __future__ import annotations

from .errors import UsageError

FP32 = "32-true"
BF16_MIXED = "bf16-mixed"

ALIASES = {"32": FP32, "16": "16-mixed", "bf16": BF16_MIXED, "64": "64-true"}
"""Fabric's short names -> the names it resolves them to."""


def canonical_precision(precision) -> str:
    """`precision` (a Fabric name, an int such as 32, or ``"auto"``) in its one spelling."""
    name = str(precision)
    return ALIASES.get(name, name)


PRECISIONS = ("auto", "64-true", FP32, "16-true", "bf16-true", "16-mixed", BF16_MIXED, "transformer-engine",
              "transformer-engine-float16")
"""What ``precision=`` takes (after `canonical_precision`): Fabric's names, and hotstart's "auto"."""

LIKELY_MEANT = {"fp32": FP32, "float32": FP32, "float": FP32, "fp16": "16-mixed", "float16": "16-mixed",
                "half": "16-mixed", "bfloat16": BF16_MIXED, "fp64": "64-true", "float64": "64-true",
                "double": "64-true", "mixed": BF16_MIXED}
"""Other libraries' names for a precision -> Fabric's, for the error's hint."""


def check_precision(precision, argument: str = "precision") -> str:
    """`precision` in its one spelling, or a `UsageError` naming `argument` with Fabric's names
    (and the likely one, for ``"fp32"`` and its kind), rather than Fabric's own message."""
    name = canonical_precision(precision)
    if name in PRECISIONS:
        return name
    hint = LIKELY_MEANT.get(str(precision).lower())
    raise UsageError(f"{argument} must be one of {', '.join(repr(p) for p in PRECISIONS)}, got {precision!r}"
                     + (f"; for {precision!r} say {hint!r}" if hint else ""))
