"""What a regression task's outputs mean, whatever its input (table rows in tabular.py, series in
timeseries.py): `n` numbers per sample, fitted as normalized targets with MSE, reported and
predicted in the targets' own units.

One mixin, as `SingleLabelOutputs` (classification.py) is for classifiers, so that the tasks
that differ only in their input share their outputs' meaning instead of copying it.
"""
from __future__ import annotations

from ..errors import UsageError


class RegressionOutputs:
    """``Continuous(n)`` targets: one output per target, MSE on the normalized targets, `rmse` in
    the targets' units (``rmse_0`` ... ``rmse_<n-1>`` for n > 1: their units differ) and `r2`
    (averaged uniformly over the outputs), outputs decoded to the targets' units.

    A mixin: put it first among the bases, before the task, which provides `target_block` and
    `target_statistics()` (where its encodings keep the targets' mean and standard deviation)."""

    def target_statistics(self):
        """(mean, std) per target, learned on the training split; None until the task is set up."""
        raise NotImplementedError

    def output_shape(self) -> tuple[int, ...]:
        """What the model outputs per sample: one number per target (for checks and export)."""
        return (self.target_block.n,)

    def loss_fn(self):
        import torch.nn as nn

        return nn.MSELoss()

    def metrics(self) -> dict:
        from ..metrics import Denormalized, MeanSquaredError, R2Score

        stats = self.target_statistics()
        if stats is None:
            raise UsageError(f"{type(self).__name__}.metrics: the task is not set up (no target statistics)")
        mean, std = stats
        n = self.target_block.n
        if n == 1:
            return {"rmse": Denormalized(MeanSquaredError(squared=False), mean, std), "r2": R2Score()}
        rmses = {f"rmse_{i}": Denormalized(MeanSquaredError(squared=False), mean, std, output=i) for i in range(n)}
        return {**rmses, "r2": R2Score(num_outputs=n)}

    def decode_output(self, output):
        """Outputs of one sample -> (values in the targets' units as numpy float32 (n,), the same as a tensor)."""
        import torch

        values = self.decode_target(output.detach().float().cpu())
        return values, torch.from_numpy(values)
