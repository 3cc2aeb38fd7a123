"""Where a NaN began (learner/nonfinite_origin.py): the guard's error and the history name the
first module whose output (forward order) or gradient (backward order) became non-finite, with
the epoch, the batch and the samples."""
import math

import pytest
import torch
from torch import nn


class BlowsUpOnLargeInputs(nn.Module):
    """The third layer of a small model: exp() of a large activation is inf."""

    def forward(self, x):
        return torch.exp(x)


def _model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Flatten(), nn.Linear(64, 16), BlowsUpOnLargeInputs(), nn.Linear(16, 10))


class Crafted(torch.utils.data.Dataset):
    """40 8x8 inputs; in the second batch of 8 (batch index 1), samples 2 and 5 are huge."""

    def __len__(self):
        return 40

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(i)
        x = torch.rand(1, 8, 8, generator=g) * 0.1
        if i in (10, 13):
            x = x + 1e4
        return x, i % 10


def test_the_error_and_the_history_name_the_third_layer_the_batch_and_the_samples():
    from hotstart.learner.callbacks.nan_guard import NonFiniteLossError
    from hotstart.learner.loop import Learner

    loader = torch.utils.data.DataLoader(Crafted(), batch_size=8, shuffle=False)
    learner = Learner(_model(), loader, None, nn.CrossEntropyLoss(), seed=0, progress=False)
    with pytest.raises(NonFiniteLossError) as err:
        learner.fit(1, 1e-3)
    msg = str(err.value)
    assert "forward output of 2 (BlowsUpOnLargeInputs) became inf first, at epoch 0, batch 1, samples [2, 5]" in msg
    origin = learner.nonfinite_origin
    assert (origin.module, origin.batch, origin.samples, origin.epoch) == ("2", 1, [2, 5], 0)
    row = learner.history[-1]
    assert row["stopped"] == "non-finite" and row["nonfinite_origin"]["module"] == "2"
    assert math.isnan(row["train_loss"])


def test_a_gradient_that_becomes_non_finite_is_found_in_backward_order():
    from hotstart.learner.nonfinite_origin import locate_nonfinite

    class SqrtAtZero(nn.Module):  # finite forward (sqrt(0) = 0), infinite gradient at 0
        def forward(self, x):
            return torch.sqrt(x)

    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 4), SqrtAtZero(), nn.Linear(4, 2))
    with torch.no_grad():
        model[0].weight.zero_()
        model[0].bias.zero_()
    grads_before = [p.grad for p in model.parameters()]
    origin = locate_nonfinite(model, torch.ones(3, 4), torch.tensor([0, 1, 0]), nn.CrossEntropyLoss(),
                              epoch=2, batch=7)
    assert origin.where == "gradient of the output" and origin.module == "0" and origin.samples == [0, 1, 2]
    assert [p.grad for p in model.parameters()] == grads_before  # nothing written to .grad


def test_detect_anomaly_checks_every_batch_and_stops_at_the_first_non_finite_output():
    from hotstart.learner.callbacks.nan_guard import NonFiniteLossError
    from hotstart.learner.loop import Learner

    loader = torch.utils.data.DataLoader(Crafted(), batch_size=8, shuffle=False)
    learner = Learner(_model(), loader, None, nn.CrossEntropyLoss(), seed=0, progress=False)
    with pytest.raises(NonFiniteLossError, match=r"forward output of 2 \(BlowsUpOnLargeInputs\).*batch 1, samples \[2, 5\]"):
        learner.fit(1, 1e-3, detect_anomaly=True)


@pytest.mark.parametrize("huge", [True, False], ids=["a NaN is found", "nothing is found"])
def test_the_locator_leaves_the_buffers_the_mode_and_the_rng_as_they_were(huge):
    """Re-running a batch to find where a NaN began must not change the model it diagnoses: the
    BatchNorm statistics it updated in training mode are put back, bit for bit (and with them the
    batch counter), the mode stays, and dropout's draws do not move the caller's RNG."""
    from hotstart.learner.nonfinite_origin import locate_nonfinite

    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), BlowsUpOnLargeInputs(), nn.BatchNorm1d(8), nn.Dropout(0.5), nn.Linear(8, 2))
    model.train()
    model(torch.randn(6, 4))  # running statistics that are not the initial ones
    before = {k: v.clone() for k, v in model.state_dict().items()}
    xb = torch.randn(5, 4) * (1e4 if huge else 1.0)
    rng = torch.get_rng_state()
    origin = locate_nonfinite(model, xb, torch.tensor([0, 1, 0, 1, 0]), nn.CrossEntropyLoss(), epoch=0, batch=3)
    assert (origin is not None) == huge
    after = model.state_dict()
    assert int(after["2.num_batches_tracked"]) == 1
    for key, value in before.items():
        assert torch.equal(after[key], value), key
    assert model.training and torch.equal(torch.get_rng_state(), rng)
