"""Precision names: Lightning Fabric's, one spelling each.

Fabric takes ``32``, ``"32"`` and ``"32-true"`` for the same thing (and ``"bf16"`` for
``"bf16-mixed"``, ...). hotstart compares precisions (which backend runs one, which compile-cache
entry serves one, what a fit's first line says), so every name is turned into the one Fabric
resolves it to before it is compared. A module of its own because the learner and the compile
cache both need it, and the compile cache imports nothing of the learner.
"""
from __future__ import annotations

FP32 = "32-true"
BF16_MIXED = "bf16-mixed"

ALIASES = {"32": FP32, "16": "16-mixed", "bf16": BF16_MIXED, "64": "64-true"}
"""Fabric's short names -> the names it resolves them to."""


def canonical_precision(precision) -> str:
    """`precision` (a Fabric name, an int such as 32, or ``"auto"``) in its one spelling."""
    name = str(precision)
    return ALIASES.get(name, name)
