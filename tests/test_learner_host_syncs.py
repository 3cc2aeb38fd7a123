"""No device-to-host sync per batch by default: the Recorder, the progress bar and NonFiniteGuard
keep their per-batch numbers on the device and read them every few steps and at the epoch's end.

The test counts the calls that read a tensor's value on the host (``item``, ``float()``,
``int()``, ``bool()``, ``tolist``, ``cpu``, ``numpy``, formatting): each is a sync on a GPU.
Calls made by the data pipeline are left out (encodings, blocks, datasets, torchvision, the
DataLoader: they run on the host before the batch moves to the device). One epoch of 10 and one
of 20 training batches must make the same number of syncs.

Measured on this CPU with the default metrics (200 digits, batch 16 and 8: 10 and 20 training
batches, 3 and 5 validation batches), syncs per epoch as training / validation / epoch end:
- hotstart main before the redesign: 46 and 86 in all, three per training batch (the Recorder's
  and the guard's ``float(loss)``, the guard's gradient check) and four per validation batch;
- after the deferred guard and Recorder: 1 / 9 / 3 and 1 / 13 / 3 (13 and 17): hotstart/metrics.py's
  target range check read two numbers per validation batch;
- now (the range check is a device flag, and the loss sum, the values and the flags are read in
  one transfer, metrics.read_on_host; the Recorder reads its two sums and the epoch's losses in
  one transfer): 1 / 2 / 1 and 1 / 2 / 1 (4 and 4). The validation phase's two are that one read
  and the guard's check at its end.
"""
import contextlib
import sys

import torch

NAMES = ("item", "__float__", "__int__", "__bool__", "tolist", "cpu", "numpy", "__index__", "__format__")
DATA_PIPELINE = ("/encodings/", "/blocks/", "/datasets/", "torchvision", "torch/utils/data", "/learner/data.py")


@contextlib.contextmanager
def counting_syncs(phase=None):
    """A list that gets one "name file:line" entry per host read of a tensor, outside the data
    pipeline; with `phase` (a one-item list the caller updates), "phase name file:line"."""
    calls, depth = [], [0]
    saved = {name: getattr(torch.Tensor, name) for name in NAMES}

    def counted(name, method):
        def read(self, *args, **kwargs):
            if depth[0] == 0:  # a read inside a read (format calls item) is one sync
                frame = sys._getframe(1)
                caller = f"{name} {frame.f_code.co_filename.rsplit('/', 1)[-1]}:{frame.f_lineno}"
                while frame is not None:
                    if any(part in frame.f_code.co_filename for part in DATA_PIPELINE):
                        break
                    frame = frame.f_back
                else:
                    calls.append(caller if phase is None else f"{phase[0]} {caller}")
            depth[0] += 1
            try:
                return method(self, *args, **kwargs)
            finally:
                depth[0] -= 1
        return read

    for name, method in saved.items():
        setattr(torch.Tensor, name, counted(name, method))
    try:
        yield calls
    finally:
        for name, method in saved.items():
            setattr(torch.Tensor, name, method)


def test_the_counter_counts_host_reads():
    with counting_syncs() as calls:
        t = torch.ones(3)
        float(t.sum()), t.tolist(), bool(t.all()), f"{t[0]:.2f}"
    assert len(calls) >= 4 and all("test_learner_host_syncs.py" in c for c in calls)


def test_an_epoch_makes_no_sync_per_batch(make_learner):
    """Neither per training batch nor per validation batch: 10 or 20 training batches and 3 or 5
    validation batches make the same syncs in each phase."""
    from hotstart.learner.callbacks.base import Callback

    phase = ["train"]

    class ValidationStarts(Callback):
        order = -1000  # before every other callback's before_validate

        def before_validate(self):
            phase[0] = "valid"

    class ValidationEnds(Callback):
        order = 1000  # after every other callback's after_validate (the metrics' one read)

        def after_validate(self):
            phase[0] = "end"

    counts = {}
    for batch_size in (16, 8):  # 160 training digits: 10 and 20 batches; 40 validation digits: 3 and 5
        learner = make_learner(batch_size=batch_size)
        learner.validate()  # builds what is built once (the metric objects)
        phase[0] = "train"
        with counting_syncs(phase) as calls:
            learner.fit(1, 1e-3, callbacks=[ValidationStarts(), ValidationEnds()])
        assert learner.n_iter == 160 // batch_size and phase[0] == "end"
        assert learner.history[-1]["accuracy"] == learner.validate()["accuracy"]  # the one read is the value
        counts[batch_size] = {p: sorted(c for c in calls if c.startswith(p + " ")) for p in ("train", "valid", "end")}
    few, many = counts[16], counts[8]
    assert {p: len(c) for p, c in few.items()} == {p: len(c) for p, c in many.items()}, (few, many)
    assert len(many["valid"]) <= 2, many["valid"]  # the metrics' and loss's one read, the guard's check
    assert len(many["end"]) <= 1, many["end"]  # the Recorder's one read of the epoch's losses
    assert sum(len(c) for c in many.values()) <= 4, many  # with the guard's check of the training phase


def test_check_every_1_checks_each_batch(make_learner):
    """The guard's old behaviour is one argument away: a check (one sync) at every step."""
    from hotstart.learner.callbacks.nan_guard import NonFiniteGuard

    learner = make_learner(metrics={})
    learner.cb(NonFiniteGuard).check_every = 1
    with counting_syncs() as calls:
        learner.fit(1, 1e-3)
    assert sum("nan_guard.py" in c for c in calls) >= learner.n_iter
