"""The loss curves: training loss per batch, validation loss at the end of each epoch."""
from __future__ import annotations


def loss_figure(losses, history, *, ax=None):
    """`losses`: the training loss of each batch; `history`: one dict per epoch with ``valid_loss``."""
    import matplotlib.pyplot as plt

    if ax is None:
        fig, ax = plt.subplots(figsize=(6, 4))
    else:
        fig = ax.figure
    ax.plot(range(1, len(losses) + 1), losses, label="train (per batch)", alpha=0.8)
    if history and losses:
        per_epoch = len(losses) / len(history)
        ax.plot([per_epoch * (i + 1) for i in range(len(history))], [h["valid_loss"] for h in history],
                "o-", label="valid (per epoch)")
    ax.set_xlabel("batch")
    ax.set_ylabel("loss")
    ax.legend()
    return fig
