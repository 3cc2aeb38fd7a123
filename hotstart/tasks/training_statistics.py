"""`TrainingStatisticsTask`: a task whose encodings learn statistics from the training split.

Tables (tabular.py) and series (timeseries.py) normalize with means, standard deviations,
vocabularies or lengths that must come from the training rows alone: a new task has none
(``needs_setup``), and ``setup(train)`` returns it with them. What follows from that alone,
whatever the input, lives here: the checks of the blocks and of the training inputs, a linear
head to the outputs (the backbone gives features), a description of a task not set up yet (as
if set up on a few mock samples), and a `repr` that says whether it is set up. Each task says how its statistics are learned (`setup`).
"""
from __future__ import annotations

import io

import numpy as np

from ..blocks import Label
from ..errors import UsageError, UsageTypeError
from .base import SupervisedTask


class TrainingStatisticsTask(SupervisedTask):
    describe_mocks: int = 16  # mock samples a task not set up yet is described as set up on
    sample_name, sample_noun = "sample", "samples"  # what one input and several are called in messages

    def check_blocks(self, blocks, input_kind: type, input_hint: str) -> tuple:
        """`blocks` as a tuple (input, target), refused unless the input is an `input_kind` and the
        target exactly this task's `target_kind` (`input_hint` shows the expected input)."""
        blocks = tuple(blocks)
        if len(blocks) != 2 or not isinstance(blocks[0], input_kind) or type(blocks[1]) is not self.target_kind:
            target = "Label(classes)" if self.target_kind is Label else "Continuous(n)"
            raise UsageTypeError(f"{type(self).__name__} needs blocks=({input_hint}, {target}), got {blocks!r}")
        return blocks

    def check_training_inputs(self, inputs) -> None:
        """Every training input valid for the input block, before statistics are learned from them;
        a bad one is named by its index in the user's data (a `Subset`'s own index)."""
        if len(inputs) == 0:
            raise UsageError(f"{type(self).__name__}.setup: the training split has no {self.sample_noun}")
        block, name = self.input_block, self.sample_name
        original = getattr(inputs, "indices", None)
        for i in range(len(inputs)):
            block.validate(inputs[i], where=f"{name} {original[i]}" if original is not None else f"training {name} {i}")

    def head(self, num_features: int):
        import torch.nn as nn

        return nn.Linear(num_features, self._n_outputs())

    def _n_outputs(self) -> int:
        """One output per class of a `Label` target, one per number of a `Continuous(n)` one."""
        block = self.target_block
        return len(block.classes) if isinstance(block, Label) else block.n

    def describe(self, *, file=None) -> str:
        """As for every task; a task not set up yet is described as set up on `describe_mocks` mock samples."""
        if not self.needs_setup:
            return super().describe(file=file)
        rng = np.random.default_rng(0)
        mocks = [self.mock_sample(rng) for _ in range(self.describe_mocks)]
        shown = self.setup(([m[0] for m in mocks], [m[1] for m in mocks]))
        text = shown.describe(file=io.StringIO())
        note = (f"  (not set up yet: statistics above come from {self.describe_mocks} mock {self.sample_noun}; "
                f"tasklearner sets up on the training split)\n")
        print(text + note, end="", file=file)
        return text + note

    def __repr__(self):
        state = "not set up" if self.needs_setup else "set up"
        return f"{type(self).__name__}({self.input_block!r} -> {self.target_block!r}, {state})"
