"""One static activation arena: every int8 tensor gets an offset, tensors alive at once never overlap.

A tensor lives from the op that writes it to the last op that reads it (a view keeps its base
alive). An op's input and output are alive together, so no kernel ever writes over what it
reads. Placement is TensorFlow Lite Micro's greedy planner: largest tensor first, each at the
lowest offset that overlaps no tensor already placed whose lifetime meets its own. It is not
optimal in general, but for a chain of layers it reaches the peak of two neighbouring tensors.
"""
from __future__ import annotations

import dataclasses

from .ops import Program, Tensor

ALIGN = 4  # word-aligned offsets: no kernel needs them, but a user's DMA or SIMD code might


@dataclasses.dataclass
class Plan:
    offsets: dict  # id(root tensor) -> byte offset in the arena
    size: int  # arena bytes
    peak_step: int  # the op at which the most bytes are alive
    peak_tensors: list  # the tensors alive then

    def offset(self, t: Tensor) -> int:
        return self.offsets[id(t.root)]


def _aligned(n: int) -> int:
    return (n + ALIGN - 1) // ALIGN * ALIGN


def lifetimes(program: Program) -> dict:
    """id(root) -> (root, first step, last step)."""
    life: dict = {}
    for step, op in enumerate(program.ops):
        for t in [op.output, *op.inputs]:
            r = t.root
            first, last = life.get(id(r), (r, step, step))[1:]
            life[id(r)] = (r, min(first, step), max(last, step))
    r = program.output.root
    life[id(r)] = (r, life[id(r)][1], len(program.ops))  # read by the final copy into `logits`
    return life


def plan(program: Program) -> Plan:
    life = lifetimes(program)
    order = sorted(life.values(), key=lambda v: (-v[0].numel, v[1]))
    placed: list = []  # (offset, size, first, last)
    offsets = {}
    for t, first, last in order:
        size = _aligned(t.numel)
        clashes = sorted((o, s) for o, s, f, l in placed if f <= last and first <= l)
        offset = 0
        for o, s in clashes:
            if offset + size <= o:
                break
            offset = max(offset, o + s)
        placed.append((offset, size, first, last))
        offsets[id(t)] = offset
    total = max((o + s for o, s, _, _ in placed), default=0)
    alive = [[t for t, f, l in life.values() if f <= step <= l] for step in range(len(program.ops))]
    peak = max(range(len(alive)), key=lambda i: sum(t.numel for t in alive[i]))
    return Plan(offsets, total, peak, alive[peak])
