"""Table tasks: a class per row (`TabularClassificationSingle`) or numbers per row (`TabularRegression`).

    data, blocks = datasets.load("penguins", target="species")     # (TableRow(...), Label([...]))
    task = TabularClassificationSingle(blocks)
    learner = tasklearner(task, data, layers=(200, 100))           # sets the task up on the training split
    learner.predict({"island": "Biscoe", "bill_length_mm": 47.0, ...})

A table task's encoding, `TabularPreprocessing`, has statistics (vocabularies, medians, means,
standard deviations) that must come from the training rows alone. So a new task has none
(``task.needs_setup``); ``task.setup(train)`` returns the same task with statistics learned from
`train`, and ``tasklearner`` calls it on the training split after splitting. The statistics are
part of ``to_dict()``, hence of a saved model's ``task.json``.

The model (see models/tabular.py) is fastai's ``TabularModel``: embeddings and an MLP as
the backbone, and this task's `head`, a linear layer to the outputs.
"""
from __future__ import annotations

import io
from typing import Any, Sequence

import numpy as np

from ..blocks import Block, Continuous, Label
from ..blocks.table import TableRow, as_row
from ..encodings import Context, OneHot
from ..encodings.tabular import TabularPreprocessing
from ..errors import UsageError, UsageTypeError
from .base import SupervisedTask
from .classification import SingleLabelOutputs


class _TabularTask(SupervisedTask):
    target_kind: type = Label
    model_kind = "TabularModel"  # embeddings + MLP (hotstart/models/tabular.py), whatever the backbone

    def __init__(self, blocks: Sequence[Block], preprocessing: TabularPreprocessing | None = None):
        blocks = tuple(blocks)
        name = type(self).__name__
        if len(blocks) != 2 or not isinstance(blocks[0], TableRow) or type(blocks[1]) is not self.target_kind:
            target = "Label(classes)" if self.target_kind is Label else "Continuous(n)"
            raise UsageTypeError(f"{name} needs blocks=(TableRow(categorical=..., continuous=...), {target}), got {blocks!r}")
        row = blocks[0]
        prep = preprocessing or TabularPreprocessing(row.categorical, row.continuous)
        if (prep.categorical, prep.continuous) != (row.categorical, row.continuous):
            raise UsageError(f"{name}: the preprocessing's columns {prep.categorical} / {prep.continuous} differ from "
                             f"the row's {row.categorical} / {row.continuous}")
        super().__init__(blocks, [prep] + ([OneHot()] if self.target_kind is Label else []))

    @property
    def preprocessing(self) -> TabularPreprocessing:
        return self.encodings[0]

    @property
    def needs_setup(self) -> bool:
        """True until the statistics are learned (`setup`); ``tasklearner`` checks this."""
        return not self.preprocessing.fitted

    def setup(self, data) -> "_TabularTask":
        """The same task with statistics learned from `data` = ``(rows, targets)``: the training split only."""
        rows, targets = data[0], data[1]
        if len(rows) == 0:
            raise UsageError(f"{type(self).__name__}.setup: the training split has no rows")
        row_block = self.input_block
        original = getattr(rows, "indices", None)  # a Subset of the user's rows: name their own index
        for i in range(len(rows)):
            row_block.validate(rows[i], where=f"row {original[i]}" if original is not None else f"training row {i}")
        fit_targets = [targets[i] for i in range(len(targets))] if self.target_kind is Continuous else None
        return type(self)(self.blocks, self.preprocessing.fit(rows, fit_targets))

    # --- encoding --------------------------------------------------------------------------
    def encode_input(self, x: Any, context: Context | str = Context.INFERENCE, rng=None):
        """A dict, a pandas Series or a one-row DataFrame -> the encoded row."""
        return super().encode_input(as_row(x), context, rng)

    def head(self, num_features: int):
        import torch.nn as nn

        return nn.Linear(num_features, self._n_outputs())

    def _n_outputs(self) -> int:
        raise NotImplementedError

    # --- JSON --------------------------------------------------------------------------------
    def to_dict(self) -> dict:
        return {"kind": type(self).__name__, "blocks": [b.to_dict() for b in self.blocks],
                "preprocessing": self.preprocessing.to_dict()}

    @classmethod
    def _from_params(cls, d):
        from ..encodings import Encoding

        return cls([Block.from_dict(b) for b in d["blocks"]], Encoding.from_dict(d["preprocessing"]))

    def describe(self, *, file=None) -> str:
        """As for every task; a task not set up yet is described as set up on 32 mock rows."""
        if not self.needs_setup:
            return super().describe(file=file)
        rng = np.random.default_rng(0)
        mocks = [self.mock_sample(rng) for _ in range(32)]
        shown = self.setup(([m[0] for m in mocks], [m[1] for m in mocks]))
        text = shown.describe(file=io.StringIO())
        note = "  (not set up yet: statistics above come from 32 mock rows; tasklearner sets up on the training split)\n"
        print(text + note, end="", file=file)
        return text + note

    def __repr__(self):
        row = self.input_block
        state = "not set up" if self.needs_setup else "set up"
        return f"{type(self).__name__}({row!r} -> {self.target_block!r}, {state})"


class TabularClassificationSingle(SingleLabelOutputs, _TabularTask):
    """``(TableRow(...), Label(classes))``: cross-entropy loss, accuracy, softmax probabilities."""

    target_kind = Label

    def __init__(self, blocks: Sequence[Block], preprocessing: TabularPreprocessing | None = None):
        super().__init__(blocks, preprocessing)
        self.target_block.check_trainable(type(self).__name__)  # one class: refused now, as for images

    @property
    def classes(self) -> list:
        return list(self.target_block.classes)

    def _n_outputs(self):
        return len(self.classes)


class TabularRegression(_TabularTask):
    """``(TableRow(...), Continuous(n))``: MSE on normalized targets; `rmse` (in the target's units) and `r2`.

    With several targets (n > 1): ``rmse_0`` ... ``rmse_<n-1>``, one per output in its own units,
    and `r2` averaged uniformly over the outputs.
    """

    target_kind = Continuous

    def _n_outputs(self):
        return self.target_block.n

    def output_shape(self) -> tuple[int, ...]:
        """What the model outputs per row: one number per target (for checks and export)."""
        return (self.target_block.n,)

    def loss_fn(self):
        import torch.nn as nn

        return nn.MSELoss()

    def metrics(self) -> dict:
        from ..metrics import Denormalized, MeanSquaredError, R2Score

        prep = self.preprocessing
        if prep.target_mean is None:
            raise UsageError("TabularRegression.metrics: the task is not set up (no target statistics)")
        mean, std, n = prep.target_mean, prep.target_std, self.target_block.n
        if n == 1:
            return {"rmse": Denormalized(MeanSquaredError(squared=False), mean, std), "r2": R2Score()}
        # several targets: an RMSE per output (their units differ) and R² averaged over outputs
        rmses = {f"rmse_{i}": Denormalized(MeanSquaredError(squared=False), mean, std, output=i) for i in range(n)}
        return {**rmses, "r2": R2Score()}

    def decode_output(self, output):
        """Outputs of one row -> (values in the target's units as numpy float32 (n,), the same as a tensor)."""
        import torch

        values = self.decode_target(output.detach().float().cpu())
        return values, torch.from_numpy(values)
