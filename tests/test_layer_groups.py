"""Layer groups (hotstart/models/layer_groups.py): every parameter is in a group, so the optimizer
and freeze/unfreeze reach it; a grouping that leaves one out is refused by name."""
import pytest
import torch.nn as nn

from hotstart.errors import UsageError
from hotstart.models.layer_groups import body_stages, layer_groups, uncovered_parameters


class _Body(nn.Module):
    """A backbone for 8x8 one-channel images whose `stage_groups()` leaves out `l2`."""

    num_features = 16

    def __init__(self, forget: bool):
        super().__init__()
        self.forget = forget
        self.l1 = nn.Sequential(nn.Flatten(), nn.Linear(64, 16))
        self.l2 = nn.Linear(16, 16)

    def forward(self, x):
        return self.l2(self.l1(x).relu())

    def stage_groups(self):
        return [self.l1] if self.forget else [self.l1, self.l2]


def test_uncovered_parameters_names_what_no_group_holds():
    body = _Body(forget=True)
    assert uncovered_parameters(body, [body.l1]) == ["l2.weight", "l2.bias"]
    assert uncovered_parameters(body, [body.l1, body.l2]) == []


def test_stage_groups_that_leave_out_parameters_are_refused(make_learner):
    learner = make_learner(backbone=_Body(forget=True))
    for act in (lambda: learner.fit_one_cycle(1, slice(1e-3, 1e-2)), learner.freeze):
        with pytest.raises(UsageError, match=r"_Body.*stage_groups\(\).*l2\.weight, l2\.bias"):
            act()


def test_complete_stage_groups_are_kept(make_learner):
    body = _Body(forget=False)
    learner = make_learner(backbone=body)
    assert [len(list(g.parameters())) for g in body_stages(body)] == [2, 2]
    learner.fit_one_cycle(1, slice(1e-3, 1e-2))
    assert len(learner.opt.param_groups) == 3  # l1, l2, head


def test_a_backbone_and_head_model_with_parameters_elsewhere_is_refused():
    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.backbone, self.neck, self.head = nn.Linear(4, 4), nn.Linear(4, 4), nn.Linear(4, 2)

    with pytest.raises(UsageError, match="neck.weight, neck.bias"):
        layer_groups(Model())
