"""The LightningModule every Lightning contender trains (lightning_fit.py, folder_ab.py): one
definition, so that both measure the same module.

A timm model, cross-entropy, torchmetrics accuracy, and the plain loop's AdamW; with `steps`, the
plain loop's one-cycle schedule over that many steps, without it a constant `lr` (folder_ab.py:
the schedule does not change the cost of a step).
"""
import pytorch_lightning as pl
import timm
import torch
import torch.nn.functional as F
import torchmetrics


class Classifier(pl.LightningModule):
    def __init__(self, backbone: str, n_classes: int, *, in_chans: int = 3, lr: float, steps: int | None = None):
        super().__init__()
        self.model = timm.create_model(backbone, pretrained=False, num_classes=n_classes, in_chans=in_chans)
        self.acc = torchmetrics.Accuracy(task="multiclass", num_classes=n_classes)
        self.lr, self.steps = lr, steps

    def training_step(self, batch, _):
        xb, yb = batch
        loss = F.cross_entropy(self.model(xb), yb)
        self.log("train_loss", loss)
        return loss

    def validation_step(self, batch, _):
        xb, yb = batch
        self.acc(self.model(xb), yb)
        self.log("accuracy", self.acc, on_epoch=True)

    def configure_optimizers(self):
        opt = torch.optim.AdamW(self.parameters(), lr=self.lr, betas=(0.9, 0.99), eps=1e-5, weight_decay=0.01)
        if self.steps is None:
            return opt
        sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=self.lr, total_steps=self.steps, pct_start=0.25,
                                                    div_factor=25.0, final_div_factor=1e5 / 25.0,
                                                    base_momentum=0.85, max_momentum=0.95)
        return {"optimizer": opt, "lr_scheduler": {"scheduler": sched, "interval": "step"}}
