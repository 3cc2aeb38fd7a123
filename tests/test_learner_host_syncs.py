"""No device-to-host sync per batch by default: the Recorder, the progress bar and NonFiniteGuard
keep their per-batch numbers on the device and read them every few steps and at the epoch's end.

The test counts the calls that read a tensor's value on the host (``item``, ``float()``,
``int()``, ``bool()``, ``tolist``, ``cpu``, ``numpy``, formatting): each is a sync on a GPU.
Calls made by the data pipeline are left out (encodings, blocks, datasets, torchvision, the
DataLoader: they run on the host before the batch moves to the device). One epoch of 10 and one
of 20 training batches must make the same number of syncs.

Measured on this CPU with the default metrics (200 and 400 digits, batch 16, 10 and 20 training
batches): before (hotstart main, 2026-12-01) 46 and 86 syncs per epoch, three per training batch
(the Recorder's and the guard's ``float(loss)``, the guard's gradient check) and four per
validation batch; after, 13 and 17: the only ones left that grow are hotstart/metrics.py's
target range check, two per validation batch. Without metrics: the same count for both.
"""
import contextlib
import sys

import torch

NAMES = ("item", "__float__", "__int__", "__bool__", "tolist", "cpu", "numpy", "__index__", "__format__")
DATA_PIPELINE = ("/encodings/", "/blocks/", "/datasets/", "torchvision", "torch/utils/data", "/learner/data.py")


@contextlib.contextmanager
def counting_syncs():
    """A list that gets one "name file:line" entry per host read of a tensor, outside the data pipeline."""
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
                    calls.append(caller)
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


def test_an_epoch_makes_no_sync_per_training_batch(make_learner):
    counts = {}
    for batch_size in (16, 8):  # 160 training digits: 10 and 20 batches an epoch
        learner = make_learner(batch_size=batch_size)
        learner.validate()  # builds what is built once (the metric objects)
        with counting_syncs() as calls:
            learner.fit(1, 1e-3)
        assert learner.n_iter == 160 // batch_size
        # hotstart/metrics.py checks each validation batch's targets (2 syncs a batch): not the loop's
        counts[batch_size] = [c for c in calls if not c.startswith("__int__ metrics.py")]
    few, many = counts[16], counts[8]
    assert len(few) == len(many), (sorted(few), sorted(many))
    assert len(many) <= 8, sorted(many)  # at the epoch's end: the guard's checks, the losses, the metrics


def test_check_every_1_checks_each_batch(make_learner):
    """The guard's old behaviour is one argument away: a check (one sync) at every step."""
    from hotstart.learner.callbacks.nan_guard import NonFiniteGuard

    learner = make_learner(metrics={})
    learner.cb(NonFiniteGuard).check_every = 1
    with counting_syncs() as calls:
        learner.fit(1, 1e-3)
    assert sum("nan_guard.py" in c for c in calls) >= learner.n_iter
