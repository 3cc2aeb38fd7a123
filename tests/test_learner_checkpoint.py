"""Checkpoint and resume (issue 14): a fit killed with SIGKILL at random moments and resumed each
time ends bit for bit where an uninterrupted fit ends; a kill during a checkpoint write never
leaves an unreadable last checkpoint. Children are forked (torch is already imported), so a
kill costs milliseconds, not an interpreter start."""
import json
import os
import random
import signal
import time

import pytest
import torch
import torch.nn as nn

from hotstart.errors import UsageError
from hotstart.learner.checkpoint import checkpoints, load_last

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="the kill tests fork a child process")


@pytest.fixture
def mlp_learner(make_learner, small_task, digits_small):
    data = digits_small[0].subset(list(range(100)))  # 80 training digits: 5 batches of 16 an epoch

    def make(**kwargs):
        with torch.random.fork_rng():  # the same initial weights every time, global RNG untouched
            torch.manual_seed(0)
            model = nn.Sequential(nn.Flatten(), nn.Linear(small_task.channels * 64, 32), nn.ReLU(), nn.Dropout(0.1),
                                  nn.Linear(32, 10))
        kwargs.setdefault("batch_size", 16)
        kwargs.setdefault("data", data)
        return make_learner(model=model, **kwargs)
    return make


def _state(learner):
    return {k: v.detach().clone() for k, v in learner.task_model().state_dict().items()}


def _no_time(history):
    return [{k: v for k, v in row.items() if k != "time"} for row in history]


def _fork(fn) -> int:
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        code = 1
        try:
            fn()
            code = 0
        finally:
            os._exit(code)
    return pid


def test_killed_and_resumed_fit_equals_an_uninterrupted_one(mlp_learner, tmp_path):
    from safetensors.torch import load_file, save_file

    fresh = mlp_learner()  # forked children each train a copy of this untrained learner
    ref = mlp_learner()
    ref.fit_one_cycle(5, 1e-2)  # never interrupted, never checkpointed (this also reads the images once)
    expected = _state(ref)

    def run(folder, out):
        fresh.fit_one_cycle(5, 1e-2, checkpoint_dir=folder, checkpoint_every=2, resume=folder)
        save_file(_state(fresh), str(out / "weights.safetensors"))
        (out / "history.json").write_text(json.dumps({"history": fresh.history, "losses": fresh.recorder.losses}))

    def check(out):
        weights = load_file(str(out / "weights.safetensors"))
        assert weights.keys() == expected.keys() and all(torch.equal(weights[k], expected[k]) for k in expected)
        got = json.loads((out / "history.json").read_text())
        assert _no_time(got["history"]) == _no_time(ref.history) and got["losses"] == ref.recorder.losses

    # an uninterrupted child with checkpoints: how long a whole run takes, and the same result
    (tmp_path / "out0").mkdir()
    t0 = time.perf_counter()
    pid = _fork(lambda: run(tmp_path / "ckpt0", tmp_path / "out0"))
    _, status = os.waitpid(pid, 0)
    duration = time.perf_counter() - t0
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
    check(tmp_path / "out0")

    folder, out = tmp_path / "ckpt", tmp_path / "out"
    out.mkdir()
    rng = random.Random(0)
    positions = []
    for _ in range(5):  # one kill per attempt, at a random moment; each attempt resumes the last
        pid = _fork(lambda: run(folder, out))
        time.sleep(rng.uniform(0.05, 0.3) * duration)
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        last = load_last(folder)  # never unreadable
        positions.append(None if last is None else last.meta["fit"]["train_iter"])
    pid = _fork(lambda: run(folder, out))
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
    assert any(p for p in positions), positions  # a kill came after a checkpoint: something was resumed
    check(out)
    assert len(checkpoints(folder)) == 2  # the last 2 are kept


def test_kill_during_checkpoint_writes_leaves_a_readable_last_checkpoint(mlp_learner, tmp_path):
    from hotstart.learner.checkpoint import Checkpointer

    folder = tmp_path / "ckpt"
    learner = mlp_learner()
    learner.fit(1, 1e-3)
    weights = _state(learner)

    def write_forever():
        cp = Checkpointer(learner, folder)
        while True:
            learner.fit_state.train_iter += 1
            cp.save(epoch_done=False)

    rng = random.Random(1)
    seen = 0
    for _ in range(15):
        learner.fit_state.train_iter = seen  # each writer goes on from the last position seen
        pid = _fork(write_forever)
        time.sleep(rng.uniform(0.02, 0.2))
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        last = load_last(folder)
        if last is None:
            continue
        assert all(torch.equal(last.model[k], weights[k]) for k in weights)
        assert last.meta["fit"]["train_iter"] >= seen  # never an older checkpoint than one seen before
        seen = last.meta["fit"]["train_iter"]
        assert len(checkpoints(folder)) <= 3  # 2 kept, a third for the moment between rename and pruning
    assert seen > 10


def test_resume_checks_the_fit_and_an_empty_folder_starts_fresh(mlp_learner, tmp_path):
    a = mlp_learner()
    a.fit(2, 1e-3, checkpoint_dir=tmp_path)
    names = [p.name for p in checkpoints(tmp_path)]
    assert names == ["ckpt-000-000000005-1", "ckpt-000-000000010-1"]
    with pytest.raises(ValueError, match="2 epochs"):
        mlp_learner().fit(3, 1e-3, resume=tmp_path)
    b = mlp_learner()
    b.fit(2, 1e-3, resume=tmp_path)  # complete already: nothing more to train
    assert all(torch.equal(v, _state(a)[k]) for k, v in _state(b).items())
    assert _no_time(b.history) == _no_time(a.history)
    (tmp_path / "empty").mkdir()
    c = mlp_learner()
    c.fit(1, 1e-3, resume=tmp_path / "empty")  # a folder that holds no checkpoint: from scratch
    assert len(c.history) == 1


def test_the_same_call_with_resume_after_ctrl_c_continues_the_stopped_fit(mlp_learner, tmp_path):
    """A notebook's Ctrl-C: the fit stops mid-epoch after a checkpoint; running the same cell again
    (same learner, same call with `resume`) continues that fit and ends bit for bit where an
    uninterrupted fit ends, instead of starting a second fit from the stopped weights."""
    from hotstart.learner import Callback

    class CtrlC(Callback):
        def after_batch(self):
            if self.learner.training and self.learner.fit_state.train_iter == 7:  # epoch 1, batch 3
                raise KeyboardInterrupt

    ref = mlp_learner()
    ref.fit_one_cycle(3, 1e-2)
    learner = mlp_learner()
    with pytest.raises(KeyboardInterrupt):
        learner.fit_one_cycle(3, 1e-2, checkpoint_dir=tmp_path, resume=tmp_path, callbacks=[CtrlC()])
    assert len(learner.history) == 1
    learner.fit_one_cycle(3, 1e-2, checkpoint_dir=tmp_path, resume=tmp_path)
    assert learner.fit_index == 0  # the stopped fit, not a second one
    assert all(torch.equal(v, _state(ref)[k]) for k, v in _state(learner).items())
    assert _no_time(learner.history) == _no_time(ref.history)
    assert {p.name.split("-")[1] for p in checkpoints(tmp_path)} == {"000"}
    # a fit that ended: the next call with `resume` is a new fit (index 1), which has no checkpoint yet
    learner.fit(1, 1e-3, checkpoint_dir=tmp_path, resume=tmp_path)
    assert learner.fit_index == 1 and len(learner.history) == 4


def test_a_resume_continues_only_the_stopped_fit_itself(mlp_learner, tmp_path):
    """Only a call that is the stopped fit again (its length and schedule) continues it: re-running
    fine_tune after a stop in its second phase starts with the first phase, another fit, which
    must neither take the second phase's checkpoint nor fail on it; and a fit stopped before its
    first checkpoint has nothing to continue from, so the call is a new fit (as before)."""
    from hotstart.learner import Callback

    class CtrlCAt(Callback):
        def __init__(self, fit_index, train_iter):
            self.at = (fit_index, train_iter)

        def after_batch(self):
            if self.learner.training and (self.learner.fit_index, self.learner.fit_state.train_iter) == self.at:
                raise KeyboardInterrupt

    learner = mlp_learner()
    stop = CtrlCAt(1, 7)  # phase 2 (fit 1), after its epoch-0 checkpoint
    learner.add_cb(stop)
    with pytest.raises(KeyboardInterrupt):
        learner.fine_tune(2, freeze_epochs=1, checkpoint_dir=tmp_path / "a", resume=tmp_path / "a")
    learner.remove_cb(stop)
    learner.fine_tune(2, freeze_epochs=1, checkpoint_dir=tmp_path / "a", resume=tmp_path / "a")
    assert learner.fit_index == 3 and len(learner.history) == 1 + 1 + 1 + 2  # new fits, as without resume

    learner = mlp_learner()
    with pytest.raises(KeyboardInterrupt):  # epoch 0, batch 3: no checkpoint yet
        learner.fit_one_cycle(2, 1e-2, checkpoint_dir=tmp_path / "b", resume=tmp_path / "b",
                              callbacks=[CtrlCAt(0, 3)])
    learner.fit_one_cycle(2, 1e-2, checkpoint_dir=tmp_path / "b", resume=tmp_path / "b")
    assert learner.fit_index == 1 and len(learner.history) == 2


def test_resume_from_a_folder_that_does_not_exist_is_an_error(mlp_learner, tmp_path):
    learner = mlp_learner()
    with pytest.raises(UsageError, match=r"resume='.*no-such-run': no such folder"):
        learner.fit(1, 1e-3, resume=tmp_path / "no-such-run")
    assert learner.history == []  # nothing trained
    learner.fit(1, 1e-3, checkpoint_dir=tmp_path / "new", resume=tmp_path / "new")  # its own folder: fresh start
    assert len(learner.history) == 1 and len(checkpoints(tmp_path / "new")) == 1


def test_a_damaged_newest_checkpoint_is_named_and_the_one_before_is_used(mlp_learner, tmp_path):
    from hotstart.learner.checkpoint import CheckpointWarning

    mlp_learner().fit(2, 1e-3, checkpoint_dir=tmp_path)
    (tmp_path / "ckpt-000-000000010-1" / "model.safetensors").write_bytes(b"damaged")
    with pytest.warns(CheckpointWarning, match=r"ckpt-000-000000010-1.*cannot be read.*one before.*-000000005-1"):
        assert load_last(tmp_path).path.name == "ckpt-000-000000005-1"


def test_overwritten_bytes_are_named_by_their_checksum_and_the_checkpoint_before_is_used(mlp_learner, tmp_path):
    """Bytes changed on disk after the write, in a way the file format cannot notice (the last
    weights overwritten with NaN's bit pattern, the length unchanged), are named with the file,
    and the checkpoint before is used (issue 32: they loaded as NaN weights, silently)."""
    from hotstart.learner.checkpoint import CheckpointWarning

    mlp_learner().fit(2, 1e-3, checkpoint_dir=tmp_path)
    newest = tmp_path / "ckpt-000-000000010-1" / "model.safetensors"
    data = bytearray(newest.read_bytes())
    data[-8:] = b"\xff" * 8
    newest.write_bytes(bytes(data))
    with pytest.warns(CheckpointWarning, match=r"ckpt-000-000000010-1 cannot be read: model.safetensors was changed "
                                               r"after it was written .*resuming from the one before, .*-000000005-1"):
        last = load_last(tmp_path)
    assert last.path.name == "ckpt-000-000000005-1" and all(torch.isfinite(v).all() for v in last.model.values())
    (tmp_path / "ckpt-000-000000005-1" / "checksums.json").unlink()  # a checkpoint of format /3 needs its checksums
    with pytest.raises(ValueError, match=r"no readable checkpoint .*checksums.json is missing"):
        load_last(tmp_path)


def test_resume_with_another_task_or_model_names_what_differs(mlp_learner, make_learner, digits_small, tmp_path):
    from hotstart import ImageClassificationSingle, Label

    mlp_learner().fit(2, 1e-3, checkpoint_dir=tmp_path)
    _, blocks = digits_small
    classes = list(blocks[1].classes)[::-1]  # the same 10 classes in another order: the same shapes
    other = ImageClassificationSingle((blocks[0], Label(classes)), size=(8, 8), augment={"flip": 0.0})
    with torch.random.fork_rng():
        torch.manual_seed(0)
        model = nn.Sequential(nn.Flatten(), nn.Linear(other.channels * 64, 32), nn.ReLU(), nn.Dropout(0.1),
                              nn.Linear(32, 10))
    learner = make_learner(task=other, model=model, batch_size=16, data=digits_small[0].subset(list(range(100))))
    with pytest.raises(UsageError, match=r"another task \(task.blocks\[1\].classes: \[0, 1, .* \[9, 8, "):
        learner.fit(2, 1e-3, resume=tmp_path)
    learner = make_learner(task=other, model=model, batch_size=8, data=digits_small[0].subset(list(range(100))))
    with pytest.raises(UsageError, match=r"another task \(task.blocks\[1\].classes"):  # not the step count first
        learner.fit(2, 1e-3, resume=tmp_path)
    with torch.random.fork_rng():
        torch.manual_seed(0)
        wider = nn.Sequential(nn.Flatten(), nn.Linear(64, 48), nn.ReLU(), nn.Dropout(0.1), nn.Linear(48, 10))
    learner = make_learner(model=wider, batch_size=16, data=digits_small[0].subset(list(range(100))))
    with pytest.raises(UsageError, match=r"another model \(other shapes: 1.weight \(32, 64\) in the checkpoint, "
                                         r"\(48, 64\) here"):
        learner.fit(2, 1e-3, resume=tmp_path)
    learner.fit(2, 1e-3, checkpoint_dir=tmp_path / "wider")  # the refused resume left no lock behind
    # another seed is another split and other augmentations: it resumed silently in a new process
    with pytest.raises(UsageError, match=r"written by a learner with seed=0, this one has seed=1 .*build the learner "
                                         r"with seed=0 to resume it"):
        mlp_learner(seed=1).fit(2, 1e-3, resume=tmp_path)


def test_a_resume_with_another_schedule_is_refused_naming_both_values(mlp_learner, tmp_path):
    """A new process (a new learner) resuming a stopped one-cycle fit with another peak rate, or
    another warm-up, spliced the new schedule in at the checkpoint's step, silently: the schedule
    is now in the checkpoint's state.json and another one is refused, naming the checkpoint, the
    saved value and the given one. A checkpoint written before it was kept still resumes."""
    from hotstart.learner import Callback
    from hotstart.learner.checkpoint.layout import CHECKSUMS, sha256

    class Crash(Exception):
        pass

    class CrashAt(Callback):
        def after_batch(self):
            if self.learner.fit_state.train_iter == 7:  # epoch 1, batch 1: after epoch 0's checkpoint
                raise Crash

    with pytest.raises(Crash):
        mlp_learner(callbacks=[CrashAt()]).fit_one_cycle(3, 1e-2, checkpoint_dir=tmp_path)
    last = checkpoints(tmp_path)[-1]
    saved = json.loads((last / "state.json").read_text())["fit"]["schedule"]
    assert saved == {"kind": "one_cycle", "lr_max": 0.01, "div": 25.0, "div_final": 1e5, "pct_start": 0.1,
                     "moms": [0.95, 0.85, 0.95]}
    with pytest.raises(UsageError, match=rf"cannot resume from {last}: it was written by a fit with another "
                                         r"schedule \(schedule.lr_max: 0.01 in the checkpoint, 0.02 in this fit\)"):
        mlp_learner().fit_one_cycle(3, 2e-2, resume=tmp_path)
    with pytest.raises(UsageError, match=r"schedule.pct_start: 0.1 in the checkpoint, 0.5 in this fit"):
        mlp_learner().fit_one_cycle(3, 1e-2, pct_start=0.5, resume=tmp_path)
    with pytest.raises(UsageError, match=r"schedule.kind: \"one_cycle\" in the checkpoint, \"constant\" in this fit"):
        mlp_learner().fit(3, 1e-2, resume=tmp_path)
    ref = mlp_learner()
    ref.fit_one_cycle(3, 1e-2)
    resumed = mlp_learner()
    resumed.fit_one_cycle(3, 1e-2, resume=tmp_path)  # the same schedule: resumed
    assert all(torch.equal(v, _state(ref)[k]) for k, v in _state(resumed).items())

    # a checkpoint of the format before (no "schedule" in its fit) resumes, unchecked
    state = json.loads((last / "state.json").read_text())
    del state["fit"]["schedule"]
    data = json.dumps(state).encode()
    (last / "state.json").write_bytes(data)
    sums = json.loads((last / CHECKSUMS).read_text())
    (last / CHECKSUMS).write_text(json.dumps({**sums, "state.json": sha256(data)}))
    old = mlp_learner()
    old.fit_one_cycle(3, 1e-2, resume=tmp_path)
    assert all(torch.equal(v, _state(ref)[k]) for k, v in _state(old).items())


def test_a_finished_fit_is_skipped_only_for_its_own_model(mlp_learner, make_learner, digits_small, tmp_path):
    """A folder whose newest checkpoint is a later fit's: the first fit of a new process finished
    before it, so it is skipped, as a resumed script skips it, and the learner holds the state at
    its end (its last checkpoint, which rotation keeps). With another model it returned at once,
    untrained and silent; now the checkpoint's weights must fit the model first."""
    first = mlp_learner(precision="32-true")
    first.fit(1, 1e-3, checkpoint_dir=tmp_path, resume=tmp_path)
    end_of_fit0, history0 = _state(first), list(first.history)
    first.fit(1, 1e-3, checkpoint_dir=tmp_path, resume=tmp_path)  # fits 0 and 1: ckpt-000-* and ckpt-001-*
    again = mlp_learner(precision="32-true")
    again.fit(1, 1e-3, checkpoint_dir=tmp_path, resume=tmp_path)
    assert again.fit_index == 0 and _no_time(again.history) == _no_time(history0)  # skipped, with its end state
    assert all(torch.equal(v, end_of_fit0[k]) for k, v in _state(again).items())
    again.fit(1, 1e-3, checkpoint_dir=tmp_path, resume=tmp_path)  # fit 1, complete already
    assert all(torch.equal(v, _state(first)[k]) for k, v in _state(again).items())
    with torch.random.fork_rng():
        torch.manual_seed(0)
        wider = nn.Sequential(nn.Flatten(), nn.Linear(64, 48), nn.ReLU(), nn.Dropout(0.1), nn.Linear(48, 10))
    other = make_learner(model=wider, batch_size=16, data=digits_small[0].subset(list(range(100))))
    with pytest.raises(UsageError, match=r"another model \(other shapes: 1.weight \(32, 64\) in the checkpoint"):
        other.fit(3, 1e-3, checkpoint_dir=tmp_path, resume=tmp_path)


def test_a_changed_script_is_refused_not_skipped_as_a_finished_fit(mlp_learner, tmp_path):
    """Run 1 `fine_tune` wrote ckpt-000-* and ckpt-001-*; run 2, another script, `fit_one_cycle(2)`
    resuming that folder, returned at once as if its fit had finished (an untrained model, an
    empty history, no word). A fit is skipped only if the checkpoint records this very fit at its
    index; else the resume is refused, naming the checkpoint and what differs."""
    mlp_learner(precision="32-true").fine_tune(1, freeze_epochs=1, checkpoint_dir=tmp_path)
    newest = checkpoints(tmp_path)[-1]
    assert newest.name.startswith("ckpt-001-")
    learner = mlp_learner(precision="32-true")
    before = _state(learner)
    with pytest.raises(UsageError, match=rf"cannot resume from {newest}: it is a checkpoint of fit 1 of a run whose "
                                         r"fit 0 was another one \(fit 0.n_epoch: 1 in the checkpoint, 2 in this fit\)"):
        learner.fit_one_cycle(2, 3e-3, checkpoint_dir=tmp_path, resume=tmp_path)
    assert learner.history == [] and all(torch.equal(v, before[k]) for k, v in _state(learner).items())
    with pytest.raises(UsageError, match=r"fit 0 was another one \(fit 0.schedule.pct_start: 0.99 in the checkpoint, "
                                         r"0.25 in this fit\)"):
        mlp_learner(precision="32-true").fit_one_cycle(1, 2e-3, pct_start=0.25, checkpoint_dir=tmp_path, resume=tmp_path)
    # the same script again: fit 0 is skipped with its end state, fit 1 is complete already
    ref = mlp_learner(precision="32-true")
    ref.fine_tune(1, freeze_epochs=1)
    again = mlp_learner(precision="32-true")
    again.fine_tune(1, freeze_epochs=1, checkpoint_dir=tmp_path, resume=tmp_path)
    assert all(torch.equal(v, _state(ref)[k]) for k, v in _state(again).items())
    assert _no_time(again.history) == _no_time(ref.history)


def test_a_resume_with_another_batch_size_or_other_data_is_refused(mlp_learner, digits_small, tmp_path):
    """Another batch size, or other training data of the same size, gives the same batches per
    epoch and steps in all: such a resume was accepted silently. The checkpoint keeps the batch
    size and the data's fingerprint, and a resume that differs is refused naming both values; a
    checkpoint written before they were kept still resumes."""
    from hotstart.learner.checkpoint.layout import CHECKSUMS, sha256

    mlp_learner().fit(2, 1e-3, checkpoint_dir=tmp_path)
    last = checkpoints(tmp_path)[-1]
    for p in checkpoints(tmp_path)[1:]:  # as if killed during the second epoch
        p.rename(tmp_path / f"gone-{p.name}")
    first = checkpoints(tmp_path)[-1]
    assert len(mlp_learner(batch_size=14).train_loader) == len(mlp_learner().train_loader)
    with pytest.raises(UsageError, match=rf"cannot resume from {first}: it was written by a fit with another batch "
                                         r"size \(batch_size: 16 in the checkpoint, 14 in this fit\)"):
        mlp_learner(batch_size=14).fit(2, 1e-3, resume=tmp_path)
    other = digits_small[0].subset(list(range(100, 200)))  # 100 other digits: the same batches
    with pytest.raises(UsageError, match=rf"cannot resume from {first}: it was written by a fit with other training "
                                         r"data \(data.indices: \"\w+\" in the checkpoint, \"\w+\" in this fit\)"):
        mlp_learner(data=other).fit(2, 1e-3, resume=tmp_path)
    # written before the batch size and data were kept: resumes unchecked
    state = json.loads((first / "state.json").read_text())
    del state["fits"]
    data = json.dumps(state).encode()
    (first / "state.json").write_bytes(data)
    sums = json.loads((first / CHECKSUMS).read_text())
    (first / CHECKSUMS).write_text(json.dumps({**sums, "state.json": sha256(data)}))
    resumed = mlp_learner()
    resumed.fit(2, 1e-3, resume=tmp_path)
    assert len(resumed.history) == 2 and last.name == "ckpt-000-000000010-1"


def test_a_new_fit_refuses_a_folder_of_another_runs_checkpoints(mlp_learner, digits_small, tmp_path):
    """Run 2, a new fit (no resume) into the folder of run 1's checkpoints: its own checkpoint
    sorted below run 1's, rotation deleted it at once, and a later resume continued run 1. A new
    fit now refuses such a folder, naming it and what to do; the fits of one run (fine_tune's two)
    still share a folder."""
    from hotstart.learner import Callback

    class Killed(Exception):
        pass

    class Stop(Callback):  # stands in for a kill in epoch 1, after epoch 0's checkpoint
        def before_epoch(self):
            if self.learner.epoch == 1:
                raise Killed

    mlp_learner().fit_one_cycle(3, 1e-2, checkpoint_dir=tmp_path)
    before = sorted(p.name for p in tmp_path.iterdir())
    new = mlp_learner(data=digits_small[0].subset(list(range(100, 200))))
    with pytest.raises(UsageError, match=rf"checkpoint_dir {tmp_path} holds checkpoints of another run "
                                         r"\(ckpt-000-000000010-1, ckpt-000-000000015-1\): pass resume='.*' to "
                                         r"continue that run, or give this fit a new checkpoint_dir"):
        new.fit_one_cycle(3, 1e-2, checkpoint_dir=tmp_path, callbacks=[Stop()])
    assert new.history == [] and sorted(p.name for p in tmp_path.iterdir()) == before
    new.fit(1, 1e-3, checkpoint_dir=tmp_path / "own")  # the refused fit left no lock behind
    # one run's fits share a folder; resuming the run makes its folder this learner's too
    one = mlp_learner()
    one.fine_tune(1, freeze_epochs=1, checkpoint_dir=tmp_path / "ft")
    one.fit(1, 1e-3, checkpoint_dir=tmp_path / "ft")
    resumed = mlp_learner()
    resumed.fit_one_cycle(3, 1e-2, checkpoint_dir=tmp_path, resume=tmp_path)
    resumed.fit(1, 1e-3, checkpoint_dir=tmp_path)


def test_rotation_keeps_the_checkpoint_just_written_and_each_earlier_fits_end(tmp_path):
    from hotstart.learner.checkpoint.write import to_rotate

    names = ["ckpt-000-000000005-1", "ckpt-000-000000010-1", "ckpt-000-000000015-1", "ckpt-001-000000003-0",
             "ckpt-001-000000005-1", "ckpt-001-000000010-1"]
    found = [tmp_path / n for n in names]
    assert [p.name for p in to_rotate(found, tmp_path / names[-1], 2)] == names[:2] + names[3:4]
    assert [p.name for p in to_rotate(found[:3], tmp_path / names[0], 2)] == names[1:2]  # sorts below: kept


def test_a_failed_checkpoint_write_removes_its_temporary_folder_and_names_the_checkpoint(mlp_learner, tmp_path,
                                                                                          monkeypatch):
    """A write that fails in the process (a full disk, Ctrl-C) left its ``.tmp-ckpt-*`` folder."""
    import errno

    from hotstart.learner.checkpoint import write
    from hotstart.write_errors import WriteError

    def fail(exc):
        def atomic_write_bytes(path, data):
            if path.name == "optimizer.safetensors":
                raise exc
            (path).write_bytes(data)
        return atomic_write_bytes

    monkeypatch.setattr(write, "atomic_write_bytes", fail(OSError(errno.ENOSPC, "No space left on device")))
    with pytest.raises(WriteError, match=r"cannot write .*ckpt-000-000000005-1 \(a checkpoint\): the disk is full") as info:
        mlp_learner().fit(1, 1e-3, checkpoint_dir=tmp_path)
    assert info.value.errno == errno.ENOSPC
    assert [p.name for p in tmp_path.iterdir()] == [".lock"]
    monkeypatch.setattr(write, "atomic_write_bytes", fail(KeyboardInterrupt()))
    with pytest.raises(KeyboardInterrupt):
        mlp_learner().fit(1, 1e-3, checkpoint_dir=tmp_path)
    assert [p.name for p in tmp_path.iterdir()] == [".lock"]


def test_resume_refuses_one_checkpoints_folder_or_a_saved_model(mlp_learner, tmp_path):
    """Both trained from scratch without a word, as an empty folder does."""
    mlp_learner().fit(1, 1e-3, checkpoint_dir=tmp_path / "run")
    one = checkpoints(tmp_path / "run")[0]
    with pytest.raises(UsageError, match=rf"resume='{one}' is one checkpoint's folder; pass the folder that holds "
                                         rf"the checkpoints \(the fit's checkpoint_dir\): resume='{tmp_path / 'run'}'"):
        mlp_learner().fit(1, 1e-3, resume=one)
    model = mlp_learner()
    model.save(tmp_path / "model")
    with pytest.raises(UsageError, match=rf"resume='{tmp_path / 'model'}' is a saved model, not a checkpoint folder"):
        mlp_learner().fit(1, 1e-3, resume=tmp_path / "model")


@pytest.mark.parametrize("damage, message", [
    (lambda ck: (ck / "checksums.json").write_text("[]"), r"checksums.json holds list \[\], not an object"),
    (lambda ck: (ck / "checksums.json").write_text("null"), r"checksums.json holds null, not an object"),
    (lambda ck: _edit_state(ck, lambda s: s.pop("fit")), r"state.json has no 'fit'"),
    (lambda ck: _edit_state(ck, lambda s: s.update(seed="abc")), r"state.json: 'seed' is str 'abc', not an integer"),
    (lambda ck: _edit_state(ck, lambda s: s.pop("recorder")), r"state.json has no 'recorder'"),
    (lambda ck: _edit_state(ck, lambda s: s["fit"].update(n_iter=None)), r"state.json: 'fit.n_iter' is null"),
    (lambda ck: _edit_state(ck, lambda s: s.pop("optimizer")), r"state.json has no 'optimizer'"),
    (lambda ck: _edit_state(ck, lambda s: s.clear() or s.update(format=json.loads((ck / "state.json").read_text())["format"]), replace=["x"]),
     r"state.json holds list \['x'\], not an object"),
])
def test_a_state_or_checksums_file_of_the_wrong_shape_is_named_and_the_one_before_is_used(mlp_learner, tmp_path,
                                                                                          damage, message):
    """Bare AttributeError / KeyError / ValueError naming no file, and no fallback, before."""
    from hotstart.learner.checkpoint import CheckpointWarning

    mlp_learner().fit(2, 1e-3, checkpoint_dir=tmp_path)
    damage(tmp_path / "ckpt-000-000000010-1")
    with pytest.warns(CheckpointWarning, match=rf"ckpt-000-000000010-1 cannot be read: {message}.*one before"):
        assert load_last(tmp_path).path.name == "ckpt-000-000000005-1"


def _edit_state(ck, edit, replace=None):
    """Change a checkpoint's state.json (or `replace` it) and record its new checksum."""
    from hotstart.learner.checkpoint.layout import CHECKSUMS, sha256

    state = json.loads((ck / "state.json").read_text())
    edit(state)
    data = json.dumps(state if replace is None else replace).encode()
    (ck / "state.json").write_bytes(data)
    sums = json.loads((ck / CHECKSUMS).read_text())
    (ck / CHECKSUMS).write_text(json.dumps({**sums, "state.json": sha256(data)}))


def test_two_fits_cannot_write_one_checkpoint_folder(mlp_learner, tmp_path):
    from hotstart.learner.checkpoint import Checkpointer

    a, b = mlp_learner(), mlp_learner()
    holder = Checkpointer(a, tmp_path)
    with pytest.raises(UsageError, match=rf"being written by another fit of this process \(process {os.getpid()} on "
                                         r".*two fits cannot write one"):
        b.fit(1, 1e-3, checkpoint_dir=tmp_path)
    holder.close()
    read, write = os.pipe()

    def hold():  # another process writes into the folder
        Checkpointer(a, tmp_path)
        os.write(write, b"x")
        time.sleep(60)

    pid = _fork(hold)
    os.read(read, 1)
    try:
        with pytest.raises(UsageError, match=f"being written by process {pid} "):
            b.fit(1, 1e-3, checkpoint_dir=tmp_path)
    finally:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    b.fit(1, 1e-3, checkpoint_dir=tmp_path)  # a killed writer leaves no stale lock
    assert len(b.history) == 1


def test_fine_tune_resumes_in_its_second_phase(mlp_learner, tmp_path):
    from hotstart.learner import Callback

    class Crash(Exception):
        pass

    class CrashAt(Callback):
        def after_batch(self):
            if self.learner.fit_index == 1 and self.learner.train_iter == 7:
                raise Crash

    ref = mlp_learner()
    ref.fine_tune(2, freeze_epochs=1)
    a = mlp_learner()
    a.add_cb(CrashAt())
    with pytest.raises(Crash):
        a.fine_tune(2, freeze_epochs=1, checkpoint_dir=tmp_path, checkpoint_every=3)
    assert checkpoints(tmp_path)[-1].name == "ckpt-001-000000006-0"  # 6 batches into the second phase
    b = mlp_learner()
    b.fine_tune(2, freeze_epochs=1, checkpoint_dir=tmp_path, resume=tmp_path, checkpoint_every=3)
    assert all(torch.equal(v, _state(ref)[k]) for k, v in _state(b).items())
    assert _no_time(b.history) == _no_time(ref.history) and b.recorder.losses == ref.recorder.losses


def test_a_resume_with_ema_and_discriminative_lrs_equals_an_uninterrupted_fit(mlp_learner, tmp_path):
    """The EMA's average and update count travel in the checkpoint; the per-group rates come back
    with the optimizer's groups and the schedule (issue 25)."""
    from hotstart.learner import EMA, Callback

    class Crash(Exception):
        pass

    class CrashAt(Callback):
        def after_batch(self):
            if self.learner.train_iter == 7:
                raise Crash

    lrs = slice(1e-3, 1e-2)
    ref_ema = EMA(decay=0.8)
    ref = mlp_learner(callbacks=[ref_ema])
    ref.fit_one_cycle(3, lrs)
    a = mlp_learner(callbacks=[EMA(decay=0.8), CrashAt()])
    with pytest.raises(Crash):
        a.fit_one_cycle(3, lrs, checkpoint_dir=tmp_path, checkpoint_every=3)
    assert checkpoints(tmp_path)[-1].name == "ckpt-000-000000006-0"  # mid-epoch: 6 batches, in epoch 1
    b_ema = EMA(decay=0.8)
    b = mlp_learner(callbacks=[b_ema])
    b.fit_one_cycle(3, lrs, checkpoint_dir=tmp_path, resume=tmp_path, checkpoint_every=3)
    assert b_ema.updates == ref_ema.updates == 15
    assert all(torch.equal(v, _state(ref)[k]) for k, v in _state(b).items())
    assert all(torch.equal(v, ref_ema.module.state_dict()[k]) for k, v in b_ema.module.state_dict().items())
    assert [g["lr"] for g in b.opt.param_groups] == [g["lr"] for g in ref.opt.param_groups]
    assert len({g["lr"] for g in b.opt.param_groups}) == 2  # two layer groups, two rates
    assert _no_time(b.history) == _no_time(ref.history) and b.recorder.losses == ref.recorder.losses
    c = mlp_learner(ema=False)  # the checkpoint holds an EMA: a resume without one is refused, naming it
    with pytest.raises(UsageError, match=r"EMA.*tasklearner\(ema=False\) leaves out the average"):
        c.fit_one_cycle(3, lrs, resume=tmp_path)


def test_a_fit_killed_with_its_loader_workers_alive_resumes_at_once(mlp_learner, tmp_path):
    """A preempted job requeued at once (issue 32): a fit with DataLoader worker processes is
    killed with SIGKILL in its second epoch and resumed immediately, while its orphaned workers
    still live (they notice the parent's death only after a while). The lock on the folder died
    with the killed process, so the resume is not refused; a lock that the workers inherit (flock
    belongs to the open file, which a fork shares) was, naming the dead process."""
    folder, ready = tmp_path / "ckpt", tmp_path / "ready"
    fresh = mlp_learner(num_workers=2)  # forked before anything ran: the parent resumes this copy

    def run():
        import multiprocessing

        from hotstart.learner import Callback

        class Stall(Callback):  # waits mid-epoch, its workers alive, to be killed
            def after_batch(self):
                if self.learner.epoch == 1 and self.learner.iter == 1:
                    workers = [p.pid for p in multiprocessing.active_children()]
                    ready.write_text(json.dumps(workers))
                    time.sleep(120)

        fresh.fit_one_cycle(3, 1e-2, checkpoint_dir=folder, callbacks=[Stall()])

    pid = _fork(run)
    workers = []
    try:
        deadline = time.monotonic() + 120
        while not ready.exists() or not ready.read_text():
            assert time.monotonic() < deadline, "the fit never reached its second epoch"
            time.sleep(0.05)
        workers = json.loads(ready.read_text())
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        alive = [w for w in workers if _alive(w)]
        assert alive, "the killed fit's loader workers were gone already: the case is not reproduced"
        fresh.fit_one_cycle(3, 1e-2, checkpoint_dir=folder, resume=folder)  # at once
        assert len(fresh.history) == 3 and fresh.history[0]["epoch"] == 0
    finally:
        for w in workers:  # the orphans, if still there (they exit by themselves within seconds)
            if _alive(w):
                os.kill(w, signal.SIGKILL)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_removing_a_file_with_a_checkpoints_name_leaves_nothing_behind(tmp_path):
    """A plain file named like a checkpoint (junk) was renamed to .trash-..., which rmtree cannot
    remove; the next removal of that name then failed mid-fit with NotADirectoryError."""
    from hotstart.learner.checkpoint.layout import remove_checkpoint

    for _ in range(2):
        (tmp_path / "ckpt-000-000000040-0").write_text("junk")
        remove_checkpoint(tmp_path / "ckpt-000-000000040-0")
        assert list(tmp_path.iterdir()) == []
    (tmp_path / "ckpt-000-000000050-0").mkdir()
    (tmp_path / "ckpt-000-000000050-0" / "model.safetensors").write_bytes(b"x")
    remove_checkpoint(tmp_path / "ckpt-000-000000050-0")
    assert list(tmp_path.iterdir()) == []


def test_a_checkpoint_folder_that_takes_no_files_is_named(mlp_learner, tmp_path, monkeypatch):
    """A read-only file system: the lock file cannot be created; the error names the checkpoint
    folder (it was a bare ``OSError`` naming ``.lock``)."""
    import errno

    from hotstart.learner.checkpoint import write
    from hotstart.write_errors import WriteError

    def read_only(folder):
        raise OSError(errno.EROFS, "Read-only file system", str(folder / ".lock"))

    monkeypatch.setattr(write, "FolderLock", read_only)
    with pytest.raises(WriteError, match=rf"cannot write {tmp_path / 'ck'} \(the checkpoint folder\): the file "
                                         r"system is read-only") as info:
        mlp_learner().fit(1, 1e-3, checkpoint_dir=tmp_path / "ck")
    assert info.value.errno == errno.EROFS
