"""Lightning: a LightningModule around the same timm model, Trainer.fit, torchmetrics accuracy.

Data, augmentation, workers (`--workers`), optimizer and schedule are the plain loop's (see plain_fit.py).
"""
from _milestones import EpochClock, mark, result
import _data

args = _data.parse_args()
import pytorch_lightning as pl
from _lightning_module import Classifier
from torch.utils.data import DataLoader
import torchvision.transforms.v2  # noqa: F401  (loaded before the "imported" milestone, as before)

mark("imported")
pl.seed_everything(0, verbose=False)
images, labels, classes = _data.load(args)
train_ds, valid_ds = _data.torchvision_datasets(args, images, labels, classes)


clock = EpochClock()
per_epoch = _data.images_per_epoch(len(images), args.bs)


class EpochEnd(pl.Callback):
    def on_train_epoch_end(self, trainer, module):  # runs after the epoch's validation
        clock.epoch_end(per_epoch)


workers = _data.loader_kwargs(args)
train_dl = DataLoader(train_ds, batch_size=args.bs, shuffle=True, drop_last=True, **workers)
valid_dl = DataLoader(valid_ds, batch_size=args.bs, **workers)
module = Classifier(args.backbone, len(classes), in_chans=1 if args.data == "digits" else 3, lr=args.lr,
                    steps=args.epochs * len(train_dl))
trainer = pl.Trainer(max_epochs=args.epochs, accelerator="cpu", logger=False, enable_checkpointing=False,
                     enable_progress_bar=False, callbacks=[EpochEnd()])
mark("ready")
trainer.fit(module, train_dl, valid_dl)
mark("fit_end")
result(accuracy=float(trainer.callback_metrics["accuracy"]), train_loss=float(trainer.callback_metrics["train_loss"]))
