"""Milestones as JSON lines on stdout, read by benchmarks/run.py: the protocol every contender speaks.

Each line is ``{"milestone": name, "t": time.time(), "pc": time.perf_counter(), ...}``. The parent
records ``time.time()`` right before it starts this process, so ``t - parent_start`` is the time
from process start (interpreter start-up included). Kept tiny and stdlib-only so that importing it
costs nothing in a measurement.

Milestones, in order: ``imported`` (the script's imports done), ``ready`` (data loaders, model and
optimizer built), then for every epoch ``train_start`` (its first training batch is about to be
fetched), ``train_end`` (its last training step done; ``data_s``: the seconds its training loop
waited for batches, when the contender reports them), ``epoch_end`` (validation done; ``images``
the epoch touched and, when the contender reports it, its validation ``accuracy``), and
``first_epoch_end`` once; ``fit_end`` at the end. Then one ``{"result": {...}}`` line.
"""
import json
import sys
import time


def mark(name, **extra):
    print(json.dumps({"milestone": name, "t": time.time(), "pc": time.perf_counter(), **extra}), flush=True)


class EpochClock:
    """Marks each epoch's phases. The loop calls ``train_start()`` before its first training batch,
    ``batch_start()`` when a batch has arrived and ``batch_end()`` when its step is done (or wraps
    its training loader in ``timed(loader)``, which does both), ``train_end()`` after the last step,
    and ``epoch_end(n_images, accuracy)`` after validation. Only ``epoch_end`` is required: a loop
    that does not report the others still gives the epoch's end and accuracy."""

    def __init__(self):
        self.epoch = 0
        self.data_s = None  # this epoch's wait for training batches; None until the loop reports one
        self._since = None

    def train_start(self):
        self.data_s, self._since = 0.0, time.perf_counter()
        mark("train_start", epoch=self.epoch + 1)

    def batch_start(self):
        if self._since is not None:
            self.data_s += time.perf_counter() - self._since

    def batch_end(self):
        self._since = time.perf_counter()

    def timed(self, loader):
        """Yield `loader`'s batches, timing the waits between `train_start` / the previous batch's
        step and each batch's arrival (the loop's step runs between two of these yields)."""
        self.train_start()
        for batch in loader:
            self.batch_start()
            yield batch
            self.batch_end()

    def train_end(self):
        extra = {} if self.data_s is None else {"data_s": self.data_s}
        self._since = None
        mark("train_end", epoch=self.epoch + 1, **extra)

    def epoch_end(self, n_images, accuracy=None):
        self.epoch += 1
        if self.epoch == 1:
            mark("first_epoch_end")
        extra = {} if accuracy is None else {"accuracy": float(accuracy)}
        mark("epoch_end", epoch=self.epoch, images=int(n_images), **extra)


def result(**values):
    """A final record: e.g. validation accuracy, so each contender's work can be checked."""
    print(json.dumps({"result": values}), flush=True)


if __name__ == "__main__":  # the runner's smoke test: a trivial "contender"; argv: epochs, then accuracies
    mark("imported")
    epochs = int(sys.argv[1]) if len(sys.argv) > 1 else 2
    accuracies = [float(a) for a in sys.argv[2:]]
    mark("ready")
    clock = EpochClock()
    for i in range(epochs):
        for _ in clock.timed(range(2)):
            time.sleep(0.005)
        clock.train_end()
        clock.epoch_end(100, accuracies[i] if i < len(accuracies) else None)
    mark("fit_end")
    result(accuracy=accuracies[-1] if accuracies else 1.0)
