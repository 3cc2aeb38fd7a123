"""What the non-finite guard and its NaN locator cost a normal fit: training img/s as shipped
against the same fit with the guard removed, alternating in one process.

    python benchmarks/scripts/nan_guard_cost.py                 # digits, 16x16, default CNN, bs 32
    python benchmarks/scripts/nan_guard_cost.py --backbone resnet10t --rounds 4

Shipped, every fit has a `NonFiniteGuard` (learner/callbacks/nan_guard.py): per training batch it
appends the loss's "is finite" flag (a device op, no sync) and keeps a reference to the batch,
which the locator (learner/nonfinite_origin.py) would rerun with hooks if a check failed; every
25 optimizer steps one check reads the flags and the gradients' and buffers' finiteness (one
sync). The locator adds no hook on the normal path: the script checks that no module has a
forward, backward or pre-hook during the shipped fits, and fails otherwise.

One learner, one epoch per fit (`learner.fit(1)`; `--epochs E`: `learner.fit(E)`, and only the
epochs after the first are timed: the steady state, without a fit's one-time costs such as the
guard's first copies of the weights), the two settings alternating (guard removed with
`learner.remove_cb` and put back), after one warm-up fit of each. Only the training phase is
timed (a callback from before_train to after_train). It prints one line: the median img/s of each,
their ratio (shipped / guard removed; 1.00 = no cost), and the spread of the round-by-round ratios.

    python benchmarks/scripts/nan_guard_cost.py --rounds 9 --control   # guard removed in both arms

`--control` is the A/A run: the same alternation with the guard removed from both arms, so its
ratios show how far apart two identical settings land on this machine. A shipped/removed ratio
inside the control's spread is a cost the benchmark cannot tell from noise.
"""
import argparse
import statistics
import sys
import time


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=600, help="first N digits (0 = all 1,797); 80%% train")
    ap.add_argument("--size", type=int, default=16)
    ap.add_argument("--bs", type=int, default=32)
    ap.add_argument("--backbone", default=None, help="a timm name (default: the task's default small CNN)")
    ap.add_argument("--rounds", type=int, default=5, help="timed fits of each setting")
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--epochs", type=int, default=1, help="epochs per fit; above 1, the first is not timed")
    ap.add_argument("--control", action="store_true", help="A/A: the guard removed in both arms (the noise)")
    args = ap.parse_args(argv)

    import torch

    from hotstart import ImageClassificationSingle, datasets, tasklearner
    from hotstart.learner.callbacks import Callback, NonFiniteGuard

    class TrainTimer(Callback):
        """Seconds of each training phase, and whether any module had a hook during it."""
        order = 100

        def __init__(self):
            self.seconds, self.hooked, self.epochs = None, [], []

        def before_train(self):
            self._start = time.perf_counter()

        def after_batch(self):
            if self.learner.training and self.learner.iter == 0:
                self.hooked = [name for name, m in self.learner.model.named_modules()
                               if m._forward_hooks or m._forward_pre_hooks or m._backward_hooks]

        def after_train(self):
            self.seconds = time.perf_counter() - self._start
            self.epochs.append(self.seconds)

    data, blocks = datasets.load("digits")
    if args.n:
        data = data.subset(list(range(args.n)))
    task = ImageClassificationSingle(blocks, size=(args.size, args.size), augment={"flip": 0.0})
    timer = TrainTimer()
    learner = tasklearner(task, data, backbone=args.backbone, batch_size=args.bs, seed=0, progress=False,
                          callbacks=[timer])
    guard = learner.cb(NonFiniteGuard)
    if guard is None:
        raise SystemExit("no NonFiniteGuard in a default learner: nothing to measure")
    n_train = len(learner.train_loader.dataset)

    def fit(arm: bool) -> float:
        with_guard = arm and not args.control
        if with_guard and learner.cb(NonFiniteGuard) is None:
            learner.add_cb(guard)
        elif not with_guard and learner.cb(NonFiniteGuard) is not None:
            learner.remove_cb(guard)
        timer.epochs = []
        learner.fit(args.epochs, args.lr)
        seconds = sum(timer.epochs[1:]) / (args.epochs - 1) if args.epochs > 1 else timer.seconds
        print(f"  {'shipped' if with_guard else 'removed'}{' (arm A)' if args.control and arm else ''}: "
              f"{n_train / seconds:.0f} img/s", file=sys.stderr,
              flush=True)
        if with_guard and timer.hooked:
            raise SystemExit(f"hooks on the normal path: {timer.hooked[:5]}")
        return n_train / seconds

    fit(True), fit(False)  # warm-up: first-call costs out of the way
    rates = {True: [], False: []}
    for r in range(args.rounds):
        for arm in ((True, False) if r % 2 == 0 else (False, True)):
            rates[arm].append(fit(arm))
    shipped, removed = statistics.median(rates[True]), statistics.median(rates[False])
    paired = sorted(a / b for a, b in zip(rates[True], rates[False]))
    name = "control (removed/removed, A/A)" if args.control else "shipped/removed"
    print(f"nan_guard_cost: {name} img/s ratio {shipped / removed:.3f}; round-by-round ratios median "
          f"{statistics.median(paired):.3f}, range {paired[0]:.3f}-{paired[-1]:.3f} (arm A {shipped:.0f} img/s, "
          f"arm B {removed:.0f} img/s; median of {args.rounds} alternating fits of {args.epochs} epoch(s), "
          f"{'the epochs after the first timed, ' if args.epochs > 1 else ''}training epochs of "
          f"{n_train} digits at {args.size}x{args.size}, bs {args.bs}, {args.backbone or 'default CNN'}, "
          f"{torch.get_num_threads()} threads; no hooks on the normal path)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
