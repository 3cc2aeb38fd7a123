"""The plain PyTorch training loop that every "plain" contender shares (plain_fit.py,
timeseries_plain_fit.py): one helper, so both baselines train exactly alike.

AdamW (betas (0.9, 0.99), eps 1e-5, wd 0.01) and a one-cycle schedule (warm-up 25%, div 25,
final lr_max/1e5, momentum 0.95 -> 0.85), hotstart's and fastai's defaults; cross-entropy; an
epoch is the training batches, then validation accuracy; `EpochClock` marks each epoch's end.
"""
from _milestones import EpochClock, mark


def fit(model, train_dl, valid_dl, *, epochs: int, lr: float, images_per_epoch: int):
    """Train `model` for `epochs`; returns (validation accuracy, last training loss)."""
    import torch

    opt = torch.optim.AdamW(model.parameters(), lr=lr, betas=(0.9, 0.99), eps=1e-5, weight_decay=0.01)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=lr, total_steps=epochs * len(train_dl),
                                                pct_start=0.25, div_factor=25.0, final_div_factor=1e5 / 25.0,
                                                base_momentum=0.85, max_momentum=0.95)
    mark("ready")
    clock = EpochClock()
    correct = total = 0
    loss = torch.tensor(float("nan"))
    for _ in range(epochs):
        correct, total, loss = one_epoch(model, opt, train_dl, valid_dl, sched=sched)
        clock.epoch_end(images_per_epoch)
    mark("fit_end")
    return correct / max(total, 1), float(loss.item())


def one_epoch(model, opt, train_dl, valid_dl, *, sched=None):
    """One epoch of the plain loop: the training batches (cross-entropy, `opt`, `sched` if any),
    then validation; returns (correct, total, last training loss)."""
    import torch
    import torch.nn.functional as F

    loss = torch.tensor(float("nan"))
    model.train()
    for xb, yb in train_dl:
        loss = F.cross_entropy(model(xb), yb)
        loss.backward()
        opt.step()
        if sched is not None:
            sched.step()
        opt.zero_grad(set_to_none=True)
    model.eval()
    correct = total = 0
    with torch.no_grad():
        for xb, yb in valid_dl:
            correct += (model(xb).argmax(1) == yb).sum().item()
            total += len(yb)
    return correct, total, loss
