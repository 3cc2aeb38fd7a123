"""The plain PyTorch training loop that every "plain" contender shares (plain_fit.py,
timeseries_plain_fit.py, folder_ab.py) and the expert's loop (expert_fit.py) is: one helper, so that
they train exactly alike except for what `Speedups` names.

AdamW (betas (0.9, 0.99), eps 1e-5, wd 0.01) and a one-cycle schedule (warm-up 25%, div 25,
final lr_max/1e5, momentum 0.95 -> 0.85), hotstart's and fastai's defaults; cross-entropy; an
epoch is the training batches, then validation accuracy; `EpochClock` marks each epoch's phases
and its validation accuracy (scripts/_milestones.py).
"""
from dataclasses import dataclass

from _milestones import EpochClock, mark


@dataclass(frozen=True)
class Speedups:
    """What an expert switches on by hand (all off: the plain fp32 loop).

    - `bf16`: forward and loss under ``torch.autocast(device, dtype=torch.bfloat16)`` (weights,
      gradients and the optimizer stay fp32), in training and validation;
    - `channels_last`: the model's weights and every batch in ``torch.channels_last`` layout;
    - `fused_adamw`: ``AdamW(fused=True)``, one kernel for the whole update instead of a loop
      over the parameters.
    """
    bf16: bool = False
    channels_last: bool = False
    fused_adamw: bool = False


PLAIN = Speedups()


def fit(model, train_dl, valid_dl, *, epochs: int, lr: float, images_per_epoch: int, speedups: Speedups = PLAIN):
    """Train `model` for `epochs`; returns (validation accuracy, last training loss)."""
    import torch

    if speedups.channels_last:
        model = model.to(memory_format=torch.channels_last)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, betas=(0.9, 0.99), eps=1e-5, weight_decay=0.01,
                            **({"fused": True} if speedups.fused_adamw else {}))
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=lr, total_steps=epochs * len(train_dl),
                                                pct_start=0.25, div_factor=25.0, final_div_factor=1e5 / 25.0,
                                                base_momentum=0.85, max_momentum=0.95)
    mark("ready")
    clock = EpochClock()
    correct = total = 0
    loss = torch.tensor(float("nan"))
    for _ in range(epochs):
        correct, total, loss = one_epoch(model, opt, train_dl, valid_dl, sched=sched, clock=clock, speedups=speedups)
        clock.epoch_end(images_per_epoch, correct / max(total, 1))
    mark("fit_end")
    return correct / max(total, 1), float(loss.item())


def one_epoch(model, opt, train_dl, valid_dl, *, sched=None, clock=None, speedups: Speedups = PLAIN):
    """One epoch of the plain loop: the training batches (cross-entropy, `opt`, `sched` if any),
    then validation; returns (correct, total, last training loss). With a `clock`, marks the
    training phase's start and end and its wait for batches."""
    import contextlib

    import torch
    import torch.nn.functional as F

    device = next(model.parameters()).device.type
    autocast = (lambda: torch.autocast(device, dtype=torch.bfloat16)) if speedups.bf16 else contextlib.nullcontext
    layout = (lambda x: x.contiguous(memory_format=torch.channels_last)) if speedups.channels_last else (lambda x: x)
    loss = torch.tensor(float("nan"))
    model.train()
    for xb, yb in (clock.timed(train_dl) if clock else train_dl):
        with autocast():
            loss = F.cross_entropy(model(layout(xb)), yb)
        loss.backward()
        opt.step()
        if sched is not None:
            sched.step()
        opt.zero_grad(set_to_none=True)
    if clock:
        clock.train_end()
    model.eval()
    correct = total = 0
    with torch.no_grad(), autocast():
        for xb, yb in valid_dl:
            correct += (model(layout(xb)).argmax(1) == yb).sum().item()
            total += len(yb)
    return correct, total, loss
