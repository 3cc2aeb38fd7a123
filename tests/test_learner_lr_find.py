"""lr_find leaves no trace (state, disk, later fits); plots return matplotlib objects."""
import math
import os

import matplotlib
import pytest
import torch
from conftest import snapshot, state_equal

from hotstart.learner import LRFindResult
from hotstart.learner.lr_find import valley


def test_lr_find_suggests_and_restores(make_learner, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    learner = make_learner()
    before = snapshot(learner.model)
    listing = sorted(os.listdir(tmp_path))

    result = learner.lr_find(start_lr=1e-6, end_lr=1.0, num_it=30)
    assert isinstance(result, LRFindResult)
    assert math.isfinite(result.suggestion) and 1e-6 <= result.suggestion <= 1.0
    assert 3 <= len(result.lrs) <= 30 and len(result.lrs) == len(result.losses)
    assert result.lrs == sorted(result.lrs) and result.lrs[0] == pytest.approx(1e-6)
    assert all(math.isfinite(v) for v in result.losses)

    assert state_equal(learner.model.state_dict(), before)  # weights and BatchNorm stats restored
    assert all(p.grad is None for p in learner.model.parameters())
    assert sorted(os.listdir(tmp_path)) == listing  # nothing written to disk
    assert learner.history == [] and learner.recorder.losses == [] and learner.opt is None

    ax = result.plot()
    assert isinstance(ax, matplotlib.axes.Axes)
    assert ax.get_xscale() == "log"


def test_lr_find_says_its_suggestion_in_a_log_too(make_learner):
    """Written to a file (not a terminal: no bars), the sweep still ends with its result's line,
    and that line gives the suggestion the result holds."""
    import io

    from hotstart.learner.callbacks import Progress

    log = io.StringIO()
    learner = make_learner(progress=False, callbacks=[Progress(file=log)])
    result = learner.lr_find(start_lr=1e-6, end_lr=1.0, num_it=12)
    line = log.getvalue().splitlines()[-1]
    assert line == str(result) and line.startswith(f"lr_find: suggestion {result.suggestion:.1e} ")
    assert f"from {len(result.lrs)} steps at 1e-06" in line and "\r" not in log.getvalue()
    assert str(LRFindResult()) == "lr_find: no step recorded, no suggestion"


def test_lr_find_does_not_change_the_next_fit(make_learner):
    plain = make_learner()
    plain.fit(1, 3e-3)
    probed = make_learner()
    probed.lr_find(num_it=10, plot=True)
    probed.fit(1, 3e-3)
    assert state_equal(plain.model.state_dict(), probed.model.state_dict())


def test_lr_find_after_a_fit_keeps_the_optimizer_and_the_fit_count(make_learner):
    learner = make_learner()
    learner.fit(1, 3e-3)
    opt, state = learner.opt, {k: v.clone() for k, v in learner.opt.state_dict()["state"][0].items()}
    groups = [dict(g, params=None) for g in learner.opt.param_groups]
    fit_state = learner.fit_state
    learner.lr_find(num_it=8)
    assert learner.opt is opt and [dict(g, params=None) for g in opt.param_groups] == groups
    assert all(torch.equal(v, state[k]) for k, v in opt.state_dict()["state"][0].items())
    assert learner.fit_state is fit_state and len(learner.history) == 1


@pytest.mark.parametrize("losses, expected", [
    ([5, 4, 3, 2, 1, 2, 3], 2),                   # one clean valley from 0 to 4: 2/3 of the way is index 2
    ([3, 1, 2.9, 2.8, 2.7, 2.6, 0.5, 4], 4),      # a subsequence, not a run: 3, 2.9, ..., 0.5 (0..6)
    ([1, 1, 5, 4, 3, 2, 6], 4),                   # the valley starts at 2 (5, 4, 3, 2): 2 + int(3 * 2/3)
    ([2, 2, 2, 2], 0),                            # nothing strictly decreases: the first rate
    ([9, 1], 0),                                  # under 3 points: the first rate
])
def test_valley_rule(losses, expected):
    """fastai's valley with hotstart's 2/3 rule: the longest strictly decreasing subsequence of
    the smoothed loss, and the rate 2/3 of the way from its start to its end."""
    lrs = [10.0 ** (i - 8) for i in range(len(losses))]
    assert valley(lrs, losses) == lrs[expected]


def test_valley():
    lrs = [10 ** (-6 + i / 4) for i in range(25)]
    losses = [3.0] * 5 + [3.0 - 0.2 * i for i in range(10)] + [1.2 + 0.5 * i for i in range(10)]
    s = valley(lrs, losses)
    assert lrs[5] < s < lrs[15]
    assert math.isnan(valley([], []))


def test_show_results_and_plot_loss(make_learner):
    from matplotlib.figure import Figure

    learner = make_learner()
    learner.fit(2)
    fig = learner.show_results(n=4)
    assert isinstance(fig, Figure)
    titled = [ax for ax in fig.axes if ax.get_title()]
    assert len(titled) == 4 and all(" / " in ax.get_title() for ax in titled)
    fig = learner.plot_loss()
    assert isinstance(fig, Figure)
    lines = fig.axes[0].get_lines()
    assert len(lines[0].get_ydata()) == len(learner.recorder.losses) == 10
    assert list(lines[1].get_ydata()) == [row["valid_loss"] for row in learner.history]
