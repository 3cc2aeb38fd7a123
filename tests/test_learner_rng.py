"""Reproducibility: the same seed gives the same run bit for bit; the caller's RNGs are never touched."""
import random

import numpy as np
import pytest
import torch
from conftest import state_equal

import hotstart


def _history(learner):
    return [{k: v for k, v in row.items() if k != "time"} for row in learner.history]


def test_same_seed_same_run_bit_for_bit(make_learner):
    runs = []
    for _ in range(2):
        learner = make_learner(seed=7)
        learner.fit_one_cycle(2, 3e-3)
        runs.append(learner)
    a, b = runs
    assert state_equal(a.model.state_dict(), b.model.state_dict())
    assert _history(a) == _history(b)
    assert a.recorder.losses == b.recorder.losses

    c = make_learner(seed=8)
    c.fit_one_cycle(2, 3e-3)
    sa, sc = a.model.state_dict(), c.model.state_dict()
    assert not any(torch.equal(sa[k], sc[k]) for k in sa if sa[k].is_floating_point())


def test_same_seed_same_initial_weights_and_batches(make_learner):
    a, b = make_learner(seed=3), make_learner(seed=3)
    assert state_equal(a.model.state_dict(), b.model.state_dict())
    xa, ya = next(iter(a.train_loader))
    xb, yb = next(iter(b.train_loader))
    assert torch.equal(xa, xb) and torch.equal(ya, yb)


def test_global_rngs_untouched(make_learner, digits_small):
    data, _ = digits_small
    torch.manual_seed(123)
    np.random.seed(123)
    random.seed(123)
    before = torch.get_rng_state(), np.random.get_state(), random.getstate()

    learner = make_learner(seed=None)  # a fresh seed comes from OS entropy, not a global RNG
    learner.fit_one_cycle(1)
    learner.lr_find(num_it=8)
    learner.predict(data[0][0])
    learner.validate()
    learner.get_preds()

    after = torch.get_rng_state(), np.random.get_state(), random.getstate()
    assert torch.equal(before[0], after[0])
    assert before[1][0] == after[1][0] and np.array_equal(before[1][1], after[1][1]) and before[1][2:] == after[1][2:]
    assert before[2] == after[2]


def test_seed_none_gives_different_seeds(make_learner):
    assert make_learner(seed=None).seed != make_learner(seed=None).seed


def _penguins_learner():
    from hotstart import TabularClassificationSingle, datasets, tasklearner

    data, blocks = datasets.load("penguins", target="species")
    return tasklearner(TabularClassificationSingle(blocks), data, seed=0, progress=False)


def _global_states():
    return torch.get_rng_state().clone(), np.random.get_state(), random.getstate()


@pytest.mark.parametrize("kind", ["image", "table"])
def test_load_learner_leaves_global_rngs_untouched(kind, make_learner, tmp_path):
    """load_learner rebuilds the model before the saved weights replace its initial ones, and the
    initializers (torch's, timm's) draw from the global RNG: with seed= or without, the caller's
    RNGs come out as they went in, and the loaded learner predicts as the saved one."""
    learner = make_learner() if kind == "image" else _penguins_learner()
    folder = learner.save(tmp_path / "model")
    sample = learner.train_loader.dataset.inputs[0]
    for seed in (0, None):
        torch.manual_seed(123)
        np.random.seed(123)
        random.seed(123)
        before = _global_states()
        loaded = hotstart.load_learner(folder, seed=seed)
        after = _global_states()
        assert torch.equal(before[0], after[0])
        assert before[1][0] == after[1][0] and np.array_equal(before[1][1], after[1][1]) and before[1][2:] == after[1][2:]
        assert before[2] == after[2]
        assert loaded.seed == 0 if seed == 0 else isinstance(loaded.seed, int)
        assert torch.equal(loaded.predict(sample)[1], learner.predict(sample)[1])
