"""fastai: vision_learner with a timm name, fit_one_cycle.

`--data folder`: ``ImageDataLoaders.from_folder`` on the same JPEG folder (fastai opens and
decodes each file every epoch, as the others do), the split of `valid_pct=0.2, seed=0`.
`--data jpegdigits`: ``from_folder`` on its train/ and valid/ folders (fastai's own layout). Other
data: a DataBlock on the in-memory items, validated on the same fixed images as every other
contender (_data.train_valid).

Augmentation as close to hotstart's defaults as fastai's own transforms get: RandomResizedCrop
(min_scale 0.7) per item, then flip (not on digits), rotate +-10 and lighting 0.2 on the batch (no
warp, no zoom); the workers of `--workers` (default 0), as the other contenders. `--seed` goes to
fastai's ``set_seed``, as a fastai user seeds a run.
"""
from _milestones import EpochClock, mark, result
import _data

args = _data.parse_args()
from fastai.vision.all import (Callback, CategoryBlock, DataBlock, ImageBlock, ImageDataLoaders, IndexSplitter,
                               Normalize, PILImageBW, RandomResizedCrop, accuracy, aug_transforms, imagenet_stats,
                               set_seed, vision_learner)

mark("imported")
set_seed(args.seed)
gray = args.data == "digits"
stats = (list(_data.GRAY_MEAN), list(_data.GRAY_STD)) if gray else imagenet_stats
item_tfms = RandomResizedCrop(args.size, min_scale=0.7)
batch_tfms = [*aug_transforms(do_flip=_data.flips(args), max_rotate=10.0, max_zoom=1.0, max_lighting=0.2,
                              max_warp=0.0),
              Normalize.from_stats(*stats)]
workers = _data.loader_kwargs(args)["num_workers"]
if args.data in ("folder", "jpegdigits"):
    if args.data == "jpegdigits":
        split = {"train": "train", "valid": "valid"}
        root = _data.jpeg_digits_root(args)
    else:
        split = {"valid_pct": 0.2, "seed": 0}
        root = _data.folder_path(args.n, args.classes)
    dls = ImageDataLoaders.from_folder(root, item_tfms=item_tfms, batch_tfms=batch_tfms, bs=args.bs,
                                       num_workers=workers, device="cpu", **split)
    n_images = len(dls.train_ds) + len(dls.valid_ds)
else:
    images, labels, classes = _data.load(args)
    block = DataBlock(blocks=(ImageBlock(cls=PILImageBW) if gray else ImageBlock, CategoryBlock(vocab=classes)),
                      get_x=lambda i: images[i], get_y=lambda i: labels[i],
                      splitter=IndexSplitter(_data.train_valid(args, len(images))[1]), item_tfms=item_tfms,
                      batch_tfms=batch_tfms)
    dls = block.dataloaders(list(range(len(images))), bs=args.bs, num_workers=workers, device="cpu")
    n_images = len(images)
clock = EpochClock()
per_epoch = _data.images_per_epoch(n_images, args.bs)


class EpochPhases(Callback):
    """The milestones of scripts/_milestones.py from fastai's events."""
    order = 100  # after the Recorder has the epoch's metrics

    def before_train(self):
        clock.train_start()

    def before_batch(self):
        if self.training:
            clock.batch_start()

    def after_batch(self):
        if self.training:
            clock.batch_end()

    def after_train(self):
        clock.train_end()

    def after_epoch(self):
        clock.epoch_end(per_epoch, self.recorder.values[-1][2])  # (train_loss, valid_loss, accuracy)


learn = vision_learner(dls, args.backbone, pretrained=False, metrics=accuracy, n_in=1 if gray else 3,
                       cbs=[EpochPhases()])
mark("ready")
with learn.no_bar(), learn.no_logging():
    learn.fit_one_cycle(args.epochs, lr_max=args.lr)
mark("fit_end")
result(accuracy=float(learn.recorder.values[-1][2]), train_loss=float(learn.recorder.values[-1][0]))
