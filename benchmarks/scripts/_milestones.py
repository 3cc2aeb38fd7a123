"""Milestones as JSON lines on stdout, read by benchmarks/run.py.

Each line is ``{"milestone": name, "t": time.time(), "pc": time.perf_counter(), ...}``. The parent
records ``time.time()`` right before it starts this process, so ``t - parent_start`` is the time
from process start (interpreter start-up included). Kept tiny and stdlib-only so that importing it
costs nothing in a measurement.
"""
import json
import sys
import time


def mark(name, **extra):
    print(json.dumps({"milestone": name, "t": time.time(), "pc": time.perf_counter(), **extra}), flush=True)


class EpochClock:
    """Call ``epoch_end(n_images)`` after each epoch (train + valid); prints the milestones
    ``first_epoch_end`` and ``epoch_end`` (every epoch, with its image count)."""

    def __init__(self):
        self.epoch = 0

    def epoch_end(self, n_images):
        self.epoch += 1
        if self.epoch == 1:
            mark("first_epoch_end")
        mark("epoch_end", epoch=self.epoch, images=int(n_images))


def result(**values):
    """A final record: e.g. validation accuracy, so each contender's work can be checked."""
    print(json.dumps({"result": values}), flush=True)


if __name__ == "__main__":  # the runner's smoke test: a trivial "contender"
    mark("imported")
    clock = EpochClock()
    for _ in range(int(sys.argv[1]) if len(sys.argv) > 1 else 2):
        time.sleep(0.01)
        clock.epoch_end(100)
    mark("fit_end")
    result(accuracy=1.0)
