"""num_workers="auto" (hotstart/learner/data.py: auto_num_workers): workers only when loading an
epoch costs more than starting them, one per core beside the main process's, at most 8."""
import time

import pytest
from torch.utils.data import Dataset

from hotstart.errors import UsageError
from hotstart.learner.data import FEW_CORES_SAMPLE_S, WORKER_WORTH_S, auto_num_workers, make_loader, usable_cores, workers_for_cores


class Slow(Dataset):
    """Samples that take `seconds` each to load, as a decoded photograph does."""

    def __init__(self, n, seconds):
        self.n, self.seconds = n, seconds

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        time.sleep(self.seconds)
        return i


class Broken(Slow):
    def __getitem__(self, i):
        raise OSError(f"sample {i}: truncated file")


def test_workers_follow_the_cores_when_loading_an_epoch_costs_more_than_starting_them():
    slow = Slow(n=int(4 * WORKER_WORTH_S / 0.01), seconds=0.01)  # an epoch: ~4x the threshold
    assert auto_num_workers(slow, cores=2) == 1
    assert auto_num_workers(slow, cores=6) == 5
    assert auto_num_workers(slow, cores=64) == 8
    assert auto_num_workers(slow, cores=1) == 0  # no core to spare
    assert [workers_for_cores(c) for c in (1, 2, 3, 16)] == [0, 1, 2, 8]


def test_two_cores_start_a_worker_only_for_samples_that_cost_more_than_the_cores_lose():
    light = Slow(n=int(4 * WORKER_WORTH_S / 0.001), seconds=0.001)  # an epoch over the threshold, cheap samples
    assert auto_num_workers(light, cores=2) == 0  # the compute threads hold both cores
    assert auto_num_workers(light, cores=4) == 3
    heavy = Slow(n=int(4 * WORKER_WORTH_S / FEW_CORES_SAMPLE_S), seconds=2 * FEW_CORES_SAMPLE_S)
    assert auto_num_workers(heavy, cores=2) == 1


def test_cheap_or_failing_samples_stay_in_the_main_process():
    assert auto_num_workers(Slow(n=50, seconds=0.0), cores=8) == 0  # in-memory: far under the threshold
    assert auto_num_workers(Broken(n=1000, seconds=0.0), cores=8) == 0  # the loop reports the error itself


class Counting(Slow):
    reads = 0

    def __getitem__(self, i):
        self.reads += 1
        return super().__getitem__(i)


def test_make_loader_chooses_at_the_first_read_and_refuses_bad_counts():
    slow = Counting(n=int(4 * WORKER_WORTH_S / 0.01), seconds=0.01)
    loader = make_loader(slow, batch_size=4, train=True, num_workers="auto")
    assert slow.reads == 0 and loader.num_workers == 0  # building reads no sample
    assert loader.choose_workers() == auto_num_workers(slow) == workers_for_cores(usable_cores())
    cheap = make_loader(Slow(8, 0.0), batch_size=4, train=False, num_workers="auto")
    assert [b.tolist() for b in cheap] == [[0, 1, 2, 3], [4, 5, 6, 7]] and cheap.num_workers == 0
    for bad in (-1, 1.5, "many", True):
        with pytest.raises(UsageError, match="num_workers"):
            make_loader(Slow(8, 0.0), batch_size=4, train=True, num_workers=bad)
