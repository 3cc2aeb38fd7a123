"""The series benchmark's workload, shared by its two contenders (numpy only, as _data.py).

ItalyPowerDemand's 67 training series (1 channel, 24 steps): each epoch trains on them (batch 16,
drop_last: 4 batches) and evaluates them; the same InceptionTime (hotstart/models/inception_time.py),
AdamW (betas 0.9/0.99, eps 1e-5, wd 0.01) and one-cycle schedule in both.
"""
import argparse


def parse_args(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("--epochs", type=int, default=6)
    p.add_argument("--bs", type=int, default=16)
    p.add_argument("--lr", type=float, default=1e-2)
    p.add_argument("--nf", type=int, default=32, help="InceptionTime filters per branch (the paper's 32)")
    return p.parse_args(argv)


def series_per_epoch(n_train: int, bs: int) -> int:
    """Series one epoch touches: the full training batches, then every series evaluated."""
    return (n_train // bs) * bs + n_train
