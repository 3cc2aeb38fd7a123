"""Lightning: a LightningModule around the same timm model, Trainer.fit, torchmetrics accuracy.

Data, augmentation, workers (`--workers`), optimizer and schedule are the plain loop's (see plain_fit.py).
"""
from _milestones import EpochClock, mark, result
import _data

args = _data.parse_args()
import pytorch_lightning as pl
import timm
import torch
import torch.nn.functional as F
import torchmetrics
from torch.utils.data import DataLoader
import torchvision.transforms.v2  # noqa: F401  (loaded before the "imported" milestone, as before)

mark("imported")
pl.seed_everything(0, verbose=False)
images, labels, classes = _data.load(args)
train_ds, valid_ds = _data.torchvision_datasets(args, images, labels, classes)


class Classifier(pl.LightningModule):
    def __init__(self, steps):
        super().__init__()
        self.model = timm.create_model(args.backbone, pretrained=False, num_classes=len(classes),
                                       in_chans=1 if args.data == "digits" else 3)
        self.acc = torchmetrics.Accuracy(task="multiclass", num_classes=len(classes))
        self.steps = steps

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
        opt = torch.optim.AdamW(self.parameters(), lr=args.lr, betas=(0.9, 0.99), eps=1e-5, weight_decay=0.01)
        sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=args.lr, total_steps=self.steps, pct_start=0.25,
                                                    div_factor=25.0, final_div_factor=1e5 / 25.0,
                                                    base_momentum=0.85, max_momentum=0.95)
        return {"optimizer": opt, "lr_scheduler": {"scheduler": sched, "interval": "step"}}


clock = EpochClock()
per_epoch = _data.images_per_epoch(len(images), args.bs)


class EpochEnd(pl.Callback):
    def on_train_epoch_end(self, trainer, module):  # runs after the epoch's validation
        clock.epoch_end(per_epoch)


workers = _data.loader_kwargs(args)
train_dl = DataLoader(train_ds, batch_size=args.bs, shuffle=True, drop_last=True, **workers)
valid_dl = DataLoader(valid_ds, batch_size=args.bs, **workers)
module = Classifier(args.epochs * len(train_dl))
trainer = pl.Trainer(max_epochs=args.epochs, accelerator="cpu", logger=False, enable_checkpointing=False,
                     enable_progress_bar=False, callbacks=[EpochEnd()])
mark("ready")
trainer.fit(module, train_dl, valid_dl)
mark("fit_end")
result(accuracy=float(trainer.callback_metrics["accuracy"]), train_loss=float(trainer.callback_metrics["train_loss"]))
