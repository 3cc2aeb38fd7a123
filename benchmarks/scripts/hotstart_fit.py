"""hotstart: the workload through the public API (tasklearner + fit_one_cycle).

With `--defaults` (the time-to-accuracy benchmark, benchmarks/tta.py) hotstart picks its own batch
size and learning rate (`--bs`, `--lr` ignored), as a user who writes ``tasklearner(task, data,
backbone=...)`` and ``fit_one_cycle(epochs)`` gets; precision, compile, memory layout and the
average of the weights (``ema``) are never passed: they are always hotstart's defaults. The result record says what hotstart chose.

Validation: the digits' fixed split (_data.train_valid, passed as `validdata`, the same images as
every other contender), the jpegdigits folder's own valid/ files (``datasets.ImageFolders`` reads
them), else hotstart's own split of `--seed`.
"""
from _milestones import EpochClock, mark, result
import _data

args = _data.parse_args()
from hotstart import Image, Label, ImageClassificationSingle, tasklearner
from hotstart.learner import Callback

mark("imported")
clock = EpochClock()


class EpochPhases(Callback):
    """The milestones of scripts/_milestones.py from the learner's events."""

    def before_train(self):
        clock.train_start()

    def before_batch(self):
        if self.learner.training:
            clock.batch_start()

    def after_batch(self):
        if self.learner.training:
            clock.batch_end()

    def after_train(self):
        clock.train_end()

    def after_epoch(self):  # after the Recorder (order -10): history[-1] is this epoch
        clock.epoch_end(images_per_epoch, self.learner.history[-1].get("accuracy"))


augment = {} if _data.flips(args) else {"flip": 0.0}  # digits: a mirrored 2 is no 2
read = _data.hotstart_data(args)
if read is not None:
    data, validdata, blocks = read
    task = ImageClassificationSingle(blocks, size=(args.size, args.size), augment=augment)
else:
    validdata = None
    images, labels, classes = _data.synthetic(args.n, args.image_size or args.size, args.classes)
    data = (images, labels)
    task = ImageClassificationSingle((Image(), Label(classes)), size=(args.size, args.size))
options = {} if args.workers is None else {"num_workers": args.workers}  # default: hotstart's own choice
if args.cache:
    options["cache"] = args.cache
if not args.defaults:
    options["batch_size"] = args.bs
if args.compile:
    options["compile"] = True
learner = tasklearner(task, data, validdata=validdata, backbone=args.backbone, seed=args.seed, progress=False,
                      callbacks=[EpochPhases()], **options)
images_per_epoch = len(learner.train_loader) * learner.train_loader.batch_size + len(learner.valid_loader.dataset)
mark("ready")
if args.defaults:
    learner.fit_one_cycle(args.epochs)
else:
    learner.fit_one_cycle(args.epochs, lr_max=args.lr)
mark("fit_end")
last = learner.history[-1]
result(accuracy=float(last.get("accuracy", float("nan"))), train_loss=float(last["train_loss"]),
       num_workers=[learner.train_loader.num_workers, learner.valid_loader.num_workers],
       batch_size=learner.train_loader.batch_size, peak_lr=max(learner.recorder.lrs),  # the highest of any step
       precision=str(getattr(learner.backend, "precision", "32-true")),
       ema=learner.choices["ema"].value if "ema" in learner.choices else "none")  # "0.999", "off" (short fit), "none"
