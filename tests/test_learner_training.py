"""Training end to end: accuracy on digits, the FastAI.jl start-up workload, one-cycle, fine_tune, data forms."""
import math

import numpy as np
import pytest
import torch
from conftest import snapshot

from hotstart import Image, ImageClassificationSingle, Label, datasets, tasklearner
from hotstart.learner import Callback

HISTORY_KEYS = {"epoch", "train_loss", "valid_loss", "accuracy", "time"}


def test_digits_reach_90_percent(digits):
    data, blocks = digits
    task = ImageClassificationSingle(blocks, size=(16, 16), augment={"flip": 0.0})
    learner = tasklearner(task, data, seed=0, progress=False)
    learner.fit_one_cycle(2, 3e-3)

    metrics = learner.validate()
    assert set(metrics) == {"loss", "accuracy"}
    assert metrics["accuracy"] >= 0.9, metrics
    assert math.isfinite(metrics["loss"]) and metrics["loss"] < 0.5

    h = learner.history
    assert [row["epoch"] for row in h] == [0, 1]
    assert all(set(row) == HISTORY_KEYS for row in h)
    assert h[-1]["train_loss"] < h[0]["train_loss"]
    # validate() on the same data gives the last epoch's numbers
    assert metrics["accuracy"] == pytest.approx(h[-1]["accuracy"])
    assert metrics["loss"] == pytest.approx(h[-1]["valid_loss"])
    assert len(learner.train_loader.dataset) + len(learner.valid_loader.dataset) == len(data[0])


@pytest.mark.slow
def test_fastai_jl_startup_workload(random_rgb):
    """FastAI.jl's start-up benchmark, verbatim: 100 random 64x64 images, resnet18, default size 128."""
    images = random_rgb(100, size=(64, 64))
    labels = [str(i % 10) for i in range(100)]
    task = ImageClassificationSingle((Image(), Label(labels)))
    learner = tasklearner(task, (images, labels), backbone="resnet18", progress=False)
    learner.fit_one_cycle(2)
    assert len(learner.history) == 2
    for row in learner.history:
        assert math.isfinite(row["train_loss"]) and math.isfinite(row["valid_loss"])
    assert task.classes == sorted(set(labels))
    assert len(learner.recorder.losses) == 2 * learner.n_iter  # every batch trained on, at the default size
    assert learner.history[-1]["valid_loss"] == pytest.approx(learner.validate()["loss"], rel=1e-5)


def test_validate_before_any_fit(make_learner):
    out = make_learner().validate()
    assert set(out) == {"loss", "accuracy"} and math.isfinite(out["loss"])
    assert 0.0 <= out["accuracy"] <= 1.0


def test_fit_arguments_are_checked(make_learner):
    learner = make_learner()
    with pytest.raises(ValueError, match="n_epoch"):
        learner.fit(0)


class LRRecorder(Callback):
    order = 100

    def before_fit(self):
        self.lrs, self.moms = [], []

    def after_pred(self):
        if self.learner.training:
            groups = self.learner.opt.param_groups
            self.lrs.append([g["lr"] for g in groups])
            self.moms.append([g["betas"][0] for g in groups])


def test_one_cycle_schedule(make_learner):
    """The lr and beta1 at every optimizer step are torch's OneCycleLR's (cosine warm-up, its step indexing)."""
    from schedule_reference import one_cycle_lr_reference

    learner = make_learner(batch_size=16)  # 160 training digits -> 10 batches per epoch
    rec = LRRecorder()
    lr_max = 1e-2
    learner.fit_one_cycle(2, lr_max, pct_start=0.25, callbacks=[rec])  # given: the digits task's own is 0.1
    n = 20
    assert len(rec.lrs) == n
    lrs = [g[0] for g in rec.lrs]
    moms = [g[0] for g in rec.moms]
    assert all(len(set(g)) == 1 for g in rec.lrs)  # a float lr_max: the same rate for every group
    ref_lrs, ref_moms = one_cycle_lr_reference(n, lr_max, div=25.0, div_final=1e5, pct_start=0.25)
    assert lrs == pytest.approx(ref_lrs, rel=1e-9) and moms == pytest.approx(ref_moms, rel=1e-9)
    assert lrs[0] == pytest.approx(lr_max / 25)
    assert lrs[4] == pytest.approx(lr_max) and max(lrs) == lrs[4]  # the peak at step pct_start * n - 1
    assert lrs[-1] == pytest.approx(lr_max / 1e5, rel=1e-9)  # the last step reaches the final rate
    assert moms[0] == pytest.approx(0.95) and moms[4] == pytest.approx(0.85) and moms[-1] == pytest.approx(0.95)
    assert learner.recorder.lrs == pytest.approx(lrs)


def _same_fit(a, b):
    """Two fits that must be one: the same weights, bit for bit, and the same history (but the time)."""
    sa, sb = a.task_model().state_dict(), b.task_model().state_dict()
    assert sa.keys() == sb.keys() and all(torch.equal(sa[k], sb[k]) for k in sa)
    strip = lambda h: [{k: v for k, v in row.items() if k != "time"} for row in h]  # noqa: E731
    assert strip(a.history) == strip(b.history) and a.recorder.losses == b.recorder.losses


def test_fit_one_cycle_function_form(make_learner):
    """FastAI.jl's function form is the method: the same fit, bit for bit, and it learns."""
    from hotstart import fit_one_cycle

    learner = make_learner()
    assert fit_one_cycle(learner, 2, 3e-3) is learner
    method = make_learner()
    method.fit_one_cycle(2, 3e-3)
    _same_fit(learner, method)
    assert learner.history[1]["train_loss"] < 0.7 * learner.history[0]["train_loss"]  # it learns


def test_fit_constant_lr_keeps_betas(make_learner):
    rec = LRRecorder()
    make_learner().fit(1, 1e-3, callbacks=[rec])
    assert {lr for g in rec.lrs for lr in g} == {1e-3}
    assert {m for g in rec.moms for m in g} == {0.9}


@pytest.mark.parametrize("name", ["adamw", "adam", "sgd"])
def test_named_optimizers_use_fused_kernels_with_a_fallback(name):
    """Fused Adam/AdamW steps (much cheaper on CPU) compute the same update as torch's default
    kernels; SGD stays on the default kernel, which takes sparse gradients."""
    from hotstart.learner.optim import make_optimizer

    def run(params_dtype=torch.float32, **kw):
        g = torch.Generator().manual_seed(0)
        p = torch.nn.Parameter(torch.randn(50, generator=g, dtype=params_dtype))
        opt = make_optimizer(name, [[p]], lr=1e-2, wd=0.01) if not kw else kw["build"]([p])
        for _ in range(5):
            p.grad = torch.randn(50, generator=g, dtype=params_dtype)
            opt.step()
        return opt, p.detach()

    fused, p_fused = run()
    assert bool(fused.defaults.get("fused")) is (name != "sgd")
    ref = {"adamw": lambda ps: torch.optim.AdamW(ps, lr=1e-2, betas=(0.9, 0.99), eps=1e-5, weight_decay=0.01),
           "adam": lambda ps: torch.optim.Adam(ps, lr=1e-2, betas=(0.9, 0.99), eps=1e-5, weight_decay=0.01),
           "sgd": lambda ps: torch.optim.SGD(ps, lr=1e-2, momentum=0.9, weight_decay=0.01)}[name]
    _, p_ref = run(build=ref)
    torch.testing.assert_close(p_fused, p_ref, rtol=1e-5, atol=1e-6)
    complex_opt, _ = run(torch.complex64)  # not a kind the fused kernels take: torch's default
    assert not complex_opt.defaults.get("fused")
    if name == "sgd":  # sparse gradients (an Embedding(sparse=True)) step
        emb = torch.nn.Embedding(10, 4, sparse=True)
        opt = make_optimizer("sgd", [list(emb.parameters())], lr=0.1, wd=0.0)
        emb(torch.tensor([1, 2])).sum().backward()
        opt.step()


class FitSnapshots(Callback):
    def __init__(self):
        self.states, self.max_lrs = [], []

    def before_fit(self):
        self._lrs = []

    def after_pred(self):
        if self.learner.training:
            self._lrs.append([g["lr"] for g in self.learner.opt.param_groups])

    def after_fit(self):
        self.states.append(snapshot(self.learner.task_model()))
        self.max_lrs.append([max(col) for col in zip(*self._lrs)])


def test_fine_tune_freezes_then_unfreezes(make_learner):
    learner = make_learner()
    snaps = FitSnapshots()
    learner.add_cb(snaps)
    before = snapshot(learner.task_model())
    learner.fine_tune(1, base_lr=2e-3, freeze_epochs=1)
    assert len(learner.history) == 2

    frozen, final = snaps.states
    convs = [k for k in before if k.startswith("backbone.") and before[k].ndim == 4]
    bns = [k for k in before if k.startswith("backbone.") and k.endswith(".running_mean")]
    heads = [k for k in before if k.startswith("head.")]
    assert convs and bns and heads
    assert all(torch.equal(before[k], frozen[k]) for k in convs)  # frozen backbone convs did not move
    assert any(not torch.equal(before[k], frozen[k]) for k in bns)  # BatchNorm still trains (train_bn)
    assert all(not torch.equal(before[k], frozen[k]) for k in heads)
    assert all(not torch.equal(frozen[k], final[k]) for k in convs)  # unfrozen afterwards
    assert all(p.requires_grad for p in learner.model.parameters())
    # discriminative rates in the unfrozen fit: first stage base_lr / 2 / 100, ..., head base_lr / 2
    backbone_lr, head_lr = snaps.max_lrs[1][0], snaps.max_lrs[1][-1]
    assert backbone_lr == pytest.approx(head_lr / 100)
    assert 0.8e-3 < head_lr <= 1e-3


# --- data in several forms --------------------------------------------------------------------

class DigitsDataset(torch.utils.data.Dataset):
    """A map-style dataset of (PIL image, int) samples."""

    def __init__(self, data, n):
        self.data, self.n = data, n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return self.data[0][i], self.data[1][i]


def test_map_style_dataset(digits_small, small_task):
    """A map-style dataset trains exactly as the same samples given as two lists: the same split,
    the same batches, the same weights bit for bit."""
    data, _ = digits_small
    learner = tasklearner(small_task, DigitsDataset(data, 100), seed=0, progress=False, batch_size=32)
    assert len(learner.train_loader.dataset) == 80 and len(learner.valid_loader.dataset) == 20
    learner.fit(1, 3e-3)
    lists = ([data[0][i] for i in range(100)], [data[1][i] for i in range(100)])
    reference = tasklearner(small_task, lists, seed=0, progress=False, batch_size=32)
    reference.fit(1, 3e-3)
    _same_fit(learner, reference)


def _loss_by_hand(learner, inputs, targets) -> tuple[float, float]:
    """(mean cross-entropy, accuracy) of the learner's model on raw samples, encoded for validation."""
    task = learner.task
    xb = torch.stack([task.encode_sample((x, y), "validation", np.random.default_rng(0))[0]
                      for x, y in zip(inputs, targets)])
    yb = torch.tensor([task.classes.index(y) if not isinstance(y, int) else y for y in targets])
    model = learner.model.eval()
    with torch.no_grad():
        out = model(xb)
    return float(torch.nn.functional.cross_entropy(out, yb)), float((out.argmax(1) == yb).float().mean())


def test_validdata(digits_small, small_task):
    """With validdata, the training set is all of `data` and the validation set is `validdata`:
    the epoch's validation numbers are those of the model on exactly those samples."""
    data, _ = digits_small
    train, valid = data.subset(range(0, 120)), data.subset(range(120, 150))
    valid_lists = (list(valid[0]), list(valid[1]))
    learner = tasklearner(small_task, train, validdata=valid_lists, seed=0, progress=False)
    assert len(learner.train_loader.dataset) == 120 and len(learner.valid_loader.dataset) == 30
    learner.fit(2, 3e-3)
    loss, accuracy = _loss_by_hand(learner, *valid_lists)
    assert learner.history[-1]["valid_loss"] == pytest.approx(loss, rel=1e-5)
    assert learner.history[-1]["accuracy"] == pytest.approx(accuracy)
    assert learner.history[1]["train_loss"] < learner.history[0]["train_loss"]


def _write_images(folder, n, seed, size=(12, 12)):
    from PIL import Image as PILImage

    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    for i in range(n):
        PILImage.fromarray(rng.integers(0, 256, (*size, 3), dtype=np.uint8)).save(folder / f"{i}.png")


def test_image_folders_train_valid_split(tmp_path):
    for split, n in (("train", 6), ("valid", 3)):
        for j, cls in enumerate(("cat", "dog")):
            _write_images(tmp_path / split / cls, n, seed=10 * j + n)
    data, blocks = datasets.ImageFolders(tmp_path)
    task = ImageClassificationSingle(blocks, size=(8, 8))
    learner = tasklearner(task, data, seed=0, progress=False, batch_size=4)
    assert len(learner.train_loader.dataset) == 12 and len(learner.valid_loader.dataset) == 6
    learner.fit(1)
    assert task.classes == ["cat", "dog"] and len(learner.history) == 1
    # the folders' split, not a random one: the validation samples are the files under valid/
    from hotstart.datasets.containers import source_index

    valid = learner.valid_loader.dataset
    files = data[0].container  # the lazily loaded paths, in the Data's order
    paths = sorted(str(p) for p in (tmp_path / "valid").rglob("*.png"))
    assert sorted(str(files[source_index(valid.inputs, i)]) for i in range(len(valid))) == paths
    loss, accuracy = _loss_by_hand(learner, [valid.inputs[i] for i in range(len(valid))],
                                   [valid.targets[i] for i in range(len(valid))])
    assert learner.history[0]["valid_loss"] == pytest.approx(loss, rel=1e-5)
    assert learner.history[0]["accuracy"] == pytest.approx(accuracy)


# --- bad input ------------------------------------------------------------------------------

def test_unknown_target_names_the_sample(random_rgb):
    images = random_rgb(10)
    labels = ["a", "b"] * 5
    labels[7] = "zebra"
    task = ImageClassificationSingle((Image(), Label(["a", "b"])), size=(8, 8))
    with pytest.raises(ValueError, match=r"sample 7\b") as info:
        tasklearner(task, (images, labels), seed=0, progress=False)
    assert "zebra" in str(info.value)


def test_empty_data_is_a_clear_error(small_task):
    with pytest.raises(ValueError, match="empty"):
        tasklearner(small_task, ([], []), seed=0, progress=False)


def test_mismatched_lengths_are_a_clear_error(small_task, random_rgb):
    with pytest.raises(ValueError, match="length"):
        tasklearner(small_task, (random_rgb(3), [0, 1]), seed=0, progress=False)


def test_corrupt_image_is_named_during_fit(tmp_path):
    for j, cls in enumerate(("a", "b")):
        _write_images(tmp_path / cls, 4, seed=j)
    bad = tmp_path / "b" / "broken.png"
    bad.write_bytes(b"\x89PNG\r\n\x1a\n this is not really a png")
    data, blocks = datasets.ImageFolders(tmp_path)  # lists files only: no error yet
    task = ImageClassificationSingle(blocks, size=(8, 8))
    learner = tasklearner(task, data, seed=0, progress=False, batch_size=4)
    with pytest.raises(datasets.ImageLoadError, match="broken.png"):
        learner.fit(1)


def test_learner_without_data_cannot_fit(small_task):
    learner = tasklearner(small_task, None, seed=0, progress=False)
    assert "train=None" in repr(learner)
    with pytest.raises(ValueError, match="no data"):
        learner.fit(1)
