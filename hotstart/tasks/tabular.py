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

from typing import Any, Sequence

from ..blocks import Block, Continuous, Label
from ..blocks.table import TableRow, as_row
from ..encodings import Context, OneHot
from ..encodings.tabular import TabularPreprocessing
from ..errors import UsageError
from .classification import SingleLabelOutputs
from .config import build
from .regression import RegressionOutputs
from .training_statistics import TrainingStatisticsTask


class _TabularTask(TrainingStatisticsTask):
    target_kind: type = Label
    describe_mocks, sample_name, sample_noun = 32, "row", "rows"
    model_kind = "TabularModel"  # embeddings + MLP (hotstart/models/tabular.py), whatever the backbone

    def __init__(self, blocks: Sequence[Block], preprocessing: TabularPreprocessing | None = None):
        blocks = self.check_blocks(blocks, TableRow, "TableRow(categorical=..., continuous=...)")
        name = type(self).__name__
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
        self.check_training_inputs(rows)
        fit_targets = [targets[i] for i in range(len(targets))] if self.target_kind is Continuous else None
        return self.with_config(preprocessing=self.preprocessing.fit(rows, fit_targets).to_dict())

    # --- encoding --------------------------------------------------------------------------
    def encode_input(self, x: Any, context: Context | str = Context.INFERENCE, rng=None):
        """A dict, a pandas Series or a one-row DataFrame -> the encoded row."""
        return super().encode_input(as_row(x), context, rng)

    # --- JSON --------------------------------------------------------------------------------
    def get_config(self) -> dict:
        """The preprocessing, with its statistics once set up (the encodings follow from it)."""
        return {"preprocessing": self.preprocessing.to_dict()}

    @classmethod
    def from_config(cls, blocks, config):
        from ..encodings import Encoding

        config = dict(config)
        return build(cls, [blocks, Encoding.from_dict(config.pop("preprocessing"))], config)


class TabularClassificationSingle(SingleLabelOutputs, _TabularTask):
    """``(TableRow(...), Label(classes))``: cross-entropy loss, accuracy, softmax probabilities."""

    target_kind = Label

    def __init__(self, blocks: Sequence[Block], preprocessing: TabularPreprocessing | None = None):
        super().__init__(blocks, preprocessing)
        self.target_block.check_trainable(type(self).__name__)  # one class: refused now, as for images

    @property
    def classes(self) -> list:
        return list(self.target_block.classes)


class TabularRegression(RegressionOutputs, _TabularTask):
    """``(TableRow(...), Continuous(n))``: MSE on normalized targets; `rmse` (in the target's units) and `r2`.

    With several targets (n > 1): ``rmse_0`` ... ``rmse_<n-1>``, one per output in its own units,
    and `r2` averaged uniformly over the outputs (regression.py).
    """

    target_kind = Continuous

    def target_statistics(self):
        prep = self.preprocessing
        return None if prep.target_mean is None else (prep.target_mean, prep.target_std)
