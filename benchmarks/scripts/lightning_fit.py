"""Lightning: a LightningModule around the same timm model (scripts/_lightning_module.py),
Trainer.fit, torchmetrics accuracy.

Data, augmentation, workers (`--workers`), optimizer and schedule are the plain loop's (see
plain_fit.py); `--seed` goes to ``pl.seed_everything``, as a Lightning user seeds a run.
"""
from _milestones import EpochClock, mark, result
import _data

args = _data.parse_args()
import pytorch_lightning as pl
from _lightning_module import Classifier
from torch.utils.data import DataLoader
import torchvision.transforms.v2  # noqa: F401  (loaded before the "imported" milestone, as before)

mark("imported")
pl.seed_everything(args.seed, verbose=False)
images, labels, classes = _data.load(args)
train_ds, valid_ds = _data.torchvision_datasets(args, images, labels, classes)


clock = EpochClock()
per_epoch = _data.images_per_epoch(len(images), args.bs)


class EpochPhases(pl.Callback):
    """The milestones of scripts/_milestones.py from Lightning's hooks. Validation runs at the end of
    each training epoch, before ``on_train_epoch_end``; the sanity check's validation is no epoch's."""

    def on_train_epoch_start(self, trainer, module):
        clock.train_start()

    def on_train_batch_start(self, trainer, module, batch, batch_idx):
        clock.batch_start()

    def on_train_batch_end(self, trainer, module, outputs, batch, batch_idx):
        clock.batch_end()

    def on_validation_epoch_start(self, trainer, module):
        if not trainer.sanity_checking:
            clock.train_end()

    def on_train_epoch_end(self, trainer, module):  # runs after the epoch's validation
        clock.epoch_end(per_epoch, float(trainer.callback_metrics["accuracy"]))


workers = _data.loader_kwargs(args)
train_dl = DataLoader(train_ds, batch_size=args.bs, shuffle=True, drop_last=True, **workers)
valid_dl = DataLoader(valid_ds, batch_size=args.bs, **workers)
module = Classifier(args.backbone, len(classes), in_chans=1 if args.data == "digits" else 3, lr=args.lr,
                    steps=args.epochs * len(train_dl))
trainer = pl.Trainer(max_epochs=args.epochs, accelerator="cpu", logger=False, enable_checkpointing=False,
                     enable_progress_bar=False, callbacks=[EpochPhases()])
mark("ready")
trainer.fit(module, train_dl, valid_dl)
mark("fit_end")
result(accuracy=float(trainer.callback_metrics["accuracy"]), train_loss=float(trainer.callback_metrics["train_loss"]))
