"""`Learner.run_eval`, the one evaluation path: validate, get_preds, predict (one input and many),
tta, the interpretation and show_results' first outputs agree with each other and with the
model run by hand, on the learner's validation loader and on a loader given to them.

The given loader is left at augmentation epoch 5 (as a fit leaves its loaders), with training
augmentation on: a path that set the epoch on the learner's validation loader instead of on the
loader it reads (what tta and the interpretation did) would read other pixels than get_preds."""
import pytest
import torch

from hotstart.interpret import ClassificationInterpretation
from hotstart.learner.data import TaskDataset, make_loader


@pytest.fixture(scope="module")
def trained(digits_small):
    from hotstart import ImageClassificationSingle, tasklearner

    data, blocks = digits_small
    task = ImageClassificationSingle(blocks, size=(8, 8), augment={"flip": 0.5, "max_rotate": 20.0})
    learner = tasklearner(task, data, seed=0, batch_size=32, progress=False)
    learner.fit(1, 3e-3)
    return learner


def _by_hand(learner, loader, epoch=0):
    """The model over `loader` at augmentation `epoch`, in eval mode: (probabilities, targets, losses)."""
    loader.dataset.epoch = epoch
    model = learner.model.eval()
    probs, targets, losses = [], [], []
    with torch.no_grad():
        for xb, yb in loader:
            out = model(xb)
            probs.append(torch.softmax(out, 1))
            targets.append(yb)
            losses.append(torch.nn.functional.cross_entropy(out, yb, reduction="none"))
    return torch.cat(probs), torch.cat(targets), torch.cat(losses)


def _augmented_loader(learner):
    ds = learner.valid_loader.dataset
    aug = TaskDataset(learner.task, (ds.inputs, ds.targets), "training", seed=3)
    loader = make_loader(aug, batch_size=16, train=False)
    aug.epoch = 5  # stale: every path must set the epoch of the loader it reads
    return loader


@pytest.mark.parametrize("given", [False, True], ids=["validation loader", "given loader"])
def test_every_evaluation_path_agrees(trained, given):
    learner = trained
    loader = _augmented_loader(learner) if given else None
    probs, targets, losses = _by_hand(learner, loader or learner.valid_loader)
    if given:  # the augmentation is really on: epoch 5 reads other pixels than epoch 0
        assert not torch.allclose(_by_hand(learner, loader, epoch=5)[0], probs)
        loader.dataset.epoch = 5

    got, got_targets = learner.get_preds(loader)
    assert torch.allclose(got, probs, atol=1e-6) and torch.equal(got_targets, targets)

    if given:
        loader.dataset.epoch = 5
    metrics = learner.validate(loader)
    assert metrics["loss"] == pytest.approx(float(losses.mean()), rel=1e-5)
    assert metrics["accuracy"] == pytest.approx(float((probs.argmax(1) == targets).float().mean()))

    if given:
        loader.dataset.epoch = 5
    interp = ClassificationInterpretation.from_learner(learner, loader)
    assert torch.allclose(interp.probs, probs, atol=1e-6) and torch.equal(interp.targets, targets)
    assert torch.allclose(interp.losses, losses, atol=1e-5)

    if given:
        loader.dataset.epoch = 5
    plain = learner.tta(n=2, loader=loader, beta=1.0, verbose=False)  # beta=1: the plain predictions alone
    assert torch.allclose(plain.probs, probs, atol=1e-6) and torch.equal(plain.targets, targets)


def test_predictions_of_raw_inputs_agree_with_the_validation_outputs(trained):
    from hotstart.learner.valid_outputs import first_valid_outputs

    learner = trained
    probs, targets, _ = _by_hand(learner, learner.valid_loader)
    ds = learner.valid_loader.dataset
    raw = [ds.inputs[i] for i in range(6)]
    items, none = learner.get_preds(items=raw)
    assert none is None and torch.allclose(items, probs[:6], atol=1e-6)
    label, one = learner.predict(raw[0])
    assert torch.allclose(one, probs[0], atol=1e-6) and label == learner.task.classes[int(probs[0].argmax())]
    xs, ys, out = first_valid_outputs(learner, 4)
    assert len(xs) == len(ys) == len(out) == 4 and torch.equal(torch.as_tensor(ys), targets[:4])
    assert torch.allclose(torch.softmax(out, 1), probs[:4], atol=1e-6)


def test_run_eval_keeps_what_it_is_told_and_leaves_the_callers_rng(trained):
    learner = trained
    state = torch.get_rng_state()
    n, = learner.run_eval(keep=lambda out, xb, yb: (torch.tensor([len(yb)]),))
    assert int(n.sum()) == len(learner.valid_loader.dataset)
    assert learner.run_eval() is None
    assert torch.equal(torch.get_rng_state(), state)


def test_an_overridden_valid_step_changes_every_evaluation_alike(trained):
    """Every evaluation makes its one forward call through `valid_step`: a subclass that divides
    the outputs by a temperature changes validate, get_preds, predict and tta alike (each equals
    softmax(logits / 4), computed here from the plain learner's own results)."""
    from hotstart.learner.loop import Learner

    class Tempered(Learner):
        def valid_step(self):
            self.pred = self.model(self.xb) / 4.0
            self.event("after_pred")
            if self.yb is not None:
                self.loss = self.compute_loss(self.pred, self.yb)
            self.event("after_loss")

    plain = trained
    tempered = Tempered(plain.model, plain.train_loader, plain.valid_loader, plain.loss_func, task=plain.task,
                        metrics=plain.task.metrics, seed=plain.seed, progress=False)
    cooled = lambda probs: torch.softmax(torch.log(probs) / 4.0, -1)  # noqa: E731 - softmax(z / 4) from softmax(z)
    probs, targets, _ = _by_hand(plain, plain.valid_loader)
    want = cooled(probs)
    assert not torch.allclose(want, probs, atol=1e-3)  # the temperature changes the probabilities

    got, got_targets = tempered.get_preds()
    assert torch.allclose(got, want, atol=1e-5) and torch.equal(got_targets, targets)

    loss = float(torch.nn.functional.nll_loss(torch.log(want), targets))
    assert tempered.validate()["loss"] == pytest.approx(loss, rel=1e-4)
    assert plain.validate()["loss"] != pytest.approx(loss, rel=1e-2)

    raw = plain.valid_loader.dataset.inputs[0]
    assert torch.allclose(tempered.predict(raw)[1], cooled(plain.predict(raw)[1]), atol=1e-5)

    assert torch.allclose(tempered.tta(n=2, beta=1.0, verbose=False).probs, want, atol=1e-5)
    view = tempered.tta(n=1, beta=0.0, verbose=False).probs  # an augmented view alone goes through it too
    assert torch.allclose(view, cooled(plain.tta(n=1, beta=0.0, verbose=False).probs), atol=1e-5)


def test_validate_scores_labelled_raw_data_such_as_a_held_out_split(trained, digits):
    """``learner.validate(data)`` (a held-out split, an (inputs, targets) pair) scores raw samples
    encoded as in validation: the same numbers as a loader built by hand, and accuracy and loss
    equal to the model run by hand (torch's cross entropy) over those samples."""
    data, _ = digits
    held_out = data.subset(list(range(200, 300)))  # digits the learner never saw
    by_data = trained.validate(held_out)
    loader = make_loader(TaskDataset(trained.task, held_out, "validation", trained.seed), batch_size=32, train=False)
    assert trained.validate(loader) == by_data
    assert trained.validate((list(held_out.inputs), list(held_out.targets))) == by_data
    probs, targets, losses = _by_hand(trained, trained.labelled_loader(held_out, batch_size=7))
    assert by_data["accuracy"] == pytest.approx(float((probs.argmax(1) == targets).float().mean()), abs=1e-6)
    assert by_data["loss"] == pytest.approx(float(losses.mean()), rel=1e-5)
    assert len(targets) == 100 and trained.labelled_loader(held_out).batch_size == trained.valid_loader.batch_size


def test_tta_reports_the_learners_metrics_not_the_tasks(make_learner):
    """``tta`` scores the metrics of the learner's history (its ``metrics=``), through the same
    metric objects: with beta=1 (the plain predictions) they equal `validate`'s."""
    from hotstart.metrics import MulticlassAccuracy

    learner = make_learner(metrics={"acc_again": MulticlassAccuracy(num_classes=10)})
    learner.fit(1, 3e-3)
    assert "acc_again" in learner.history[-1] and "accuracy" not in learner.history[-1]
    result = learner.tta(n=1, beta=1.0, verbose=False)
    assert list(result.without) == list(result.with_tta) == ["acc_again"]
    assert result.without["acc_again"] == pytest.approx(learner.validate()["acc_again"])
