"""What hotstart's defaults chose for a fit, and why: the fit's first line.

A default that changes how a fit runs (its precision, the batches' memory layout, compiling, how
images are read) says so before the first epoch, with the reason and the argument that changes
it, e.g.::

    precision bf16-mixed (the CPU has AVX-512 BF16; precision='32-true' for fp32) | compile eager (...)

The `Progress` callback writes the line (so ``progress=False`` is quiet) before a fit's first
epoch table, and only when it differs from the line of the learner's previous fit: a notebook
that fits one learner five times reads it once, and again only if a choice changed (a longer fit
that now compiles).
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Choice:
    """One choice: `value` ("bf16-mixed", "eager", ...) and `why` (the reason, and how to change it)."""

    value: str
    why: str


def choices_line(choices: dict[str, Choice]) -> str:
    """``name value (why) | ...`` for the choices in order; "" when there are none."""
    return " | ".join(f"{name} {c.value} ({c.why})" for name, c in choices.items())
